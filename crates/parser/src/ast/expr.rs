//! Expressions: literals, column references, operators, function calls
//! (with aggregate modifiers and windows), subqueries.

use rowtree_types::Type;

use super::{DataType, Ident, OrderByItem, Query, Span};

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
    /// PostgreSQL's `/`: integer division truncating toward zero when both
    /// operands are integers (`7 / 2` is 3), `/` otherwise. The GoogleSQL
    /// parser never produces it.
    IntDiv,
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
            BinaryOp::Div | BinaryOp::IntDiv => "/",
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
