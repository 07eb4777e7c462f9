-- Stock levels per SKU: one integer per key, but a quantity, not an id source.
CREATE TABLE StockLevels (
  Sku STRING(32) NOT NULL,
  Quantity INT64 NOT NULL,
) PRIMARY KEY (Sku);

CREATE TABLE Settings (
  Name STRING(128) NOT NULL,
  Value STRING(MAX),
) PRIMARY KEY (Name);
