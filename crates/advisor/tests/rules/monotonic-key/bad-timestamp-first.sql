-- expect: monotonic-key UserAccessLogs error
-- expect: monotonic-key Readings error
-- expect: monotonic-key DailyTotals error
-- The guidance's anti-pattern: the access time leads the key.
CREATE TABLE UserAccessLogs (
  LastAccess TIMESTAMP NOT NULL,
  UserId INT64 NOT NULL,
  Path STRING(1024),
) PRIMARY KEY (LastAccess, UserId);

-- DESC does not help.
CREATE TABLE Readings (
  ReadAt TIMESTAMP NOT NULL,
  Value FLOAT64,
) PRIMARY KEY (ReadAt DESC);

CREATE TABLE DailyTotals (
  Day DATE NOT NULL,
  Total NUMERIC,
) PRIMARY KEY (Day);
