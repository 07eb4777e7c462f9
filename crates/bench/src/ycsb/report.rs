//! The matrix as text: one Markdown table per workload, with the ratios the
//! performance targets are stated in.

use std::fmt::Write;

use super::workload::Workload;
use super::Matrix;

fn rate(x: f64) -> String {
    if x.is_nan() {
        "-".into()
    } else if x >= 10_000.0 {
        format!("{:.1}k", x / 1000.0)
    } else {
        format!("{x:.0}")
    }
}

fn micros(x: f64) -> String {
    if x.is_nan() {
        "-".into()
    } else if x >= 10_000.0 {
        format!("{:.1} ms", x / 1000.0)
    } else {
        format!("{x:.0} µs")
    }
}

/// The ratio columns: Rowtree's systems against the peers.
const RATIOS: [(&str, &str); 5] = [
    ("grpc", "postgres"),
    ("grpc-sql", "postgres"),
    ("pgwire", "postgres"),
    ("embedded", "sqlite"),
    ("embedded", "postgres"),
];

/// Markdown tables: for each workload, a row per client count with every
/// system's throughput and p50/p99 latency, then the ratios.
pub fn markdown(m: &Matrix) -> String {
    let mut out = String::new();
    let ratios: Vec<(&str, &str)> = RATIOS
        .into_iter()
        .filter(|(a, b)| m.systems.iter().any(|s| s == a) && m.systems.iter().any(|s| s == b))
        .collect();
    for workload in &m.workloads {
        let describe = Workload::parse(workload)
            .map(|w| w.describe())
            .unwrap_or("");
        let _ = writeln!(out, "#### {workload}: {describe}\n");
        let mut header = String::from("| clients |");
        let mut rule = String::from("|---|");
        for s in &m.systems {
            let _ = write!(header, " {s} ops/s | p50 | p99 |");
            rule.push_str("---|---|---|");
        }
        for (a, b) in &ratios {
            let _ = write!(header, " {a}/{b} |");
            rule.push_str("---|");
        }
        let _ = writeln!(out, "{header}\n{rule}");
        for &clients in &m.clients {
            let mut row = format!("| {clients} |");
            for s in &m.systems {
                match m.cell(s, workload, clients) {
                    Some(c) => {
                        let errors = if c.errors > 0 {
                            format!(" ({} errors)", c.errors)
                        } else {
                            String::new()
                        };
                        let _ = write!(
                            row,
                            " {}{} | {} | {} |",
                            rate(c.throughput),
                            errors,
                            micros(c.p50_us),
                            micros(c.p99_us)
                        );
                    }
                    None => row.push_str(" - | - | - |"),
                }
            }
            for (a, b) in &ratios {
                let ratio = match (m.cell(a, workload, clients), m.cell(b, workload, clients)) {
                    (Some(x), Some(y)) if y.throughput > 0.0 => {
                        format!("{:.2}x", x.throughput / y.throughput)
                    }
                    _ => "-".into(),
                };
                let _ = write!(row, " {ratio} |");
            }
            let _ = writeln!(out, "{row}");
        }
        out.push('\n');
    }
    let errors: Vec<String> = m
        .cells
        .iter()
        .filter_map(|c| {
            c.first_error.as_ref().map(|e| {
                format!(
                    "- {} {} at {} clients: {} errors, the first: {e}",
                    c.system, c.workload, c.clients, c.errors
                )
            })
        })
        .collect();
    if !errors.is_empty() {
        let _ = writeln!(out, "Errors:\n\n{}\n", errors.join("\n"));
    }
    let loads: Vec<String> = m
        .loads
        .iter()
        .map(|l| {
            format!(
                "{} {:.1} s ({:.0} records/s)",
                l.system,
                l.seconds,
                l.records as f64 / l.seconds
            )
        })
        .collect();
    let _ = writeln!(
        out,
        "{} records of about 1 KB per system; each cell {} s measured after {} s of warm-up. Loads, side by side: {}.",
        m.records,
        m.measure_seconds,
        m.warmup_seconds,
        loads.join(", ")
    );
    out
}
