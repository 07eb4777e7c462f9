//! The catalog: tables, keys, interleaving, indexes and sequences, and the
//! validation of the GoogleSQL DDL that changes them.
//!
//! A schema change goes through four steps:
//!
//! 1. The parser turns DDL text into an [`ast::Statement`].
//! 2. [`Catalog::apply`] validates it against the current, immutable
//!    [`Catalog`] with Spanner's rules, limits ([`limits`]) and messages
//!    ([`SchemaError`]), binding DEFAULT, generated and CHECK expressions
//!    with `rowtree_expr`.
//! 3. It returns the next catalog and the [`Effect`]s on data (backfill an
//!    index, validate a new NOT NULL, ...) that the db layer must run before
//!    publishing the new catalog.
//! 4. [`Catalog::ddl`] prints the schema back as Spanner's GetDatabaseDdl
//!    does; that output re-applies to an empty catalog unchanged.
//!
//! Views, roles with their privileges, and the proto bundle's type names
//! are kept too (see [`view`] for how view queries are validated; privileges
//! are recorded, not enforced).
//!
//! Names are case-insensitive but keep their case. Tables and indexes share
//! one id counter (they share the key space); column ids are stable per
//! table and stored by the row codec.

mod access;
mod apply;
mod catalog;
mod effect;
mod error;
mod expressions;
mod index;
pub mod limits;
mod names;
mod print;
mod print_pg;
mod sequence;
mod state;
mod table;
pub mod view;

pub use access::{PrivilegeGrant, Role, RoleGrant, SYSTEM_ROLES};
pub use apply::database::parse_retention;
pub use catalog::{Catalog, ViewAnalyzer};
pub use effect::Effect;
pub use error::{Result, SchemaError};
pub use index::Index;
pub use names::{is_reserved, print_name, print_pg_name};
pub use sequence::{Sequence, BIT_REVERSED_POSITIVE};
pub use table::{
    CheckConstraint, Column, ColumnExpr, ForeignKey, KeyColumn, Parent, RowDeletionPolicy, Table,
};
pub use view::View;

/// Re-exported so callers name AST types through one path.
pub use rowtree_parser::ast;

/// Id of a table; tables and indexes draw from one counter starting at 1.
pub type TableId = u32;
/// Id of an index; see [`TableId`].
pub type IndexId = u32;
/// Id of a sequence (its own counter, starting at 1).
pub type SequenceId = u32;
/// Stable id of a column within its table; never reused.
pub type ColumnId = u32;
