-- Multi-tenant events keyed by tenant, then time.
CREATE TABLE Tenants (
  TenantId STRING(36) NOT NULL,
  Plan STRING(16),
) PRIMARY KEY (TenantId);

CREATE TABLE TenantEvents (
  TenantId STRING(36) NOT NULL,
  CreatedAt TIMESTAMP NOT NULL,
  EventId STRING(36) NOT NULL,
  Kind STRING(32),
) PRIMARY KEY (TenantId, CreatedAt DESC, EventId),
  INTERLEAVE IN PARENT Tenants ON DELETE CASCADE;
