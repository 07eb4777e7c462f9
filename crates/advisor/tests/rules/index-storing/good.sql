-- expect: none
CREATE TABLE Orders (
  OrderId STRING(36) NOT NULL,
  CustomerId STRING(36) NOT NULL,
  Status STRING(16),
  Total NUMERIC,
  ShippingAddress STRING(1024),
  Notes STRING(MAX),
) PRIMARY KEY (OrderId);

-- Stores only what the customer's order list shows.
CREATE INDEX OrdersByCustomer ON Orders(CustomerId) STORING (Status);
