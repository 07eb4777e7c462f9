//! The heatmap as text, for terminals.

use std::fmt::Write as _;

use crate::{granularity_name, Heatmap, Metric};

/// Shades from idle to the hottest cell.
const SHADES: &[u8] = b" .:-=+*#%@";

/// The most rows of the text heatmap: neighbouring rows are merged (the
/// hottest of them shown) beyond this.
pub const MAX_TEXT_ROWS: usize = 40;

/// A compact ASCII heatmap of `metric`, at most `width` characters wide
/// (at least 24): a label column, then one character per column (when there
/// are more intervals than fit, neighbouring intervals are merged, the
/// hottest shown), shaded ` .:-=+*#%@` relative to the hottest cell of the
/// database. At most `MAX_TEXT_ROWS` (40) rows. Deterministic.
pub fn render_text(h: &Heatmap, metric: Metric, width: usize) -> String {
    let width = width.max(24);
    let mut out = String::new();
    let max = h.max(metric);
    let _ = writeln!(
        out,
        "{} per key bucket (rows) and {} (columns); '@' = {}",
        metric.name(),
        granularity_name(h.granularity),
        format_value(max)
    );
    if h.is_empty() {
        out.push_str("  (no history yet)\n");
        return out;
    }
    let label_w = (width / 3).clamp(8, 32);
    let grid_w = width.saturating_sub(label_w + 4).max(1);
    let n_cols = h.columns.len();
    let cols = n_cols.min(grid_w);
    let n_rows = h.rows.len();
    let rows = n_rows.min(MAX_TEXT_ROWS);
    for r in 0..rows {
        let (r_from, r_to) = span(r, rows, n_rows);
        let label = shorten(&h.rows[r_from].label, label_w);
        let mut line = String::new();
        let _ = write!(line, "  {label:<label_w$}|");
        for c in 0..cols {
            let (c_from, c_to) = span(c, cols, n_cols);
            let mut v = 0.0f64;
            for col in c_from..c_to {
                for row in r_from..r_to {
                    v = v.max(h.value(metric, col, row));
                }
            }
            line.push(shade(v, max));
        }
        line.push('|');
        out.push_str(line.trim_end_matches(' '));
        out.push('\n');
    }
    let first = h.time_label(h.columns[0]);
    let last = h.time_label(h.columns[n_cols - 1]);
    let zone = if h.origin.is_some() { "" } else { " UTC" };
    let _ = writeln!(
        out,
        "  {:<label_w$} {first} .. {last}{zone} ({n_cols} intervals, {n_rows} key buckets)",
        ""
    );
    out
}

/// Items `[from, to)` of group `i` when `n` items are cut into `groups` groups.
fn span(i: usize, groups: usize, n: usize) -> (usize, usize) {
    let from = i * n / groups;
    let to = ((i + 1) * n / groups).max(from + 1);
    (from, to)
}

fn shade(v: f64, max: f64) -> char {
    if max <= 0.0 || v <= 0.0 || !v.is_finite() {
        return SHADES[0] as char;
    }
    let top = SHADES.len() - 1;
    let i = ((v / max) * top as f64).ceil() as usize;
    SHADES[i.clamp(1, top)] as char
}

fn shorten(s: &str, n: usize) -> String {
    // Control characters would break the terminal layout.
    let clean: String = s
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if clean.chars().count() <= n {
        clean
    } else {
        let mut out: String = clean.chars().take(n.saturating_sub(1)).collect();
        out.push('~');
        out
    }
}

/// A value for people: integers as integers, else 3 significant digits.
pub(crate) fn format_value(v: f64) -> String {
    if !v.is_finite() {
        return "0".into();
    }
    if v == v.trunc() && v.abs() < 1e15 {
        return format!("{v:.0}");
    }
    let digits = if v.abs() >= 100.0 {
        0
    } else if v.abs() >= 10.0 {
        1
    } else if v.abs() >= 1.0 {
        2
    } else {
        3
    };
    format!("{v:.digits$}")
}
