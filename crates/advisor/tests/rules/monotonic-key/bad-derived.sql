-- expect: monotonic-key Metrics error
-- A generated column computed from the time, without a hash, is as ordered as the time.
CREATE TABLE Metrics (
  EventAt TIMESTAMP NOT NULL,
  Minute INT64 NOT NULL AS (DIV(UNIX_SECONDS(EventAt), 60)) STORED,
  Name STRING(64) NOT NULL,
) PRIMARY KEY (Minute, Name);
