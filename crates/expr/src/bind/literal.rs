//! Literals: typed at bind time, so a bad literal (`DATE '2020-13-01'`,
//! an out-of-range integer) is reported with its position before any row
//! is read.

use rowtree_parser::ast::{Literal, Span};
use rowtree_types::{parse_json, Date, Numeric, TimeZone, Timestamp, Type, Value};

use super::{invalid_at, Binder};
use crate::bound::BoundExpr;
use crate::cast::{cast, parse_i64};
use crate::Result;

impl Binder<'_> {
    pub(super) fn bind_literal(&self, value: &Literal, span: Span) -> Result<BoundExpr> {
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
                    Type::Numeric if self.options.exact_numeric => {
                        return crate::cast::exact_numeric(text)
                            .map(|n| BoundExpr::literal(Value::Numeric(n), Type::Numeric, span))
                            .map_err(|e| invalid_at(span, e.to_string()))
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
}
