-- Contacts keyed by email address: a natural key that spreads.
CREATE TABLE Contacts (
  Email STRING(320) NOT NULL,
  Name STRING(256),
  Company STRING(256),
  LastContacted TIMESTAMP,
) PRIMARY KEY (Email);

CREATE INDEX ContactsByCompany ON Contacts(Company);
