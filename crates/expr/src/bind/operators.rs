//! Operator typing: unary and binary operators, `IS`, `BETWEEN` and
//! `LIKE`. Each picks the one operand type its signature needs (the common
//! supertype of the operands, see [`supertype`]) and coerces both sides to
//! it, or reports `No matching signature for operator ...` with the types
//! found.

use rowtree_parser::ast::{BinaryOp, Expr, IsTest, Literal, Span, UnaryOp};
use rowtree_types::{Type, Value};

use super::coerce::{comparison_supertype, equality_comparable, is_numeric, supertype, type_names};
use super::{invalid_at, Binder};
use crate::bound::{BoundExpr, Node};
use crate::cast::parse_i64;
use crate::operator::{ArithOp, CmpOp};
use crate::Result;

impl Binder<'_> {
    pub(super) fn bind_unary(&self, op: UnaryOp, expr: &Expr, span: Span) -> Result<BoundExpr> {
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
        // `-1.5` is a FLOAT64 literal too (it may stand for a NUMERIC).
        if let (
            UnaryOp::Neg,
            Expr::Literal {
                value: Literal::Float(_),
                ..
            },
        ) = (op, expr)
        {
            let inner = self.bind(expr)?;
            if let Node::Literal(Value::Float64(f)) = inner.node {
                return Ok(BoundExpr::literal(Value::Float64(-f), Type::Float64, span));
            }
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

    pub(super) fn bind_binary(
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
                let ty = comparison_supertype(&[&l, &r])
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
            BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::IntDiv => {
                // Where NUMERIC is exact (the PostgreSQL dialect, whose
                // decimal literals are numerics), a FLOAT64 literal meeting
                // a NUMERIC computes in NUMERIC, as it compares.
                let ty = if self.options.exact_numeric {
                    comparison_supertype(&[&l, &r])
                } else {
                    supertype(&[&l, &r])
                }
                .filter(is_numeric)
                .ok_or_else(no_match)?;
                // PostgreSQL's `/` on integers truncates: the engine's DIV.
                if op == BinaryOp::IntDiv && ty == Type::Int64 {
                    let (a, b) = both(&ty, l, r)?;
                    let function =
                        crate::functions::lookup("DIV").expect("DIV is a registered function");
                    return Ok(BoundExpr::new(
                        Node::Call {
                            function,
                            args: vec![*a, *b],
                            safe: false,
                        },
                        Type::Int64,
                        span,
                    ));
                }
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

    /// `expr IS [NOT] NULL | TRUE | FALSE`.
    pub(super) fn bind_is(
        &self,
        expr: &Expr,
        test: IsTest,
        negated: bool,
        span: Span,
    ) -> Result<BoundExpr> {
        let inner = self.bind(expr)?;
        let node = match test {
            IsTest::Null => Node::IsNull(Box::new(inner)),
            IsTest::True | IsTest::False => {
                let inner = self.expect_bool(inner, "IS")?;
                Node::IsBool(Box::new(inner), test == IsTest::True)
            }
        };
        let is = BoundExpr::new(node, Type::Bool, span);
        Ok(if negated {
            BoundExpr::new(Node::Not(Box::new(is)), Type::Bool, span)
        } else {
            is
        })
    }

    /// `expr [NOT] BETWEEN low AND high`, on an orderable common type.
    pub(super) fn bind_between(
        &self,
        expr: &Expr,
        low: &Expr,
        high: &Expr,
        negated: bool,
        span: Span,
    ) -> Result<BoundExpr> {
        let (x, lo, hi) = (self.bind(expr)?, self.bind(low)?, self.bind(high)?);
        let ty = comparison_supertype(&[&x, &lo, &hi])
            .filter(Type::is_orderable)
            .ok_or_else(|| {
                invalid_at(
                    span,
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
                negated,
            },
            Type::Bool,
            span,
        ))
    }

    /// `expr [NOT] LIKE pattern`, on STRING or BYTES.
    pub(super) fn bind_like(
        &self,
        expr: &Expr,
        pattern: &Expr,
        negated: bool,
        span: Span,
    ) -> Result<BoundExpr> {
        let (x, p) = (self.bind(expr)?, self.bind(pattern)?);
        let ty = supertype(&[&x, &p])
            .filter(|t| matches!(t, Type::String | Type::Bytes))
            .ok_or_else(|| {
                invalid_at(
                    span,
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
                negated,
            },
            Type::Bool,
            span,
        ))
    }
}
