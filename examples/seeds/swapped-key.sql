-- Fix 3: swap the key order so inserts spread over users.
CREATE TABLE UserAccessLogs (
UserId     INT64 NOT NULL,
LastAccess TIMESTAMP NOT NULL,
) PRIMARY KEY (UserId, LastAccess);
