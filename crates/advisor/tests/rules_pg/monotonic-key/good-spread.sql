-- expect: none
CREATE TABLE events (
  event_id varchar(36) NOT NULL DEFAULT spanner.generate_uuid(),
  created_at timestamptz NOT NULL,
  PRIMARY KEY (event_id)
);

CREATE TABLE readings (
  shard bigint NOT NULL GENERATED ALWAYS AS (mod(spanner.farm_fingerprint(device_id), 16)) STORED,
  device_id varchar(36) NOT NULL,
  read_at timestamptz NOT NULL,
  PRIMARY KEY (shard, device_id, read_at)
);

CREATE TABLE children (
  event_id varchar(36) NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (event_id, created_at)
) INTERLEAVE IN PARENT events ON DELETE CASCADE;
