//! Batched lookups: `WHERE x IN UNNEST(@ids)` with arrays of 1,000 to
//! 200,000 ids against the 12,000 rows of `Items`, by primary key, by a
//! non-key column (through its index, as the planner picks, and forced to
//! a full scan), and through a secondary index read with a back join.
//!
//! ```sh
//! cargo bench -p rowtree-bench --bench in_unnest
//! IN_UNNEST_MAX_ELEMENTS=16000 cargo bench -p rowtree-bench --bench in_unnest
//! ```
//!
//! `IN_UNNEST_MAX_ELEMENTS` skips the larger arrays (a plan that tests each
//! row against the whole array takes minutes on 200,000 ids). Before timing,
//! each case prints its plan with one execution's counters
//! (`EXPLAIN ANALYZE`) and how long that first execution took. The
//! results are in `docs/performance.md`.

/// The benchmarks allocate as the `rowtree` binary does (jemalloc), so
/// they time what ships: with glibc's malloc, some of them measure the
/// allocator's state more than the database (docs/performance.md, "The
/// criterion regressions were glibc's malloc").
#[cfg(all(unix, not(target_env = "musl")))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rowtree_bench::sql_workload as w;
use rowtree_bench::workload::KeyGen;
use rowtree_db::Database;
use rowtree_sql::{ExecuteResult, Params, Session};
use rowtree_types::{Type, Value};
use tempfile::TempDir;

/// `@ids`: `n` pseudo-random ids below twice the largest key (so about
/// half of them are missing, and larger arrays repeat ids).
fn ids(n: usize) -> Params {
    let mut keys = KeyGen::new(n as u64);
    let values = (0..n)
        .map(|_| Value::Int64(keys.below(2 * w::LOOKUP_ROWS)))
        .collect();
    Params::from([(
        "ids".to_string(),
        (Type::Array(Box::new(Type::Int64)), Value::Array(values)),
    )])
}

fn run(session: &mut Session, sql: &str, params: &Params) -> usize {
    match session.execute(sql, params) {
        Ok(ExecuteResult::Query(q)) => q.rows.len(),
        Ok(other) => panic!("{sql}: not a query result: {other:?}"),
        Err(e) => panic!("{sql}: {e}"),
    }
}

fn in_unnest(c: &mut Criterion) {
    let dir = tempfile::Builder::new()
        .prefix("rowtree-in-unnest-bench-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("create a temporary directory");
    let db = Database::open_with(dir.path(), rowtree_sql::database_options())
        .expect("open the database");
    w::load_lookup(&db).expect("load Items");
    let mut session = Session::new(db);
    let max: usize = std::env::var("IN_UNNEST_MAX_ELEMENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(usize::MAX);
    let cases = [
        ("key", w::LOOKUP_BY_KEY, &[1_000, 16_000, 200_000][..]),
        ("value", w::LOOKUP_BY_VALUE, &[1_000, 16_000][..]),
        (
            "value_scan",
            w::LOOKUP_BY_VALUE_SCAN,
            &[1_000, 16_000, 200_000][..],
        ),
        ("index", w::LOOKUP_BY_INDEX, &[1_000, 16_000][..]),
    ];
    let mut g = c.benchmark_group("sql_in_unnest");
    for (name, sql, sizes) in cases {
        for &n in sizes.iter().filter(|&&n| n <= max) {
            let params = ids(n);
            let start = Instant::now();
            let rows = run(&mut session, sql, &params);
            let first = start.elapsed();
            let plan = match session.execute(&format!("EXPLAIN ANALYZE {sql}"), &params) {
                Ok(ExecuteResult::Query(q)) => q
                    .rows
                    .iter()
                    .map(|r| format!("{:?}", r[0]))
                    .collect::<Vec<_>>()
                    .join("\n"),
                other => panic!("{other:?}"),
            };
            println!("--- {name}/{n}: {sql}\n{plan}\nrows: {rows}, first execution: {first:.2?}");
            g.throughput(Throughput::Elements(n as u64));
            g.bench_function(format!("{name}/{n}"), |b| {
                b.iter(|| run(&mut session, sql, &params))
            });
        }
    }
    g.finish();
    drop(session);
    drop::<TempDir>(dir);
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
}

criterion_group! {
    name = benches;
    config = config();
    targets = in_unnest
}
criterion_main!(benches);
