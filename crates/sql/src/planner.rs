//! Physical planning: fitting the bound plan to how the data is stored.
//!
//! The binder leaves every scan with the WHERE conjuncts pushed to it; the
//! planner then decides, per scan:
//!
//! * **the access path**: the primary key or a secondary index, whichever
//!   the conjuncts constrain (see [`crate::keyrange`]). The base table wins
//!   when its key is constrained at all (a key range is the cheapest read);
//!   otherwise the index with the most constrained leading columns, a
//!   *covering* one (its keys, STORING columns and the table key hold every
//!   column the query reads) before one that must fetch each base row. A
//!   NULL_FILTERED index lacks rows whose index key is NULL, so it is used
//!   only when the conjuncts reject NULL in each of its key columns.
//!   `@{FORCE_INDEX=...}` overrides the choice.
//! * **the residual**: conjuncts the key set does not answer exactly, checked
//!   on each row the scan returns.
//!
//! Then, over the tree:
//!
//! * a **sort** whose keys are the scan's key columns in key order (after the
//!   columns pinned by `=`) is dropped; in exactly reversed order the scan
//!   runs backwards instead;
//! * a **LIMIT** directly over a scan (through projections only) becomes the
//!   scan's own limit, so "the latest 10 events" reads about 10 rows.

use rowtree_schema::{Catalog, KeyColumn};

use crate::error::{Error, Result};
use crate::keyrange::{extract, Extraction};
use crate::plan::{Access, IndexHint, Node, NodeKind, ScanNode, SortKey};
use crate::scope::UsedColumns;

/// Chooses access paths and removes sorts the key order makes redundant.
pub(crate) fn optimize(node: &mut Node, catalog: &Catalog, used: &UsedColumns) -> Result<()> {
    match &mut node.kind {
        NodeKind::Scan(scan) => {
            scan.access = choose_access(scan, catalog, used)?;
            return Ok(());
        }
        NodeKind::Values { .. } | NodeKind::Rows { .. } => return Ok(()),
        NodeKind::Filter { input, .. }
        | NodeKind::Project { input, .. }
        | NodeKind::Aggregate { input, .. }
        | NodeKind::Sort { input, .. }
        | NodeKind::Limit { input, .. }
        | NodeKind::Distinct { input }
        | NodeKind::Unnest { input, .. } => optimize(input, catalog, used)?,
        NodeKind::Join { left, right, .. } | NodeKind::SetOp { left, right, .. } => {
            optimize(left, catalog, used)?;
            optimize(right, catalog, used)?;
        }
    }
    // A sort the scan's key order already gives.
    if let NodeKind::Sort { input, keys } = &mut node.kind {
        if let Some(reverse) = scan_under(input).and_then(|scan| delivered_order(scan, keys)) {
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
    // A limit the scan can apply itself.
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

/// The scan under projections only (row count is kept too).
fn scan_through_projections(node: &mut Node) -> Option<&mut ScanNode> {
    match &mut node.kind {
        NodeKind::Scan(s) => Some(s),
        NodeKind::Project { input, .. } => scan_through_projections(input),
        _ => None,
    }
}

/// `Some(reverse)` when reading `scan` forwards (false) or backwards (true)
/// yields rows ordered by `keys`.
fn delivered_order(scan: &ScanNode, keys: &[SortKey]) -> Option<bool> {
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
        // Forward order: the column's direction, NULLs first on ASC and last on DESC.
        let forward = k.desc == kc.desc && k.nulls_first != kc.desc;
        let backward = k.desc != kc.desc && k.nulls_first == kc.desc;
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

struct Candidate {
    index: Option<String>,
    key_columns: Vec<KeyColumn>,
    extraction: Extraction,
    covering: bool,
}

fn choose_access(scan: &ScanNode, catalog: &Catalog, used: &UsedColumns) -> Result<Access> {
    let table = catalog
        .table(&scan.table)
        .ok_or_else(|| Error::invalid(format!("Table not found: {}", scan.table)))?;
    let predicates: Vec<_> = scan.conjuncts.iter().map(|c| c.key.clone()).collect();
    let read = used.of(scan.scan_id);
    let base = Candidate {
        index: None,
        key_columns: table.primary_key.clone(),
        extraction: extract(&table.primary_key, &predicates),
        covering: true,
    };
    let null_rejected = |col: usize| {
        predicates
            .iter()
            .flatten()
            .any(|p| p.column() == col && p.rejects_null())
    };
    let mut indexes = Vec::new();
    for ix in catalog.indexes_of(table.id) {
        let key_columns = ix.full_key(table);
        let covering = read
            .iter()
            .all(|c| table.is_key_column(*c) || ix.uses_column(*c));
        let usable = !ix.null_filtered || ix.keys.iter().all(|k| null_rejected(k.column));
        let forced = scan.hint == IndexHint::Index(ix.name.clone());
        if !usable && forced {
            return Err(Error::invalid(format!(
                "The NULL_FILTERED index {} cannot be used: the query does not filter out NULL values of its key columns",
                ix.name
            )));
        }
        if usable {
            indexes.push(Candidate {
                index: Some(ix.name.clone()),
                extraction: extract(&key_columns, &predicates),
                key_columns,
                covering,
            });
        }
    }
    let chosen = match &scan.hint {
        IndexHint::BaseTable => base,
        IndexHint::Index(name) => indexes
            .into_iter()
            .find(|c| c.index.as_deref() == Some(name.as_str()))
            .ok_or_else(|| Error::invalid(format!("Index not usable: {name}")))?,
        IndexHint::None => {
            if base.extraction.constrained > 0 {
                base
            } else {
                let best = indexes
                    .into_iter()
                    .filter(|c| c.extraction.constrained > 0)
                    .filter(|c| c.covering || c.extraction.fixed > 0 || c.extraction.points)
                    .max_by_key(|c| (c.extraction.constrained, c.covering, c.extraction.points));
                best.unwrap_or(base)
            }
        }
    };
    let residual = (0..scan.conjuncts.len())
        .filter(|i| !chosen.extraction.consumed.contains(i))
        .collect();
    Ok(Access {
        back_join: !chosen.covering,
        index: chosen.index,
        key_columns: chosen.key_columns,
        ranges_text: chosen.extraction.text.clone(),
        key_set: chosen.extraction.key_set,
        reverse: false,
        limit: 0,
        residual,
        fixed: chosen.extraction.fixed,
    })
}
