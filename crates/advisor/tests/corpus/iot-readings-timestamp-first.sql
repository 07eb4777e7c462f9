-- Sensor readings keyed by the reading time, then the device.
-- expect: monotonic-key Readings
CREATE TABLE Readings (
  ReadAt TIMESTAMP NOT NULL,
  DeviceId STRING(64) NOT NULL,
  Temperature FLOAT64,
  Humidity FLOAT64,
) PRIMARY KEY (ReadAt, DeviceId);
