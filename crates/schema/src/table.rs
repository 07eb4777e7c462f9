//! Tables and what hangs off them: columns, keys, interleaving, constraints.
//!
//! A table's rows are ordered by its primary key. An *interleaved* table
//! (`INTERLEAVE IN [PARENT] p`) stores each row directly under the parent row
//! with the same key prefix, so the child's key must start with all of the
//! parent's key columns: same names, types, lengths, nullability and
//! directions. A root row and all of its descendants form a *row tree*, one
//! contiguous key range.
//!
//! Columns are addressed two ways:
//! * by **position** in [`Table::columns`], which is what expressions and
//!   [`KeyColumn`] use and which changes when a column is dropped;
//! * by **id** ([`Column::id`]), stable for the life of the table and never
//!   reused, which is what the row codec stores, so adding or dropping a
//!   column never rewrites data.

use rowtree_expr::BoundExpr;
use rowtree_parser::ast;
use rowtree_types::Type;

use crate::{ColumnId, TableId};

/// A table of the catalog.
#[derive(Debug, Clone)]
pub struct Table {
    /// Object id: shares one counter (and the key space) with indexes.
    pub id: TableId,
    /// The name as the user wrote it; lookups ignore case.
    pub name: String,
    /// Columns in declaration order (ADD COLUMN appends).
    pub columns: Vec<Column>,
    /// The primary key, positions into [`Table::columns`]. For an interleaved
    /// table it starts with the parent's key.
    pub primary_key: Vec<KeyColumn>,
    /// The table this one is interleaved in.
    pub parent: Option<Parent>,
    /// CHECK constraints, in creation order.
    pub checks: Vec<CheckConstraint>,
    /// FOREIGN KEY constraints declared on this (the referencing) table.
    pub foreign_keys: Vec<ForeignKey>,
    /// The row deletion policy (TTL), if the table has one.
    pub row_deletion_policy: Option<RowDeletionPolicy>,
    /// Positions of generated columns, each after every generated column it
    /// reads, so evaluating them in this order is always correct.
    pub(crate) generated_order: Vec<usize>,
    /// The next [`Column::id`] to hand out.
    pub(crate) next_column_id: ColumnId,
}

/// A table's row deletion policy (Spanner's TTL): a row whose `column`
/// holds a timestamp more than `days` days before now has expired, and the
/// database's TTL task deletes it (with its interleaved children) some time
/// later. A NULL timestamp never expires. At most one per table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowDeletionPolicy {
    /// The TIMESTAMP column the age is measured from, by stable id (so
    /// dropping another column does not move it).
    pub column: ColumnId,
    /// The age, in days, after which a row expires (0 or more).
    pub days: u64,
}

impl Table {
    /// The row deletion policy as Spanner shows it in
    /// `INFORMATION_SCHEMA.TABLES.ROW_DELETION_POLICY_EXPRESSION` and in
    /// GetDatabaseDdl: `OLDER_THAN(col, INTERVAL n DAY)` in GoogleSQL,
    /// `INTERVAL 'n days' ON col` in PostgreSQL.
    pub fn row_deletion_expression(&self, dialect: rowtree_types::Dialect) -> Option<String> {
        let policy = self.row_deletion_policy?;
        let (_, column) = self.column_by_id(policy.column)?;
        Some(match dialect {
            rowtree_types::Dialect::GoogleSql => format!(
                "OLDER_THAN({}, INTERVAL {} DAY)",
                crate::names::print_name(&column.name),
                policy.days
            ),
            rowtree_types::Dialect::PostgreSql => format!(
                "INTERVAL '{} days' ON {}",
                policy.days,
                crate::names::print_pg_name(&column.name)
            ),
        })
    }

    /// The row deletion policy's column: its position and definition.
    pub fn row_deletion_column(&self) -> Option<(usize, &Column)> {
        self.row_deletion_policy
            .and_then(|p| self.column_by_id(p.column))
    }

    /// The column named `name` (case-insensitive) and its position.
    pub fn column(&self, name: &str) -> Option<(usize, &Column)> {
        self.columns
            .iter()
            .enumerate()
            .find(|(_, c)| c.name.eq_ignore_ascii_case(name))
    }

    /// The column with stable id `id` and its position.
    pub fn column_by_id(&self, id: ColumnId) -> Option<(usize, &Column)> {
        self.columns.iter().enumerate().find(|(_, c)| c.id == id)
    }

    /// Generated column positions in evaluation (dependency) order.
    pub fn generated_order(&self) -> &[usize] {
        &self.generated_order
    }

    /// Positions (in [`Table::columns`]) of the primary key columns, in key order.
    pub fn key_column_positions(&self) -> Vec<usize> {
        self.primary_key.iter().map(|k| k.column).collect()
    }

    /// Whether the column at `position` is part of the primary key.
    pub fn is_key_column(&self, position: usize) -> bool {
        self.primary_key.iter().any(|k| k.column == position)
    }

    /// The CHECK constraint named `name` (case-insensitive).
    pub fn check(&self, name: &str) -> Option<&CheckConstraint> {
        self.checks
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(name))
    }

    /// The FOREIGN KEY named `name` (case-insensitive).
    pub fn foreign_key(&self, name: &str) -> Option<&ForeignKey> {
        self.foreign_keys
            .iter()
            .find(|f| f.name.eq_ignore_ascii_case(name))
    }
}

/// One column of a table.
#[derive(Debug, Clone)]
pub struct Column {
    /// Stable id within the table, never reused; the row codec stores it.
    pub id: ColumnId,
    /// The name as written; lookups ignore case.
    pub name: String,
    /// The declared type, with `STRING(n)` / `BYTES(n)` lengths.
    pub data_type: ast::DataType,
    /// The value type (`data_type` without lengths).
    pub ty: Type,
    /// `NOT NULL`.
    pub not_null: bool,
    /// `DEFAULT (expr)`. For an identity column this is the internal
    /// `GET_NEXT_SEQUENCE_VALUE(SEQUENCE <identity_sequence>)`, so callers
    /// can fill missing values the same way for both.
    pub default: Option<ColumnExpr>,
    /// `AS (expr) [STORED]`.
    pub generated: Option<ColumnExpr>,
    /// Whether the generated column is `STORED` (meaningless otherwise).
    pub generated_stored: bool,
    /// `OPTIONS (allow_commit_timestamp = true)`.
    pub allow_commit_timestamp: bool,
    /// Whether `allow_commit_timestamp` was set explicitly (true or false);
    /// GetDatabaseDdl prints the option only then.
    pub(crate) commit_timestamp_option_set: bool,
    /// `HIDDEN`: left out of `SELECT *`.
    pub hidden: bool,
    /// For `GENERATED BY DEFAULT AS IDENTITY`: the internal sequence's name.
    pub identity_sequence: Option<String>,
}

impl Column {
    /// Whether this is a generated column.
    pub fn is_generated(&self) -> bool {
        self.generated.is_some()
    }

    /// The declared maximum length of a `STRING`/`BYTES` column (or of an
    /// array's elements); `None` for `MAX` and for other types.
    pub fn max_length(&self) -> Option<u64> {
        declared_length(&self.data_type)
    }
}

/// The `STRING(n)`/`BYTES(n)` limit of a (possibly array) type.
pub(crate) fn declared_length(data_type: &ast::DataType) -> Option<u64> {
    match data_type {
        ast::DataType::String(ast::Length::Limit(n))
        | ast::DataType::Bytes(ast::Length::Limit(n)) => Some(*n),
        ast::DataType::Array(inner) => declared_length(inner),
        _ => None,
    }
}

/// A DEFAULT, generated or CHECK expression: the user's text (printed back by
/// GetDatabaseDdl) and the bound tree.
#[derive(Debug, Clone)]
pub struct ColumnExpr {
    /// The expression text as written, without the surrounding parentheses.
    pub text: String,
    /// Bound against the table's columns: slot `i` is `Table::columns[i]`.
    pub expr: BoundExpr,
    /// The parsed expression, kept to rebind it when column positions move
    /// (DROP COLUMN).
    pub(crate) source: ast::Expr,
}

/// One column of a primary or index key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyColumn {
    /// Position in [`Table::columns`] (of the indexed table, for indexes).
    pub column: usize,
    /// `DESC`.
    pub desc: bool,
}

/// Where a table is interleaved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parent {
    /// The parent table.
    pub table: TableId,
    /// `IN PARENT` (with its ON DELETE action) or plain `IN`.
    pub kind: ast::InterleaveKind,
}

impl Parent {
    /// The ON DELETE action, for `INTERLEAVE IN PARENT`; `None` for `INTERLEAVE IN`.
    pub fn on_delete(&self) -> Option<ast::OnDelete> {
        match self.kind {
            ast::InterleaveKind::InParent(action) => Some(action),
            ast::InterleaveKind::In => None,
        }
    }

    /// Whether a child row needs its parent row (`INTERLEAVE IN PARENT`).
    pub fn requires_parent_row(&self) -> bool {
        matches!(self.kind, ast::InterleaveKind::InParent(_))
    }
}

/// `CONSTRAINT name CHECK (expr)`.
#[derive(Debug, Clone)]
pub struct CheckConstraint {
    /// The user's name, or Spanner's generated `CK_<table>_<hash>_<n>`.
    pub name: String,
    /// Whether `name` was generated (GetDatabaseDdl then omits it).
    pub generated_name: bool,
    /// A BOOL expression over the table's columns; a row violates the
    /// constraint when it evaluates to FALSE (NULL passes).
    pub expr: ColumnExpr,
}

/// `CONSTRAINT name FOREIGN KEY (cols) REFERENCES t (cols)`.
#[derive(Debug, Clone)]
pub struct ForeignKey {
    /// The user's name, or Spanner's generated `FK_<table>_<ref>_<hash>_<n>`.
    pub name: String,
    /// Whether `name` was generated (GetDatabaseDdl then omits it).
    pub generated_name: bool,
    /// Referencing column positions in this table.
    pub columns: Vec<usize>,
    /// The referenced table (may be this table).
    pub referenced_table: TableId,
    /// Referenced column positions in the referenced table.
    pub referenced_columns: Vec<usize>,
    /// What deleting a referenced row does (`NO ACTION` unless written).
    pub on_delete: ast::OnDelete,
    /// `false` for `NOT ENFORCED` (informational) keys.
    pub enforced: bool,
}
