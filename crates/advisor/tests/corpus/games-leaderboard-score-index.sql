-- Players and a global leaderboard index on score.
CREATE TABLE Players (
  PlayerId STRING(36) NOT NULL DEFAULT (GENERATE_UUID()),
  Name STRING(64),
  Score INT64 NOT NULL,
) PRIMARY KEY (PlayerId);

CREATE INDEX PlayersByScore ON Players(Score DESC);
