-- expect: monotonic-index PaymentsBySeq warning
-- expect: monotonic-index PaymentsByDay warning
CREATE TABLE Payments (
  PaymentId STRING(36) NOT NULL,
  LedgerSeq INT64 NOT NULL,
  PaidOn DATE,
) PRIMARY KEY (PaymentId);

CREATE UNIQUE INDEX PaymentsBySeq ON Payments(LedgerSeq);

-- A DATE first, then the table's spread key: a warning.
CREATE INDEX PaymentsByDay ON Payments(PaidOn);
