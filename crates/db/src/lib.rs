//! The Rowtree database: Spanner's data model over an ordered, split,
//! multi-versioned key space.
//!
//! A statement or API call passes through these layers:
//!
//! 1. [`Database`] holds the catalog (the schema), the split router (the
//!    one door to the storage engine), the lock manager and the commit
//!    pipeline.
//! 2. DDL ([`Database::apply_ddl`]) is validated by the catalog and applied
//!    with its data work (index backfill, constraint checks) — see [`ddl`];
//!    the database's [`SchemaObserver`] hears of each change ([`observer`]).
//! 3. Reads ([`ReadRequest`]) turn key sets into byte ranges ([`keys`]),
//!    read them through the split router at a timestamp, and decode rows.
//! 4. Writes are [`Mutation`]s buffered in a [`ReadWriteTransaction`]; at
//!    commit they are resolved into row and index writes under locks
//!    ([`write`](mod@write)), timestamped and made durable by group commit.
//! 5. [`ReadOnlyTransaction`]s read a snapshot at a [`TimestampBound`].
//!
//! The modules form layers, each using only the ones below it (no import
//! cycles; `scripts/module-cycles db` checks):
//!
//! ```text
//! transaction, ddl                 the API: transactions, schema changes
//! write (the commit resolver)      mutations -> row and index writes
//! read, stream                     key sets -> rows, merged with the overlay
//! database                         the handle: router, locks, pipeline, GC, splits
//! target, row, overlay, keys, eval what they share: key ranges, row assembly,
//!                                  a transaction's uncommitted writes, the key
//!                                  layout, expression contexts
//! sequences, mutation, format, error, observer, outcome
//! ```

pub mod database;
pub mod ddl;
mod elsewhere;
pub mod error;
mod eval;
pub mod format;
pub(crate) mod gate;
pub mod keys;
pub mod mutation;
pub mod observer;
pub mod outcome;
mod overlay;
pub mod read;
mod route;
mod row;
mod sequences;
pub mod stream;
mod target;
pub mod transaction;
pub mod ttl;
pub mod write;

pub use database::{
    CommitStats, Database, Options, WeakDatabase, DEFAULT_SPLIT_POINT_EXPIRY,
    MAX_SPLIT_POINT_EXPIRY,
};
pub use ddl::DdlError;
pub use error::{Error, Result};
pub use format::FORMAT_VERSION;
pub use mutation::{Bound, Key, KeyRange, KeySet, Mutation, WriteKind};
pub use observer::SchemaObserver;
pub use outcome::OutcomeTag;
pub use read::ReadRequest;
pub use sequences::bit_reversed_positive;
pub use stream::{RowStream, ScanRequest, ScanStats, TaggedRow, TreeScanRequest, TreeStream};
pub use transaction::{
    AbortBackoff, CommitResult, CommitStart, PendingCommit, ReadOnlyTransaction,
    ReadWriteTransaction, Savepoint, TimestampBound,
};
pub use ttl::TtlStats;
pub use write::{stamp_row, WrittenRow, PENDING_COMMIT_TIMESTAMP};

pub use rowtree_types::{Code, Dialect, Timestamp, Type, Value};
