-- Users with a global index on their sign-up time.
-- expect: monotonic-index UsersByCreatedAt
CREATE TABLE Users (
  UserId STRING(36) NOT NULL DEFAULT (GENERATE_UUID()),
  Handle STRING(64) NOT NULL,
  CreatedAt TIMESTAMP NOT NULL OPTIONS (allow_commit_timestamp = true),
) PRIMARY KEY (UserId);

CREATE INDEX UsersByCreatedAt ON Users(CreatedAt);
