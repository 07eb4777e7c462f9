-- A work queue keyed by enqueue time, polled oldest first.
-- expect: monotonic-key Jobs
CREATE TABLE Jobs (
  EnqueuedAt TIMESTAMP NOT NULL OPTIONS (allow_commit_timestamp = true),
  JobId STRING(36) NOT NULL,
  Payload JSON,
  Attempts INT64,
) PRIMARY KEY (EnqueuedAt, JobId);
