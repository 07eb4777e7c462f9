-- expect: interleave-candidate Albums info
-- expect: interleave-candidate Songs info
-- expect: interleave-candidate Listings info
CREATE TABLE Singers (
  SingerId STRING(36) NOT NULL,
  Name STRING(100),
) PRIMARY KEY (SingerId);

-- Keyed by the singer first, but a separate root table.
CREATE TABLE Albums (
  SingerId STRING(36) NOT NULL,
  AlbumId STRING(36) NOT NULL,
  Title STRING(200),
) PRIMARY KEY (SingerId, AlbumId);

-- Keyed by the album's full key: the deepest match is proposed.
CREATE TABLE Songs (
  SingerId STRING(36) NOT NULL,
  AlbumId STRING(36) NOT NULL,
  TrackNumber INT64 NOT NULL,
) PRIMARY KEY (SingerId, AlbumId, TrackNumber);

-- The reverse: a large payload inside a row tree with children.
CREATE TABLE Listings (
  ListingId STRING(36) NOT NULL,
  Title STRING(200),
  PhotoBlob BYTES(MAX),
) PRIMARY KEY (ListingId);

CREATE TABLE Bids (
  ListingId STRING(36) NOT NULL,
  BidId STRING(36) NOT NULL,
  Amount NUMERIC,
) PRIMARY KEY (ListingId, BidId),
  INTERLEAVE IN PARENT Listings ON DELETE CASCADE;
