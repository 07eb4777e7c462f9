-- Uploads keyed by UUID; an index on the upload date, sharded by a generated column.
CREATE TABLE Uploads (
  UploadId STRING(36) NOT NULL DEFAULT (GENERATE_UUID()),
  UploadedOn DATE NOT NULL,
  Shard INT64 NOT NULL AS (MOD(ABS(FARM_FINGERPRINT(UploadId)), 8)) STORED,
  Url STRING(2048),
) PRIMARY KEY (UploadId);

CREATE INDEX UploadsByDay ON Uploads(Shard, UploadedOn);
