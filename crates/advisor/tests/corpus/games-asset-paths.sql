-- Game assets keyed by long path strings: a key can exceed Spanner's 8 KiB.
-- expect: limits Assets
CREATE TABLE Assets (
  Bucket STRING(1024) NOT NULL,
  Path STRING(8192) NOT NULL,
  Size INT64,
  Checksum BYTES(32),
) PRIMARY KEY (Bucket, Path);
