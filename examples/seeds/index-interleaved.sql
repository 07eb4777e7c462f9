-- Best practice 3's fix: the index interleaved in Users, keyed by the user first.
CREATE TABLE Users (
UserId     INT64 NOT NULL,
LastAccess TIMESTAMP,
) PRIMARY KEY (UserId);

CREATE NULL_FILTERED INDEX UsersByLastAccess
ON Users(UserId, LastAccess),
INTERLEAVE IN Users;
