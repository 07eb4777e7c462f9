-- Smart meter samples keyed by a ULID-style id: time in the high characters.
-- expect: time-ordered-uuid MeterSamples
CREATE TABLE MeterSamples (
  SampleId STRING(40) NOT NULL DEFAULT (CONCAT(FORMAT_TIMESTAMP('%Y%m%d%H%M%E6S', CURRENT_TIMESTAMP()), '-', GENERATE_UUID())),
  MeterId STRING(32) NOT NULL,
  Kwh NUMERIC,
) PRIMARY KEY (SampleId);
