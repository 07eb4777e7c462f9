//! Pass `access_path`: each table scan gets the way it reads storage.
//!
//! The binder leaves every scan with the WHERE conjuncts pushed to it, each
//! with the key predicate it states. Per scan, this pass decides:
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

use rowtree_schema::{Catalog, KeyColumn};

use crate::error::{Error, Result};
use crate::keyrange::{extract, Extraction};
use crate::plan::{Access, IndexHint, Node, NodeKind, ScanNode};
use crate::scope::UsedColumns;

use super::pass::{transform, Context};

/// Chooses the access path of every table scan.
pub(super) fn access_path(mut node: Node, ctx: &Context<'_>) -> Result<Node> {
    transform(&mut node, &mut |n| {
        if let NodeKind::Scan(scan) = &mut n.kind {
            scan.access = choose_access(scan, ctx.catalog, ctx.used)?;
        }
        Ok(())
    })?;
    Ok(node)
}

/// One way to read a scan's rows: the base table (`index: None`) or an
/// index, with what the conjuncts make of its key.
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
        deferred: chosen.extraction.deferred,
        reverse: false,
        limit: 0,
        residual,
        fixed: chosen.extraction.fixed,
        chosen: true,
        after: None,
    })
}
