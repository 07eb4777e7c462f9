-- Sessions keyed by a random (version 4) UUID column named Uuid.
CREATE TABLE WebSessions (
  Uuid STRING(36) NOT NULL DEFAULT (GENERATE_UUID()),
  UserId STRING(36),
  ExpiresAt TIMESTAMP,
) PRIMARY KEY (Uuid);
