//! Leaf operators: table and index scans, literal rows, virtual and
//! system tables.
//!
//! A scan reads its key set through a [`RowStream`] in chunks, so a LIMIT
//! above it stops the reading; an index scan that does not cover the
//! query fetches each base row by key. Counters record rows, keys read and
//! splits touched for EXPLAIN ANALYZE.
//!
//! A key-set read from an array (`Id IN UNNEST(@ids)`, see
//! [`crate::keyrange::DeferredKeys`]) builds its key list when the scan
//! opens: the array is evaluated once, its keys sorted and deduplicated,
//! and the list kept for the statement (a scan run again, on the inner
//! side of a nested loop, reuses it), its memory held against the query's
//! budget.

use std::sync::atomic::Ordering as AtomicOrdering;

use std::rc::Rc;

use rowtree_db::{Bound, KeySet, RowStream, ScanRequest, ScanStats};
use rowtree_expr::BoundExpr;
use rowtree_types::Value;

use crate::error::{Error, Result};
use crate::keyrange::DeferredKeys;
use crate::plan::{Counters, ScanNode};

use super::context::ExecContext;
use super::memory::row_bytes;
use super::operator::{emit, Operator, Row};

pub(super) struct Scan<'p> {
    pub(super) node: &'p ScanNode,
    pub(super) counters: &'p Counters,
    pub(super) stream: Option<RowStream>,
    pub(super) done: bool,
}

impl Scan<'_> {
    fn record(&mut self) {
        if let Some(s) = self.stream.take() {
            record_stats(self.counters, s.stats());
        }
    }
}

impl Drop for Scan<'_> {
    fn drop(&mut self) {
        self.record();
    }
}

impl Operator for Scan<'_> {
    fn next(&mut self, cx: &mut ExecContext<'_>) -> Result<Option<Row>> {
        if self.done {
            return Ok(None);
        }
        let access = &self.node.access;
        if self.stream.is_none() {
            let key_set = scan_key_set(
                cx,
                &access.key_set,
                access.deferred.as_ref(),
                self.node as *const ScanNode as usize,
            )?;
            let request = ScanRequest {
                table: self.node.table.clone(),
                index: access.index.clone(),
                key_set,
                reverse: access.reverse,
                limit: access.limit,
                after: access.after.clone(),
            };
            self.stream = Some(cx.source.scan(&request)?);
        }
        loop {
            let Some(stream) = self.stream.as_mut() else {
                return Ok(None);
            };
            let Some(row) = stream.next() else {
                self.done = true;
                self.record();
                return Ok(None);
            };
            let mut row = row?;
            if access.back_join {
                row = match self.base_row(cx, &row)? {
                    Some(r) => r,
                    None => continue,
                };
            }
            let mut pass = true;
            for &i in &access.residual {
                if !cx.test(&self.node.conjuncts[i].expr, &row)? {
                    pass = false;
                    break;
                }
            }
            if pass {
                return emit(self.counters, row);
            }
        }
    }
}

impl Scan<'_> {
    /// The base table row of an index entry (a point lookup by primary key).
    fn base_row(&self, cx: &mut ExecContext<'_>, entry: &[Value]) -> Result<Option<Row>> {
        let catalog = cx.source.catalog();
        let table = catalog
            .table(&self.node.table)
            .ok_or_else(|| Error::not_found(format!("Table not found: {}", self.node.table)))?;
        let key: Vec<Value> = table
            .primary_key
            .iter()
            .map(|k| entry[k.column].clone())
            .collect();
        let request = ScanRequest {
            table: self.node.table.clone(),
            index: None,
            key_set: KeySet::key(key),
            reverse: false,
            limit: 1,
            after: None,
        };
        let mut stream = cx.source.scan(&request)?;
        let row = stream.next().transpose()?;
        let stats = stream.stats();
        self.counters
            .scanned
            .fetch_add(stats.rows_scanned, AtomicOrdering::Relaxed);
        Ok(row)
    }
}

pub(super) struct Values<'p> {
    pub(super) rows: &'p [Vec<BoundExpr>],
    pub(super) next: usize,
    pub(super) counters: &'p Counters,
}

impl Operator for Values<'_> {
    fn next(&mut self, cx: &mut ExecContext<'_>) -> Result<Option<Row>> {
        let Some(exprs) = self.rows.get(self.next) else {
            return Ok(None);
        };
        self.next += 1;
        let row = exprs
            .iter()
            .map(|e| cx.eval(e, &[]))
            .collect::<Result<Row>>()?;
        emit(self.counters, row)
    }
}

pub(super) struct Rows<'p> {
    pub(super) rows: &'p [Vec<Value>],
    pub(super) next: usize,
    pub(super) counters: &'p Counters,
}

impl Operator for Rows<'_> {
    fn next(&mut self, _cx: &mut ExecContext<'_>) -> Result<Option<Row>> {
        let Some(row) = self.rows.get(self.next) else {
            return Ok(None);
        };
        self.next += 1;
        emit(self.counters, row.clone())
    }
}

/// A SPANNER_SYS table: its rows are computed from the database when the
/// first row is asked for.
pub(super) struct SystemRows<'p> {
    pub(super) table: crate::spanner_sys::SysTable,
    pub(super) rows: Option<std::vec::IntoIter<Vec<Value>>>,
    pub(super) counters: &'p Counters,
}

impl Operator for SystemRows<'_> {
    fn next(&mut self, cx: &mut ExecContext<'_>) -> Result<Option<Row>> {
        if self.rows.is_none() {
            let db = cx.source.database().ok_or_else(|| {
                Error::failed_precondition(format!(
                    "{}.{} is not available here: no database",
                    self.table.schema(),
                    self.table.name()
                ))
            })?;
            self.rows = Some(self.table.rows(db).into_iter());
        }
        match self.rows.as_mut().and_then(Iterator::next) {
            Some(row) => emit(self.counters, row),
            None => Ok(None),
        }
    }
}

/// The key set a scan reads: `planned`, or the one `deferred` builds from
/// its array, once per statement (kept under `id`, which names the scan).
pub(super) fn scan_key_set(
    cx: &mut ExecContext<'_>,
    planned: &KeySet,
    deferred: Option<&DeferredKeys>,
    id: usize,
) -> Result<KeySet> {
    let Some(deferred) = deferred else {
        return Ok(planned.clone());
    };
    if let Some(kept) = cx.kept.borrow().key_sets.get(&id) {
        return Ok(KeySet::clone(kept));
    }
    let array = cx.eval(&deferred.array().expr, &[])?;
    let key_set = deferred.key_set(array);
    let bytes = key_set.keys.iter().map(|k| row_bytes(k)).sum::<usize>()
        + key_set
            .ranges
            .iter()
            .map(|r| bound_bytes(&r.start) + bound_bytes(&r.end))
            .sum::<usize>();
    let mut kept = cx.kept.borrow_mut();
    kept.held.hold_bytes(bytes)?;
    kept.key_sets.insert(id, Rc::new(key_set.clone()));
    Ok(key_set)
}

fn bound_bytes(b: &Bound) -> usize {
    match b {
        Bound::Closed(k) | Bound::Open(k) => row_bytes(k),
    }
}

pub(super) fn record_stats(counters: &Counters, stats: ScanStats) {
    counters
        .scanned
        .fetch_add(stats.rows_scanned, AtomicOrdering::Relaxed);
    counters
        .splits
        .fetch_add(stats.splits_touched as u64, AtomicOrdering::Relaxed);
}
