-- Fix 1: a UUID v4 first in the key spreads inserts over the key space.
CREATE TABLE UserAccessLogs (
  LogEntryId STRING(36) NOT NULL,
  LastAccess TIMESTAMP NOT NULL,
  UserId STRING(1024),
) PRIMARY KEY (LogEntryId, LastAccess, UserId);

-- The same with GENERATE_UUID() as the column default, as the seed suggests.
CREATE TABLE UserAccessLogsWithDefault (
  LogEntryId STRING(36) NOT NULL DEFAULT (GENERATE_UUID()),
  LastAccess TIMESTAMP NOT NULL,
  UserId STRING(1024),
) PRIMARY KEY (LogEntryId, LastAccess, UserId);
