//! Batched lookups at scale: a 200,000-element `@ids` against a table of
//! 12,000 rows. `Id IN UNNEST(@ids)` on the key must be a key-set read
//! (each distinct id looked up once, nothing else read), and on a non-key
//! column a single pass over the table with the ids in a hash set. The
//! plan shape and the keys read are asserted, not the time (that is in
//! the `in_unnest` benchmark of `crates/bench`).

use std::collections::BTreeSet;

use rowtree_db::Database;
use rowtree_sql::{ExecuteResult, Params, QueryResult, Session};
use rowtree_types::{Type, Value};

const ROWS: i64 = 12_000;
const IDS: usize = 200_000;

fn session() -> Session {
    let db = Database::in_memory_with(rowtree_sql::database_options());
    let mut s = Session::new(db);
    query(
        &mut s,
        "CREATE TABLE T (Id INT64 NOT NULL, Val INT64) PRIMARY KEY (Id)",
        &Params::new(),
    );
    for chunk in 0..ROWS / 1000 {
        let rows: Vec<String> = (0..1000)
            .map(|i| {
                let id = chunk * 1000 + i;
                format!("({id}, {})", id * 3)
            })
            .collect();
        query(
            &mut s,
            &format!("INSERT INTO T (Id, Val) VALUES {}", rows.join(", ")),
            &Params::new(),
        );
    }
    s
}

fn query(s: &mut Session, sql: &str, params: &Params) -> Option<QueryResult> {
    match s.execute(sql, params) {
        Ok(ExecuteResult::Query(q)) => Some(q),
        Ok(_) => None,
        Err(e) => panic!("{sql}: {e}"),
    }
}

/// 200,000 ids, many repeated, some NULL, most beyond the table's keys:
/// `(i * 7919) % 40,000` for most, NULL for every 1,000th.
fn ids() -> (Params, BTreeSet<i64>) {
    let mut distinct = BTreeSet::new();
    let values: Vec<Value> = (0..IDS as i64)
        .map(|i| {
            if i % 1000 == 999 {
                return Value::Null;
            }
            let v = (i * 7919) % 40_000;
            distinct.insert(v);
            Value::Int64(v)
        })
        .collect();
    let params = Params::from([(
        "ids".to_string(),
        (Type::Array(Box::new(Type::Int64)), Value::Array(values)),
    )]);
    (params, distinct)
}

fn explain(s: &mut Session, sql: &str, params: &Params) -> String {
    let q = query(s, &format!("EXPLAIN {sql}"), params).expect("EXPLAIN rows");
    q.rows
        .iter()
        .map(|r| match &r[0] {
            Value::String(l) => l.clone(),
            other => panic!("{other:?}"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_large_id_array_on_the_key_reads_each_id_once() {
    let mut s = session();
    let (params, distinct) = ids();
    let sql = "SELECT Id, Val FROM T WHERE Id IN UNNEST(@ids)";
    let plan = explain(&mut s, sql, &params);
    assert_eq!(
        plan,
        "Project: Id, Val\n  TableScan T: key set from UNNEST(@ids)"
    );
    let q = query(&mut s, sql, &params).expect("rows");
    let want: Vec<Vec<Value>> = distinct
        .iter()
        .filter(|&&id| id < ROWS)
        .map(|&id| vec![Value::Int64(id), Value::Int64(id * 3)])
        .collect();
    assert_eq!(q.rows.len(), want.len());
    // Key order, each row once.
    assert_eq!(q.rows, want);
    // Only the keys that exist are read: no scan of the table.
    assert_eq!(q.stats.rows_scanned, want.len() as u64);
}

#[test]
fn a_large_id_array_on_a_value_column_scans_the_table_once() {
    let mut s = session();
    let (params, distinct) = ids();
    let sql = "SELECT COUNT(*) FROM T WHERE Val IN UNNEST(@ids)";
    let plan = explain(&mut s, sql, &params);
    assert!(
        plan.contains("TableScan T: full scan, filter: Val IN UNNEST(@ids)"),
        "{plan}"
    );
    let q = query(&mut s, sql, &params).expect("rows");
    let want = (0..ROWS).filter(|id| distinct.contains(&(id * 3))).count();
    assert_eq!(q.rows, vec![vec![Value::Int64(want as i64)]]);
    assert_eq!(q.stats.rows_scanned, ROWS as u64);
}
