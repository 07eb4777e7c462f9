-- expect: monotonic-index UsersByLastAccess error
-- expect: monotonic-index OrdersByCreatedAt error
-- expect: monotonic-index PostsByCreatedAt error
CREATE TABLE Users (
  UserId STRING(36) NOT NULL,
  LastAccess TIMESTAMP,
) PRIMARY KEY (UserId);

CREATE INDEX UsersByLastAccess ON Users(LastAccess);

CREATE TABLE Orders (
  OrderId STRING(36) NOT NULL,
  CreatedAt TIMESTAMP NOT NULL OPTIONS (allow_commit_timestamp = true),
  Status STRING(16),
) PRIMARY KEY (OrderId);

-- DESC does not help.
CREATE INDEX OrdersByCreatedAt ON Orders(CreatedAt DESC) STORING (Status);

CREATE TABLE Posts (
  UserId STRING(36) NOT NULL,
  PostId STRING(36) NOT NULL,
  CreatedAt TIMESTAMP NOT NULL,
) PRIMARY KEY (UserId, PostId),
  INTERLEAVE IN PARENT Users ON DELETE CASCADE;

-- Not interleaved, although its table is.
CREATE INDEX PostsByCreatedAt ON Posts(CreatedAt);
