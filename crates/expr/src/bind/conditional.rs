//! Conditional expressions: `CASE` and the functions that must not
//! evaluate all their arguments or are generic over their type (`IF`,
//! `IFNULL`, `COALESCE`, `NULLIF`), which are therefore special forms here
//! rather than entries of the function registry.

use rowtree_parser::ast::{Expr, Span};
use rowtree_types::Type;

use super::coerce::{comparison_supertype, equality_comparable, supertype, type_names};
use super::{invalid_at, Binder};
use crate::bound::{BoundExpr, Node};
use crate::{Error, Result};

impl Binder<'_> {
    pub(super) fn bind_case(
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
                let ty = comparison_supertype(&all)
                    .filter(equality_comparable)
                    .ok_or_else(|| {
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

    /// `IF(cond, then, otherwise)`: a CASE with one branch. `no_match`
    /// reports the call's argument types against a signature.
    pub(super) fn bind_if(
        &self,
        bound: Vec<BoundExpr>,
        no_match: &dyn Fn(&str) -> Error,
        span: Span,
    ) -> Result<BoundExpr> {
        let [cond, then, otherwise]: [BoundExpr; 3] = bound
            .try_into()
            .map_err(|_| no_match("IF(BOOL, ANY, ANY)"))?;
        if !(cond.ty == Type::Bool || cond.is_null_literal()) {
            return Err(no_match("IF(BOOL, ANY, ANY)"));
        }
        let ty = supertype(&[&then, &otherwise]).ok_or_else(|| no_match("IF(BOOL, ANY, ANY)"))?;
        Ok(BoundExpr::new(
            Node::Case {
                operand: None,
                branches: vec![(self.coerce(cond, &Type::Bool)?, self.coerce(then, &ty)?)],
                else_expr: Some(Box::new(self.coerce(otherwise, &ty)?)),
            },
            ty,
            span,
        ))
    }

    /// `IFNULL(a, b)`, `COALESCE(a, ...)` and `NULLIF(a, b)` (`upper` is the
    /// name), on the common supertype of the arguments.
    pub(super) fn bind_coalesce(
        &self,
        upper: &str,
        bound: Vec<BoundExpr>,
        no_match: &dyn Fn(&str) -> Error,
        span: Span,
    ) -> Result<BoundExpr> {
        let supported = match upper {
            "IFNULL" => "IFNULL(ANY, ANY)",
            "NULLIF" => "NULLIF(ANY, ANY)",
            _ => "COALESCE(ANY, ...)",
        };
        let arity_ok = match upper {
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
        Ok(BoundExpr::new(node, ty, span))
    }
}
