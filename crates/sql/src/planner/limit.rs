//! Pass `limit_pushdown`: a LIMIT directly over a scan becomes the scan's
//! own limit.
//!
//! Through projections only (a filter would drop rows after the scan
//! counted them), and only when the scan checks no residual conjunct and
//! fetches no base rows: then the scan can stop after `limit + offset` keys,
//! so "the latest 10 events" reads about 10 rows. The `Limit` node stays
//! (it still applies the offset).

use crate::error::Result;
use crate::plan::{Node, NodeKind, ScanNode};

use super::pass::{transform, Context};

/// Gives each scan under a LIMIT (through projections) that limit.
pub(super) fn limit_pushdown(mut node: Node, _ctx: &Context<'_>) -> Result<Node> {
    transform(&mut node, &mut |node| {
        if let NodeKind::Limit {
            input,
            limit: Some(limit),
            offset,
        } = &mut node.kind
        {
            let n = *limit + *offset;
            if n > 0 {
                if let Some(scan) = scan_through_projections(input) {
                    if scan.access.residual.is_empty() && !scan.access.back_join {
                        scan.access.limit = n as usize;
                    }
                }
            }
        }
        Ok(())
    })?;
    Ok(node)
}

/// The scan under projections only (row count is kept too).
fn scan_through_projections(node: &mut Node) -> Option<&mut ScanNode> {
    match &mut node.kind {
        NodeKind::Scan(s) => Some(s),
        NodeKind::Project { input, .. } => scan_through_projections(input),
        _ => None,
    }
}
