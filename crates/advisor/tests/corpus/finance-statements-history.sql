-- Monthly statements under the account, oldest first.
-- expect: desc-history Statements
CREATE TABLE Accounts (
  AccountId STRING(36) NOT NULL,
  Owner STRING(256),
) PRIMARY KEY (AccountId);

CREATE TABLE Statements (
  AccountId STRING(36) NOT NULL,
  IssuedAt TIMESTAMP NOT NULL,
  Pdf BYTES(MAX),
) PRIMARY KEY (AccountId, IssuedAt),
  INTERLEAVE IN PARENT Accounts ON DELETE CASCADE;
