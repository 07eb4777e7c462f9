//! Pass `interleaved_merge`: a join of a parent table with a table
//! interleaved in it, on the whole parent key, merges both in key order.
//!
//! The binder picks a hash join when the ON clause has equalities of the
//! two sides (a nested loop otherwise). When the inputs are plain scans of
//! a parent and a table interleaved in it at any depth, and the equalities
//! match each parent key column with the child's key column at the same
//! position, both scans deliver rows in the same key order: a merge needs
//! no hash table and streams. Only INNER and LEFT joins (the parent on the
//! preserved side) qualify, and not under a `JOIN_METHOD` hint asking for
//! another method. The equalities stay in the join's condition, so the
//! hash keys are not needed once the method changes.

use rowtree_parser::ast::JoinKind;
use rowtree_schema::Catalog;

use crate::error::Result;
use crate::plan::{JoinMethod, Node, NodeKind};

use super::pass::{transform, Context};

/// Turns each eligible join of a parent and an interleaved child into an
/// interleaved merge join.
pub(super) fn interleaved_merge(mut node: Node, ctx: &Context<'_>) -> Result<Node> {
    transform(&mut node, &mut |n| {
        if let NodeKind::Join {
            left,
            right,
            kind,
            method,
            merge_allowed: true,
            ..
        } = &mut n.kind
        {
            // (left column, right column) of each key equality.
            let keys: Vec<(Option<usize>, Option<usize>)> = match method {
                JoinMethod::Hash {
                    left_keys,
                    right_keys,
                } => left_keys
                    .iter()
                    .zip(right_keys.iter())
                    .map(|(l, r)| (l.as_column(), r.as_column()))
                    .collect(),
                _ => Vec::new(),
            };
            if let Some(merge) = merge_method(ctx.catalog, *kind, left, right, &keys) {
                *method = merge;
            }
        }
        Ok(())
    })?;
    Ok(node)
}

/// The merge of a parent scan `left` and a scan `right` of a table
/// interleaved in it, when the equalities `keys` cover the whole parent key.
fn merge_method(
    catalog: &Catalog,
    kind: JoinKind,
    left: &Node,
    right: &Node,
    keys: &[(Option<usize>, Option<usize>)],
) -> Option<JoinMethod> {
    if !matches!(kind, JoinKind::Inner | JoinKind::Left) {
        return None;
    }
    let (NodeKind::Scan(l), NodeKind::Scan(r)) = (&left.kind, &right.kind) else {
        return None;
    };
    let parent = catalog.table(&l.table)?;
    let child = catalog.table(&r.table)?;
    if !catalog
        .ancestors(child.id)
        .iter()
        .any(|a| a.id == parent.id)
    {
        return None;
    }
    let mut left_keys = Vec::new();
    let mut right_keys = Vec::new();
    let mut desc = Vec::new();
    for (i, pk) in parent.primary_key.iter().enumerate() {
        let ck = child.primary_key.get(i)?;
        // A scan's row is its table's row: slot and column index agree.
        keys.iter()
            .find(|(ls, rs)| *ls == Some(pk.column) && *rs == Some(ck.column))?;
        left_keys.push(pk.column);
        right_keys.push(ck.column);
        desc.push(pk.desc);
    }
    Some(JoinMethod::InterleavedMerge {
        left_keys,
        right_keys,
        desc,
        tree: None,
    })
}
