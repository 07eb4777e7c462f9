-- Ledger entries under their account, newest first.
CREATE TABLE Accounts (
  AccountId STRING(36) NOT NULL,
  Owner STRING(256),
  Currency STRING(3),
  Balance NUMERIC,
) PRIMARY KEY (AccountId);

CREATE TABLE Entries (
  AccountId STRING(36) NOT NULL,
  PostedAt TIMESTAMP NOT NULL OPTIONS (allow_commit_timestamp = true),
  EntryId STRING(36) NOT NULL,
  Amount NUMERIC NOT NULL,
) PRIMARY KEY (AccountId, PostedAt DESC, EntryId),
  INTERLEAVE IN PARENT Accounts ON DELETE CASCADE;
