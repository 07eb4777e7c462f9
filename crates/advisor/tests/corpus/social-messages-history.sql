-- Chat messages under a conversation, oldest first.
-- expect: desc-history Messages
CREATE TABLE Conversations (
  ConversationId STRING(36) NOT NULL,
  Title STRING(256),
) PRIMARY KEY (ConversationId);

CREATE TABLE Messages (
  ConversationId STRING(36) NOT NULL,
  SentAt TIMESTAMP NOT NULL,
  SenderId STRING(36) NOT NULL,
  Body STRING(MAX),
) PRIMARY KEY (ConversationId, SentAt, SenderId),
  INTERLEAVE IN PARENT Conversations ON DELETE CASCADE;
