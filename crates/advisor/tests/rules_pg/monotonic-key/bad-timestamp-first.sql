-- expect: monotonic-key events error
-- expect: monotonic-key audit_log error
-- expect: monotonic-key logins error
-- A timestamptz key, a commit timestamp key and a now() default.
CREATE TABLE events (
  created_at timestamptz NOT NULL,
  device_id varchar(36) NOT NULL,
  payload jsonb,
  PRIMARY KEY (created_at)
);

CREATE TABLE audit_log (
  committed_at spanner.commit_timestamp NOT NULL,
  actor text,
  PRIMARY KEY (committed_at)
);

CREATE TABLE logins (
  at_time timestamptz NOT NULL DEFAULT now(),
  user_name varchar(100),
  PRIMARY KEY (at_time)
);
