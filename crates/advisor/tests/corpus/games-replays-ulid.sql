-- Replays keyed by a time-sortable id: seconds since the epoch as a padded string, then random.
-- expect: time-ordered-uuid Replays
CREATE TABLE Replays (
  ReplayId STRING(48) NOT NULL DEFAULT (CONCAT(LPAD(CAST(UNIX_SECONDS(CURRENT_TIMESTAMP()) AS STRING), 12, '0'), SUBSTR(GENERATE_UUID(), 1, 8))),
  MatchId STRING(36) NOT NULL,
  Data BYTES(MAX),
) PRIMARY KEY (ReplayId);
