-- Application log keyed by timestamp descending: DESC moves the hotspot, it does not remove it.
-- expect: monotonic-key AppLogs
CREATE TABLE AppLogs (
  LoggedAt TIMESTAMP NOT NULL,
  LogId STRING(36) NOT NULL,
  Level STRING(8),
  Message STRING(MAX),
) PRIMARY KEY (LoggedAt DESC, LogId);
