-- Device events keyed by the microseconds since the epoch, as an integer.
-- expect: monotonic-key DeviceEvents
CREATE TABLE DeviceEvents (
  EventMicros INT64 NOT NULL DEFAULT (UNIX_MICROS(CURRENT_TIMESTAMP())),
  DeviceId STRING(64) NOT NULL,
  Kind STRING(32),
) PRIMARY KEY (EventMicros, DeviceId);
