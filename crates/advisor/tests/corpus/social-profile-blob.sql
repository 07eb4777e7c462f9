-- Profiles with an index keyed by a STRING(MAX) column.
-- expect: limits ProfilesByBio
CREATE TABLE Profiles (
  UserId STRING(36) NOT NULL,
  DisplayName STRING(128),
  Bio STRING(MAX),
) PRIMARY KEY (UserId);

CREATE INDEX ProfilesByBio ON Profiles(Bio);
