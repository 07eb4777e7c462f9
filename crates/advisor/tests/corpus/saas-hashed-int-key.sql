-- Accounts keyed by a fingerprint of the email: an integer key that is not a counter.
CREATE TABLE Accounts (
  AccountKey INT64 NOT NULL AS (FARM_FINGERPRINT(Email)) STORED,
  Email STRING(320) NOT NULL,
  Name STRING(256),
) PRIMARY KEY (AccountKey);
