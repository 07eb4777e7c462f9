-- The same access log with the key order swapped: users spread the writes.
CREATE TABLE UserAccessLogs (
  UserId STRING(36) NOT NULL,
  LastAccess TIMESTAMP NOT NULL,
  Path STRING(1024),
  Status INT64,
) PRIMARY KEY (UserId, LastAccess DESC);
