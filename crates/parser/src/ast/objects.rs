//! Schema objects beside tables: views, roles and their grants, proto
//! bundles.

use super::{Ident, Query, Span};

/// `CREATE [OR REPLACE] VIEW`.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateView {
    pub or_replace: bool,
    pub name: Ident,
    pub security: SqlSecurity,
    pub query: Box<Query>,
    /// The query exactly as written (GetDatabaseDdl and
    /// `INFORMATION_SCHEMA.VIEWS.VIEW_DEFINITION` print it back).
    pub query_text: String,
}

/// A view's `SQL SECURITY` clause (Spanner requires one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SqlSecurity {
    Invoker,
    Definer,
}

impl SqlSecurity {
    /// `INVOKER` / `DEFINER`.
    pub fn as_str(self) -> &'static str {
        match self {
            SqlSecurity::Invoker => "INVOKER",
            SqlSecurity::Definer => "DEFINER",
        }
    }
}

/// The body of GRANT and REVOKE: what is granted, and to (from) whom.
#[derive(Debug, Clone, PartialEq)]
pub struct Grant {
    pub what: GrantItems,
    /// The grantee roles (after `TO ROLE` / `FROM ROLE`).
    pub roles: Vec<Ident>,
}

/// What a GRANT / REVOKE is about.
#[derive(Debug, Clone, PartialEq)]
pub enum GrantItems {
    /// `priv [(cols)], ... ON {TABLE | VIEW} obj, ...`.
    Privileges {
        privileges: Vec<Privilege>,
        object_kind: GrantObjectKind,
        objects: Vec<Ident>,
    },
    /// `ROLE r, ...`: membership in other roles.
    Roles(Vec<Ident>),
}

/// One privilege, optionally restricted to columns: `SELECT(a, b)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Privilege {
    pub kind: PrivilegeKind,
    pub columns: Vec<Ident>,
    pub span: Span,
}

/// The table privileges of Spanner's fine-grained access control.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PrivilegeKind {
    Select,
    Insert,
    Update,
    Delete,
}

impl PrivilegeKind {
    /// `SELECT`, `INSERT`, `UPDATE`, `DELETE`.
    pub fn as_str(self) -> &'static str {
        match self {
            PrivilegeKind::Select => "SELECT",
            PrivilegeKind::Insert => "INSERT",
            PrivilegeKind::Update => "UPDATE",
            PrivilegeKind::Delete => "DELETE",
        }
    }
}

/// The kind of object privileges are granted on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GrantObjectKind {
    Table,
    View,
}

impl GrantObjectKind {
    /// `TABLE` / `VIEW`.
    pub fn as_str(self) -> &'static str {
        match self {
            GrantObjectKind::Table => "TABLE",
            GrantObjectKind::View => "VIEW",
        }
    }
}

/// A fully qualified protocol buffer type name in a proto bundle
/// (`examples.spanner.music.SingerInfo`), as written, with its place.
#[derive(Debug, Clone, PartialEq)]
pub struct ProtoTypeName {
    pub name: String,
    pub span: Span,
}

/// `ALTER PROTO BUNDLE`: each list may be empty (clause absent).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AlterProtoBundle {
    pub insert: Vec<ProtoTypeName>,
    pub update: Vec<ProtoTypeName>,
    pub delete: Vec<ProtoTypeName>,
}
