-- expect: monotonic-key Events error
-- expect: monotonic-key Commits error
-- expect: monotonic-key Ticks error
CREATE TABLE Events (
  CreatedAt TIMESTAMP NOT NULL DEFAULT (CURRENT_TIMESTAMP()),
  Kind STRING(32),
) PRIMARY KEY (CreatedAt);

CREATE TABLE Commits (
  CommittedAt TIMESTAMP NOT NULL OPTIONS (allow_commit_timestamp = true),
  Author STRING(64),
) PRIMARY KEY (CommittedAt);

-- An integer filled with the current time.
CREATE TABLE Ticks (
  TickMicros INT64 NOT NULL DEFAULT (UNIX_MICROS(CURRENT_TIMESTAMP())),
  Payload STRING(100),
) PRIMARY KEY (TickMicros);
