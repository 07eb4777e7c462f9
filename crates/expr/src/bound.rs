//! The typed expression tree produced by [`crate::bind`].
//!
//! Binding removes everything evaluation should not have to think about:
//! names are row slots, literals are [`Value`]s, implicit coercions
//! (`INT64` to `FLOAT64`, string literal to `DATE`) are explicit
//! [`Node::Cast`] nodes or already folded into literals, and every operator
//! node sees operands of the one type it was bound for. Evaluation is then a
//! plain walk ([`crate::eval`], which also defines [`BoundExpr::eval`]).

use rowtree_parser::ast::{Span, SubscriptMode};
use rowtree_types::{Type, Value};

use crate::datetime::DatePart;
use crate::functions::{Function, Volatility};
use crate::membership::SetId;
use crate::operator::{ArithOp, CmpOp};
use crate::SubqueryKind;

/// A bound (resolved and typed) expression, ready to evaluate.
#[derive(Debug, Clone)]
pub struct BoundExpr {
    pub(crate) node: Node,
    pub(crate) ty: Type,
    pub(crate) span: Span,
    /// Written as a literal (NULL, a string, ...): such expressions coerce
    /// more freely, as GoogleSQL lets literals do.
    pub(crate) literal: bool,
    /// Levels from this node to its deepest leaf (1 for a leaf): how much
    /// stack evaluating it can take (see `eval::eval`).
    pub(crate) depth: u32,
}

/// What a [`Node::Proto`] does with its operand's value.
#[derive(Debug, Clone)]
pub(crate) enum ProtoOp {
    /// `message.field`: the field's value in the serialized message.
    Field(rowtree_types::proto::prost_reflect::FieldDescriptor),
    /// `CAST(enum AS STRING)`: the value's name.
    EnumName(rowtree_types::proto::prost_reflect::EnumDescriptor),
    /// `CAST(string AS enum)`: the number of the value of that name.
    EnumFromName(rowtree_types::proto::prost_reflect::EnumDescriptor),
    /// `CAST(int64 AS enum)`: the number, if the enum has a value of it.
    EnumFromNumber(rowtree_types::proto::prost_reflect::EnumDescriptor),
    /// `CAST(bytes AS message)`: the bytes, if they parse as the message.
    CheckMessage(rowtree_types::proto::prost_reflect::MessageDescriptor),
}

/// The node kinds of a bound tree.
#[derive(Debug, Clone)]
pub(crate) enum Node {
    Literal(Value),
    Column(usize),
    Param(String),
    /// `SEQUENCE s` as a function argument: evaluates to the name.
    SequenceName(String),
    Not(Box<BoundExpr>),
    And(Box<BoundExpr>, Box<BoundExpr>),
    Or(Box<BoundExpr>, Box<BoundExpr>),
    Neg(Box<BoundExpr>),
    BitNot(Box<BoundExpr>),
    Arith(ArithOp, Box<BoundExpr>, Box<BoundExpr>),
    Compare(CmpOp, Box<BoundExpr>, Box<BoundExpr>),
    Concat(Box<BoundExpr>, Box<BoundExpr>),
    Call {
        function: &'static Function,
        args: Vec<BoundExpr>,
        /// `SAFE.f(...)`: runtime errors become NULL.
        safe: bool,
    },
    Cast {
        expr: Box<BoundExpr>,
        safe: bool,
    },
    IsNull(Box<BoundExpr>),
    /// `IS TRUE` / `IS FALSE`.
    IsBool(Box<BoundExpr>, bool),
    InList {
        expr: Box<BoundExpr>,
        list: Vec<BoundExpr>,
        negated: bool,
        /// Set when the list does not depend on the row: evaluation may
        /// then keep its values as an [`crate::InSet`].
        set: Option<SetId>,
    },
    Between {
        expr: Box<BoundExpr>,
        low: Box<BoundExpr>,
        high: Box<BoundExpr>,
        negated: bool,
    },
    Like {
        expr: Box<BoundExpr>,
        pattern: Box<BoundExpr>,
        negated: bool,
    },
    /// `CASE [operand] WHEN .. THEN .. ELSE .. END`; also `IF`. Only the
    /// chosen branch is evaluated.
    Case {
        operand: Option<Box<BoundExpr>>,
        branches: Vec<(BoundExpr, BoundExpr)>,
        else_expr: Option<Box<BoundExpr>>,
    },
    /// `COALESCE` and `IFNULL`: the first non-NULL, evaluated lazily.
    Coalesce(Vec<BoundExpr>),
    NullIf(Box<BoundExpr>, Box<BoundExpr>),
    Array(Vec<BoundExpr>),
    Struct(Vec<BoundExpr>),
    Subscript {
        expr: Box<BoundExpr>,
        index: Box<BoundExpr>,
        mode: SubscriptMode,
    },
    Field {
        expr: Box<BoundExpr>,
        index: usize,
    },
    /// A scalar, `EXISTS` or `ARRAY` subquery: `ctx.subquery(id, row)`.
    Subquery {
        id: usize,
        kind: SubqueryKind,
    },
    /// `e [NOT] IN (SELECT ..)`: the candidates come from
    /// `ctx.subquery(id, row)` as an array.
    InSubquery {
        expr: Box<BoundExpr>,
        id: usize,
        negated: bool,
    },
    /// `e [NOT] IN UNNEST(array)`.
    InUnnest {
        expr: Box<BoundExpr>,
        array: Box<BoundExpr>,
        negated: bool,
        /// Set when the array does not depend on the row (see `InList`).
        set: Option<SetId>,
    },
    /// `TO_JSON(e)` / `TO_JSON_STRING(e)`: a call that needs the argument's
    /// static type (the field names of a STRUCT are not in its value).
    ToJson {
        expr: Box<BoundExpr>,
        /// `TO_JSON_STRING`: the JSON text as a STRING.
        string: bool,
        safe: bool,
    },
    /// An operation that needs the proto bundle's descriptors: a message
    /// field, or a cast between an ENUM and its names or numbers.
    Proto {
        op: ProtoOp,
        expr: Box<BoundExpr>,
        /// `SAFE_CAST`: a bad name or number gives NULL.
        safe: bool,
    },
    /// `EXTRACT(part FROM e [AT TIME ZONE tz])`.
    Extract {
        part: DatePart,
        expr: Box<BoundExpr>,
        time_zone: Option<Box<BoundExpr>>,
    },
}

impl BoundExpr {
    pub(crate) fn new(node: Node, ty: Type, span: Span) -> BoundExpr {
        let mut e = BoundExpr {
            node,
            ty,
            span,
            literal: false,
            depth: 1,
        };
        e.depth = 1 + e.children().iter().map(|c| c.depth).max().unwrap_or(0);
        e
    }

    /// The fields of a STRUCT-typed expression, each as its name (empty
    /// for an anonymous field) and the access `self.field`, in order; `None`
    /// when the expression is not a STRUCT. A NULL struct gives NULL fields.
    /// This is what `expr.*` expands to.
    pub fn struct_fields(&self) -> Option<Vec<(String, BoundExpr)>> {
        let Type::Struct(fields) = &self.ty else {
            return None;
        };
        Some(
            fields
                .iter()
                .enumerate()
                .map(|(index, (name, ty))| {
                    let access = BoundExpr::new(
                        Node::Field {
                            expr: Box::new(self.clone()),
                            index,
                        },
                        ty.clone(),
                        self.span,
                    );
                    (name.clone(), access)
                })
                .collect(),
        )
    }

    /// The static type of the expression's result.
    pub fn ty(&self) -> &Type {
        &self.ty
    }

    /// The source range of the expression.
    pub fn span(&self) -> Span {
        self.span
    }

    /// The row slots the expression reads, sorted and without duplicates.
    pub fn columns(&self) -> Vec<usize> {
        let mut out = Vec::new();
        self.walk(&mut |e| {
            if let Node::Column(slot) = e.node {
                out.push(slot);
            }
        });
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Sequences named in `GET_NEXT_SEQUENCE_VALUE` /
    /// `GET_INTERNAL_SEQUENCE_STATE`, in order of appearance, without
    /// duplicates.
    pub fn sequences(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        self.walk(&mut |e| {
            if let Node::SequenceName(name) = &e.node {
                if !out.iter().any(|n| n.eq_ignore_ascii_case(name)) {
                    out.push(name.clone());
                }
            }
        });
        out
    }

    /// Whether evaluating twice on the same row gives the same value: false
    /// when the expression calls `GENERATE_UUID`, `CURRENT_TIMESTAMP`,
    /// `PENDING_COMMIT_TIMESTAMP` or `GET_NEXT_SEQUENCE_VALUE` (Spanner
    /// refuses such expressions in generated columns and CHECK constraints).
    pub fn is_deterministic(&self) -> bool {
        let mut deterministic = true;
        self.walk(&mut |e| {
            if let Node::Call { function, .. } = e.node {
                deterministic &= function.volatility == Volatility::Deterministic;
            }
        });
        deterministic
    }

    /// Whether the expression has the same value for every row of a
    /// statement: it reads no column (correlated values included), runs no
    /// subquery and calls only deterministic functions. Parameters are
    /// fixed for a statement.
    pub fn is_row_independent(&self) -> bool {
        let mut independent = true;
        self.walk(&mut |e| match &e.node {
            Node::Column(_) | Node::Subquery { .. } | Node::InSubquery { .. } => {
                independent = false
            }
            Node::Call { function, .. } => {
                independent &= function.volatility == Volatility::Deterministic
            }
            _ => {}
        });
        independent
    }

    /// Whether the expression calls `PENDING_COMMIT_TIMESTAMP()`.
    pub fn uses_pending_commit_timestamp(&self) -> bool {
        let mut uses = false;
        self.walk(&mut |e| {
            if let Node::Call { function, .. } = e.node {
                uses |= function.volatility == Volatility::PendingCommitTimestamp;
            }
        });
        uses
    }

    /// The ids of the subqueries ([`crate::Scope::bind_subquery`]) the
    /// expression evaluates, in order of appearance.
    pub fn subqueries(&self) -> Vec<usize> {
        let mut out = Vec::new();
        self.walk(&mut |e| match &e.node {
            Node::Subquery { id, .. } | Node::InSubquery { id, .. } => out.push(*id),
            _ => {}
        });
        out
    }

    /// A typed NULL constant of type `ty` (not an untyped NULL literal: it
    /// does not coerce to other types).
    pub fn null_of(ty: Type, span: Span) -> BoundExpr {
        BoundExpr::new(Node::Literal(Value::Null), ty, span)
    }

    /// Whether this is an untyped `NULL` literal as written, which GoogleSQL
    /// lets take any type (in a set operation, the other side's).
    pub fn is_untyped_null(&self) -> bool {
        self.literal && matches!(self.node, Node::Literal(Value::Null))
    }

    /// The row slot, if this is a plain column reference.
    pub fn as_column(&self) -> Option<usize> {
        match self.node {
            Node::Column(slot) => Some(slot),
            _ => None,
        }
    }

    /// The constant value, if this is a literal (after binding-time folding).
    pub fn as_literal(&self) -> Option<&Value> {
        match &self.node {
            Node::Literal(v) => Some(v),
            _ => None,
        }
    }

    /// Calls `f` on this node and every descendant, parents first.
    fn walk(&self, f: &mut dyn FnMut(&BoundExpr)) {
        f(self);
        for child in self.children() {
            child.walk(f);
        }
    }

    fn children(&self) -> Vec<&BoundExpr> {
        match &self.node {
            Node::Literal(_)
            | Node::Column(_)
            | Node::Param(_)
            | Node::SequenceName(_)
            | Node::Subquery { .. } => vec![],
            Node::InSubquery { expr, .. } => vec![expr],
            Node::InUnnest { expr, array, .. } => vec![expr, array],
            Node::Extract {
                expr, time_zone, ..
            } => std::iter::once(&**expr)
                .chain(time_zone.iter().map(|e| &**e))
                .collect(),
            Node::Not(e)
            | Node::Neg(e)
            | Node::BitNot(e)
            | Node::IsNull(e)
            | Node::IsBool(e, _)
            | Node::Cast { expr: e, .. }
            | Node::ToJson { expr: e, .. }
            | Node::Field { expr: e, .. }
            | Node::Proto { expr: e, .. } => vec![e],
            Node::And(a, b)
            | Node::Or(a, b)
            | Node::Arith(_, a, b)
            | Node::Compare(_, a, b)
            | Node::Concat(a, b)
            | Node::NullIf(a, b)
            | Node::Like {
                expr: a,
                pattern: b,
                ..
            }
            | Node::Subscript {
                expr: a, index: b, ..
            } => vec![a, b],
            Node::Call { args, .. } => args.iter().collect(),
            Node::Coalesce(items) | Node::Array(items) | Node::Struct(items) => {
                items.iter().collect()
            }
            Node::InList { expr, list, .. } => {
                std::iter::once(&**expr).chain(list.iter()).collect()
            }
            Node::Between {
                expr, low, high, ..
            } => vec![expr, low, high],
            Node::Case {
                operand,
                branches,
                else_expr,
            } => operand
                .iter()
                .map(|e| &**e)
                .chain(branches.iter().flat_map(|(w, t)| [w, t]))
                .chain(else_expr.iter().map(|e| &**e))
                .collect(),
        }
    }
}
