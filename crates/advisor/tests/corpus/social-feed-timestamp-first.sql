-- A global feed table keyed by post time.
-- expect: monotonic-key Feed
CREATE TABLE Feed (
  PostedAt TIMESTAMP NOT NULL,
  PostId STRING(36) NOT NULL,
  AuthorId STRING(36) NOT NULL,
  Body STRING(MAX),
) PRIMARY KEY (PostedAt, PostId);
