//! [`LoadHistory`]: per-split load by interval, for `SPANNER_SYS.SPLIT_STATS_TOP_*`
//! and the key visualizer.
//!
//! The split manager adds one row set per minute ([`LoadHistory::add_minute`]):
//! one [`IntervalStat`] per split that served any request in the minute.
//! When a minute ends on a 10-minute (hour) boundary of the epoch, the minute
//! rows of that 10 minutes (hour) are rolled up into one row per key range
//! (splits are identified by their range, not their id, since ids change on
//! every split and merge): counters summed, the CPU score averaged over the
//! whole interval, unsplittable reasons united. Retention, counted back from
//! the newest interval end: minute rows 24 hours, 10-minute rows 4 days,
//! hour rows 30 days.
//!
//! Each row carries [`KeyBuckets`]: where inside the split's range the
//! interval's load fell (for the key visualizer). They are bounded: at most
//! [`MAX_INTERVAL_KEYS`] boundary keys per interval over all its rows (the
//! busiest splits keep theirs, coarsened to fit), merged on roll-up, and
//! kept only as long as the key visualizer shows the granularity (minute
//! rows 6 hours, 10-minute rows 4 days, hour rows 28 days); older rows keep
//! their counters without buckets.
//!
//! On a cluster, each node keeps the history of the requests it served,
//! so of the splits it led; [`LoadHistory::merged`] puts several nodes'
//! histories side by side, each row labelled with the node it came from
//! (a split whose leader changed within an interval has a row from each).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde::{Deserialize, Serialize};

use crate::buckets::{KeyBuckets, MAX_BUCKETS};
use crate::policy::UnsplittableReason;
use crate::split::{NodeId, SplitId};
use crate::{Error, Result};

const MINUTE: u64 = 60_000_000_000;
const TEN_MINUTES: u64 = 10 * MINUTE;
const HOUR: u64 = 60 * MINUTE;
const DAY: u64 = 24 * HOUR;

/// The most bucket boundary keys of one interval, over all its rows.
pub const MAX_INTERVAL_KEYS: usize = 1024;

/// The interval of a row set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Granularity {
    /// One minute, kept 24 hours.
    Minute,
    /// Ten minutes, kept 4 days.
    TenMinutes,
    /// One hour, kept 30 days.
    Hour,
}

impl Granularity {
    /// The interval length in nanoseconds.
    pub fn nanos(self) -> u64 {
        match self {
            Granularity::Minute => MINUTE,
            Granularity::TenMinutes => TEN_MINUTES,
            Granularity::Hour => HOUR,
        }
    }

    /// How long rows are kept, in nanoseconds.
    pub fn retention(self) -> u64 {
        match self {
            Granularity::Minute => DAY,
            Granularity::TenMinutes => 4 * DAY,
            Granularity::Hour => 30 * DAY,
        }
    }

    /// How long rows keep their [`KeyBuckets`] (as long as the key
    /// visualizer shows the granularity), in nanoseconds.
    pub fn bucket_retention(self) -> u64 {
        match self {
            Granularity::Minute => 6 * HOUR,
            Granularity::TenMinutes => 4 * DAY,
            Granularity::Hour => 28 * DAY,
        }
    }
}

/// The load of one split (key range) over one interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntervalStat {
    /// End of the interval (nanoseconds, exclusive).
    pub interval_end: u64,
    /// The split (the last one seen for this range).
    pub split: SplitId,
    /// First key of the range.
    pub start: Vec<u8>,
    /// Limit of the range (`None`: end of the key space).
    pub limit: Option<Vec<u8>>,
    /// Serving node (the last one seen).
    pub node: NodeId,
    /// The nodes holding a replica of the range (the last seen; empty on
    /// one process, where nothing is replicated).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replicas: Vec<u64>,
    /// CPU_USAGE_SCORE averaged over the interval.
    pub cpu_score: f64,
    /// Requests served.
    pub requests: u64,
    /// Rows read.
    pub rows_read: u64,
    /// Rows written.
    pub rows_written: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// CPU time, nanoseconds.
    pub cpu_nanos: u64,
    /// Reasons the split could not be split during the interval.
    pub unsplittable: Vec<UnsplittableReason>,
    /// Where in the range the load fell (empty: unknown, spread evenly).
    #[serde(default, skip_serializing_if = "KeyBuckets::is_empty")]
    pub buckets: KeyBuckets,
}

impl IntervalStat {
    /// The weight of this row's load when buckets are merged: CPU time,
    /// or requests when no CPU was charged.
    fn load_weight(&self) -> f64 {
        if self.cpu_nanos > 0 {
            self.cpu_nanos as f64
        } else {
            self.requests as f64
        }
    }
}

/// Interval statistics at three granularities. See the module docs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadHistory {
    minute: VecDeque<(u64, Vec<IntervalStat>)>,
    ten_minutes: VecDeque<(u64, Vec<IntervalStat>)>,
    hour: VecDeque<(u64, Vec<IntervalStat>)>,
}

impl LoadHistory {
    /// An empty history.
    pub fn new() -> LoadHistory {
        LoadHistory::default()
    }

    /// Adds the minute ending at `interval_end` (its rows' `interval_end`
    /// is set to it), rolls up 10-minute and hour rows when `interval_end`
    /// closes one, and drops rows past retention.
    pub fn add_minute(&mut self, interval_end: u64, mut stats: Vec<IntervalStat>) {
        if self
            .minute
            .back()
            .is_some_and(|(end, _)| *end >= interval_end)
        {
            return; // already recorded
        }
        for s in &mut stats {
            s.interval_end = interval_end;
        }
        cap_buckets(&mut stats);
        self.minute.push_back((interval_end, stats));
        for (g, rows) in [
            (Granularity::TenMinutes, &mut self.ten_minutes),
            (Granularity::Hour, &mut self.hour),
        ] {
            if interval_end.is_multiple_of(g.nanos()) {
                let from = interval_end.saturating_sub(g.nanos());
                let rolled = roll_up(
                    self.minute
                        .iter()
                        .filter(|(end, _)| *end > from && *end <= interval_end),
                    interval_end,
                    g.nanos(),
                );
                rows.push_back((interval_end, rolled));
            }
        }
        for (g, rows) in [
            (Granularity::Minute, &mut self.minute),
            (Granularity::TenMinutes, &mut self.ten_minutes),
            (Granularity::Hour, &mut self.hour),
        ] {
            let oldest = interval_end.saturating_sub(g.retention());
            while rows.front().is_some_and(|(end, _)| *end <= oldest) {
                rows.pop_front();
            }
            // Buckets past their retention: newest first, stop at the first
            // row set already without any.
            let stale = interval_end.saturating_sub(g.bucket_retention());
            for (end, stats) in rows.iter_mut().rev() {
                if *end > stale {
                    continue;
                }
                if stats.iter().all(|s| s.buckets.is_empty()) {
                    break;
                }
                for s in stats.iter_mut() {
                    s.buckets = KeyBuckets::default();
                }
            }
        }
    }

    /// The row sets at granularity `g`, oldest first.
    pub fn intervals(&self, g: Granularity) -> Vec<(u64, Vec<IntervalStat>)> {
        let rows = match g {
            Granularity::Minute => &self.minute,
            Granularity::TenMinutes => &self.ten_minutes,
            Granularity::Hour => &self.hour,
        };
        rows.iter().cloned().collect()
    }

    /// The largest split id any row mentions (new split ids should be
    /// above it, so a row never names two splits).
    pub fn max_split_id(&self) -> Option<SplitId> {
        [&self.minute, &self.ten_minutes, &self.hour]
            .into_iter()
            .flatten()
            .flat_map(|(_, rows)| rows.iter().map(|r| r.split))
            .max()
    }

    /// The histories of several nodes as one: every interval of any of
    /// them, with the rows of each, their `node` set to the node they
    /// came from (see the module docs). Retention is each history's own.
    pub fn merged<'a>(
        histories: impl IntoIterator<Item = (NodeId, &'a LoadHistory)>,
    ) -> LoadHistory {
        type Sets = BTreeMap<u64, Vec<IntervalStat>>;
        let (mut minute, mut ten_minutes, mut hour) = (Sets::new(), Sets::new(), Sets::new());
        for (node, history) in histories {
            for (into, from) in [
                (&mut minute, &history.minute),
                (&mut ten_minutes, &history.ten_minutes),
                (&mut hour, &history.hour),
            ] {
                for (end, rows) in from {
                    into.entry(*end)
                        .or_default()
                        .extend(rows.iter().cloned().map(|mut row| {
                            row.node = node;
                            row
                        }));
                }
            }
        }
        LoadHistory {
            minute: minute.into_iter().collect(),
            ten_minutes: ten_minutes.into_iter().collect(),
            hour: hour.into_iter().collect(),
        }
    }

    /// JSON, for persistence.
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("history serialises")
    }

    /// Decodes [`LoadHistory::to_bytes`].
    pub fn from_bytes(b: &[u8]) -> Result<LoadHistory> {
        serde_json::from_slice(b).map_err(|e| Error::CorruptHistory(e.to_string()))
    }
}

/// One row per key range over the minute row sets in `minutes`.
fn roll_up<'a>(
    minutes: impl Iterator<Item = &'a (u64, Vec<IntervalStat>)>,
    interval_end: u64,
    length: u64,
) -> Vec<IntervalStat> {
    type Range = (Vec<u8>, Option<Vec<u8>>);
    type Acc<'a> = (
        IntervalStat,
        BTreeSet<UnsplittableReason>,
        Vec<(f64, &'a KeyBuckets)>,
    );
    let mut by_range: BTreeMap<Range, Acc<'a>> = BTreeMap::new();
    for (_, stats) in minutes {
        for s in stats {
            let entry = by_range
                .entry((s.start.clone(), s.limit.clone()))
                .or_insert_with(|| {
                    let mut zero = s.clone();
                    zero.requests = 0;
                    zero.rows_read = 0;
                    zero.rows_written = 0;
                    zero.bytes_read = 0;
                    zero.bytes_written = 0;
                    zero.cpu_nanos = 0;
                    zero.buckets = KeyBuckets::default();
                    (zero, BTreeSet::new(), Vec::new())
                });
            let (acc, reasons, buckets) = entry;
            if !s.buckets.is_empty() {
                buckets.push((s.load_weight(), &s.buckets));
            }
            acc.split = s.split;
            acc.node = s.node;
            acc.replicas.clone_from(&s.replicas);
            acc.requests += s.requests;
            acc.rows_read += s.rows_read;
            acc.rows_written += s.rows_written;
            acc.bytes_read += s.bytes_read;
            acc.bytes_written += s.bytes_written;
            acc.cpu_nanos += s.cpu_nanos;
            reasons.extend(s.unsplittable.iter().copied());
        }
    }
    let mut rows: Vec<IntervalStat> = by_range
        .into_values()
        .map(|(mut s, reasons, buckets)| {
            s.interval_end = interval_end;
            s.cpu_score = s.cpu_nanos as f64 / length as f64 * 100.0;
            s.unsplittable = reasons.into_iter().collect();
            s.buckets = KeyBuckets::merge(&buckets, MAX_BUCKETS);
            s
        })
        .collect();
    cap_buckets(&mut rows);
    rows
}

/// Keeps the boundary keys of one interval under [`MAX_INTERVAL_KEYS`]:
/// when there are more, the busiest rows keep buckets, coarsened to an
/// equal number each, and the rest lose theirs.
fn cap_buckets(stats: &mut [IntervalStat]) {
    let keys: usize = stats.iter().map(|s| s.buckets.keys()).sum();
    if keys <= MAX_INTERVAL_KEYS {
        return;
    }
    let mut order: Vec<usize> = (0..stats.len())
        .filter(|&i| !stats[i].buckets.is_empty())
        .collect();
    order.sort_by(|&a, &b| {
        stats[b]
            .load_weight()
            .total_cmp(&stats[a].load_weight())
            .then(a.cmp(&b))
    });
    // One bucket takes two keys; each further bucket one more.
    let keep = order.len().min(MAX_INTERVAL_KEYS / 2);
    let each = (MAX_INTERVAL_KEYS / keep.max(1)).saturating_sub(1).max(1);
    for (rank, &i) in order.iter().enumerate() {
        let b = &mut stats[i].buckets;
        if rank >= keep {
            *b = KeyBuckets::default();
        } else if b.len() > each {
            let coarser = KeyBuckets::merge(&[(1.0, &*b)], each);
            *b = coarser;
        }
    }
}

/// The CPU usage score from which an interval's split counts as hot in the
/// statistics tables (`SPANNER_SYS.SPLIT_STATS_TOP_*`, which Spanner fills
/// with splits scoring at least 50, and `ROWTREE_SYS.HOT_SPLIT_ADVICE`).
pub const REPORTED_HOT_SCORE: f64 = 50.0;

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(start: u8, cpu_nanos: u64, keys: &[u32]) -> IntervalStat {
        let keys: Vec<Vec<u8>> = keys
            .iter()
            .map(|k| [&[start][..], &k.to_be_bytes()].concat())
            .collect();
        let mut sorted: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        sorted.sort();
        let max = sorted.last().copied().unwrap_or(&[]);
        IntervalStat {
            interval_end: 0,
            split: SplitId(start as u64),
            start: vec![start],
            limit: Some(vec![start + 1]),
            node: NodeId(0),
            replicas: Vec::new(),
            cpu_score: 0.0,
            requests: 1,
            rows_read: 0,
            rows_written: 1,
            bytes_read: 0,
            bytes_written: 1,
            cpu_nanos,
            unsplittable: Vec::new(),
            buckets: KeyBuckets::from_sample(
                &sorted,
                max,
                &[start],
                Some(&[start + 1]),
                MAX_BUCKETS,
            ),
        }
    }

    #[test]
    fn merged_histories_keep_every_nodes_rows_labelled_with_it() {
        // Node 1 served split 3 in minutes 1 and 2; node 2 served split 5
        // in minute 2 and split 3 in minute 3 (its leader changed).
        let mut one = LoadHistory::new();
        one.add_minute(MINUTE, vec![stat(3, 10, &[1])]);
        one.add_minute(2 * MINUTE, vec![stat(3, 10, &[2])]);
        let mut two = LoadHistory::new();
        two.add_minute(2 * MINUTE, vec![stat(5, 20, &[3])]);
        two.add_minute(3 * MINUTE, vec![stat(3, 30, &[4])]);
        let merged = LoadHistory::merged([(NodeId(1), &one), (NodeId(2), &two)]);
        let minutes: Vec<(u64, Vec<(u8, u32)>)> = merged
            .intervals(Granularity::Minute)
            .into_iter()
            .map(|(end, rows)| {
                let rows = rows.iter().map(|r| (r.start[0], r.node.0)).collect();
                (end / MINUTE, rows)
            })
            .collect();
        assert_eq!(
            minutes,
            vec![
                (1, vec![(3, 1)]),
                (2, vec![(3, 1), (5, 2)]),
                (3, vec![(3, 2)])
            ]
        );
        // Nothing to merge: nothing.
        assert_eq!(LoadHistory::merged([]), LoadHistory::new());
    }

    #[test]
    fn an_interval_keeps_at_most_max_interval_keys() {
        let mut h = LoadHistory::new();
        let keys: Vec<u32> = (0..200).collect();
        // 250 busy splits, each with full buckets: more keys than the cap.
        let rows: Vec<IntervalStat> = (0..250u8).map(|i| stat(i, 1 + i as u64, &keys)).collect();
        let before: usize = rows.iter().map(|s| s.buckets.keys()).sum();
        assert!(before > MAX_INTERVAL_KEYS);
        h.add_minute(MINUTE, rows);
        let kept = &h.intervals(Granularity::Minute)[0].1;
        let after: usize = kept.iter().map(|s| s.buckets.keys()).sum();
        assert!(after <= MAX_INTERVAL_KEYS, "{after}");
        // The busiest split kept buckets; shares still sum to 1.
        let busiest = kept.iter().max_by_key(|s| s.cpu_nanos).unwrap();
        assert!(!busiest.buckets.is_empty());
        let sum: f32 = busiest.buckets.shares.iter().sum();
        assert!((sum - 1.0).abs() < 1e-4);
    }

    #[test]
    fn roll_up_merges_buckets_and_old_rows_drop_them() {
        let mut h = LoadHistory::new();
        for m in 1..=10u64 {
            // Minute m writes keys [100m, 100m + 100) of one split.
            let keys: Vec<u32> = (0..100).map(|k| (m * 100) as u32 + k).collect();
            h.add_minute(m * MINUTE, vec![stat(7, 10, &keys)]);
        }
        let ten = h.intervals(Granularity::TenMinutes);
        assert_eq!(ten.len(), 1);
        let b = &ten[0].1[0].buckets;
        assert!(!b.is_empty() && b.len() <= MAX_BUCKETS);
        // The merged buckets span all ten minutes' keys.
        assert_eq!(b.bounds[0], [&[7u8][..], &100u32.to_be_bytes()].concat());
        assert!(
            b.bounds.last().unwrap().as_slice()
                > &[&[7u8][..], &1099u32.to_be_bytes()].concat()[..]
        );
        // Minute rows older than 6 hours lose their buckets, not their counters.
        h.add_minute(7 * HOUR, vec![stat(7, 10, &[1])]);
        let minutes = h.intervals(Granularity::Minute);
        assert!(minutes[0].1[0].buckets.is_empty());
        assert_eq!(minutes[0].1[0].cpu_nanos, 10);
        assert!(!minutes.last().unwrap().1[0].buckets.is_empty());
    }
}
