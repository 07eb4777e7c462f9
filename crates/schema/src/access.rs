//! Fine-grained access control: roles, their privileges on tables and
//! views, and role membership.
//!
//! Privileges are recorded, validated (the roles, tables, views and columns
//! they name must exist) and printed back by GetDatabaseDdl, but not
//! enforced: every session reads and writes as the database owner.
//!
//! A grant is kept as atomic facts ([`PrivilegeGrant`]: one privilege on one
//! object, or one column of it, for one role), so GRANT and REVOKE of
//! overlapping lists compose exactly; printing groups them back per role
//! and object.

use rowtree_parser::ast::{GrantObjectKind, PrivilegeKind};

/// The roles every database has; they cannot be created or dropped.
pub const SYSTEM_ROLES: &[&str] = &["public", "spanner_info_reader", "spanner_sys_reader"];

/// A user-created role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Role {
    pub name: String,
}

/// One privilege on one object (or one column of it) held by one role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrivilegeGrant {
    pub role: String,
    pub privilege: PrivilegeKind,
    pub object_kind: GrantObjectKind,
    /// The table or view, as the catalog spells it.
    pub object: String,
    /// `Some(column)` for a column privilege (`SELECT(c)`).
    pub column: Option<String>,
}

/// `GRANT ROLE granted TO ROLE member`: `member` inherits `granted`'s
/// privileges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoleGrant {
    pub granted: String,
    pub member: String,
}
