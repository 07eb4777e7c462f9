-- Guild members keyed under the guild but not interleaved.
-- expect: interleave-candidate GuildMembers
CREATE TABLE Guilds (
  GuildId STRING(36) NOT NULL,
  Name STRING(64),
) PRIMARY KEY (GuildId);

CREATE TABLE GuildMembers (
  GuildId STRING(36) NOT NULL,
  PlayerId STRING(36) NOT NULL,
  JoinedAt TIMESTAMP,
) PRIMARY KEY (GuildId, PlayerId);
