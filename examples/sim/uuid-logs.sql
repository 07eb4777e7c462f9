-- Access logs keyed by a UUID v4: inserts spread over the key space.
CREATE TABLE UserAccessLogs (
  LogEntryId STRING(36) NOT NULL,
  LastAccess TIMESTAMP NOT NULL,
  UserId STRING(1024),
) PRIMARY KEY (LogEntryId, LastAccess, UserId);
