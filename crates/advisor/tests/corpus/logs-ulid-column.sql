-- Events keyed by a ULID the application generates: 48 bits of time first.
-- expect: time-ordered-uuid Events
CREATE TABLE Events (
  EventUlid STRING(26) NOT NULL,
  Kind STRING(32),
  Payload JSON,
) PRIMARY KEY (EventUlid);
