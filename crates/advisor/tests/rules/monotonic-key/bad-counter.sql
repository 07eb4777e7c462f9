-- expect: monotonic-key Invoices warning
-- expect: monotonic-key Tickets warning
-- expect: monotonic-key Samples warning
CREATE TABLE Invoices (
  InvoiceSeq INT64 NOT NULL,
  Amount NUMERIC,
) PRIMARY KEY (InvoiceSeq);

CREATE TABLE Tickets (
  TicketId INT64 NOT NULL, -- auto-increment, assigned by the app as MAX(TicketId) + 1
  Title STRING(200),
) PRIMARY KEY (TicketId);

-- An integer whose name says it is a time.
CREATE TABLE Samples (
  EventTimeMillis INT64 NOT NULL,
  Value FLOAT64,
) PRIMARY KEY (EventTimeMillis);
