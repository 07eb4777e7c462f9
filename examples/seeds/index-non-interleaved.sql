-- Best practice 3's anti-pattern: a root-level index led by a monotonic column.
CREATE TABLE Users (
UserId     INT64 NOT NULL,
LastAccess TIMESTAMP,
) PRIMARY KEY (UserId);

CREATE NULL_FILTERED INDEX UsersByLastAccess ON Users(LastAccess);
