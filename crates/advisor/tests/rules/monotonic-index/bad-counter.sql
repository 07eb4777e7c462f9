-- expect: monotonic-index PaymentsBySeq warning
CREATE TABLE Payments (
  PaymentId STRING(36) NOT NULL,
  LedgerSeq INT64 NOT NULL,
) PRIMARY KEY (PaymentId);

CREATE UNIQUE INDEX PaymentsBySeq ON Payments(LedgerSeq);
