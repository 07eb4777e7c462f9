//! WHERE: conjuncts pushed to the scans they constrain.
//!
//! The clause is split into conjuncts. One that reads columns of a single
//! table scan only (no subquery, no aggregate, not on the NULL-supplying
//! side of an outer join) is bound in that scan's own scope and attached to
//! it, with the [`KeyPredicate`] it states, if any; the planner later turns
//! those into key ranges. The rest are ANDed into a `Filter` above the FROM
//! row.
//!
//! This happens while binding, not as a planner pass: choosing the scan
//! and re-binding the conjunct in its scope needs the names of the FROM
//! clause, which the bound plan no longer has.

use rowtree_parser::ast::Expr;

use crate::error::{Error, Result};
use crate::expr_tree::{self, and_all, column_paths, conjuncts, has_aggregate, has_subquery};
use crate::plan::{Conjunct, Node, NodeKind};
use crate::scope::{Resolved, RowScope};

use super::expr_scope::ExprScope;
use super::{Binder, Outer};

impl Binder<'_> {
    /// `node` (over the FROM row `from`) filtered by the WHERE clause `w`:
    /// each conjunct a single scan can answer is pushed into it, the rest
    /// are ANDed into a filter above it.
    pub(crate) fn apply_where(
        &self,
        w: &Expr,
        from: &RowScope,
        mut node: Node,
        outer: Option<&Outer<'_>>,
    ) -> Result<Node> {
        let mut residual = Vec::new();
        for c in conjuncts(w) {
            if !self.push_conjunct(c, from, &mut node, outer)? {
                residual.push(c.clone());
            }
        }
        if let Some(pred) = and_all(residual) {
            let es = ExprScope::new(self, from, outer, "WHERE clause");
            let text = expr_tree::text(&pred);
            let predicate = self.bind_bool(&pred, &es, "WHERE clause")?;
            node = Node::filter(node, predicate, text);
        }
        Ok(node)
    }

    /// Pushes a WHERE conjunct to the one scan it reads, if it reads one.
    pub(crate) fn push_conjunct(
        &self,
        c: &Expr,
        from: &RowScope,
        node: &mut Node,
        outer: Option<&Outer<'_>>,
    ) -> Result<bool> {
        if has_subquery(c) || has_aggregate(c) {
            return Ok(false);
        }
        let mut paths = Vec::new();
        column_paths(c, &mut paths);
        let mut target: Option<usize> = None;
        for p in &paths {
            match from.resolve(p)? {
                Resolved::Slot(s, _) => match from.columns[s].origin {
                    Some((scan, _)) if target.is_none() || target == Some(scan) => {
                        target = Some(scan)
                    }
                    _ => return Ok(false),
                },
                Resolved::NotFound => {}
            }
        }
        let Some(scan) = target else { return Ok(false) };
        if self.nonpushable.borrow().contains(&scan) {
            return Ok(false);
        }
        let scope = self
            .scan_scopes
            .borrow()
            .get(&scan)
            .cloned()
            .ok_or_else(|| Error::internal("scan scope missing"))?;
        // Mark the columns read in the full scope (same origins).
        for p in &paths {
            if let Ok(Resolved::Slot(s, _)) = from.resolve(p) {
                self.used.borrow().mark(from.columns[s].origin);
            }
        }
        let es = ExprScope::new(self, &scope, outer, "WHERE clause");
        let expr = self.bind_bool(c, &es, "WHERE clause")?;
        let (key, key_site) = self.key_predicate(c, &scope);
        let conj = Conjunct {
            expr,
            key: key.clone(),
            text: expr_tree::text(c),
            key_site,
        };
        // A constant bound already there (transferred from a joined column).
        if key.is_some() && has_conjunct(node, scan, &conj.text) {
            return Ok(true);
        }
        if !attach(node, scan, conj) {
            return Ok(false);
        }
        if let Some(k) = key {
            self.transfer(c, (scan, k.column()), &k, node, outer);
        }
        Ok(true)
    }
}

/// Whether the scan `scan_id` under `node` has a conjunct reading `text`.
pub(super) fn has_conjunct(node: &Node, scan_id: usize, text: &str) -> bool {
    match &node.kind {
        NodeKind::Scan(s) if s.scan_id == scan_id => s.conjuncts.iter().any(|c| c.text == text),
        _ => node
            .children()
            .into_iter()
            .any(|n| has_conjunct(n, scan_id, text)),
    }
}

/// Adds a conjunct to the scan `scan_id` under `node`.
pub(super) fn attach(node: &mut Node, scan_id: usize, c: Conjunct) -> bool {
    let mut slot = Some(c);
    attach_inner(node, scan_id, &mut slot);
    slot.is_none()
}

pub(super) fn attach_inner(node: &mut Node, scan_id: usize, c: &mut Option<Conjunct>) {
    if c.is_none() {
        return;
    }
    match &mut node.kind {
        NodeKind::Scan(s) if s.scan_id == scan_id => {
            if let Some(c) = c.take() {
                s.conjuncts.push(c);
            }
        }
        _ => {
            for child in node.children_mut() {
                attach_inner(child, scan_id, c);
            }
        }
    }
}
