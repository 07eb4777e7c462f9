-- expect: none
CREATE TABLE Users (
  UserId STRING(36) NOT NULL,
  Email STRING(256),
  DeletedAt TIMESTAMP,
) PRIMARY KEY (UserId);

CREATE NULL_FILTERED INDEX UsersByDeletedAt ON Users(DeletedAt);

-- Nullable but not sparse.
CREATE INDEX UsersByEmail ON Users(Email);
