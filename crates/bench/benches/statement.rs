//! Where one point query's time goes: parse, bind and plan, execute.
//!
//! ```sh
//! cargo bench -p rowtree-bench --bench statement
//! ```
//!
//! The statement is the one `grpc-load --workload sql` sends,
//! `SELECT UserId, Payload FROM Users WHERE UserId = @id`, over an
//! in-memory database of 10,000 rows of 1 KB payloads (the load is
//! seconds, so the phases are timed without the storage engine's disk).
//! Each phase is timed on its own, with a fresh random `@id` per
//! iteration, and then the whole statement through `Session::execute`, the
//! embedded entry point, and through `execute_in`, the gRPC API's: each
//! once with the database's statement cache off (`uncached`: parse, bind
//! and plan every time) and once with it on (`cached`: a plan template
//! hit, see `rowtree_sql::cache`), so one run shows both.

/// The benchmarks allocate as the `rowtree` binary does (jemalloc), so
/// they time what ships: with glibc's malloc, some of them measure the
/// allocator's state more than the database (docs/performance.md, "The
/// criterion regressions were glibc's malloc").
#[cfg(all(unix, not(target_env = "musl")))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rowtree_bench::workload::KeyGen;
use rowtree_db::{Database, Mutation, TimestampBound};
use rowtree_parser::ast::StatementKind;
use rowtree_sql::{statement_cache, CacheLimits, Params, QueryMode, Session, TxnRef};
use rowtree_types::{Dialect, Type, Value};

const SQL: &str = "SELECT UserId, Payload FROM Users WHERE UserId = @id";
const ROWS: i64 = 10_000;

fn database() -> Database {
    let db = Database::in_memory_with(rowtree_sql::database_options());
    db.apply_ddl(&[
        "CREATE TABLE Users (UserId INT64 NOT NULL, Payload STRING(MAX)) PRIMARY KEY (UserId)",
    ])
    .map_err(|e| e.error)
    .expect("create Users");
    let payload = "x".repeat(1024);
    for start in (0..ROWS).step_by(1000) {
        db.write(vec![Mutation::insert(
            "Users",
            &["UserId", "Payload"],
            (start..start + 1000)
                .map(|id| vec![Value::Int64(id), Value::String(payload.clone())])
                .collect(),
        )])
        .expect("load Users");
    }
    db
}

fn params(id: i64) -> Params {
    Params::from([("id".to_string(), (Type::Int64, Value::Int64(id)))])
}

fn statement(c: &mut Criterion) {
    let db = database();
    let stmt = rowtree_parser::parse_statement_in(Dialect::GoogleSql, SQL).expect("parse");
    let StatementKind::Query(query) = &stmt.kind else {
        panic!("not a query")
    };
    let catalog = db.catalog();
    let pool = rowtree_sql::limits::server_memory_pool().clone();
    let mut keys = KeyGen::new(7);

    let mut g = c.benchmark_group("statement_point_select");
    g.throughput(Throughput::Elements(1));
    g.bench_function("parse", |b| {
        b.iter(|| rowtree_parser::parse_statement_in(Dialect::GoogleSql, SQL).expect("parse"))
    });
    g.bench_function("bind", |b| {
        b.iter(|| rowtree_sql::bind_only(&catalog, query, &params(keys.below(ROWS))).expect("bind"))
    });
    g.bench_function("bind_plan", |b| {
        b.iter(|| {
            rowtree_sql::plan_query(&catalog, query, &params(keys.below(ROWS))).expect("plan")
        })
    });
    g.bench_function("open_snapshot", |b| {
        b.iter(|| db.read_only(TimestampBound::Strong).expect("snapshot"))
    });
    g.bench_function("execute", |b| {
        b.iter_batched(
            || rowtree_sql::plan_query(&catalog, query, &params(keys.below(ROWS))).expect("plan"),
            |plan| {
                let mut ro = db.read_only(TimestampBound::Strong).expect("snapshot");
                let rows: Vec<_> = plan
                    .execute(&mut ro, &pool)
                    .expect("execute")
                    .collect::<Result<_, _>>()
                    .expect("rows");
                assert_eq!(rows.len(), 1);
            },
            criterion::BatchSize::SmallInput,
        )
    });
    let mut session = Session::new(db.clone());
    let cache = statement_cache(&db);
    for (name, limits) in [
        (
            "uncached",
            CacheLimits {
                max_entries: 0,
                max_bytes: 0,
            },
        ),
        ("cached", CacheLimits::default()),
    ] {
        cache.set_limits(limits);
        g.bench_function(format!("session_execute_{name}"), |b| {
            b.iter(|| {
                session
                    .execute(SQL, &params(keys.below(ROWS)))
                    .expect("query")
            })
        });
        g.bench_function(format!("execute_in_{name}"), |b| {
            b.iter(|| {
                let mut ro = db.read_only(TimestampBound::Strong).expect("snapshot");
                rowtree_sql::execute_in(
                    TxnRef::ReadOnly(&mut ro),
                    SQL,
                    &params(keys.below(ROWS)),
                    QueryMode::Normal,
                    None,
                )
                .expect("query")
            })
        });
    }
    let stats = cache.stats();
    assert!(stats.plan_hits > 0, "{stats:?}");
    println!("statement cache: {stats:?}");
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
}

criterion_group! {
    name = benches;
    config = config();
    targets = statement
}
criterion_main!(benches);
