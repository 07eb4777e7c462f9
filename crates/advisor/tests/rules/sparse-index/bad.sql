-- expect: sparse-index UsersByDeletedAt info
-- expect: sparse-index OrdersByCoupon info
CREATE TABLE Users (
  UserId STRING(36) NOT NULL,
  DeletedAt TIMESTAMP,
) PRIMARY KEY (UserId);

CREATE INDEX UsersByDeletedAt ON Users(DeletedAt);

CREATE TABLE Orders (
  OrderId STRING(36) NOT NULL,
  Code STRING(32), -- sparse: set only for orders that used a coupon
) PRIMARY KEY (OrderId);

CREATE INDEX OrdersByCoupon ON Orders(Code);
