//! DML against the per-commit mutation limit (80,000): a statement that
//! would cross it fails at the row that crosses it, before reading the rest
//! of its rows, counting what the transaction's earlier DML applied; and
//! partitioned DML changes a table whose change would not fit one commit.
//!
//! The per-query memory limit stays at its default here (each session has
//! a pool of its own), so only the mutation limit is in play.

mod common;

use std::sync::Arc;

use common::{int, run};

use rowtree_db::{Database, Mutation};
use rowtree_sql::limits::MemoryPool;
use rowtree_sql::{Params, Session};
use rowtree_types::{Code, Value};

const ROWS: i64 = 45_000;

/// `W` holds 45,000 rows (K, V = 0): an UPDATE of V writes two mutations
/// a row, 90,000 in all, over the limit; `W2` is empty.
fn setup() -> (Database, Session, Arc<MemoryPool>) {
    let db = Database::in_memory_with(rowtree_sql::database_options());
    let pool = MemoryPool::new(1 << 30);
    let mut s = Session::with_memory_pool(db.clone(), pool.clone());
    for t in ["W", "W2"] {
        run(
            &mut s,
            &format!("CREATE TABLE {t} (K INT64 NOT NULL, V INT64) PRIMARY KEY (K)"),
        );
    }
    for start in (0..ROWS).step_by(10_000) {
        let rows = (start..(start + 10_000).min(ROWS))
            .map(|k| vec![Value::Int64(k), Value::Int64(0)])
            .collect();
        db.write(vec![Mutation::insert("W", &["K", "V"], rows)])
            .expect("load");
    }
    (db, s, pool)
}

fn too_many(s: &mut Session, sql: &str) {
    let err = s.execute(sql, &Params::new()).expect_err(sql);
    assert_eq!(err.code, Code::InvalidArgument, "{sql}: {}", err.message);
    assert!(
        err.message
            .starts_with("The transaction contains too many mutations")
            && err.message.contains("the limit is 80000"),
        "{sql}: {}",
        err.message
    );
}

#[test]
fn dml_over_the_mutation_limit_fails_before_reading_everything() {
    let (_db, mut s, pool) = setup();
    // Row K = 44,000 divides by zero if it is ever read; the limit is
    // crossed at the 40,001st row (K = 40,000), so the statement must stop
    // there and say so, not read on into the division.
    too_many(&mut s, "UPDATE W SET V = DIV(1, K - 44000) WHERE TRUE");
    too_many(
        &mut s,
        "INSERT INTO W2 (K, V) SELECT K, DIV(1, K - 44000) FROM W",
    );
    // Below the limit the division is reached, which shows it is there.
    let err = s
        .execute(
            "UPDATE W SET V = DIV(1, K - 44000) WHERE K > 40000",
            &Params::new(),
        )
        .expect_err("division");
    assert!(err.message.contains("zero"), "{}", err.message);
    assert_eq!(pool.reserved(), 0);
    assert_eq!(int(&mut s, "SELECT COUNT(*) FROM W WHERE V != 0"), 0);
    assert_eq!(int(&mut s, "SELECT COUNT(*) FROM W2"), 0);
}

#[test]
fn the_limit_counts_the_transactions_earlier_dml() {
    let (_db, mut s, pool) = setup();
    run(&mut s, "BEGIN");
    // 30,000 rows, 60,000 mutations: fits.
    run(&mut s, "UPDATE W SET V = 1 WHERE K < 30000");
    // 15,000 more rows would make 90,000.
    too_many(&mut s, "UPDATE W SET V = 2 WHERE K >= 30000");
    // The transaction is as it was before the refused statement.
    run(&mut s, "COMMIT");
    assert_eq!(int(&mut s, "SELECT COUNT(*) FROM W WHERE V = 1"), 30_000);
    assert_eq!(int(&mut s, "SELECT COUNT(*) FROM W WHERE V = 2"), 0);
    assert_eq!(pool.reserved(), 0);
}

#[test]
fn partitioned_dml_changes_more_than_one_commit_may() {
    let (db, mut s, pool) = setup();
    let sql = "UPDATE W SET V = V + 1 WHERE TRUE";
    too_many(&mut s, sql);
    let changed =
        rowtree_sql::execute_partitioned_dml(&db, sql, &Params::new(), &pool).expect("partitioned");
    assert_eq!(changed, ROWS as u64);
    // Each row once, though every row still matches after its change.
    assert_eq!(int(&mut s, "SELECT COUNT(*) FROM W WHERE V = 1"), ROWS);
    // An INSERT is not partitioned: it runs whole, within the limits.
    let inserted = rowtree_sql::execute_partitioned_dml(
        &db,
        "INSERT INTO W2 (K, V) SELECT K, V FROM W WHERE K < 100",
        &Params::new(),
        &pool,
    )
    .expect("insert");
    assert_eq!(inserted, 100);
    assert_eq!(pool.reserved(), 0);
}
