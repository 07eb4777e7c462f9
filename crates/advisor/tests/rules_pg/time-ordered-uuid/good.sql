-- expect: none
CREATE TABLE posts (
  post_id varchar(36) NOT NULL DEFAULT spanner.generate_uuid(), -- random v4
  body text,
  PRIMARY KEY (post_id)
);
