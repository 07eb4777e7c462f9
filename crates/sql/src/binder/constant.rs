//! Constants at plan time.
//!
//! LIMIT and OFFSET counts and the bounds of key predicates must be known
//! before the plan runs: they are literals, parameters or deterministic
//! functions of them, evaluated here with a context that has parameters
//! but no clock, sequences or commit timestamp.

use std::cell::Cell;
use std::collections::HashMap;

use rowtree_expr::EvalContext;
use rowtree_parser::ast::Expr;
use rowtree_types::{Timestamp, Value};

use crate::error::{Error, Result};
use crate::expr_tree::{column_paths, has_aggregate, has_subquery};

use super::Binder;

impl Binder<'_> {
    /// The value of a constant expression (literals, parameters, functions of
    /// them); `None` when it reads columns or is not deterministic.
    pub fn constant(&self, e: &Expr) -> Option<Value> {
        let mut paths = Vec::new();
        column_paths(e, &mut paths);
        if !paths.is_empty() || has_subquery(e) || has_aggregate(e) {
            return None;
        }
        let bound = rowtree_expr::bind(e, &(), &self.options).ok()?;
        if !bound.is_deterministic() {
            return None;
        }
        bound
            .eval(
                &[],
                &mut ConstContext {
                    params: &self.param_values,
                    reads: &self.param_reads,
                },
            )
            .ok()
    }

    /// LIMIT / OFFSET: an INT64 literal or parameter, not negative.
    pub(super) fn count(&self, e: &Expr, what: &str) -> Result<u64> {
        let ok = matches!(e, Expr::Literal { .. } | Expr::Parameter { .. })
            || matches!(e, Expr::Cast { expr, .. } if matches!(**expr, Expr::Literal{..} | Expr::Parameter{..}));
        let reads = self.param_reads.get();
        let value = if ok { self.constant(e) } else { None };
        if self.param_reads.get() != reads {
            // The plan holds the count: it is not the same for other values.
            self.value_dependent.set(true);
        }
        match value {
            Some(Value::Int64(n)) if n >= 0 => Ok(n as u64),
            Some(Value::Int64(_)) => Err(Error::invalid_at(
                e.span(),
                format!("{what} expects a non-negative integer literal or parameter"),
            )),
            Some(Value::Null) => Err(Error::invalid_at(
                e.span(),
                format!("{what} must not be null"),
            )),
            _ => Err(Error::invalid_at(
                e.span(),
                format!("{what} expects an integer literal or parameter"),
            )),
        }
    }
}

/// Evaluation context for constants at plan time (LIMIT, key bounds).
pub(super) struct ConstContext<'a> {
    params: &'a HashMap<String, Value>,
    /// Counts the parameter values read (see [`Binder::param_reads`]).
    reads: &'a Cell<usize>,
}

impl EvalContext for ConstContext<'_> {
    fn now(&self) -> Timestamp {
        Timestamp::from_nanos(0).expect("epoch is in range")
    }
    fn next_sequence_value(&mut self, _sequence: &str) -> rowtree_expr::Result<i64> {
        Err(rowtree_expr::Error::invalid("not a constant"))
    }
    fn sequence_state(&mut self, _sequence: &str) -> rowtree_expr::Result<Option<i64>> {
        Err(rowtree_expr::Error::invalid("not a constant"))
    }
    fn pending_commit_timestamp(&mut self) -> rowtree_expr::Result<Value> {
        Err(rowtree_expr::Error::invalid("not a constant"))
    }
    fn param(&self, name: &str) -> Option<Value> {
        self.reads.set(self.reads.get() + 1);
        lookup_param(self.params, name)
    }
}

/// A parameter value by name: exact first, then ignoring case.
pub(crate) fn lookup_param(params: &HashMap<String, Value>, name: &str) -> Option<Value> {
    params.get(name).cloned().or_else(|| {
        params
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    })
}
