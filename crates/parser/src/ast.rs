//! The abstract syntax tree of GoogleSQL DDL statements and expressions.
//!
//! Every node that a later layer may report an error about carries a
//! [`Span`] (byte offsets into the statement text), so errors can say
//! `[at line:column]`. Identifiers keep the case the user wrote; lookups are
//! case-insensitive (see [`Ident::matches`]).
//!
//! The query and DML statement forms are added by the SQL layer; [`Expr`] is
//! shared by DDL (DEFAULT, generated columns, CHECK) and queries.

use rowtree_types::Type;

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
}

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

/// A column's declared type: the value [`Type`] plus length limits.
#[derive(Debug, Clone, PartialEq)]
pub enum DataType {
    Bool,
    Int64,
    Float32,
    Float64,
    Numeric,
    String(Length),
    Bytes(Length),
    Date,
    Timestamp,
    Json,
    Array(Box<DataType>),
    /// `STRUCT<[name] T, ...>` (only in expressions: CAST, typed
    /// constructors, `ARRAY<STRUCT<...>>`); `None` is an anonymous field.
    Struct(Vec<(Option<Ident>, DataType)>),
}

impl DataType {
    /// The value type, without the length limit.
    pub fn value_type(&self) -> Type {
        match self {
            DataType::Bool => Type::Bool,
            DataType::Int64 => Type::Int64,
            DataType::Float32 => Type::Float32,
            DataType::Float64 => Type::Float64,
            DataType::Numeric => Type::Numeric,
            DataType::String(_) => Type::String,
            DataType::Bytes(_) => Type::Bytes,
            DataType::Date => Type::Date,
            DataType::Timestamp => Type::Timestamp,
            DataType::Json => Type::Json,
            DataType::Array(t) => Type::Array(Box::new(t.value_type())),
            DataType::Struct(fields) => Type::Struct(
                fields
                    .iter()
                    .map(|(name, t)| {
                        (
                            name.as_ref().map(|n| n.value.clone()).unwrap_or_default(),
                            t.value_type(),
                        )
                    })
                    .collect(),
            ),
        }
    }
}

/// `STRING(n)` / `STRING(MAX)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Length {
    Max,
    Limit(u64),
}

/// `CREATE TABLE`.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateTable {
    pub if_not_exists: bool,
    pub name: Ident,
    pub columns: Vec<ColumnDef>,
    /// Named or unnamed FOREIGN KEY / CHECK constraints in the column list.
    pub constraints: Vec<TableConstraint>,
    pub primary_key: Vec<KeyPart>,
    pub interleave: Option<Interleave>,
}

/// A column definition in CREATE TABLE or ALTER TABLE ADD COLUMN.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnDef {
    pub name: Ident,
    pub data_type: DataType,
    /// Span of the type, for "unknown type" / "not allowed" errors.
    pub type_span: Span,
    pub not_null: bool,
    /// `DEFAULT (expr)`.
    pub default: Option<SourceExpr>,
    /// `AS (expr) [STORED]`.
    pub generated: Option<Generated>,
    /// `GENERATED BY DEFAULT AS IDENTITY (...)`.
    pub identity: Option<SequenceOptions>,
    /// `HIDDEN`.
    pub hidden: bool,
    /// `OPTIONS (allow_commit_timestamp = true)`.
    pub options: Vec<OptionPair>,
}

/// A generated column's expression.
#[derive(Debug, Clone, PartialEq)]
pub struct Generated {
    pub expr: SourceExpr,
    /// `STORED` was written. Spanner requires STORED for key columns.
    pub stored: bool,
}

/// An expression together with the exact text it was parsed from, so
/// GetDatabaseDdl can print the user's own spelling back.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceExpr {
    pub expr: Expr,
    pub text: String,
}

/// `name = value` in an OPTIONS list; `value` is a literal or NULL.
#[derive(Debug, Clone, PartialEq)]
pub struct OptionPair {
    pub name: Ident,
    pub value: Expr,
}

/// One key column with its direction.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyPart {
    pub column: Ident,
    pub desc: bool,
}

/// `INTERLEAVE IN PARENT p [ON DELETE ...]` or `INTERLEAVE IN p`.
#[derive(Debug, Clone, PartialEq)]
pub struct Interleave {
    pub parent: Ident,
    pub kind: InterleaveKind,
}

/// The two interleaving forms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InterleaveKind {
    /// `IN PARENT`: a child row requires its parent row.
    InParent(OnDelete),
    /// `IN`: rows are co-located, but no parent-existence constraint.
    In,
}

/// What deleting a parent row does to its children.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnDelete {
    /// Refuse to delete a parent that has children (the default).
    #[default]
    NoAction,
    /// Delete the whole row tree.
    Cascade,
}

/// A table-level constraint.
#[derive(Debug, Clone, PartialEq)]
pub enum TableConstraint {
    ForeignKey(ForeignKey),
    Check(Check),
}

/// `[CONSTRAINT name] FOREIGN KEY (cols) REFERENCES t (cols) [ON DELETE ...]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ForeignKey {
    pub name: Option<Ident>,
    pub columns: Vec<Ident>,
    pub referenced_table: Ident,
    pub referenced_columns: Vec<Ident>,
    pub on_delete: OnDelete,
    /// `NOT ENFORCED` was written (informational foreign key).
    pub not_enforced: bool,
    pub span: Span,
}

/// `[CONSTRAINT name] CHECK (expr)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    pub name: Option<Ident>,
    pub expr: SourceExpr,
    pub span: Span,
}

/// `ALTER TABLE t <action>`.
#[derive(Debug, Clone, PartialEq)]
pub struct AlterTable {
    pub name: Ident,
    pub action: AlterTableAction,
}

/// What an ALTER TABLE does.
#[derive(Debug, Clone, PartialEq)]
pub enum AlterTableAction {
    AddColumn {
        if_not_exists: bool,
        column: ColumnDef,
    },
    DropColumn {
        name: Ident,
    },
    /// `ALTER COLUMN c <type> [NOT NULL] [DEFAULT (...)]`: a full new definition.
    AlterColumn {
        column: ColumnDef,
    },
    /// `ALTER COLUMN c SET OPTIONS (...)`.
    AlterColumnSetOptions {
        name: Ident,
        options: Vec<OptionPair>,
    },
    /// `ALTER COLUMN c SET DEFAULT (expr)`.
    AlterColumnSetDefault {
        name: Ident,
        default: SourceExpr,
    },
    /// `ALTER COLUMN c DROP DEFAULT`.
    AlterColumnDropDefault {
        name: Ident,
    },
    /// `SET ON DELETE CASCADE | NO ACTION`.
    SetOnDelete(OnDelete),
    AddConstraint(TableConstraint),
    DropConstraint {
        name: Ident,
    },
}

/// `CREATE [UNIQUE] [NULL_FILTERED] INDEX`.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateIndex {
    pub unique: bool,
    pub null_filtered: bool,
    pub if_not_exists: bool,
    pub name: Ident,
    pub table: Ident,
    pub keys: Vec<KeyPart>,
    pub storing: Vec<Ident>,
    pub interleave_in: Option<Ident>,
}

/// `CREATE SEQUENCE`.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateSequence {
    pub if_not_exists: bool,
    pub name: Ident,
    pub options: SequenceOptions,
}

/// A sequence's settings, from either syntax:
/// `OPTIONS (sequence_kind = 'bit_reversed_positive', skip_range_min = a,
/// skip_range_max = b, start_with_counter = n)` or
/// `BIT_REVERSED_POSITIVE SKIP RANGE a, b START COUNTER WITH n`.
/// Fields left `None` were not given.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SequenceOptions {
    /// `Some("bit_reversed_positive")`, as written (validated by the schema).
    pub kind: Option<String>,
    pub skip_range: Option<(i64, i64)>,
    pub start_with_counter: Option<i64>,
    /// Options in the OPTIONS form, kept for validation of unknown names.
    pub raw_options: Vec<OptionPair>,
    pub span: Span,
}

/// `ALTER SEQUENCE s ...`.
#[derive(Debug, Clone, PartialEq)]
pub struct AlterSequence {
    pub name: Ident,
    pub action: AlterSequenceAction,
}

/// The ALTER SEQUENCE forms.
#[derive(Debug, Clone, PartialEq)]
pub enum AlterSequenceAction {
    /// `SET OPTIONS (...)`.
    SetOptions(SequenceOptions),
    /// `RESTART COUNTER WITH n`.
    RestartCounterWith(i64),
    /// `SKIP RANGE a, b`.
    SkipRange(i64, i64),
    /// `NO SKIP RANGE`.
    NoSkipRange,
}

/// An expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Literal {
        value: Literal,
        span: Span,
    },
    /// A column reference, possibly qualified (`t.c` is `["t", "c"]`).
    Column {
        path: Vec<Ident>,
        span: Span,
    },
    /// `@name`.
    Parameter {
        name: String,
        span: Span,
    },
    Unary {
        op: UnaryOp,
        expr: Box<Expr>,
        span: Span,
    },
    Binary {
        op: BinaryOp,
        left: Box<Expr>,
        right: Box<Expr>,
        span: Span,
    },
    /// `f(args)`, including `SAFE.f(args)` (`safe` set),
    /// `GET_NEXT_SEQUENCE_VALUE(SEQUENCE s)` (argument [`Expr::Sequence`]),
    /// `COUNT(*)` (argument [`Expr::Star`]) and aggregate calls with
    /// `DISTINCT`, `IGNORE NULLS`, `ORDER BY` or `LIMIT` inside.
    Function {
        name: Ident,
        args: Vec<Expr>,
        safe: bool,
        /// `f(DISTINCT ...)`.
        distinct: bool,
        /// Aggregate modifiers, when any was written.
        modifiers: Option<Box<CallModifiers>>,
        span: Span,
    },
    /// `*` as a function argument: `COUNT(*)`.
    Star {
        span: Span,
    },
    /// `DEFAULT` as a value in INSERT VALUES or UPDATE SET.
    Default {
        span: Span,
    },
    /// `(SELECT ...)` used as a value: one column, at most one row.
    Subquery {
        query: Box<Query>,
        span: Span,
    },
    /// `EXISTS (SELECT ...)`.
    Exists {
        query: Box<Query>,
        span: Span,
    },
    /// `ARRAY(SELECT ...)`.
    ArraySubquery {
        query: Box<Query>,
        span: Span,
    },
    /// `e [NOT] IN (SELECT ...)`.
    InSubquery {
        expr: Box<Expr>,
        query: Box<Query>,
        negated: bool,
        span: Span,
    },
    /// `e [NOT] IN UNNEST(array)`.
    InUnnest {
        expr: Box<Expr>,
        array: Box<Expr>,
        negated: bool,
        span: Span,
    },
    /// `EXTRACT(part FROM e [AT TIME ZONE tz])`.
    Extract {
        part: Ident,
        expr: Box<Expr>,
        time_zone: Option<Box<Expr>>,
        span: Span,
    },
    /// `SEQUENCE s` as a function argument.
    Sequence {
        name: Ident,
        span: Span,
    },
    /// `CAST(e AS T)` / `SAFE_CAST(e AS T)`.
    Cast {
        expr: Box<Expr>,
        to: DataType,
        safe: bool,
        span: Span,
    },
    /// `e IS [NOT] NULL`, `IS [NOT] TRUE/FALSE`.
    Is {
        expr: Box<Expr>,
        test: IsTest,
        negated: bool,
        span: Span,
    },
    /// `e [NOT] IN (list)`.
    InList {
        expr: Box<Expr>,
        list: Vec<Expr>,
        negated: bool,
        span: Span,
    },
    /// `e [NOT] BETWEEN lo AND hi`.
    Between {
        expr: Box<Expr>,
        low: Box<Expr>,
        high: Box<Expr>,
        negated: bool,
        span: Span,
    },
    /// `e [NOT] LIKE pattern`.
    Like {
        expr: Box<Expr>,
        pattern: Box<Expr>,
        negated: bool,
        span: Span,
    },
    /// `CASE [operand] WHEN .. THEN .. [ELSE ..] END`.
    Case {
        operand: Option<Box<Expr>>,
        branches: Vec<(Expr, Expr)>,
        else_expr: Option<Box<Expr>>,
        span: Span,
    },
    /// `[e1, e2]` or `ARRAY<T>[...]`.
    Array {
        element_type: Option<DataType>,
        items: Vec<Expr>,
        span: Span,
    },
    /// `(e1, e2)`, `STRUCT(...)` or the typed `STRUCT<x INT64, STRING>(...)`.
    Struct {
        /// The values with their field names (from `AS name`, or from the
        /// type list of a typed constructor).
        fields: Vec<(Option<Ident>, Expr)>,
        /// The typed constructor's field types, one per field; `None` for
        /// the untyped forms (the fields take their values' types).
        field_types: Option<Vec<DataType>>,
        span: Span,
    },
    /// `e[OFFSET(i)]`, `e[ORDINAL(i)]`, `e[SAFE_OFFSET(i)]`, `e[i]`.
    Subscript {
        expr: Box<Expr>,
        index: Box<Expr>,
        mode: SubscriptMode,
        span: Span,
    },
    /// `e.field` on a STRUCT or JSON value.
    Field {
        expr: Box<Expr>,
        field: Ident,
        span: Span,
    },
    /// `INTERVAL n unit` (argument of DATE_ADD and friends).
    Interval {
        value: Box<Expr>,
        unit: Ident,
        span: Span,
    },
}

impl Expr {
    /// The source range of this expression.
    pub fn span(&self) -> Span {
        match self {
            Expr::Literal { span, .. }
            | Expr::Column { span, .. }
            | Expr::Parameter { span, .. }
            | Expr::Unary { span, .. }
            | Expr::Binary { span, .. }
            | Expr::Function { span, .. }
            | Expr::Star { span }
            | Expr::Default { span }
            | Expr::Subquery { span, .. }
            | Expr::Exists { span, .. }
            | Expr::ArraySubquery { span, .. }
            | Expr::InSubquery { span, .. }
            | Expr::InUnnest { span, .. }
            | Expr::Extract { span, .. }
            | Expr::Sequence { span, .. }
            | Expr::Cast { span, .. }
            | Expr::Is { span, .. }
            | Expr::InList { span, .. }
            | Expr::Between { span, .. }
            | Expr::Like { span, .. }
            | Expr::Case { span, .. }
            | Expr::Array { span, .. }
            | Expr::Struct { span, .. }
            | Expr::Subscript { span, .. }
            | Expr::Field { span, .. }
            | Expr::Interval { span, .. } => *span,
        }
    }
}

/// Literal values as written.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    Null,
    Bool(bool),
    /// Integer literal text (decimal or 0x hex), parsed by the evaluator so
    /// that overflow is reported with a position.
    Integer(String),
    /// Floating-point literal text: `1.5`, `1e10`, `.5`.
    Float(String),
    /// A string literal, escapes already processed.
    String(String),
    /// A bytes literal (`b'...'`), escapes already processed.
    Bytes(Vec<u8>),
    /// `DATE 'yyyy-mm-dd'`, `TIMESTAMP '...'`, `NUMERIC '...'`, `JSON '...'`:
    /// a typed literal whose text the evaluator parses.
    Typed(Type, String),
}

/// Prefix operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryOp {
    Not,
    Neg,
    Plus,
    BitNot,
}

/// Infix operators, by precedence group (lowest first): OR; AND;
/// comparisons; `|`; `^`; `&`; shifts; `+ -`; `* / ||`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
    Or,
    And,
    Eq,
    NotEq,
    Lt,
    LtEq,
    Gt,
    GtEq,
    BitOr,
    BitXor,
    BitAnd,
    ShiftLeft,
    ShiftRight,
    Add,
    Sub,
    Mul,
    Div,
    Concat,
}

impl BinaryOp {
    /// The operator as GoogleSQL spells it (`=`, `AND`, `||`, ...).
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Or => "OR",
            BinaryOp::And => "AND",
            BinaryOp::Eq => "=",
            BinaryOp::NotEq => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::LtEq => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::GtEq => ">=",
            BinaryOp::BitOr => "|",
            BinaryOp::BitXor => "^",
            BinaryOp::BitAnd => "&",
            BinaryOp::ShiftLeft => "<<",
            BinaryOp::ShiftRight => ">>",
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Concat => "||",
        }
    }
}

/// The tests of `IS [NOT] ...`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IsTest {
    Null,
    True,
    False,
}

/// Array subscript forms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubscriptMode {
    Offset,
    Ordinal,
    SafeOffset,
    SafeOrdinal,
    /// Bare `a[i]` (same as OFFSET).
    Bare,
}

/// Modifiers inside an aggregate call:
/// `ARRAY_AGG(x IGNORE NULLS ORDER BY y LIMIT 3)`, `STRING_AGG(s, ',' ORDER BY s)`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CallModifiers {
    /// `IGNORE NULLS` (true) or `RESPECT NULLS` (false).
    pub ignore_nulls: Option<bool>,
    pub order_by: Vec<OrderByItem>,
    pub limit: Option<Expr>,
    /// `f(...) OVER (...)`: the call is a window (analytic) function.
    pub over: Option<WindowSpec>,
}

/// The window of an analytic call: `OVER ([PARTITION BY e, ...] [ORDER BY ...])`.
/// Spanner's GoogleSQL has no window frame clause and no named windows.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowSpec {
    pub partition_by: Vec<Expr>,
    pub order_by: Vec<OrderByItem>,
    pub span: Span,
}

/// A query: `[WITH ...] body [ORDER BY ...] [LIMIT n [OFFSET m]]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    /// Statement hints written before the query: `@{USE_ADDITIONAL_PARALLELISM=true}`.
    pub hints: Vec<Hint>,
    pub with: Vec<Cte>,
    pub body: SetExpr,
    pub order_by: Vec<OrderByItem>,
    pub limit: Option<Expr>,
    pub offset: Option<Expr>,
    pub span: Span,
}

/// `name AS (query)` in a WITH clause.
#[derive(Debug, Clone, PartialEq)]
pub struct Cte {
    pub name: Ident,
    pub query: Box<Query>,
}

/// The body of a query: a SELECT, a parenthesised query, or a set operation.
#[derive(Debug, Clone, PartialEq)]
pub enum SetExpr {
    Select(Box<Select>),
    /// `(query)`, which may carry its own ORDER BY / LIMIT.
    Query(Box<Query>),
    SetOperation {
        op: SetOperator,
        /// `ALL` (true) or `DISTINCT` (false); GoogleSQL requires one.
        all: bool,
        left: Box<SetExpr>,
        right: Box<SetExpr>,
        span: Span,
    },
}

/// UNION, INTERSECT, EXCEPT.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetOperator {
    Union,
    Intersect,
    Except,
}

/// `SELECT [DISTINCT] [AS STRUCT] items [FROM ...] [WHERE ...] [GROUP BY ...] [HAVING ...]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Select {
    pub distinct: bool,
    /// `SELECT AS STRUCT`: each row becomes one STRUCT value.
    pub as_struct: bool,
    pub items: Vec<SelectItem>,
    pub from: Option<TableExpr>,
    pub where_clause: Option<Expr>,
    pub group_by: Vec<Expr>,
    pub having: Option<Expr>,
    pub span: Span,
}

/// One item of a select list.
#[derive(Debug, Clone, PartialEq)]
pub enum SelectItem {
    /// `expr [AS alias]`.
    Expr { expr: Expr, alias: Option<Ident> },
    /// `*` (with optional `EXCEPT (cols)` / `REPLACE (expr AS col)`).
    Star {
        except: Vec<Ident>,
        replace: Vec<(Expr, Ident)>,
        span: Span,
    },
    /// `t.*` or `path.*` (`qualifier`, `expr` is `None`), or `expr.*` for
    /// any other expression (`CAST(x AS STRUCT<...>).*`; `qualifier` is
    /// empty).
    QualifiedStar {
        qualifier: Vec<Ident>,
        expr: Option<Box<Expr>>,
        span: Span,
    },
}

/// A FROM-clause item.
#[derive(Debug, Clone, PartialEq)]
pub enum TableExpr {
    /// A table (possibly `INFORMATION_SCHEMA.TABLES`), with hints such as
    /// `@{FORCE_INDEX=idx}`.
    Table {
        path: Vec<Ident>,
        alias: Option<Ident>,
        hints: Vec<Hint>,
        span: Span,
    },
    /// `(query) [AS alias]`.
    Subquery {
        query: Box<Query>,
        alias: Option<Ident>,
        span: Span,
    },
    /// `UNNEST(array) [AS alias] [WITH OFFSET [AS name]]`, or a path to an
    /// array column of an earlier table (`t.arr`).
    Unnest {
        array: Expr,
        alias: Option<Ident>,
        /// `Some(None)`: WITH OFFSET without a name; `Some(Some(n))`: `AS n`.
        with_offset: Option<Option<Ident>>,
        span: Span,
    },
    /// A join; comma joins are `Cross`.
    Join {
        kind: JoinKind,
        left: Box<TableExpr>,
        right: Box<TableExpr>,
        condition: JoinCondition,
        /// `@{JOIN_METHOD=HASH_JOIN}` and friends, written after JOIN.
        hints: Vec<Hint>,
        span: Span,
    },
}

/// The kinds of join.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinKind {
    Inner,
    Left,
    Right,
    Full,
    Cross,
}

/// How a join matches rows.
#[derive(Debug, Clone, PartialEq)]
pub enum JoinCondition {
    On(Expr),
    Using(Vec<Ident>),
    None,
}

/// A hint `name = value` inside `@{...}`.
#[derive(Debug, Clone, PartialEq)]
pub struct Hint {
    pub name: Ident,
    pub value: Expr,
}

/// `expr [ASC|DESC] [NULLS FIRST|LAST]`.
#[derive(Debug, Clone, PartialEq)]
pub struct OrderByItem {
    pub expr: Expr,
    pub desc: bool,
    /// `Some(true)`: NULLS FIRST; `Some(false)`: NULLS LAST; `None`: the
    /// default (NULLs first in ASC, last in DESC).
    pub nulls_first: Option<bool>,
}

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
