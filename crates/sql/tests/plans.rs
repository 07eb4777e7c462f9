//! Plan tests: for representative queries, the chosen key ranges, index,
//! direction, limit and join method, asserted on `EXPLAIN` text, plus the
//! results and rows-read counters that show the plan paid off.

use rowtree_db::Database;
use rowtree_sql::{ExecuteResult, Params, QueryResult, Session};
use rowtree_types::Value;

fn session() -> Session {
    let db = Database::in_memory();
    let mut s = Session::new(db);
    for ddl in [
        "CREATE TABLE Users (UserId INT64 NOT NULL, Name STRING(MAX), Email STRING(MAX), Age INT64) PRIMARY KEY (UserId)",
        "CREATE TABLE Events (UserId INT64 NOT NULL, Ts INT64 NOT NULL, Kind STRING(MAX)) PRIMARY KEY (UserId, Ts DESC), INTERLEAVE IN PARENT Users ON DELETE CASCADE",
        "CREATE INDEX UsersByName ON Users (Name) STORING (Email)",
        "CREATE NULL_FILTERED INDEX UsersByAge ON Users (Age)",
        "CREATE TABLE Orders (OrderId INT64 NOT NULL, UserId INT64, Total FLOAT64) PRIMARY KEY (OrderId)",
    ] {
        s.execute(ddl, &Params::new()).unwrap_or_else(|e| panic!("{ddl}: {e}"));
    }
    run(&mut s, "INSERT INTO Users (UserId, Name, Email, Age) VALUES (1, 'ann', 'a@x', 30), (2, 'bob', 'b@x', NULL), (3, 'cy', NULL, 41)");
    let mut values = Vec::new();
    for u in 1..=3 {
        for t in 1..=if u == 2 { 300 } else { 50 } {
            values.push(format!("({u}, {t}, 'k{}')", t % 3));
        }
    }
    run(
        &mut s,
        &format!(
            "INSERT INTO Events (UserId, Ts, Kind) VALUES {}",
            values.join(", ")
        ),
    );
    run(&mut s, "INSERT INTO Orders (OrderId, UserId, Total) VALUES (10, 1, 5.0), (11, 1, 7.5), (12, 3, 1.0), (13, NULL, 2.0)");
    s
}

fn run(s: &mut Session, sql: &str) -> ExecuteResult {
    s.execute(sql, &Params::new())
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

fn query(s: &mut Session, sql: &str) -> QueryResult {
    match run(s, sql) {
        ExecuteResult::Query(q) => q,
        other => panic!("{sql}: not a query result: {other:?}"),
    }
}

fn explain(s: &mut Session, sql: &str) -> String {
    let q = query(s, &format!("EXPLAIN {sql}"));
    q.rows
        .iter()
        .map(|r| match &r[0] {
            Value::String(l) => l.clone(),
            other => panic!("{other:?}"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn ints(q: &QueryResult) -> Vec<Vec<i64>> {
    q.rows
        .iter()
        .map(|r| {
            r.iter()
                .map(|v| match v {
                    Value::Int64(i) => *i,
                    Value::Null => -1,
                    other => panic!("{other:?}"),
                })
                .collect()
        })
        .collect()
}

#[test]
fn point_lookup_by_primary_key() {
    let mut s = session();
    let plan = explain(&mut s, "SELECT Name FROM Users WHERE UserId = 2");
    assert!(plan.contains("TableScan Users: key (2)"), "{plan}");
    assert!(!plan.contains("Filter"), "{plan}");
    let q = query(&mut s, "SELECT Name FROM Users WHERE UserId = 2");
    assert_eq!(q.rows, vec![vec![Value::String("bob".into())]]);
}

#[test]
fn in_list_becomes_point_lookups() {
    let mut s = session();
    let plan = explain(&mut s, "SELECT UserId FROM Users WHERE UserId IN (3, 1, 9)");
    assert!(plan.contains("key (1), key (3), key (9)"), "{plan}");
    let q = query(
        &mut s,
        "SELECT UserId FROM Users WHERE UserId IN (3, 1, 9) ORDER BY UserId",
    );
    assert_eq!(ints(&q), vec![vec![1], vec![3]]);
}

#[test]
fn latest_events_read_in_key_order_with_early_limit() {
    let mut s = session();
    let sql = "SELECT Ts FROM Events WHERE UserId = 2 ORDER BY Ts DESC LIMIT 10";
    let plan = explain(&mut s, sql);
    assert!(
        plan.contains("TableScan Events: prefix (2), limit 10"),
        "{plan}"
    );
    assert!(!plan.contains("Sort"), "{plan}");
    let q = query(&mut s, sql);
    assert_eq!(
        ints(&q),
        (291..=300).rev().map(|t| vec![t]).collect::<Vec<_>>()
    );
    // The scan stops early: it reads (at most) its first chunk, not all 301 keys of the row tree.
    assert!(
        q.stats.rows_scanned < 100,
        "read {} rows",
        q.stats.rows_scanned
    );
    // Ascending order on a DESC key: the scan runs backwards.
    let sql = "SELECT Ts FROM Events WHERE UserId = 2 ORDER BY Ts LIMIT 3";
    let plan = explain(&mut s, sql);
    assert!(plan.contains("reverse, limit 3"), "{plan}");
    assert_eq!(ints(&query(&mut s, sql)), vec![vec![1], vec![2], vec![3]]);
}

#[test]
fn range_on_desc_key_column() {
    let mut s = session();
    let sql = "SELECT Ts FROM Events WHERE UserId = 1 AND Ts > 45 AND Ts <= 48";
    let plan = explain(&mut s, sql);
    assert!(plan.contains("range [(1, 48) .. (1, 45))"), "{plan}");
    assert_eq!(
        ints(&query(&mut s, sql)),
        vec![vec![48], vec![47], vec![46]]
    );
}

#[test]
fn covering_index_and_back_join() {
    let mut s = session();
    let plan = explain(&mut s, "SELECT Email FROM Users WHERE Name = 'ann'");
    assert!(
        plan.contains("IndexScan Users@UsersByName (covering): prefix (\"ann\")"),
        "{plan}"
    );
    let plan = explain(&mut s, "SELECT Age FROM Users WHERE Name = 'cy'");
    assert!(plan.contains("back join"), "{plan}");
    let q = query(&mut s, "SELECT Age FROM Users WHERE Name = 'cy'");
    assert_eq!(ints(&q), vec![vec![41]]);
}

#[test]
fn null_filtered_index_only_when_nulls_excluded() {
    let mut s = session();
    let plan = explain(&mut s, "SELECT UserId FROM Users WHERE Age > 35");
    assert!(plan.contains("UsersByAge"), "{plan}");
    let plan = explain(&mut s, "SELECT UserId FROM Users WHERE Age IS NULL");
    assert!(plan.contains("TableScan Users"), "{plan}");
    assert_eq!(
        ints(&query(&mut s, "SELECT UserId FROM Users WHERE Age IS NULL")),
        vec![vec![2]]
    );
}

#[test]
fn force_index_hints() {
    let mut s = session();
    let plan = explain(&mut s, "SELECT Name FROM Users@{FORCE_INDEX=UsersByName}");
    assert!(
        plan.contains("IndexScan Users@UsersByName (covering): full scan"),
        "{plan}"
    );
    let plan = explain(
        &mut s,
        "SELECT Email FROM Users@{FORCE_INDEX=_BASE_TABLE} WHERE Name = 'ann'",
    );
    assert!(
        plan.contains("TableScan Users: full scan, filter: Name = 'ann'"),
        "{plan}"
    );
    let err = s
        .execute("SELECT 1 FROM Users@{FORCE_INDEX=Nope}", &Params::new())
        .unwrap_err();
    assert_eq!(err.code, "INVALID_ARGUMENT");
}

#[test]
fn interleaved_join_merges_row_trees() {
    let mut s = session();
    let sql = "SELECT u.Name, e.Ts FROM Users u JOIN Events e ON e.UserId = u.UserId WHERE u.UserId = 3 ORDER BY e.Ts LIMIT 2";
    let plan = explain(&mut s, sql);
    assert!(plan.contains("InterleavedMergeJoin INNER"), "{plan}");
    assert!(plan.contains("TableScan Users: key (3)"), "{plan}");
    assert!(plan.contains("TableScan Events: prefix (3)"), "{plan}");
    let q = query(&mut s, sql);
    assert_eq!(q.rows.len(), 2);
    assert_eq!(q.rows[0][1], Value::Int64(1));
}

#[test]
fn hash_join_for_root_tables() {
    let mut s = session();
    let sql = "SELECT u.Name, o.Total FROM Users u JOIN Orders o ON o.UserId = u.UserId ORDER BY o.OrderId";
    let plan = explain(&mut s, sql);
    assert!(plan.contains("HashJoin INNER"), "{plan}");
    let q = query(&mut s, sql);
    assert_eq!(q.rows.len(), 3);
    let plan = explain(
        &mut s,
        "SELECT 1 FROM Users u JOIN@{JOIN_METHOD=APPLY_JOIN} Orders o ON o.UserId = u.UserId",
    );
    assert!(plan.contains("NestedLoopJoin INNER"), "{plan}");
}
