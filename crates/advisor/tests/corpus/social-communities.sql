-- Communities and memberships: membership under the community, an index for a user's communities.
CREATE TABLE Communities (
  CommunityId STRING(36) NOT NULL,
  Name STRING(256),
) PRIMARY KEY (CommunityId);

CREATE TABLE Memberships (
  CommunityId STRING(36) NOT NULL,
  UserId STRING(36) NOT NULL,
  Role STRING(16),
) PRIMARY KEY (CommunityId, UserId),
  INTERLEAVE IN PARENT Communities ON DELETE CASCADE;

CREATE INDEX MembershipsByUser ON Memberships(UserId);
