-- Carts with the coupon index NULL_FILTERED: rows without a coupon cost nothing.
CREATE TABLE Carts (
  CartId STRING(36) NOT NULL,
  UserId STRING(36) NOT NULL,
  CouponCode STRING(32),
) PRIMARY KEY (CartId);

CREATE NULL_FILTERED INDEX CartsByCoupon ON Carts(CouponCode);
