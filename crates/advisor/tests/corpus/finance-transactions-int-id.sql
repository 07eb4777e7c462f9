-- Card transactions keyed by their own integer id: nothing says how it is assigned, and
-- own integer ids are usually counters, so this is worth a warning.
-- expect: monotonic-key CardTransactions
CREATE TABLE CardTransactions (
  TransactionId INT64 NOT NULL,
  CardId STRING(36) NOT NULL,
  Amount NUMERIC,
  Merchant STRING(256),
) PRIMARY KEY (TransactionId);
