-- expect: time-ordered-uuid replays error
-- expect: time-ordered-uuid posts error
CREATE TABLE replays (
  replay_ulid varchar(26) NOT NULL,
  size bigint,
  PRIMARY KEY (replay_ulid)
);

CREATE TABLE posts (
  post_id varchar(36) NOT NULL, -- UUIDv7 from the app
  body text,
  PRIMARY KEY (post_id)
);
