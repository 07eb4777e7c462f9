-- Alerts keyed by UUID with a global index on the commit timestamp.
-- expect: monotonic-index AlertsByRaisedAt
CREATE TABLE Alerts (
  AlertId STRING(36) NOT NULL DEFAULT (GENERATE_UUID()),
  DeviceId STRING(64) NOT NULL,
  RaisedAt TIMESTAMP NOT NULL OPTIONS (allow_commit_timestamp = true),
  Severity INT64,
) PRIMARY KEY (AlertId);

CREATE INDEX AlertsByRaisedAt ON Alerts(RaisedAt DESC);
CREATE INDEX AlertsByDevice ON Alerts(DeviceId);
