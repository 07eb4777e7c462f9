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

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde::{Deserialize, Serialize};

use crate::policy::UnsplittableReason;
use crate::split::{NodeId, SplitId};
use crate::{Error, Result};

const MINUTE: u64 = 60_000_000_000;
const TEN_MINUTES: u64 = 10 * MINUTE;
const HOUR: u64 = 60 * MINUTE;
const DAY: u64 = 24 * HOUR;

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
    let mut by_range: BTreeMap<Range, (IntervalStat, BTreeSet<UnsplittableReason>)> =
        BTreeMap::new();
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
                    (zero, BTreeSet::new())
                });
            let (acc, reasons) = entry;
            acc.split = s.split;
            acc.node = s.node;
            acc.requests += s.requests;
            acc.rows_read += s.rows_read;
            acc.rows_written += s.rows_written;
            acc.bytes_read += s.bytes_read;
            acc.bytes_written += s.bytes_written;
            acc.cpu_nanos += s.cpu_nanos;
            reasons.extend(s.unsplittable.iter().copied());
        }
    }
    by_range
        .into_values()
        .map(|(mut s, reasons)| {
            s.interval_end = interval_end;
            s.cpu_score = s.cpu_nanos as f64 / length as f64 * 100.0;
            s.unsplittable = reasons.into_iter().collect();
            s
        })
        .collect()
}

/// The CPU usage score from which an interval's split counts as hot in the
/// statistics tables (`SPANNER_SYS.SPLIT_STATS_TOP_*`, which Spanner fills
/// with splits scoring at least 50, and `ROWTREE_SYS.HOT_SPLIT_ADVICE`).
pub const REPORTED_HOT_SCORE: f64 = 50.0;
