//! The per-query memory limit: every operator that buffers rows stops the
//! query with RESOURCE_EXHAUSTED once the query holds more than the limit,
//! the session goes on, and the memory is given back.
//!
//! This test binary sets a small limit for the whole process (2 MiB), so it
//! lives alone in its own file. (The server-wide budget has its tests in
//! `memory_pool.rs`.)

use std::sync::Arc;

use rowtree_db::Database;
use rowtree_sql::limits::MemoryPool;
use rowtree_sql::{limits, ExecuteResult, Params, Session};
use rowtree_types::{Code, Value};

const LIMIT: usize = 2 << 20;

/// 20,000 rows of ~200 bytes: 4 MB, twice the limit.
fn session() -> Session {
    session_on(limits::server_memory_pool().clone())
}

/// [`session`], drawing from `pool`.
fn session_on(pool: Arc<MemoryPool>) -> Session {
    limits::set_query_memory(LIMIT);
    let db = Database::in_memory_with(rowtree_sql::database_options());
    let mut s = Session::with_memory_pool(db, pool);
    run(
        &mut s,
        "CREATE TABLE T (Id INT64 NOT NULL, G INT64, Pad STRING(MAX)) PRIMARY KEY (Id)",
    );
    for chunk in 0..20 {
        let rows: Vec<String> = (0..1000)
            .map(|i| {
                let id = chunk * 1000 + i;
                format!("({id}, {}, '{}')", id % 7, "x".repeat(200))
            })
            .collect();
        run(
            &mut s,
            &format!("INSERT INTO T (Id, G, Pad) VALUES {}", rows.join(", ")),
        );
    }
    s
}

fn run(s: &mut Session, sql: &str) -> ExecuteResult {
    s.execute(sql, &Params::new())
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

fn count(s: &mut Session, sql: &str) -> i64 {
    let mut n = 0;
    let mut sink = |_: &[(String, rowtree_types::Type)], _: Vec<Value>| {
        n += 1;
        true
    };
    s.execute_streaming(sql, &Params::new(), &mut sink)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    n
}

fn exhausted(s: &mut Session, sql: &str, what: &str) {
    let mut sink = |_: &[(String, rowtree_types::Type)], _: Vec<Value>| true;
    let err = s
        .execute_streaming(sql, &Params::new(), &mut sink)
        .expect_err(sql);
    assert_eq!(err.code, Code::ResourceExhausted, "{sql}: {}", err.message);
    assert!(
        err.message.contains("memory limit of 2 MiB")
            && err.message.contains(what)
            && !err.message.contains("server"),
        "{sql}: {}",
        err.message
    );
}

#[test]
fn buffering_operators_stop_at_the_limit() {
    let mut s = session();
    // Streaming work holds nothing: a full scan with a filter is fine.
    assert_eq!(count(&mut s, "SELECT Id, Pad FROM T WHERE G >= 0"), 20_000);
    exhausted(&mut s, "SELECT Id, Pad FROM T ORDER BY Pad, Id", "a sort");
    exhausted(&mut s, "SELECT DISTINCT Pad, Id FROM T", "SELECT DISTINCT");
    exhausted(
        &mut s,
        "SELECT Id, ARRAY_AGG(Pad) FROM T GROUP BY Id",
        "aggregation",
    );
    exhausted(&mut s, "SELECT ARRAY_AGG(Pad) FROM T", "aggregation");
    exhausted(&mut s, "SELECT STRING_AGG(Pad) FROM T", "aggregation");
    exhausted(
        &mut s,
        "SELECT a.Id FROM T AS a JOIN @{JOIN_METHOD=HASH_JOIN} T AS b ON a.Pad = b.Pad AND a.Id = b.Id",
        "join",
    );
    exhausted(&mut s, "SELECT ARRAY(SELECT Pad FROM T)", "subquery");
    exhausted(
        &mut s,
        "SELECT Pad || CAST(Id AS STRING) FROM T UNION DISTINCT SELECT Pad FROM T",
        "set operation",
    );
    exhausted(
        &mut s,
        "SELECT Id, Pad, IS_FIRST(1) OVER (PARTITION BY G ORDER BY Id) FROM T",
        "window",
    );
    // An aggregate over few groups with O(1) state holds little.
    assert_eq!(
        count(&mut s, "SELECT G, COUNT(*), MAX(Pad) FROM T GROUP BY G"),
        7
    );
    // The memory was given back: the same session sorts what fits.
    assert_eq!(
        count(&mut s, "SELECT Id FROM T WHERE Id < 1000 ORDER BY Pad, Id"),
        1000
    );
}

/// The values of `IN UNNEST` built once per statement (a key-set read's
/// key list, a non-key column's hash set) are held against the limit too.
#[test]
fn in_unnest_values_count_too() {
    let mut s = session();
    // 128,000 ids (GENERATE_ARRAY makes at most 16,000 at a time).
    let parts: Vec<String> = (0..8)
        .map(|i| format!("GENERATE_ARRAY({}, {})", i * 16_000, i * 16_000 + 15_999))
        .collect();
    let ids = format!("UNNEST(ARRAY_CONCAT({}))", parts.join(", "));
    exhausted(
        &mut s,
        &format!("SELECT Id FROM T WHERE Id IN {ids}"),
        "IN UNNEST",
    );
    exhausted(
        &mut s,
        &format!("SELECT Id FROM T WHERE G IN {ids}"),
        "IN UNNEST",
    );
    // Small arrays are fine, and the memory was given back.
    assert_eq!(
        count(
            &mut s,
            "SELECT Id FROM T WHERE Id IN UNNEST(GENERATE_ARRAY(0, 999))"
        ),
        1000
    );
}

#[test]
fn an_unstreamed_result_counts_too() {
    let mut s = session();
    let err = s
        .execute("SELECT Id, Pad FROM T", &Params::new())
        .expect_err("the whole result held at once");
    assert_eq!(err.code, Code::ResourceExhausted, "{}", err.message);
    match run(&mut s, "SELECT COUNT(*) FROM T") {
        ExecuteResult::Query(q) => assert_eq!(q.rows[0][0], Value::Int64(20_000)),
        other => panic!("{other:?}"),
    }
}

/// A query stopped by its own limit says so (not the server's), and gives
/// back to the server's pool everything it drew, as does a query whose
/// reader stops early.
#[test]
fn the_pool_gets_back_what_a_refused_query_drew() {
    let pool = MemoryPool::new(1 << 30);
    let mut s = session_on(pool.clone());
    assert_eq!(pool.reserved(), 0);
    exhausted(&mut s, "SELECT Id, Pad FROM T ORDER BY Pad, Id", "a sort");
    assert_eq!(pool.reserved(), 0);
    exhausted(&mut s, "SELECT ARRAY(SELECT Pad FROM T)", "subquery");
    assert_eq!(pool.reserved(), 0);
    let err = s
        .execute("SELECT Id, Pad FROM T", &Params::new())
        .expect_err("the whole result held at once");
    assert!(!err.message.contains("server"), "{}", err.message);
    assert_eq!(pool.reserved(), 0);
    let mut first = 0;
    let mut sink = |_: &[(String, rowtree_types::Type)], _: Vec<Value>| {
        first = pool.reserved();
        false
    };
    s.execute_streaming(
        "SELECT Id FROM T WHERE Id < 1000 ORDER BY Pad, Id",
        &Params::new(),
        &mut sink,
    )
    .unwrap();
    assert!(first > 200_000, "the sort held {first} bytes");
    assert_eq!(pool.reserved(), 0);
}
