-- In-game chat keyed by UUID, indexed by the send time for moderation.
-- expect: monotonic-index ChatBySentAt
CREATE TABLE Chat (
  MessageId STRING(36) NOT NULL DEFAULT (GENERATE_UUID()),
  SentAt TIMESTAMP NOT NULL DEFAULT (CURRENT_TIMESTAMP()),
  PlayerId STRING(36) NOT NULL,
  Text STRING(512),
) PRIMARY KEY (MessageId);

CREATE INDEX ChatBySentAt ON Chat(SentAt);
