-- Firmware catalog: small, rarely written, keyed by a natural key.
CREATE TABLE Firmware (
  Vendor STRING(64) NOT NULL,
  Version STRING(32) NOT NULL,
  ReleasedOn DATE,
  Image BYTES(MAX),
) PRIMARY KEY (Vendor, Version);

CREATE INDEX FirmwareByVendorRelease ON Firmware(Vendor, ReleasedOn);
