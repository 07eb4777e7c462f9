//! Pass `tree_scan`: an interleaved merge join of two plain scans becomes
//! one scan of the parent's row trees.
//!
//! A child table interleaved in its parent is stored inside the parent's
//! row trees: each parent row is followed by its children's rows. Two scans
//! merged in key order read each tree twice; one tree scan over the
//! parent's key set reads it once and hands out the parent rows with their
//! children. This pass runs after `access_path`, since whether whole trees
//! read fewer keys than the two scans depends on the key sets chosen.

use rowtree_schema::{Catalog, Table};

use crate::error::Result;
use crate::keyrange::KeyPredicate;
use crate::plan::{JoinMethod, Node, NodeKind, ScanNode, TreeScan};

use super::pass::{transform, Context};

/// Gives each interleaved merge join of two plain scans its tree scan, when
/// one reads no more keys than the two scans would.
pub(super) fn tree_scan_pass(mut node: Node, ctx: &Context<'_>) -> Result<Node> {
    transform(&mut node, &mut |n| {
        if let NodeKind::Join {
            left,
            right,
            method: JoinMethod::InterleavedMerge { tree, .. },
            ..
        } = &mut n.kind
        {
            *tree = tree_scan(left, right, ctx.catalog).map(Box::new);
        }
        Ok(())
    })?;
    Ok(node)
}

/// The one tree scan an interleaved merge join of `left` (the parent) and
/// `right` (a table interleaved in it) runs as, reading each row tree once,
/// or `None` to keep the two scans. Both inputs must be plain scans.
///
/// * The parent reads its base table by key ranges: the tree scan reads
///   those ranges widened to whole row trees, and the parent's residual
///   filter stays. A parent read through an index (in index order, which a
///   merge cannot use) reads every row tree and checks all its conjuncts.
/// * The child's own access path does not matter: its conjuncts are checked
///   on its rows (but those the parent's key set implies). Only when its key
///   set is narrower than the parent's row trees (it bounds a key column
///   below the parent key, say `Ts > x` inside one tree, or the parent reads
///   every tree while the child does not) would whole trees read more keys
///   than the two scans, which then stay (both read in key order).
fn tree_scan(left: &Node, right: &Node, catalog: &Catalog) -> Option<TreeScan> {
    let (NodeKind::Scan(parent), NodeKind::Scan(child)) = (&left.kind, &right.kind) else {
        return None;
    };
    let pt = catalog.table(&parent.table)?;
    let ct = catalog.table(&child.table)?;
    if !catalog.ancestors(ct.id).iter().any(|a| a.id == pt.id) {
        return None;
    }
    let pa = &parent.access;
    let ca = &child.access;
    let all_parent: Vec<usize> = (0..parent.conjuncts.len()).collect();
    if pa.index.is_some() || pa.reverse {
        return Some(TreeScan {
            key_set: rowtree_db::KeySet::all(),
            deferred: None,
            ranges_text: "full scan".into(),
            parent_filter: all_parent,
            child_filter: (0..child.conjuncts.len()).collect(),
            counters: Default::default(),
        });
    }
    if pa.limit > 0 {
        return None;
    }
    if ca.index.is_none() && !ca.reverse {
        let shared = pt.primary_key.len();
        let consumed: Vec<usize> = (0..child.conjuncts.len())
            .filter(|i| !ca.residual.contains(i))
            .filter_map(|i| child.conjuncts[i].key.as_ref().map(|k| k.column()))
            .collect();
        let below_parent = consumed.iter().any(|&col| {
            ct.primary_key
                .iter()
                .position(|k| k.column == col)
                .is_none_or(|pos| pos >= shared)
        });
        let parent_unbounded = pa.residual.len() == parent.conjuncts.len();
        if below_parent || (!consumed.is_empty() && parent_unbounded) {
            return None;
        }
    }
    Some(TreeScan {
        key_set: pa.key_set.clone(),
        deferred: pa.deferred.clone(),
        ranges_text: pa.ranges_text.clone(),
        parent_filter: pa.residual.clone(),
        child_filter: child_filter(parent, child, pt, ct),
        counters: Default::default(),
    })
}

/// The conjuncts of the child scan a tree scan must check on child rows:
/// all of them (the child's own key set is not applied), except a key
/// predicate on a parent key column that the parent's key set answers with
/// the same predicate (a child row in a parent's row tree has the parent's
/// key values).
fn child_filter(parent: &ScanNode, child: &ScanNode, pt: &Table, ct: &Table) -> Vec<usize> {
    let answered: Vec<&KeyPredicate> = (0..parent.conjuncts.len())
        .filter(|i| !parent.access.residual.contains(i))
        .filter_map(|i| parent.conjuncts[i].key.as_ref())
        .collect();
    let implied = |k: &KeyPredicate| -> bool {
        let Some(pos) = ct.primary_key.iter().position(|c| c.column == k.column()) else {
            return false;
        };
        let Some(pcol) = pt.primary_key.get(pos).map(|c| c.column) else {
            return false;
        };
        let on_parent = match k.clone() {
            KeyPredicate::Eq(_, v) => KeyPredicate::Eq(pcol, v),
            KeyPredicate::In(_, v) => KeyPredicate::In(pcol, v),
            KeyPredicate::InArray(_, a) => KeyPredicate::InArray(pcol, a),
            KeyPredicate::Lower(_, v, inc) => KeyPredicate::Lower(pcol, v, inc),
            KeyPredicate::Upper(_, v, inc) => KeyPredicate::Upper(pcol, v, inc),
            KeyPredicate::Between(_, a, b) => KeyPredicate::Between(pcol, a, b),
            KeyPredicate::NotNull(_) => KeyPredicate::NotNull(pcol),
        };
        answered.contains(&&on_parent)
    };
    (0..child.conjuncts.len())
        .filter(|&i| !child.conjuncts[i].key.as_ref().is_some_and(implied))
        .collect()
}
