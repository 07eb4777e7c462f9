//! Rowtree's key visualizer: where the load of a database went, over time.
//!
//! Like Spanner's Key Visualizer, a heatmap with time on the x axis
//! (one column per interval of the split [`LoadHistory`], labelled by its
//! end) and key ranges on the y axis (up to [`MAX_ROWS`] rows, sorted by
//! key, which is table/index then key, labelled in human terms such as
//! `Users(42)`). A cell's colour is one [`Metric`] of the splits that
//! covered the row's key range in that interval, *normalised per row*:
//! a split's value is spread evenly over the rows (key-range buckets) it
//! covered, so a split covering ten rows adds a tenth of its load to each.
//! Colours are relative to the largest cell of the whole database (dark:
//! idle, bright: the hottest cell), so a bright diagonal line means
//! sequential keys, a bright horizontal line a hot key range.
//!
//! * [`heatmap_from_history`] (or [`heatmap_from_load_history`]) builds a
//!   [`Heatmap`] from interval statistics;
//! * [`render_html`] writes it as one self-contained HTML page (inline CSS
//!   and JavaScript, nothing fetched: it works offline and from `file://`)
//!   with a metric selector, a legend, hover tooltips and the list of hot
//!   and unsplittable splits;
//! * [`render_json`] is the same data for programs (the page embeds it);
//! * [`render_text`] is a compact ASCII heatmap for terminals.
//!
//! Everything is deterministic: the same input gives the same bytes.

mod html;
mod text;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use rowtree_kv::{Granularity, IntervalStat, LoadHistory, UnsplittableReason};
use serde::Serialize;

pub use html::{escape_html, render_html, render_json};
pub use text::render_text;

/// The most key-range rows of a heatmap (as Spanner's Key Visualizer).
pub const MAX_ROWS: usize = 1000;

/// A split is listed as hot from this CPU score on (Spanner: warm above 50,
/// hot at 100).
pub const HOT_SCORE: f64 = 50.0;

/// The most entries of [`Heatmap::hot`].
pub const MAX_HOT: usize = 100;

/// What a cell shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// CPU_USAGE_SCORE: CPU-seconds per second in percent of one node.
    CpuScore,
    /// Rows read.
    RowsRead,
    /// Rows written.
    RowsWritten,
    /// Bytes read.
    BytesRead,
    /// Bytes written.
    BytesWritten,
    /// Requests served.
    Requests,
}

impl Metric {
    /// Every metric, in the order the page lists them.
    pub const ALL: [Metric; 6] = [
        Metric::CpuScore,
        Metric::RowsRead,
        Metric::RowsWritten,
        Metric::BytesRead,
        Metric::BytesWritten,
        Metric::Requests,
    ];

    /// A stable identifier: `cpu_score`, `rows_read`, ...
    pub fn id(self) -> &'static str {
        match self {
            Metric::CpuScore => "cpu_score",
            Metric::RowsRead => "rows_read",
            Metric::RowsWritten => "rows_written",
            Metric::BytesRead => "bytes_read",
            Metric::BytesWritten => "bytes_written",
            Metric::Requests => "requests",
        }
    }

    /// A name for people: `CPU score`, `Rows read`, ...
    pub fn name(self) -> &'static str {
        match self {
            Metric::CpuScore => "CPU score",
            Metric::RowsRead => "Rows read",
            Metric::RowsWritten => "Rows written",
            Metric::BytesRead => "Bytes read",
            Metric::BytesWritten => "Bytes written",
            Metric::Requests => "Requests",
        }
    }

    /// Parses [`Metric::id`] (also accepts `-` for `_` and `cpu`).
    pub fn parse(s: &str) -> Option<Metric> {
        let s = s.trim().to_ascii_lowercase().replace('-', "_");
        if s == "cpu" {
            return Some(Metric::CpuScore);
        }
        Metric::ALL.into_iter().find(|m| m.id() == s)
    }

    /// This metric of one interval statistic.
    pub fn of(self, s: &IntervalStat) -> f64 {
        match self {
            Metric::CpuScore => s.cpu_score,
            Metric::RowsRead => s.rows_read as f64,
            Metric::RowsWritten => s.rows_written as f64,
            Metric::BytesRead => s.bytes_read as f64,
            Metric::BytesWritten => s.bytes_written as f64,
            Metric::Requests => s.requests as f64,
        }
    }
}

/// The lower-case name of a granularity: `minute`, `10minute`, `hour`.
pub fn granularity_name(g: Granularity) -> &'static str {
    match g {
        Granularity::Minute => "minute",
        Granularity::TenMinutes => "10minute",
        Granularity::Hour => "hour",
    }
}

/// Parses [`granularity_name`] (also `1minute`, `10minutes`, `1hour`, `10m`...).
pub fn parse_granularity(s: &str) -> Option<Granularity> {
    match s.trim().to_ascii_lowercase().as_str() {
        "minute" | "1minute" | "1m" | "min" => Some(Granularity::Minute),
        "10minute" | "10minutes" | "10m" | "10min" | "ten_minutes" => Some(Granularity::TenMinutes),
        "hour" | "1hour" | "1h" | "60minute" => Some(Granularity::Hour),
        _ => None,
    }
}

/// How far back the key visualizer shows each granularity (Spanner: 1-minute
/// cells for 6 hours, 10-minute cells for 4 days, 1-hour cells for 28 days).
pub fn display_window(g: Granularity) -> u64 {
    const HOUR: u64 = 3_600_000_000_000;
    match g {
        Granularity::Minute => 6 * HOUR,
        Granularity::TenMinutes => 4 * 24 * HOUR,
        Granularity::Hour => 28 * 24 * HOUR,
    }
}

/// One key-range row: the range starts at `start` and ends where the next
/// row starts (the last row ends at [`Heatmap::end_label`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowLabel {
    /// The first key of the range.
    pub start: Vec<u8>,
    /// The start in human terms (`Users(42)`), from the caller.
    pub label: String,
}

/// A split that was hot (CPU score at least [`HOT_SCORE`]) or unsplittable
/// in some interval, aggregated over the intervals by key range.
#[derive(Debug, Clone, PartialEq)]
pub struct HotSplit {
    /// The range's first key.
    pub start: Vec<u8>,
    /// The range's first key in human terms.
    pub start_label: String,
    /// The range's limit in human terms (`<end>` for the end of the key space).
    pub limit_label: String,
    /// The highest CPU score of the range over the intervals.
    pub max_cpu_score: f64,
    /// The end of the interval with the highest score.
    pub peak_interval_end: u64,
    /// The end of the last interval in which it was hot or unsplittable.
    pub last_interval_end: u64,
    /// In how many intervals it was hot or unsplittable.
    pub intervals: usize,
    /// The node that served it in its last such interval.
    pub node: u32,
    /// Every unsplittable reason reported for it.
    pub reasons: Vec<UnsplittableReason>,
}

/// The key visualizer's data. Cells are indexed `column * rows.len() + row`
/// (see [`Heatmap::index`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Heatmap {
    /// Shown as the page title.
    pub title: String,
    /// The interval length of the columns.
    pub granularity: Granularity,
    /// The end of each column's interval, nanoseconds since the epoch, oldest first.
    pub columns: Vec<u64>,
    /// The key ranges, sorted by key.
    pub rows: Vec<RowLabel>,
    /// Where the last row ends, in human terms (`<end>`: end of the key space).
    pub end_label: String,
    /// Per metric, every cell's value normalised per row.
    pub values: BTreeMap<Metric, Vec<f64>>,
    /// Per cell, the node of the split that contributed the most (None: no load).
    pub nodes: Vec<Option<u32>>,
    /// Per cell, the unsplittable reasons of the splits that covered it.
    pub reasons: Vec<Vec<UnsplittableReason>>,
    /// Hot and unsplittable splits, hottest first (at most [`MAX_HOT`]).
    pub hot: Vec<HotSplit>,
}

impl Heatmap {
    /// The index of a cell in [`Heatmap::values`], [`Heatmap::nodes`] and [`Heatmap::reasons`].
    pub fn index(&self, column: usize, row: usize) -> usize {
        column * self.rows.len() + row
    }

    /// One cell of one metric.
    pub fn value(&self, metric: Metric, column: usize, row: usize) -> f64 {
        self.values
            .get(&metric)
            .and_then(|v| v.get(self.index(column, row)))
            .copied()
            .unwrap_or(0.0)
    }

    /// The largest cell of a metric over the whole database (0 if none).
    pub fn max(&self, metric: Metric) -> f64 {
        self.values
            .get(&metric)
            .map(|v| v.iter().copied().fold(0.0, f64::max))
            .unwrap_or(0.0)
    }

    /// True when there is nothing to show.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty() || self.columns.is_empty()
    }
}

/// [`heatmap_from_history`] with at most `max_rows` rows (at least 1).
pub fn heatmap_from_history_with(
    intervals: &[(u64, Vec<IntervalStat>)],
    describe: impl Fn(&[u8]) -> String,
    max_rows: usize,
) -> Heatmap {
    let max_rows = max_rows.max(1);
    // Every boundary seen: the fine buckets are the ranges between them.
    let mut bounds: BTreeSet<&[u8]> = BTreeSet::new();
    let mut open_end = false;
    for (_, stats) in intervals {
        for s in stats {
            if !valid(s) {
                continue;
            }
            bounds.insert(&s.start);
            match &s.limit {
                Some(l) => {
                    bounds.insert(l);
                }
                None => open_end = true,
            }
        }
    }
    let bounds: Vec<&[u8]> = bounds.into_iter().collect();
    // Fine bucket i is [bounds[i], bounds[i + 1]) (the last one, when the key
    // space's end was seen, [bounds[n-1], end)).
    let fine = if open_end {
        bounds.len()
    } else {
        bounds.len().saturating_sub(1)
    };
    // Merge neighbours into at most max_rows groups of (nearly) equal counts.
    let groups = fine.min(max_rows);
    let group_start: Vec<usize> = (0..groups).map(|g| g * fine / groups).collect();
    let group_of = |bucket: usize| -> usize {
        // The last group whose first bucket is <= bucket.
        group_start.partition_point(|&s| s <= bucket) - 1
    };
    let rows: Vec<RowLabel> = group_start
        .iter()
        .map(|&b| RowLabel {
            start: bounds[b].to_vec(),
            label: describe(bounds[b]),
        })
        .collect();
    let end_label = if open_end || bounds.is_empty() {
        "<end>".to_string()
    } else {
        describe(bounds[bounds.len() - 1])
    };

    let columns: Vec<u64> = intervals.iter().map(|(end, _)| *end).collect();
    let n_rows = rows.len();
    let cells = columns.len() * n_rows;
    let mut values: BTreeMap<Metric, Vec<f64>> = Metric::ALL
        .into_iter()
        .map(|m| (m, vec![0.0; cells]))
        .collect();
    // Per cell: (largest CPU contribution, node) to pick the cell's node.
    let mut best_node: Vec<Option<(f64, u32)>> = vec![None; cells];
    let mut reasons: Vec<BTreeSet<UnsplittableReason>> = vec![BTreeSet::new(); cells];
    let bucket_of = |key: &[u8]| bounds.binary_search(&key).ok();

    for (col, (_, stats)) in intervals.iter().enumerate() {
        for s in stats {
            if !valid(s) {
                continue;
            }
            let Some(lo) = bucket_of(&s.start) else {
                continue;
            };
            let hi = match &s.limit {
                Some(l) => match bucket_of(l) {
                    Some(h) => h,
                    None => continue,
                },
                None => fine,
            };
            if hi <= lo {
                continue;
            }
            let covered = (hi - lo) as f64;
            // The groups this split touches, with how many of its buckets each holds.
            let mut g = group_of(lo);
            while g < groups && group_start[g] < hi {
                let from = group_start[g].max(lo);
                let to = group_start.get(g + 1).copied().unwrap_or(fine).min(hi);
                let share = (to - from) as f64 / covered;
                let cell = col * n_rows + g;
                for m in Metric::ALL {
                    let v = m.of(s);
                    if v.is_finite() && v > 0.0 {
                        values.get_mut(&m).expect("every metric")[cell] += v * share;
                    }
                }
                let weight = s.cpu_nanos as f64 * share + s.requests as f64 * share * 1e-9;
                if best_node[cell].is_none_or(|(w, _)| weight > w) {
                    best_node[cell] = Some((weight, s.node.0));
                }
                reasons[cell].extend(s.unsplittable.iter().copied());
                g += 1;
            }
        }
    }

    Heatmap {
        title: "Key Visualizer".to_string(),
        granularity: infer_granularity(&columns),
        columns,
        rows,
        end_label,
        values,
        nodes: best_node.into_iter().map(|b| b.map(|(_, n)| n)).collect(),
        reasons: reasons
            .into_iter()
            .map(|r| r.into_iter().collect())
            .collect(),
        hot: hot_splits(intervals, &describe),
    }
}

/// Builds the heatmap of `intervals` (`(interval_end, splits)`, oldest first,
/// as [`LoadHistory::intervals`] returns them). The rows are the key ranges
/// between every split boundary seen in any interval, sorted by key; when
/// there are more than [`MAX_ROWS`], neighbours are merged into
/// [`MAX_ROWS`] groups of nearly equal numbers of ranges. Each split's
/// values are spread evenly over the ranges it covered in that interval
/// ("normalised per row"); a merged row holds the sum of its ranges.
/// `describe` turns a key into a label (`Users(42)`). The granularity is
/// guessed from the spacing of the columns (set [`Heatmap::granularity`]
/// if you know it); the title is "Key Visualizer".
pub fn heatmap_from_history(
    intervals: &[(u64, Vec<IntervalStat>)],
    describe: impl Fn(&[u8]) -> String,
) -> Heatmap {
    heatmap_from_history_with(intervals, describe, MAX_ROWS)
}

/// The heatmap of a [`LoadHistory`] at granularity `g`, limited to the last
/// [`display_window`] before its newest interval.
pub fn heatmap_from_load_history(
    history: &LoadHistory,
    g: Granularity,
    title: &str,
    describe: impl Fn(&[u8]) -> String,
) -> Heatmap {
    let all = history.intervals(g);
    let newest = all.last().map(|(end, _)| *end).unwrap_or(0);
    let from = newest.saturating_sub(display_window(g));
    let recent: Vec<(u64, Vec<IntervalStat>)> =
        all.into_iter().filter(|(end, _)| *end > from).collect();
    let mut h = heatmap_from_history(&recent, describe);
    h.granularity = g;
    h.title = title.to_string();
    h
}

fn valid(s: &IntervalStat) -> bool {
    s.limit
        .as_ref()
        .is_none_or(|l| l.as_slice() > s.start.as_slice())
}

fn infer_granularity(columns: &[u64]) -> Granularity {
    let step = columns
        .windows(2)
        .map(|w| w[1].saturating_sub(w[0]))
        .filter(|&d| d > 0)
        .min();
    match step {
        Some(d) if d >= Granularity::Hour.nanos() => Granularity::Hour,
        Some(d) if d >= Granularity::TenMinutes.nanos() => Granularity::TenMinutes,
        _ => Granularity::Minute,
    }
}

fn hot_splits(
    intervals: &[(u64, Vec<IntervalStat>)],
    describe: &impl Fn(&[u8]) -> String,
) -> Vec<HotSplit> {
    type Range<'a> = (&'a [u8], Option<&'a [u8]>);
    let mut by_range: BTreeMap<Range<'_>, HotSplit> = BTreeMap::new();
    for (end, stats) in intervals {
        for s in stats {
            let hot = s.cpu_score.is_finite() && s.cpu_score >= HOT_SCORE;
            if !hot && s.unsplittable.is_empty() {
                continue;
            }
            let e = by_range
                .entry((s.start.as_slice(), s.limit.as_deref()))
                .or_insert_with(|| HotSplit {
                    start: s.start.clone(),
                    start_label: describe(&s.start),
                    limit_label: match &s.limit {
                        Some(l) => describe(l),
                        None => "<end>".to_string(),
                    },
                    max_cpu_score: f64::NEG_INFINITY,
                    peak_interval_end: *end,
                    last_interval_end: *end,
                    intervals: 0,
                    node: s.node.0,
                    reasons: Vec::new(),
                });
            let score = if s.cpu_score.is_finite() {
                s.cpu_score
            } else {
                0.0
            };
            if score > e.max_cpu_score {
                e.max_cpu_score = score;
                e.peak_interval_end = *end;
            }
            e.last_interval_end = *end;
            e.intervals += 1;
            e.node = s.node.0;
            for r in &s.unsplittable {
                if !e.reasons.contains(r) {
                    e.reasons.push(*r);
                }
            }
        }
    }
    let mut hot: Vec<HotSplit> = by_range.into_values().collect();
    for h in &mut hot {
        h.reasons.sort();
    }
    // Hottest first; ties by key, so the order is deterministic.
    hot.sort_by(|a, b| {
        b.max_cpu_score
            .total_cmp(&a.max_cpu_score)
            .then_with(|| a.start.cmp(&b.start))
    });
    hot.truncate(MAX_HOT);
    hot
}

/// `YYYY-MM-DD HH:MM` (UTC) of nanoseconds since the epoch.
pub fn format_time(nanos: u64) -> String {
    let secs = nanos / 1_000_000_000;
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    let mut out = String::new();
    let _ = write!(
        out,
        "{y:04}-{m:02}-{d:02} {:02}:{:02}",
        rem / 3600,
        (rem % 3600) / 60
    );
    out
}

/// Howard Hinnant's days-to-civil: (year, month, day) of days since 1970-01-01.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Hex of a key (for exact joins in the JSON).
pub fn hex(key: &[u8]) -> String {
    let mut s = String::with_capacity(key.len() * 2);
    for b in key {
        let _ = write!(s, "{b:02x}");
    }
    s
}

#[cfg(test)]
mod tests;
