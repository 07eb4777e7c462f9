-- A counters table used to number matches, kept as in the old MySQL schema.
-- expect: sequential-id Matches
CREATE TABLE Counters (
  Name STRING(64) NOT NULL,
  Counter INT64 NOT NULL,
) PRIMARY KEY (Name);

CREATE TABLE Matches (
  MatchId INT64 NOT NULL,
  Map STRING(64),
  StartedAt TIMESTAMP,
) PRIMARY KEY (MatchId);
