-- Fix 4: a shard id computed from a hash of the key, as a stored generated
-- column, leads the key.
CREATE TABLE UserAccessLogs (
ShardId INT64 NOT NULL
AS (MOD(FARM_FINGERPRINT(CAST(LastAccess AS STRING)), 2048)) STORED,
LastAccess TIMESTAMP NOT NULL,
UserId    INT64 NOT NULL,
) PRIMARY KEY (ShardId, LastAccess, UserId);

-- The same shape with the shard id written by the application.
CREATE TABLE UserAccessLogsManualShard (
ShardId     INT64 NOT NULL,
LastAccess  TIMESTAMP NOT NULL,
UserId      INT64 NOT NULL,
) PRIMARY KEY (ShardId, LastAccess, UserId);
