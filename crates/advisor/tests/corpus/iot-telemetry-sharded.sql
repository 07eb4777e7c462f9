-- Telemetry with a FARM_FINGERPRINT shard in front of the time.
CREATE TABLE Telemetry (
  Shard INT64 NOT NULL AS (MOD(ABS(FARM_FINGERPRINT(DeviceId)), 32)) STORED,
  ReportedAt TIMESTAMP NOT NULL,
  DeviceId STRING(64) NOT NULL,
  Reading JSON,
) PRIMARY KEY (Shard, ReportedAt, DeviceId);
