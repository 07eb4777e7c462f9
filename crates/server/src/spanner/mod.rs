//! The data API (`google.spanner.v1.Spanner`): sessions, transactions,
//! queries, reads and commits.
//!
//! **Sessions** belong to a database. A client may create many (a pool) or
//! one multiplexed session that carries any number of transactions at once;
//! both are the same here: a session is a name, its database, and the
//! transactions started in it, each under a 16-byte id. A session no request
//! names for [`IDLE_SESSION`] is deleted, as Spanner may do (later requests
//! answer NOT_FOUND and the client makes a new one), and a database holds at
//! most [`MAX_SESSIONS`] sessions.
//!
//! A read-only transaction keeps nothing here: its id carries its read
//! timestamp (`read_only_id`), and every request that names it reads at that
//! timestamp, as long as the version retention period still reaches back to
//! it. Clients never end read-only transactions, so anything kept for them
//! would only grow. Read-write and partitioned DML transactions are held in
//! their session (at most [`MAX_HELD_TRANSACTIONS`] at once) under a random id.
//!
//! **Transactions** are chosen per request by a `TransactionSelector`:
//! - `single_use`: a read-only snapshot for one query or read (no selector
//!   at all means a strong one), or, in `Commit`, a read-write transaction
//!   that applies the mutations and commits at once (retried here while it
//!   is aborted by a conflict, since nothing was returned to the client);
//! - `begin`: starts a transaction and returns its id in the first result
//!   (inline begin, used by every client library to save a round trip); if
//!   that first statement fails, the transaction is dropped and the client
//!   begins explicitly;
//! - `id`: a transaction begun earlier.
//!
//! Read-write transactions are the embedded engine's: shared locks for
//! reads, wound-wait between conflicting transactions, DML applied at once
//! and visible to later statements, mutations buffered until `Commit`. Many
//! run at once (the emulator allows one). A transaction aborted by wound-wait
//! answers ABORTED with a `RetryInfo`, which makes the client retry the
//! whole transaction function. A read-write transaction left idle for
//! [`IDLE_READ_WRITE`] is rolled back so its locks do not block others.
//!
//! **Results** of streaming calls are `PartialResultSet`s: the first carries
//! the metadata (row type and the begun transaction), values are flattened
//! across messages, a string longer than [`CHUNK_BYTES`] is split across
//! messages with `chunked_value`, each message that ends on a row boundary
//! carries a resume token (the number of rows sent so far) and the last
//! carries the statistics. A request with a resume token runs the statement
//! again and skips the rows already sent.
//!
//! Work runs on tokio's blocking threads: the engine and the SQL executor
//! are synchronous, and a panic in one request ends only that request.
//!
//! # Layout
//!
//! One file per job; what other crates use (the service and the limits)
//! is re-exported here.
//!
//! | file | job |
//! |---|---|
//! | `service.rs` | the tonic trait: each RPC checks limits, finds the session, delegates |
//! | `sessions.rs` | [`SpannerService`], the session store, idle reaping, the session RPCs |
//! | `transactions.rs` | held transactions (`TxnSlot`s), read-only ids, ending aborted ones |
//! | `selectors.rs` | a request's `TransactionSelector` resolved; `TransactionOptions` begun |
//! | `statements.rs` | queries and DML run (ExecuteSql, ExecuteBatchDml, PartitionQuery) |
//! | `reads.rs` | key-set reads (Read, StreamingRead, PartitionRead) |
//! | `commits.rs` | Commit, Rollback, BatchWrite |
//! | `outcomes.rs` | a forwarded Commit tagged, and its outcome looked up if the answer is lost |
//! | `routed.rs` | on a cluster node, a single-use Commit made by the node leading its keys |
//! | `follower.rs` | on a cluster node, stale reads served by its replica instead of the leader |
//! | `partitioned.rs` | partitioned DML statements |
//! | `results.rs` | rows to `ResultSet`s or chunked `PartialResultSet`s, resume tokens |
//! | `limits.rs` | the limits above, request size, the client's deadline |
//! | `threads.rs` | inline or on a blocking thread; panics contained |
//!
//! # A request's path
//!
//! An ExecuteStreamingSql, for example: `service.rs` reads the deadline,
//! checks the size and finds the session (`sessions.rs`), and asks
//! `results.rs` for a stream whose work runs on a blocking thread. The
//! work (`statements.rs`) resolves the selector (`selectors.rs`) to a
//! snapshot or a held transaction (`transactions.rs`), runs the statement
//! in it, handing each row to the chunker, and the chunker sends messages
//! with resume tokens as they fill. Reads take the same path through
//! `reads.rs`; Commit and Rollback go from the service to `commits.rs`.
//!
//! The files form layers, each using only those below it, so there is no
//! import cycle: `limits`, `threads`, `partitioned` and `transactions` use
//! no other file; `sessions` builds on `transactions` and `limits`;
//! `selectors` adds a session's methods that begin and select
//! transactions; `follower` builds on `sessions`, `selectors` and
//! `transactions` (the sessions of other nodes it serves are kept in
//! `sessions`); `results` uses `limits` and `threads` only (it knows rows,
//! not sessions); `statements`, `reads` and `commits` use those; `service`
//! uses them all.

mod commits;
mod follower;
mod limits;
mod outcomes;
mod partitioned;
mod reads;
mod results;
mod routed;
mod selectors;
mod service;
mod sessions;
mod statements;
mod threads;
mod transactions;

#[cfg(test)]
mod tests;

pub use crate::status::REFUSED;
pub use follower::SERVED_HERE;
pub use limits::{
    IDLE_OTHER, IDLE_READ_WRITE, IDLE_SESSION, MAX_HELD_TRANSACTIONS, MAX_REQUEST_BYTES,
    MAX_SESSIONS,
};
pub use outcomes::{COMMIT_TAG, OUTCOME_OF, OUTCOME_WINDOW};
pub use results::CHUNK_BYTES;
pub use routed::ROUTED;
pub use sessions::{SpannerService, MAX_VERIFIED, VERIFIED_FOR};
