-- expect: sequential-id orders error
-- The counter table pattern, in the PostgreSQL dialect.
CREATE TABLE id_sequences (
  name varchar(64) NOT NULL,
  next_value bigint NOT NULL,
  PRIMARY KEY (name)
);

CREATE TABLE orders (
  order_id bigint NOT NULL,
  total numeric,
  PRIMARY KEY (order_id)
);
