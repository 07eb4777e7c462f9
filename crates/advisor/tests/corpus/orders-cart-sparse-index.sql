-- Carts with an index on a column that is set for a few rows only.
-- expect: sparse-index CartsByCoupon
CREATE TABLE Carts (
  CartId STRING(36) NOT NULL,
  UserId STRING(36) NOT NULL,
  CouponCode STRING(32),
  UpdatedAt TIMESTAMP,
) PRIMARY KEY (CartId);

CREATE INDEX CartsByCoupon ON Carts(CouponCode);
CREATE INDEX CartsByUser ON Carts(UserId);
