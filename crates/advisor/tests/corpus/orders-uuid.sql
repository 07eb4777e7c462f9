-- Shop orders keyed by UUID, items interleaved under the order.
CREATE TABLE Orders (
  OrderId STRING(36) NOT NULL DEFAULT (GENERATE_UUID()),
  CustomerId STRING(36) NOT NULL,
  PlacedAt TIMESTAMP NOT NULL,
  Total NUMERIC,
) PRIMARY KEY (OrderId);

CREATE TABLE OrderItems (
  OrderId STRING(36) NOT NULL,
  LineNo INT64 NOT NULL,
  Sku STRING(32),
  Quantity INT64,
) PRIMARY KEY (OrderId, LineNo),
  INTERLEAVE IN PARENT Orders ON DELETE CASCADE;

CREATE INDEX OrdersByCustomer ON Orders(CustomerId, PlacedAt DESC);
