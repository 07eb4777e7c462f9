//! Commits: Commit and Rollback, which end a transaction, and BatchWrite,
//! which commits groups of mutations each on its own.
//!
//! Ending a held transaction leaves its slot answering FAILED_PRECONDITION
//! to any later use ([`end`]) and drops it from the session. A single-use
//! read-write Commit and each BatchWrite group go through the database's
//! `write`, which retries while aborted: nothing has reached the client yet.

use std::sync::Arc;

use googleapis_tonic_google_spanner_v1::google::spanner::v1 as pb;
use pb::transaction_options::Mode;
use rowtree_types::Code;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Status;

use super::results::Stream;
use super::sessions::SessionState;
use super::transactions::{TxnSlot, TxnState};
use crate::convert;
use crate::status;

/// Ends a held transaction for Commit or Rollback and returns the state it
/// was in; later uses answer FAILED_PRECONDITION.
fn end(slot: &TxnSlot) -> TxnState {
    std::mem::replace(
        &mut *slot.state.lock(),
        TxnState::Ended(
            Code::FailedPrecondition,
            "Cannot use a transaction after Commit() or Rollback() has been called".into(),
        ),
    )
}

/// Commit: a held read-write transaction with the request's mutations
/// buffered last, or a single-use read-write transaction of the mutations
/// alone.
pub(super) fn commit(
    session: &SessionState,
    r: &pb::CommitRequest,
) -> Result<pb::CommitResponse, Status> {
    use pb::commit_request::Transaction as T;
    let result = match &r.transaction {
        Some(T::TransactionId(id)) => {
            let slot = session.slot(id)?;
            let state = end(&slot);
            session.forget(id);
            match state {
                TxnState::ReadWrite(mut txn) => {
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
            }
        }
        Some(T::SingleUseTransaction(options)) => {
            if !matches!(options.mode, Some(Mode::ReadWrite(_))) {
                return Err(Status::invalid_argument(
                    "A single-use transaction in Commit must be read-write",
                ));
            }
            // Retried inside while aborted: nothing reached the client yet.
            let mutations = convert::mutations_from_proto(&r.mutations, &session.db.catalog())?;
            session.db.write(mutations).map_err(status::from_db)?
        }
        None => {
            return Err(Status::invalid_argument(
                "Commit needs a transaction id or a single-use transaction",
            ))
        }
    };
    Ok(pb::CommitResponse {
        commit_timestamp: Some(crate::registry::timestamp_pb(
            result.commit_timestamp as i64,
        )),
        commit_stats: r
            .return_commit_stats
            .then_some(pb::commit_response::CommitStats {
                mutation_count: result.mutation_count as i64,
            }),
        ..Default::default()
    })
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
