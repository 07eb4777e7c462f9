-- Request log whose first key column defaults to the current time.
-- expect: monotonic-key RequestLog
CREATE TABLE RequestLog (
  ReceivedAt TIMESTAMP NOT NULL DEFAULT (CURRENT_TIMESTAMP()),
  RequestId STRING(36) NOT NULL,
  Method STRING(8),
  Url STRING(2048),
) PRIMARY KEY (ReceivedAt, RequestId);
