//! Partitioned DML. A partitioned DML transaction holds nothing between
//! statements: each statement runs as partitioned DML
//! ([`rowtree_sql::partitioned`]): an UPDATE or DELETE one partition of the
//! table's keys at a time, each partition in a read-write transaction of
//! its own that commits (retried while aborted), so the statement works on
//! a table larger than a commit's mutation limit or a query's memory.

use rowtree_db::Database;
use tonic::Status;

use crate::status;

/// Partitioned DML: runs the statement partition by partition; the row
/// count is a lower bound, as Spanner reports it. What it buffers draws
/// from the server's memory pool.
pub(super) fn run_partitioned_dml(
    db: &Database,
    sql: &str,
    params: &rowtree_sql::Params,
) -> Result<u64, Status> {
    rowtree_sql::execute_partitioned_dml(db, sql, params, rowtree_sql::limits::server_memory_pool())
        .map_err(status::from_sql)
}
