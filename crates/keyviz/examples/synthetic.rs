//! Writes a key visualizer page from synthetic statistics (no database):
//! a moving hot spot (sequential keys: a bright diagonal), one hot row, and
//! a uniform background load, with splits that follow the load.
//!
//!     cargo run -p rowtree-keyviz --example synthetic -- OUT.html

use rowtree_keyviz::{heatmap_from_history, render_html};
use rowtree_kv::{IntervalStat, NodeId, SplitId, UnsplittableReason};

const MIN: u64 = 60_000_000_000;
const T0: u64 = 1_767_225_600_000_000_000; // 2026-01-01 00:00 UTC

fn key(table: u8, id: u32) -> Vec<u8> {
    let mut k = vec![table];
    k.extend_from_slice(&id.to_be_bytes());
    k
}

fn main() {
    let out = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "keyviz-synthetic.html".into());
    let minutes = 90u32;
    let ranges = 120u32;
    let mut intervals = Vec::new();
    for t in 0..minutes {
        let mut stats = Vec::new();
        // Table 1 ("Users"): one split per 1,000 ids.
        for r in 0..ranges {
            let hot_spot = r == (t * ranges / minutes);
            let hot_row = r == 30 && t > 20;
            let mut score = 2.0 + f64::from((r * 7 + t * 3) % 5);
            let mut reasons = Vec::new();
            if hot_spot {
                score = 140.0;
                reasons.push(UnsplittableReason::MovingHotSpot);
            }
            if hot_row {
                score = 95.0;
                if t > 40 {
                    reasons.push(UnsplittableReason::HotRow);
                }
            }
            let rows = (score * 40.0) as u64;
            stats.push(IntervalStat {
                interval_end: T0 + u64::from(t + 1) * MIN,
                split: SplitId(u64::from(r) + 1),
                start: key(1, r * 1000),
                limit: Some(key(1, (r + 1) * 1000)),
                node: NodeId(r % 4),
                replicas: Vec::new(),
                cpu_score: score,
                requests: rows,
                rows_read: rows * 3,
                rows_written: if hot_spot { rows } else { rows / 10 },
                bytes_read: rows * 3 * 120,
                bytes_written: rows * 200,
                cpu_nanos: (score / 100.0 * 60e9) as u64,
                unsplittable: reasons,
                buckets: Default::default(),
            });
        }
        // Table 2 ("Orders"): one split, lightly used.
        stats.push(IntervalStat {
            interval_end: T0 + u64::from(t + 1) * MIN,
            split: SplitId(10_000),
            start: vec![2],
            limit: None,
            node: NodeId(0),
            replicas: Vec::new(),
            cpu_score: 10.0,
            requests: 400,
            rows_read: 400,
            rows_written: 0,
            bytes_read: 40_000,
            bytes_written: 0,
            cpu_nanos: 6_000_000_000,
            unsplittable: Vec::new(),
            buckets: Default::default(),
        });
        intervals.push((T0 + u64::from(t + 1) * MIN, stats));
    }
    let mut h = heatmap_from_history(&intervals, |k: &[u8]| match k.first() {
        None => "<begin>".into(),
        Some(1) if k.len() >= 5 => {
            format!("Users({})", u32::from_be_bytes([k[1], k[2], k[3], k[4]]))
        }
        Some(1) => "Users".into(),
        Some(2) => "Orders".into(),
        Some(t) => format!("<table {t}>"),
    });
    h.title = "Key Visualizer: synthetic <demo> & test".into();
    std::fs::write(&out, render_html(&h)).expect("write the page");
    eprintln!("wrote {out}");
}
