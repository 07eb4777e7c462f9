//! The SQL benchmarks: queries through `rowtree_sql::Session` (parse, plan
//! and execute, every iteration) on a durable on-disk database.
//!
//! ```sh
//! cargo bench -p rowtree-bench --bench sql
//! ```
//!
//! Loading takes most of the run (1.7 million rows, with `db.write`
//! batches). Before timing, each query's plan (`EXPLAIN`) and one
//! execution's counters (`EXPLAIN ANALYZE`, `QueryStats`) are printed, so a
//! run records the plans and rows read next to the times. What each
//! benchmark does, and one run's medians, are in `docs/performance.md`.

/// The benchmarks allocate as the `rowtree` binary does (jemalloc), so
/// they time what ships: with glibc's malloc, some of them measure the
/// allocator's state more than the database (docs/performance.md, "The
/// criterion regressions were glibc's malloc").
#[cfg(all(unix, not(target_env = "musl")))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use rowtree_bench::sql_workload as w;
use rowtree_bench::workload::{self, KeyGen};
use rowtree_db::Database;
use rowtree_sql::{ExecuteResult, Params, QueryResult, Session};
use rowtree_types::{Type, Value};
use tempfile::TempDir;

/// The loaded database, and the directory holding it.
struct Fixture {
    // Declared before `_dir` so the session closes the database before its
    // directory is removed.
    session: Session,
    _dir: TempDir,
}

impl Fixture {
    /// A durable database in a fresh directory under cargo's target
    /// directory, with every table loaded; prints each load's time.
    fn load() -> Fixture {
        let dir = tempfile::Builder::new()
            .prefix("rowtree-sql-bench-")
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .expect("create a temporary directory");
        let db = Database::open_with(dir.path(), rowtree_sql::database_options())
            .expect("open the database");
        w::create_schema(&db).expect("create the schema");
        let total = Instant::now();
        timed("load T (100,000 rows)", || {
            workload::load_t(&db, workload::ROWS)
        });
        timed(
            "load Singers/Albums and RSingers/RAlbums (2 x 102,000 rows)",
            || w::load_singers(&db),
        );
        timed("load Big (1,000,000 rows)", || w::load_big(&db));
        timed("load EventsDesc and EventsAsc (2 x 200,000 rows)", || {
            w::load_events(&db)
        });
        println!("load total: {:.2?}", total.elapsed());
        Fixture {
            session: Session::new(db),
            _dir: dir,
        }
    }

    fn query(&mut self, sql: &str, params: &Params) -> QueryResult {
        match self.session.execute(sql, params) {
            Ok(ExecuteResult::Query(q)) => q,
            Ok(other) => panic!("{sql}: not a query result: {other:?}"),
            Err(e) => panic!("{sql}: {e}"),
        }
    }

    /// The `EXPLAIN` (or `EXPLAIN ANALYZE`) text.
    fn explain(&mut self, sql: &str, params: &Params, analyze: bool) -> String {
        let word = if analyze {
            "EXPLAIN ANALYZE"
        } else {
            "EXPLAIN"
        };
        let q = self.query(&format!("{word} {sql}"), params);
        q.rows
            .iter()
            .map(|r| match &r[0] {
                Value::String(l) => l.clone(),
                other => panic!("{other:?}"),
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Prints the plan with one execution's counters, and that execution's
    /// `QueryStats`; returns the plan and the result.
    fn report(&mut self, name: &str, sql: &str, params: &Params) -> (String, QueryResult) {
        let plan = self.explain(sql, params, true);
        let q = self.query(sql, params);
        println!("--- {name}: {sql}");
        println!("{plan}");
        println!(
            "QueryStats: rows_scanned={} rows_returned={} splits_touched={}",
            q.stats.rows_scanned, q.stats.rows_returned, q.stats.splits_touched
        );
        (plan, q)
    }
}

fn timed<T>(what: &str, f: impl FnOnce() -> rowtree_db::Result<T>) -> T {
    let start = Instant::now();
    let out = f().unwrap_or_else(|e| panic!("{what}: {e}"));
    println!("{what}: {:.2?}", start.elapsed());
    out
}

fn int_param(name: &str, v: i64) -> Params {
    Params::from([(name.to_string(), (Type::Int64, Value::Int64(v)))])
}

/// Times `sql` with a fresh random `@param` in `0..bound` per iteration.
fn bench_query(
    c: &mut Criterion,
    f: &mut Fixture,
    group: &str,
    name: &str,
    sql: &str,
    param: &str,
    bound: i64,
) {
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Elements(1));
    let mut keys = KeyGen::new(7);
    g.bench_function(name, |b| {
        b.iter(|| {
            let params = int_param(param, keys.below(bound));
            f.session.execute(sql, &params).expect("query")
        })
    });
    g.finish();
}

fn sql(c: &mut Criterion) {
    let mut f = Fixture::load();

    // 1. Point SELECT by primary key.
    let (_, q) = f.report("point_select", w::POINT_SELECT, &int_param("id", 4242));
    assert_eq!(q.rows, vec![workload::t_row(4242)[3..].to_vec()]);
    bench_query(
        c,
        &mut f,
        "sql_point_select",
        "disk",
        w::POINT_SELECT,
        "id",
        workload::ROWS,
    );

    // 2. Secondary index, covering and with a back join.
    let per_col = (workload::ROWS / workload::COL_VALUES) as usize;
    let (plan, q) = f.report("index_covering", w::INDEX_COVERING, &int_param("c", 42));
    assert!(plan.contains("IndexScan T@TByCol (covering)"), "{plan}");
    assert_eq!(q.rows.len(), per_col);
    let (plan, q) = f.report("index_back_join", w::INDEX_BACK_JOIN, &int_param("c", 42));
    assert!(plan.contains("IndexScan T@TByCol (back join"), "{plan}");
    assert_eq!(q.rows.len(), per_col);
    for (name, sql) in [
        ("covering", w::INDEX_COVERING),
        ("back_join", w::INDEX_BACK_JOIN),
    ] {
        bench_query(
            c,
            &mut f,
            "sql_index_select",
            name,
            sql,
            "c",
            workload::COL_VALUES,
        );
    }

    // 3. One parent and its children: interleaved vs two root tables.
    let joins = [
        ("interleaved", w::JOIN_INTERLEAVED),
        ("root_hash", w::JOIN_ROOT_HASH),
        ("root_default", w::JOIN_ROOT_DEFAULT),
        ("root_hash_both_keyed", w::JOIN_ROOT_HASH_BOTH_KEYED),
    ];
    for (name, sql) in joins {
        let (_, q) = f.report(&format!("join/{name}"), sql, &int_param("id", 1234));
        assert_eq!(q.rows.len(), w::ALBUMS_PER_SINGER as usize, "{name}");
    }
    for (name, sql) in joins {
        bench_query(
            c,
            &mut f,
            "sql_join_one_parent",
            name,
            sql,
            "id",
            w::SINGERS,
        );
    }

    // 4. Full scan of 1,000,000 rows with aggregates.
    let (_, q) = f.report("scan_aggregate", w::SCAN_AGGREGATE, &Params::new());
    let (count, sum, max) = w::big_expected();
    assert_eq!(
        q.rows,
        vec![vec![
            Value::Int64(count),
            Value::Int64(sum),
            Value::Int64(max)
        ]]
    );
    {
        let mut g = c.benchmark_group("sql_scan_aggregate_1m");
        g.sampling_mode(SamplingMode::Flat)
            .sample_size(10)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(20))
            .throughput(Throughput::Elements(w::BIG_ROWS as u64));
        g.bench_function("disk", |b| {
            b.iter(|| {
                f.session
                    .execute(w::SCAN_AGGREGATE, &Params::new())
                    .expect("scan")
            })
        });
        g.finish();
    }

    // 5. The latest 10 events of a user, on a DESC and an ASC key.
    for (name, sql) in [("desc", w::LATEST_10_DESC), ("asc", w::LATEST_10_ASC)] {
        let (_, q) = f.report(&format!("latest_10/{name}_key"), sql, &int_param("u", 77));
        let expected: Vec<Value> = (0..10)
            .map(|i| Value::Int64(w::event_ts(w::EVENTS_PER_USER - 1 - i)))
            .collect();
        let got: Vec<Value> = q.rows.iter().map(|r| r[0].clone()).collect();
        assert_eq!(got, expected, "{name}");
    }
    for (name, sql) in [
        ("desc_key", w::LATEST_10_DESC),
        ("asc_key", w::LATEST_10_ASC),
    ] {
        bench_query(c, &mut f, "sql_latest_10", name, sql, "u", w::USERS);
    }
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
    targets = sql
}
criterion_main!(benches);
