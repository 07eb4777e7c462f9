//! Rowtree's key visualizer: where the load of a database went, over time.
//!
//! Like Spanner's Key Visualizer, a heatmap with time on the x axis (one
//! column per interval of the split [`LoadHistory`], labelled by its end)
//! and *key buckets* on the y axis: up to [`MAX_ROWS`] rows, sorted by key
//! (table/index, then key), each labelled by its first key in human terms
//! such as `Users(42)`. A cell's colour is one [`Metric`] of the load that
//! fell in the row's key range in that interval. Colours are relative to
//! the largest cell of the whole database (dark: idle, bright: the hottest
//! cell), so a bright diagonal line means sequential keys, a bright
//! horizontal line a hot key range and an even field well-spread keys.
//!
//! # Rows: key buckets, not splits
//!
//! A split can cover a whole table while its load falls in a thin slice of
//! it (every insert of a timestamp-first table lands at its end), so rows
//! finer than splits are needed to see where load went. Each interval row
//! of the history carries [`KeyBuckets`](rowtree_kv::KeyBuckets): sub-ranges
//! of the split cut by the keys its load tracker sampled in that interval,
//! each with its share of the split's load.
//!
//! The fine ranges of the heatmap are those between every split boundary and
//! every bucket boundary seen in any interval. Each fine range weighs its
//! share of the whole history's load (plus a small floor, so idle key
//! ranges keep rows); rows are cut at equal weight, about one row per two
//! fine ranges (at most [`MAX_ROWS`]), and an interval's bucket shares its
//! load among the fine ranges it covers by their weight. So keys written
//! steadily over time (a timestamp-first table) get rows of equal time
//! slices and each minute lights its own band, climbing: the diagonal;
//! well-spread keys get rows of about equal key width, each taking about
//! the same share each minute: an even field. Histories without buckets
//! (recorded before they existed) fall back to rows at split boundaries, a
//! split's load spread evenly over the rows it covers. With many columns
//! the row count drops so that rows times columns stays under
//! [`MAX_CELLS`].
//!
//! # Row anchors
//!
//! Every row has an id, `row-<object>-<n>`: `<object>` is the first
//! component of its label up to `(` (the table or index whose key space it
//! starts in; [`row_object`]), `n` counts that object's rows from 0 in key
//! order (`row-UserAccessLogs-0` is the table's first row). The page reads
//! its URL fragment and marks (and scrolls to) the rows it names:
//!
//! * `#row-<object>-<n>`: that one row of this page;
//! * `#table-<object>`: every row of a table or index (stable across pages:
//!   what a schema advisor's finding about a table links to);
//! * `#key-<hex>`: the row holding that encoded key (stable too).
//!
//! The ids are also in the JSON (`rows[].id`, `rows[].object`).
//!
//! # Time
//!
//! Wall-clock histories (a database) are labelled in UTC. A simulated
//! history starts at its own zero, so set [`Heatmap::origin`]: its columns
//! are then labelled `t+H:MM`, time since the workload started.
//!
//! # Output
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

/// The most cells (rows times columns) of a heatmap: with many columns
/// there are fewer rows, so the page stays a few megabytes at most.
pub const MAX_CELLS: usize = 150_000;

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
    /// The object the row starts in, anchor-safe ([`row_object`]): `Users`.
    pub object: String,
    /// The row's anchor: `row-<object>-<n>` (see the module docs).
    pub id: String,
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
    /// The nodes holding a replica of it in its last such interval (empty
    /// on one process).
    pub replicas: Vec<u32>,
    /// Every unsplittable reason reported for it.
    pub reasons: Vec<UnsplittableReason>,
}

/// A schema advisor finding, as the page shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Advice {
    /// `error`, `warning` or `info`.
    pub severity: String,
    /// The rule id (`monotonic-key`).
    pub rule: String,
    /// The table or index concerned: the rows `#table-<object>` selects.
    pub object: String,
    /// What is wrong and why, in a sentence or two.
    pub message: String,
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
    /// `Some(t0)`: the times are simulated and are labelled as time elapsed
    /// since `t0`, the workload's start (`t+0:30`); `None`: wall-clock UTC.
    pub origin: Option<u64>,
    /// The key ranges, sorted by key.
    pub rows: Vec<RowLabel>,
    /// Where the last row ends, in human terms (`<end>`: end of the key space).
    pub end_label: String,
    /// Per metric, every cell's value normalised per row.
    pub values: BTreeMap<Metric, Vec<f64>>,
    /// Per cell, the node of the split that contributed the most (None: no load).
    pub nodes: Vec<Option<u32>>,
    /// Per cell, the nodes holding a replica of that split (empty: no
    /// load, or one process).
    pub replicas: Vec<Vec<u32>>,
    /// Per cell, the unsplittable reasons of the splits that covered it.
    pub reasons: Vec<Vec<UnsplittableReason>>,
    /// Hot and unsplittable splits, hottest first (at most [`MAX_HOT`]).
    pub hot: Vec<HotSplit>,
    /// Findings of the schema advisor to show beside the map, each linked to
    /// the rows of the table or index it is about (`#table-<object>`).
    /// Empty unless the caller fills it (the server does).
    pub advice: Vec<Advice>,
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

    /// A time of this heatmap for people: `t+H:MM` since [`Heatmap::origin`]
    /// for simulated time, else `YYYY-MM-DD HH:MM` (UTC).
    pub fn time_label(&self, nanos: u64) -> String {
        match self.origin {
            Some(t0) => format_elapsed(nanos.saturating_sub(t0)),
            None => format_time(nanos),
        }
    }

    /// The row holding `key` (the last row starting at or before it).
    pub fn row_of(&self, key: &[u8]) -> Option<usize> {
        self.rows
            .partition_point(|r| r.start.as_slice() <= key)
            .checked_sub(1)
    }
}

/// [`heatmap_from_history`] with at most `max_rows` rows (at least 1).
pub fn heatmap_from_history_with(
    intervals: &[(u64, Vec<IntervalStat>)],
    describe: impl Fn(&[u8]) -> String,
    max_rows: usize,
) -> Heatmap {
    // Keep the page bounded: fewer rows when there are many columns.
    let max_rows = max_rows.min(MAX_CELLS / intervals.len().max(1)).max(1);
    // Every boundary seen, of splits and of their key buckets: the fine
    // buckets are the ranges between them.
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
            bounds.extend(s.buckets.bounds.iter().map(Vec::as_slice));
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
    let bucket_of = |key: &[u8]| bounds.binary_search(&key).ok();
    let has_buckets = intervals
        .iter()
        .any(|(_, stats)| stats.iter().any(|s| !s.buckets.is_empty()));
    // `prior[f]`: the cumulative weight of the fine ranges before f, by which
    // a piece of load is shared among the fine ranges it covers.
    let (group_start, prior): (Vec<usize>, Vec<f64>) = if has_buckets {
        let weights = fine_weights(intervals, &bucket_of, fine);
        (load_groups(&weights, max_rows), cumulative(&weights))
    } else {
        // Merge neighbours into at most max_rows groups of (nearly) equal
        // counts; a split's load is shared evenly among its fine ranges.
        let groups = fine.min(max_rows);
        (
            (0..groups).map(|g| g * fine / groups).collect(),
            (0..=fine).map(|f| f as f64).collect(),
        )
    };
    let groups = group_start.len();
    let group_of = |bucket: usize| -> usize {
        // The last group whose first bucket is <= bucket.
        group_start.partition_point(|&s| s <= bucket) - 1
    };
    let mut rows: Vec<RowLabel> = group_start
        .iter()
        .map(|&b| RowLabel {
            start: bounds[b].to_vec(),
            label: describe(bounds[b]),
            id: String::new(),
            object: String::new(),
        })
        .collect();
    assign_ids(&mut rows);
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
    // Per cell: (largest CPU contribution, node) to pick the cell's node,
    // and that split's replicas.
    let mut best_node: Vec<Option<(f64, u32)>> = vec![None; cells];
    let mut replicas: Vec<Vec<u32>> = vec![Vec::new(); cells];
    let mut reasons: Vec<BTreeSet<UnsplittableReason>> = vec![BTreeSet::new(); cells];
    for (col, (_, stats)) in intervals.iter().enumerate() {
        for s in stats {
            let Some(pieces) = pieces(s, &bucket_of, fine) else {
                continue;
            };
            for (lo, hi, fraction) in pieces {
                if hi <= lo {
                    continue;
                }
                let covered = prior[hi] - prior[lo];
                // The groups this piece touches, with the weight of its fine
                // ranges each holds.
                let mut g = group_of(lo);
                while g < groups && group_start[g] < hi {
                    let from = group_start[g].max(lo);
                    let to = group_start.get(g + 1).copied().unwrap_or(fine).min(hi);
                    let share = if covered > 0.0 {
                        fraction * (prior[to] - prior[from]) / covered
                    } else {
                        fraction * (to - from) as f64 / (hi - lo) as f64
                    };
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
                        replicas[cell] = node_ids(&s.replicas);
                    }
                    reasons[cell].extend(s.unsplittable.iter().copied());
                    g += 1;
                }
            }
        }
    }

    Heatmap {
        title: "Key Visualizer".to_string(),
        granularity: infer_granularity(&columns),
        origin: None,
        columns,
        rows,
        end_label,
        values,
        nodes: best_node.into_iter().map(|b| b.map(|(_, n)| n)).collect(),
        replicas,
        reasons: reasons
            .into_iter()
            .map(|r| r.into_iter().collect())
            .collect(),
        hot: hot_splits(intervals, &describe),
        advice: Vec::new(),
    }
}

/// The fine ranges `[lo, hi)` a stat's load fell in, with their shares: its
/// key buckets, or else its whole range. `None` for a range not in `bounds`.
fn pieces(
    s: &IntervalStat,
    bucket_of: &impl Fn(&[u8]) -> Option<usize>,
    fine: usize,
) -> Option<Vec<(usize, usize, f64)>> {
    if !valid(s) {
        return None;
    }
    let lo = bucket_of(&s.start)?;
    let hi = match &s.limit {
        Some(l) => bucket_of(l)?,
        None => fine,
    };
    if hi <= lo {
        return None;
    }
    let mut pieces: Vec<(usize, usize, f64)> = Vec::new();
    for i in 0..s.buckets.len() {
        let (from, to, share) = s.buckets.bucket(i);
        if let (Some(a), Some(b)) = (bucket_of(from), bucket_of(to)) {
            let (a, b) = (a.max(lo), b.min(hi));
            if b > a && share > 0.0 {
                pieces.push((a, b, share as f64));
            }
        }
    }
    let known: f64 = pieces.iter().map(|p| p.2).sum();
    if pieces.is_empty() || known.is_nan() || known <= 0.0 {
        return Some(vec![(lo, hi, 1.0)]);
    }
    for p in &mut pieces {
        p.2 /= known;
    }
    Some(pieces)
}

/// Share of the fine-range weight spread evenly over the fine ranges (the
/// rest follows the load), so idle key ranges keep some rows and weight.
const ROW_FLOOR: f64 = 0.1;

/// The weight of each fine range for a history with key buckets: its share
/// of the whole history's load (CPU and requests; each piece of load spread
/// evenly over the fine ranges it covers), plus [`ROW_FLOOR`] spread evenly.
///
/// The weights serve twice. Rows are cut at equal weight
/// ([`load_groups`]): keys that took load all along get rows of equal load,
/// so sequential keys get rows of equal time slices (each minute lights its
/// own band: the diagonal) and spread keys rows of equal key width (an even
/// field). And one interval's piece of load is shared among its fine
/// ranges by weight rather than evenly: a piece holds a few sampled keys,
/// and how many other intervals' boundaries fall inside it is chance, while
/// the weight over the whole history is a steadier measure of how much of
/// the key space each fine range is.
fn fine_weights(
    intervals: &[(u64, Vec<IntervalStat>)],
    bucket_of: &impl Fn(&[u8]) -> Option<usize>,
    fine: usize,
) -> Vec<f64> {
    let (mut cpu, mut req) = (0.0f64, 0.0f64);
    for (_, stats) in intervals {
        for s in stats {
            cpu += s.cpu_nanos as f64;
            req += s.requests as f64;
        }
    }
    // A difference array: each piece adds its weight per fine range over [lo, hi).
    let mut diff = vec![0.0f64; fine + 1];
    for (_, stats) in intervals {
        for s in stats {
            let w = if cpu > 0.0 {
                s.cpu_nanos as f64 / cpu
            } else {
                0.0
            } + if req > 0.0 {
                s.requests as f64 / req
            } else {
                0.0
            };
            if w.is_nan() || w <= 0.0 {
                continue;
            }
            for (lo, hi, share) in pieces(s, bucket_of, fine).unwrap_or_default() {
                let each = w * share / (hi - lo) as f64;
                diff[lo] += each;
                diff[hi] -= each;
            }
        }
    }
    let mut load = Vec::with_capacity(fine);
    let mut run = 0.0;
    for d in &diff[..fine] {
        run += d;
        load.push(run.max(0.0));
    }
    let total: f64 = load.iter().sum();
    load.iter()
        .map(|l| {
            let share = if total > 0.0 { l / total } else { 0.0 };
            (1.0 - ROW_FLOOR) * share + ROW_FLOOR / fine.max(1) as f64
        })
        .collect()
}

/// `[0, w0, w0 + w1, ...]`.
fn cumulative(weights: &[f64]) -> Vec<f64> {
    let mut out = Vec::with_capacity(weights.len() + 1);
    let mut acc = 0.0;
    out.push(acc);
    for w in weights {
        acc += w;
        out.push(acc);
    }
    out
}

/// Row starts (indexes of fine ranges): about half as many rows as fine
/// ranges, at most `max_rows`, cut at equal shares of `weights`
/// ([`fine_weights`]). With two fine ranges a row on average, the thin
/// slivers between different intervals' extreme keys are merged into their
/// neighbours rather than shown as rows of their own.
fn load_groups(weights: &[f64], max_rows: usize) -> Vec<usize> {
    if weights.is_empty() {
        return Vec::new();
    }
    let rows = max_rows.min(weights.len().div_ceil(2)).max(1);
    let sum: f64 = weights.iter().sum();
    let step = sum / rows as f64;
    let mut starts = vec![0];
    let (mut acc, mut row) = (0.0, 0.0);
    for (f, w) in weights.iter().enumerate() {
        let target = step * starts.len() as f64;
        // Cut before f when the row so far is nearer its share with f left
        // out, and is not a sliver (at least half a row's share).
        if f > 0 && starts.len() < rows && acc + w / 2.0 >= target && row >= step / 2.0 {
            starts.push(f);
            row = 0.0;
        }
        acc += w;
        row += w;
    }
    starts
}

/// The object a row label names: its first component up to `(` (`Users`
/// of `Users(42)/Albums(7)`), as an anchor-safe name (characters other
/// than ASCII letters, digits, `_` and `.` become `_`; `key` when empty).
pub fn row_object(label: &str) -> String {
    let first = label.split(['(', '/']).next().unwrap_or("");
    let clean: String = first
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let clean = clean.trim_matches('_').to_string();
    if clean.is_empty() {
        "key".to_string()
    } else {
        clean
    }
}

/// Sets every row's [`RowLabel::object`] and [`RowLabel::id`]
/// (`row-<object>-<n>`, `n` counting the object's rows from 0 in key order).
fn assign_ids(rows: &mut [RowLabel]) {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for r in rows {
        r.object = row_object(&r.label);
        let n = seen.entry(r.object.clone()).or_insert(0);
        r.id = format!("row-{}-{n}", r.object);
        *n += 1;
    }
}

/// Builds the heatmap of `intervals` (`(interval_end, splits)`, oldest first,
/// as [`LoadHistory::intervals`] returns them). Rows are key buckets cut
/// from the key ranges between every split and key-bucket boundary seen in
/// any interval, sorted by key (see the module docs: equal-weight rows when
/// the history has key buckets, split boundaries otherwise), at most
/// [`MAX_ROWS`] rows and [`MAX_CELLS`] cells.
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

/// Node ids as the page shows them (ids above `u32::MAX` do not occur:
/// node ids are below 1,000).
fn node_ids(ids: &[u64]) -> Vec<u32> {
    ids.iter()
        .filter_map(|id| u32::try_from(*id).ok())
        .collect()
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
                    replicas: Vec::new(),
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
            e.replicas = node_ids(&s.replicas);
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

/// `t+H:MM` (hours and minutes) of an elapsed time in nanoseconds, with
/// `:SS` seconds when not on a minute.
pub fn format_elapsed(nanos: u64) -> String {
    let secs = nanos / 1_000_000_000;
    let (h, m, s) = (secs / 3600, (secs % 3600) / 60, secs % 60);
    if s == 0 {
        format!("t+{h}:{m:02}")
    } else {
        format!("t+{h}:{m:02}:{s:02}")
    }
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
