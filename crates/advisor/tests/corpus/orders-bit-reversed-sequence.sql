-- Orders numbered by a bit-reversed sequence: unique integers spread over the key space.
CREATE SEQUENCE OrderSeq OPTIONS (sequence_kind = 'bit_reversed_positive');

CREATE TABLE Orders (
  OrderId INT64 NOT NULL DEFAULT (GET_NEXT_SEQUENCE_VALUE(SEQUENCE OrderSeq)),
  CustomerId STRING(36) NOT NULL,
  Total NUMERIC,
) PRIMARY KEY (OrderId);
