-- The anti-pattern: a monotonically increasing first key column.
CREATE TABLE UserAccessLogs (
  LastAccess TIMESTAMP NOT NULL,
  UserId STRING(1024),
) PRIMARY KEY (LastAccess, UserId);
