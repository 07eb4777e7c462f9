-- Readings with an index on time interleaved in the device: each device's entries stay local.
CREATE TABLE Devices (
  DeviceId STRING(64) NOT NULL,
  Model STRING(64),
) PRIMARY KEY (DeviceId);

CREATE TABLE Readings (
  DeviceId STRING(64) NOT NULL,
  ReadingId STRING(36) NOT NULL,
  ReadAt TIMESTAMP NOT NULL,
  Value FLOAT64,
) PRIMARY KEY (DeviceId, ReadingId),
  INTERLEAVE IN PARENT Devices ON DELETE CASCADE;

CREATE INDEX ReadingsByDeviceTime ON Readings(DeviceId, ReadAt DESC), INTERLEAVE IN Devices;
