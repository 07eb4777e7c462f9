-- expect: none
-- A TIMESTAMP first in a child's own key is not a root hotspot: the
-- child's rows live in their parent's row tree.
CREATE TABLE Devices (
  DeviceId STRING(36) NOT NULL,
  Model STRING(64),
) PRIMARY KEY (DeviceId);

CREATE TABLE DeviceReadings (
  DeviceId STRING(36) NOT NULL,
  ReadAt TIMESTAMP NOT NULL,
  Value FLOAT64,
) PRIMARY KEY (DeviceId, ReadAt DESC),
  INTERLEAVE IN PARENT Devices ON DELETE CASCADE;

-- A suppressed finding. rowtree:allow(monotonic-key)
CREATE TABLE Audit (
  EventAt TIMESTAMP NOT NULL,
  What STRING(MAX),
) PRIMARY KEY (EventAt);
