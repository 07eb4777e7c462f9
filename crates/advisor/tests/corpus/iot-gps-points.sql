-- GPS points of vehicles, under the vehicle, newest first.
CREATE TABLE Vehicles (
  VehicleId STRING(36) NOT NULL,
  Plate STRING(16),
) PRIMARY KEY (VehicleId);

CREATE TABLE Positions (
  VehicleId STRING(36) NOT NULL,
  RecordedAt TIMESTAMP NOT NULL,
  Lat FLOAT64,
  Lng FLOAT64,
) PRIMARY KEY (VehicleId, RecordedAt DESC),
  INTERLEAVE IN PARENT Vehicles ON DELETE CASCADE;
