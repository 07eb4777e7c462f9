//! Streaming scans: the rows of a key set, read in key order in chunks.
//!
//! A [`RowStream`] walks the byte ranges of a [`ScanRequest`] through the
//! split router, a chunk at a time (64 keys, growing to 1,024), so a scan of
//! millions of rows holds one chunk in memory. Inside a read-write
//! transaction the stream also merges the transaction's own DML writes: rows
//! it inserted, updated or deleted (and, for index scans, the index entries
//! those rows imply), so a statement sees the statements before it.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::ops::Bound;
use std::sync::Arc;

use rowtree_kv::SplitId;
use rowtree_schema::Catalog;
use rowtree_types::Value;

use crate::database::Database;
use crate::error::Result;
use crate::keys;
use crate::mutation::KeySet;
use crate::read::{materialize, Span, Target};
use crate::write::{index_entry, TxnWrites};

/// A scan of a table or an index.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanRequest {
    pub table: String,
    /// Scan this index of the table instead of the table.
    pub index: Option<String>,
    pub key_set: KeySet,
    /// Descending key order.
    pub reverse: bool,
    /// Stop after this many rows (0 = no limit).
    pub limit: usize,
}

impl ScanRequest {
    /// A forward scan of `table` over `key_set`.
    pub fn table(table: &str, key_set: KeySet) -> ScanRequest {
        ScanRequest {
            table: table.to_string(),
            index: None,
            key_set,
            reverse: false,
            limit: 0,
        }
    }
}

/// What a scan did, for EXPLAIN ANALYZE and query statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ScanStats {
    /// Keys read from storage, including keys of other tables that share
    /// an interleaved range and were skipped.
    pub rows_scanned: u64,
    /// Rows the stream returned.
    pub rows_returned: u64,
    /// Distinct splits the scan read from.
    pub splits_touched: usize,
}

const FIRST_CHUNK: usize = 64;
const MAX_CHUNK: usize = 1024;

/// The rows of a scan: each a table-shaped row (indexed by the position of
/// the column in the table); an index scan leaves the columns the index does
/// not hold NULL.
pub struct RowStream {
    db: Database,
    catalog: Arc<Catalog>,
    table: String,
    index: Option<String>,
    ts: u64,
    reverse: bool,
    limit: usize,
    /// Ranges still to read, in scan order.
    spans: VecDeque<Span>,
    /// For the range in progress: the bounds still to read.
    cursor: Option<(Vec<u8>, Option<Vec<u8>>)>,
    buffer: VecDeque<Vec<Value>>,
    chunk: usize,
    /// This transaction's own rows/entries by key (None = deleted).
    overlay: BTreeMap<Vec<u8>, Option<Vec<Value>>>,
    /// Positions of the columns the target holds (index scans).
    covered: Option<Vec<usize>>,
    splits: BTreeSet<SplitId>,
    stats: ScanStats,
    failed: bool,
}

impl RowStream {
    /// Opens a stream at `ts`; `writes` are the transaction's own writes.
    pub(crate) fn open(
        db: Database,
        catalog: Arc<Catalog>,
        request: &ScanRequest,
        ts: u64,
        writes: Option<&TxnWrites>,
    ) -> Result<RowStream> {
        let target = Target::resolve(&catalog, &request.table, request.index.as_deref())?;
        let mut spans: Vec<Span> = target.ranges(&request.key_set)?;
        // Key order of the spans, so the stream is in key order overall.
        spans.sort_by(|a, b| span_start(a).cmp(span_start(b)));
        if request.reverse {
            spans.reverse();
        }
        let covered = target.index.map(|ix| {
            let mut c = target.key_columns.clone();
            c.extend(ix.storing.iter().copied());
            c
        });
        let mut overlay = BTreeMap::new();
        if let Some(w) = writes {
            for change in w.rows.values().filter(|c| c.table == target.table.id) {
                match target.index {
                    None => {
                        let kb = keys::encode_full(&target.levels, &change.key)?;
                        overlay.insert(kb, change.new.clone());
                    }
                    Some(ix) => {
                        if let Some(old) = &change.old {
                            if let Some(e) = index_entry(&catalog, target.table, ix, old)? {
                                overlay.insert(keys::encode_full(&e.levels, &e.key)?, None);
                            }
                        }
                        if let Some(new) = &change.new {
                            if let Some(e) = index_entry(&catalog, target.table, ix, new)? {
                                overlay.insert(
                                    keys::encode_full(&e.levels, &e.key)?,
                                    Some(new.clone()),
                                );
                            }
                        }
                    }
                }
            }
        }
        Ok(RowStream {
            db,
            table: request.table.clone(),
            index: request.index.clone(),
            catalog,
            ts,
            reverse: request.reverse,
            limit: if request.limit == 0 {
                usize::MAX
            } else {
                request.limit
            },
            spans: spans.into(),
            cursor: None,
            buffer: VecDeque::new(),
            chunk: FIRST_CHUNK,
            overlay,
            covered,
            splits: BTreeSet::new(),
            stats: ScanStats::default(),
            failed: false,
        })
    }

    /// The byte spans this stream reads (for locking).
    pub(crate) fn spans(&self) -> impl Iterator<Item = &Span> {
        self.spans.iter()
    }

    /// What the scan did so far.
    pub fn stats(&self) -> ScanStats {
        ScanStats {
            splits_touched: self.splits.len(),
            ..self.stats
        }
    }

    fn project(&self, mut row: Vec<Value>) -> Vec<Value> {
        if let Some(covered) = &self.covered {
            for (i, v) in row.iter_mut().enumerate() {
                if !covered.contains(&i) {
                    *v = Value::Null;
                }
            }
        }
        row
    }

    /// Reads the next chunk into the buffer; false when the scan is done.
    fn refill(&mut self) -> Result<bool> {
        let catalog = self.catalog.clone();
        let target = Target::resolve(&catalog, &self.table, self.index.as_deref())?;
        loop {
            if self.cursor.is_none() {
                match self.spans.pop_front() {
                    None => return Ok(false),
                    Some(Span::Point(key)) => {
                        self.splits
                            .insert(self.db.inner.router.splits().split_for(&key).id);
                        let row = match self.overlay.get(&key) {
                            Some(r) => r.clone(),
                            None => match self.db.inner.router.get(&key, self.ts)? {
                                None => None,
                                Some(value) => {
                                    self.stats.rows_scanned += 1;
                                    match keys::decode_key(&catalog, &key)? {
                                        Some((obj, kv)) if obj == target.object => {
                                            Some(materialize(&target, kv, &value)?)
                                        }
                                        _ => None,
                                    }
                                }
                            },
                        };
                        if let Some(r) = row {
                            let r = self.project(r);
                            self.buffer.push_back(r);
                            return Ok(true);
                        }
                        continue;
                    }
                    Some(Span::Range(r)) => self.cursor = Some(r),
                }
            }
            let (start, end) = self.cursor.clone().expect("set above");
            // Read no more than the limit still needs: a "latest 10" scan
            // reads about 10 keys.
            let still = self
                .limit
                .saturating_sub(self.stats.rows_returned as usize + self.buffer.len());
            let want = self.chunk.min(still.max(1));
            let chunk: Vec<(Vec<u8>, Vec<u8>)> = self
                .db
                .inner
                .router
                .scan(&start, end.as_deref(), self.ts, self.reverse)
                .take(want)
                .collect::<std::result::Result<_, _>>()?;
            self.chunk = (want * 2).min(MAX_CHUNK);
            let exhausted = chunk.len() < want;
            // The part of the range this chunk covers: up to its last key.
            let (lo, hi): (Bound<Vec<u8>>, Bound<Vec<u8>>) =
                match (chunk.last(), self.reverse, exhausted) {
                    (_, false, true) | (None, false, _) => (
                        Bound::Included(start.clone()),
                        end.clone().map_or(Bound::Unbounded, Bound::Excluded),
                    ),
                    (Some((k, _)), false, false) => {
                        (Bound::Included(start.clone()), Bound::Included(k.clone()))
                    }
                    (_, true, true) | (None, true, _) => (
                        Bound::Included(start.clone()),
                        end.clone().map_or(Bound::Unbounded, Bound::Excluded),
                    ),
                    (Some((k, _)), true, false) => (
                        Bound::Included(k.clone()),
                        end.clone().map_or(Bound::Unbounded, Bound::Excluded),
                    ),
                };
            for s in self
                .db
                .inner
                .router
                .splits()
                .route(as_ref(&lo), as_ref(&hi))
            {
                self.splits.insert(s.id);
            }
            // Merge the stored rows with this transaction's rows in the same part.
            let mut merged: BTreeMap<Vec<u8>, Option<Vec<Value>>> = BTreeMap::new();
            for (key, value) in chunk.iter() {
                self.stats.rows_scanned += 1;
                if self.overlay.contains_key(key) {
                    continue;
                }
                if let Some((obj, kv)) = keys::decode_key(&catalog, key)? {
                    if obj == target.object {
                        merged.insert(key.clone(), Some(materialize(&target, kv, value)?));
                    }
                }
            }
            for (k, v) in self.overlay.range((lo.clone(), hi.clone())) {
                merged.insert(k.clone(), v.clone());
            }
            let rows: Vec<Vec<Value>> = if self.reverse {
                merged.into_values().rev().flatten().collect()
            } else {
                merged.into_values().flatten().collect()
            };
            for r in rows {
                let r = self.project(r);
                self.buffer.push_back(r);
            }
            // Advance past this chunk.
            if exhausted || chunk.is_empty() {
                self.cursor = None;
            } else {
                let last = chunk.last().expect("non-empty").0.clone();
                self.cursor = if self.reverse {
                    Some((start, Some(last)))
                } else {
                    match next_key(&last) {
                        k if end.as_ref().is_some_and(|e| &k >= e) => None,
                        k => Some((k, end)),
                    }
                };
            }
            if !self.buffer.is_empty() {
                return Ok(true);
            }
        }
    }
}

fn as_ref(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    match b {
        Bound::Included(k) => Bound::Included(k.as_slice()),
        Bound::Excluded(k) => Bound::Excluded(k.as_slice()),
        Bound::Unbounded => Bound::Unbounded,
    }
}

/// The smallest key greater than `key`.
fn next_key(key: &[u8]) -> Vec<u8> {
    let mut k = key.to_vec();
    k.push(0);
    k
}

fn span_start(s: &Span) -> &[u8] {
    match s {
        Span::Point(k) => k,
        Span::Range((start, _)) => start,
    }
}

impl Iterator for RowStream {
    type Item = Result<Vec<Value>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.stats.rows_returned as usize >= self.limit {
            return None;
        }
        if self.buffer.is_empty() {
            match self.refill() {
                Ok(true) => {}
                Ok(false) => return None,
                Err(e) => {
                    self.failed = true;
                    return Some(Err(e));
                }
            }
        }
        let row = self.buffer.pop_front()?;
        self.stats.rows_returned += 1;
        Some(Ok(row))
    }
}

impl std::fmt::Debug for RowStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowStream")
            .field("table", &self.table)
            .field("index", &self.index)
            .finish()
    }
}
