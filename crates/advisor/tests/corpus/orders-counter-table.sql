-- Order numbers handed out from a counter row, then used as the key.
-- expect: sequential-id Orders
CREATE TABLE IdCounters (
  CounterName STRING(64) NOT NULL,
  NextId INT64 NOT NULL,
) PRIMARY KEY (CounterName);

CREATE TABLE Orders (
  OrderId INT64 NOT NULL,
  CustomerId STRING(36) NOT NULL,
  Total NUMERIC,
) PRIMARY KEY (OrderId);
