-- Log table with a hash shard prefix in front of the timestamp.
CREATE TABLE AppLogs (
  ShardId INT64 NOT NULL AS (MOD(FARM_FINGERPRINT(LogId), 16)) STORED,
  LoggedAt TIMESTAMP NOT NULL,
  LogId STRING(36) NOT NULL,
  Level STRING(8),
  Message STRING(MAX),
) PRIMARY KEY (ShardId, LoggedAt, LogId);

CREATE INDEX AppLogsByLevel ON AppLogs(Level);
