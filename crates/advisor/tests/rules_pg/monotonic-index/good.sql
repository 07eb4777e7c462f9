-- expect: none
CREATE TABLE orders (
  order_id varchar(36) NOT NULL DEFAULT spanner.generate_uuid(),
  customer_id varchar(36) NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (order_id)
);

CREATE INDEX orders_by_customer ON orders (customer_id, created_at);

CREATE TABLE items (
  order_id varchar(36) NOT NULL,
  item_id bigint NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (order_id, item_id)
) INTERLEAVE IN PARENT orders ON DELETE CASCADE;

CREATE INDEX items_by_created ON items (order_id, created_at) INTERLEAVE IN orders;
