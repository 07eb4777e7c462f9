-- A hi/lo key generator table: each table's next high value.
-- expect: sequential-id Customers
CREATE TABLE HiLoKeys (
  TableName STRING(128) NOT NULL,
  NextHi INT64 NOT NULL,
) PRIMARY KEY (TableName);

CREATE TABLE Customers (
  CustomerId INT64 NOT NULL,
  Name STRING(256),
) PRIMARY KEY (CustomerId);
