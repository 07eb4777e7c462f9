//! What a simulation reports, as JSON (serde) or text (tables and an ASCII
//! heatmap).

use std::collections::HashMap;
use std::fmt::Write as _;

use rowtree_db::keys::{describe_limit, describe_start};
use rowtree_kv::{Granularity, SplitManager};
use rowtree_schema::Catalog;
use serde::Serialize;

const SECOND: u64 = 1_000_000_000;
const MINUTE: u64 = 60 * SECOND;

/// The most key-range rows of the JSON heatmap (as the Key Visualizer).
pub const MAX_HEATMAP_ROWS: usize = 1000;
/// Rows of the ASCII heatmap.
pub const TEXT_HEATMAP_ROWS: usize = 16;

/// Split events counted over the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct EventCounts {
    /// Splits created (each cut counts once).
    pub splits: u64,
    /// Merges.
    pub merges: u64,
    /// Moves to another node.
    pub moves: u64,
}

/// Raw measurements of the engine.
pub(crate) struct Raw {
    pub nodes: u32,
    pub duration: u64,
    pub offered_total: u64,
    pub failed_total: u64,
    pub multi_split_ops: u64,
    pub completed_per_sec: Vec<u64>,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub node_cpu: Vec<Vec<u64>>,
    pub events: EventCounts,
    pub reasons_seen: Vec<String>,
    pub capacity: f64,
    pub tables: Vec<String>,
}

/// Latency percentiles of completed operations, milliseconds (queueing
/// plus service).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatencyMs {
    pub p50: f64,
    pub p99: f64,
}

/// Split counts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SplitCounts {
    pub created: u64,
    pub merged: u64,
    pub moved: u64,
    /// Splits at the end of the run.
    pub at_end: usize,
}

/// A split with a CPU score of at least 50 at the end of the run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HotSplit {
    /// First key, in human terms.
    pub start: String,
    /// Limit key, in human terms (`<end>` for the last split).
    pub limit: String,
    pub node: u32,
    /// CPU usage score (% of one node, last minute).
    pub cpu_score: f64,
    /// Why it is not split further, if the policy says so.
    pub reasons: Vec<String>,
}

/// One key-range row of the heatmap.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HeatRow {
    pub start: String,
    pub limit: String,
    /// The start key bytes in hex (for exact joins).
    pub start_hex: String,
}

/// The heatmap: rows are key ranges (sorted by key: table/index then key),
/// columns are minutes; a cell is the highest CPU score of the splits
/// overlapping the range in that minute (from the kv LoadHistory).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Heatmap {
    pub metric: String,
    /// End of each column's interval, in minutes of virtual time.
    pub minutes: Vec<u64>,
    pub rows: Vec<HeatRow>,
    /// `cells[row][column]`.
    pub cells: Vec<Vec<f64>>,
}

/// The result of one simulation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub nodes: u32,
    pub tables: Vec<String>,
    pub duration_s: f64,
    /// C: operations per second one node sustains with this op mix.
    pub capacity_per_node: f64,
    pub offered_ops_per_sec: f64,
    pub offered_per_node_capacity: f64,
    /// Completed operations per second over the whole run.
    pub achieved_ops_per_sec: f64,
    /// Completed operations per second over the last third (settled).
    pub settled_ops_per_sec: f64,
    /// settled / C.
    pub throughput_per_node_capacity: f64,
    /// Operations that waited longer than the timeout.
    pub failed_ops: u64,
    /// Writes that touched more than one split (two-phase commit).
    pub multi_split_ops: u64,
    pub latency_ms: LatencyMs,
    /// Completed operations per second, per minute.
    pub throughput_per_minute: Vec<f64>,
    /// `[node][minute]`: CPU-seconds per second used.
    pub node_utilization_per_minute: Vec<Vec<f64>>,
    /// The busiest node's mean utilisation over the last third.
    pub max_node_utilization: f64,
    pub splits: SplitCounts,
    pub hot_splits: Vec<HotSplit>,
    /// Every unsplittable reason the policy reported during the run.
    pub unsplittable_reasons: Vec<String>,
    pub heatmap: Heatmap,
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn round(x: f64, digits: i32) -> f64 {
    let f = 10f64.powi(digits);
    (x * f).round() / f
}

pub(crate) fn build(catalog: &Catalog, manager: &SplitManager, end: u64, raw: Raw) -> Report {
    let secs = raw.completed_per_sec.len().max(1);
    let duration_s = raw.duration as f64 / SECOND as f64;
    let completed: u64 = raw.completed_per_sec.iter().sum();
    let settled_from = secs - secs / 3;
    let settled_n = (secs - settled_from).max(1);
    let settled: u64 = raw.completed_per_sec[settled_from..].iter().sum();
    let settled_rate = settled as f64 / settled_n as f64;
    let minutes = raw.node_cpu.first().map(|v| v.len()).unwrap_or(0);
    let throughput_per_minute = (0..minutes)
        .map(|m| {
            let s = &raw.completed_per_sec[(m * 60).min(secs)..((m + 1) * 60).min(secs)];
            round(s.iter().sum::<u64>() as f64 / s.len().max(1) as f64, 1)
        })
        .collect();
    let minute_len = |m: usize| -> f64 {
        let start = m as u64 * MINUTE;
        ((raw.duration.min(start + MINUTE)).saturating_sub(start)) as f64
    };
    let util: Vec<Vec<f64>> = raw
        .node_cpu
        .iter()
        .map(|v| {
            v.iter()
                .enumerate()
                .map(|(m, c)| round(*c as f64 / minute_len(m).max(1.0), 3))
                .collect()
        })
        .collect();
    let settled_cpu_from = (settled_from as u64 * SECOND / MINUTE) as usize;
    let max_node_utilization = raw
        .node_cpu
        .iter()
        .map(|v| {
            let cpu: u64 = v[settled_cpu_from.min(v.len())..].iter().sum();
            let span: f64 = (settled_cpu_from..v.len()).map(minute_len).sum();
            cpu as f64 / span.max(1.0)
        })
        .fold(0.0, f64::max);

    let reasons: HashMap<_, _> = manager
        .unsplittable()
        .into_iter()
        .map(|(id, r)| (id, r.as_str().to_string()))
        .collect();
    let mut hot_splits: Vec<HotSplit> = manager
        .map()
        .splits()
        .iter()
        .filter_map(|s| {
            let score = s.load.lock().score(end);
            (score >= 50.0).then(|| HotSplit {
                start: describe_start(catalog, &s.start),
                limit: describe_limit(catalog, &s.start, s.limit.as_deref()),
                node: s.node().0,
                cpu_score: round(score, 1),
                reasons: reasons.get(&s.id).cloned().into_iter().collect(),
            })
        })
        .collect();
    hot_splits.sort_by(|a, b| b.cpu_score.total_cmp(&a.cpu_score));
    let capacity = raw.capacity;
    Report {
        nodes: raw.nodes,
        tables: raw.tables,
        duration_s,
        capacity_per_node: round(capacity, 1),
        offered_ops_per_sec: round(raw.offered_total as f64 / duration_s.max(1e-9), 1),
        offered_per_node_capacity: if capacity > 0.0 {
            round(
                raw.offered_total as f64 / duration_s.max(1e-9) / capacity,
                3,
            )
        } else {
            0.0
        },
        achieved_ops_per_sec: round(completed as f64 / duration_s.max(1e-9), 1),
        settled_ops_per_sec: round(settled_rate, 1),
        throughput_per_node_capacity: if capacity > 0.0 {
            round(settled_rate / capacity, 3)
        } else {
            0.0
        },
        failed_ops: raw.failed_total,
        multi_split_ops: raw.multi_split_ops,
        latency_ms: LatencyMs {
            p50: round(raw.p50_ms, 3),
            p99: round(raw.p99_ms, 3),
        },
        throughput_per_minute,
        node_utilization_per_minute: util,
        max_node_utilization: round(max_node_utilization, 3),
        splits: SplitCounts {
            created: raw.events.splits,
            merged: raw.events.merges,
            moved: raw.events.moves,
            at_end: manager.map().len(),
        },
        hot_splits,
        unsplittable_reasons: raw.reasons_seen,
        heatmap: heatmap(catalog, manager, MAX_HEATMAP_ROWS),
    }
}

/// Picks at most `max` of `bounds` (sorted), evenly, keeping the first.
fn thin(bounds: &[Vec<u8>], max: usize) -> Vec<Vec<u8>> {
    if bounds.len() <= max {
        return bounds.to_vec();
    }
    (0..max)
        .map(|i| bounds[i * bounds.len() / max].clone())
        .collect()
}

/// The heatmap from the manager's one-minute history rows.
pub fn heatmap(catalog: &Catalog, manager: &SplitManager, max_rows: usize) -> Heatmap {
    let intervals = manager.history().intervals(Granularity::Minute);
    let mut bounds: Vec<Vec<u8>> = intervals
        .iter()
        .flat_map(|(_, stats)| stats.iter().map(|s| s.start.clone()))
        .collect();
    bounds.sort();
    bounds.dedup();
    // Leave out the empty range before the first object.
    if bounds.len() > 1 && bounds[0].is_empty() {
        bounds.remove(0);
    }
    let bounds = thin(&bounds, max_rows);
    let n = bounds.len();
    let mut cells = vec![vec![0.0; intervals.len()]; n];
    for (col, (_, stats)) in intervals.iter().enumerate() {
        for s in stats {
            let first = bounds
                .partition_point(|b| b.as_slice() <= s.start.as_slice())
                .saturating_sub(1);
            for (row, b) in bounds.iter().enumerate().skip(first) {
                if let Some(limit) = &s.limit {
                    if b >= limit {
                        break;
                    }
                }
                let row_end = bounds.get(row + 1);
                if row_end.is_some_and(|e| e.as_slice() <= s.start.as_slice()) {
                    continue;
                }
                let c = &mut cells[row][col];
                *c = f64::max(*c, round(s.cpu_score, 1));
            }
        }
    }
    let rows = bounds
        .iter()
        .enumerate()
        .map(|(i, b)| HeatRow {
            start: describe_start(catalog, b),
            limit: describe_limit(catalog, b, bounds.get(i + 1).map(|l| l.as_slice())),
            start_hex: hex(b),
        })
        .collect();
    Heatmap {
        metric: "cpu_score".into(),
        minutes: intervals
            .iter()
            .map(|(end, _)| end.div_ceil(MINUTE))
            .collect(),
        rows,
        cells,
    }
}

fn shorten(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut out: String = s.chars().take(n - 1).collect();
        out.push('…');
        out
    }
}

/// The heatmap as text: rows = key ranges, columns = minutes, characters
/// ` .:-=+*#%@` from cold to the hottest cell of the run.
pub fn ascii_heatmap(h: &Heatmap, max_rows: usize) -> String {
    const SHADES: &[u8] = b" .:-=+*#%@";
    let mut out = String::new();
    if h.rows.is_empty() || h.minutes.is_empty() {
        out.push_str("  (no history yet)\n");
        return out;
    }
    // Merge rows into at most max_rows groups (max of their cells).
    let n = h.rows.len();
    let groups = n.min(max_rows);
    let max = h.cells.iter().flatten().fold(0.0f64, |a, b| a.max(*b));
    let _ = writeln!(
        out,
        "  CPU score per key range (rows) and minute (columns); '@' = {:.0}",
        max
    );
    for g in 0..groups {
        let from = g * n / groups;
        let to = ((g + 1) * n / groups).max(from + 1);
        let label = shorten(&h.rows[from].start, 34);
        let mut line = format!("  {label:<34} |");
        for col in 0..h.minutes.len() {
            let v = (from..to).map(|r| h.cells[r][col]).fold(0.0f64, f64::max);
            let i = if max <= 0.0 || v <= 0.0 {
                0
            } else {
                (((v / max) * (SHADES.len() - 1) as f64).ceil() as usize).clamp(1, SHADES.len() - 1)
            };
            line.push(SHADES[i] as char);
        }
        line.push('|');
        out.push_str(&line);
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "  {:<34}  minute 1 .. {}",
        "",
        h.minutes.last().copied().unwrap_or(0)
    );
    out
}

/// A simulation report as text.
pub fn render_text(r: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "nodes: {}   simulated: {:.0} s   tables: {}",
        r.nodes,
        r.duration_s,
        r.tables.join(", ")
    );
    let _ = writeln!(
        out,
        "capacity C (one node, this op mix): {:.0} ops/s",
        r.capacity_per_node
    );
    let _ = writeln!(
        out,
        "offered: {:.0} ops/s ({:.2} C)   achieved: {:.0} ops/s overall, {:.0} ops/s settled (last third) = {:.2} C",
        r.offered_ops_per_sec, r.offered_per_node_capacity, r.achieved_ops_per_sec, r.settled_ops_per_sec, r.throughput_per_node_capacity
    );
    let _ = writeln!(
        out,
        "failed (queued > timeout): {}   multi-split writes (2PC): {}   latency p50 {:.2} ms, p99 {:.2} ms",
        r.failed_ops, r.multi_split_ops, r.latency_ms.p50, r.latency_ms.p99
    );
    let _ = writeln!(
        out,
        "splits: {} created, {} merged, {} moved, {} at the end   busiest node (settled): {:.0}%",
        r.splits.created,
        r.splits.merged,
        r.splits.moved,
        r.splits.at_end,
        r.max_node_utilization * 100.0
    );
    let _ = writeln!(
        out,
        "unsplittable reasons seen: {}",
        if r.unsplittable_reasons.is_empty() {
            "none".to_string()
        } else {
            r.unsplittable_reasons.join(", ")
        }
    );
    out.push_str("node utilisation per minute (%):\n");
    for (i, v) in r.node_utilization_per_minute.iter().enumerate() {
        let cells: Vec<String> = v.iter().map(|u| format!("{:3.0}", u * 100.0)).collect();
        let _ = writeln!(out, "  node {i}: {}", cells.join(" "));
    }
    if r.hot_splits.is_empty() {
        out.push_str("hot splits (CPU score >= 50) at the end: none\n");
    } else {
        out.push_str("hot splits (CPU score >= 50) at the end:\n");
        for h in r.hot_splits.iter().take(10) {
            let _ = writeln!(
                out,
                "  {:>5.1}  node {}  [{} .. {})  {}",
                h.cpu_score,
                h.node,
                shorten(&h.start, 48),
                shorten(&h.limit, 48),
                if h.reasons.is_empty() {
                    String::new()
                } else {
                    h.reasons.join(", ")
                }
            );
        }
        if r.hot_splits.len() > 10 {
            let _ = writeln!(out, "  ... {} more", r.hot_splits.len() - 10);
        }
    }
    out.push_str("heatmap:\n");
    out.push_str(&ascii_heatmap(&r.heatmap, TEXT_HEATMAP_ROWS));
    out
}
