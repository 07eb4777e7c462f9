-- Token buckets per API client.
CREATE TABLE RateLimits (
  ClientId STRING(64) NOT NULL,
  Tokens INT64 NOT NULL,
  RefilledAt TIMESTAMP,
) PRIMARY KEY (ClientId);
