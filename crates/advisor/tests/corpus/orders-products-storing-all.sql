-- Products with an index that stores nearly every column.
-- expect: index-storing ProductsBySku
CREATE TABLE Products (
  ProductId STRING(36) NOT NULL,
  Sku STRING(32) NOT NULL,
  Name STRING(256),
  Description STRING(MAX),
  Price NUMERIC,
  Currency STRING(3),
  Weight FLOAT64,
) PRIMARY KEY (ProductId);

CREATE UNIQUE INDEX ProductsBySku ON Products(Sku) STORING (Name, Description, Price, Currency, Weight);
