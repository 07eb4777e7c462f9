//! [`SplitPolicy`]: when and where to split a split, and why a hot split
//! cannot be split ([`UnsplittableReason`]).
//!
//! The decision for a hot split ([`SplitPolicy::load_decision`]) reads the
//! key sample of its [`LoadTracker`](crate::LoadTracker), in this order:
//!
//! 1. **Moving hot spot**: at least [`MOVING_FRACTION`] of the point accesses
//!    went beyond the largest (or below the smallest) key seen a few seconds
//!    before them (the tracker's frontier): sequential keys. Any boundary
//!    would be behind the next access, so the split is not cut. While too
//!    few point accesses have been compared with a frontier to tell (a
//!    split's first seconds), the decision waits.
//! 2. **Split key**: among the sampled keys with at least `min_samples`
//!    observations, left/right imbalance under `max_imbalance` and spanning
//!    fraction under `max_spanning`, the most balanced one, aligned by the
//!    [`KeyAligner`] to its root-row boundary (or, if that is not strictly
//!    inside the split, its row boundary).
//! 3. **Large scans**: at least `max_spanning` of the observations are scans
//!    spanning the sampled keys.
//! 4. **Hot row**: at least [`HOT_ROW_FRACTION`] of the sampled keys fall in
//!    one row. If the split holds more than that row (and its descendants),
//!    cut at the row's start or end to isolate it; otherwise `HOT_ROW` (only
//!    that row sampled) or `UNISOLATABLE_HOT_ROW` (its descendants are hot
//!    too and cannot be separated from it).
//! 5. **Mostly moving**: no key divides the load and at least
//!    [`MOSTLY_MOVING_FRACTION`] of the point accesses went beyond the
//!    frontier: a sequence mixed with other work (the tail of an index on a
//!    timestamp also takes deletes of recent entries) is `MOVING_HOT_SPOT`.
//! 6. Otherwise `UNSPECIFIED`.
//!
//! Until enough has been observed the decision is [`LoadDecision::Wait`].
//! The fractions of steps 1 and 5 are of the point accesses compared with
//! a frontier ([`SampleSnapshot::compared`]).

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::load::SampleSnapshot;

/// Fraction of point accesses beyond the largest (or below the smallest)
/// earlier key that makes a moving hot spot.
pub const MOVING_FRACTION: f64 = 0.7;
/// When no key divides the load, at least this share of point accesses
/// beyond the frontier still makes a hot split a moving hot spot.
pub const MOSTLY_MOVING_FRACTION: f64 = 0.5;
/// Fraction of the sampled keys in one row that makes a hot row.
pub const HOT_ROW_FRACTION: f64 = 0.5;

/// Why a hot split is not split (Spanner's `UNSPLITTABLE_REASONS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum UnsplittableReason {
    /// One row takes most of the load and is alone in its split.
    HotRow,
    /// The load goes to ever-increasing (or decreasing) keys.
    MovingHotSpot,
    /// Most accesses are scans covering the split.
    LargeScanHotSpot,
    /// One row takes most of the load and cannot be isolated further.
    UnisolatableHotRow,
    /// No good split key, for no recognised reason.
    Unspecified,
}

impl UnsplittableReason {
    /// Spanner's name: `"HOT_ROW"`, `"MOVING_HOT_SPOT"`, ...
    pub fn as_str(&self) -> &'static str {
        match self {
            UnsplittableReason::HotRow => "HOT_ROW",
            UnsplittableReason::MovingHotSpot => "MOVING_HOT_SPOT",
            UnsplittableReason::LargeScanHotSpot => "LARGE_SCAN_HOT_SPOT",
            UnsplittableReason::UnisolatableHotRow => "UNISOLATABLE_HOT_ROW",
            UnsplittableReason::Unspecified => "UNSPECIFIED",
        }
    }
}

impl fmt::Display for UnsplittableReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Knows where rows begin in a key: boundaries go at row boundaries.
pub trait KeyAligner: Send + Sync {
    /// The root-row boundary for `key`: the prefix of `key` that identifies its root row
    /// (object id + root key columns), which is where a split boundary may go. None if `key`
    /// is not inside a row (then the key itself may be used).
    fn root_row(&self, key: &[u8]) -> Option<Vec<u8>>;
    /// The complete row prefix of the row `key` belongs to (deepest level: a child row),
    /// used to tell a hot row and to isolate a hot child row with its descendants.
    fn row(&self, key: &[u8]) -> Option<Vec<u8>>;
    /// The first key after the row `row` (as returned by [`KeyAligner::row`])
    /// and its descendants; `None` if nothing follows. Default: the prefix
    /// successor (row prefixes are self-delimiting and descendants extend
    /// them).
    fn row_end(&self, row: &[u8]) -> Option<Vec<u8>> {
        prefix_end(row)
    }
}

/// Treats keys as opaque: root_row/row return the key itself (for tests and raw use).
#[derive(Debug, Clone, Copy, Default)]
pub struct RawKeys;

impl KeyAligner for RawKeys {
    fn root_row(&self, key: &[u8]) -> Option<Vec<u8>> {
        Some(key.to_vec())
    }

    fn row(&self, key: &[u8]) -> Option<Vec<u8>> {
        Some(key.to_vec())
    }

    /// The immediate successor: a raw key has no descendants.
    fn row_end(&self, row: &[u8]) -> Option<Vec<u8>> {
        let mut end = row.to_vec();
        end.push(0);
        Some(end)
    }
}

/// The first key that does not start with `prefix` and sorts after it.
pub fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xFF {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

/// When to split and merge. Defaults follow Spanner and CockroachDB (see
/// `docs/design/splits.md`).
#[derive(Debug, Clone, PartialEq)]
pub struct SplitPolicy {
    /// Bytes above which a split is cut at its median row; default 4 GiB.
    pub size_limit: u64,
    /// CPU score at or above which a split is hot; default 50.0.
    pub split_threshold: f64,
    /// How long a split stays hot before it is cut; default 120 s.
    pub hot_for: Duration,
    /// Least time between load decisions on a split (and after a split
    /// is created); default 60 s.
    pub cooldown: Duration,
    /// Observations a sampled key needs to be a split key; default 100.
    pub min_samples: u64,
    /// Largest left/right imbalance of a split key; default 0.25.
    pub max_imbalance: f64,
    /// Largest fraction of scans spanning a split key; default 0.5.
    pub max_spanning: f64,
    /// Neighbours merge below this fraction of `split_threshold`; default 0.5.
    pub merge_below: f64,
    /// How long neighbours stay cold before merging; default 300 s.
    pub merge_after: Duration,
}

impl Default for SplitPolicy {
    fn default() -> Self {
        SplitPolicy {
            size_limit: 4 << 30,
            split_threshold: 50.0,
            hot_for: Duration::from_secs(120),
            cooldown: Duration::from_secs(60),
            min_samples: 100,
            max_imbalance: 0.25,
            max_spanning: 0.5,
            merge_below: 0.5,
            merge_after: Duration::from_secs(300),
        }
    }
}

/// The outcome of [`SplitPolicy::load_decision`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadDecision {
    /// Cut at this key.
    Split(Vec<u8>),
    /// No key helps, for this reason.
    Unsplittable(UnsplittableReason),
    /// Not enough observations yet.
    Wait,
}

/// Whether `key` is strictly inside `[start, limit)` (a usable boundary).
fn inside(key: &[u8], start: &[u8], limit: Option<&[u8]>) -> bool {
    key > start && limit.is_none_or(|l| key < l)
}

/// `key` aligned to its root row, or else its row, if strictly inside.
fn align(
    key: &[u8],
    start: &[u8],
    limit: Option<&[u8]>,
    aligner: &dyn KeyAligner,
) -> Option<Vec<u8>> {
    let root = aligner.root_row(key).unwrap_or_else(|| key.to_vec());
    if inside(&root, start, limit) {
        return Some(root);
    }
    let row = aligner.row(key).unwrap_or_else(|| key.to_vec());
    inside(&row, start, limit).then_some(row)
}

impl SplitPolicy {
    /// The merge threshold: `merge_below * split_threshold`.
    pub fn merge_threshold(&self) -> f64 {
        self.merge_below * self.split_threshold
    }

    /// Where to cut a split of `[start, limit)` that exceeds `size_limit`,
    /// given its median key: the median aligned to a root-row (else row)
    /// boundary strictly inside the split.
    pub fn size_split_key(
        &self,
        start: &[u8],
        limit: Option<&[u8]>,
        median: &[u8],
        aligner: &dyn KeyAligner,
    ) -> Option<Vec<u8>> {
        align(median, start, limit, aligner)
    }

    /// What to do with a hot split of `[start, limit)` whose tracker holds
    /// `sample` (see the module docs for the order of the checks).
    pub fn load_decision(
        &self,
        start: &[u8],
        limit: Option<&[u8]>,
        sample: &SampleSnapshot,
        aligner: &dyn KeyAligner,
    ) -> LoadDecision {
        if sample.accesses < self.min_samples {
            return LoadDecision::Wait;
        }
        // 1. Sequential keys. A split with many point accesses but too few
        // compared yet (its first seconds) might be one: wait.
        if sample.points >= self.min_samples && sample.compared < self.min_samples {
            return LoadDecision::Wait;
        }
        if sample.compared >= self.min_samples {
            let points = sample.compared as f64;
            if sample.beyond_max as f64 >= MOVING_FRACTION * points
                || sample.below_min as f64 >= MOVING_FRACTION * points
            {
                return LoadDecision::Unsplittable(UnsplittableReason::MovingHotSpot);
            }
        }
        // 2. A balanced key.
        let mut qualified: Vec<_> = sample
            .samples
            .iter()
            .filter(|s| s.observations() >= self.min_samples)
            .collect();
        if qualified.is_empty() {
            return LoadDecision::Wait;
        }
        qualified.sort_by(|a, b| a.imbalance().total_cmp(&b.imbalance()));
        for s in &qualified {
            if s.imbalance() < self.max_imbalance && s.spanning_fraction() < self.max_spanning {
                if let Some(key) = align(&s.key, start, limit, aligner) {
                    return LoadDecision::Split(key);
                }
            }
        }
        // 3. Scans over everything.
        let spanning: u64 = qualified.iter().map(|s| s.spanning).sum();
        let observed: u64 = qualified.iter().map(|s| s.observations()).sum();
        if observed > 0 && spanning as f64 >= self.max_spanning * observed as f64 {
            return LoadDecision::Unsplittable(UnsplittableReason::LargeScanHotSpot);
        }
        // 4. One hot row.
        let rows: Vec<Vec<u8>> = sample
            .samples
            .iter()
            .map(|s| aligner.row(&s.key).unwrap_or_else(|| s.key.clone()))
            .collect();
        let mut best: Option<(&Vec<u8>, usize)> = None;
        for row in &rows {
            let n = rows.iter().filter(|r| *r == row).count();
            if best.is_none_or(|(_, m)| n > m) {
                best = Some((row, n));
            }
        }
        if let Some((row, n)) = best {
            if n as f64 >= HOT_ROW_FRACTION * rows.len() as f64 {
                if inside(row, start, limit) {
                    return LoadDecision::Split(row.clone());
                }
                if let Some(end) = aligner.row_end(row) {
                    if inside(&end, start, limit) {
                        return LoadDecision::Split(end);
                    }
                }
                return LoadDecision::Unsplittable(if n == rows.len() {
                    UnsplittableReason::HotRow
                } else {
                    UnsplittableReason::UnisolatableHotRow
                });
            }
        }
        // 5. No key divides the load, and most accesses still go beyond
        // everything seen before: a sequence mixed with other work (say the
        // tail of an index on a timestamp, which also takes deletes of recent
        // entries) is still a moving hot spot.
        if sample.compared >= self.min_samples {
            let points = sample.compared as f64;
            if sample.beyond_max.max(sample.below_min) as f64 >= MOSTLY_MOVING_FRACTION * points {
                return LoadDecision::Unsplittable(UnsplittableReason::MovingHotSpot);
            }
        }
        LoadDecision::Unsplittable(UnsplittableReason::Unspecified)
    }
}
