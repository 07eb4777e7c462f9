-- A ledger keyed by posting time.
-- expect: monotonic-key LedgerEntries
CREATE TABLE LedgerEntries (
  PostedAt TIMESTAMP NOT NULL OPTIONS (allow_commit_timestamp = true),
  EntryId STRING(36) NOT NULL,
  AccountId STRING(36) NOT NULL,
  Amount NUMERIC NOT NULL,
) PRIMARY KEY (PostedAt, EntryId);
