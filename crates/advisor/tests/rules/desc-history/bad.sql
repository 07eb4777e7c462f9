-- expect: desc-history AccountHistory info
-- expect: desc-history PriceHistory info
CREATE TABLE Accounts (
  AccountId STRING(36) NOT NULL,
  Balance NUMERIC,
) PRIMARY KEY (AccountId);

CREATE TABLE AccountHistory (
  AccountId STRING(36) NOT NULL,
  ChangedAt TIMESTAMP NOT NULL,
  Balance NUMERIC,
) PRIMARY KEY (AccountId, ChangedAt),
  INTERLEAVE IN PARENT Accounts ON DELETE CASCADE;

CREATE TABLE Products (
  ProductId STRING(36) NOT NULL,
) PRIMARY KEY (ProductId);

CREATE TABLE PriceHistory (
  ProductId STRING(36) NOT NULL,
  ValidFrom TIMESTAMP NOT NULL OPTIONS (allow_commit_timestamp = true),
  Price NUMERIC,
) PRIMARY KEY (ProductId, ValidFrom),
  INTERLEAVE IN PARENT Products ON DELETE CASCADE;
