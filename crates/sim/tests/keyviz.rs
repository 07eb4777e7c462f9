//! The key visualizer of a simulation shows Spanner's pictures: a monotonic
//! key draws a bright diagonal (the hottest key bucket climbs the key space
//! minute by minute), a spread key an even field; simulated time is
//! labelled from the workload's start.

use rowtree_keyviz::{Heatmap, Metric};
use rowtree_sim::{catalog_from_sql, keyviz_heatmap, simulate_with_history, SimConfig, Workload};

fn run(schema: &str, workload: &str) -> Heatmap {
    let catalog = catalog_from_sql(schema).expect("schema");
    let w = Workload::parse(workload, &catalog).expect("workload");
    let (_, history) =
        simulate_with_history(&catalog, &w, &SimConfig::new(2), &mut |_, _| {}).expect("runs");
    keyviz_heatmap(&catalog, &history, "test")
}

fn column(h: &Heatmap, c: usize) -> Vec<f64> {
    (0..h.rows.len())
        .map(|r| h.value(Metric::RowsWritten, c, r))
        .collect()
}

const WORKLOAD: &str = r#"
seed = 9
duration = "8m"
[[table]]
name = "Logs"
inserts_per_sec = 500
[table.columns]
LastAccess = "timestamp"
UserId = { kind = "uniform", min = 1, max = 1000000 }
"#;

#[test]
fn a_timestamp_first_key_draws_a_diagonal() {
    let h = run(
        "CREATE TABLE Logs (LastAccess TIMESTAMP NOT NULL, UserId INT64 NOT NULL) \
         PRIMARY KEY (LastAccess, UserId)",
        WORKLOAD,
    );
    assert_eq!(h.columns.len(), 8);
    assert!(h.rows.len() > 30, "rows are key buckets: {}", h.rows.len());
    assert!(h
        .rows
        .iter()
        .all(|r| r.object == "Logs" || r.label == "<begin>"));
    let hottest: Vec<usize> = (0..h.columns.len())
        .map(|c| {
            let v = column(&h, c);
            (0..v.len()).max_by(|&a, &b| v[a].total_cmp(&v[b])).unwrap()
        })
        .collect();
    // Minute by minute the hottest bucket moves to higher keys.
    assert!(hottest.windows(2).all(|w| w[1] > w[0]), "{hottest:?}");
    // And each minute's writes stay in a thin band of the key space.
    for c in 1..h.columns.len() {
        let lit = column(&h, c).iter().filter(|v| **v > 0.0).count();
        assert!(
            lit * 4 < h.rows.len(),
            "minute {c}: {lit} of {} rows",
            h.rows.len()
        );
    }
    assert_eq!(h.time_label(h.columns[0]), "t+0:01");
}

#[test]
fn a_spread_key_draws_an_even_field() {
    // Keyed by a uniformly random user id: every minute writes all over.
    let h = run(
        "CREATE TABLE Logs (LastAccess TIMESTAMP NOT NULL, UserId INT64 NOT NULL) \
         PRIMARY KEY (UserId, LastAccess)",
        WORKLOAD,
    );
    assert!(h.rows.len() > 30, "rows are key buckets: {}", h.rows.len());
    for c in 1..h.columns.len() {
        let mut v: Vec<f64> = column(&h, c);
        let lit = v.iter().filter(|x| **x > 0.0).count();
        // Nearly every bucket takes writes every minute ...
        assert!(
            lit * 100 >= h.rows.len() * 85,
            "minute {c}: {lit} of {}",
            h.rows.len()
        );
        // ... and most within a small factor of each other.
        v.sort_by(f64::total_cmp);
        let median = v[v.len() / 2];
        let p90 = v[v.len() * 9 / 10];
        assert!(
            p90 < 2.5 * median,
            "minute {c}: p90 {p90} vs median {median}"
        );
    }
    // Unlike the diagonal, the hottest bucket does not climb.
    let hottest: Vec<usize> = (0..h.columns.len())
        .map(|c| {
            let v = column(&h, c);
            (0..v.len()).max_by(|&a, &b| v[a].total_cmp(&v[b])).unwrap()
        })
        .collect();
    assert!(!hottest.windows(2).all(|w| w[1] > w[0]), "{hottest:?}");
}
