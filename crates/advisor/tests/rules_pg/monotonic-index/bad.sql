-- expect: monotonic-index orders_by_created error
-- expect: monotonic-index items_by_created error
CREATE TABLE orders (
  order_id varchar(36) NOT NULL DEFAULT spanner.generate_uuid(),
  created_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP,
  total numeric,
  PRIMARY KEY (order_id)
);

CREATE INDEX orders_by_created ON orders (created_at) INCLUDE (total);

CREATE TABLE items (
  order_id varchar(36) NOT NULL,
  item_id bigint NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (order_id, item_id)
) INTERLEAVE IN PARENT orders ON DELETE CASCADE;

CREATE INDEX items_by_created ON items (created_at);
