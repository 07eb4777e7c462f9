-- A mixed workload: users read and updated with a skewed (Zipf) popularity,
-- orders keyed by a bit-reversed sequence, an index on a monotonic column.
CREATE TABLE Users (
  UserId INT64 NOT NULL,
  Name STRING(MAX),
  LastLogin TIMESTAMP,
) PRIMARY KEY (UserId);

CREATE TABLE Orders (
  OrderId INT64 NOT NULL,
  UserId INT64 NOT NULL,
  CreatedAt TIMESTAMP NOT NULL,
  Amount INT64,
) PRIMARY KEY (OrderId);

CREATE INDEX OrdersByUser ON Orders(UserId);
