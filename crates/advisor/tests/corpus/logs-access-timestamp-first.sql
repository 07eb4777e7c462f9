-- Web server access log keyed by the time of the request.
-- expect: monotonic-key UserAccessLogs
CREATE TABLE UserAccessLogs (
  LastAccess TIMESTAMP NOT NULL,
  UserId STRING(36) NOT NULL,
  Path STRING(1024),
  Status INT64,
) PRIMARY KEY (LastAccess, UserId);
