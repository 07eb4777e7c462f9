//! Predicate transfer through join equalities.
//!
//! `a JOIN b ON a.k = b.k WHERE a.k = 7` also means `b.k = 7`: a constant
//! bound pushed to one scan is copied, rewritten to the joined column, to
//! every scan the join equalities connect it to (transitively), so each can
//! read a key range instead of the whole table. INNER joins transfer both
//! ways, an outer join only from its preserved side to its NULL-supplying
//! side, FULL joins not at all. Like WHERE pushdown this runs while binding:
//! the copy is re-bound by name in the target scan's scope.

use rowtree_parser::ast::{Expr, Ident};

use crate::expr_tree::{self};
use crate::keyrange::KeyPredicate;
use crate::plan::{Conjunct, Node};
use crate::scope::Origin;

use super::expr_scope::ExprScope;
use super::where_clause::{attach, has_conjunct};
use super::{Binder, Outer};

impl Binder<'_> {
    /// Predicate transfer: a constant bound `c` on column `from` (described
    /// by `key`), pushed to `from`'s scan, also holds for every column the
    /// join equalities make equal to it (see `transfers`, followed
    /// transitively): each such scan gets `c` rewritten to its column, so its
    /// key range or index can use it. The original conjunct stays. Only
    /// `=`, `IN` (lists and `UNNEST`), ranges and `BETWEEN` are copied (an `IS [NOT] NULL` says
    /// nothing useful about a column an equality matched).
    pub(super) fn transfer(
        &self,
        c: &Expr,
        from: Origin,
        key: &KeyPredicate,
        node: &mut Node,
        outer: Option<&Outer<'_>>,
    ) {
        let copy = match key {
            KeyPredicate::Eq(_, v) => !v.is_null(),
            KeyPredicate::In(..)
            | KeyPredicate::InArray(..)
            | KeyPredicate::Lower(..)
            | KeyPredicate::Upper(..)
            | KeyPredicate::Between(..) => true,
            KeyPredicate::NotNull(_) => false,
        };
        if !copy {
            return;
        }
        let edges: Vec<(Origin, Origin)> = self.transfers.borrow().clone();
        if edges.is_empty() {
            return;
        }
        let mut seen = vec![from];
        let mut queue = vec![from];
        while let Some(at) = queue.pop() {
            for &(a, b) in &edges {
                if a != at || seen.contains(&b) {
                    continue;
                }
                seen.push(b);
                if self.copy_bound(c, b, node, outer) {
                    queue.push(b);
                }
            }
        }
    }

    /// Adds conjunct `c` (a constant bound on one column) to the scan of
    /// column `to`, rewritten to read that column; whether `to`'s scan now
    /// has it.
    fn copy_bound(&self, c: &Expr, to: Origin, node: &mut Node, outer: Option<&Outer<'_>>) -> bool {
        let (oscan, ocol) = to;
        let Some(oscope) = self.scan_scopes.borrow().get(&oscan).cloned() else {
            return false;
        };
        let Some(colname) = oscope.columns.get(ocol).map(|c| c.name.clone()) else {
            return false;
        };
        let Some(alias) = oscope.tables.first().map(|(a, _)| a.clone()) else {
            return false;
        };
        // The bound's only column reference is the bounded column (the other
        // operands are constants).
        let rewritten = expr_tree::rewrite(c, &|x: &Expr| match x {
            Expr::Column { span, .. } => Some(Expr::Column {
                path: vec![
                    Ident {
                        value: alias.clone(),
                        span: *span,
                    },
                    Ident {
                        value: colname.clone(),
                        span: *span,
                    },
                ],
                span: *span,
            }),
            _ => None,
        });
        let text = expr_tree::text(&rewritten);
        if has_conjunct(node, oscan, &text) {
            return true;
        }
        let es = ExprScope::new(self, &oscope, outer, "WHERE clause");
        let Ok(expr) = self.bind_bool(&rewritten, &es, "WHERE clause") else {
            return false;
        };
        let (key, key_site) = self.key_predicate(&rewritten, &oscope);
        attach(
            node,
            oscan,
            Conjunct {
                expr,
                key,
                text,
                key_site,
            },
        )
    }
}
