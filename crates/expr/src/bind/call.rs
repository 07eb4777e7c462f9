//! Function calls: scalar functions from the registry
//! ([`crate::functions`]), aggregates (handed to the scope), `EXTRACT`, and
//! the arguments only some functions take (`SEQUENCE s`, `INTERVAL n unit`,
//! a bare date-part name).
//!
//! A registry function's signature is chosen in two passes: first one the
//! arguments fit exactly, then one they fit through implicit coercion, so
//! `ABS(1)` is `INT64` and `MOD(1, 1.5)` is `NUMERIC`.

use rowtree_parser::ast::{self, Expr, Ident, Span};
use rowtree_types::{Type, Value};

use super::coerce::type_names;
use super::scope::is_aggregate_function;
use super::{invalid_at, Binder};
use crate::bound::{BoundExpr, Node};
use crate::cast::{coercible, string_literal_coerces_to};
use crate::datetime::DatePart;
use crate::functions::{self, Function, Param, Volatility};
use crate::{Error, Result};

impl Binder<'_> {
    /// A call `name(args)` (`e` is the whole node): an aggregate, or a scalar
    /// function, which takes no aggregate modifiers.
    // The fields of `Expr::Function`, plus the node itself for the scope.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn bind_call(
        &self,
        e: &Expr,
        name: &Ident,
        args: &[Expr],
        safe: bool,
        distinct: bool,
        modifiers: Option<&ast::CallModifiers>,
        span: Span,
    ) -> Result<BoundExpr> {
        if modifiers.is_some_and(|m| m.over.is_some()) {
            return Err(invalid_at(
                span,
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
                span,
                "Analytic function IS_FIRST cannot be called without an OVER clause",
            ));
        }
        if is_aggregate_function(&name.value) {
            return self.bind_aggregate_call(e, name, span);
        }
        if distinct || modifiers.is_some() {
            return Err(invalid_at(
                span,
                format!(
                    "Non-aggregate function {} does not support DISTINCT, IGNORE NULLS, ORDER BY or LIMIT",
                    name.value.to_uppercase()
                ),
            ));
        }
        if args.iter().any(|a| matches!(a, Expr::Star { .. })) {
            return Err(invalid_at(
                span,
                format!(
                    "* is only allowed in COUNT(*), not in {}",
                    name.value.to_uppercase()
                ),
            ));
        }
        self.bind_function(name, args, safe, span)
    }

    /// An aggregate call: the scope says where its value is, or refuses.
    pub(super) fn bind_aggregate_call(
        &self,
        call: &Expr,
        name: &Ident,
        span: Span,
    ) -> Result<BoundExpr> {
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

    pub(super) fn bind_function(
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
                    if DatePart::parse(&unit_name).is_none() {
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
                        && DatePart::parse(&path[0].value.to_ascii_uppercase()).is_some() =>
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
            "IF" => return self.bind_if(bound, &no_match, span),
            "IFNULL" | "COALESCE" | "NULLIF" => {
                return self.bind_coalesce(&upper, bound, &no_match, span)
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

    pub(super) fn check_allowed(&self, function: &Function, span: Span) -> Result<()> {
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

    pub(super) fn bind_extract(
        &self,
        part: &Ident,
        expr: &Expr,
        time_zone: Option<&Expr>,
        span: Span,
    ) -> Result<BoundExpr> {
        let inner = self.bind(expr)?;
        let part_name = part.value.to_ascii_uppercase();
        let date_part = DatePart::parse(&part_name).ok_or_else(|| {
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
        let ty = if date_part == DatePart::Date {
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
                                || (a.is_string_literal() && string_literal_coerces_to(t))))
                }
                _ => false,
            }
        })
}
