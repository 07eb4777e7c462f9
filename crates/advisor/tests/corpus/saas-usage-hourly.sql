-- Hourly usage rollups keyed by the hour first.
-- expect: monotonic-key UsageHourly
CREATE TABLE UsageHourly (
  HourStart TIMESTAMP NOT NULL,
  TenantId STRING(36) NOT NULL,
  Requests INT64,
  Bytes INT64,
) PRIMARY KEY (HourStart, TenantId);
