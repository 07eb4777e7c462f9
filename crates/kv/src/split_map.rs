//! [`SplitMap`]: the current cut of the key space into splits.
//!
//! Invariant: the splits, ordered by start key, cover the whole key space
//! exactly once. The first starts at the empty key, each split's limit is the
//! next split's start, and the last has no limit:
//!
//! ```text
//!   ""            k1             k2                        (no limit)
//!   ├─ split 1 ───┼─ split 4 ────┼─ split 5 ──────────────────────────▶
//! ```
//!
//! Changes: [`SplitMap::add_split_point`] (and `_on`, `_at`) cuts a split
//! in two, [`SplitMap::merge`] joins two neighbours, both replacing the
//! splits involved by new ones (new ids, fresh counters and load trackers
//! stamped with the time); [`SplitMap::set_node`] moves a split to another
//! node in place (the node is an atomic, so routing sees it at once).
//!
//! The map is state worth keeping across a restart: [`SplitMap::to_record`]
//! and [`SplitMap::restore`] convert it to and from its durable form
//! ([`SplitsRecord`], see [`crate::persist`]), and [`SplitMap::generation`]
//! counts its changes so a caller can tell when to save it again.
//!
//! Reads are frequent and changes are rare, so the list is an immutable
//! `Arc<Vec<Arc<Split>>>` swapped under a lock (copy on write): a reader
//! clones the `Arc` and routes without holding any lock, and a request that
//! resolved its splits keeps charging them even if they are cut meanwhile.

use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::RwLock;

use crate::persist::{SplitRecord, SplitsRecord, SPLITS_RECORD_VERSION};
use crate::split::{NodeId, Split, SplitId};
use crate::Result;

/// The splits of the key space.
#[derive(Debug)]
pub struct SplitMap {
    splits: RwLock<Arc<Vec<Arc<Split>>>>,
    next_id: AtomicU64,
    /// The latest time the map was told about ([`SplitMap::observe_time`]):
    /// the creation time of splits made without an explicit time.
    now: AtomicU64,
    /// Changes so far (cuts, merges, moves, restores).
    generation: AtomicU64,
}

impl Default for SplitMap {
    fn default() -> Self {
        SplitMap::new()
    }
}

impl SplitMap {
    /// One split covering the whole key space, on node 0.
    pub fn new() -> SplitMap {
        let first = Arc::new(Split::new(SplitId(1), Vec::new(), None, NodeId(0)));
        SplitMap {
            splits: RwLock::new(Arc::new(vec![first])),
            next_id: AtomicU64::new(2),
            now: AtomicU64::new(0),
            generation: AtomicU64::new(0),
        }
    }

    /// Tells the map the time (monotonic: an earlier time is ignored). New
    /// splits made by the methods without a `now` are stamped with it.
    pub fn observe_time(&self, now: u64) {
        self.now.fetch_max(now, Ordering::Relaxed);
    }

    /// The latest time observed.
    pub fn time(&self) -> u64 {
        self.now.load(Ordering::Relaxed)
    }

    /// A map cut at each of `points`.
    pub fn with_split_points<I>(points: I) -> SplitMap
    where
        I: IntoIterator,
        I::Item: AsRef<[u8]>,
    {
        let map = SplitMap::new();
        for point in points {
            map.add_split_point(point.as_ref());
        }
        map
    }

    /// Cuts the split containing `key` into `[start, key)` and `[key, limit)`.
    /// Returns `false` (and changes nothing) if `key` is already a split
    /// boundary (the empty key always is).
    ///
    /// Split points should be row-tree or row boundaries (a key prefix such as
    /// `object(t) key(..)`), never a complete row key followed by more bytes:
    /// scans rely on no stored row key being a proper prefix of a split limit
    /// (see `Mvcc::scan_at`).
    ///
    /// Both halves are new splits, with new ids, on the node of the old one,
    /// and start with zeroed counters: the old split's history stays with its
    /// id (requests already routed to it keep charging it), and load-based
    /// decisions look at recent load anyway.
    pub fn add_split_point(&self, key: &[u8]) -> bool {
        self.add_split_point_at(key, None, self.time()).is_some()
    }

    /// Like [`SplitMap::add_split_point`], placing the left half on `left`
    /// and the right half on `right`. Returns the new `(left, right)` ids, or
    /// `None` if `key` is already a boundary.
    pub fn add_split_point_on(
        &self,
        key: &[u8],
        left: NodeId,
        right: NodeId,
    ) -> Option<(SplitId, SplitId)> {
        self.add_split_point_at(key, Some((left, right)), self.time())
    }

    /// Cuts at `key` at time `now`; `nodes`: the nodes of the halves (`None`:
    /// both on the old split's node). Returns the new ids.
    pub fn add_split_point_at(
        &self,
        key: &[u8],
        nodes: Option<(NodeId, NodeId)>,
        now: u64,
    ) -> Option<(SplitId, SplitId)> {
        let mut guard = self.splits.write();
        let index = containing(&guard, key);
        let old = &guard[index];
        if old.start == key {
            return None;
        }
        let (left_node, right_node) = nodes.unwrap_or((old.node(), old.node()));
        let left = Split::new_at(
            self.new_id(),
            old.start.clone(),
            Some(key.to_vec()),
            left_node,
            now,
        );
        let right = Split::new_at(
            self.new_id(),
            key.to_vec(),
            old.limit.clone(),
            right_node,
            now,
        );
        let ids = (left.id, right.id);
        let mut splits = Vec::with_capacity(guard.len() + 1);
        splits.extend_from_slice(&guard[..index]);
        splits.push(Arc::new(left));
        splits.push(Arc::new(right));
        splits.extend_from_slice(&guard[index + 1..]);
        *guard = Arc::new(splits);
        self.changed();
        Some(ids)
    }

    /// Merges the neighbours `left` and `right` (`left`'s limit is
    /// `right`'s start) into one new split on `left`'s node. `None` (and no
    /// change) if they are not current neighbours in that order.
    pub fn merge(&self, left: SplitId, right: SplitId) -> Option<SplitId> {
        self.merge_at(left, right, self.time())
    }

    /// [`SplitMap::merge`] at time `now`.
    pub fn merge_at(&self, left: SplitId, right: SplitId, now: u64) -> Option<SplitId> {
        let mut guard = self.splits.write();
        let index = guard.iter().position(|s| s.id == left)?;
        let (l, r) = (&guard[index], guard.get(index + 1)?);
        if r.id != right {
            return None;
        }
        let merged = Split::new_at(
            self.new_id(),
            l.start.clone(),
            r.limit.clone(),
            l.node(),
            now,
        );
        let id = merged.id;
        let mut splits = Vec::with_capacity(guard.len() - 1);
        splits.extend_from_slice(&guard[..index]);
        splits.push(Arc::new(merged));
        splits.extend_from_slice(&guard[index + 2..]);
        *guard = Arc::new(splits);
        self.changed();
        Some(id)
    }

    /// Moves `split` to `node`. `false` if no current split has that id.
    pub fn set_node(&self, split: SplitId, node: NodeId) -> bool {
        match self.current().iter().find(|s| s.id == split) {
            Some(s) => {
                if s.node() != node {
                    s.store_node(node);
                    self.changed();
                }
                true
            }
            None => false,
        }
    }

    /// The current split with id `id`.
    pub fn get(&self, id: SplitId) -> Option<Arc<Split>> {
        self.current().iter().find(|s| s.id == id).cloned()
    }

    /// The split holding `key`.
    pub fn split_for(&self, key: &[u8]) -> Arc<Split> {
        let splits = self.current();
        splits[containing(&splits, key)].clone()
    }

    /// The splits overlapping the key range `(start, end)`, in key order
    /// (empty if the range is empty).
    pub fn route(&self, start: Bound<&[u8]>, end: Bound<&[u8]>) -> Vec<Arc<Split>> {
        if range_is_empty(start, end) {
            return Vec::new();
        }
        let splits = self.current();
        let first = match start {
            Bound::Included(k) | Bound::Excluded(k) => containing(&splits, k),
            Bound::Unbounded => 0,
        };
        splits[first..]
            .iter()
            .take_while(|split| match end {
                Bound::Included(e) => split.start.as_slice() <= e,
                Bound::Excluded(e) => split.start.as_slice() < e,
                Bound::Unbounded => true,
            })
            .cloned()
            .collect()
    }

    /// All splits, in key order.
    pub fn splits(&self) -> Vec<Arc<Split>> {
        self.current().as_ref().clone()
    }

    /// The number of splits.
    pub fn len(&self) -> usize {
        self.splits.read().len()
    }

    /// Always `false`: the key space has at least one split.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// How many times the map has changed (cut, merge, move, restore):
    /// when it differs from the last saved value, the map needs saving.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// The id the next new split gets.
    pub fn next_id(&self) -> u64 {
        self.next_id.load(Ordering::Relaxed)
    }

    /// Makes every id handed out from now on at least `min_next` (so new
    /// ids never repeat ids remembered elsewhere, e.g. in a load history).
    pub fn reserve_ids(&self, min_next: u64) {
        self.next_id.fetch_max(min_next, Ordering::Relaxed);
    }

    /// The map as a [`SplitsRecord`] (no manual points or mergeable
    /// boundaries: those are the [`SplitManager`](crate::SplitManager)'s).
    pub fn to_record(&self) -> SplitsRecord {
        // The id counter is read under the lock that every cut and merge
        // takes, so it is above every id in the list.
        let guard = self.splits.read();
        SplitsRecord {
            version: SPLITS_RECORD_VERSION,
            next_id: self.next_id(),
            splits: guard
                .iter()
                .map(|s| SplitRecord {
                    id: s.id.0,
                    start: s.start.clone(),
                    limit: s.limit.clone(),
                    node: s.node().0,
                    created_at: s.created_at,
                })
                .collect(),
            manual: Vec::new(),
            mergeable: Vec::new(),
        }
    }

    /// Replaces every split by those of `record` (validated first: an
    /// invalid record changes nothing), with zeroed counters and load
    /// trackers starting at the map's current time. The id counter becomes
    /// the larger of the record's and the map's own. Meant for opening a
    /// database, before anything is routed.
    pub fn restore(&self, record: &SplitsRecord) -> Result<()> {
        record.validate()?;
        let now = self.time();
        let splits: Vec<Arc<Split>> = record
            .splits
            .iter()
            .map(|s| {
                Arc::new(Split::restored(
                    SplitId(s.id),
                    s.start.clone(),
                    s.limit.clone(),
                    NodeId(s.node),
                    s.created_at,
                    now,
                ))
            })
            .collect();
        let mut guard = self.splits.write();
        self.reserve_ids(record.next_id);
        *guard = Arc::new(splits);
        self.changed();
        Ok(())
    }

    fn changed(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    fn current(&self) -> Arc<Vec<Arc<Split>>> {
        self.splits.read().clone()
    }

    fn new_id(&self) -> SplitId {
        SplitId(self.next_id.fetch_add(1, Ordering::Relaxed))
    }
}

/// The index of the split containing `key`. The first split starts at the
/// empty key, so the partition point is at least 1.
fn containing(splits: &[Arc<Split>], key: &[u8]) -> usize {
    splits
        .partition_point(|s| s.start.as_slice() <= key)
        .saturating_sub(1)
}

/// Whether no key lies between the bounds.
pub(crate) fn range_is_empty(start: Bound<&[u8]>, end: Bound<&[u8]>) -> bool {
    match (start, end) {
        (Bound::Included(s), Bound::Included(e)) => s > e,
        (Bound::Included(s) | Bound::Excluded(s), Bound::Excluded(e))
        | (Bound::Excluded(s), Bound::Included(e)) => s >= e,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds(map: &SplitMap) -> Vec<(Vec<u8>, Option<Vec<u8>>)> {
        map.splits()
            .iter()
            .map(|s| (s.start.clone(), s.limit.clone()))
            .collect()
    }

    #[test]
    fn split_points_cut_the_containing_split() {
        let map = SplitMap::new();
        assert_eq!(bounds(&map), vec![(vec![], None)]);
        assert!(map.add_split_point(b"m"));
        assert!(map.add_split_point(b"c"));
        assert!(map.add_split_point(b"x"));
        assert!(!map.add_split_point(b"m"), "already a boundary");
        assert!(
            !map.add_split_point(b""),
            "the first split starts at the empty key"
        );
        assert_eq!(
            bounds(&map),
            vec![
                (vec![], Some(b"c".to_vec())),
                (b"c".to_vec(), Some(b"m".to_vec())),
                (b"m".to_vec(), Some(b"x".to_vec())),
                (b"x".to_vec(), None),
            ]
        );
        let ids: Vec<_> = map.splits().iter().map(|s| s.id).collect();
        let mut unique = ids.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), 4);
        assert!(
            !ids.contains(&SplitId(1)),
            "the original split was replaced"
        );
    }

    #[test]
    fn split_for_and_route() {
        let map = SplitMap::with_split_points([b"c", b"m", b"x"]);
        let start_of = |s: &Arc<Split>| s.start.clone();
        assert_eq!(map.split_for(b"").start, b"");
        assert_eq!(map.split_for(b"b").start, b"");
        assert_eq!(map.split_for(b"c").start, b"c");
        assert_eq!(map.split_for(b"lzzz").start, b"c");
        assert_eq!(map.split_for(b"zzz").start, b"x");
        assert!(map.split_for(b"d").contains(b"d"));

        let starts = |start, end| {
            map.route(start, end)
                .iter()
                .map(start_of)
                .collect::<Vec<_>>()
        };
        use Bound::*;
        assert_eq!(starts(Unbounded, Unbounded).len(), 4);
        assert_eq!(starts(Included(b"d"), Excluded(b"m")), vec![b"c".to_vec()]);
        assert_eq!(
            starts(Included(b"d"), Included(b"m")),
            vec![b"c".to_vec(), b"m".to_vec()]
        );
        assert_eq!(
            starts(Excluded(b"a"), Excluded(b"y")),
            vec![b"".to_vec(), b"c".to_vec(), b"m".to_vec(), b"x".to_vec()]
        );
        assert!(starts(Included(b"d"), Excluded(b"d")).is_empty());
        assert!(starts(Included(b"z"), Excluded(b"a")).is_empty());
    }

    #[test]
    fn a_map_round_trips_through_its_record() {
        let map = SplitMap::with_split_points([b"c", b"m"]);
        let g = map.generation();
        assert!(map.set_node(map.split_for(b"m").id, NodeId(3)));
        assert!(map.generation() > g, "a move is a change");
        let g = map.generation();
        assert!(map.set_node(map.split_for(b"m").id, NodeId(3)));
        assert_eq!(map.generation(), g, "moving to the same node is not");
        let record = map.to_record();
        assert_eq!(record.next_id, map.next_id());

        let other = SplitMap::new();
        other.observe_time(42);
        other.restore(&record).unwrap();
        assert_eq!(bounds(&other), bounds(&map));
        assert_eq!(other.to_record(), record);
        assert_eq!(other.split_for(b"x").node(), NodeId(3));
        assert_eq!(other.split_for(b"x").load.lock().created(), 42);
        // New ids continue after the restored ones.
        let (l, r) = other
            .add_split_point_on(b"e", NodeId(0), NodeId(0))
            .unwrap();
        assert!(l.0 >= record.next_id && r.0 >= record.next_id);

        // A record that is not a valid map changes nothing.
        let mut gap = record.clone();
        gap.splits.remove(1);
        let g = other.generation();
        assert!(other.restore(&gap).is_err());
        assert_eq!(other.generation(), g);
        assert_eq!(other.len(), 4);

        // Reserved ids are skipped.
        other.reserve_ids(1000);
        let (l, _) = other
            .add_split_point_on(b"f", NodeId(0), NodeId(0))
            .unwrap();
        assert!(l.0 >= 1000);
    }
}
