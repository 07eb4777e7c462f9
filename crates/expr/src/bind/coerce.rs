//! Types and coercions: the common supertype of operands that must agree,
//! which types compare for equality, and [`Binder::coerce`], which makes an
//! expression produce a given type (folding literals now, inserting an
//! implicit cast node otherwise). Also `CAST(e AS T)`, which checks the same
//! rules explicitly.

use rowtree_parser::ast::{DataType, Expr, Span};
use rowtree_types::{ProtoBundle, Type, Value};

use super::{invalid_at, Binder};
use crate::bound::{BoundExpr, Node};
use crate::cast::{cast, castable, coercible, string_literal_coerces_to};
use crate::Result;

impl BoundExpr {
    pub(super) fn literal(value: Value, ty: Type, span: Span) -> BoundExpr {
        BoundExpr {
            node: Node::Literal(value),
            ty,
            span,
            literal: true,
            depth: 1,
        }
    }

    pub(super) fn is_null_literal(&self) -> bool {
        self.literal && matches!(self.node, Node::Literal(Value::Null))
    }

    pub(super) fn is_string_literal(&self) -> bool {
        self.literal && matches!(self.node, Node::Literal(Value::String(_)))
    }

    /// A FLOAT64 literal as written (`1.5`, `-2e3`): GoogleSQL lets it stand
    /// for a NUMERIC where one is expected. FLOAT64 columns, parameters and
    /// other expressions do not coerce to NUMERIC.
    pub(super) fn is_float_literal(&self) -> bool {
        self.literal && matches!(self.node, Node::Literal(Value::Float64(_)))
    }

    /// This value as it is assigned to a column of type `to` (INSERT
    /// VALUES, UPDATE SET): a FLOAT64 literal going into a NUMERIC column
    /// becomes a NUMERIC literal now (rounded to 9 decimals, as
    /// `CAST(1.5 AS NUMERIC)` is), so `VALUES (15.7563)` writes 15.7563.
    /// Anything else is returned as it is, for the writer's usual
    /// assignment rules to check.
    pub fn coerce_literal_for_assignment(self, to: &Type) -> Result<BoundExpr> {
        self.coerce_literal_for_assignment_with(to, None, false)
    }

    /// [`BoundExpr::coerce_literal_for_assignment`], where a string literal
    /// going into an ENUM column also stands for the enum value of that
    /// name (GoogleSQL's literal coercion), looked up in `protos`; with
    /// `exact_numeric` (see [`crate::BindOptions::exact_numeric`]) a FLOAT64
    /// literal NUMERIC cannot hold without rounding is an error.
    pub fn coerce_literal_for_assignment_with(
        self,
        to: &Type,
        protos: Option<&ProtoBundle>,
        exact_numeric: bool,
    ) -> Result<BoundExpr> {
        if *to == Type::Numeric && self.is_float_literal() {
            return literal_to_numeric(&self, exact_numeric);
        }
        if let Some(e) = enum_literal(&self, to, protos) {
            return e;
        }
        Ok(self)
    }

    /// The type as error messages show it.
    pub(super) fn type_name(&self) -> String {
        if self.is_null_literal() {
            "NULL".into()
        } else if matches!(self.node, Node::SequenceName(_)) {
            "SEQUENCE".into()
        } else {
            self.ty.to_string()
        }
    }
}

pub(super) fn type_names(args: &[BoundExpr]) -> String {
    args.iter()
        .map(BoundExpr::type_name)
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn is_numeric(t: &Type) -> bool {
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
/// NULLs take any type; string literals yield to a `DATE`/`TIMESTAMP`/`UUID`.
pub(super) fn supertype(exprs: &[&BoundExpr]) -> Option<Type> {
    supertype_with(exprs, false)
}

/// The type operands of a comparison (`=`, `<`, `BETWEEN`, `IN`, a CASE
/// operand) meet in: [`supertype`], except that FLOAT64 literals also
/// yield to a NUMERIC operand, as GoogleSQL's literal coercion allows
/// (`n = 1.5` compares NUMERICs, exactly, rather than making `n` a FLOAT64).
pub(super) fn comparison_supertype(exprs: &[&BoundExpr]) -> Option<Type> {
    supertype_with(exprs, true)
}

fn supertype_with(exprs: &[&BoundExpr], float_literals_yield: bool) -> Option<Type> {
    // String literals also stand for enum values, by name.
    let parses_strings = exprs.iter().any(|e| {
        !e.is_string_literal()
            && (string_literal_coerces_to(&e.ty) || matches!(e.ty, Type::Enum(_)))
    });
    let to_numeric = float_literals_yield
        && exprs
            .iter()
            .any(|e| e.ty == Type::Numeric && !e.is_null_literal());
    let mut result: Option<Type> = None;
    for e in exprs {
        if e.is_null_literal()
            || (parses_strings && e.is_string_literal())
            || (to_numeric && e.is_float_literal())
        {
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

/// A string literal where an ENUM is expected (`Genre = 'ROCK'`, `VALUES
/// ('ROCK')`) as that enum's value of the name; `None` when `e` is not a
/// string literal or `to` not an ENUM.
fn enum_literal(
    e: &BoundExpr,
    to: &Type,
    protos: Option<&ProtoBundle>,
) -> Option<Result<BoundExpr>> {
    let (Type::Enum(name), Node::Literal(Value::String(text))) = (to, &e.node) else {
        return None;
    };
    if !e.literal {
        return None;
    }
    Some(
        protos
            .and_then(|p| p.enum_number(name, text))
            .map(|n| BoundExpr::literal(Value::Int64(n), to.clone(), e.span))
            .ok_or_else(|| {
                invalid_at(
                    e.span,
                    format!(
                        "Could not cast literal {} to type {to}",
                        Value::String(text.clone()).sql_literal()
                    ),
                )
            }),
    )
}

/// A FLOAT64 literal as a NUMERIC literal (GoogleSQL's literal coercion,
/// with CAST's rounding), or an error at the literal if it is out of range.
/// With `exact` (see [`crate::BindOptions::exact_numeric`]) a literal
/// NUMERIC cannot hold without rounding is an error too.
fn literal_to_numeric(e: &BoundExpr, exact: bool) -> Result<BoundExpr> {
    let Node::Literal(v) = &e.node else {
        unreachable!("only called on literals")
    };
    if exact {
        if let Value::Float64(f) = v {
            return crate::cast::exact_numeric(&f.to_string())
                .map(|n| BoundExpr::literal(Value::Numeric(n), Type::Numeric, e.span))
                .map_err(|err| invalid_at(e.span, err.to_string()));
        }
    }
    cast(v.clone(), &Type::Numeric)
        .map(|n| BoundExpr::literal(n, Type::Numeric, e.span))
        .map_err(|_| {
            invalid_at(
                e.span,
                format!("Could not cast literal {} to type NUMERIC", v.sql_literal()),
            )
        })
}

/// Whether `=` is defined on the type (not on JSON or ARRAY, as in Spanner).
pub(super) fn equality_comparable(t: &Type) -> bool {
    match t {
        Type::Json | Type::Array(_) | Type::Proto(_) => false,
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

impl Binder<'_> {
    /// A CAST target naming a proto bundle type (`CAST(b AS a.b.C)`): the
    /// parser cannot tell messages from enums, the descriptors can.
    fn resolve_proto_type(&self, ty: Type, span: Span) -> Result<Type> {
        match ty {
            Type::Proto(name) | Type::Enum(name) => self
                .options
                .protos
                .as_ref()
                .and_then(|p| p.type_of(&name))
                .ok_or_else(|| invalid_at(span, format!("Type not found: {name}"))),
            Type::Array(inner) => Ok(Type::Array(Box::new(
                self.resolve_proto_type(*inner, span)?,
            ))),
            ty => Ok(ty),
        }
    }

    /// The casts between an ENUM and STRING (its value names) or INT64 (a
    /// number, which must be one of the enum's), and from BYTES to a PROTO
    /// (which must parse as the message), which need the descriptors;
    /// `None` for every other cast.
    fn bind_enum_cast(
        &self,
        inner: &BoundExpr,
        to: &Type,
        safe: bool,
        span: Span,
    ) -> Result<Option<BoundExpr>> {
        // Arrays cast element by element (the operation maps over them).
        let (from, to_element) = match (&inner.ty, to) {
            (Type::Array(a), Type::Array(b)) => (a.as_ref(), b.as_ref()),
            (a, b) => (a, b),
        };
        let (name, op) = match (from, to_element) {
            (Type::Enum(a), Type::Enum(b)) if a == b => return Ok(None),
            (Type::Enum(name), Type::String) => (name, 0),
            (Type::String, Type::Enum(name)) => (name, 1),
            (Type::Int64, Type::Enum(name)) => (name, 2),
            (Type::Bytes, Type::Proto(name)) => (name, 3),
            _ => return Ok(None),
        };
        if inner.is_null_literal() {
            return Ok(None);
        }
        if op == 3 {
            // Bytes become a message only if they parse as one.
            let Some(m) = self.options.protos.as_ref().and_then(|p| p.message(name)) else {
                return Err(invalid_at(span, format!("Type not found: {name}")));
            };
            return Ok(Some(BoundExpr::new(
                Node::Proto {
                    op: crate::bound::ProtoOp::CheckMessage(m),
                    expr: Box::new(inner.clone()),
                    safe,
                },
                to.clone(),
                span,
            )));
        }
        let Some(e) = self
            .options
            .protos
            .as_ref()
            .and_then(|p| p.pool().get_enum_by_name(name))
        else {
            return Err(invalid_at(span, format!("Type not found: {name}")));
        };
        let op = match op {
            0 => crate::bound::ProtoOp::EnumName(e),
            1 => crate::bound::ProtoOp::EnumFromName(e),
            _ => crate::bound::ProtoOp::EnumFromNumber(e),
        };
        Ok(Some(BoundExpr::new(
            Node::Proto {
                op,
                expr: Box::new(inner.clone()),
                safe,
            },
            to.clone(),
            span,
        )))
    }

    /// `CAST(expr AS to)` and `SAFE_CAST`.
    pub(super) fn bind_cast(
        &self,
        expr: &Expr,
        to: &DataType,
        safe: bool,
        span: Span,
    ) -> Result<BoundExpr> {
        let inner = self.bind(expr)?;
        let to = self.resolve_proto_type(to.value_type(), span)?;
        if let Some(cast) = self.bind_enum_cast(&inner, &to, safe, span)? {
            return Ok(cast);
        }
        if !castable_expr(&inner, &to) {
            return Err(invalid_at(
                span,
                format!("Invalid cast from {} to {to}", inner.ty),
            ));
        }
        if self.options.exact_numeric
            && to == Type::Numeric
            && matches!(inner.ty, Type::String | Type::Float64)
        {
            return Ok(BoundExpr::new(
                Node::Call {
                    function: &crate::functions::EXACT_NUMERIC_CAST,
                    args: vec![inner],
                    safe,
                },
                to,
                span,
            ));
        }
        Ok(BoundExpr::new(
            Node::Cast {
                expr: Box::new(inner),
                safe,
            },
            to,
            span,
        ))
    }

    pub(super) fn expect_bool(&self, e: BoundExpr, context: &str) -> Result<BoundExpr> {
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
    pub(super) fn coerce(&self, e: BoundExpr, to: &Type) -> Result<BoundExpr> {
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
        if *to == Type::Numeric && e.is_float_literal() {
            return literal_to_numeric(&e, self.options.exact_numeric);
        }
        if let Some(literal) = enum_literal(&e, to, self.options.protos.as_deref()) {
            return literal;
        }
        if e.literal {
            if let Node::Literal(v) = &e.node {
                let allowed = coercible(&e.ty, to)
                    || (e.is_string_literal() && string_literal_coerces_to(to));
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
