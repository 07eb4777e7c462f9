-- expect: sequential-id Orders error
-- expect: sequential-id Customers error
-- expect: sequential-id Invoices error
-- The counter table pattern: the application reads NextValue, adds one and
-- uses the old value as the new row's key.
CREATE TABLE IdSequences (
  Name STRING(64) NOT NULL,
  NextValue INT64 NOT NULL,
) PRIMARY KEY (Name);

CREATE TABLE Orders (
  OrderId INT64 NOT NULL,
  Total NUMERIC,
) PRIMARY KEY (OrderId);

CREATE TABLE Customers (
  Id INT64 NOT NULL,
  Name STRING(100),
) PRIMARY KEY (Id);

CREATE TABLE Invoices (
  InvoiceNumber INT64 NOT NULL,
  Amount NUMERIC,
) PRIMARY KEY (InvoiceNumber);
