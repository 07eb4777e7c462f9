-- Articles keyed by slug, revisions under the article, newest first.
CREATE TABLE Articles (
  Slug STRING(256) NOT NULL,
  Title STRING(512),
) PRIMARY KEY (Slug);

CREATE TABLE Revisions (
  Slug STRING(256) NOT NULL,
  RevisedAt TIMESTAMP NOT NULL OPTIONS (allow_commit_timestamp = true),
  Body STRING(MAX),
) PRIMARY KEY (Slug, RevisedAt DESC),
  INTERLEAVE IN PARENT Articles ON DELETE CASCADE;
