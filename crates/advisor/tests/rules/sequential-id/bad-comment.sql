-- expect: sequential-id Tickets error
-- expect: sequential-id Shipments error
CREATE TABLE Tickets (
  TicketId INT64 NOT NULL, -- auto-increment, assigned by the app as MAX(TicketId) + 1
  Title STRING(200),
) PRIMARY KEY (TicketId);

CREATE TABLE Shipments (
  ShipmentId INT64 NOT NULL, -- next value from the sequences table
  Carrier STRING(32),
) PRIMARY KEY (ShipmentId);
