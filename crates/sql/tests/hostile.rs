//! Hostile statements: every shape that nests deeply, at the deepest the
//! parser allows (which must run to the end: parse, bind, plan, execute,
//! EXPLAIN, drop) and beyond it (a clear INVALID_ARGUMENT with the
//! position, in well under a second). Each runs on the test's own thread,
//! whose 2 MiB stack is smaller than any a server request gets, in an
//! unoptimised build, whose frames are the largest.

use std::time::{Duration, Instant};

use rowtree_db::Database;
use rowtree_parser::MAX_NESTING;
use rowtree_sql::{ExecuteResult, Params, Session, SqlError};
use rowtree_types::Value;

fn session() -> Session {
    let mut s = Session::new(Database::in_memory_with(rowtree_sql::database_options()));
    for sql in [
        "CREATE TABLE T (Id INT64 NOT NULL, A ARRAY<INT64>, J JSON) PRIMARY KEY (Id)",
        "INSERT INTO T (Id, A, J) VALUES (1, [1, 2], JSON '{\"a\": 1}'), (2, [3], NULL)",
    ] {
        s.execute(sql, &Params::new())
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    s
}

/// Runs `sql`; the error if it fails, after checking it came quickly.
fn run(s: &mut Session, sql: &str) -> Result<ExecuteResult, SqlError> {
    let started = Instant::now();
    let result = s.execute(sql, &Params::new());
    if result.is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "slow error: {:?}",
            started.elapsed()
        );
    }
    result
}

fn too_deep(s: &mut Session, sql: &str) {
    let err = run(s, sql).expect_err("nested too deeply");
    assert_eq!(
        err.code,
        rowtree_types::Code::InvalidArgument,
        "{}",
        err.message
    );
    assert!(
        err.message
            .starts_with("Out of stack space due to deeply nested query expression")
            && err.message.contains("[at 1:"),
        "{}",
        err.message
    );
}

/// The single value of a one-row, one-column query.
fn scalar(s: &mut Session, sql: &str) -> Value {
    match run(s, sql).unwrap_or_else(|e| panic!("{}: {e}", &sql[..80.min(sql.len())])) {
        ExecuteResult::Query(q) => {
            assert_eq!(q.rows.len(), 1, "{}", &sql[..80.min(sql.len())]);
            q.rows[0][0].clone()
        }
        other => panic!("not a query: {other:?}"),
    }
}

/// `open` x n, `middle`, `close` x n.
fn wrap(open: &str, middle: &str, close: &str, n: usize) -> String {
    format!("{}{middle}{}", open.repeat(n), close.repeat(n))
}

/// Deep enough to reach the limit once the statement's own few levels are
/// counted, but still under it.
const DEEP: usize = MAX_NESTING - 20;

#[test]
fn parentheses() {
    let mut s = session();
    assert_eq!(
        scalar(&mut s, &format!("SELECT {}", wrap("(", "1", ")", DEEP))),
        Value::Int64(1)
    );
    too_deep(&mut s, &format!("SELECT {}", wrap("(", "1", ")", 2_000)));
}

#[test]
fn operator_chains() {
    let mut s = session();
    let n = DEEP;
    assert_eq!(
        scalar(&mut s, &format!("SELECT 1{}", "+1".repeat(n - 1))),
        Value::Int64(n as i64)
    );
    assert_eq!(
        scalar(
            &mut s,
            &format!(
                "SELECT Id = 0{} FROM T WHERE Id = 1",
                " OR Id = 1".repeat(n - 1)
            )
        ),
        Value::Bool(true)
    );
    too_deep(&mut s, &format!("SELECT 1{}", "+1".repeat(100_000)));
    too_deep(
        &mut s,
        &format!("SELECT TRUE{}", " AND TRUE".repeat(50_000)),
    );
}

#[test]
fn prefix_operators() {
    let mut s = session();
    assert_eq!(
        scalar(&mut s, &format!("SELECT {}TRUE", "NOT ".repeat(DEEP - 1))),
        Value::Bool(false)
    );
    assert_eq!(
        scalar(&mut s, &format!("SELECT {}1", "- ".repeat(DEEP - 1))),
        Value::Int64(-1)
    );
    too_deep(&mut s, &format!("SELECT {}TRUE", "NOT ".repeat(50_000)));
}

#[test]
fn function_calls_and_constructors() {
    let mut s = session();
    assert_eq!(
        scalar(&mut s, &format!("SELECT {}", wrap("ABS(", "-1", ")", DEEP))),
        Value::Int64(1)
    );
    assert_eq!(
        scalar(
            &mut s,
            &format!("SELECT {}", wrap("COALESCE(NULL, ", "7", ")", DEEP))
        ),
        Value::Int64(7)
    );
    assert_eq!(
        scalar(
            &mut s,
            &format!("SELECT {}", wrap("IF(TRUE, ", "2", ", 0)", DEEP))
        ),
        Value::Int64(2)
    );
    assert_eq!(
        scalar(
            &mut s,
            &format!("SELECT {} IS NOT NULL", wrap("STRUCT(", "1", ")", DEEP / 2))
        ),
        Value::Bool(true)
    );
    assert_eq!(
        scalar(
            &mut s,
            &format!("SELECT {}", wrap("CASE WHEN TRUE THEN ", "3", " END", DEEP))
        ),
        Value::Int64(3)
    );
    too_deep(&mut s, &format!("SELECT {}", wrap("ABS(", "1", ")", 5_000)));
    too_deep(&mut s, &format!("SELECT {}", wrap("[", "1", "]", 5_000)));
}

#[test]
fn subqueries() {
    let mut s = session();
    assert_eq!(
        scalar(
            &mut s,
            &format!("SELECT {}", wrap("(SELECT ", "1", ")", DEEP / 2))
        ),
        Value::Int64(1)
    );
    assert_eq!(
        scalar(
            &mut s,
            &format!(
                "SELECT COUNT(*) FROM {} AS x",
                wrap("(SELECT * FROM ", "T", ")", DEEP / 2)
            )
        ),
        Value::Int64(2)
    );
    assert_eq!(
        scalar(
            &mut s,
            &format!(
                "SELECT 1 FROM T WHERE Id = 1 AND {}",
                wrap("EXISTS(SELECT ", "1", ")", DEEP / 2)
            )
        ),
        Value::Int64(1)
    );
    too_deep(
        &mut s,
        &format!("SELECT {}", wrap("(SELECT ", "1", ")", 5_000)),
    );
    too_deep(
        &mut s,
        &format!("SELECT * FROM {}", wrap("(SELECT * FROM ", "T", ")", 5_000)),
    );
}

#[test]
fn set_operations_and_joins() {
    let mut s = session();
    let n = DEEP / 2;
    assert_eq!(
        scalar(
            &mut s,
            &format!(
                "SELECT COUNT(*) FROM (SELECT 1 AS x{})",
                " UNION ALL SELECT 1".repeat(n)
            )
        ),
        Value::Int64(n as i64 + 1)
    );
    assert_eq!(
        scalar(
            &mut s,
            &format!(
                "SELECT COUNT(*) FROM T AS t0{} WHERE t0.Id = 1",
                (1..n / 4)
                    .map(|i| format!(" JOIN T AS t{i} ON t{i}.Id = t0.Id"))
                    .collect::<String>()
            )
        ),
        Value::Int64(1)
    );
    too_deep(
        &mut s,
        &format!("SELECT 1{}", " UNION ALL SELECT 1".repeat(5_000)),
    );
    too_deep(
        &mut s,
        &format!("SELECT 1 FROM T{}", " CROSS JOIN T AS u".repeat(5_000)),
    );
}

#[test]
fn explain_and_dml() {
    let mut s = session();
    let deep = format!("1{}", "+1".repeat(DEEP - 10));
    match run(&mut s, &format!("EXPLAIN SELECT {deep}")) {
        Ok(ExecuteResult::Query(q)) => assert!(!q.rows.is_empty()),
        other => panic!("{other:?}"),
    }
    run(&mut s, &format!("UPDATE T SET A = [{deep}] WHERE Id = 2")).expect("update");
    assert_eq!(
        scalar(&mut s, "SELECT A[OFFSET(0)] FROM T WHERE Id = 2"),
        Value::Int64(DEEP as i64 - 9)
    );
    too_deep(
        &mut s,
        &format!("UPDATE T SET A = [1{}] WHERE TRUE", "+1".repeat(100_000)),
    );
}

#[test]
fn the_session_goes_on() {
    let mut s = session();
    too_deep(&mut s, &format!("SELECT {}", wrap("(", "1", ")", 100_000)));
    assert_eq!(scalar(&mut s, "SELECT COUNT(*) FROM T"), Value::Int64(2));
}
