-- Exchange rates keyed by currency pair, then date: writes spread over pairs.
CREATE TABLE FxRates (
  BaseCurrency STRING(3) NOT NULL,
  QuoteCurrency STRING(3) NOT NULL,
  RateDate DATE NOT NULL,
  Rate NUMERIC,
) PRIMARY KEY (BaseCurrency, QuoteCurrency, RateDate DESC);
