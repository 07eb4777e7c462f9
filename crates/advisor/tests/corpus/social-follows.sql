-- Follow edges, stored under the follower, with the reverse index for followers lists.
CREATE TABLE Users (
  UserId STRING(36) NOT NULL,
  Handle STRING(64),
) PRIMARY KEY (UserId);

CREATE TABLE Follows (
  UserId STRING(36) NOT NULL,
  FolloweeId STRING(36) NOT NULL,
  Since TIMESTAMP,
) PRIMARY KEY (UserId, FolloweeId),
  INTERLEAVE IN PARENT Users ON DELETE CASCADE;

CREATE INDEX FollowersOf ON Follows(FolloweeId);
