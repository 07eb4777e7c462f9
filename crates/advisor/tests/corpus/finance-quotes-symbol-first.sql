-- Price quotes keyed by symbol, then time.
CREATE TABLE Quotes (
  Symbol STRING(16) NOT NULL,
  QuotedAt TIMESTAMP NOT NULL,
  Bid NUMERIC,
  Ask NUMERIC,
) PRIMARY KEY (Symbol, QuotedAt DESC);
