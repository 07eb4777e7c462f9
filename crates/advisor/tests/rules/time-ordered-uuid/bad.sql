-- expect: time-ordered-uuid Messages error
-- expect: time-ordered-uuid Jobs error
-- expect: time-ordered-uuid Uploads error
-- expect: time-ordered-uuid Tweets error
-- expect: time-ordered-uuid Sessions error
-- expect: time-ordered-uuid Orders error
CREATE TABLE Messages (
  MessageUlid STRING(26) NOT NULL,
  Body STRING(MAX),
) PRIMARY KEY (MessageUlid);

CREATE TABLE Jobs (
  JobId STRING(36) NOT NULL, -- UUIDv7 from the client library
  State STRING(16),
) PRIMARY KEY (JobId);

-- A timestamp-prefixed string.
CREATE TABLE Uploads (
  UploadKey STRING(64) NOT NULL DEFAULT (CONCAT(FORMAT_TIMESTAMP('%Y%m%d%H%M%S', CURRENT_TIMESTAMP()), '-', GENERATE_UUID())),
  Size INT64,
) PRIMARY KEY (UploadKey);

CREATE TABLE Tweets (
  SnowflakeId INT64 NOT NULL,
  Text STRING(280),
) PRIMARY KEY (SnowflakeId);

-- Generated from a time column, time first.
CREATE TABLE Sessions (
  StartedAt TIMESTAMP NOT NULL,
  UserId STRING(36) NOT NULL,
  SessionKey STRING(100) NOT NULL AS (CONCAT(CAST(StartedAt AS STRING), '#', UserId)) STORED,
) PRIMARY KEY (SessionKey);

CREATE TABLE Orders (
  -- A ULID from the client: sortable by creation time.
  OrderKey STRING(26) NOT NULL,
  Total NUMERIC,
) PRIMARY KEY (OrderKey);
