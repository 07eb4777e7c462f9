-- An id allocator table, but the tickets are keyed by UUID: no key comes from the counter.
CREATE TABLE IdAllocator (
  Scope STRING(64) NOT NULL,
  NextValue INT64 NOT NULL,
  UpdatedAt TIMESTAMP,
) PRIMARY KEY (Scope);

CREATE TABLE Tickets (
  TicketId STRING(36) NOT NULL DEFAULT (GENERATE_UUID()),
  Title STRING(256),
) PRIMARY KEY (TicketId);
