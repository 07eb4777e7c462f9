-- Descending timestamps: the newest history sits next to the user.
CREATE TABLE UserAccessLogs (
UserId     INT64 NOT NULL,
LastAccess TIMESTAMP NOT NULL,
) PRIMARY KEY (UserId, LastAccess DESC);
