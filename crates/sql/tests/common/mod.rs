//! Helpers the DML memory and limit tests share: run a statement that must
//! succeed, and read one INT64 from a query.

use rowtree_sql::{ExecuteResult, Params, Session};
use rowtree_types::{Type, Value};

/// Runs `sql`, which must succeed.
pub fn run(s: &mut Session, sql: &str) -> ExecuteResult {
    s.execute(sql, &Params::new())
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// The INT64 in the first column of the first row `sql` returns.
pub fn int(s: &mut Session, sql: &str) -> i64 {
    let mut out = None;
    let mut sink = |_: &[(String, Type)], row: Vec<Value>| {
        out = Some(row[0].clone());
        false
    };
    s.execute_streaming(sql, &Params::new(), &mut sink)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    match out {
        Some(Value::Int64(n)) => n,
        other => panic!("{sql}: {other:?}"),
    }
}
