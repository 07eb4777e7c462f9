-- pgbench's tables, as Spanner's PostgreSQL dialect can hold them: pgbench
-- -i's own DDL steps (d, t, p) create tables without primary keys and add
-- the keys afterwards, with int, timestamp and char(n) columns, none of
-- which Spanner accepts. Same columns, bigint and varchar, keys declared
-- up front. scripts/pg-wire-tests then runs pgbench -i -I gv (its data
-- generation, with COPY, and its vacuum step).
DROP TABLE IF EXISTS pgbench_accounts;
DROP TABLE IF EXISTS pgbench_branches;
DROP TABLE IF EXISTS pgbench_tellers;
DROP TABLE IF EXISTS pgbench_history;
CREATE TABLE pgbench_branches (bid bigint PRIMARY KEY, bbalance bigint, filler varchar(88));
CREATE TABLE pgbench_tellers (tid bigint PRIMARY KEY, bid bigint, tbalance bigint, filler varchar(84));
CREATE TABLE pgbench_accounts (aid bigint PRIMARY KEY, bid bigint, abalance bigint, filler varchar(84));
CREATE TABLE pgbench_history (tid bigint NOT NULL, bid bigint, aid bigint NOT NULL, delta bigint,
  mtime timestamptz NOT NULL, filler varchar(22), PRIMARY KEY (aid, mtime, tid));
