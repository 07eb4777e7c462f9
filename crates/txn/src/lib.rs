//! Transactions for Rowtree: who may touch which keys, when, and at what timestamp.
//!
//! Read-write transactions follow Spanner: strict two-phase locking over byte keys and key
//! ranges with wound-wait against deadlock ([`lock`]), commit timestamps that strictly
//! increase ([`timestamp`]), and a commit pipeline that makes concurrent commits durable
//! with one shared flush (group commit) and publishes the timestamp up to which everything
//! is readable ([`commit`]); a commit's outcome arrives on a [`ticket`] that a thread waits
//! for or a task awaits.
//!
//! The crate knows nothing about schemas or storage: keys are bytes, and what a commit
//! writes is an opaque value handed to a flush closure that the database supplies.

pub mod commit;
pub mod error;
pub mod lock;
pub mod ticket;
pub mod timestamp;

pub use commit::{CommitGate, CommitOptions, CommitPipeline, CommitRequest, CommitStats};
pub use error::{Error, Result};
pub use lock::{
    KeyRange, LockManager, LockMode, LockStats, LockTarget, TxnHandle, TxnId, TxnState,
};
pub use ticket::CommitTicket;
pub use timestamp::{Clock, ManualClock, SystemClock, TimestampOracle};
