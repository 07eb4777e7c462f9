-- Readings under their device, plus a global index on the reading time for dashboards.
-- expect: monotonic-index ReadingsByTime
CREATE TABLE Devices (
  DeviceId STRING(64) NOT NULL,
  Model STRING(64),
) PRIMARY KEY (DeviceId);

CREATE TABLE Readings (
  DeviceId STRING(64) NOT NULL,
  ReadAt TIMESTAMP NOT NULL,
  Value FLOAT64,
) PRIMARY KEY (DeviceId, ReadAt DESC),
  INTERLEAVE IN PARENT Devices ON DELETE CASCADE;

CREATE INDEX ReadingsByTime ON Readings(ReadAt);
