-- Patients keyed by UUID, visits under the patient, and a global index on the visit date.
-- expect: monotonic-index VisitsByDate
CREATE TABLE Patients (
  PatientId STRING(36) NOT NULL DEFAULT (GENERATE_UUID()),
  Name STRING(256),
  BirthDate DATE,
) PRIMARY KEY (PatientId);

CREATE TABLE Visits (
  PatientId STRING(36) NOT NULL,
  VisitId STRING(36) NOT NULL,
  VisitDate DATE NOT NULL,
  Notes STRING(MAX),
) PRIMARY KEY (PatientId, VisitId),
  INTERLEAVE IN PARENT Patients ON DELETE CASCADE;

CREATE INDEX VisitsByDate ON Visits(VisitDate);
