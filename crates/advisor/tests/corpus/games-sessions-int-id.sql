-- Game sessions keyed by a sequential integer session number.
-- expect: sequential-id GameSessions
CREATE TABLE GameSessions (
  SessionId INT64 NOT NULL, -- sequential: MAX(SessionId) + 1 at login
  PlayerId STRING(36) NOT NULL,
  StartedAt TIMESTAMP,
) PRIMARY KEY (SessionId);
