//! Commits: Commit and Rollback, which end a transaction, and BatchWrite,
//! which commits groups of mutations each on its own.
//!
//! Ending a held transaction leaves its slot answering FAILED_PRECONDITION
//! to any later use ([`end`]) and drops it from the session. A single-use
//! read-write Commit retries while aborted ([`write`]), and so does each
//! BatchWrite group (through the database's `write`): nothing has reached
//! the client yet.
//!
//! # Commit without a waiting thread
//!
//! Commit runs in the request's own task. The transaction resolves its
//! mutations there without waiting (`try_start_commit`: a lock held by an
//! older transaction or a schema change in progress would need a wait, and
//! then that part, only, moves to a blocking thread), queues its writes in
//! the commit pipeline and *awaits* durability: the pipeline thread wakes
//! the task directly. No thread is parked per commit in flight, and a
//! commit costs no hand-off to the blocking pool and back, which under load
//! was most of a write's CPU. If the client goes away mid-commit, the
//! commit still completes and its locks are released
//! (`rowtree_db::PendingCommit`); only the answer is lost.

use std::sync::Arc;

use googleapis_tonic_google_spanner_v1::google::spanner::v1 as pb;
use pb::transaction_options::Mode;
use rowtree_db::{CommitResult, CommitStart, Database, Mutation, OutcomeTag, ReadWriteTransaction};
use rowtree_types::Code;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Status;

use super::results::Stream;
use super::sessions::SessionState;
use super::threads::blocking;
use super::transactions::{TxnSlot, TxnState};
use crate::convert;
use crate::registry::now_nanos;
use crate::status;

/// Ends a held transaction for Commit or Rollback and returns the state it
/// was in; later uses answer FAILED_PRECONDITION.
fn end(slot: &TxnSlot) -> TxnState {
    std::mem::replace(&mut *slot.state.lock(), ended())
}

/// What an ended transaction's slot answers.
fn ended() -> TxnState {
    TxnState::Ended(
        Code::FailedPrecondition,
        "Cannot use a transaction after Commit() or Rollback() has been called".into(),
    )
}

/// Commit: a held read-write transaction with the request's mutations
/// buffered last, or a single-use read-write transaction of the mutations
/// alone. Runs in the request's task (see the module docs); a held
/// transaction that is not simply there to take (its slot busy with another
/// request, or not a held read-write transaction) is answered by
/// [`commit_blocking`] on a blocking thread instead.
pub(super) async fn commit(
    session: Arc<SessionState>,
    r: pb::CommitRequest,
    tag: Option<OutcomeTag>,
) -> Result<pb::CommitResponse, Status> {
    use pb::commit_request::Transaction as T;
    let result = match &r.transaction {
        Some(T::TransactionId(id)) => {
            let Some(mut txn) = take_read_write(&session, id) else {
                return blocking(move || commit_blocking(&session, &r, tag)).await;
            };
            session.forget(id);
            if let Some(tag) = tag {
                txn.record_outcome(tag);
            }
            let mutations = convert::mutations_from_proto(&r.mutations, &txn.catalog())?;
            txn.buffer_all(mutations).map_err(status::from_db)?;
            commit_txn(txn).await?.map_err(status::from_db)?
        }
        Some(T::SingleUseTransaction(options)) => {
            if !matches!(options.mode, Some(Mode::ReadWrite(_))) {
                return Err(Status::invalid_argument(
                    "A single-use transaction in Commit must be read-write",
                ));
            }
            let mutations = convert::mutations_from_proto(&r.mutations, &session.db.catalog())?;
            write(&session.db, mutations, tag).await?
        }
        None => {
            return Err(Status::invalid_argument(
                "Commit needs a transaction id or a single-use transaction",
            ))
        }
    };
    Ok(response(&r, result))
}

/// Ends and returns the held read-write transaction `id`, if that needs no
/// waiting: its slot is free (not in use by another request of the
/// transaction, which may be waiting for a lock while it holds the slot).
fn take_read_write(session: &SessionState, id: &[u8]) -> Option<ReadWriteTransaction> {
    let slot = session.held_slot(id)?;
    let mut state = slot.state.try_lock()?;
    if !matches!(*state, TxnState::ReadWrite(_)) {
        return None;
    }
    match std::mem::replace(&mut *state, ended()) {
        TxnState::ReadWrite(txn) => Some(txn),
        _ => unreachable!("checked above"),
    }
}

/// Commits a transaction from an asynchronous task: resolves it in the
/// task if that needs no waiting, else on a blocking thread, then awaits
/// durability. The outer error is the request's failure (a panic on the
/// blocking thread); the inner one the commit's, to retry if aborted.
async fn commit_txn(txn: ReadWriteTransaction) -> Result<rowtree_db::Result<CommitResult>, Status> {
    let pending = match txn.try_start_commit() {
        Ok(CommitStart::Started(pending)) => pending,
        Ok(CommitStart::WouldWait(txn)) => match blocking(move || Ok(txn.start_commit())).await? {
            Ok(pending) => pending,
            Err(e) => return Ok(Err(e)),
        },
        Err(e) => return Ok(Err(e)),
    };
    Ok(pending.await)
}

/// A single-use read-write transaction of `mutations`, retried with the
/// first attempt's wound-wait priority while it is aborted, with backoff
/// (as the database's `write` does, but sleeping without a thread).
///
/// A tagged commit ([`OutcomeTag`]) is retried only until its `not_after`:
/// past it, it could no longer commit.
pub(super) async fn write(
    db: &Database,
    mutations: Vec<Mutation>,
    tag: Option<OutcomeTag>,
) -> Result<CommitResult, Status> {
    let mut priority = None;
    let mut backoff = rowtree_db::AbortBackoff::default();
    loop {
        let mut txn = match priority {
            None => db.begin(),
            Some(p) => db.begin_with_priority(p),
        };
        priority = Some(txn.priority());
        if let Some(tag) = tag {
            txn.record_outcome(tag);
        }
        let outcome = match txn.buffer_all(mutations.clone()) {
            Ok(()) => commit_txn(txn).await?,
            Err(e) => Err(e),
        };
        match outcome {
            Err(e)
                if e.is_retryable() && tag.is_none_or(|t| (now_nanos() as u64) < t.not_after) =>
            {
                tokio::time::sleep(backoff.next_pause()).await
            }
            other => return other.map_err(status::from_db),
        }
    }
}

/// Commit on a blocking thread, for what [`commit`] does not take in its
/// task: a held transaction that is busy, read-only, partitioned, ended or
/// unknown.
fn commit_blocking(
    session: &SessionState,
    r: &pb::CommitRequest,
    tag: Option<OutcomeTag>,
) -> Result<pb::CommitResponse, Status> {
    use pb::commit_request::Transaction as T;
    let Some(T::TransactionId(id)) = &r.transaction else {
        return Err(Status::internal("commit_blocking takes held transactions"));
    };
    let slot = session.slot(id)?;
    let state = end(&slot);
    session.forget(id);
    let result = match state {
        TxnState::ReadWrite(mut txn) => {
            if let Some(tag) = tag {
                txn.record_outcome(tag);
            }
            let mutations = convert::mutations_from_proto(&r.mutations, &txn.catalog())?;
            txn.buffer_all(mutations).map_err(status::from_db)?;
            txn.commit().map_err(status::from_db)?
        }
        TxnState::ReadOnly(_) => {
            return Err(Status::failed_precondition(
                "Cannot commit a read-only transaction",
            ))
        }
        TxnState::PartitionedDml => {
            return Err(Status::failed_precondition(
                "Cannot commit a partitioned DML transaction",
            ))
        }
        TxnState::Ended(code, message) => return Err(status::status(code, message)),
    };
    Ok(response(r, result))
}

/// The answer to a successful Commit.
pub(super) fn response(r: &pb::CommitRequest, result: CommitResult) -> pb::CommitResponse {
    pb::CommitResponse {
        commit_timestamp: Some(crate::registry::timestamp_pb(
            result.commit_timestamp as i64,
        )),
        commit_stats: r
            .return_commit_stats
            .then_some(pb::commit_response::CommitStats {
                mutation_count: result.mutation_count as i64,
            }),
        ..Default::default()
    }
}

/// Rollback: ends the transaction and frees its locks. Rolling back a
/// transaction that is not there (ended, or never begun) is not an error.
pub(super) fn rollback(session: &SessionState, r: &pb::RollbackRequest) {
    if let Ok(slot) = session.slot(&r.transaction_id) {
        if let TxnState::ReadWrite(txn) = end(&slot) {
            txn.rollback();
        }
        session.forget(&r.transaction_id);
    }
}

/// BatchWrite: each mutation group committed on its own, in order, on a
/// blocking thread; one response per group, with its status or commit
/// timestamp, until the client stops listening.
pub(super) fn batch_write(
    session: Arc<SessionState>,
    r: pb::BatchWriteRequest,
) -> Stream<pb::BatchWriteResponse> {
    let (tx, rx) = mpsc::channel(16);
    tokio::task::spawn_blocking(move || {
        for (i, group) in r.mutation_groups.iter().enumerate() {
            let result = (|| {
                let mutations =
                    convert::mutations_from_proto(&group.mutations, &session.db.catalog())?;
                session.db.write(mutations).map_err(status::from_db)
            })();
            let response = match result {
                Ok(c) => pb::BatchWriteResponse {
                    indexes: vec![i as i32],
                    status: Some(status::rpc_ok()),
                    commit_timestamp: Some(crate::registry::timestamp_pb(
                        c.commit_timestamp as i64,
                    )),
                },
                Err(e) => pb::BatchWriteResponse {
                    indexes: vec![i as i32],
                    status: Some(status::to_rpc(&e)),
                    commit_timestamp: None,
                },
            };
            if tx.blocking_send(Ok(response)).is_err() {
                return;
            }
        }
    });
    Box::pin(ReceiverStream::new(rx))
}
