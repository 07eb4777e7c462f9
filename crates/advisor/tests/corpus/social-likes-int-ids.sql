-- Likes keyed by an integer id copied from the old database's auto-increment.
-- expect: sequential-id Likes
CREATE TABLE Likes (
  LikeId INT64 NOT NULL, -- auto-increment value copied from the old MySQL table
  PostId STRING(36) NOT NULL,
  UserId STRING(36) NOT NULL,
) PRIMARY KEY (LikeId);
