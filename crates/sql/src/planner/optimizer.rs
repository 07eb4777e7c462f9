//! The planner's passes, in order, each a named function from plan to plan.
//!
//! Every pass walks the whole operator tree (children before parents) and
//! changes what it knows about; the list is data, so tests and tools can
//! run the passes one by one and show the plan after each (see
//! `tests/scripts/plans`). Their order matters:
//!
//! 1. `interleaved_merge` ([`super::join_method`]): joins of a parent and
//!    an interleaved child on the parent key become merge joins.
//! 2. `access_path` ([`super::access`]): each scan gets its key ranges,
//!    index, and residual filter.
//! 3. `tree_scan` ([`super::tree_scan`]): a merge of two plain scans reads
//!    each row tree once, when that reads no more keys (needs 1 and 2).
//! 4. `sort_elimination` ([`super::key_order`]): sorts the scan's key order
//!    gives are dropped, or the scan runs backwards (needs 2).
//! 5. `limit_pushdown` ([`super::limit`]): a LIMIT over a scan becomes the
//!    scan's own early stop (after 4, which can bring the two together).
//!
//! What the binder decides instead, and why, is in [`crate::binder`]: which
//! scan a WHERE conjunct belongs to, the key predicate it states, and the
//! bounds transferred across join equalities all need the FROM clause's
//! names, which the bound tree no longer carries.

use crate::error::Result;
use crate::plan::{Node, NodeKind, Plan};

use super::access::access_path;
use super::join_method::interleaved_merge;
use super::key_order::sort_elimination;
use super::limit::limit_pushdown;
use super::pass::{Context, Optimizer};
use super::tree_scan::tree_scan_pass;

/// The passes, by name, in the order they run.
pub(crate) const OPTIMIZERS: &[(&str, Optimizer)] = &[
    ("interleaved_merge", interleaved_merge),
    ("access_path", access_path),
    ("tree_scan", tree_scan_pass),
    ("sort_elimination", sort_elimination),
    ("limit_pushdown", limit_pushdown),
];

/// Runs every pass over the plan.
pub(crate) fn optimize(plan: &mut Plan, ctx: &Context<'_>) -> Result<()> {
    for (_, pass) in OPTIMIZERS {
        run_pass(plan, *pass, ctx)?;
    }
    Ok(())
}

/// Runs one pass over the plan's tree and each of its subqueries' trees.
pub(crate) fn run_pass(plan: &mut Plan, pass: Optimizer, ctx: &Context<'_>) -> Result<()> {
    plan.root = pass(take(&mut plan.root), ctx)?;
    for sub in plan.subqueries.iter_mut() {
        sub.root = pass(take(&mut sub.root), ctx)?;
    }
    Ok(())
}

/// Moves the tree out of `node`, leaving an empty leaf behind.
fn take(node: &mut Node) -> Node {
    std::mem::replace(node, Node::new(NodeKind::Values { rows: vec![] }, 0))
}
