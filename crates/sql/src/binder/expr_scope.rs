//! The scope the expression binder sees.
//!
//! [`rowtree_expr::bind`] resolves names, aggregate calls and subqueries
//! through the [`rowtree_expr::Scope`] trait. [`ExprScope`] implements it
//! for one clause of one query block: names resolve in the block's
//! [`RowScope`] first, then (for a subquery) in the enclosing block, where a
//! correlated reference gets the slot after the row's own (see
//! [`super::Outer`]). In an aggregating block a name that is neither grouped
//! nor aggregated is refused with the clause's name in the message. Errors
//! met inside the hooks are kept here, so the binder can report the more
//! precise one.

use std::cell::RefCell;

use rowtree_expr::SubqueryKind;
use rowtree_parser::ast::{Expr, Ident, Query};
use rowtree_types::Type;

use crate::error::Error;
use crate::plan::AggregateCall;
use crate::scope::{path_span, Resolved, RowScope};

use super::{Binder, Outer};

/// State of an aggregating SELECT while its clauses are bound.
pub(crate) struct AggContext<'a> {
    pub(super) from: &'a RowScope,
    pub(super) groups: usize,
    pub(super) calls: RefCell<Vec<AggregateCall>>,
    pub(super) keys: RefCell<Vec<String>>,
}

/// The [`rowtree_expr::Scope`] the expression binder sees.
pub(crate) struct ExprScope<'a, 'c> {
    binder: &'a Binder<'c>,
    row: &'a RowScope,
    outer: Option<&'a Outer<'a>>,
    pub(super) agg: Option<&'a AggContext<'a>>,
    clause: &'static str,
    pub(super) error: RefCell<Option<Error>>,
}

impl<'a, 'c> ExprScope<'a, 'c> {
    pub fn new(
        binder: &'a Binder<'c>,
        row: &'a RowScope,
        outer: Option<&'a Outer<'a>>,
        clause: &'static str,
    ) -> Self {
        ExprScope {
            binder,
            row,
            outer,
            agg: None,
            clause,
            error: RefCell::new(None),
        }
    }

    fn fail(&self, e: Error) {
        let mut slot = self.error.borrow_mut();
        if slot.is_none() {
            *slot = Some(e);
        }
    }
}

pub(super) fn to_expr_error(e: &Error) -> rowtree_expr::Error {
    rowtree_expr::Error::InvalidArgument {
        message: e.message.clone(),
        span: e.span,
    }
}

impl rowtree_expr::Scope for ExprScope<'_, '_> {
    fn resolve(&self, path: &[Ident]) -> Option<(usize, Type)> {
        match self.row.resolve(path) {
            Ok(Resolved::Slot(slot, ty)) => {
                self.binder
                    .used
                    .borrow()
                    .mark(self.row.columns[slot].origin);
                return Some((slot, ty));
            }
            Err(e) => {
                self.fail(e);
                return None;
            }
            Ok(Resolved::NotFound) => {}
        }
        if let Some(agg) = self.agg {
            if let Ok(Resolved::Slot(..)) = agg.from.resolve(path) {
                let name = path.last().map(|i| i.value.clone()).unwrap_or_default();
                self.fail(Error::invalid_at(
                    path_span(path),
                    format!("{} expression references column {name} which is neither grouped nor aggregated", self.clause),
                ));
                return None;
            }
        }
        let outer = self.outer?;
        let (slot, ty) = outer.scope.resolve(path)?;
        let mut corr = outer.correlations.borrow_mut();
        let k = match corr.iter().position(|&s| s == slot) {
            Some(k) => k,
            None => {
                corr.push(slot);
                corr.len() - 1
            }
        };
        Some((self.row.width() + k, ty))
    }

    fn sequence_exists(&self, name: &str) -> Option<bool> {
        Some(self.binder.catalog.sequence(name).is_some())
    }

    fn suggest(&self, name: &str) -> Option<String> {
        let names = self
            .row
            .columns
            .iter()
            .filter(|c| c.unqualified)
            .map(|c| c.name.as_str())
            .chain(self.row.tables.iter().map(|(alias, _)| alias.as_str()));
        rowtree_expr::closest_name(name, names)
            .map(str::to_string)
            .or_else(|| self.outer.and_then(|o| o.scope.suggest(name)))
    }

    fn bind_aggregate(&self, call: &Expr) -> Option<rowtree_expr::Result<(usize, Type)>> {
        let agg = self.agg?;
        Some(
            self.binder
                .bind_aggregate(agg, call, self.outer)
                .map_err(|e| {
                    let ee = to_expr_error(&e);
                    self.fail(e);
                    ee
                }),
        )
    }

    fn aggregate_context_name(&self) -> Option<&str> {
        Some(self.clause)
    }

    fn bind_subquery(
        &self,
        expr: &Expr,
        query: &Query,
        kind: SubqueryKind,
    ) -> Option<rowtree_expr::Result<(usize, Type)>> {
        Some(
            self.binder
                .bind_subquery(self, expr, query, kind)
                .map_err(|e| {
                    let ee = to_expr_error(&e);
                    self.fail(e);
                    ee
                }),
        )
    }
}

impl<'a, 'c> ExprScope<'a, 'c> {
    pub(super) fn with_clause(&self, clause: &'static str) -> ExprScope<'a, 'c> {
        ExprScope {
            binder: self.binder,
            row: self.row,
            outer: self.outer,
            agg: self.agg,
            clause,
            error: RefCell::new(None),
        }
    }
}
