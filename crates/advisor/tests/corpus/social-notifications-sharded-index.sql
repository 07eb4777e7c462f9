-- Notifications with a hash-sharded index on the time they were sent.
CREATE TABLE Notifications (
  NotificationId STRING(36) NOT NULL DEFAULT (GENERATE_UUID()),
  UserId STRING(36) NOT NULL,
  SentAt TIMESTAMP NOT NULL,
  Shard INT64 NOT NULL AS (MOD(ABS(FARM_FINGERPRINT(NotificationId)), 10)) STORED,
  Body STRING(1024),
) PRIMARY KEY (NotificationId);

CREATE INDEX NotificationsBySentAt ON Notifications(Shard, SentAt);
