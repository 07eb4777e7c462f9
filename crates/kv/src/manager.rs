//! [`SplitManager`]: the periodic work that makes splits follow the load.
//!
//! Accesses are charged to the splits' [`LoadTracker`](crate::LoadTracker)s
//! as they happen (by the [`Router`](crate::Router), or by
//! [`SplitManager::record`] in the simulator). [`SplitManager::tick`], called
//! often (every second or so) with the current time, then:
//!
//! 1. **expires manual split points** whose time has come (their boundaries
//!    become mergeable);
//! 2. **splits by size**: a split larger than `size_limit` (as told by the
//!    [`SplitSizes`] source, if one is set) is cut at its median row;
//! 3. **splits by load**: a split whose CPU score stays at or above
//!    `split_threshold` for `hot_for` (and is at least `cooldown` old) gets a
//!    [`SplitPolicy::load_decision`]: it is cut at the chosen key (both halves
//!    stay on the parent's node: moving is the balancer's job), or marked
//!    unsplittable with a reason (an event when first seen or when the reason
//!    changes). While a split is cold its key sample is reset, so a decision
//!    reads only the hot period;
//! 4. **merges** neighbours whose combined score stays under
//!    `merge_below * split_threshold` for `merge_after`. Only boundaries the
//!    manager made itself (load and size splits) and expired manual split
//!    points are merged away: boundaries that existed before (table and
//!    object starts, split points added to the map directly) are permanent,
//!    since the manager cannot tell them from object boundaries;
//! 5. **balances** every `interval` (see [`Balancer`]);
//! 6. **rolls up** each minute's load per split into the [`LoadHistory`]
//!    (splits replaced during the minute by the manager contribute what
//!    they served before they were replaced).
//!
//! What the manager knows about boundaries (live manual split points with
//! their expiry, and which boundaries it may merge away) is saved with the
//! map: [`SplitManager::to_record`] gives both as one [`SplitsRecord`],
//! [`SplitManager::restore`] puts them back, and
//! [`SplitManager::generation`] changes whenever either changes.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard};

use crate::balance::{Balancer, BalancerConfig};
use crate::buckets::KeyBuckets;
use crate::history::{IntervalStat, LoadHistory};
use crate::load::{Access, AccessKind, LoadTotals};
use crate::persist::{ManualPoint, SplitsRecord};
use crate::policy::{KeyAligner, LoadDecision, SplitPolicy, UnsplittableReason};
use crate::split::{NodeId, Split, SplitId};
use crate::split_map::SplitMap;
use crate::Result;

const MINUTE: u64 = 60_000_000_000;
/// The most events kept by [`SplitManager::events`].
pub const MAX_EVENTS: usize = 10_000;

/// How often a manual split point whose cut was not carried out is tried
/// again.
const PENDING_RETRY: std::time::Duration = std::time::Duration::from_secs(2);

/// The most pending split points one [`SplitManager::tick`] tries: each
/// may wait on another node.
const MAX_PENDING_TRIES: usize = 8;

/// Everything the manager needs to know.
#[derive(Debug, Clone, PartialEq)]
pub struct ManagerConfig {
    /// When to split and merge.
    pub policy: SplitPolicy,
    /// When to move splits.
    pub balancer: BalancerConfig,
    /// Nodes `0..nodes` serve splits; default 1.
    pub nodes: u32,
}

impl Default for ManagerConfig {
    fn default() -> Self {
        ManagerConfig {
            policy: SplitPolicy::default(),
            balancer: BalancerConfig::default(),
            nodes: 1,
        }
    }
}

/// Why a split was cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SplitReason {
    /// It was hot.
    Load,
    /// It was large.
    Size,
    /// A split point was added.
    Manual,
}

/// What the manager changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SplitEvent {
    /// `parent` was cut at `key` into `left` and `right`.
    Split {
        /// When.
        at: u64,
        /// The split that was cut.
        parent: SplitId,
        /// The new boundary.
        key: Vec<u8>,
        /// The new left half.
        left: SplitId,
        /// The new right half.
        right: SplitId,
        /// Why.
        reason: SplitReason,
    },
    /// Neighbours `left` and `right` became `into`.
    Merge {
        /// When.
        at: u64,
        /// The left neighbour.
        left: SplitId,
        /// The right neighbour.
        right: SplitId,
        /// The merged split.
        into: SplitId,
    },
    /// `split` moved from node `from` to node `to`.
    Move {
        /// When.
        at: u64,
        /// The split moved.
        split: SplitId,
        /// Its old node.
        from: NodeId,
        /// Its new node.
        to: NodeId,
    },
    /// `split` is hot and cannot be split, because of `reason` (reported when
    /// first detected, and again if the reason changes).
    Unsplittable {
        /// When.
        at: u64,
        /// The hot split.
        split: SplitId,
        /// Why it cannot be split.
        reason: UnsplittableReason,
    },
}

/// Tells the manager how large splits are, for size-based splitting.
pub trait SplitSizes: Send + Sync {
    /// The size of `split` in bytes and its median key (a key with about
    /// half the bytes before it), or `None` if unknown.
    fn size(&self, split: &Split) -> Option<(u64, Vec<u8>)>;
}

#[derive(Debug, Default)]
struct SplitState {
    hot_since: Option<u64>,
    reason: Option<UnsplittableReason>,
    /// Reasons seen since the last minute roll-up.
    reasons: BTreeSet<UnsplittableReason>,
}

#[derive(Debug)]
struct State {
    splits: HashMap<SplitId, SplitState>,
    /// Neighbour pairs cold since.
    cold: HashMap<(SplitId, SplitId), u64>,
    /// Live manual split points: boundary -> expiry.
    manual: BTreeMap<Vec<u8>, u64>,
    /// Boundaries that may be merged away.
    mergeable: BTreeSet<Vec<u8>>,
    /// Manual split points whose cut was not carried out (the group's
    /// leader declined or could not be reached): when each was last
    /// tried. Retried by [`SplitManager::tick`].
    pending: BTreeMap<Vec<u8>, u64>,
    balancer: Balancer,
    last_minute_end: Option<u64>,
    /// Tracker totals at the last roll-up.
    base: HashMap<SplitId, LoadTotals>,
    /// Splits replaced since the last roll-up, with what they served.
    retired: Vec<IntervalStat>,
    events: VecDeque<SplitEvent>,
}

/// Splits, merges and moves splits as the load changes. See the module docs.
pub struct SplitManager {
    map: Arc<SplitMap>,
    config: ManagerConfig,
    aligner: Arc<dyn KeyAligner>,
    sizes: Option<Arc<dyn SplitSizes>>,
    /// Where the key space is replicated, if it is: cuts and merges are
    /// carried out there before the map records them
    /// ([`Replication::cut`], [`Replication::merge`]).
    replication: Option<Arc<dyn crate::replication::Replication>>,
    state: Mutex<State>,
    history: Mutex<LoadHistory>,
    /// Changes to `manual` and `mergeable` (the map counts its own).
    changes: AtomicU64,
}

impl std::fmt::Debug for SplitManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SplitManager")
            .field("map", &self.map)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

fn nanos(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl SplitManager {
    /// A manager of `map`, aligning boundaries with `aligner`.
    pub fn new(
        map: Arc<SplitMap>,
        config: ManagerConfig,
        aligner: Arc<dyn KeyAligner>,
    ) -> SplitManager {
        let balancer = Balancer::new(config.balancer.clone());
        SplitManager {
            map,
            config,
            aligner,
            sizes: None,
            replication: None,
            state: Mutex::new(State {
                splits: HashMap::new(),
                cold: HashMap::new(),
                manual: BTreeMap::new(),
                pending: BTreeMap::new(),
                mergeable: BTreeSet::new(),
                balancer,
                last_minute_end: None,
                base: HashMap::new(),
                retired: Vec::new(),
                events: VecDeque::new(),
            }),
            history: Mutex::new(LoadHistory::new()),
            changes: AtomicU64::new(0),
        }
    }

    /// Enables size-based splitting with `sizes` as the source of sizes.
    pub fn with_sizes(mut self, sizes: Arc<dyn SplitSizes>) -> SplitManager {
        self.sizes = Some(sizes);
        self
    }

    /// Carries every cut and merge out through `replication` before
    /// recording it (see [`crate::replication::Replication::cut`] and
    /// [`crate::replication::Replication::merge`]): one it declines or
    /// fails is not made.
    pub fn with_replication(
        mut self,
        replication: Arc<dyn crate::replication::Replication>,
    ) -> SplitManager {
        self.replication = Some(replication);
        self
    }

    /// Whether a cut at `key` may be recorded: carried out where the key
    /// space is replicated, or nothing to carry out.
    fn carried_out(&self, key: &[u8]) -> bool {
        match &self.replication {
            None => true,
            Some(r) => r.cut(key).unwrap_or(false),
        }
    }

    /// Whether the merge of the split starting at `key` into its left
    /// neighbour may be recorded: carried out where the key space is
    /// replicated, or nothing to carry out.
    fn merge_carried_out(&self, key: &[u8]) -> bool {
        match &self.replication {
            None => true,
            Some(r) => r.merge(key).unwrap_or(false),
        }
    }

    /// Replaces the history (e.g. one loaded with [`LoadHistory::from_bytes`]).
    pub fn set_history(&self, history: LoadHistory) {
        *self.history.lock() = history;
    }

    /// The split map.
    pub fn map(&self) -> &Arc<SplitMap> {
        &self.map
    }

    /// The configuration.
    pub fn config(&self) -> &ManagerConfig {
        &self.config
    }

    /// Charges an access to the split holding access.key (looked up in the
    /// map): its load tracker and its [`SplitStats`](crate::SplitStats).
    pub fn record(&self, now: u64, access: &Access<'_>) -> Arc<Split> {
        let split = self.map.split_for(access.key);
        split.load.lock().record(now, access);
        match access.kind {
            AccessKind::Write => split.stats.record_write(1, access.rows, access.bytes),
            AccessKind::Read | AccessKind::Scan => {
                split.stats.record_read(1, access.rows, access.bytes)
            }
        }
        split
            .stats
            .record_cpu(std::time::Duration::from_nanos(access.cpu_nanos));
        split
    }

    /// A manual split point at `key` that is never merged away before
    /// `expires_at`. Returns `true` if a new boundary was made; `false` if
    /// `key` was already a boundary (it is then protected until `expires_at`
    /// all the same).
    pub fn add_split_point(&self, now: u64, key: &[u8], expires_at: u64) -> bool {
        self.map.observe_time(now);
        let mut st = self.state.lock();
        let expiry = st.manual.entry(key.to_vec()).or_insert(0);
        if *expiry < expires_at {
            *expiry = expires_at;
            self.changed();
        }
        match self.make_split_point(&mut st, key, expires_at, now) {
            Some(event) => {
                push_event(&mut st, event);
                true
            }
            None => false,
        }
    }

    /// Cuts the map at manual split point `key` once the replication has
    /// carried the cut out ([`Replication::cut_at_split_point`]); the
    /// event, or `None` if `key` is a boundary already or the cut was not
    /// made now, in which case it is left pending, retried by
    /// [`SplitManager::tick`] until its expiry.
    ///
    /// [`Replication::cut_at_split_point`]: crate::replication::Replication::cut_at_split_point
    fn make_split_point(
        &self,
        st: &mut State,
        key: &[u8],
        expires_at: u64,
        now: u64,
    ) -> Option<SplitEvent> {
        let parent = self.map.split_for(key);
        if parent.start == key {
            st.pending.remove(key);
            return None;
        }
        let carried_out = match &self.replication {
            None => true,
            Some(r) => r.cut_at_split_point(key, expires_at).unwrap_or(false),
        };
        if !carried_out {
            st.pending.insert(key.to_vec(), now);
            return None;
        }
        st.pending.remove(key);
        let (left, right) = self.map.add_split_point_at(key, None, now)?;
        self.retire(st, &parent, now);
        Some(SplitEvent::Split {
            at: now,
            parent: parent.id,
            key: key.to_vec(),
            left,
            right,
            reason: SplitReason::Manual,
        })
    }

    /// Changes so far to the map or to the manager's boundary state (manual
    /// split points, mergeable boundaries): when it differs from its value
    /// at the last [`SplitManager::to_record`] saved, save again.
    pub fn generation(&self) -> u64 {
        // Both counters only grow, so their sum changes whenever either does.
        self.map.generation() + self.changes.load(Ordering::SeqCst)
    }

    /// The map with the live manual split points and the mergeable
    /// boundaries, as one consistent [`SplitsRecord`] to store.
    pub fn to_record(&self) -> SplitsRecord {
        // The manager changes the map only under its state lock, so the two
        // are read in one consistent state.
        let st = self.state.lock();
        let mut record = self.map.to_record();
        record.manual = st
            .manual
            .iter()
            .map(|(key, expires_at)| ManualPoint {
                key: key.clone(),
                expires_at: *expires_at,
            })
            .collect();
        record.mergeable = st.mergeable.iter().cloned().collect();
        record
    }

    /// Restores a [`SplitManager::to_record`] at time `now` (meant for opening
    /// a database): the map's splits, the manual split points and the
    /// mergeable boundaries. A split on a node this manager does not have
    /// (the database was reopened with fewer nodes) moves to node
    /// `node % nodes`. An invalid record changes nothing.
    pub fn restore(&self, mut record: SplitsRecord, now: u64) -> Result<()> {
        record.validate()?;
        let nodes = self.config.nodes.max(1);
        for split in &mut record.splits {
            split.node %= nodes;
        }
        self.map.observe_time(now);
        let mut st = self.state.lock();
        self.map.restore(&record)?;
        st.manual = record
            .manual
            .into_iter()
            .map(|m| (m.key, m.expires_at))
            .collect();
        st.mergeable = record.mergeable.into_iter().collect();
        // A split point saved before its cut was carried out is tried again.
        st.pending = st
            .manual
            .keys()
            .filter(|k| self.map.split_for(k).start != k.as_slice())
            .map(|k| (k.clone(), 0))
            .collect();
        st.splits.clear();
        st.cold.clear();
        st.base.clear();
        self.changed();
        Ok(())
    }

    fn changed(&self) {
        self.changes.fetch_add(1, Ordering::SeqCst);
    }

    /// The current unsplittable reason of each split that has one.
    pub fn unsplittable(&self) -> Vec<(SplitId, UnsplittableReason)> {
        let st = self.state.lock();
        self.map
            .splits()
            .iter()
            .filter_map(|s| st.splits.get(&s.id)?.reason.map(|r| (s.id, r)))
            .collect()
    }

    /// Per-node CPU load (CPU-seconds per second, last 60 s), indexed by
    /// node id (at least `config.nodes` entries).
    pub fn node_loads(&self, now: u64) -> Vec<f64> {
        let mut loads = vec![0.0; self.config.nodes.max(1) as usize];
        for s in self.map.splits() {
            let n = s.node().0 as usize;
            if n >= loads.len() {
                loads.resize(n + 1, 0.0);
            }
            loads[n] += s.load.lock().rate(now).cpu;
        }
        loads
    }

    /// The load history (locked while the guard lives: don't hold it across
    /// [`SplitManager::tick`]).
    pub fn history(&self) -> MutexGuard<'_, LoadHistory> {
        self.history.lock()
    }

    /// All events so far (the last [`MAX_EVENTS`]), oldest first.
    pub fn events(&self) -> Vec<SplitEvent> {
        self.state.lock().events.iter().cloned().collect()
    }

    /// Runs the periodic work due at `now` (call often, e.g. every virtual
    /// second). Returns what changed.
    pub fn tick(&self, now: u64) -> Vec<SplitEvent> {
        self.map.observe_time(now);
        let mut st = self.state.lock();
        let first_event = st.events.len();
        let mut out = Vec::new();
        let policy = &self.config.policy;

        // 1. Expired manual split points become mergeable.
        let expired: Vec<Vec<u8>> = st
            .manual
            .iter()
            .filter(|(_, e)| **e <= now)
            .map(|(k, _)| k.clone())
            .collect();
        for k in expired {
            st.manual.remove(&k);
            st.mergeable.insert(k);
            self.changed();
        }

        // 1b. Manual split points not cut yet (their group had no leader
        // yet, or its leader could not be reached), a few at a time.
        let due: Vec<(Vec<u8>, u64)> = st
            .pending
            .iter()
            .filter(|(_, tried)| now.saturating_sub(**tried) >= nanos(PENDING_RETRY))
            .filter_map(|(k, _)| st.manual.get(k).map(|e| (k.clone(), *e)))
            .take(MAX_PENDING_TRIES)
            .collect();
        {
            let State {
                pending, manual, ..
            } = &mut *st;
            pending.retain(|k, _| manual.contains_key(k));
        }
        for (key, expires_at) in due {
            if let Some(event) = self.make_split_point(&mut st, &key, expires_at, now) {
                out.push(event);
            }
        }

        // 2 and 3. Size and load splits.
        let mut changed: HashSet<SplitId> = HashSet::new();
        for split in self.map.splits() {
            if let Some(sizes) = &self.sizes {
                if let Some((size, median)) = sizes.size(&split) {
                    if size > policy.size_limit {
                        if let Some(key) = policy.size_split_key(
                            &split.start,
                            split.limit.as_deref(),
                            &median,
                            self.aligner.as_ref(),
                        ) {
                            if let Some(ev) =
                                self.cut(&mut st, &split, &key, SplitReason::Size, now)
                            {
                                out.push(ev);
                                changed.insert(split.id);
                                continue;
                            }
                        }
                    }
                }
            }
            let score = split.load.lock().score(now);
            let entry = st.splits.entry(split.id).or_default();
            // Hysteresis: a split that has been hot stays hot while its score is
            // within 10% of the threshold, so the noise of a split hovering at the
            // threshold (two halves sharing a saturated node score about 50 each)
            // does not restart its clock every other second.
            let hot_floor = if entry.hot_since.is_some() {
                policy.split_threshold * 0.9
            } else {
                policy.split_threshold
            };
            if score < hot_floor {
                entry.hot_since = None;
                entry.reason = None;
                split.load.lock().reset_sample();
                continue;
            }
            let since = *entry.hot_since.get_or_insert(now);
            if now.saturating_sub(since) < nanos(policy.hot_for)
                || now.saturating_sub(split.created_at) < nanos(policy.cooldown)
            {
                continue;
            }
            let sample = split.load.lock().sample_snapshot();
            match policy.load_decision(
                &split.start,
                split.limit.as_deref(),
                &sample,
                self.aligner.as_ref(),
            ) {
                LoadDecision::Split(key) => {
                    if let Some(ev) = self.cut(&mut st, &split, &key, SplitReason::Load, now) {
                        out.push(ev);
                        changed.insert(split.id);
                    }
                }
                LoadDecision::Unsplittable(reason) => {
                    let entry = st.splits.entry(split.id).or_default();
                    entry.reasons.insert(reason);
                    if entry.reason != Some(reason) {
                        entry.reason = Some(reason);
                        out.push(SplitEvent::Unsplittable {
                            at: now,
                            split: split.id,
                            reason,
                        });
                    }
                }
                LoadDecision::Wait => {}
            }
        }

        // 4. Merges of cold neighbours.
        let splits = self.map.splits();
        let scores: Vec<f64> = splits.iter().map(|s| s.load.lock().score(now)).collect();
        let mut cold = HashMap::new();
        let mut merged: HashSet<SplitId> = HashSet::new();
        for i in 1..splits.len() {
            let (a, b) = (&splits[i - 1], &splits[i]);
            if !st.mergeable.contains(&b.start) || st.manual.contains_key(&b.start) {
                continue;
            }
            if scores[i - 1] + scores[i] >= policy.merge_threshold() {
                continue;
            }
            let since = st.cold.get(&(a.id, b.id)).copied().unwrap_or(now);
            if now.saturating_sub(since) >= nanos(policy.merge_after)
                && !merged.contains(&a.id)
                && !changed.contains(&a.id)
                && !changed.contains(&b.id)
                && self.merge_carried_out(&b.start)
            {
                if let Some(into) = self.map.merge_at(a.id, b.id, now) {
                    self.retire(&mut st, a, now);
                    self.retire(&mut st, b, now);
                    st.mergeable.remove(&b.start);
                    merged.insert(a.id);
                    merged.insert(b.id);
                    out.push(SplitEvent::Merge {
                        at: now,
                        left: a.id,
                        right: b.id,
                        into,
                    });
                    continue;
                }
            }
            cold.insert((a.id, b.id), since);
        }
        st.cold = cold;

        // 5. Balancing.
        if st.balancer.due(now) {
            let loads: Vec<(SplitId, NodeId, f64)> = self
                .map
                .splits()
                .iter()
                .map(|s| (s.id, s.node(), s.load.lock().rate(now).cpu))
                .collect();
            for m in st.balancer.plan(now, &loads, self.config.nodes) {
                if self.map.set_node(m.split, m.to) {
                    out.push(SplitEvent::Move {
                        at: now,
                        split: m.split,
                        from: m.from,
                        to: m.to,
                    });
                }
            }
        }

        // 6. Minute roll-up.
        let minute_end = now / MINUTE * MINUTE;
        match st.last_minute_end {
            None => st.last_minute_end = Some(minute_end),
            Some(last) if minute_end > last => {
                let mut rows = std::mem::take(&mut st.retired);
                let mut base = HashMap::new();
                for s in self.map.splits() {
                    let (totals, buckets) = {
                        let mut load = s.load.lock();
                        let buckets = load.take_interval_buckets(&s.start, s.limit.as_deref());
                        (load.totals_before(minute_end), buckets)
                    };
                    let delta = totals.since(&st.base.get(&s.id).copied().unwrap_or_default());
                    let state = st.splits.entry(s.id).or_default();
                    let reasons = std::mem::take(&mut state.reasons);
                    state.reasons.extend(state.reason);
                    if delta.requests > 0 {
                        let replicas = self.replicas_of(&s.start);
                        rows.push(stat(&s, delta, reasons, buckets, replicas));
                    }
                    base.insert(s.id, totals);
                }
                st.base = base;
                st.last_minute_end = Some(minute_end);
                rows.sort_by(|a, b| a.start.cmp(&b.start));
                self.history.lock().add_minute(minute_end, rows);
            }
            Some(_) => {}
        }

        // Forget state of splits that are gone.
        let live: HashSet<SplitId> = self.map.splits().iter().map(|s| s.id).collect();
        st.splits.retain(|id, _| live.contains(id));
        debug_assert_eq!(st.events.len(), first_event);
        for ev in &out {
            push_event(&mut st, ev.clone());
        }
        out
    }

    /// Cuts `split` at `key` (both halves on its node); the event, or
    /// `None` if the map changed meanwhile.
    fn cut(
        &self,
        st: &mut State,
        split: &Arc<Split>,
        key: &[u8],
        reason: SplitReason,
        now: u64,
    ) -> Option<SplitEvent> {
        if !split.contains(key) || self.map.get(split.id).is_none() || !self.carried_out(key) {
            return None;
        }
        let (left, right) = self.map.add_split_point_at(key, None, now)?;
        st.mergeable.insert(key.to_vec());
        self.retire(st, split, now);
        Some(SplitEvent::Split {
            at: now,
            parent: split.id,
            key: key.to_vec(),
            left,
            right,
            reason,
        })
    }

    /// Keeps what a replaced split served since the last roll-up.
    fn retire(&self, st: &mut State, split: &Split, _now: u64) {
        let (totals, buckets) = {
            let mut load = split.load.lock();
            let buckets = load.take_interval_buckets(&split.start, split.limit.as_deref());
            (load.totals(), buckets)
        };
        let delta = totals.since(&st.base.remove(&split.id).unwrap_or_default());
        let reasons = st
            .splits
            .remove(&split.id)
            .map(|s| s.reasons)
            .unwrap_or_default();
        if delta.requests > 0 {
            let replicas = self.replicas_of(&split.start);
            st.retired
                .push(stat(split, delta, reasons, buckets, replicas));
        }
    }

    /// The nodes holding a replica of the split holding `key`, as the
    /// replication knows them (none on one process).
    fn replicas_of(&self, key: &[u8]) -> Vec<u64> {
        self.replication
            .as_ref()
            .map(|r| r.replicas_of(key))
            .unwrap_or_default()
    }
}

fn stat(
    split: &Split,
    delta: LoadTotals,
    reasons: BTreeSet<UnsplittableReason>,
    buckets: KeyBuckets,
    replicas: Vec<u64>,
) -> IntervalStat {
    IntervalStat {
        interval_end: 0,
        split: split.id,
        start: split.start.clone(),
        limit: split.limit.clone(),
        node: split.node(),
        replicas,
        cpu_score: delta.cpu_nanos as f64 / MINUTE as f64 * 100.0,
        requests: delta.requests,
        rows_read: delta.rows_read,
        rows_written: delta.rows_written,
        bytes_read: delta.bytes_read,
        bytes_written: delta.bytes_written,
        cpu_nanos: delta.cpu_nanos,
        unsplittable: reasons.into_iter().collect(),
        buckets,
    }
}

fn push_event(st: &mut State, ev: SplitEvent) {
    if st.events.len() >= MAX_EVENTS {
        st.events.pop_front();
    }
    st.events.push_back(ev);
}
