//! Binding: resolving names and typing an expression.
//!
//! [`bind`] walks the parser's [`ast::Expr`] once, bottom-up. For each node
//! it binds the children, decides the node's signature with GoogleSQL's
//! rules, and inserts the coercions that make the children fit:
//!
//! * **Supertypes.** Operands that must agree (`=`, `IN`, `CASE` results,
//!   `COALESCE`) are coerced to their common supertype: `INT64` < `NUMERIC`
//!   < `FLOAT64`, `FLOAT32` < `FLOAT64`. Nothing else mixes: `'1' = 1` is an
//!   error, as in GoogleSQL.
//! * **Literals coerce more freely.** An untyped `NULL` takes any type, and
//!   a string literal may stand for a `DATE` or `TIMESTAMP` (`d >
//!   '2020-01-01'`); such coercions are done at bind time, so a bad literal
//!   is reported with its position before any row is read.
//! * **Functions** come from the registry in [`crate::functions`]; `IF`,
//!   `IFNULL`, `COALESCE` and `NULLIF` are special forms here because they
//!   are generic over their argument type (and the first three are lazy).
//!
//! Errors use GoogleSQL's wording (`Unrecognized name: Foo`, `No matching
//! signature for operator + for argument types: STRING, INT64`) and carry
//! the span of the offending node.

use std::collections::HashMap;

use rowtree_parser::ast::{self, BinaryOp, Expr, Ident, IsTest, Literal, Span, UnaryOp};
use rowtree_types::{parse_json, Date, Numeric, TimeZone, Timestamp, Type, Value};

use crate::bound::{BoundExpr, Node};
use crate::cast::{castable, coercible, parse_i64};
use crate::functions::{self, Function, Param, Volatility};
use crate::operator::{ArithOp, CmpOp};
use crate::{cast, Error, Result};

/// Where column references (and sequence names) are resolved.
pub trait Scope {
    /// Resolves a (possibly qualified) column reference to its slot in the
    /// row passed to [`BoundExpr::eval`] and its type; `None` if unknown.
    fn resolve(&self, path: &[Ident]) -> Option<(usize, Type)>;

    /// Whether a sequence of this name exists; `None` (the default) means
    /// "not checked here", and the caller checks [`BoundExpr::sequences`].
    fn sequence_exists(&self, name: &str) -> Option<bool> {
        let _ = name;
        None
    }

    /// A known name close to the unrecognized `name`, for the error's
    /// `Did you mean X?` (see [`closest_name`]); `None` (the default) for
    /// no suggestion.
    fn suggest(&self, name: &str) -> Option<String> {
        let _ = name;
        None
    }

    /// An aggregate call (`COUNT(*)`, `SUM(DISTINCT x)`, `ARRAY_AGG(x
    /// IGNORE NULLS ORDER BY y LIMIT 3)`, ...; `call` is the whole
    /// [`ast::Expr::Function`]) in a context where the engine computes
    /// aggregates: the slot of the row where its value will be, and its
    /// type. The binder then reads that slot like a column.
    ///
    /// `None` (the default) means aggregates are not allowed here; the
    /// binder reports `Aggregate function SUM not allowed in <context>`
    /// using [`Scope::aggregate_context_name`].
    fn bind_aggregate(&self, call: &ast::Expr) -> Option<Result<(usize, Type)>> {
        let _ = call;
        None
    }

    /// Where aggregates are refused, for the error message: `"WHERE
    /// clause"` gives `Aggregate function SUM not allowed in WHERE clause`.
    /// `None` (the default) gives `... not allowed here`.
    fn aggregate_context_name(&self) -> Option<&str> {
        None
    }

    /// A subquery expression: `expr` is the [`ast::Expr::Subquery`],
    /// [`ast::Expr::Exists`], [`ast::Expr::ArraySubquery`] or
    /// [`ast::Expr::InSubquery`] node and `query` its query. The engine
    /// plans it and returns an id, which evaluation passes to
    /// [`crate::EvalContext::subquery`], and the type of the value that call
    /// returns: [`SubqueryKind::Scalar`] the column's type,
    /// [`SubqueryKind::Exists`] BOOL, [`SubqueryKind::Array`] and
    /// [`SubqueryKind::In`] `ARRAY<column type>` (for `In`, the binder checks
    /// the left operand against the element type and computes `IN` itself).
    ///
    /// `None` (the default) means subqueries are not allowed here.
    fn bind_subquery(
        &self,
        expr: &ast::Expr,
        query: &ast::Query,
        kind: SubqueryKind,
    ) -> Option<Result<(usize, Type)>> {
        let _ = (expr, query, kind);
        None
    }
}

/// Which subquery expression [`Scope::bind_subquery`] is asked to plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SubqueryKind {
    /// `(SELECT x ...)`: one column, at most one row; NULL when empty.
    Scalar,
    /// `EXISTS (SELECT ...)`: BOOL.
    Exists,
    /// `ARRAY(SELECT x ...)`: `ARRAY<type of x>`.
    Array,
    /// `e [NOT] IN (SELECT x ...)`: the candidates, as `ARRAY<type of x>`.
    In,
}

/// Whether `name` (any case) is an aggregate function, which
/// [`Scope::bind_aggregate`] binds instead of the scalar registry.
pub fn is_aggregate_function(name: &str) -> bool {
    crate::aggregate::AGGREGATE_FUNCTIONS
        .iter()
        .any(|f| f.eq_ignore_ascii_case(name))
}

/// A scope without columns, for constant expressions.
impl Scope for () {
    fn resolve(&self, _path: &[Ident]) -> Option<(usize, Type)> {
        None
    }
}

/// Options of [`bind`].
#[derive(Debug, Clone)]
pub struct BindOptions {
    /// Types of query parameters `@name` (names without `@`; looked up
    /// exactly first, then case-insensitively).
    pub params: HashMap<String, Type>,
    /// Whether `GET_NEXT_SEQUENCE_VALUE` may be called here (Spanner allows
    /// it in DEFAULT expressions and read-write statements).
    pub allow_sequence_functions: bool,
    /// Whether `PENDING_COMMIT_TIMESTAMP()` may be called here (Spanner
    /// allows it only as a value written to a commit-timestamp column).
    pub allow_pending_commit_timestamp: bool,
}

impl Default for BindOptions {
    /// No parameters; every function allowed.
    fn default() -> Self {
        BindOptions {
            params: HashMap::new(),
            allow_sequence_functions: true,
            allow_pending_commit_timestamp: true,
        }
    }
}

/// Resolves and types `expr` against `scope`.
pub fn bind(expr: &ast::Expr, scope: &dyn Scope, options: &BindOptions) -> Result<BoundExpr> {
    Binder { scope, options }.bind(expr)
}

struct Binder<'a> {
    scope: &'a dyn Scope,
    options: &'a BindOptions,
}

fn invalid_at(span: Span, message: impl Into<String>) -> Error {
    Error::InvalidArgument {
        message: message.into(),
        span: Some(span),
    }
}

impl BoundExpr {
    fn literal(value: Value, ty: Type, span: Span) -> BoundExpr {
        BoundExpr {
            node: Node::Literal(value),
            ty,
            span,
            literal: true,
            depth: 1,
        }
    }

    fn is_null_literal(&self) -> bool {
        self.literal && matches!(self.node, Node::Literal(Value::Null))
    }

    fn is_string_literal(&self) -> bool {
        self.literal && matches!(self.node, Node::Literal(Value::String(_)))
    }

    /// The type as error messages show it.
    fn type_name(&self) -> String {
        if self.is_null_literal() {
            "NULL".into()
        } else if matches!(self.node, Node::SequenceName(_)) {
            "SEQUENCE".into()
        } else {
            self.ty.to_string()
        }
    }
}

fn type_names(args: &[BoundExpr]) -> String {
    args.iter()
        .map(BoundExpr::type_name)
        .collect::<Vec<_>>()
        .join(", ")
}

fn is_numeric(t: &Type) -> bool {
    matches!(
        t,
        Type::Int64 | Type::Numeric | Type::Float32 | Type::Float64
    )
}

/// The wider of two numeric types.
fn widen_numeric(a: &Type, b: &Type) -> Option<Type> {
    use Type::*;
    Some(match (a, b) {
        _ if a == b => a.clone(),
        (Int64, Numeric) | (Numeric, Int64) => Numeric,
        _ if is_numeric(a) && is_numeric(b) => Float64,
        _ => return None,
    })
}

/// The common supertype of `exprs`, or `None` if they do not mix. Untyped
/// NULLs take any type; string literals yield to a `DATE`/`TIMESTAMP`.
fn supertype(exprs: &[&BoundExpr]) -> Option<Type> {
    let temporal = exprs
        .iter()
        .any(|e| !e.literal && matches!(e.ty, Type::Date | Type::Timestamp))
        || exprs.iter().any(|e| {
            e.literal && !e.is_string_literal() && matches!(e.ty, Type::Date | Type::Timestamp)
        });
    let mut result: Option<Type> = None;
    for e in exprs {
        if e.is_null_literal() || (temporal && e.is_string_literal()) {
            continue;
        }
        result = Some(match result {
            None => e.ty.clone(),
            Some(t) if t == e.ty => t,
            Some(t) => widen_numeric(&t, &e.ty)?,
        });
    }
    Some(result.unwrap_or(Type::Int64))
}

/// Whether `=` is defined on the type (not on JSON or ARRAY, as in Spanner).
fn equality_comparable(t: &Type) -> bool {
    match t {
        Type::Json | Type::Array(_) => false,
        Type::Struct(fields) => fields.iter().all(|(_, t)| equality_comparable(t)),
        _ => true,
    }
}

/// Whether `CAST(e AS to)` binds: by the types, except that a NULL literal
/// casts to anything, also as a field of a STRUCT constructor
/// (`CAST(STRUCT(NULL) AS STRUCT<DATE>)`).
fn castable_expr(e: &BoundExpr, to: &Type) -> bool {
    if e.is_null_literal() {
        return true;
    }
    match (&e.node, to) {
        (Node::Struct(items), Type::Struct(fields)) => {
            items.len() == fields.len()
                && items
                    .iter()
                    .zip(fields)
                    .all(|(item, (_, t))| castable_expr(item, t))
        }
        _ => castable(&e.ty, to),
    }
}

/// `base.field` on a STRUCT value, or a JSON object's member (`NULL`
/// when the value is not an object or has no such member).
fn field_access(base: BoundExpr, field: &Ident, span: Span) -> Result<BoundExpr> {
    if base.ty == Type::Json {
        let key = BoundExpr::literal(Value::String(field.value.clone()), Type::String, field.span);
        return Ok(json_subscript_call(base, key, span));
    }
    let found = match &base.ty {
        Type::Struct(fields) => fields
            .iter()
            .position(|(n, _)| field.matches(n))
            .map(|i| (i, fields[i].1.clone())),
        _ => None,
    };
    match found {
        Some((index, ty)) => Ok(BoundExpr::new(
            Node::Field {
                expr: Box::new(base),
                index,
            },
            ty,
            span,
        )),
        None => Err(invalid_at(
            field.span,
            format!("Field name {} does not exist in {}", field.value, base.ty),
        )),
    }
}

/// `json[key]` (a STRING member name or an INT64 array position) once the
/// key has its type.
fn json_subscript_call(json: BoundExpr, key: BoundExpr, span: Span) -> BoundExpr {
    BoundExpr::new(
        Node::Call {
            function: &functions::JSON_SUBSCRIPT,
            args: vec![json, key],
            safe: false,
        },
        Type::Json,
        span,
    )
}

/// Levenshtein distance between `a` and `b`, ignoring ASCII case.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().map(|c| c.to_ascii_lowercase()).collect();
    let b: Vec<char> = b.chars().map(|c| c.to_ascii_lowercase()).collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitute = prev[j] + usize::from(ca != cb);
            cur[j + 1] = substitute.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The candidate closest to the mistyped `name`, when it is within about a
/// fifth of the name's length in edits (at least one). Internal names (`$...`)
/// and empty names are never suggested; ties go to the first candidate.
pub fn closest_name<'n>(
    name: &str,
    candidates: impl IntoIterator<Item = &'n str>,
) -> Option<&'n str> {
    let limit = (name.chars().count() / 5).max(1);
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        if c.is_empty() || c.starts_with('$') || c.eq_ignore_ascii_case(name) {
            continue;
        }
        let d = edit_distance(name, c);
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

impl Binder<'_> {
    /// A column reference `c`, `t.c`, or a column (or range variable)
    /// followed by STRUCT field names: `s.a`, `t.s.a`. The longest prefix
    /// that names a column wins; the rest are field accesses.
    fn bind_path(&self, path: &[Ident], span: Span) -> Result<BoundExpr> {
        if let Some((slot, ty)) = self.scope.resolve(path) {
            return Ok(BoundExpr::new(Node::Column(slot), ty, span));
        }
        for k in (1..path.len()).rev() {
            if let Some((slot, ty)) = self.scope.resolve(&path[..k]) {
                let prefix_span = Span {
                    start: span.start,
                    end: path[k - 1].span.end,
                };
                let mut e = BoundExpr::new(Node::Column(slot), ty, prefix_span);
                for field in &path[k..] {
                    let span = Span {
                        start: span.start,
                        end: field.span.end,
                    };
                    e = field_access(e, field, span)?;
                }
                return Ok(e);
            }
        }
        // GoogleSQL names the first part of a path none of which resolved.
        let name = path.first().map(|i| i.value.as_str()).unwrap_or_default();
        let mut message = format!("Unrecognized name: {name}");
        if let Some(suggestion) = self.scope.suggest(name) {
            message.push_str(&format!("; Did you mean {suggestion}?"));
        }
        Err(invalid_at(span, message))
    }

    fn bind(&self, e: &Expr) -> Result<BoundExpr> {
        rowtree_types::stack::guarded(|| self.bind_node(e))
    }

    fn bind_node(&self, e: &Expr) -> Result<BoundExpr> {
        match e {
            Expr::Literal { value, span } => self.bind_literal(value, *span),
            Expr::Column { path, span } => self.bind_path(path, *span),
            Expr::Parameter { name, span } => {
                let ty = self.options.params.get(name).cloned().or_else(|| {
                    self.options
                        .params
                        .iter()
                        .find(|(k, _)| k.eq_ignore_ascii_case(name))
                        .map(|(_, t)| t.clone())
                });
                match ty {
                    Some(ty) => Ok(BoundExpr::new(Node::Param(name.clone()), ty, *span)),
                    None => Err(invalid_at(
                        *span,
                        format!("Query parameter '{name}' not found"),
                    )),
                }
            }
            Expr::Unary { op, expr, span } => self.bind_unary(*op, expr, *span),
            Expr::Binary {
                op,
                left,
                right,
                span,
            } => self.bind_binary(*op, left, right, *span),
            Expr::Function {
                name,
                args,
                safe,
                distinct,
                modifiers,
                span,
            } => {
                if modifiers.as_ref().is_some_and(|m| m.over.is_some()) {
                    return Err(invalid_at(
                        *span,
                        format!(
                            "Analytic function not allowed in {}",
                            self.scope
                                .aggregate_context_name()
                                .unwrap_or("this context")
                        ),
                    ));
                }
                if name.value.eq_ignore_ascii_case("IS_FIRST") {
                    return Err(invalid_at(
                        *span,
                        "Analytic function IS_FIRST cannot be called without an OVER clause",
                    ));
                }
                if is_aggregate_function(&name.value) {
                    return self.bind_aggregate_call(e, name, *span);
                }
                if *distinct || modifiers.is_some() {
                    return Err(invalid_at(
                        *span,
                        format!(
                            "Non-aggregate function {} does not support DISTINCT, IGNORE NULLS, ORDER BY or LIMIT",
                            name.value.to_uppercase()
                        ),
                    ));
                }
                if args.iter().any(|a| matches!(a, Expr::Star { .. })) {
                    return Err(invalid_at(
                        *span,
                        format!(
                            "* is only allowed in COUNT(*), not in {}",
                            name.value.to_uppercase()
                        ),
                    ));
                }
                self.bind_function(name, args, *safe, *span)
            }
            Expr::Sequence { span, .. } => Err(invalid_at(
                *span,
                "SEQUENCE arguments are only allowed in sequence functions",
            )),
            Expr::Cast {
                expr,
                to,
                safe,
                span,
            } => {
                let inner = self.bind(expr)?;
                let to = to.value_type();
                if !castable_expr(&inner, &to) {
                    return Err(invalid_at(
                        *span,
                        format!("Invalid cast from {} to {to}", inner.ty),
                    ));
                }
                Ok(BoundExpr::new(
                    Node::Cast {
                        expr: Box::new(inner),
                        safe: *safe,
                    },
                    to,
                    *span,
                ))
            }
            Expr::Is {
                expr,
                test,
                negated,
                span,
            } => {
                let inner = self.bind(expr)?;
                let node = match test {
                    IsTest::Null => Node::IsNull(Box::new(inner)),
                    IsTest::True | IsTest::False => {
                        let inner = self.expect_bool(inner, "IS")?;
                        Node::IsBool(Box::new(inner), *test == IsTest::True)
                    }
                };
                let is = BoundExpr::new(node, Type::Bool, *span);
                Ok(if *negated {
                    BoundExpr::new(Node::Not(Box::new(is)), Type::Bool, *span)
                } else {
                    is
                })
            }
            Expr::InList {
                expr,
                list,
                negated,
                span,
            } => {
                let needle = self.bind(expr)?;
                let list = list
                    .iter()
                    .map(|i| self.bind(i))
                    .collect::<Result<Vec<_>>>()?;
                let all: Vec<&BoundExpr> = std::iter::once(&needle).chain(list.iter()).collect();
                let ty = supertype(&all).filter(equality_comparable).ok_or_else(|| {
                    invalid_at(
                        *span,
                        format!(
                            "No matching signature for operator IN for argument types: {}",
                            type_names(&[&[needle.clone()][..], &list[..]].concat())
                        ),
                    )
                })?;
                let needle = self.coerce(needle, &ty)?;
                let list = list
                    .into_iter()
                    .map(|i| self.coerce(i, &ty))
                    .collect::<Result<_>>()?;
                Ok(BoundExpr::new(
                    Node::InList {
                        expr: Box::new(needle),
                        list,
                        negated: *negated,
                    },
                    Type::Bool,
                    *span,
                ))
            }
            Expr::Between {
                expr,
                low,
                high,
                negated,
                span,
            } => {
                let (x, lo, hi) = (self.bind(expr)?, self.bind(low)?, self.bind(high)?);
                let ty = supertype(&[&x, &lo, &hi])
                    .filter(Type::is_orderable)
                    .ok_or_else(|| {
                        invalid_at(
                            *span,
                            format!(
                                "No matching signature for operator BETWEEN for argument types: {}",
                                type_names(&[x.clone(), lo.clone(), hi.clone()])
                            ),
                        )
                    })?;
                Ok(BoundExpr::new(
                    Node::Between {
                        expr: Box::new(self.coerce(x, &ty)?),
                        low: Box::new(self.coerce(lo, &ty)?),
                        high: Box::new(self.coerce(hi, &ty)?),
                        negated: *negated,
                    },
                    Type::Bool,
                    *span,
                ))
            }
            Expr::Like {
                expr,
                pattern,
                negated,
                span,
            } => {
                let (x, p) = (self.bind(expr)?, self.bind(pattern)?);
                let ty = supertype(&[&x, &p])
                    .filter(|t| matches!(t, Type::String | Type::Bytes))
                    .ok_or_else(|| {
                        invalid_at(
                            *span,
                            format!(
                                "No matching signature for operator LIKE for argument types: {}",
                                type_names(&[x.clone(), p.clone()])
                            ),
                        )
                    })?;
                Ok(BoundExpr::new(
                    Node::Like {
                        expr: Box::new(self.coerce(x, &ty)?),
                        pattern: Box::new(self.coerce(p, &ty)?),
                        negated: *negated,
                    },
                    Type::Bool,
                    *span,
                ))
            }
            Expr::Case {
                operand,
                branches,
                else_expr,
                span,
            } => self.bind_case(operand.as_deref(), branches, else_expr.as_deref(), *span),
            Expr::Array {
                element_type,
                items,
                span,
            } => {
                let items = items
                    .iter()
                    .map(|i| self.bind(i))
                    .collect::<Result<Vec<_>>>()?;
                let elem = match element_type {
                    Some(t) => t.value_type(),
                    None => {
                        let refs: Vec<&BoundExpr> = items.iter().collect();
                        supertype(&refs).ok_or_else(|| {
                            invalid_at(
                                *span,
                                format!(
                                    "Array elements of types {{{}}} do not have a common supertype",
                                    type_names(&items)
                                ),
                            )
                        })?
                    }
                };
                if matches!(elem, Type::Array(_)) {
                    return Err(invalid_at(
                        *span,
                        "Cannot construct array with element type ARRAY",
                    ));
                }
                let items = items
                    .into_iter()
                    .map(|i| {
                        let span = i.span;
                        let ty = i.ty.clone();
                        self.coerce(i, &elem).map_err(|_| {
                            invalid_at(
                                span,
                                format!("Array element type {ty} does not coerce to {elem}"),
                            )
                        })
                    })
                    .collect::<Result<_>>()?;
                Ok(BoundExpr::new(
                    Node::Array(items),
                    Type::Array(Box::new(elem)),
                    *span,
                ))
            }
            Expr::Struct {
                fields,
                field_types,
                span,
            } => {
                let mut types = Vec::new();
                let mut items = Vec::new();
                for (i, (name, f)) in fields.iter().enumerate() {
                    let mut b = self.bind(f)?;
                    // A typed constructor coerces each value to its field's type.
                    if let Some(ty) = field_types.as_ref().and_then(|t| t.get(i)) {
                        let to = ty.value_type();
                        let found = b.type_name();
                        let value_span = b.span;
                        b = self.coerce(b, &to).map_err(|_| {
                            invalid_at(
                                value_span,
                                format!(
                                    "STRUCT field {} expects type {to} but the value has type {found}",
                                    i + 1
                                ),
                            )
                        })?;
                    }
                    types.push((
                        name.as_ref().map(|n| n.value.clone()).unwrap_or_default(),
                        b.ty.clone(),
                    ));
                    items.push(b);
                }
                Ok(BoundExpr::new(
                    Node::Struct(items),
                    Type::Struct(types),
                    *span,
                ))
            }
            Expr::Subscript {
                expr,
                index,
                mode,
                span,
            } => {
                let array = self.bind(expr)?;
                if array.ty == Type::Json {
                    return self.json_subscript(array, index, *mode, *span);
                }
                let elem = match &array.ty {
                    Type::Array(elem) => (**elem).clone(),
                    other => {
                        return Err(invalid_at(
                            *span,
                            format!("Element access is not supported for values of type {other}"),
                        ))
                    }
                };
                let index = self.bind(index)?;
                if !(index.ty == Type::Int64 || index.is_null_literal()) {
                    return Err(invalid_at(
                        index.span,
                        format!("Array position must be INT64, but was {}", index.ty),
                    ));
                }
                let index = self.coerce(index, &Type::Int64)?;
                Ok(BoundExpr::new(
                    Node::Subscript {
                        expr: Box::new(array),
                        index: Box::new(index),
                        mode: *mode,
                    },
                    elem,
                    *span,
                ))
            }
            Expr::Field { expr, field, span } => {
                let base = self.bind(expr)?;
                field_access(base, field, *span)
            }
            Expr::Interval { span, .. } => Err(invalid_at(
                *span,
                "INTERVAL is only allowed as an argument of date and timestamp functions",
            )),
            Expr::Star { span } => Err(invalid_at(*span, "* is only allowed in COUNT(*)")),
            Expr::Default { span } => Err(invalid_at(
                *span,
                "DEFAULT is only allowed as a value in INSERT and UPDATE",
            )),
            Expr::Subquery { query, span } => {
                let (id, ty) = self.plan_subquery(e, query, SubqueryKind::Scalar, *span)?;
                Ok(BoundExpr::new(
                    Node::Subquery {
                        id,
                        kind: SubqueryKind::Scalar,
                    },
                    ty,
                    *span,
                ))
            }
            Expr::Exists { query, span } => {
                let (id, _) = self.plan_subquery(e, query, SubqueryKind::Exists, *span)?;
                Ok(BoundExpr::new(
                    Node::Subquery {
                        id,
                        kind: SubqueryKind::Exists,
                    },
                    Type::Bool,
                    *span,
                ))
            }
            Expr::ArraySubquery { query, span } => {
                let (id, ty) = self.plan_subquery(e, query, SubqueryKind::Array, *span)?;
                Ok(BoundExpr::new(
                    Node::Subquery {
                        id,
                        kind: SubqueryKind::Array,
                    },
                    ty,
                    *span,
                ))
            }
            Expr::InSubquery {
                expr,
                query,
                negated,
                span,
            } => {
                let needle = self.bind(expr)?;
                let (id, ty) = self.plan_subquery(e, query, SubqueryKind::In, *span)?;
                let elem = match ty {
                    Type::Array(elem) => *elem,
                    other => other,
                };
                let needle = self.coerce_in_needle(needle, &elem, *span)?;
                Ok(BoundExpr::new(
                    Node::InSubquery {
                        expr: Box::new(needle),
                        id,
                        negated: *negated,
                    },
                    Type::Bool,
                    *span,
                ))
            }
            Expr::InUnnest {
                expr,
                array,
                negated,
                span,
            } => {
                let needle = self.bind(expr)?;
                let array = self.bind(array)?;
                let elem = match &array.ty {
                    _ if array.is_null_literal() => needle.ty.clone(),
                    Type::Array(elem) => (**elem).clone(),
                    other => {
                        return Err(invalid_at(
                            array.span,
                            format!(
                                "Second argument of IN UNNEST must be an array but was {other}"
                            ),
                        ))
                    }
                };
                let array = self.coerce(array, &Type::Array(Box::new(elem.clone())))?;
                let needle = self.coerce_in_needle(needle, &elem, *span)?;
                Ok(BoundExpr::new(
                    Node::InUnnest {
                        expr: Box::new(needle),
                        array: Box::new(array),
                        negated: *negated,
                    },
                    Type::Bool,
                    *span,
                ))
            }
            Expr::Extract {
                part,
                expr,
                time_zone,
                span,
            } => self.bind_extract(part, expr, time_zone.as_deref(), *span),
        }
    }

    /// An aggregate call: the scope says where its value is, or refuses.
    fn bind_aggregate_call(&self, call: &Expr, name: &Ident, span: Span) -> Result<BoundExpr> {
        match self.scope.bind_aggregate(call) {
            Some(Ok((slot, ty))) => Ok(BoundExpr::new(Node::Column(slot), ty, span)),
            Some(Err(e)) => Err(e.at(span)),
            None => Err(invalid_at(
                span,
                format!(
                    "Aggregate function {} not allowed {}",
                    name.value.to_ascii_uppercase(),
                    match self.scope.aggregate_context_name() {
                        Some(context) => format!("in {context}"),
                        None => "here".to_string(),
                    }
                ),
            )),
        }
    }

    fn plan_subquery(
        &self,
        e: &Expr,
        query: &ast::Query,
        kind: SubqueryKind,
        span: Span,
    ) -> Result<(usize, Type)> {
        match self.scope.bind_subquery(e, query, kind) {
            Some(result) => result.map_err(|err| err.at(span)),
            None => Err(invalid_at(span, "Subqueries are not allowed here")),
        }
    }

    /// Checks that `needle IN <candidates of type elem>` is comparable and
    /// coerces the needle to the common type.
    fn coerce_in_needle(&self, needle: BoundExpr, elem: &Type, span: Span) -> Result<BoundExpr> {
        let probe = BoundExpr::new(Node::Literal(Value::Null), elem.clone(), span);
        let ty = supertype(&[&needle, &probe])
            .filter(equality_comparable)
            .ok_or_else(|| {
                invalid_at(
                    span,
                    format!(
                        "No matching signature for operator IN for argument types: {}, {elem}",
                        needle.type_name()
                    ),
                )
            })?;
        // The candidates are not coerced; comparison across numeric types
        // is exact, so only the needle needs the common type when it is an
        // untyped literal.
        if needle.literal {
            self.coerce(needle, &ty)
        } else {
            Ok(needle)
        }
    }

    fn bind_extract(
        &self,
        part: &Ident,
        expr: &Expr,
        time_zone: Option<&Expr>,
        span: Span,
    ) -> Result<BoundExpr> {
        let inner = self.bind(expr)?;
        let part_name = part.value.to_ascii_uppercase();
        let date_part = crate::datetime::DatePart::parse(&part_name).ok_or_else(|| {
            invalid_at(
                part.span,
                format!(
                    "A valid date part name is required but found {}",
                    part.value
                ),
            )
        })?;
        let from_date = inner.ty == Type::Date && !inner.is_null_literal();
        if !(from_date
            || inner.ty == Type::Timestamp
            || inner.is_null_literal()
            || inner.is_string_literal())
        {
            return Err(invalid_at(
                span,
                format!(
                    "No matching signature for function EXTRACT for argument types: DATE_TIME_PART FROM {}",
                    inner.type_name()
                ),
            ));
        }
        if from_date && !date_part.applies_to_date() {
            return Err(invalid_at(
                span,
                format!("EXTRACT from DATE does not support the {part_name} date part"),
            ));
        }
        if from_date && time_zone.is_some() {
            return Err(invalid_at(
                span,
                "EXTRACT from DATE does not support AT TIME ZONE",
            ));
        }
        let inner = if from_date {
            inner
        } else {
            self.coerce(inner, &Type::Timestamp)?
        };
        let time_zone = match time_zone {
            Some(tz) => {
                let tz = self.bind(tz)?;
                if !(tz.ty == Type::String || tz.is_null_literal()) {
                    return Err(invalid_at(
                        tz.span,
                        format!("AT TIME ZONE expects a STRING, but got {}", tz.type_name()),
                    ));
                }
                Some(Box::new(self.coerce(tz, &Type::String)?))
            }
            None => None,
        };
        let ty = if date_part == crate::datetime::DatePart::Date {
            Type::Date
        } else {
            Type::Int64
        };
        Ok(BoundExpr::new(
            Node::Extract {
                part: date_part,
                expr: Box::new(inner),
                time_zone,
            },
            ty,
            span,
        ))
    }

    fn bind_literal(&self, value: &Literal, span: Span) -> Result<BoundExpr> {
        let lit = |v: Value, t: Type| Ok(BoundExpr::literal(v, t, span));
        match value {
            Literal::Null => lit(Value::Null, Type::Int64),
            Literal::Bool(b) => lit(Value::Bool(*b), Type::Bool),
            Literal::Integer(text) => match parse_i64(text) {
                Some(v) => lit(Value::Int64(v), Type::Int64),
                None => Err(invalid_at(span, format!("Invalid integer literal: {text}"))),
            },
            Literal::Float(text) => match text.parse::<f64>() {
                Ok(f) if f.is_finite() => lit(Value::Float64(f), Type::Float64),
                _ => Err(invalid_at(
                    span,
                    format!("Invalid floating point literal: {text}"),
                )),
            },
            Literal::String(s) => lit(Value::String(s.clone()), Type::String),
            Literal::Bytes(b) => lit(Value::Bytes(b.clone()), Type::Bytes),
            Literal::Typed(ty, text) => {
                let parsed = match ty {
                    Type::Date => Date::parse(text).map(Value::Date),
                    Type::Timestamp => {
                        Timestamp::parse(text, &TimeZone::LOS_ANGELES).map(Value::Timestamp)
                    }
                    Type::Numeric => Numeric::parse(text).map(Value::Numeric),
                    Type::Json => parse_json(text).map(Value::Json),
                    _ => {
                        return cast(Value::String(text.clone()), ty)
                            .map(|v| BoundExpr::literal(v, ty.clone(), span))
                            .map_err(|e| invalid_at(span, e.message().to_string()))
                    }
                };
                parsed
                    .map(|v| BoundExpr::literal(v, ty.clone(), span))
                    .map_err(|e| invalid_at(span, format!("Invalid {ty} literal: {e}")))
            }
        }
    }

    fn bind_unary(&self, op: UnaryOp, expr: &Expr, span: Span) -> Result<BoundExpr> {
        // `-9223372036854775808` is only in range with its sign.
        if let (
            UnaryOp::Neg,
            Expr::Literal {
                value: Literal::Integer(text),
                ..
            },
        ) = (op, expr)
        {
            let negative = format!("-{text}");
            return match parse_i64(&negative) {
                Some(v) => Ok(BoundExpr::literal(Value::Int64(v), Type::Int64, span)),
                None => Err(invalid_at(
                    span,
                    format!("Invalid integer literal: {negative}"),
                )),
            };
        }
        let inner = self.bind(expr)?;
        let no_match = |inner: &BoundExpr, sym: &str| {
            invalid_at(
                span,
                format!(
                    "No matching signature for operator {sym} for argument types: {}",
                    inner.type_name()
                ),
            )
        };
        match op {
            UnaryOp::Not => {
                if !(inner.ty == Type::Bool || inner.is_null_literal()) {
                    return Err(invalid_at(
                        span,
                        format!(
                            "No matching signature for operator NOT for argument types: {}. Supported signature: NOT (BOOL)",
                            inner.type_name()
                        ),
                    ));
                }
                let inner = self.expect_bool(inner, "NOT")?;
                Ok(BoundExpr::new(Node::Not(Box::new(inner)), Type::Bool, span))
            }
            UnaryOp::Neg | UnaryOp::Plus => {
                let sym = if op == UnaryOp::Neg { "-" } else { "+" };
                if !is_numeric(&inner.ty) {
                    return Err(no_match(&inner, sym));
                }
                if op == UnaryOp::Plus {
                    return Ok(inner);
                }
                let ty = inner.ty.clone();
                Ok(BoundExpr::new(Node::Neg(Box::new(inner)), ty, span))
            }
            UnaryOp::BitNot => {
                if !matches!(inner.ty, Type::Int64 | Type::Bytes) {
                    return Err(no_match(&inner, "~"));
                }
                let ty = inner.ty.clone();
                Ok(BoundExpr::new(Node::BitNot(Box::new(inner)), ty, span))
            }
        }
    }

    fn bind_binary(
        &self,
        op: BinaryOp,
        left: &Expr,
        right: &Expr,
        span: Span,
    ) -> Result<BoundExpr> {
        let (l, r) = (self.bind(left)?, self.bind(right)?);
        let sym = op.symbol();
        let no_match = || {
            invalid_at(
                span,
                format!(
                    "No matching signature for operator {sym} for argument types: {}, {}",
                    l.type_name(),
                    r.type_name()
                ),
            )
        };
        let both =
            |ty: &Type, l: BoundExpr, r: BoundExpr| -> Result<(Box<BoundExpr>, Box<BoundExpr>)> {
                Ok((Box::new(self.coerce(l, ty)?), Box::new(self.coerce(r, ty)?)))
            };
        match op {
            BinaryOp::And | BinaryOp::Or => {
                let fits = |e: &BoundExpr| e.ty == Type::Bool || e.is_null_literal();
                if !fits(&l) || !fits(&r) {
                    return Err(no_match());
                }
                let (a, b) = both(&Type::Bool, l, r)?;
                let node = if op == BinaryOp::And {
                    Node::And(a, b)
                } else {
                    Node::Or(a, b)
                };
                Ok(BoundExpr::new(node, Type::Bool, span))
            }
            BinaryOp::Eq
            | BinaryOp::NotEq
            | BinaryOp::Lt
            | BinaryOp::LtEq
            | BinaryOp::Gt
            | BinaryOp::GtEq => {
                let cmp = match op {
                    BinaryOp::Eq => CmpOp::Eq,
                    BinaryOp::NotEq => CmpOp::NotEq,
                    BinaryOp::Lt => CmpOp::Lt,
                    BinaryOp::LtEq => CmpOp::LtEq,
                    BinaryOp::Gt => CmpOp::Gt,
                    _ => CmpOp::GtEq,
                };
                let ordering = !matches!(cmp, CmpOp::Eq | CmpOp::NotEq);
                let ty = supertype(&[&l, &r])
                    .filter(|t| {
                        if ordering {
                            t.is_orderable()
                        } else {
                            equality_comparable(t)
                        }
                    })
                    .ok_or_else(no_match)?;
                let (a, b) = both(&ty, l, r)?;
                Ok(BoundExpr::new(Node::Compare(cmp, a, b), Type::Bool, span))
            }
            BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div => {
                let ty = supertype(&[&l, &r])
                    .filter(is_numeric)
                    .ok_or_else(no_match)?;
                // GoogleSQL computes in INT64, NUMERIC or FLOAT64; `/` on
                // integers gives FLOAT64.
                let ty = match (op, ty) {
                    (_, Type::Float32) => Type::Float64,
                    (BinaryOp::Div, Type::Int64) => Type::Float64,
                    (_, t) => t,
                };
                let arith = match op {
                    BinaryOp::Add => ArithOp::Add,
                    BinaryOp::Sub => ArithOp::Sub,
                    BinaryOp::Mul => ArithOp::Mul,
                    _ => ArithOp::Div,
                };
                let (a, b) = both(&ty, l, r)?;
                Ok(BoundExpr::new(Node::Arith(arith, a, b), ty, span))
            }
            BinaryOp::BitAnd | BinaryOp::BitOr | BinaryOp::BitXor => {
                let ty = supertype(&[&l, &r])
                    .filter(|t| matches!(t, Type::Int64 | Type::Bytes))
                    .ok_or_else(no_match)?;
                let arith = match op {
                    BinaryOp::BitAnd => ArithOp::BitAnd,
                    BinaryOp::BitOr => ArithOp::BitOr,
                    _ => ArithOp::BitXor,
                };
                let (a, b) = both(&ty, l, r)?;
                Ok(BoundExpr::new(Node::Arith(arith, a, b), ty, span))
            }
            BinaryOp::ShiftLeft | BinaryOp::ShiftRight => {
                let int = |e: &BoundExpr| e.ty == Type::Int64 || e.is_null_literal();
                if !int(&l) || !int(&r) {
                    return Err(no_match());
                }
                let arith = if op == BinaryOp::ShiftLeft {
                    ArithOp::ShiftLeft
                } else {
                    ArithOp::ShiftRight
                };
                let (a, b) = both(&Type::Int64, l, r)?;
                Ok(BoundExpr::new(Node::Arith(arith, a, b), Type::Int64, span))
            }
            BinaryOp::Concat => {
                let ty = supertype(&[&l, &r])
                    .filter(|t| matches!(t, Type::String | Type::Bytes | Type::Array(_)))
                    .ok_or_else(no_match)?;
                let (a, b) = both(&ty, l, r)?;
                Ok(BoundExpr::new(Node::Concat(a, b), ty, span))
            }
        }
    }

    fn bind_case(
        &self,
        operand: Option<&Expr>,
        branches: &[(Expr, Expr)],
        else_expr: Option<&Expr>,
        span: Span,
    ) -> Result<BoundExpr> {
        let operand = operand.map(|o| self.bind(o)).transpose()?;
        let mut whens = Vec::new();
        let mut thens = Vec::new();
        for (w, t) in branches {
            whens.push(self.bind(w)?);
            thens.push(self.bind(t)?);
        }
        let else_expr = else_expr.map(|e| self.bind(e)).transpose()?;

        let whens: Vec<BoundExpr> = match &operand {
            Some(subject) => {
                let all: Vec<&BoundExpr> = std::iter::once(subject).chain(whens.iter()).collect();
                let ty = supertype(&all).filter(equality_comparable).ok_or_else(|| {
                    invalid_at(
                        span,
                        format!(
                            "No matching signature for operator CASE for argument types: {}",
                            type_names(&[&[subject.clone()][..], &whens[..]].concat())
                        ),
                    )
                })?;
                whens
                    .into_iter()
                    .map(|w| self.coerce(w, &ty))
                    .collect::<Result<_>>()?
            }
            None => whens
                .into_iter()
                .map(|w| self.expect_bool(w, "CASE"))
                .collect::<Result<_>>()?,
        };
        let operand = match operand {
            Some(subject) => {
                let all: Vec<&BoundExpr> = std::iter::once(&subject).chain(whens.iter()).collect();
                let ty = supertype(&all).unwrap_or(Type::Int64);
                Some(Box::new(self.coerce(subject, &ty)?))
            }
            None => None,
        };
        let results: Vec<&BoundExpr> = thens.iter().chain(else_expr.iter()).collect();
        let ty = supertype(&results).ok_or_else(|| {
            invalid_at(
                span,
                format!(
                    "No matching signature for operator CASE; all THEN/ELSE arguments must be coercible to a common type but found: {}",
                    results.iter().map(|e| e.type_name()).collect::<Vec<_>>().join(", ")
                ),
            )
        })?;
        let branches = whens
            .into_iter()
            .zip(thens)
            .map(|(w, t)| Ok((w, self.coerce(t, &ty)?)))
            .collect::<Result<_>>()?;
        let else_expr = else_expr
            .map(|e| self.coerce(e, &ty).map(Box::new))
            .transpose()?;
        Ok(BoundExpr::new(
            Node::Case {
                operand,
                branches,
                else_expr,
            },
            ty,
            span,
        ))
    }

    fn bind_function(
        &self,
        name: &Ident,
        args: &[Expr],
        safe: bool,
        span: Span,
    ) -> Result<BoundExpr> {
        let upper = name.value.to_ascii_uppercase();
        // Date-part arguments: `DATE_TRUNC(d, MONTH)` and `INTERVAL n DAY`
        // reach the function as upper-case STRING arguments.
        let part_position = match upper.as_str() {
            "DATE_DIFF" | "TIMESTAMP_DIFF" => Some(2),
            "DATE_TRUNC" | "TIMESTAMP_TRUNC" => Some(1),
            _ => None,
        };
        let mut bound = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            match a {
                Expr::Sequence { name, span } => {
                    if self.scope.sequence_exists(&name.value) == Some(false) {
                        return Err(Error::NotFound {
                            message: format!("Sequence not found: {}", name.value),
                            span: Some(*span),
                        });
                    }
                    bound.push(BoundExpr::new(
                        Node::SequenceName(name.value.clone()),
                        Type::String,
                        *span,
                    ));
                }
                Expr::Interval { value, unit, span } => {
                    let n = self.bind(value)?;
                    if !(n.ty == Type::Int64 || n.is_null_literal()) {
                        return Err(invalid_at(
                            *span,
                            format!("INTERVAL value must be INT64, but was {}", n.type_name()),
                        ));
                    }
                    let unit_name = unit.value.to_ascii_uppercase();
                    if crate::datetime::DatePart::parse(&unit_name).is_none() {
                        return Err(invalid_at(
                            unit.span,
                            format!(
                                "A valid date part name is required but found {}",
                                unit.value
                            ),
                        ));
                    }
                    bound.push(self.coerce(n, &Type::Int64)?);
                    bound.push(BoundExpr::literal(
                        Value::String(unit_name),
                        Type::String,
                        unit.span,
                    ));
                }
                Expr::Column { path, span }
                    if part_position == Some(i)
                        && path.len() == 1
                        && crate::datetime::DatePart::parse(
                            &path[0].value.to_ascii_uppercase(),
                        )
                        .is_some() =>
                {
                    bound.push(BoundExpr::literal(
                        Value::String(path[0].value.to_ascii_uppercase()),
                        Type::String,
                        *span,
                    ));
                }
                a => bound.push(self.bind(a)?),
            }
        }
        let arg_types = type_names(&bound);
        let no_match = |supported: &str| {
            invalid_at(
                span,
                format!(
                    "No matching signature for function {upper} for argument types: {arg_types}. Supported signature{}: {supported}",
                    if supported.contains(';') { "s" } else { "" },
                ),
            )
        };
        if bound
            .iter()
            .any(|a| matches!(a.node, Node::SequenceName(_)))
            && functions::lookup(&upper).is_none_or(|f| {
                !f.signatures
                    .iter()
                    .any(|s| s.params.contains(&Param::Sequence))
            })
        {
            return Err(invalid_at(
                span,
                format!(
                    "SEQUENCE arguments are only allowed in sequence functions, not in {upper}"
                ),
            ));
        }
        match upper.as_str() {
            "IF" => {
                let [cond, then, otherwise]: [BoundExpr; 3] = bound
                    .clone()
                    .try_into()
                    .map_err(|_| no_match("IF(BOOL, ANY, ANY)"))?;
                if !(cond.ty == Type::Bool || cond.is_null_literal()) {
                    return Err(no_match("IF(BOOL, ANY, ANY)"));
                }
                let ty = supertype(&[&then, &otherwise])
                    .ok_or_else(|| no_match("IF(BOOL, ANY, ANY)"))?;
                return Ok(BoundExpr::new(
                    Node::Case {
                        operand: None,
                        branches: vec![(self.coerce(cond, &Type::Bool)?, self.coerce(then, &ty)?)],
                        else_expr: Some(Box::new(self.coerce(otherwise, &ty)?)),
                    },
                    ty,
                    span,
                ));
            }
            "IFNULL" | "COALESCE" | "NULLIF" => {
                let supported = match upper.as_str() {
                    "IFNULL" => "IFNULL(ANY, ANY)",
                    "NULLIF" => "NULLIF(ANY, ANY)",
                    _ => "COALESCE(ANY, ...)",
                };
                let arity_ok = match upper.as_str() {
                    "COALESCE" => !bound.is_empty(),
                    _ => bound.len() == 2,
                };
                let refs: Vec<&BoundExpr> = bound.iter().collect();
                let ty = supertype(&refs)
                    .filter(|t| arity_ok && (upper != "NULLIF" || equality_comparable(t)))
                    .ok_or_else(|| no_match(supported))?;
                let mut items = bound
                    .into_iter()
                    .map(|a| self.coerce(a, &ty))
                    .collect::<Result<Vec<_>>>()?;
                let node = if upper == "NULLIF" {
                    let b = items.pop().ok_or_else(|| no_match(supported))?;
                    let a = items.pop().ok_or_else(|| no_match(supported))?;
                    Node::NullIf(Box::new(a), Box::new(b))
                } else {
                    Node::Coalesce(items)
                };
                return Ok(BoundExpr::new(node, ty, span));
            }
            _ => {}
        }
        let function = functions::lookup(&upper)
            .ok_or_else(|| invalid_at(name.span, format!("Function not found: {}", name.value)))?;
        self.check_allowed(function, span)?;
        if let Some((check, described)) = function.generic {
            let types: Vec<Option<Type>> = bound
                .iter()
                .map(|a| (!a.is_null_literal()).then(|| a.ty.clone()))
                .collect();
            let (params, result) = check(&types).ok_or_else(|| no_match(described))?;
            let args = bound
                .into_iter()
                .zip(params)
                .map(|(a, t)| self.coerce(a, &t))
                .collect::<Result<Vec<_>>>()
                .map_err(|_| no_match(described))?;
            if matches!(function.name, "TO_JSON" | "TO_JSON_STRING") && args.len() == 1 {
                let arg = args.into_iter().next().ok_or_else(|| no_match(described))?;
                return Ok(BoundExpr::new(
                    Node::ToJson {
                        expr: Box::new(arg),
                        string: function.name == "TO_JSON_STRING",
                        safe,
                    },
                    result,
                    span,
                ));
            }
            return Ok(BoundExpr::new(
                Node::Call {
                    function,
                    args,
                    safe,
                },
                result,
                span,
            ));
        }
        let signature = [true, false]
            .iter()
            .find_map(|exact| {
                function
                    .signatures
                    .iter()
                    .find(|s| signature_fits(s, &bound, *exact))
            })
            .ok_or_else(|| no_match(&function.describe_signatures()))?;
        let args = bound
            .into_iter()
            .enumerate()
            .map(|(i, a)| {
                let param = signature
                    .params
                    .get(i)
                    .or(signature.params.last())
                    .cloned()
                    .unwrap_or(Param::Sequence);
                match param {
                    Param::Value(t) => self.coerce(a, &t.ty()),
                    Param::Sequence => Ok(a),
                }
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(BoundExpr::new(
            Node::Call {
                function,
                args,
                safe,
            },
            signature.result.ty(),
            span,
        ))
    }

    /// The JSON subscript `json[key]`: a member by STRING name or an array
    /// element by INT64 position (from 0); NULL when there is none.
    fn json_subscript(
        &self,
        json: BoundExpr,
        index: &Expr,
        mode: ast::SubscriptMode,
        span: Span,
    ) -> Result<BoundExpr> {
        if mode != ast::SubscriptMode::Bare {
            return Err(invalid_at(
                span,
                "Subscript access using OFFSET, ORDINAL or SAFE_ forms is not supported for values of type JSON",
            ));
        }
        let key = self.bind(index)?;
        let key = if key.is_null_literal() || key.ty == Type::Int64 {
            self.coerce(key, &Type::Int64)?
        } else if key.ty == Type::String {
            key
        } else {
            return Err(invalid_at(
                key.span,
                format!(
                    "JSON subscript must be STRING or INT64, but was {}",
                    key.type_name()
                ),
            ));
        };
        Ok(json_subscript_call(json, key, span))
    }

    fn check_allowed(&self, function: &Function, span: Span) -> Result<()> {
        let refused = (function.advances_sequence && !self.options.allow_sequence_functions)
            || (function.volatility == Volatility::PendingCommitTimestamp
                && !self.options.allow_pending_commit_timestamp);
        if refused {
            return Err(invalid_at(
                span,
                format!("{} is not allowed in this context", function.name),
            ));
        }
        Ok(())
    }

    fn expect_bool(&self, e: BoundExpr, context: &str) -> Result<BoundExpr> {
        if e.ty == Type::Bool || e.is_null_literal() {
            return self.coerce(e, &Type::Bool);
        }
        Err(invalid_at(
            e.span,
            format!(
                "{context} expects a BOOL argument, but got {}",
                e.type_name()
            ),
        ))
    }

    /// Makes `e` produce values of type `to` (which the caller has checked
    /// it may): untyped NULLs and literals are converted now, other
    /// expressions get an implicit cast node.
    fn coerce(&self, e: BoundExpr, to: &Type) -> Result<BoundExpr> {
        if e.ty == *to {
            return Ok(e);
        }
        let span = e.span;
        if e.is_null_literal() {
            return Ok(BoundExpr::literal(Value::Null, to.clone(), span));
        }
        // A STRUCT constructor coerces field by field, so its NULL and
        // literal fields take the target's types (`(NULL, NULL)` becomes a
        // `STRUCT<x FLOAT64, y FLOAT64>`); the result has the target's names.
        if let (Node::Struct(items), Type::Struct(fields)) = (&e.node, to) {
            if items.len() == fields.len() {
                let found = e.type_name();
                let coerced = items
                    .iter()
                    .zip(fields)
                    .map(|(item, (_, t))| self.coerce(item.clone(), t))
                    .collect::<Result<Vec<_>>>()
                    .map_err(|_| invalid_at(span, format!("Expected type {to}; found {found}")))?;
                return Ok(BoundExpr::new(Node::Struct(coerced), to.clone(), span));
            }
        }
        if e.literal {
            if let Node::Literal(v) = &e.node {
                let allowed = coercible(&e.ty, to)
                    || (e.is_string_literal() && matches!(to, Type::Date | Type::Timestamp));
                if allowed {
                    return cast(v.clone(), to)
                        .map(|v| BoundExpr::literal(v, to.clone(), span))
                        .map_err(|_| {
                            invalid_at(
                                span,
                                format!("Could not cast literal {} to type {to}", v.sql_literal()),
                            )
                        });
                }
            }
        }
        if coercible(&e.ty, to) {
            return Ok(BoundExpr::new(
                Node::Cast {
                    expr: Box::new(e),
                    safe: false,
                },
                to.clone(),
                span,
            ));
        }
        Err(invalid_at(
            span,
            format!("Expected type {to}; found {}", e.type_name()),
        ))
    }
}

/// Whether `args` fit `signature`: exactly (same types), or through
/// implicit coercion. Untyped NULL fits any value parameter either way.
fn signature_fits(signature: &functions::Signature, args: &[BoundExpr], exact: bool) -> bool {
    let n = signature.params.len();
    let arity = args.len() == n || (signature.variadic && n > 0 && args.len() >= n);
    arity
        && args.iter().enumerate().all(|(i, a)| {
            let param = signature.params.get(i).or(signature.params.last());
            let is_sequence = matches!(a.node, Node::SequenceName(_));
            match param {
                Some(Param::Sequence) => is_sequence,
                Some(Param::Value(t)) if !is_sequence => {
                    let t = &t.ty();
                    a.is_null_literal()
                        || a.ty == *t
                        || (!exact
                            && (coercible(&a.ty, t)
                                || (a.is_string_literal()
                                    && matches!(t, Type::Date | Type::Timestamp))))
                }
                _ => false,
            }
        })
}
