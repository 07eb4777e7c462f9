-- Seed 001/004, the anti-pattern: a monotonically increasing first key
-- column sends every insert to the last split.
CREATE TABLE UserAccessLogs (
  LastAccess TIMESTAMP NOT NULL,
  UserId STRING(1024),
) PRIMARY KEY (LastAccess, UserId);

-- The Korean page spells it with an INT64 user id and a singular name.
CREATE TABLE UserAccessLog (
LastAccess TIMESTAMP NOT NULL,
UserId     INT64 NOT NULL,
) PRIMARY KEY (LastAccess, UserId);
