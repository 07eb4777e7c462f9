//! Key predicates: what a conjunct says about one column.
//!
//! `col = c`, `col < c` (and the other comparisons, either way round),
//! `col IN (...)`, `col BETWEEN a AND b` and `col IS [NOT] NULL`, where the
//! constants are known at plan time and the column's type can be part of a
//! key; and `col IN UNNEST(array)` where the array does not depend on the
//! row (it is bound here and evaluated when the statement runs). The planner's key-range extraction ([`crate::keyrange`]) combines
//! these per key column.

use rowtree_parser::ast::{BinaryOp, Expr, IsTest};
use rowtree_types::{Type, Value};

use crate::expr_tree::{self, column_paths, has_aggregate, has_subquery};
use crate::keyrange::{array_gives_keys, key_value, ArrayKeys, KeyPredicate};
use crate::scope::{Resolved, RowScope};

use super::{Binder, KeyCall, KeyShape};

impl Binder<'_> {
    /// What a conjunct says about one key-able column of a scan, if
    /// anything, and when that was computed from parameter values (and the
    /// binder records them), the index of the [`KeyCall`] recorded for it
    /// (the conjunct's `key_site`).
    pub fn key_predicate(
        &self,
        c: &Expr,
        scope: &RowScope,
    ) -> (Option<KeyPredicate>, Option<usize>) {
        let reads = self.param_reads.get();
        let key = self.key_predicate_of(c, scope);
        if !self.record_keys.get() || self.param_reads.get() == reads {
            return (key, None);
        }
        let mut calls = self.key_calls.borrow_mut();
        calls.push(KeyCall {
            conjunct: c.clone(),
            scope: scope.clone(),
            shape: KeyShape::of(&key),
        });
        (key, Some(calls.len() - 1))
    }

    /// What a conjunct says about one key-able column of a scan, if anything.
    pub(crate) fn key_predicate_of(&self, c: &Expr, scope: &RowScope) -> Option<KeyPredicate> {
        let column = |e: &Expr| -> Option<(usize, Type)> {
            let Expr::Column { path, .. } = e else {
                return None;
            };
            match scope.resolve(path).ok()? {
                Resolved::Slot(s, ty) => Some((scope.columns[s].origin?.1, ty)),
                Resolved::NotFound => None,
            }
        };
        let konst = |e: &Expr, ty: &Type| -> Option<Value> { key_value(self.constant(e)?, ty) };
        match c {
            Expr::Binary {
                op, left, right, ..
            } => {
                let (col, ty, other, flipped) = if let Some((c, t)) = column(left) {
                    (c, t, &**right, false)
                } else if let Some((c, t)) = column(right) {
                    (c, t, &**left, true)
                } else {
                    return None;
                };
                if !ty.is_key_type() {
                    return None;
                }
                let v = konst(other, &ty)?;
                if v.is_null() {
                    return None;
                }
                use BinaryOp::*;
                let op = match (op, flipped) {
                    (Eq, _) => Eq,
                    (Lt, false) | (Gt, true) => Lt,
                    (LtEq, false) | (GtEq, true) => LtEq,
                    (Gt, false) | (Lt, true) => Gt,
                    (GtEq, false) | (LtEq, true) => GtEq,
                    _ => return None,
                };
                Some(match op {
                    Eq => KeyPredicate::Eq(col, v),
                    Lt => KeyPredicate::Upper(col, v, false),
                    LtEq => KeyPredicate::Upper(col, v, true),
                    Gt => KeyPredicate::Lower(col, v, false),
                    _ => KeyPredicate::Lower(col, v, true),
                })
            }
            Expr::InList {
                expr,
                list,
                negated: false,
                ..
            } => {
                let (col, ty) = column(expr)?;
                if !ty.is_key_type() {
                    return None;
                }
                let mut values = Vec::new();
                for e in list {
                    let v = konst(e, &ty)?;
                    if !v.is_null() {
                        values.push(v);
                    }
                }
                Some(KeyPredicate::In(col, values))
            }
            Expr::InUnnest {
                expr,
                array,
                negated: false,
                ..
            } => {
                let (col, ty) = column(expr)?;
                let mut paths = Vec::new();
                column_paths(array, &mut paths);
                if !paths.is_empty() || has_subquery(array) || has_aggregate(array) {
                    return None;
                }
                let bound = rowtree_expr::bind(array, &(), &self.options).ok()?;
                if !bound.is_row_independent() {
                    return None;
                }
                let Type::Array(elem) = bound.ty() else {
                    return None;
                };
                if !array_gives_keys(elem, &ty) {
                    return None;
                }
                Some(KeyPredicate::InArray(
                    col,
                    ArrayKeys {
                        expr: bound,
                        ty,
                        text: format!("UNNEST({})", expr_tree::text(array)),
                    },
                ))
            }
            Expr::Between {
                expr,
                low,
                high,
                negated: false,
                ..
            } => {
                let (col, ty) = column(expr)?;
                if !ty.is_key_type() {
                    return None;
                }
                let (lo, hi) = (konst(low, &ty)?, konst(high, &ty)?);
                if lo.is_null() || hi.is_null() {
                    return None;
                }
                Some(KeyPredicate::Between(col, lo, hi))
            }
            Expr::Is {
                expr,
                test: IsTest::Null,
                negated,
                ..
            } => {
                let (col, ty) = column(expr)?;
                if !ty.is_key_type() {
                    return None;
                }
                Some(if *negated {
                    KeyPredicate::NotNull(col)
                } else {
                    KeyPredicate::Eq(col, Value::Null)
                })
            }
            _ => None,
        }
    }
}
