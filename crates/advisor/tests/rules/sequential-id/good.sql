-- expect: none
-- A counter table for invoice numbers that are not keys is fine, and so
-- are keys from a bit-reversed sequence or a UUID.
CREATE TABLE Counters (
  Name STRING(64) NOT NULL,
  NextValue INT64 NOT NULL,
) PRIMARY KEY (Name);

CREATE SEQUENCE OrderIds OPTIONS (sequence_kind = 'bit_reversed_positive');

CREATE TABLE Orders (
  OrderId INT64 NOT NULL DEFAULT (GET_NEXT_SEQUENCE_VALUE(SEQUENCE OrderIds)),
  InvoiceNumber INT64,
) PRIMARY KEY (OrderId);

CREATE TABLE Customers (
  CustomerId STRING(36) NOT NULL DEFAULT (GENERATE_UUID()),
) PRIMARY KEY (CustomerId);

CREATE TABLE Settings (
  Name STRING(64) NOT NULL,
  Value INT64,
) PRIMARY KEY (Name);
