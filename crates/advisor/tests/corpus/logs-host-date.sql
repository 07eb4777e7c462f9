-- Daily log partitions keyed by host, then date.
CREATE TABLE Hosts (
  Host STRING(255) NOT NULL,
  Datacenter STRING(32),
) PRIMARY KEY (Host);

CREATE TABLE HostLogs (
  Host STRING(255) NOT NULL,
  LoggedAt TIMESTAMP NOT NULL,
  Line STRING(MAX),
) PRIMARY KEY (Host, LoggedAt DESC),
  INTERLEAVE IN PARENT Hosts ON DELETE CASCADE;
