//! Partitioned DML: an UPDATE or DELETE over a table of any size.
//!
//! A transaction may write at most [`MAX_MUTATIONS`] mutations, and a
//! statement may hold at most its memory limit ([`crate::limits`]), so an
//! ordinary `DELETE FROM Big WHERE TRUE` fails on a table big enough.
//! Partitioned DML gives up atomicity to lift both: the statement runs as a
//! series of read-write transactions, one per partition of the table's
//! primary keys, each committed before the next begins.
//!
//! A partition is found while it runs rather than planned ahead: it starts
//! after the last key the previous one took (the scan resumes there, see
//! `rowtree_db::ScanRequest::after`, so nothing before it is read again)
//! and takes rows in key order until it holds [`PARTITION_MUTATIONS`]
//! mutations or a quarter of the query's memory limit
//! ([`crate::limits::query_memory`]). So no partition holds more than a
//! bounded share of the table, whatever the table's size, and the next
//! partition starts exactly where this one stopped: every row is changed
//! once, including by an UPDATE whose rows still match its WHERE after the
//! change. A partition aborted by a conflict is retried alone.
//!
//! As in Spanner, the statement is not atomic: a failure leaves the
//! partitions before it committed, and the row count counts the rows the
//! committed partitions changed. THEN RETURN is refused. Any other
//! statement (an INSERT) runs whole in one transaction, within the
//! ordinary limits.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rowtree_db::write::MAX_MUTATIONS;
use rowtree_db::{Database, ReadWriteTransaction};
use rowtree_parser::ast::{Statement, StatementKind};

use crate::dml::Partition;
use crate::error::{Error, Result};
use crate::limits::MemoryPool;
use crate::{ExecuteResult, Params, QueryMode, SqlError, TxnRef};

/// The most mutations one partition writes: a quarter of the per-commit
/// limit, so a partition's cascades and index writes stay well within it.
pub const PARTITION_MUTATIONS: usize = MAX_MUTATIONS / 4;

/// How long a partition is retried while conflicts abort it.
const RETRY_FOR: Duration = Duration::from_secs(600);

/// Runs `sql`, an UPDATE or DELETE, as partitioned DML on `db` (see the
/// module documentation); what it buffers draws from `pool`. Returns the
/// rows changed.
pub fn execute_partitioned_dml(
    db: &Database,
    sql: &str,
    params: &Params,
    pool: &Arc<MemoryPool>,
) -> std::result::Result<u64, SqlError> {
    crate::limits::check_statement(sql, params).map_err(|e| e.render(sql))?;
    let stmt = rowtree_parser::parse_statement_in(db.dialect(), sql)
        .map_err(|e| Error::from(e).render_with_snippet(sql))?;
    run(db, &stmt, params, pool).map_err(|e| e.render_with_snippet(sql))
}

fn run(db: &Database, stmt: &Statement, params: &Params, pool: &Arc<MemoryPool>) -> Result<u64> {
    let kind = &stmt.kind;
    let returning = match kind {
        StatementKind::Update(up) => up.returning.is_some(),
        StatementKind::Delete(del) => del.returning.is_some(),
        _ => return whole(db, stmt, params, pool),
    };
    if returning {
        return Err(Error::invalid(THEN_RETURN));
    }
    let mut partition = Partition {
        after: None,
        max_mutations: PARTITION_MUTATIONS,
        max_bytes: crate::limits::query_memory() / 4,
        next: None,
    };
    let mut changed = 0;
    loop {
        changed += run_partition(db, kind, params, pool, &mut partition)?;
        match partition.next.take() {
            Some(key) => partition.after = Some(key),
            None => return Ok(changed),
        }
    }
}

const THEN_RETURN: &str = "THEN RETURN is not supported in partitioned DML";

/// Runs a statement that is not partitioned in one transaction of its own
/// and commits it, retrying while aborted.
fn whole(db: &Database, stmt: &Statement, params: &Params, pool: &Arc<MemoryPool>) -> Result<u64> {
    retry(|| {
        let mut txn = db.begin();
        let executed = crate::session::execute_parsed(
            TxnRef::ReadWrite(&mut txn),
            stmt,
            params,
            QueryMode::Normal,
            None,
            pool,
            None,
        );
        let count = executed.and_then(|e| match e.result {
            ExecuteResult::Dml {
                row_count,
                returning: None,
            } => Ok(row_count),
            ExecuteResult::Dml { .. } => Err(Error::invalid(THEN_RETURN)),
            _ => Err(Error::invalid(
                "Partitioned DML runs UPDATE and DELETE statements only",
            )),
        });
        finish(txn, count)
    })
}

/// Commits `txn` if `outcome` is a success, else rolls it back.
fn finish(txn: ReadWriteTransaction, outcome: Result<u64>) -> Result<u64> {
    match outcome {
        Ok(count) => txn.commit().map(|_| count).map_err(Error::from),
        Err(e) => {
            txn.rollback();
            Err(e)
        }
    }
}

/// Runs `attempt` until it succeeds, fails other than aborted, or has been
/// retried for [`RETRY_FOR`].
fn retry(mut attempt: impl FnMut() -> Result<u64>) -> Result<u64> {
    let deadline = Instant::now() + RETRY_FOR;
    let mut backoff = Duration::from_millis(1);
    loop {
        match attempt() {
            Err(e) if e.is_retryable() && Instant::now() < deadline => {
                std::thread::sleep(backoff);
                backoff = (backoff * 2).min(Duration::from_millis(100));
            }
            other => return other,
        }
    }
}

/// Runs and commits one partition, retrying it while aborted.
fn run_partition(
    db: &Database,
    kind: &StatementKind,
    params: &Params,
    pool: &Arc<MemoryPool>,
    partition: &mut Partition,
) -> Result<u64> {
    retry(|| {
        let mut txn = db.begin();
        let count = crate::dml::execute_partition(&mut txn, kind, params, pool, partition);
        finish(txn, count)
    })
}
