-- expect: monotonic-key Invoices warning
-- expect: monotonic-key Samples warning
-- expect: monotonic-key Readings warning
-- expect: monotonic-key DailyStats warning
-- expect: monotonic-key Visits warning
-- expect: monotonic-key Events warning
-- expect: monotonic-key Singers warning
CREATE TABLE Invoices (
  InvoiceSeq INT64 NOT NULL,
  Amount NUMERIC,
) PRIMARY KEY (InvoiceSeq);

CREATE TABLE Readings (
  ReadingTs INT64 NOT NULL,
  Value FLOAT64,
) PRIMARY KEY (ReadingTs);

CREATE TABLE DailyStats (
  StatDate STRING(10) NOT NULL,
  Visits INT64,
) PRIMARY KEY (StatDate);

-- An integer whose name says it is a time.
CREATE TABLE Samples (
  EventTimeMillis INT64 NOT NULL,
  Value FLOAT64,
) PRIMARY KEY (EventTimeMillis);

-- A DATE first, then a spread column: the day's range can split, but each
-- day starts on one split.
CREATE TABLE Visits (
  VisitDate DATE NOT NULL,
  VisitId STRING(36) NOT NULL,
) PRIMARY KEY (VisitDate, VisitId);

CREATE TABLE Events (
  EventId INT64 NOT NULL, -- monotonically increasing
  Kind STRING(16),
) PRIMARY KEY (EventId);

-- The table's own INT64 id, filled by nothing in the schema.
CREATE TABLE Singers (
  SingerId INT64 NOT NULL,
  Name STRING(100),
) PRIMARY KEY (SingerId);
