-- Shipments keyed by the dispatch time, with the carrier second.
-- expect: monotonic-key Shipments
CREATE TABLE Shipments (
  DispatchedAt TIMESTAMP NOT NULL,
  Carrier STRING(32) NOT NULL,
  TrackingNo STRING(64) NOT NULL,
  OrderId STRING(36),
) PRIMARY KEY (DispatchedAt, Carrier, TrackingNo);
