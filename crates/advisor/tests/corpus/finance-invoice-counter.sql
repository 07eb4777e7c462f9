-- Invoice numbers allocated from a sequences table and used as keys.
-- expect: sequential-id Invoices
CREATE TABLE InvoiceNumbers (
  Name STRING(64) NOT NULL,
  LastValue INT64 NOT NULL,
) PRIMARY KEY (Name);

CREATE TABLE Invoices (
  InvoiceId INT64 NOT NULL,
  CustomerId STRING(36),
  Amount NUMERIC,
) PRIMARY KEY (InvoiceId);
