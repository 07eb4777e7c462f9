-- Comments keyed by a time-based id: the creation time in hex, then a random tail.
-- expect: time-ordered-uuid Comments
CREATE TABLE Comments (
  CommentId STRING(64) NOT NULL DEFAULT (CONCAT(FORMAT('%016x', UNIX_MICROS(CURRENT_TIMESTAMP())), GENERATE_UUID())),
  PostId STRING(36) NOT NULL,
  Body STRING(MAX),
) PRIMARY KEY (CommentId);
