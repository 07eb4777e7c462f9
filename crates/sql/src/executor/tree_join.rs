//! The interleaved merge join that reads each row tree once.
//!
//! One [`TreeStream`] over the parent's key set returns each parent row
//! followed by the rows of the child table stored in its tree (rows of
//! other tables in the tree are skipped); the parent's and the child's
//! filters are applied on the way, and LEFT joins emit a childless parent
//! with NULLs.

use std::cmp::Ordering;
use std::collections::VecDeque;

use rowtree_db::{TreeScanRequest, TreeStream};
use rowtree_expr::BoundExpr;
use rowtree_types::Value;

use crate::error::Result;
use crate::plan::{Counters, ScanNode, TreeScan};

use super::context::ExecContext;
use super::operator::{emit, Operator, Row};
use super::scan::{record_stats, scan_key_set};

/// The parent row a tree-scan join is on.
pub(super) struct TreeParent {
    pub(super) row: Row,
    /// A NULL parent key equals nothing.
    pub(super) null_key: bool,
    pub(super) matched: bool,
}

/// A parent and its interleaved child joined over one tree scan: each
/// parent row arrives followed by the child rows of its row tree, so the
/// join holds one parent row and reads each key once.
pub(super) struct TreeMergeJoin<'p> {
    pub(super) parent: &'p ScanNode,
    pub(super) child: &'p ScanNode,
    pub(super) left_keys: &'p [usize],
    pub(super) right_keys: &'p [usize],
    pub(super) tree: &'p TreeScan,
    pub(super) outer: bool,
    pub(super) condition: Option<&'p BoundExpr>,
    pub(super) right_width: usize,
    pub(super) stream: Option<TreeStream>,
    /// The parent row whose row tree is being read (None before the first,
    /// after the parent's residual filter rejected it, or past its tree).
    pub(super) current: Option<TreeParent>,
    pub(super) done: bool,
    pub(super) pending: VecDeque<Row>,
    pub(super) counters: &'p Counters,
}

impl TreeMergeJoin<'_> {
    fn record(&mut self) {
        if let Some(s) = self.stream.take() {
            record_stats(&self.tree.counters, s.stats());
        }
    }

    /// Ends the current parent's row tree: an unmatched parent of a LEFT
    /// join comes out with NULLs.
    fn finish_parent(&mut self) {
        if let Some(p) = self.current.take() {
            if self.outer && !p.matched {
                let mut row = p.row;
                row.extend(std::iter::repeat_n(Value::Null, self.right_width));
                self.pending.push_back(row);
            }
        }
    }

    fn passes(
        cx: &mut ExecContext<'_>,
        scan: &ScanNode,
        conjuncts: impl Iterator<Item = usize>,
        row: &[Value],
    ) -> Result<bool> {
        for i in conjuncts {
            if !cx.test(&scan.conjuncts[i].expr, row)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn on_parent(&mut self, cx: &mut ExecContext<'_>, row: Row) -> Result<()> {
        self.finish_parent();
        // The key set answers the parent's other conjuncts exactly.
        let residual = self.tree.parent_filter.iter().copied();
        if Self::passes(cx, self.parent, residual, &row)? {
            self.tree.counters.add_rows(1);
            let null_key = self.left_keys.iter().any(|&k| row[k].is_null());
            self.current = Some(TreeParent {
                row,
                null_key,
                matched: false,
            });
        }
        Ok(())
    }

    fn on_child(&mut self, cx: &mut ExecContext<'_>, row: Row) -> Result<()> {
        let Some(parent) = self.current.as_ref() else {
            // Its parent row was filtered out (or does not exist: INTERLEAVE IN).
            return Ok(());
        };
        let same_tree = self.left_keys.iter().zip(self.right_keys).all(|(&p, &c)| {
            rowtree_expr::compare(&parent.row[p], &row[c]) == Some(Ordering::Equal)
        });
        if !same_tree {
            // A child row without a parent row, past the current row tree.
            self.finish_parent();
            return Ok(());
        }
        if parent.null_key {
            return Ok(());
        }
        // The child scan's key set is not applied to the tree: check its
        // conjuncts the parent's key set does not imply.
        let filter = self.tree.child_filter.iter().copied();
        if !Self::passes(cx, self.child, filter, &row)? {
            return Ok(());
        }
        self.tree.counters.add_rows(1);
        let mut joined = parent.row.clone();
        joined.extend(row);
        let ok = match self.condition {
            Some(c) => cx.test(c, &joined)?,
            None => true,
        };
        if ok {
            if let Some(p) = self.current.as_mut() {
                p.matched = true;
            }
            self.pending.push_back(joined);
        }
        Ok(())
    }
}

impl Drop for TreeMergeJoin<'_> {
    fn drop(&mut self) {
        self.record();
    }
}

impl Operator for TreeMergeJoin<'_> {
    fn next(&mut self, cx: &mut ExecContext<'_>) -> Result<Option<Row>> {
        loop {
            if let Some(r) = self.pending.pop_front() {
                return emit(self.counters, r);
            }
            if self.done {
                return Ok(None);
            }
            if self.stream.is_none() {
                let key_set = scan_key_set(
                    cx,
                    &self.tree.key_set,
                    self.tree.deferred.as_ref(),
                    self.tree as *const TreeScan as usize,
                )?;
                let request = TreeScanRequest {
                    table: self.parent.table.clone(),
                    include: vec![self.child.table.clone()],
                    key_set,
                    reverse: false,
                    limit: 0,
                };
                self.stream = Some(cx.source.scan_tree(&request)?);
            }
            let next = self.stream.as_mut().and_then(|s| s.next());
            match next {
                None => {
                    self.done = true;
                    self.record();
                    self.finish_parent();
                }
                Some(tagged) => {
                    let tagged = tagged?;
                    if tagged.source == 0 {
                        self.on_parent(cx, tagged.row)?;
                    } else {
                        self.on_child(cx, tagged.row)?;
                    }
                }
            }
        }
    }
}
