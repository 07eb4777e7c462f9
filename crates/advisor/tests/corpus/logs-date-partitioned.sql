-- Daily log partitions keyed by the date first.
-- expect: monotonic-key DailyLogs
CREATE TABLE DailyLogs (
  LogDate DATE NOT NULL,
  Host STRING(255) NOT NULL,
  Seq INT64 NOT NULL,
  Line STRING(MAX),
) PRIMARY KEY (LogDate, Host, Seq);
