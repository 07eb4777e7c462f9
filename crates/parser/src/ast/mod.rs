//! The abstract syntax tree of GoogleSQL statements and expressions.
//!
//! Every node that a later layer may report an error about carries a
//! [`Span`] (byte offsets into the statement text), so errors can say
//! `[at line:column]`. Identifiers keep the case the user wrote; lookups are
//! case-insensitive (see [`Ident::matches`]).
//!
//! A parsed [`Statement`] is one of the [`StatementKind`]s, defined here;
//! the nodes they are made of live in one file per kind of statement and
//! are all re-exported here, so every node is `ast::Name` whichever file
//! holds it:
//!
//! * `ddl`: tables, columns and their types, indexes, sequences;
//! * `objects`: views, roles and grants, proto bundles;
//! * `query`: queries (`SELECT`, `WITH`, set operations, joins);
//! * `dml`: `INSERT`, `UPDATE`, `DELETE`;
//! * `expr`: [`Expr`] and its operators, shared by DDL (DEFAULT,
//!   generated columns, CHECK), queries and DML. Expressions and queries
//!   nest in each other (a subquery is an expression, a query holds
//!   expressions), so the two files name each other's types.

mod ddl;
mod dml;
mod expr;
mod objects;
mod query;

pub use ddl::*;
pub use dml::*;
pub use expr::*;
pub use objects::*;
pub use query::*;

/// A half-open byte range `[start, end)` in the source text of one statement
/// batch. [`crate::Position`] turns an offset into line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

/// An identifier: as written (backquotes removed), with its place.
#[derive(Debug, Clone)]
pub struct Ident {
    pub value: String,
    pub span: Span,
}

impl Ident {
    /// Case-insensitive comparison, GoogleSQL's rule for names.
    pub fn matches(&self, other: &str) -> bool {
        self.value.eq_ignore_ascii_case(other)
    }
}

impl PartialEq for Ident {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

/// One parsed statement, with the span of its whole text.
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    pub kind: StatementKind,
    pub span: Span,
}

/// The statement forms.
// A statement is built once per DDL request and moved a few times, so the
// size of the ALTER TABLE variant costs nothing worth boxing it for (boxing
// would also change the type other crates match on).
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum StatementKind {
    /// A query (`SELECT`, `WITH`, set operations).
    Query(Box<Query>),
    /// `INSERT [OR UPDATE | OR IGNORE] ...`.
    Insert(Box<Insert>),
    /// `UPDATE ... SET ... WHERE ...`.
    Update(Box<Update>),
    /// `DELETE [FROM] ... WHERE ...`.
    Delete(Box<Delete>),
    /// `EXPLAIN [ANALYZE] statement`: the plan (and, with ANALYZE, the
    /// execution profile) instead of the result.
    Explain {
        analyze: bool,
        statement: Box<Statement>,
    },
    CreateTable(CreateTable),
    AlterTable(AlterTable),
    DropTable {
        name: Ident,
        if_exists: bool,
    },
    CreateIndex(CreateIndex),
    DropIndex {
        name: Ident,
        if_exists: bool,
    },
    CreateSequence(CreateSequence),
    AlterSequence(AlterSequence),
    DropSequence {
        name: Ident,
        if_exists: bool,
    },
    /// `ALTER DATABASE db SET OPTIONS (...)`.
    AlterDatabase {
        name: Ident,
        options: Vec<OptionPair>,
    },
    /// `CREATE [OR REPLACE] VIEW v SQL SECURITY {INVOKER | DEFINER} AS query`.
    CreateView(CreateView),
    /// `DROP VIEW v`.
    DropView {
        name: Ident,
    },
    /// `CREATE ROLE r`.
    CreateRole {
        name: Ident,
    },
    /// `DROP ROLE r`.
    DropRole {
        name: Ident,
    },
    /// `GRANT ... TO ROLE r, ...`.
    Grant(Grant),
    /// `REVOKE ... FROM ROLE r, ...` (same shape as GRANT).
    Revoke(Grant),
    /// `CREATE PROTO BUNDLE (a.b.C, ...)`.
    CreateProtoBundle {
        types: Vec<ProtoTypeName>,
    },
    /// `ALTER PROTO BUNDLE [INSERT (...)] [UPDATE (...)] [DELETE (...)]`.
    AlterProtoBundle(AlterProtoBundle),
    /// `DROP PROTO BUNDLE`.
    DropProtoBundle,
    /// `ANALYZE`: in Spanner, builds a new query optimizer statistics
    /// package. Rowtree keeps no statistics, so it changes nothing.
    Analyze,
}
