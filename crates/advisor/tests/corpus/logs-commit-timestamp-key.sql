-- Audit trail keyed by the commit timestamp of the write.
-- expect: monotonic-key AuditEvents
CREATE TABLE AuditEvents (
  CommittedAt TIMESTAMP NOT NULL OPTIONS (allow_commit_timestamp = true),
  Actor STRING(128) NOT NULL,
  Action STRING(64),
  Detail JSON,
) PRIMARY KEY (CommittedAt, Actor);
