//! [`LoadTracker`]: the recent load of one split, and a sample of the keys it
//! was spent on.
//!
//! Three things are kept, all updated by [`LoadTracker::record`] on the path
//! of every request (one short critical section, no allocation once warm
//! except when a key enters the sample):
//!
//! * **Per-second buckets** over a sliding window of [`WINDOW_SECS`] seconds:
//!   requests, rows and bytes read and written, CPU nanoseconds. A ring of
//!   buckets tagged with their second; a bucket is reused (zeroed) when its
//!   second comes round again. [`LoadTracker::rate`] averages them.
//! * **A key sample** (CockroachDB's load-based split finder): up to
//!   [`SAMPLE_SIZE`] keys drawn from the accesses by reservoir sampling (the
//!   `n`-th access replaces a random sample with probability `20/n`), each
//!   counting, from the moment it was admitted, the accesses to its left,
//!   to its right (a point access *at* the key counts right, since a
//!   boundary at the key puts it in the right half), and the scans spanning
//!   it. A sample with few left/right differences is a good split point.
//!   The samples stay in their admission slots (the reservoir's draws pick
//!   slots), beside an index of the slots sorted by key: an access finds
//!   its place among them with a binary search, about five key comparisons
//!   for twenty samples rather than twenty, and the counters are then
//!   bumped without comparing.
//!   A commit writing several rows of a split is one access, charged at
//!   its first key, and its other keys (up to
//!   [`SAMPLED_WRITES_PER_SPLIT`](crate::SAMPLED_WRITES_PER_SPLIT)) join
//!   the sample as point accesses of their own
//!   ([`LoadTracker::sample_write`]): the tail of a timestamp index is
//!   written by commits whose first key there is the entry they delete.
//! * **Monotonicity counters**: point accesses whose key is beyond the
//!   largest (or below the smallest) key seen up to [`FRONTIER_LAG_SECS`]
//!   seconds before the current second began. Sequential keys make almost
//!   every access beyond that frontier; random keys almost none (the
//!   largest of many random keys is near the top already). Comparing with
//!   a frontier a few seconds old rather than the running maximum keeps
//!   keys that arrive out of order counted as the sequence they are:
//!   concurrent writers stamping the same instant (`(timestamp, id)`
//!   keys), and keys stamped by clients and then queued behind a saturated
//!   node for a second or two, served in no particular order. The accesses
//!   of the first seconds, with no frontier that old yet, are not compared
//!   ([`SampleSnapshot::compared`] counts the ones that were).
//!
//! * **An interval sample** for the key visualizer: up to
//!   [`INTERVAL_SAMPLE_SIZE`] keys drawn from the accesses since the last
//!   [`LoadTracker::take_interval_buckets`] by the same reservoir sampling,
//!   and the smallest and largest key accessed. The split finder's sample above covers
//!   a whole hot period (many minutes) and so cannot say where *this*
//!   minute's load fell; this one is emptied at every minute roll-up, so a
//!   timestamp-first table's minute rows show the thin slice each minute
//!   wrote (the diagonal of the key visualizer) rather than the whole split.
//!
//! The sample and the counters describe the load since
//! [`LoadTracker::reset_sample`] (called by the split manager when a split
//! cools down, so the sample always reflects the current hot period).

use serde::{Deserialize, Serialize};

use crate::buckets::{KeyBuckets, MAX_BUCKETS};

/// The sliding window of [`LoadTracker::rate`], in seconds.
pub const WINDOW_SECS: u64 = 60;
/// The most keys in the sample.
pub const SAMPLE_SIZE: usize = 20;
/// The most keys in the interval sample (see the module docs).
pub const INTERVAL_SAMPLE_SIZE: usize = 128;
/// How old the frontier the monotonicity counters compare with is: an
/// access in second `s` is compared with the largest and smallest keys
/// seen by the end of second `s - FRONTIER_LAG_SECS` (see the module docs).
pub const FRONTIER_LAG_SECS: u64 = 3;

const NANOS: u64 = 1_000_000_000;
/// Buckets in the ring: the window plus the current second.
const BUCKETS: usize = WINDOW_SECS as usize + 1;

/// What an access did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AccessKind {
    /// A point read.
    Read,
    /// A write of one or more rows (charged at its first key; the others
    /// join the key sample through [`LoadTracker::sample_write`]).
    Write,
    /// A range read.
    Scan,
}

/// One access to a split, as charged to its [`LoadTracker`].
#[derive(Debug, Clone, Copy)]
pub struct Access<'a> {
    /// Read, write or scan.
    pub kind: AccessKind,
    /// The key read/written; for scans, the first key of the range within
    /// this split.
    pub key: &'a [u8],
    /// Scans: exclusive end of the range within this split (`None`: to the
    /// split's limit).
    pub end: Option<&'a [u8]>,
    /// Rows read or written.
    pub rows: u64,
    /// Key and value bytes read or written.
    pub bytes: u64,
    /// CPU this access cost the split's node (measured, or modelled by the
    /// simulator).
    pub cpu_nanos: u64,
}

impl<'a> Access<'a> {
    /// A point read of `key`.
    pub fn read(key: &'a [u8], rows: u64, bytes: u64, cpu_nanos: u64) -> Access<'a> {
        Access {
            kind: AccessKind::Read,
            key,
            end: None,
            rows,
            bytes,
            cpu_nanos,
        }
    }

    /// A write of `rows` rows starting at `key`.
    pub fn write(key: &'a [u8], rows: u64, bytes: u64, cpu_nanos: u64) -> Access<'a> {
        Access {
            kind: AccessKind::Write,
            key,
            end: None,
            rows,
            bytes,
            cpu_nanos,
        }
    }

    /// A scan of `[key, end)` (`None`: to the split's limit).
    pub fn scan(
        key: &'a [u8],
        end: Option<&'a [u8]>,
        rows: u64,
        bytes: u64,
        cpu_nanos: u64,
    ) -> Access<'a> {
        Access {
            kind: AccessKind::Scan,
            key,
            end,
            rows,
            bytes,
            cpu_nanos,
        }
    }
}

/// Average load per second.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadRate {
    /// Requests per second.
    pub requests: f64,
    /// Rows read per second.
    pub rows_read: f64,
    /// Rows written per second.
    pub rows_written: f64,
    /// Bytes read per second.
    pub bytes_read: f64,
    /// Bytes written per second.
    pub bytes_written: f64,
    /// CPU-seconds per second (1.0 = one node busy).
    pub cpu: f64,
}

/// Counters of load (one bucket, or totals).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadTotals {
    /// Requests.
    pub requests: u64,
    /// Rows read.
    pub rows_read: u64,
    /// Rows written.
    pub rows_written: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// CPU nanoseconds.
    pub cpu_nanos: u64,
}

impl LoadTotals {
    fn add(&mut self, access: &Access<'_>) {
        self.requests += 1;
        match access.kind {
            AccessKind::Write => {
                self.rows_written += access.rows;
                self.bytes_written += access.bytes;
            }
            AccessKind::Read | AccessKind::Scan => {
                self.rows_read += access.rows;
                self.bytes_read += access.bytes;
            }
        }
        self.cpu_nanos += access.cpu_nanos;
    }

    fn merge(&mut self, other: &LoadTotals) {
        self.requests += other.requests;
        self.rows_read += other.rows_read;
        self.rows_written += other.rows_written;
        self.bytes_read += other.bytes_read;
        self.bytes_written += other.bytes_written;
        self.cpu_nanos += other.cpu_nanos;
    }

    /// `self - earlier`, saturating.
    pub fn since(&self, earlier: &LoadTotals) -> LoadTotals {
        LoadTotals {
            requests: self.requests.saturating_sub(earlier.requests),
            rows_read: self.rows_read.saturating_sub(earlier.rows_read),
            rows_written: self.rows_written.saturating_sub(earlier.rows_written),
            bytes_read: self.bytes_read.saturating_sub(earlier.bytes_read),
            bytes_written: self.bytes_written.saturating_sub(earlier.bytes_written),
            cpu_nanos: self.cpu_nanos.saturating_sub(earlier.cpu_nanos),
        }
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct Bucket {
    /// The second (since the epoch) the counters belong to.
    second: u64,
    totals: LoadTotals,
}

/// One sampled key and the accesses seen since it was admitted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeySample {
    /// The key.
    pub key: Vec<u8>,
    /// Accesses entirely left of the key (point keys below it, scans ending
    /// at or before it).
    pub left: u64,
    /// Accesses at or right of the key.
    pub right: u64,
    /// Scans covering the key (neither side of a boundary there).
    pub spanning: u64,
    /// Point accesses exactly at the key.
    pub equal: u64,
}

impl KeySample {
    /// Accesses observed since the key was admitted.
    pub fn observations(&self) -> u64 {
        self.left + self.right + self.spanning
    }

    /// `|left - right| / (left + right)`: 0 for an even division, 1 when all
    /// accesses are on one side (1 also when there are none).
    pub fn imbalance(&self) -> f64 {
        let sides = self.left + self.right;
        if sides == 0 {
            return 1.0;
        }
        self.left.abs_diff(self.right) as f64 / sides as f64
    }

    /// The fraction of observations that span the key.
    pub fn spanning_fraction(&self) -> f64 {
        let total = self.observations();
        if total == 0 {
            return 0.0;
        }
        self.spanning as f64 / total as f64
    }
}

/// A read-only copy of the sample part of a tracker, for decisions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SampleSnapshot {
    /// The sampled keys, in admission order.
    pub samples: Vec<KeySample>,
    /// Accesses since the sample was reset.
    pub accesses: u64,
    /// Of those, scans.
    pub scans: u64,
    /// Point accesses (reads and writes) since the reset.
    pub points: u64,
    /// Of those, the ones compared with a frontier (all but the first
    /// [`FRONTIER_LAG_SECS`] seconds' worth).
    pub compared: u64,
    /// Compared point accesses beyond the frontier's largest key.
    pub beyond_max: u64,
    /// Compared point accesses below the frontier's smallest key.
    pub below_min: u64,
}

/// The recent load of one split. See the module docs.
#[derive(Debug, Clone)]
pub struct LoadTracker {
    created: u64,
    buckets: Box<[Bucket; BUCKETS]>,
    totals: LoadTotals,
    /// Sample slots; the first `live` are in use (the rest keep their key
    /// buffers for reuse after a reset).
    samples: Vec<KeySample>,
    live: usize,
    /// The live slots' indexes, sorted by their keys.
    by_key: Vec<usize>,
    /// Accesses offered to the reservoir since the reset.
    seen: u64,
    scans: u64,
    points: u64,
    compared: u64,
    beyond_max: u64,
    below_min: u64,
    max_key: Vec<u8>,
    min_key: Vec<u8>,
    /// The second of the latest point access (`u64::MAX`: none yet).
    current_second: u64,
    /// `(second, max_key, min_key)` as they were at the end of each of the
    /// last seconds with point accesses, oldest first (at most
    /// `FRONTIER_LAG_SECS + 1`; the key buffers are reused).
    ends: std::collections::VecDeque<(u64, Vec<u8>, Vec<u8>)>,
    /// Key buffers of `ends` entries dropped by a reset, for reuse.
    spare_ends: Vec<(Vec<u8>, Vec<u8>)>,
    rng: u64,
    /// The interval sample: the first `interval_live` slots are in use.
    interval_keys: Vec<Vec<u8>>,
    interval_live: usize,
    interval_seen: u64,
    interval_min: Vec<u8>,
    interval_max: Vec<u8>,
    /// The interval sample's own random state, so that it leaves the split
    /// finder's draws (and so its split decisions) exactly as they were.
    interval_rng: u64,
}

impl Default for LoadTracker {
    fn default() -> Self {
        LoadTracker::new()
    }
}

impl LoadTracker {
    /// A tracker with no load, created at an unknown time: its window
    /// starts at its first access (see [`LoadTracker::starting_at`]).
    pub fn new() -> LoadTracker {
        LoadTracker::starting_at(0)
    }

    /// A tracker created at `now`: rates average over the time since `now`
    /// until the tracker is a window old.
    pub fn starting_at(now: u64) -> LoadTracker {
        LoadTracker {
            created: now,
            buckets: Box::new([Bucket::default(); BUCKETS]),
            totals: LoadTotals::default(),
            samples: Vec::new(),
            live: 0,
            by_key: Vec::new(),
            seen: 0,
            scans: 0,
            points: 0,
            compared: 0,
            beyond_max: 0,
            below_min: 0,
            max_key: Vec::new(),
            min_key: Vec::new(),
            current_second: u64::MAX,
            ends: std::collections::VecDeque::new(),
            spare_ends: Vec::new(),
            rng: 0x9E37_79B9_7F4A_7C15 ^ now,
            interval_keys: Vec::new(),
            interval_live: 0,
            interval_seen: 0,
            interval_min: Vec::new(),
            interval_max: Vec::new(),
            interval_rng: 0x2545_F491_4F6C_DD1D ^ now.rotate_left(17),
        }
    }

    /// When the tracker was created.
    pub fn created(&self) -> u64 {
        self.created
    }

    /// Counts one more key written by a write already charged with
    /// [`LoadTracker::record`] at `now` (a commit writing several rows of
    /// the split): the key joins the key sample and the sequence counters,
    /// as its own point access, but adds nothing to the totals, which the
    /// recorded access already carries.
    pub fn sample_write(&mut self, now: u64, key: &[u8]) {
        self.sample(now / NANOS, &Access::write(key, 0, 0, 0));
    }

    /// Charges `access` at `now`.
    pub fn record(&mut self, now: u64, access: &Access<'_>) {
        if self.created == 0 {
            // Created at an unknown time (0): the window starts with the
            // first access.
            self.created = now;
        }
        let second = now / NANOS;
        let bucket = &mut self.buckets[(second % BUCKETS as u64) as usize];
        if bucket.second != second {
            *bucket = Bucket {
                second,
                totals: LoadTotals::default(),
            };
        }
        bucket.totals.add(access);
        self.totals.add(access);
        self.sample(second, access);
    }

    fn sample(&mut self, second: u64, access: &Access<'_>) {
        let key = access.key;
        let is_scan = access.kind == AccessKind::Scan;
        // Count the access against the keys already sampled: find its
        // place among them (sorted), then bump each side's counters.
        let samples = &mut self.samples;
        let order = &self.by_key;
        let below = order.partition_point(|&i| samples[i].key.as_slice() < key);
        if is_scan {
            // Samples at or past the scan's end are right of it (the scan
            // counts left); of those before the end, the ones below its
            // start count it right and the rest are spanned.
            let before_end = access.end.map_or(order.len(), |end| {
                order.partition_point(|&i| samples[i].key.as_slice() < end)
            });
            let right = below.min(before_end);
            for &i in &order[..right] {
                samples[i].right += 1;
            }
            for &i in &order[right..before_end] {
                samples[i].spanning += 1;
            }
            for &i in &order[before_end..] {
                samples[i].left += 1;
            }
        } else {
            for &i in &order[..below] {
                samples[i].right += 1;
            }
            let mut above = below;
            while let Some(&i) = order.get(above) {
                if samples[i].key.as_slice() != key {
                    break;
                }
                samples[i].right += 1;
                samples[i].equal += 1;
                above += 1;
            }
            for &i in &order[above..] {
                samples[i].left += 1;
            }
        }
        if is_scan {
            self.scans += 1;
        } else {
            if self.points == 0 {
                self.max_key.extend_from_slice(key);
                self.min_key.extend_from_slice(key);
                self.current_second = second;
            } else {
                self.end_seconds_before(second);
                // The frontier: the keys seen by the end of the latest
                // second at least FRONTIER_LAG_SECS back (none yet in the
                // first seconds: nothing is compared).
                let frontier = second
                    .checked_sub(FRONTIER_LAG_SECS)
                    .and_then(|horizon| self.ends.iter().rev().find(|(s, ..)| *s <= horizon));
                if let Some((_, max, min)) = frontier {
                    self.compared += 1;
                    if key > max.as_slice() {
                        self.beyond_max += 1;
                    } else if key < min.as_slice() {
                        self.below_min += 1;
                    }
                }
                if key > self.max_key.as_slice() {
                    self.max_key.clear();
                    self.max_key.extend_from_slice(key);
                } else if key < self.min_key.as_slice() {
                    self.min_key.clear();
                    self.min_key.extend_from_slice(key);
                }
            }
            self.points += 1;
        }
        // Reservoir sampling: the n-th access is kept with probability k/n.
        self.seen += 1;
        let slot = if self.live < SAMPLE_SIZE {
            self.live += 1;
            if self.samples.len() < self.live {
                self.samples.push(KeySample::default());
            }
            Some(self.live - 1)
        } else {
            let j = (self.next_random() % self.seen) as usize;
            (j < SAMPLE_SIZE).then_some(j)
        };
        if let Some(j) = slot.filter(|&j| j < self.samples.len()) {
            // A new slot joins the index; a reused one leaves its old place.
            if let Some(at) = self.by_key.iter().position(|&i| i == j) {
                self.by_key.remove(at);
            }
            let s = &mut self.samples[j];
            // Reuses the slot's buffer: no allocation unless the key is
            // longer than any the slot held.
            s.key.clear();
            s.key.extend_from_slice(key);
            s.left = 0;
            s.right = 0;
            s.spanning = 0;
            s.equal = 0;
            let samples = &self.samples;
            let at = self
                .by_key
                .partition_point(|&i| samples[i].key.as_slice() < key);
            self.by_key.insert(at, j);
        }
        self.sample_interval(key);
    }

    /// The interval sample's share of [`LoadTracker::record`].
    fn sample_interval(&mut self, key: &[u8]) {
        if self.interval_seen == 0 || key > self.interval_max.as_slice() {
            self.interval_max.clear();
            self.interval_max.extend_from_slice(key);
        }
        if self.interval_seen == 0 || key < self.interval_min.as_slice() {
            self.interval_min.clear();
            self.interval_min.extend_from_slice(key);
        }
        self.interval_seen += 1;
        let slot = if self.interval_live < INTERVAL_SAMPLE_SIZE {
            self.interval_live += 1;
            if self.interval_keys.len() < self.interval_live {
                self.interval_keys.push(Vec::new());
            }
            Some(self.interval_live - 1)
        } else {
            let j = (xorshift(&mut self.interval_rng) % self.interval_seen) as usize;
            (j < INTERVAL_SAMPLE_SIZE).then_some(j)
        };
        if let Some(k) = slot.and_then(|j| self.interval_keys.get_mut(j)) {
            k.clear();
            k.extend_from_slice(key);
        }
    }

    /// Where in `[start, limit)` the accesses since the previous call fell,
    /// as at most [`MAX_BUCKETS`] key buckets (see [`KeyBuckets`]), and
    /// starts a new interval. Empty when there was no access.
    pub fn take_interval_buckets(&mut self, start: &[u8], limit: Option<&[u8]>) -> KeyBuckets {
        // The smallest key counts as one more sample, so the buckets reach
        // down to it (as they reach up to the largest).
        let mut keys: Vec<&[u8]> = self.interval_keys[..self.interval_live]
            .iter()
            .map(Vec::as_slice)
            .chain(std::iter::once(self.interval_min.as_slice()))
            .collect();
        keys.sort_unstable();
        let buckets = if self.interval_seen == 0 {
            KeyBuckets::default()
        } else {
            KeyBuckets::from_sample(&keys, &self.interval_max, start, limit, MAX_BUCKETS)
        };
        self.interval_live = 0;
        self.interval_seen = 0;
        buckets
    }

    /// xorshift64*: deterministic, cheap, good enough for a reservoir.
    fn next_random(&mut self) -> u64 {
        xorshift(&mut self.rng)
    }

    /// Records the end of the seconds before `second` that had point
    /// accesses (only the latest one can be unrecorded): the keys seen by
    /// then become a frontier for later seconds. A second earlier than the
    /// current one (a thread that read the clock before another) counts as
    /// the current one.
    fn end_seconds_before(&mut self, second: u64) {
        if second <= self.current_second || self.current_second == u64::MAX {
            return;
        }
        let ended = self.current_second;
        self.current_second = second;
        // Reuse the oldest entry's buffers once there are enough.
        let (mut max, mut min) = if self.ends.len() > FRONTIER_LAG_SECS as usize {
            let (_, max, min) = self.ends.pop_front().unwrap_or_default();
            (max, min)
        } else {
            self.spare_ends.pop().unwrap_or_default()
        };
        max.clone_from(&self.max_key);
        min.clone_from(&self.min_key);
        self.ends.push_back((ended, max, min));
    }

    /// Forgets the key sample and the monotonicity counters (not the rates).
    pub fn reset_sample(&mut self) {
        self.live = 0;
        self.by_key.clear();
        self.seen = 0;
        self.scans = 0;
        self.points = 0;
        self.compared = 0;
        self.beyond_max = 0;
        self.below_min = 0;
        self.max_key.clear();
        self.min_key.clear();
        self.current_second = u64::MAX;
        while let Some((_, max, min)) = self.ends.pop_front() {
            self.spare_ends.push((max, min));
        }
    }

    /// The sample and counters since the last reset.
    pub fn sample_snapshot(&self) -> SampleSnapshot {
        SampleSnapshot {
            samples: self.samples[..self.live].to_vec(),
            accesses: self.seen,
            scans: self.scans,
            points: self.points,
            compared: self.compared,
            beyond_max: self.beyond_max,
            below_min: self.below_min,
        }
    }

    /// Everything charged since creation.
    pub fn totals(&self) -> LoadTotals {
        self.totals
    }

    /// Everything charged before `t` (exact as long as `t` is less than a
    /// window old: later accesses are still in the per-second buckets).
    pub fn totals_before(&self, t: u64) -> LoadTotals {
        let from = t / NANOS;
        let mut later = LoadTotals::default();
        for b in self.buckets.iter() {
            if b.second >= from {
                later.merge(&b.totals);
            }
        }
        self.totals.since(&later)
    }

    /// The load of the last [`WINDOW_SECS`] seconds (the current second
    /// included), summed.
    pub fn window_totals(&self, now: u64) -> LoadTotals {
        let current = now / NANOS;
        let mut sum = LoadTotals::default();
        for b in self.buckets.iter() {
            if b.second <= current && current - b.second < WINDOW_SECS {
                sum.merge(&b.totals);
            }
        }
        sum
    }

    /// Averages over the last 60 s (or since creation if younger, at least
    /// 1 s).
    pub fn rate(&self, now: u64) -> LoadRate {
        let t = self.window_totals(now);
        let age = now.saturating_sub(self.created) as f64 / NANOS as f64;
        let secs = age.clamp(1.0, WINDOW_SECS as f64);
        LoadRate {
            requests: t.requests as f64 / secs,
            rows_read: t.rows_read as f64 / secs,
            rows_written: t.rows_written as f64 / secs,
            bytes_read: t.bytes_read as f64 / secs,
            bytes_written: t.bytes_written as f64 / secs,
            cpu: t.cpu_nanos as f64 / NANOS as f64 / secs,
        }
    }

    /// The CPU rate (node-seconds per second) of the last `secs` whole
    /// seconds before `now` (at most [`WINDOW_SECS`]; the current second,
    /// still filling, left out): a short view for decisions that must see
    /// a load move soon after it moved, as a cluster's lease balancer.
    pub fn recent_cpu(&self, now: u64, secs: u64) -> f64 {
        let secs = secs.clamp(1, WINDOW_SECS);
        let current = now / NANOS;
        let cpu: u64 = self
            .buckets
            .iter()
            .filter(|b| b.second < current && current - b.second <= secs)
            .map(|b| b.totals.cpu_nanos)
            .sum();
        cpu as f64 / NANOS as f64 / secs as f64
    }

    /// Spanner's CPU_USAGE_SCORE: `rate().cpu * 100.0` (percent of a node).
    pub fn score(&self, now: u64) -> f64 {
        self.rate(now).cpu * 100.0
    }
}

/// xorshift64* step of `state` (never 0 unless seeded 0).
fn xorshift(state: &mut u64) -> u64 {
    let mut x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    x.wrapping_mul(0x2545_F491_4F6C_DD1D)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Ordering;

    const S: u64 = NANOS;

    #[test]
    fn rate_over_sliding_window() {
        let mut t = LoadTracker::starting_at(0);
        for sec in 0..120u64 {
            for _ in 0..10 {
                t.record(sec * S, &Access::read(b"k", 1, 10, S / 100));
            }
        }
        let r = t.rate(119 * S);
        assert!((r.requests - 10.0).abs() < 1e-9, "{r:?}");
        assert!((t.score(119 * S) - 10.0).abs() < 1e-9);
        // Young tracker: averaged since creation.
        let mut y = LoadTracker::starting_at(100 * S);
        y.record(100 * S, &Access::write(b"k", 2, 20, S / 2));
        assert!((y.rate(100 * S).cpu - 0.5).abs() < 1e-9);
        assert!((y.rate(102 * S).rows_written - 1.0).abs() < 1e-9);
        // Old buckets fall out of the window.
        assert_eq!(t.rate(500 * S).requests, 0.0);
        assert_eq!(t.totals().requests, 1200);
    }

    #[test]
    fn recent_cpu_sees_only_the_last_whole_seconds() {
        let mut t = LoadTracker::starting_at(0);
        // A quarter of a node for 30 s, then nothing.
        for sec in 0..30u64 {
            t.record(sec * S, &Access::write(b"k", 1, 1, S / 4));
        }
        assert!((t.recent_cpu(30 * S, 10) - 0.25).abs() < 1e-9);
        // Five quiet seconds halve the ten-second view; the sixty-second
        // rate has hardly moved.
        assert!((t.recent_cpu(35 * S, 10) - 0.125).abs() < 1e-9);
        assert!(t.rate(35 * S).cpu > 0.12);
        assert_eq!(t.recent_cpu(45 * S, 10), 0.0);
        // The second still filling is left out.
        t.record(45 * S + S / 2, &Access::write(b"k", 1, 1, S));
        assert_eq!(t.recent_cpu(45 * S + S / 2, 10), 0.0);
        assert!((t.recent_cpu(46 * S, 10) - 0.1).abs() < 1e-9);
    }

    #[test]
    fn sample_counts_sides_and_spanning() {
        let mut t = LoadTracker::new();
        t.record(0, &Access::read(b"m", 1, 1, 1));
        t.record(0, &Access::read(b"a", 1, 1, 1));
        // Until FRONTIER_LAG_SECS have passed there is no frontier: nothing
        // is compared, so nothing is "beyond" yet.
        t.record(S, &Access::read(b"y", 1, 1, 1));
        assert_eq!(t.sample_snapshot().compared, 0);
        let later = FRONTIER_LAG_SECS * S;
        t.record(later, &Access::read(b"z", 1, 1, 1));
        t.record(later, &Access::read(b"0", 1, 1, 1));
        t.record(later, &Access::scan(b"b", Some(b"x"), 1, 1, 1));
        t.record(later, &Access::scan(b"b", Some(b"c"), 1, 1, 1));
        let snap = t.sample_snapshot();
        let m = &snap.samples[0];
        assert_eq!((m.left, m.right, m.spanning), (3, 2, 1));
        // Compared with the keys seen by the end of second 0 ("a" to "m"):
        // "z" is beyond, "0" below.
        assert_eq!((snap.points, snap.compared), (5, 2));
        assert_eq!(snap.beyond_max, 1);
        assert_eq!(snap.below_min, 1);
        assert_eq!(snap.scans, 2);
    }

    #[test]
    fn interval_sample_shows_where_each_interval_went() {
        let mut t = LoadTracker::new();
        // First interval: keys 0..1000; second: 5000..6000.
        for k in 0..1000u32 {
            t.record(S, &Access::write(&k.to_be_bytes(), 1, 1, 1));
        }
        let first = t.take_interval_buckets(b"", None);
        for k in 5000..6000u32 {
            t.record(2 * S, &Access::write(&k.to_be_bytes(), 1, 1, 1));
        }
        let second = t.take_interval_buckets(b"", None);
        assert!(!first.is_empty() && first.len() <= MAX_BUCKETS);
        assert!(first.bounds.last().unwrap().as_slice() <= &5000u32.to_be_bytes()[..]);
        assert!(second.bounds[0].as_slice() >= &1000u32.to_be_bytes()[..]);
        // The end is just after the largest key.
        assert_eq!(second.bounds.last().unwrap()[..4], 5999u32.to_be_bytes());
        let total: f32 = second.shares.iter().sum();
        assert!((total - 1.0).abs() < 1e-4);
        // Nothing since: no buckets.
        assert!(t.take_interval_buckets(b"", None).is_empty());
    }

    #[test]
    fn keys_slightly_out_of_order_still_count_as_a_sequence() {
        // Each second, 100 keys (second, random id): not increasing within a
        // second, but every one beyond everything seen before that second.
        let mut t = LoadTracker::new();
        let mut rng = 12345u64;
        for sec in 0..10u64 {
            for _ in 0..100 {
                rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1);
                let key = [sec.to_be_bytes(), (rng >> 33).to_be_bytes()].concat();
                t.record(sec * S, &Access::write(&key, 1, 1, 1));
            }
        }
        let snap = t.sample_snapshot();
        // All 700 accesses compared (from second FRONTIER_LAG_SECS on) are
        // beyond the frontier.
        assert_eq!(FRONTIER_LAG_SECS, 3);
        assert_eq!((snap.compared, snap.beyond_max), (700, 700));
    }

    /// Keys stamped by clients in order, then served out of order after
    /// waiting up to two seconds behind a saturated node, against random
    /// keys served the same way.
    #[test]
    fn a_queued_sequence_is_still_a_sequence_and_random_keys_are_not() {
        let mut rng = 777u64;
        let mut draw = move |n: u64| {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (rng >> 33) % n
        };
        // (served at, key): 50 keys stamped per second for 60 s, each
        // served 0 to 2 s after it was stamped.
        let mut sequence = Vec::new();
        let mut random = Vec::new();
        for i in 0..3000u64 {
            let stamped = i * S / 50;
            let served = stamped + draw(2 * S);
            sequence.push((served, stamped.to_be_bytes()));
            random.push((served, draw(u64::MAX).to_be_bytes()));
        }
        for (accesses, moving) in [(sequence, true), (random, false)] {
            let mut accesses = accesses;
            accesses.sort();
            let mut t = LoadTracker::new();
            for (at, key) in &accesses {
                t.record(*at, &Access::write(key, 1, 1, 1));
            }
            let snap = t.sample_snapshot();
            let share = snap.beyond_max as f64 / snap.compared as f64;
            if moving {
                assert!(share > 0.95, "{share}");
            } else {
                assert!(share < 0.05, "{share}");
            }
        }
    }

    /// How one access moves a sample's counters, by the rules in the
    /// module docs, comparing with the one key: the reference the sorted
    /// index must agree with.
    fn counted_against(sample: &KeySample, access: &Access<'_>) -> (u64, u64, u64, u64) {
        let sk = sample.key.as_slice();
        if access.kind == AccessKind::Scan {
            if access.end.is_some_and(|end| end <= sk) {
                (1, 0, 0, 0)
            } else if access.key > sk {
                (0, 1, 0, 0)
            } else {
                (0, 0, 1, 0)
            }
        } else {
            match access.key.cmp(sk) {
                Ordering::Less => (1, 0, 0, 0),
                Ordering::Equal => (0, 1, 0, 1),
                Ordering::Greater => (0, 1, 0, 0),
            }
        }
    }

    proptest::proptest! {
        /// Every sample kept across an access gains exactly what the
        /// one-key rules give it; a replaced one starts at the access's key
        /// with nothing counted. Keys of one or two bytes from a small
        /// alphabet make equal keys, scans ending before or at samples, and
        /// empty scans common.
        #[test]
        fn the_sorted_index_counts_as_comparing_with_every_key(
            accesses in proptest::collection::vec(
                (
                    proptest::bool::ANY,
                    proptest::collection::vec(0u8..4, 1..3),
                    proptest::option::of(proptest::collection::vec(0u8..4, 1..3)),
                ),
                1..200,
            ),
            reset_at in 0usize..200,
        ) {
            let mut t = LoadTracker::new();
            for (n, (scan, key, end)) in accesses.iter().enumerate() {
                if n == reset_at {
                    t.reset_sample();
                }
                let access = if *scan {
                    Access::scan(key, end.as_deref(), 1, 1, 1)
                } else {
                    Access::read(key, 1, 1, 1)
                };
                let before = t.sample_snapshot().samples;
                t.record(S, &access);
                let after = t.sample_snapshot().samples;
                proptest::prop_assert!(after.len() >= before.len());
                for (slot, now) in after.iter().enumerate() {
                    if now.observations() == 0 {
                        proptest::prop_assert_eq!(now.key.as_slice(), &key[..]);
                        proptest::prop_assert_eq!(now.equal, 0);
                        continue;
                    }
                    let was = &before[slot];
                    let gained = (
                        now.left - was.left,
                        now.right - was.right,
                        now.spanning - was.spanning,
                        now.equal - was.equal,
                    );
                    proptest::prop_assert_eq!(gained, counted_against(was, &access));
                }
            }
        }
    }
}
