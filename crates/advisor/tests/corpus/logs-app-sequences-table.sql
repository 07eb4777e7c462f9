-- The application-side sequence table of a migrated app (name, next value).
-- expect: sequential-id Batches
CREATE TABLE sequences (
  name STRING(64) NOT NULL,
  next_value INT64 NOT NULL,
) PRIMARY KEY (name);

CREATE TABLE Batches (
  BatchId INT64 NOT NULL,
  Source STRING(64),
  Lines INT64,
) PRIMARY KEY (BatchId);
