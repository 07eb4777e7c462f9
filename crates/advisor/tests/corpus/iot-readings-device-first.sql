-- Sensor readings keyed by device, then time, interleaved in the device row.
CREATE TABLE Devices (
  DeviceId STRING(64) NOT NULL,
  Model STRING(64),
  InstalledAt TIMESTAMP,
) PRIMARY KEY (DeviceId);

CREATE TABLE Readings (
  DeviceId STRING(64) NOT NULL,
  ReadAt TIMESTAMP NOT NULL,
  Temperature FLOAT64,
  Humidity FLOAT64,
) PRIMARY KEY (DeviceId, ReadAt DESC),
  INTERLEAVE IN PARENT Devices ON DELETE CASCADE;
