//! Pass `sort_elimination`: sorts the key order already gives are dropped.
//!
//! A scan reads rows in the order of its key (the primary key, or the
//! index key then the primary key). A sort above it (through projections
//! and filters, which keep row order) whose keys are the scan's key
//! columns in order, after the columns pinned to one value by `=`, is not
//! needed; in exactly the reversed order, the scan runs backwards instead.
//! Sort keys carry the table column they read (`origin`), which is what is
//! compared here. Where NULLs go matters only for a column that can hold
//! one: a NOT NULL key column (every primary key column in the PostgreSQL
//! dialect) delivers `ORDER BY col` whatever its NULLS FIRST/LAST, which
//! matters there because PostgreSQL sorts NULLs last by default and
//! GoogleSQL first.

use crate::error::Result;
use crate::plan::{Node, NodeKind, ScanNode, SortKey};

use super::pass::{transform, Context};

/// Removes each sort whose order the scan under it delivers.
pub(super) fn sort_elimination(mut node: Node, ctx: &Context<'_>) -> Result<Node> {
    transform(&mut node, &mut |node| {
        if let NodeKind::Sort { input, keys } = &mut node.kind {
            let delivered = scan_under(input).and_then(|scan| {
                let table = ctx.catalog.table(&scan.table);
                let not_null = |col: usize| {
                    table
                        .and_then(|t| t.columns.get(col))
                        .is_some_and(|c| c.not_null)
                };
                delivered_order(scan, keys, &not_null)
            });
            if let Some(reverse) = delivered {
                if let Some(scan) = scan_under_mut(input) {
                    scan.access.reverse = reverse;
                }
                let NodeKind::Sort { input, .. } =
                    std::mem::replace(&mut node.kind, NodeKind::Values { rows: vec![] })
                else {
                    unreachable!("matched a sort above")
                };
                *node = *input;
            }
        }
        Ok(())
    })?;
    Ok(node)
}

/// The scan under projections and filters only (row order is kept).
fn scan_under(node: &Node) -> Option<&ScanNode> {
    match &node.kind {
        NodeKind::Scan(s) => Some(s),
        NodeKind::Project { input, .. } | NodeKind::Filter { input, .. } => scan_under(input),
        _ => None,
    }
}

fn scan_under_mut(node: &mut Node) -> Option<&mut ScanNode> {
    match &mut node.kind {
        NodeKind::Scan(s) => Some(s),
        NodeKind::Project { input, .. } | NodeKind::Filter { input, .. } => scan_under_mut(input),
        _ => None,
    }
}

/// `Some(reverse)` when reading `scan` forwards (false) or backwards (true)
/// yields rows ordered by `keys`. `not_null(col)`: the table's column `col`
/// holds no NULL, so its sort key's NULL placement does not matter.
fn delivered_order(
    scan: &ScanNode,
    keys: &[SortKey],
    not_null: &dyn Fn(usize) -> bool,
) -> Option<bool> {
    let access = &scan.access;
    let mut pos = 0;
    let mut reverse: Option<bool> = None;
    for k in keys {
        let (scan_id, col) = k.origin?;
        if scan_id != scan.scan_id {
            return None;
        }
        while pos < access.fixed && access.key_columns[pos].column != col {
            pos += 1;
        }
        let kc = access.key_columns.get(pos)?;
        if pos < access.fixed && kc.column == col {
            // Pinned to one value: any direction is delivered.
            pos += 1;
            continue;
        }
        if kc.column != col {
            return None;
        }
        // Forward order: the column's direction, NULLs first on ASC and last
        // on DESC (or anywhere, when there are none).
        let any_nulls = !not_null(col);
        let forward = k.desc == kc.desc && (!any_nulls || k.nulls_first != kc.desc);
        let backward = k.desc != kc.desc && (!any_nulls || k.nulls_first == kc.desc);
        let this = if forward {
            false
        } else if backward {
            true
        } else {
            return None;
        };
        if reverse.is_some_and(|r| r != this) {
            return None;
        }
        reverse = Some(this);
        pos += 1;
    }
    Some(reverse.unwrap_or(false))
}
