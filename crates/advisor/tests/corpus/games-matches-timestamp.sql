-- Finished matches keyed by the end time.
-- expect: monotonic-key Matches
CREATE TABLE Matches (
  EndedAt TIMESTAMP NOT NULL,
  MatchId STRING(36) NOT NULL,
  Winner STRING(36),
  Map STRING(64),
) PRIMARY KEY (EndedAt, MatchId);
