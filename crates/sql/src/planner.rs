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
//! * an **interleaved merge join** of two plain scans reads each row tree
//!   once: one tree scan over the parent's key set returns the parent rows
//!   with their children (see [`one_tree_scan`]);
//! * a **LIMIT** directly over a scan (through projections only) becomes the
//!   scan's own limit, so "the latest 10 events" reads about 10 rows.

use rowtree_schema::{Catalog, KeyColumn, Table};

use crate::error::{Error, Result};
use crate::keyrange::{extract, Extraction, KeyPredicate};
use crate::plan::{Access, IndexHint, JoinMethod, Node, NodeKind, ScanNode, SortKey, TreeScan};
use crate::scope::UsedColumns;

/// Chooses access paths and removes sorts the key order makes redundant.
pub(crate) fn optimize(node: &mut Node, catalog: &Catalog, used: &UsedColumns) -> Result<()> {
    rowtree_types::stack::guarded(|| optimize_node(node, catalog, used))
}

fn optimize_node(node: &mut Node, catalog: &Catalog, used: &UsedColumns) -> Result<()> {
    if let NodeKind::Scan(scan) = &mut node.kind {
        scan.access = choose_access(scan, catalog, used)?;
        return Ok(());
    }
    for child in node.children_mut() {
        optimize(child, catalog, used)?;
    }
    if let NodeKind::Join {
        left,
        right,
        method: JoinMethod::InterleavedMerge { tree, .. },
        ..
    } = &mut node.kind
    {
        *tree = tree_scan(left, right, catalog).map(Box::new);
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
