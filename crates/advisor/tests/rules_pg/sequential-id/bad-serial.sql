-- expect: sequential-id accounts error
-- expect-input-errors: 1
-- PostgreSQL habits: bigserial hands out ids in order.
CREATE TABLE accounts (
  account_id bigserial NOT NULL,
  owner varchar(100),
  PRIMARY KEY (account_id)
);
