-- Customers and their order history, oldest first under the customer.
-- expect: desc-history CustomerOrders
CREATE TABLE Customers (
  CustomerId STRING(36) NOT NULL,
  Email STRING(320),
) PRIMARY KEY (CustomerId);

CREATE TABLE CustomerOrders (
  CustomerId STRING(36) NOT NULL,
  OrderedAt TIMESTAMP NOT NULL,
  OrderId STRING(36) NOT NULL,
  Total NUMERIC,
) PRIMARY KEY (CustomerId, OrderedAt, OrderId),
  INTERLEAVE IN PARENT Customers ON DELETE CASCADE;
