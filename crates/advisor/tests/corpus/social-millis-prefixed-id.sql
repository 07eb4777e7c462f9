-- Posts keyed by milliseconds since the epoch concatenated with a random UUID.
-- expect: time-ordered-uuid Posts
CREATE TABLE Posts (
  PostId STRING(64) NOT NULL DEFAULT (CONCAT(CAST(UNIX_MILLIS(CURRENT_TIMESTAMP()) AS STRING), '-', GENERATE_UUID())),
  AuthorId STRING(36) NOT NULL,
  Body STRING(MAX),
) PRIMARY KEY (PostId);
