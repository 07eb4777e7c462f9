//! The errors of the cluster crate.

use rowtree_kv::SplitId;

/// A result of this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// Bytes that are not a well-formed log entry or applied state: where the
/// decoder stopped and what it expected there.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed {what} at byte {offset}: {reason}")]
pub struct DecodeError {
    /// What was being decoded ("log entry", "applied state").
    pub what: &'static str,
    /// Offset of the first byte that could not be decoded.
    pub offset: usize,
    pub reason: String,
}

/// Why a replica refused an entry or could not read its state.
///
/// Every refusal leaves the replica's stored state as it was: an entry is
/// applied whole or not at all.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// The entry is not the next one in the log: entries are applied in
    /// order without gaps (earlier ones are skipped as already applied).
    #[error("split {split}: log entry {index} is not the next entry, {expected}")]
    LogGap {
        split: SplitId,
        index: u64,
        expected: u64,
    },
    /// A write for a key this replica's split does not own (design
    /// invariant 2, "one owner per key").
    #[error("split {split}: log entry {index} writes key {key} outside the split's range {range}")]
    OutOfRange {
        split: SplitId,
        index: u64,
        key: String,
        range: String,
    },
    /// A version at or below a version already stored for the key
    /// (invariant 4, "per-key timestamps increase"), or at or below the
    /// closed timestamp, below which the split promised no more writes.
    #[error("split {split}: log entry {index} writes key {key} at timestamp {ts}, not above {bound} ({why})")]
    TimestampOrder {
        split: SplitId,
        index: u64,
        key: String,
        ts: u64,
        bound: u64,
        why: &'static str,
    },
    /// A lease entry that breaks the chain's rules (see
    /// [`crate::lease`]): numbered 0, empty, or another holder's lease
    /// starting before the current one expires.
    #[error("split {split}: log entry {index} carries {lease}, refused: {why}")]
    Lease {
        split: SplitId,
        index: u64,
        lease: String,
        why: &'static str,
    },
    /// A two-phase commit entry that breaks a rule (see
    /// [`crate::twophase`]): a prepare at or below the closed timestamp,
    /// a commit below its prepare timestamp, a closed timestamp reaching a
    /// prepared transaction's, an abort carrying writes.
    #[error("split {split}: log entry {index} about {txn} refused: {why}")]
    Transaction {
        split: SplitId,
        index: u64,
        txn: String,
        why: String,
    },
    /// A replica was created where one already exists, or opened where
    /// none exists.
    #[error("split {split}: {message}")]
    Replica { split: SplitId, message: String },
    #[error(transparent)]
    Kv(#[from] rowtree_kv::Error),
    #[error(transparent)]
    Storage(#[from] rowtree_storage::Error),
}
