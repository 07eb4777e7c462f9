-- expect: none
CREATE TABLE Accounts (
  AccountId STRING(36) NOT NULL,
) PRIMARY KEY (AccountId);

CREATE TABLE AccountHistory (
  AccountId STRING(36) NOT NULL,
  ChangedAt TIMESTAMP NOT NULL,
  Balance NUMERIC,
) PRIMARY KEY (AccountId, ChangedAt DESC),
  INTERLEAVE IN PARENT Accounts ON DELETE CASCADE;

-- Not a history: the child's own key is not a time.
CREATE TABLE AccountOwners (
  AccountId STRING(36) NOT NULL,
  OwnerId STRING(36) NOT NULL,
  Since TIMESTAMP,
) PRIMARY KEY (AccountId, OwnerId),
  INTERLEAVE IN PARENT Accounts ON DELETE CASCADE;
