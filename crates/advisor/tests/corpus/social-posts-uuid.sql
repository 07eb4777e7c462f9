-- Users and their posts; posts interleaved under the author, newest first.
CREATE TABLE Users (
  UserId STRING(36) NOT NULL DEFAULT (GENERATE_UUID()),
  Handle STRING(64) NOT NULL,
  CreatedAt TIMESTAMP NOT NULL,
) PRIMARY KEY (UserId);

CREATE TABLE Posts (
  UserId STRING(36) NOT NULL,
  PostedAt TIMESTAMP NOT NULL,
  PostId STRING(36) NOT NULL,
  Body STRING(MAX),
) PRIMARY KEY (UserId, PostedAt DESC, PostId),
  INTERLEAVE IN PARENT Users ON DELETE CASCADE;

CREATE UNIQUE INDEX UsersByHandle ON Users(Handle);
