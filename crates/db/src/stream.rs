//! Streaming scans: the rows of a key set, read in key order in chunks.
//!
//! A [`RowStream`] walks the byte ranges of a [`ScanRequest`] through the
//! split router, a chunk at a time (64 keys, growing to 1,024), so a scan of
//! millions of rows holds one chunk in memory. Inside a read-write
//! transaction the stream also merges the transaction's own DML writes: rows
//! it inserted, updated or deleted (and, for index scans, the index entries
//! those rows imply), so a statement sees the statements before it.
//!
//! A *tree scan* ([`TreeScanRequest`], [`TreeStream`]) reads a table's key
//! ranges widened to whole row trees, once, and returns the table's rows
//! together with the rows of chosen interleaved descendant tables, each
//! tagged with its table, in key order: a parent row is followed by its
//! descendants. A join of a parent with its interleaved child reads each
//! row tree once this way instead of scanning the same keys twice.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::ops::Bound;
use std::sync::Arc;

use rowtree_encoding::{decode_key_value, prefix_end, ROW_END};
use rowtree_kv::SplitId;
use rowtree_schema::{Catalog, ColumnId, TableId};
use rowtree_types::Value;

use crate::database::Database;
use crate::error::{Error, Result};
use crate::keys;
use crate::keys::Level;
use crate::mutation::{Key, KeySet};
use crate::overlay::TxnWrites;
use crate::read::ReadRequest;
use crate::row::{assemble, index_entry};
use crate::target::{Span, Target};

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
    /// Resume a scan: read only the keys that come after this full key of
    /// the table (or index) in scan order. Partitioned DML reads a table
    /// one partition at a time this way, each starting where the last
    /// stopped, without reading the partitions before it again.
    pub after: Option<Key>,
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
            after: None,
        }
    }
}

/// A scan of whole row trees: the rows of `table` whose keys are in
/// `key_set`, each followed (in key order) by the rows of the `include`
/// tables (interleaved descendants of `table`, at any depth) in its row
/// tree. A point key or key prefix of `table` reads the whole row tree under
/// it; a range reads the row trees of the keys in the range. Keys of other
/// tables in the same row trees (sibling children, interleaved indexes,
/// descendants not included) are read once and skipped.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeScanRequest {
    pub table: String,
    /// Descendant tables whose rows are returned too.
    pub include: Vec<String>,
    pub key_set: KeySet,
    /// Descending key order (children then come before their parent).
    pub reverse: bool,
    /// Stop after this many rows of any table (0 = no limit).
    pub limit: usize,
}

impl TreeScanRequest {
    /// A forward scan of the row trees of `table` over `key_set`, returning
    /// the rows of `table` and of `include`.
    pub fn new(table: &str, include: &[&str], key_set: KeySet) -> TreeScanRequest {
        TreeScanRequest {
            table: table.to_string(),
            include: include.iter().map(|t| t.to_string()).collect(),
            key_set,
            reverse: false,
            limit: 0,
        }
    }
}

/// A row of a tree scan, with the table it belongs to.
#[derive(Debug, Clone, PartialEq)]
pub struct TaggedRow {
    /// Which table of the request: 0 is [`TreeScanRequest::table`], `i > 0`
    /// is `include[i - 1]`.
    pub source: usize,
    /// The id of that table.
    pub table_id: TableId,
    /// The table-shaped row (indexed by the table's column positions).
    pub row: Vec<Value>,
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
    /// The scanned table (or index) first, then the descendant tables a
    /// tree scan returns too (their rows are tagged with their position
    /// here), resolved once when the stream opens.
    targets: Vec<Decoder>,
    /// Read requests: the table columns each returned row holds, in order.
    projection: Option<Projection>,
    ts: u64,
    reverse: bool,
    limit: usize,
    /// Ranges still to read, in scan order.
    spans: VecDeque<Span>,
    /// For the range in progress: the bounds still to read.
    cursor: Option<(Vec<u8>, Option<Vec<u8>>)>,
    /// Rows read and not yet returned, with the table they belong to.
    buffer: VecDeque<(usize, Vec<Value>)>,
    chunk: usize,
    /// This transaction's own rows/entries by key (None = deleted), with
    /// the table they belong to.
    overlay: BTreeMap<Vec<u8>, Option<(usize, Vec<Value>)>>,
    /// Positions of the columns the target holds (index scans).
    covered: Option<Vec<usize>>,
    splits: BTreeSet<SplitId>,
    stats: ScanStats,
    failed: bool,
}

/// A target of a stream, resolved against the schema once when the stream
/// opens and owned by it: what turning a stored key and value into a
/// table-shaped row needs.
struct Decoder {
    table_id: TableId,
    levels: Vec<Level>,
    /// For each key position: the table column it holds.
    key_columns: Vec<usize>,
    /// The table's column ids, in column order.
    column_ids: Vec<ColumnId>,
    /// By column position, the stored columns a read asks for (`None`:
    /// all); the others are not decoded.
    wanted: Option<Vec<bool>>,
}

impl Decoder {
    fn new(target: Target<'_>) -> Decoder {
        Decoder {
            table_id: target.table.id,
            column_ids: target.table.columns.iter().map(|c| c.id).collect(),
            levels: target.levels,
            key_columns: target.key_columns,
            wanted: None,
        }
    }

    fn materialize(&self, key_values: Vec<Value>, value: &[u8]) -> Result<Vec<Value>> {
        let ids = &self.column_ids;
        assemble(
            ids.len(),
            |id| ids.iter().position(|&c| c == id),
            self.wanted.as_deref(),
            &self.key_columns,
            key_values,
            value,
        )
    }
}

/// The columns a read returns, by table position.
struct Projection {
    columns: Vec<usize>,
    /// No column is asked for twice, so values can be moved out of the
    /// table-shaped row instead of cloned.
    distinct: bool,
    /// The columns are asked for in table order (strictly increasing
    /// positions), so the row's own buffer can hold the projection.
    increasing: bool,
}

impl Projection {
    fn new(columns: Vec<usize>) -> Projection {
        let distinct = columns
            .iter()
            .enumerate()
            .all(|(i, c)| !columns[..i].contains(c));
        let increasing = columns.windows(2).all(|w| w[0] < w[1]);
        Projection {
            columns,
            distinct,
            increasing,
        }
    }

    fn apply(&self, mut row: Vec<Value>) -> Vec<Value> {
        if self.increasing {
            // Position `columns[i] >= i` is untouched by the swaps before
            // it (they write positions below `i` and other asked columns),
            // so it still holds its column: move it down, and drop the rest.
            for (i, &p) in self.columns.iter().enumerate() {
                row.swap(i, p);
            }
            row.truncate(self.columns.len());
            row
        } else if self.distinct {
            self.columns
                .iter()
                .map(|&p| std::mem::replace(&mut row[p], Value::Null))
                .collect()
        } else {
            self.columns.iter().map(|&p| row[p].clone()).collect()
        }
    }
}

/// What a stream reads, before it is resolved against the schema.
struct Spec<'r> {
    table: &'r str,
    index: Option<&'r str>,
    include: &'r [String],
    key_set: &'r KeySet,
    reverse: bool,
    limit: usize,
    /// Only keys after this one, in scan order (see [`ScanRequest::after`]).
    after: Option<&'r Key>,
    /// Read whole row trees (a tree scan).
    tree: bool,
    /// Return only these columns, in this order (a read request).
    columns: Option<&'r [String]>,
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
        let spec = Spec {
            table: &request.table,
            index: request.index.as_deref(),
            include: &[],
            key_set: &request.key_set,
            reverse: request.reverse,
            limit: request.limit,
            after: request.after.as_ref(),
            tree: false,
            columns: None,
        };
        RowStream::open_spec(db, catalog, spec, ts, writes)
    }

    /// Opens the stream of a read request at `ts`: its rows hold the
    /// requested columns, in the requested order. Unknown columns (or
    /// columns an index does not store) are refused here, before anything
    /// is read or locked.
    pub(crate) fn open_read(
        db: Database,
        catalog: Arc<Catalog>,
        request: &ReadRequest,
        ts: u64,
        writes: Option<&TxnWrites>,
    ) -> Result<RowStream> {
        let spec = Spec {
            table: &request.table,
            index: request.index.as_deref(),
            include: &[],
            key_set: &request.key_set,
            reverse: false,
            limit: request.limit,
            after: None,
            tree: false,
            columns: Some(&request.columns),
        };
        RowStream::open_spec(db, catalog, spec, ts, writes)
    }

    fn open_spec(
        db: Database,
        catalog: Arc<Catalog>,
        spec: Spec<'_>,
        ts: u64,
        writes: Option<&TxnWrites>,
    ) -> Result<RowStream> {
        let tree = spec.tree;
        let targets = resolve_targets(&catalog, spec.table, spec.index, spec.include)?;
        let target = &targets[0];
        let projection = match spec.columns {
            None => None,
            Some(names) => Some(Projection::new(target.project(names)?)),
        };
        let mut spans: Vec<Span> = target.ranges(spec.key_set)?;
        if tree {
            // Widen every key to its whole row tree; a range of keys already
            // covers the row trees of the keys it holds.
            for span in spans.iter_mut() {
                if let Span::Point(key) = span {
                    // A full key is its row tree's prefix followed by ROW_END.
                    let prefix = key[..key.len() - 1].to_vec();
                    let end = prefix_end(&prefix);
                    *span = Span::Range((prefix, end));
                }
            }
        }
        if let Some(after) = spec.after {
            let at = keys::encode_full(&target.levels, &target.coerce_key(after)?)?;
            spans = clamp_after(spans, &at, spec.reverse);
        }
        // Key order of the spans, so the stream is in key order overall.
        spans.sort_by(|a, b| span_start(a).cmp(span_start(b)));
        if tree {
            // Each key is read once even when row trees of the key set overlap.
            spans = coalesce(spans);
        }
        if spec.reverse {
            spans.reverse();
        }
        let covered = target.index.map(|ix| {
            let mut c = target.key_columns.clone();
            c.extend(ix.storing.iter().copied());
            c
        });
        let mut overlay = BTreeMap::new();
        if let Some(w) = writes {
            for (tag, target) in targets.iter().enumerate() {
                for change in w.rows.values().filter(|c| c.table == target.table.id) {
                    match target.index {
                        None => {
                            let kb = keys::encode_full(&target.levels, &change.key)?;
                            overlay.insert(kb, change.new.clone().map(|r| (tag, r)));
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
                                        Some((tag, new.clone())),
                                    );
                                }
                            }
                        }
                    }
                }
            }
        }
        let mut decoders: Vec<Decoder> = targets.into_iter().map(Decoder::new).collect();
        // A projected read decodes only the columns it returns.
        if let Some(p) = &projection {
            let mut wanted = vec![false; decoders[0].column_ids.len()];
            for &c in &p.columns {
                wanted[c] = true;
            }
            decoders[0].wanted = Some(wanted);
        }
        Ok(RowStream {
            db,
            catalog,
            targets: decoders,
            projection,
            ts,
            reverse: spec.reverse,
            limit: if spec.limit == 0 {
                usize::MAX
            } else {
                spec.limit
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

    /// The names of the tables the stream returns rows of (for Debug).
    fn table_names(&self) -> Vec<&str> {
        self.targets
            .iter()
            .filter_map(|t| self.catalog.table_by_id(t.table_id))
            .map(|t| t.name.as_str())
            .collect()
    }

    /// What the scan did so far.
    pub fn stats(&self) -> ScanStats {
        ScanStats {
            splits_touched: self.splits.len(),
            ..self.stats
        }
    }

    fn project(&self, tag: usize, mut row: Vec<Value>) -> Vec<Value> {
        if tag == 0 {
            if let Some(projection) = &self.projection {
                return projection.apply(row);
            }
            if let Some(covered) = &self.covered {
                for (i, v) in row.iter_mut().enumerate() {
                    if !covered.contains(&i) {
                        *v = Value::Null;
                    }
                }
            }
        }
        row
    }

    /// The next row with the table it belongs to (0 = the scanned table,
    /// `i > 0` = the `i`-th included table).
    pub fn next_tagged(&mut self) -> Option<Result<TaggedRow>> {
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
        let (source, row) = self.buffer.pop_front()?;
        self.stats.rows_returned += 1;
        Some(Ok(TaggedRow {
            source,
            table_id: self.targets[source].table_id,
            row,
        }))
    }

    /// Reads the next chunk into the buffer; false when the scan is done.
    fn refill(&mut self) -> Result<bool> {
        loop {
            if self.cursor.is_none() {
                match self.spans.pop_front() {
                    None => return Ok(false),
                    Some(Span::Point(key)) => {
                        let row = match self.overlay.get(&key) {
                            Some(r) => {
                                self.splits
                                    .insert(self.db.inner.router.splits().split_for(&key).id);
                                r.clone()
                            }
                            None => match self.db.inner.router.get_from(&key, self.ts)? {
                                (split, None) => {
                                    self.splits.insert(split);
                                    None
                                }
                                (split, Some(value)) => {
                                    self.splits.insert(split);
                                    self.stats.rows_scanned += 1;
                                    match decode_for(&self.targets[..1], &key)? {
                                        Some((tag, kv)) => {
                                            Some((tag, self.targets[tag].materialize(kv, &value)?))
                                        }
                                        None => None,
                                    }
                                }
                            },
                        };
                        if let Some((tag, r)) = row {
                            let r = self.project(tag, r);
                            self.buffer.push_back((tag, r));
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
            self.chunk = (want * 2).min(MAX_CHUNK);
            // Without DML of this transaction to merge (every read outside a
            // read-write transaction's DML), the stored rows are already in
            // scan order and go to the buffer as they are read; only the last
            // key is kept, to resume from. With some, the chunk's pairs are
            // kept and merged below.
            let merge = !self.overlay.is_empty();
            let mut chunk: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
            let (mut read, mut last) = (0, None);
            let router = &self.db.inner.router;
            for pair in router
                .scan(&start, end.as_deref(), self.ts, self.reverse)
                .limit(want)
            {
                let (key, value) = pair?;
                read += 1;
                if merge {
                    chunk.push((key, value));
                    continue;
                }
                self.stats.rows_scanned += 1;
                if let Some((tag, kv)) = decode_for(&self.targets, &key)? {
                    let row = self.targets[tag].materialize(kv, &value)?;
                    let row = self.project(tag, row);
                    self.buffer.push_back((tag, row));
                }
                last = Some(key);
            }
            if merge {
                last = chunk.last().map(|(k, _)| k.clone());
            }
            let exhausted = read < want;
            let (lo, hi) = chunk_bounds(&start, &end, last.as_ref(), self.reverse, exhausted);
            for s in router.splits().route(as_ref(&lo), as_ref(&hi)) {
                self.splits.insert(s.id);
            }
            if merge {
                self.merge_chunk(&chunk, lo, hi)?;
            }
            // Advance past this chunk.
            self.cursor = match last {
                Some(last) if !exhausted => {
                    if self.reverse {
                        Some((start, Some(last)))
                    } else {
                        match next_key(&last) {
                            k if end.as_ref().is_some_and(|e| &k >= e) => None,
                            k => Some((k, end)),
                        }
                    }
                }
                _ => None,
            };
            if !self.buffer.is_empty() {
                return Ok(true);
            }
        }
    }

    /// Adds the rows of `chunk` (stored pairs of the part `[lo, hi]` of a
    /// range) to the buffer merged with this transaction's own rows in that
    /// part, in scan order.
    fn merge_chunk(
        &mut self,
        chunk: &[(Vec<u8>, Vec<u8>)],
        lo: Bound<Vec<u8>>,
        hi: Bound<Vec<u8>>,
    ) -> Result<()> {
        let mut merged: BTreeMap<Vec<u8>, Option<(usize, Vec<Value>)>> = BTreeMap::new();
        for (key, value) in chunk.iter() {
            self.stats.rows_scanned += 1;
            if self.overlay.contains_key(key) {
                continue;
            }
            if let Some((tag, kv)) = decode_for(&self.targets, key)? {
                let row = self.targets[tag].materialize(kv, value)?;
                merged.insert(key.clone(), Some((tag, row)));
            }
        }
        for (k, v) in self.overlay.range((lo, hi)) {
            merged.insert(k.clone(), v.clone());
        }
        let rows: Vec<(usize, Vec<Value>)> = if self.reverse {
            merged.into_values().rev().flatten().collect()
        } else {
            merged.into_values().flatten().collect()
        };
        for (tag, r) in rows {
            let r = self.project(tag, r);
            self.buffer.push_back((tag, r));
        }
        Ok(())
    }
}

/// The part of the range `[start, end)` a chunk covered: up to its `last`
/// key, or all of the range when the chunk was the range's end (`exhausted`)
/// or empty. Reverse scans cover from their last key to the end.
fn chunk_bounds(
    start: &[u8],
    end: &Option<Vec<u8>>,
    last: Option<&Vec<u8>>,
    reverse: bool,
    exhausted: bool,
) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
    let to_end = || end.clone().map_or(Bound::Unbounded, Bound::Excluded);
    match (last, reverse, exhausted) {
        (Some(k), false, false) => (Bound::Included(start.to_vec()), Bound::Included(k.clone())),
        (Some(k), true, false) => (Bound::Included(k.clone()), to_end()),
        _ => (Bound::Included(start.to_vec()), to_end()),
    }
}

/// The targets of a stream: the scanned table (or index) first, then the
/// included descendant tables, checked to be interleaved in it.
fn resolve_targets<'c>(
    catalog: &'c Catalog,
    table: &str,
    index: Option<&str>,
    include: &[String],
) -> Result<Vec<Target<'c>>> {
    let first = Target::resolve(catalog, table, index)?;
    if !include.is_empty() && index.is_some() {
        return Err(Error::invalid(
            "A tree scan reads a table's row trees, not an index",
        ));
    }
    let root = first.table.id;
    let mut targets = vec![first];
    for name in include {
        let t = Target::resolve(catalog, name, None)?;
        if !catalog.ancestors(t.table.id).iter().any(|a| a.id == root) {
            return Err(Error::invalid(format!(
                "Table {} is not interleaved in {table}",
                t.table.name
            )));
        }
        if targets.iter().any(|x| x.object == t.object) {
            return Err(Error::invalid(format!(
                "Table {} is included twice in the tree scan",
                t.table.name
            )));
        }
        targets.push(t);
    }
    Ok(targets)
}

/// Which target a stored key belongs to, with its key values: the key must
/// follow the target's levels exactly (each level's object marker, then its
/// key columns) and end there. Keys of other objects sharing the range (a
/// parent, siblings, interleaved indexes, dropped objects) give `None`.
/// This is [`keys::decode_key`] specialised to the few objects a scan
/// returns, without looking each key's objects up in the schema.
fn decode_for(targets: &[Decoder], key: &[u8]) -> Result<Option<(usize, Vec<Value>)>> {
    'targets: for (tag, target) in targets.iter().enumerate() {
        let mut input = key;
        let mut values = Vec::with_capacity(target.key_columns.len());
        for level in &target.levels {
            match input.strip_prefix(level.prefix.as_slice()) {
                Some(rest) => input = rest,
                None => continue 'targets,
            }
            for (ty, dir) in &level.columns {
                values.push(decode_key_value(&mut input, ty, *dir)?);
            }
        }
        if input == [ROW_END] {
            return Ok(Some((tag, values)));
        }
    }
    Ok(None)
}

/// Merges sorted byte ranges that overlap or touch, so no key is read twice.
fn coalesce(spans: Vec<Span>) -> Vec<Span> {
    let mut out: Vec<Span> = Vec::with_capacity(spans.len());
    for span in spans {
        if let (Some(Span::Range((_, last_end))), Span::Range((start, end))) =
            (out.last_mut(), &span)
        {
            // `None` is the end of the key space.
            let overlaps = last_end.as_ref().is_none_or(|e| start <= e);
            if overlaps {
                let wider = match (&*last_end, end) {
                    (None, _) | (_, None) => None,
                    (Some(a), Some(b)) => Some(a.max(b).clone()),
                };
                *last_end = wider;
                continue;
            }
        }
        out.push(span);
    }
    out
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

/// The parts of `spans` after the encoded key `at` in scan order: above it
/// for a forward scan, below it for a reverse one.
fn clamp_after(spans: Vec<Span>, at: &[u8], reverse: bool) -> Vec<Span> {
    // The least byte string greater than `at`.
    let mut next = at.to_vec();
    next.push(0);
    spans
        .into_iter()
        .filter_map(|span| match span {
            Span::Point(k) => {
                let keep = if reverse {
                    k.as_slice() < at
                } else {
                    k.as_slice() > at
                };
                keep.then_some(Span::Point(k))
            }
            Span::Range((start, end)) => {
                let (start, end) = if reverse {
                    let end = match end {
                        Some(e) if e.as_slice() <= at => e,
                        _ => at.to_vec(),
                    };
                    (start, Some(end))
                } else {
                    (start.max(next.clone()), end)
                };
                let empty = end.as_ref().is_some_and(|e| *e <= start);
                (!empty).then_some(Span::Range((start, end)))
            }
        })
        .collect()
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
        self.next_tagged().map(|r| r.map(|t| t.row))
    }
}

/// The rows of a tree scan ([`TreeScanRequest`]), each tagged with its
/// table, in key order: a row of the scanned table is followed by the rows
/// of the included tables in its row tree.
pub struct TreeStream {
    inner: RowStream,
}

impl TreeStream {
    /// Opens a tree scan at `ts`; `writes` are the transaction's own writes.
    pub(crate) fn open(
        db: Database,
        catalog: Arc<Catalog>,
        request: &TreeScanRequest,
        ts: u64,
        writes: Option<&TxnWrites>,
    ) -> Result<TreeStream> {
        let spec = Spec {
            table: &request.table,
            index: None,
            include: &request.include,
            key_set: &request.key_set,
            reverse: request.reverse,
            limit: request.limit,
            after: None,
            tree: true,
            columns: None,
        };
        let inner = RowStream::open_spec(db, catalog, spec, ts, writes)?;
        Ok(TreeStream { inner })
    }

    /// The byte spans this stream reads (for locking).
    pub(crate) fn spans(&self) -> impl Iterator<Item = &Span> {
        self.inner.spans()
    }

    /// What the scan did so far (each key read counts once).
    pub fn stats(&self) -> ScanStats {
        self.inner.stats()
    }
}

impl Iterator for TreeStream {
    type Item = Result<TaggedRow>;

    fn next(&mut self) -> Option<Self::Item> {
        self.inner.next_tagged()
    }
}

impl std::fmt::Debug for TreeStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TreeStream")
            .field("tables", &self.inner.table_names())
            .finish()
    }
}

impl std::fmt::Debug for RowStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowStream")
            .field("tables", &self.table_names())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every projection of a 5-column row (every length up to 6, every
    /// order, repeats included) gives the columns asked for, in the order
    /// asked, whichever way it is applied.
    #[test]
    fn projections_pick_the_asked_columns_in_the_asked_order() {
        let row: Vec<Value> = (0..5).map(Value::Int64).collect();
        fn each(len: usize, out: &mut Vec<Vec<usize>>, prefix: &mut Vec<usize>) {
            if prefix.len() == len {
                out.push(prefix.clone());
                return;
            }
            for c in 0..5 {
                prefix.push(c);
                each(len, out, prefix);
                prefix.pop();
            }
        }
        let mut all = Vec::new();
        for len in 0..=6 {
            each(len, &mut all, &mut Vec::new());
        }
        let mut increasing = 0;
        for columns in all {
            let expected: Vec<Value> = columns.iter().map(|&c| row[c].clone()).collect();
            let projection = Projection::new(columns.clone());
            increasing += usize::from(projection.increasing);
            assert_eq!(projection.apply(row.clone()), expected, "{columns:?}");
        }
        // The in-place path was taken (every subset of 5 columns, in order).
        assert_eq!(increasing, 32);
    }
}
