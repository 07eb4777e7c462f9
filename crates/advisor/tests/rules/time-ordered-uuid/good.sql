-- expect: none
CREATE TABLE Messages (
  MessageId STRING(36) NOT NULL DEFAULT (GENERATE_UUID()),
  Body STRING(MAX),
) PRIMARY KEY (MessageId);

CREATE TABLE Jobs (
  JobId STRING(36) NOT NULL, -- random UUID v4, not v1
  State STRING(16),
) PRIMARY KEY (JobId);

-- Time after a spread prefix.
CREATE TABLE Uploads (
  UserId STRING(36) NOT NULL,
  CreatedAt TIMESTAMP NOT NULL,
  UploadKey STRING(100) NOT NULL AS (CONCAT(UserId, '-', CAST(CreatedAt AS STRING))) STORED,
) PRIMARY KEY (UploadKey);

-- A ULID kept as a plain column for sorting is fine.
CREATE TABLE Events (
  EventId STRING(36) NOT NULL,
  Ulid STRING(26),
) PRIMARY KEY (EventId);
