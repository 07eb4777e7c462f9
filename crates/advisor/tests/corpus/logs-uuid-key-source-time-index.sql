-- Events keyed by a random UUID; the index leads with the source, then the time.
CREATE TABLE Events (
  EventId STRING(36) NOT NULL DEFAULT (GENERATE_UUID()),
  OccurredAt TIMESTAMP NOT NULL,
  Source STRING(64) NOT NULL,
  Payload BYTES(MAX),
) PRIMARY KEY (EventId);

CREATE INDEX EventsBySource ON Events(Source, OccurredAt DESC);
