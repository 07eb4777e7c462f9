-- Order lines keyed under the order's key, but stored as a separate root table.
-- expect: interleave-candidate OrderLines
CREATE TABLE Orders (
  OrderId STRING(36) NOT NULL,
  CustomerId STRING(36),
) PRIMARY KEY (OrderId);

CREATE TABLE OrderLines (
  OrderId STRING(36) NOT NULL,
  LineNo INT64 NOT NULL,
  Sku STRING(32),
) PRIMARY KEY (OrderId, LineNo);
