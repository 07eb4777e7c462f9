-- Achievements unlocked per player, newest first.
CREATE TABLE Players (
  PlayerId STRING(36) NOT NULL,
  Name STRING(64),
) PRIMARY KEY (PlayerId);

CREATE TABLE Achievements (
  PlayerId STRING(36) NOT NULL,
  UnlockedAt TIMESTAMP NOT NULL,
  Achievement STRING(64) NOT NULL,
) PRIMARY KEY (PlayerId, UnlockedAt DESC, Achievement),
  INTERLEAVE IN PARENT Players ON DELETE CASCADE;
