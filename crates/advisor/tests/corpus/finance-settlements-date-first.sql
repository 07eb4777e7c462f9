-- Settlement batches keyed by business date first.
-- expect: monotonic-key Settlements
CREATE TABLE Settlements (
  BusinessDate DATE NOT NULL,
  BatchId STRING(36) NOT NULL,
  Total NUMERIC,
) PRIMARY KEY (BusinessDate, BatchId);
