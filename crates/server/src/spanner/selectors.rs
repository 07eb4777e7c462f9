//! Transaction selectors: which transaction a request runs in.
//!
//! Every query, read and DML request carries a `TransactionSelector`;
//! [`SessionState::select`] turns it into a [`Selected`] transaction:
//! a single-use snapshot (also what no selector at all means), a
//! transaction begun by this very request (inline begin, returned with the
//! first result), or one begun earlier, by id. [`SessionState::begin`]
//! starts a transaction from `TransactionOptions`, for inline begins and
//! for BeginTransaction.

use std::sync::Arc;

use googleapis_tonic_google_spanner_v1::google::spanner::v1 as pb;
use pb::transaction_options::Mode;
use pb::transaction_selector::Selector;
use rowtree_db::{ReadOnlyTransaction, TimestampBound};
use tonic::Status;

use super::sessions::SessionState;
use super::transactions::{read_only_id, TxnSlot, TxnState};
use crate::convert;
use crate::status;

/// Whether a request may be answered in the event loop: its selector asks
/// for a single-use read-only snapshot (or nothing, which means a strong
/// one) whose read timestamp cannot lie in the future. A snapshot at a
/// client's timestamp (`read_timestamp`, `min_read_timestamp`, or a
/// `resume_token`, which pins one) waits until that time has come, up to a
/// minute: on the event loop that wait would stall every other connection
/// the loop serves, so such a request goes to a blocking thread.
pub(super) fn inline_snapshot(
    selector: Option<&pb::TransactionSelector>,
    resume_token: &[u8],
) -> bool {
    use pb::transaction_options::read_only::TimestampBound as B;
    if !resume_token.is_empty() {
        return false;
    }
    match selector.and_then(|s| s.selector.as_ref()) {
        None => true,
        Some(Selector::SingleUse(options)) => match &options.mode {
            None => true,
            Some(Mode::ReadOnly(ro)) => matches!(
                ro.timestamp_bound,
                None | Some(B::Strong(_) | B::MaxStaleness(_) | B::ExactStaleness(_))
            ),
            Some(_) => false,
        },
        _ => false,
    }
}

/// The transaction a request runs in, once its selector is resolved.
pub(super) enum Selected {
    /// A single-use read-only snapshot; `report` is set when the client asked
    /// for its read timestamp (returned in the result's metadata).
    Snapshot {
        ro: ReadOnlyTransaction,
        report: Option<pb::Transaction>,
    },
    /// A transaction held by the session; `begun` is set when this request
    /// began it (the response returns it, a failure forgets it).
    Held {
        id: Vec<u8>,
        slot: Arc<TxnSlot>,
        begun: Option<pb::Transaction>,
    },
}

/// The timestamp bound a read-only transaction's options ask for.
pub(super) fn bound_from_proto(
    ro: &pb::transaction_options::ReadOnly,
) -> Result<TimestampBound, Status> {
    use pb::transaction_options::read_only::TimestampBound as B;
    Ok(match &ro.timestamp_bound {
        None | Some(B::Strong(_)) => TimestampBound::Strong,
        Some(B::ExactStaleness(d)) => {
            TimestampBound::ExactStaleness(convert::duration_from_proto(d))
        }
        Some(B::MaxStaleness(d)) => TimestampBound::MaxStaleness(convert::duration_from_proto(d)),
        Some(B::ReadTimestamp(t)) => TimestampBound::ReadTimestamp(nanos_u64(t)?),
        Some(B::MinReadTimestamp(t)) => TimestampBound::MinReadTimestamp(nanos_u64(t)?),
    })
}

/// A read timestamp as the database's `u64` nanoseconds since the epoch.
fn nanos_u64(t: &prost_types::Timestamp) -> Result<u64, Status> {
    let n = t.seconds as i128 * 1_000_000_000 + t.nanos as i128;
    u64::try_from(n).map_err(|_| Status::invalid_argument("The read timestamp is before 1970"))
}

/// The `Transaction` a response returns: the id, and the read timestamp of
/// a snapshot.
fn transaction_pb(id: Vec<u8>, read_ts: Option<u64>) -> pb::Transaction {
    pb::Transaction {
        id,
        read_timestamp: read_ts.map(|t| crate::registry::timestamp_pb(t as i64)),
        ..Default::default()
    }
}

impl SessionState {
    /// Starts a transaction with `options`, returning its id and slot.
    pub(super) fn begin(
        &self,
        options: &pb::TransactionOptions,
    ) -> Result<(Vec<u8>, Arc<TxnSlot>, pb::Transaction), Status> {
        match &options.mode {
            Some(Mode::ReadOnly(ro)) => {
                let snapshot = self
                    .db
                    .read_only(bound_from_proto(ro)?)
                    .map_err(status::from_db)?;
                let ts = snapshot.read_timestamp();
                let id = read_only_id(ts);
                let slot = TxnSlot::new(TxnState::ReadOnly(snapshot));
                Ok((id.clone(), slot, transaction_pb(id, Some(ts))))
            }
            Some(Mode::ReadWrite(_)) => {
                let txn = self.db.begin();
                let (id, slot) = self.register(TxnState::ReadWrite(txn))?;
                Ok((id.clone(), slot, transaction_pb(id, None)))
            }
            Some(Mode::PartitionedDml(_)) => {
                let (id, slot) = self.register(TxnState::PartitionedDml)?;
                Ok((id.clone(), slot, transaction_pb(id, None)))
            }
            None => Err(Status::invalid_argument(
                "TransactionOptions must set a mode",
            )),
        }
    }

    /// Resolves a request's transaction selector.
    pub(super) fn select(
        &self,
        selector: Option<&pb::TransactionSelector>,
    ) -> Result<Selected, Status> {
        self.select_pinned(selector, None)
    }

    /// [`SessionState::select`]; a single-use snapshot reads at `pinned`
    /// when given (a resumed stream continues in its first snapshot).
    pub(super) fn select_pinned(
        &self,
        selector: Option<&pb::TransactionSelector>,
        pinned: Option<u64>,
    ) -> Result<Selected, Status> {
        let pin = |bound: TimestampBound| match pinned {
            Some(ts) => TimestampBound::ReadTimestamp(ts),
            None => bound,
        };
        match selector.and_then(|s| s.selector.as_ref()) {
            None => Ok(Selected::Snapshot {
                ro: self
                    .db
                    .read_only(pin(TimestampBound::Strong))
                    .map_err(status::from_db)?,
                report: None,
            }),
            Some(Selector::SingleUse(options)) => {
                let (bound, report) = match &options.mode {
                    Some(Mode::ReadOnly(ro)) => (bound_from_proto(ro)?, ro.return_read_timestamp),
                    None => (TimestampBound::Strong, false),
                    Some(_) => {
                        return Err(Status::invalid_argument(
                            "DML statements may not be performed in single-use transactions, to \
                             avoid replay; begin a read-write transaction",
                        ))
                    }
                };
                let ro = self.db.read_only(pin(bound)).map_err(status::from_db)?;
                let report = report.then(|| transaction_pb(Vec::new(), Some(ro.read_timestamp())));
                Ok(Selected::Snapshot { ro, report })
            }
            Some(Selector::Begin(options)) => {
                let (id, slot, txn) = self.begin(options)?;
                Ok(Selected::Held {
                    id,
                    slot,
                    begun: Some(txn),
                })
            }
            Some(Selector::Id(id)) => Ok(Selected::Held {
                id: id.clone(),
                slot: self.slot(id)?,
                begun: None,
            }),
        }
    }
}
