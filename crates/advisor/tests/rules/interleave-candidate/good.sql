-- expect: none
CREATE TABLE Singers (
  SingerId STRING(36) NOT NULL,
  Name STRING(100),
  SingerInfo BYTES(MAX),
) PRIMARY KEY (SingerId);

CREATE TABLE Albums (
  SingerId STRING(36) NOT NULL,
  AlbumId STRING(36) NOT NULL,
  Title STRING(200),
) PRIMARY KEY (SingerId, AlbumId),
  INTERLEAVE IN PARENT Singers ON DELETE CASCADE;

-- Different key column types: not the same entity.
CREATE TABLE Venues (
  SingerId INT64 NOT NULL,
  VenueId STRING(36) NOT NULL,
) PRIMARY KEY (SingerId, VenueId);

-- A payload in a table without children.
CREATE TABLE Documents (
  DocumentId STRING(36) NOT NULL,
  Content STRING(MAX),
) PRIMARY KEY (DocumentId);
