-- Orders keyed by UUID; an index on the order time for the fulfilment queue.
-- expect: monotonic-index OrdersByPlacedAt
CREATE TABLE Orders (
  OrderId STRING(36) NOT NULL DEFAULT (GENERATE_UUID()),
  CustomerId STRING(36) NOT NULL,
  PlacedAt TIMESTAMP NOT NULL,
  Status STRING(16),
) PRIMARY KEY (OrderId);

CREATE INDEX OrdersByPlacedAt ON Orders(PlacedAt) STORING (Status);
