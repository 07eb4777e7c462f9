//! DML under the per-query memory limit: the rows an UPDATE, DELETE or
//! INSERT ... SELECT collects (and what THEN RETURN returns) count like an
//! operator's buffer, so a statement over the limit fails with
//! RESOURCE_EXHAUSTED naming it, changes nothing, gives its memory back,
//! and the session goes on; partitioned DML, which holds one partition at a
//! time, changes a table larger than the limit.
//!
//! This test binary sets a small limit for the whole process (2 MiB), so it
//! lives alone in its own file. (The mutation limit has its tests in
//! `dml_limits.rs`.)

mod common;

use std::sync::Arc;

use common::{int, run};

use rowtree_db::{Database, Mutation};
use rowtree_sql::limits::{self, MemoryPool};
use rowtree_sql::{ExecuteResult, Params, Session};
use rowtree_types::{Code, Value};

const LIMIT: usize = 2 << 20;

/// 20,000 rows of ~200 bytes in `T` (4 MB, twice the limit), an empty `U`
/// of the same shape, and a session drawing from a pool of its own.
fn setup() -> (Database, Session, Arc<MemoryPool>) {
    limits::set_query_memory(LIMIT);
    let db = Database::in_memory_with(rowtree_sql::database_options());
    let pool = MemoryPool::new(1 << 30);
    let mut s = Session::with_memory_pool(db.clone(), pool.clone());
    for t in ["T", "U"] {
        run(
            &mut s,
            &format!(
                "CREATE TABLE {t} (Id INT64 NOT NULL, G INT64, Pad STRING(MAX)) PRIMARY KEY (Id)"
            ),
        );
    }
    for chunk in 0..20 {
        let rows = (chunk * 1000..(chunk + 1) * 1000)
            .map(|id| {
                vec![
                    Value::Int64(id),
                    Value::Int64(id % 7),
                    Value::String("x".repeat(200)),
                ]
            })
            .collect();
        db.write(vec![Mutation::insert("T", &["Id", "G", "Pad"], rows)])
            .expect("load");
    }
    (db, s, pool)
}

/// Asserts the data is as loaded: nothing a failed statement did remains.
fn untouched(s: &mut Session) {
    assert_eq!(int(s, "SELECT COUNT(*) FROM T"), 20_000);
    assert_eq!(int(s, "SELECT COUNT(*) FROM U"), 0);
    assert_eq!(
        int(s, "SELECT COUNT(*) FROM T WHERE Pad != REPEAT('x', 200)"),
        0
    );
    assert_eq!(int(s, "SELECT COUNT(*) FROM T WHERE G != MOD(Id, 7)"), 0);
}

fn exhausted(s: &mut Session, sql: &str, what: &str) {
    let err = s.execute(sql, &Params::new()).expect_err(sql);
    assert_eq!(err.code, Code::ResourceExhausted, "{sql}: {}", err.message);
    assert!(
        err.message.contains("memory limit of 2 MiB")
            && err.message.contains(&format!("buffer rows for {what}")),
        "{sql}: {}",
        err.message
    );
}

#[test]
fn dml_over_the_limit_fails_naming_it_and_changes_nothing() {
    let (_db, mut s, pool) = setup();
    for (sql, what) in [
        // The new values of every row: keys and 200-byte strings.
        (
            "UPDATE T SET Pad = CONCAT(Pad, 'y') WHERE TRUE",
            "an UPDATE",
        ),
        // The keys of a DELETE are small, but THEN RETURN keeps the rows.
        ("DELETE FROM T WHERE TRUE THEN RETURN Id, Pad", "a DELETE"),
        (
            "INSERT INTO U (Id, G, Pad) SELECT Id, G, Pad FROM T",
            "an INSERT",
        ),
        // The values written are small; the rows THEN RETURN reads are not.
        (
            "UPDATE T SET G = G + 1 WHERE TRUE THEN RETURN Pad",
            "an UPDATE",
        ),
    ] {
        exhausted(&mut s, sql, what);
        assert_eq!(pool.reserved(), 0, "{sql}: memory given back");
        untouched(&mut s);
    }
    // The session goes on, and DML that fits runs.
    match run(&mut s, "UPDATE T SET G = -1 WHERE Id < 10") {
        ExecuteResult::Dml { row_count, .. } => assert_eq!(row_count, 10),
        other => panic!("{other:?}"),
    }
    // Deleting every row holds only the keys: it fits.
    match run(&mut s, "DELETE FROM T WHERE TRUE") {
        ExecuteResult::Dml { row_count, .. } => assert_eq!(row_count, 20_000),
        other => panic!("{other:?}"),
    }
    assert_eq!(int(&mut s, "SELECT COUNT(*) FROM T"), 0);
    assert_eq!(pool.reserved(), 0);
}

#[test]
fn a_refused_statement_leaves_its_transaction_as_it_was() {
    let (_db, mut s, pool) = setup();
    run(&mut s, "BEGIN");
    run(&mut s, "UPDATE T SET G = -1 WHERE Id = 5");
    exhausted(
        &mut s,
        "UPDATE T SET Pad = CONCAT(Pad, 'y') WHERE TRUE",
        "an UPDATE",
    );
    exhausted(
        &mut s,
        "INSERT INTO U (Id, G, Pad) SELECT Id, G, Pad FROM T",
        "an INSERT",
    );
    // These fail after their writes were applied, in THEN RETURN: the
    // writes are undone.
    exhausted(
        &mut s,
        "UPDATE T SET G = G + 1 WHERE TRUE THEN RETURN Pad",
        "an UPDATE",
    );
    let err = s
        .execute(
            "UPDATE T SET G = 0 WHERE Id = 8 THEN RETURN DIV(1, G)",
            &Params::new(),
        )
        .expect_err("division by zero");
    assert!(err.message.contains("zero"), "{}", err.message);
    run(&mut s, "COMMIT");
    assert_eq!(pool.reserved(), 0);
    assert_eq!(int(&mut s, "SELECT G FROM T WHERE Id = 5"), -1);
    assert_eq!(int(&mut s, "SELECT G FROM T WHERE Id = 8"), 1);
    assert_eq!(
        int(&mut s, "SELECT COUNT(*) FROM T WHERE G != MOD(Id, 7)"),
        1
    );
    assert_eq!(
        int(&mut s, "SELECT COUNT(*) FROM T WHERE ENDS_WITH(Pad, 'y')"),
        0
    );
    assert_eq!(int(&mut s, "SELECT COUNT(*) FROM U"), 0);
}

#[test]
fn partitioned_dml_changes_a_table_larger_than_the_limit() {
    let (db, mut s, pool) = setup();
    let params = Params::new();
    // The statement that fails whole succeeds a partition at a time.
    let sql = "UPDATE T SET Pad = CONCAT(Pad, 'y') WHERE TRUE";
    exhausted(&mut s, sql, "an UPDATE");
    let changed =
        rowtree_sql::execute_partitioned_dml(&db, sql, &params, &pool).expect("partitioned");
    assert_eq!(changed, 20_000);
    assert_eq!(pool.reserved(), 0);
    // Every row was changed exactly once.
    assert_eq!(
        int(
            &mut s,
            "SELECT COUNT(*) FROM T WHERE Pad = CONCAT(REPEAT('x', 200), 'y')"
        ),
        20_000
    );
    let deleted = rowtree_sql::execute_partitioned_dml(
        &db,
        "DELETE FROM T WHERE MOD(Id, 2) = 0",
        &params,
        &pool,
    )
    .expect("partitioned delete");
    assert_eq!(deleted, 10_000);
    assert_eq!(int(&mut s, "SELECT COUNT(*) FROM T"), 10_000);
    assert_eq!(
        int(&mut s, "SELECT COUNT(*) FROM T WHERE MOD(Id, 2) = 0"),
        0
    );
    // THEN RETURN is refused before anything runs.
    let err = rowtree_sql::execute_partitioned_dml(
        &db,
        "DELETE FROM T WHERE TRUE THEN RETURN Id",
        &params,
        &pool,
    )
    .expect_err("then return");
    assert_eq!(err.code, Code::InvalidArgument);
    assert_eq!(int(&mut s, "SELECT COUNT(*) FROM T"), 10_000);
    assert_eq!(pool.reserved(), 0);
}
