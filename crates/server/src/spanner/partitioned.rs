//! Partitioned DML. A partitioned DML transaction holds nothing between
//! statements: each statement runs alone in a read-write transaction of its
//! own and commits. Spanner cuts such a statement by key range and runs the
//! pieces independently; Rowtree runs it whole, retrying while aborted.

use std::time::{Duration, Instant};

use rowtree_db::Database;
use rowtree_sql::{ExecuteResult, QueryMode, TxnRef};
use tonic::Status;

use crate::status;

/// Partitioned DML: the statement runs in a read-write transaction of its
/// own, retried while aborted, and commits; the row count is a lower bound,
/// as Spanner reports it.
pub(super) fn run_partitioned_dml(
    db: &Database,
    sql: &str,
    params: &rowtree_sql::Params,
) -> Result<u64, Status> {
    let mut backoff = Duration::from_millis(1);
    let deadline = Instant::now() + Duration::from_secs(600);
    loop {
        let mut txn = db.begin();
        let r = rowtree_sql::execute_in(
            TxnRef::ReadWrite(&mut txn),
            sql,
            params,
            QueryMode::Normal,
            None,
        )
        .map_err(status::from_sql)
        .and_then(|e| match e.result {
            ExecuteResult::Dml {
                row_count,
                returning: None,
            } => Ok(row_count),
            ExecuteResult::Dml { .. } => Err(Status::invalid_argument(
                "THEN RETURN is not supported in partitioned DML",
            )),
            _ => Err(Status::invalid_argument(
                "Partitioned DML runs UPDATE and DELETE statements only",
            )),
        });
        let r = r.and_then(|count| txn.commit().map(|_| count).map_err(status::from_db));
        match r {
            Err(e) if e.code() == tonic::Code::Aborted && Instant::now() < deadline => {
                std::thread::sleep(backoff);
                backoff = (backoff * 2).min(Duration::from_millis(100));
            }
            other => return other,
        }
    }
}
