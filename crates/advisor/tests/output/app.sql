-- A small app in two files; this one holds the tables.
CREATE TABLE Users (
  UserId STRING(36) NOT NULL DEFAULT (GENERATE_UUID()),
  Email STRING(256),
  LastSeenAt TIMESTAMP,
) PRIMARY KEY (UserId);

CREATE TABLE Events (
  EventTime TIMESTAMP NOT NULL,
  UserId STRING(36) NOT NULL,
  Kind STRING(32),
) PRIMARY KEY (EventTime, UserId);

CREATE TABLE Bad (A INT64) PRIMARY KEY (Nope);
