-- Matches keyed by UUID, participants interleaved under the match.
CREATE TABLE Matches (
  MatchId STRING(36) NOT NULL DEFAULT (GENERATE_UUID()),
  StartedAt TIMESTAMP,
  Map STRING(64),
) PRIMARY KEY (MatchId);

CREATE TABLE MatchPlayers (
  MatchId STRING(36) NOT NULL,
  PlayerId STRING(36) NOT NULL,
  Kills INT64,
  Deaths INT64,
) PRIMARY KEY (MatchId, PlayerId),
  INTERLEAVE IN PARENT Matches ON DELETE CASCADE;

CREATE INDEX MatchPlayersByPlayer ON MatchPlayers(PlayerId);
