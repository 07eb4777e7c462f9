-- Trades keyed by UUID, with a global index on the execution time.
-- expect: monotonic-index TradesByExecutedAt
-- expect: index-storing TradesByExecutedAt
CREATE TABLE Trades (
  TradeId STRING(36) NOT NULL DEFAULT (GENERATE_UUID()),
  Symbol STRING(16) NOT NULL,
  ExecutedAt TIMESTAMP NOT NULL,
  Price NUMERIC,
  Quantity INT64,
) PRIMARY KEY (TradeId);

CREATE INDEX TradesByExecutedAt ON Trades(ExecutedAt) STORING (Symbol, Price);
CREATE INDEX TradesBySymbol ON Trades(Symbol, ExecutedAt DESC);
