-- Events keyed by a random UUID, but a global index on the event time.
-- expect: monotonic-index EventsByTime
CREATE TABLE Events (
  EventId STRING(36) NOT NULL DEFAULT (GENERATE_UUID()),
  OccurredAt TIMESTAMP NOT NULL,
  Source STRING(64),
  Payload BYTES(MAX),
) PRIMARY KEY (EventId);

CREATE INDEX EventsByTime ON Events(OccurredAt);
