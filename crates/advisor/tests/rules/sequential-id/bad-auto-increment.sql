-- expect: sequential-id Accounts error
-- expect-input-errors: 1
-- MySQL habits: AUTO_INCREMENT is not GoogleSQL, but its intent is clear.
CREATE TABLE Accounts (
  AccountId INT64 NOT NULL AUTO_INCREMENT,
  Owner STRING(100),
) PRIMARY KEY (AccountId);
