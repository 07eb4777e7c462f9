-- expect: none
CREATE TABLE Users (
  UserId STRING(36) NOT NULL,
  Email STRING(256),
  LastAccess TIMESTAMP,
) PRIMARY KEY (UserId);

-- A spread first column.
CREATE INDEX UsersByEmail ON Users(Email);

-- The time after a spread column.
CREATE INDEX UsersByEmailAccess ON Users(Email, LastAccess);

CREATE TABLE Posts (
  UserId STRING(36) NOT NULL,
  PostId STRING(36) NOT NULL,
  CreatedAt TIMESTAMP NOT NULL,
) PRIMARY KEY (UserId, PostId),
  INTERLEAVE IN PARENT Users ON DELETE CASCADE;

-- Interleaved: the entries live in each user's row tree.
CREATE INDEX PostsByUserCreatedAt ON Posts(UserId, CreatedAt DESC), INTERLEAVE IN Users;

-- A shard prefix.
CREATE TABLE Events (
  EventId STRING(36) NOT NULL,
  EventAt TIMESTAMP NOT NULL,
  Shard INT64 AS (MOD(FARM_FINGERPRINT(EventId), 16)) STORED,
) PRIMARY KEY (EventId);

CREATE INDEX EventsByShardAt ON Events(Shard, EventAt);

CREATE TABLE Patients (
  PatientId STRING(36) NOT NULL,
  DateOfBirth DATE,
  BirthDate DATE,
) PRIMARY KEY (PatientId);

CREATE INDEX PatientsByBirthDate ON Patients(BirthDate);
