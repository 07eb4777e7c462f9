-- A work queue with a shard prefix: pollers read every shard.
CREATE TABLE Jobs (
  Shard INT64 NOT NULL AS (MOD(ABS(FARM_FINGERPRINT(JobId)), 64)) STORED,
  EnqueuedAt TIMESTAMP NOT NULL,
  JobId STRING(36) NOT NULL,
  Payload JSON,
) PRIMARY KEY (Shard, EnqueuedAt, JobId);
