//! Multi-version concurrency control: every row keeps its recent versions.
//!
//! A write never overwrites a row in place. A transaction that commits at
//! timestamp `ts` adds a *version* of each row it writes, tagged with `ts`; a
//! delete adds a *tombstone* version. A reader picks a read timestamp `t` and
//! sees, for each row, the newest version with timestamp `<= t`: a consistent
//! snapshot of the database as of `t`, without taking locks and without
//! blocking writers. Old versions are removed by garbage collection ([`Mvcc::gc`])
//! once no reader can ask for them.
//!
//! # Layout
//!
//! Versions live in [`Space::Data`]. The stored key is the user (row) key
//! followed by the *inverted* timestamp, so the versions of one row are
//! adjacent and ordered newest first:
//!
//! ```text
//!   stored key                          value
//!   ─────────────────────────────────   ─────────────────
//!   row_key_a ++ be(u64::MAX - 30)      0x01 ++ bytes      ← newest (ts 30)
//!   row_key_a ++ be(u64::MAX - 20)      0x00               ← tombstone (ts 20)
//!   row_key_a ++ be(u64::MAX - 10)      0x01 ++ bytes      ← oldest (ts 10)
//!   row_key_b ++ be(u64::MAX - 25)      0x01 ++ bytes
//! ```
//!
//! Reading row `a` at `t = 25` seeks to `row_key_a ++ be(u64::MAX - 25)`; the
//! first entry at or after it is the newest version with ts `<= 25` (here the
//! tombstone at 20, so the row does not exist at 25).
//!
//! # The head of a row: reads by two point gets
//!
//! In an LSM tree a seek reads a block from every table that overlaps the
//! key, while a get of an exact key skips the tables whose bloom filters say
//! no. So on such an engine ([`Engine::prefers_point_gets`]) each row also
//! has a *head* in [`Space::Heads`], under the plain row key, holding the
//! timestamp of the row's newest version:
//!
//! ```text
//!   Space::Heads:  row_key_a            0x02 ++ be(30)     ← newest is 30
//!                  row_key_b            0x02 ++ be(25)
//! ```
//!
//! [`Mvcc::put_versions`] writes it with every version, in the same batch. A
//! read at `t` first gets the head and, if its timestamp is `<= t`, gets
//! that version by its exact key, both in one snapshot
//! ([`Engine::get_via`]). Otherwise (an older snapshot, a row written before
//! heads existed, a head removed by garbage collection in a race with a
//! writer) the read seeks as above. So a missing head only costs the seek;
//! what must never happen is a head naming a version older than the newest,
//! and that holds because the versions of one row are written in timestamp
//! order: a row's writers are serialised by its lock, and commits take
//! their timestamps in order. Whoever replaces a range's versions wholesale
//! (a replica installing a snapshot) rebuilds the range's heads in the same
//! batch ([`Mvcc::stage_heads`]).
//!
//! Heads live in a space of their own so that scans, which read
//! [`Space::Data`] only, never step over them: interleaved with the
//! versions they made 100-row scans and index lookups a quarter to a half
//! slower. Garbage collection removes a head with the last version of its
//! row. An engine that does not prefer point gets (the memory engine, where
//! a seek and a get are one tree walk each) gets no heads at all.
//!
//! One build (2026-12-02) kept heads in [`Space::Data`], in the slot of the
//! timestamp `u64::MAX` before a row's versions. Such entries are still
//! understood: reads and scans never take one for a version (its timestamp
//! is above every read timestamp, [`MAX_READ_TS`]), and garbage collection
//! removes one with its row's last version.
//!
//! This relies on user keys being *prefix-free*: no user key is a prefix of
//! another (every row key ends with `ROW_END` and row keys are
//! self-delimiting; see `docs/design/contracts.md`). Otherwise the versions of
//! `a` and of a longer key `a ++ x` could interleave.
//!
//! # Scans
//!
//! A scan walks stored keys in order and yields each visible row once,
//! skipping versions newer than the read timestamp, versions older than the
//! visible one, and rows whose visible version is a tombstone. Rows with few
//! versions are skipped by stepping; when a row has many versions the scan
//! re-seeks past them, so its cost stays proportional to the rows it returns
//! plus a small constant per row.

use std::ops::Bound;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::engine::{Durability, Engine, KeyRange, ScanIter, Space, WriteBatch};
use crate::{Error, Result};

/// Value tag of a tombstone (deleted row).
const TAG_TOMBSTONE: u8 = 0;
/// Value tag of a put; the row's bytes follow.
const TAG_PUT: u8 = 1;
/// Value tag of a row's head; the newest version's timestamp follows.
const TAG_HEAD: u8 = 2;
/// The timestamp slot of a head stored among the versions, as one earlier
/// build did (stored as all zero bytes; see the module docs).
const HEAD_TS: u64 = u64::MAX;
/// The newest timestamp a read can ask for: every slot but the last, which
/// an earlier build used for heads stored among the versions.
pub const MAX_READ_TS: u64 = HEAD_TS - 1;
/// Length of the inverted timestamp suffix.
const TS_LEN: usize = 8;
/// After stepping over this many entries of one row, a scan re-seeks instead.
const SEEK_AFTER: usize = 8;
/// Garbage collection writes its deletions in batches of about this many.
const GC_BATCH: usize = 1024;

/// The stored key of the version of `user_key` committed at `ts`.
pub fn version_key(user_key: &[u8], ts: u64) -> Vec<u8> {
    let mut key = Vec::with_capacity(user_key.len() + TS_LEN);
    key.extend_from_slice(user_key);
    key.extend_from_slice(&(u64::MAX - ts).to_be_bytes());
    key
}

/// Splits a stored key into the user key and the version timestamp.
pub fn split_version_key(stored: &[u8]) -> Result<(&[u8], u64)> {
    if stored.len() < TS_LEN {
        return Err(Error::Corrupt(format!(
            "MVCC key of {} bytes has no timestamp",
            stored.len()
        )));
    }
    let (user, suffix) = stored.split_at(stored.len() - TS_LEN);
    let mut inverted = [0u8; TS_LEN];
    inverted.copy_from_slice(suffix);
    Ok((user, u64::MAX - u64::from_be_bytes(inverted)))
}

/// The stored value of a head naming the version at `ts`.
fn head_value(ts: u64) -> [u8; 1 + TS_LEN] {
    let mut value = [0u8; 1 + TS_LEN];
    value[0] = TAG_HEAD;
    value[1..].copy_from_slice(&ts.to_be_bytes());
    value
}

/// Decodes a head's value: the timestamp of the row's newest version.
fn decode_head(value: &[u8]) -> Result<u64> {
    match value.split_first() {
        Some((&TAG_HEAD, rest)) if rest.len() == TS_LEN => {
            let mut ts = [0u8; TS_LEN];
            ts.copy_from_slice(rest);
            Ok(u64::from_be_bytes(ts))
        }
        _ => Err(Error::Corrupt("invalid MVCC row head".into())),
    }
}

/// Decodes a stored version value: `None` for a tombstone.
fn decode_version(value: &[u8]) -> Result<Option<&[u8]>> {
    match value.split_first() {
        Some((&TAG_PUT, rest)) => Ok(Some(rest)),
        Some((&TAG_TOMBSTONE, [])) => Ok(None),
        _ => Err(Error::Corrupt("invalid MVCC version value".into())),
    }
}

/// The last possible stored key of `user_key` (its oldest possible version).
fn last_version_key(user_key: &[u8]) -> Vec<u8> {
    version_key(user_key, 0)
}

/// The MVCC view of an [`Engine`]'s [`Space::Data`]. Cheap to clone; clones
/// share the engine and the garbage collector's position.
#[derive(Clone)]
pub struct Mvcc {
    engine: Arc<dyn Engine>,
    /// Whether rows have heads in [`Space::Heads`]: the engine prefers
    /// point gets (see the module docs).
    heads: bool,
    /// Where the next [`Mvcc::gc`] call resumes (`None`: from the start).
    gc_cursor: Arc<Mutex<Option<Vec<u8>>>>,
}

impl std::fmt::Debug for Mvcc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mvcc").finish_non_exhaustive()
    }
}

/// What one [`Mvcc::gc`] call did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GcStats {
    /// Rows (user keys) whose versions were examined.
    pub keys_examined: u64,
    /// Versions read.
    pub versions_examined: u64,
    /// Versions deleted.
    pub versions_deleted: u64,
    /// Whether this call reached the end of the key space (the next call
    /// starts a new pass from the beginning).
    pub pass_complete: bool,
}

impl Mvcc {
    /// The MVCC layer over `engine`.
    pub fn new(engine: Arc<dyn Engine>) -> Mvcc {
        Mvcc {
            heads: engine.prefers_point_gets(),
            engine,
            gc_cursor: Arc::new(Mutex::new(None)),
        }
    }

    /// The engine underneath (for metadata in [`Space::Meta`] and for writing
    /// batches built with [`Mvcc::put_versions`]).
    pub fn engine(&self) -> &Arc<dyn Engine> {
        &self.engine
    }

    /// Adds to `batch` a version at `ts` of each written row: `Some(bytes)` is
    /// a put, `None` a delete (tombstone); and, on an engine that keeps them,
    /// the row's head, naming it as the newest. The caller writes the batch
    /// with [`Engine::write`].
    ///
    /// `ts` must be greater than every timestamp a reader has already read
    /// at, and than every version of the row already written, also earlier
    /// in `batch` (so the last head in the batch names the newest); and at
    /// most [`MAX_READ_TS`].
    pub fn put_versions<K, V, I>(&self, batch: &mut WriteBatch, ts: u64, writes: I)
    where
        I: IntoIterator<Item = (K, Option<V>)>,
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        debug_assert!(ts <= MAX_READ_TS, "a version at the head's timestamp");
        for (key, value) in writes {
            let key = key.as_ref();
            if self.heads {
                batch.put(Space::Heads, key.to_vec(), head_value(ts));
            }
            let stored = match value {
                Some(v) => {
                    let v = v.as_ref();
                    let mut stored = Vec::with_capacity(v.len() + 1);
                    stored.push(TAG_PUT);
                    stored.extend_from_slice(v);
                    stored
                }
                None => vec![TAG_TOMBSTONE],
            };
            batch.put(Space::Data, version_key(key, ts), stored);
        }
    }

    /// Adds to `batch` what makes the heads of the rows in `ranges` (each
    /// `[start, limit)`, no `limit`: to the end) agree with `stored`, the
    /// versions the ranges will hold, in key order as a scan of
    /// [`Space::Data`] gives them: a head for each row in `stored`, naming
    /// its newest version, and a delete of every other head in the ranges.
    /// For whoever writes ranges' versions wholesale (a replica installing a
    /// snapshot image), in the same batch; nothing on an engine without
    /// heads. No key is both put and deleted, so the batch's order of
    /// operations does not matter.
    pub fn stage_heads<'k>(
        &self,
        batch: &mut WriteBatch,
        ranges: &[(&[u8], Option<&[u8]>)],
        stored: impl IntoIterator<Item = &'k [u8]>,
    ) -> Result<()> {
        if !self.heads {
            return Ok(());
        }
        let mut heads: Vec<(&[u8], u64)> = Vec::new();
        for key in stored {
            let (user_key, ts) = split_version_key(key)?;
            // A row's versions come newest first, after its old-style head.
            if ts == HEAD_TS || heads.last().is_some_and(|(last, _)| *last == user_key) {
                continue;
            }
            heads.push((user_key, ts));
        }
        let kept: std::collections::HashSet<&[u8]> = heads.iter().map(|(k, _)| *k).collect();
        let mut dropped = std::collections::HashSet::new();
        for (start, limit) in ranges {
            let range = KeyRange::new(
                Bound::Included(start.to_vec()),
                limit.map_or(Bound::Unbounded, |l| Bound::Excluded(l.to_vec())),
            );
            for item in self.engine.scan(Space::Heads, range, false) {
                let (key, _) = item?;
                if !kept.contains(key.as_slice()) && dropped.insert(key.clone()) {
                    batch.delete(Space::Heads, key);
                }
            }
        }
        for (user_key, ts) in heads {
            batch.put(Space::Heads, user_key.to_vec(), head_value(ts));
        }
        Ok(())
    }

    /// The row `key` as of `ts`: the newest version with timestamp `<= ts`,
    /// or `None` if there is none or it is a tombstone.
    ///
    /// On an engine with heads, through the row's head when it names a
    /// version at or before `ts` (see the module docs); else one seek.
    pub fn get_at(&self, key: &[u8], ts: u64) -> Result<Option<Vec<u8>>> {
        let ts = ts.min(MAX_READ_TS);
        let engine = self.engine.as_ref();
        if self.heads {
            let newest = engine.get_via(Space::Heads, key, &mut |head| {
                let newest = decode_head(head)?;
                Ok((newest <= ts).then(|| (Space::Data, version_key(key, newest))))
            })?;
            if let Some(value) = newest {
                return Ok(decode_version(&value)?.map(<[u8]>::to_vec));
            }
        }
        Ok(visible_version(engine, key, ts)?.flatten())
    }

    /// The rows with user keys in `[start, end]` (per the bounds) visible at
    /// `ts`, each once, in key order (descending if `reverse`), as
    /// `(user_key, value)`.
    ///
    /// Precondition (true for row keys and for bounds derived from them with
    /// `prefix`/`prefix_end`): no stored user key is a proper prefix of an
    /// `end` bound.
    pub fn scan_at(
        &self,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        ts: u64,
        reverse: bool,
    ) -> MvccScan<'_> {
        MvccScan::new(
            self.engine.as_ref(),
            start,
            end,
            ts.min(MAX_READ_TS),
            reverse,
        )
    }

    /// Garbage-collects versions that no read at a timestamp `>= horizon_ts`
    /// can see, examining about `budget` versions, from where the previous
    /// call stopped (calls go round the key space in passes).
    ///
    /// For each row, let `v0` be its newest version with ts `<= horizon_ts`
    /// (what a read at the horizon sees). Every version older than `v0` is
    /// shadowed by it for all reads at `>= horizon_ts` and is deleted; `v0`
    /// itself is deleted too when it is a tombstone, since with nothing older
    /// left "no version" and "a tombstone" read the same. Versions newer than
    /// the horizon are kept. So after gc, reads at any `ts >= horizon_ts` give
    /// the same results as before; reads below the horizon may not.
    ///
    /// When that leaves a row no version at all, its head goes too, in the
    /// same batch. (A writer may add a version between the scan and the
    /// batch; its head is then deleted with the old one, which costs that
    /// row's reads a seek until it is written again, never a wrong answer.)
    ///
    /// The caller must never commit at a timestamp `<= horizon_ts` after
    /// calling this. The deletions of one row are written in one atomic batch
    /// (so a crash cannot leave an older version uncovered by its tombstone),
    /// without fsync: after a crash, gc simply runs again.
    pub fn gc(&self, horizon_ts: u64, budget: usize) -> Result<GcStats> {
        let horizon_ts = horizon_ts.min(MAX_READ_TS);
        let mut cursor = self.gc_cursor.lock();
        let start = match cursor.take() {
            Some(key) => Bound::Included(key),
            None => Bound::Unbounded,
        };
        let range = KeyRange::new(start, Bound::Unbounded);
        let mut stats = GcStats::default();
        let mut batch = WriteBatch::new();
        // The row being examined, and whether its version visible at the
        // horizon (`v0`) has been seen.
        let mut current: Option<Vec<u8>> = None;
        let mut seen_visible = false;
        let mut pending_tombstone: Option<Vec<u8>> = None;
        // The current row's old-style head (stored among its versions, see
        // the module docs), and whether the row has versions newer than the
        // horizon (which gc keeps, and with them the head).
        let mut head: Option<Vec<u8>> = None;
        let mut kept_newer = false;
        let heads = self.heads;
        // Deletes a row's visible tombstone, and its heads if no version is
        // left.
        let finish_row = |batch: &mut WriteBatch,
                          row: Option<&[u8]>,
                          tombstone: Option<Vec<u8>>,
                          head: Option<Vec<u8>>,
                          kept_newer: bool| {
            if let Some(tombstone) = tombstone {
                batch.delete(Space::Data, tombstone);
                if !kept_newer {
                    if let Some(head) = head {
                        batch.delete(Space::Data, head);
                    }
                    if let (true, Some(row)) = (heads, row) {
                        batch.delete(Space::Heads, row.to_vec());
                    }
                }
            }
        };

        let mut finished = true;
        for item in self.engine.scan(Space::Data, range, false) {
            let (stored, value) = item?;
            let (user_key, version_ts) = split_version_key(&stored)?;
            if current.as_deref() != Some(user_key) {
                // A row boundary: the only place to stop or flush, so a row's
                // deletions always go out together.
                finish_row(
                    &mut batch,
                    current.as_deref(),
                    pending_tombstone.take(),
                    head.take(),
                    kept_newer,
                );
                if stats.keys_examined > 0 && stats.versions_examined >= budget as u64 {
                    *cursor = Some(user_key.to_vec());
                    finished = false;
                    break;
                }
                if batch.len() >= GC_BATCH {
                    let full = std::mem::take(&mut batch);
                    self.engine.write(full, Durability::Buffered)?;
                }
                current = Some(user_key.to_vec());
                seen_visible = false;
                kept_newer = false;
                stats.keys_examined += 1;
            }
            if version_ts == HEAD_TS {
                head = Some(stored);
                continue;
            }
            stats.versions_examined += 1;
            if version_ts > horizon_ts {
                kept_newer = true;
                continue;
            }
            if seen_visible {
                batch.delete(Space::Data, stored);
                stats.versions_deleted += 1;
            } else {
                seen_visible = true;
                if decode_version(&value)?.is_none() {
                    // Deleted after every older version of the row, in the
                    // same batch.
                    pending_tombstone = Some(stored);
                    stats.versions_deleted += 1;
                }
            }
        }
        finish_row(
            &mut batch,
            current.as_deref(),
            pending_tombstone.take(),
            head.take(),
            kept_newer,
        );
        stats.pass_complete = finished;
        if !batch.is_empty() {
            self.engine.write(batch, Durability::Buffered)?;
        }
        Ok(stats)
    }
}

/// The version of `key` visible at `ts`: `None` if there is none,
/// `Some(None)` for a tombstone, `Some(Some(bytes))` for a put.
fn visible_version(engine: &dyn Engine, key: &[u8], ts: u64) -> Result<Option<Option<Vec<u8>>>> {
    let range = || {
        KeyRange::new(
            Bound::Included(version_key(key, ts)),
            Bound::Included(last_version_key(key)),
        )
    };
    // Usually the first stored key in the range is the version sought: one
    // seek. Only when it is a longer key (user keys that are not
    // prefix-free) does the range have to be walked.
    match engine.first(Space::Data, range())? {
        None => return Ok(None),
        Some((stored, value)) if stored.len() == key.len() + TS_LEN => {
            return Ok(Some(decode_version(&value)?.map(<[u8]>::to_vec)));
        }
        Some(_) => {}
    }
    for item in engine.scan(Space::Data, range(), false) {
        let (stored, value) = item?;
        // Only an exact-length key is a version of `key` (the range can hold
        // longer keys only if user keys are not prefix-free).
        if stored.len() == key.len() + TS_LEN {
            return Ok(Some(decode_version(&value)?.map(<[u8]>::to_vec)));
        }
    }
    Ok(None)
}

/// Iterator of [`Mvcc::scan_at`]: each visible row once, as
/// `(user_key, value)`.
pub struct MvccScan<'a> {
    engine: &'a dyn Engine,
    ts: u64,
    reverse: bool,
    /// The user-key range asked for; stored keys are filtered against it.
    user_range: KeyRange,
    /// The stored-key range not yet read by `inner`.
    stored_range: KeyRange,
    inner: ScanIter<'a>,
    /// The row whose versions are being read.
    current: Option<Vec<u8>>,
    /// Forward: whether `current`'s visible version has been found.
    decided: bool,
    /// Reverse: `current`'s newest version with ts `<= self.ts` seen so far.
    visible: Option<Option<Vec<u8>>>,
    /// Entries of `current` read by stepping.
    run: usize,
    /// Versions read from the engine, for tests of scan cost.
    versions_read: u64,
    done: bool,
}

impl<'a> MvccScan<'a> {
    fn new(
        engine: &'a dyn Engine,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        ts: u64,
        reverse: bool,
    ) -> MvccScan<'a> {
        let user_range = KeyRange::new(start.map(<[u8]>::to_vec), end.map(<[u8]>::to_vec));
        // Every version of a user key `k` lies in `[k, last_version_key(k)]`.
        let stored_start = match start {
            Bound::Included(k) | Bound::Excluded(k) => Bound::Included(k.to_vec()),
            Bound::Unbounded => Bound::Unbounded,
        };
        let stored_end = match end {
            Bound::Included(k) => Bound::Included(last_version_key(k)),
            Bound::Excluded(k) => Bound::Excluded(k.to_vec()),
            Bound::Unbounded => Bound::Unbounded,
        };
        let stored_range = KeyRange::new(stored_start, stored_end);
        let inner = engine.scan(Space::Data, stored_range.clone(), reverse);
        MvccScan {
            engine,
            ts,
            reverse,
            user_range,
            stored_range,
            inner,
            current: None,
            decided: false,
            visible: None,
            run: 0,
            versions_read: 0,
            done: false,
        }
    }

    /// How many stored versions this scan has read from the engine so far.
    pub fn versions_read(&self) -> u64 {
        self.versions_read
    }

    fn reseek(&mut self) {
        self.inner = self
            .engine
            .scan(Space::Data, self.stored_range.clone(), self.reverse);
        self.run = 0;
    }

    fn next_forward(&mut self) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        loop {
            let Some(item) = self.inner.next() else {
                return Ok(None);
            };
            let (mut stored, mut value) = item?;
            self.versions_read += 1;
            let (user_key, version_ts) = split_version_key(&stored)?;
            if self.current.as_deref() == Some(user_key) {
                self.run += 1;
            } else {
                // The buffer of the previous row is reused: no allocation
                // per row once it has grown to the longest key.
                match &mut self.current {
                    Some(c) => {
                        c.clear();
                        c.extend_from_slice(user_key);
                    }
                    None => self.current = Some(user_key.to_vec()),
                }
                self.run = 1;
                // Keys outside the user range are skipped like decided rows.
                self.decided = !self.user_range.contains(user_key);
            }
            if self.decided || version_ts > self.ts {
                if self.run >= SEEK_AFTER {
                    // Jump over the rest of this row's versions, or straight to
                    // its version visible at `ts`.
                    let target = if self.decided {
                        Bound::Excluded(last_version_key(user_key))
                    } else {
                        Bound::Included(version_key(user_key, self.ts))
                    };
                    self.stored_range.start = target;
                    self.reseek();
                }
                continue;
            }
            self.decided = true;
            if let Some(row) = decode_version(&value)? {
                // The engine's pair becomes the row: the version suffix cut
                // off the key and the header off the value, without copying
                // either into a new allocation.
                let header = value.len() - row.len();
                let user_len = user_key.len();
                stored.truncate(user_len);
                value.drain(..header);
                return Ok(Some((stored, value)));
            }
        }
    }

    /// Ends the current row in a reverse scan: its visible version, if a put.
    fn finish_reverse_row(&mut self) -> Option<(Vec<u8>, Vec<u8>)> {
        let key = self.current.take()?;
        match self.visible.take() {
            Some(Some(value)) => Some((key, value)),
            _ => None,
        }
    }

    fn next_reverse(&mut self) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        loop {
            let Some(item) = self.inner.next() else {
                return Ok(self.finish_reverse_row());
            };
            let (stored, value) = item?;
            self.versions_read += 1;
            let (user_key, version_ts) = split_version_key(&stored)?;
            // Versions of a row arrive oldest first; the last one with
            // ts <= self.ts before the row ends is the visible one.
            let mut finished = None;
            if self.current.as_deref() == Some(user_key) {
                self.run += 1;
            } else {
                finished = self.finish_reverse_row();
                self.current = Some(user_key.to_vec());
                self.run = 1;
            }
            if self.user_range.contains(user_key) {
                if version_ts <= self.ts {
                    self.visible = Some(decode_version(&value)?.map(<[u8]>::to_vec));
                }
                if self.run >= SEEK_AFTER {
                    // Many versions: look the visible one up directly, then
                    // continue below this row.
                    self.visible = visible_version(self.engine, user_key, self.ts)?;
                    self.stored_range.end = Bound::Excluded(user_key.to_vec());
                    self.reseek();
                }
            } else if self.run >= SEEK_AFTER {
                self.stored_range.end = Bound::Excluded(user_key.to_vec());
                self.reseek();
            }
            if finished.is_some() {
                return Ok(finished);
            }
        }
    }
}

impl Iterator for MvccScan<'_> {
    type Item = Result<(Vec<u8>, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let next = if self.reverse {
            self.next_reverse()
        } else {
            self.next_forward()
        };
        match next {
            Ok(Some(row)) => Some(Ok(row)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}
