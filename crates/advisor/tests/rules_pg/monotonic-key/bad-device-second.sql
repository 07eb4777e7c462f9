-- expect: monotonic-key readings error
-- rowtree:allow is honoured the same way in this dialect.
CREATE TABLE readings (
  read_at timestamptz NOT NULL,
  device_id varchar(36) NOT NULL,
  value double precision,
  PRIMARY KEY (read_at, device_id)
);

-- rowtree:allow(monotonic-key)
CREATE TABLE archive (
  day date NOT NULL,
  note text,
  PRIMARY KEY (day)
);
