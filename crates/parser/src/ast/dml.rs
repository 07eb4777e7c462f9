//! DML statements: `INSERT`, `UPDATE`, `DELETE`, each with an optional
//! `THEN RETURN`.

use super::{Expr, Ident, Query, SelectItem, Span};

/// `THEN RETURN items` after a DML statement.
pub type Returning = Vec<SelectItem>;

/// `INSERT [OR UPDATE | OR IGNORE] [INTO] t (cols) VALUES (...), ... | query [THEN RETURN ...]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Insert {
    pub mode: InsertMode,
    pub table: Ident,
    pub columns: Vec<Ident>,
    pub source: InsertSource,
    pub returning: Option<Returning>,
    pub span: Span,
}

/// What INSERT does with an existing row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InsertMode {
    /// Fail with ALREADY_EXISTS.
    Plain,
    /// `INSERT OR UPDATE`: update the named columns.
    OrUpdate,
    /// `INSERT OR IGNORE`: leave the row as it is.
    OrIgnore,
}

/// The rows an INSERT writes.
#[derive(Debug, Clone, PartialEq)]
pub enum InsertSource {
    /// `VALUES (..), (..)`; items may be [`Expr::Default`].
    Values(Vec<Vec<Expr>>),
    Query(Box<Query>),
}

/// `UPDATE t [AS a] SET c = e, ... WHERE cond [THEN RETURN ...]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Update {
    pub table: Ident,
    pub alias: Option<Ident>,
    /// `(column path, value)`; the value may be [`Expr::Default`].
    pub assignments: Vec<(Vec<Ident>, Expr)>,
    /// Required in GoogleSQL (use `WHERE true` for every row).
    pub where_clause: Expr,
    pub returning: Option<Returning>,
    pub span: Span,
}

/// `DELETE [FROM] t [AS a] WHERE cond [THEN RETURN ...]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Delete {
    pub table: Ident,
    pub alias: Option<Ident>,
    pub where_clause: Expr,
    pub returning: Option<Returning>,
    pub span: Span,
}
