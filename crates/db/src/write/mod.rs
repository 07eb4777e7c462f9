//! Commit-time resolution: buffered mutations become row and index writes.
//!
//! Mutations are applied in order to the transaction's overlay of the rows
//! they touch (the overlay, `crate::overlay`), so a later mutation sees an earlier one
//! (a child inserted after its parent in the same transaction finds the
//! parent). Every row is locked exclusively before it is read, and row trees
//! are locked as ranges before they are scanned for cascades, so the state
//! seen here is the latest committed one and stays so until the commit is
//! durable.
//!
//! After all mutations, the resolver derives what else the commit must do:
//! secondary index entries (deleted, added, or rewritten when a STORING
//! column changes), UNIQUE checks, FOREIGN KEY checks. The result is a list
//! of key/value writes that the commit pipeline timestamps and makes durable.
//!
//! The work is cut along those jobs, each file adding methods to the one
//! `Resolver`:
//!
//! | file | job |
//! |---|---|
//! | `resolver.rs` | the resolver itself: locking, loading rows into the overlay, the DML report, and `finish`, which runs the checks and derives the writes |
//! | `mutations.rs` | applying mutations: insert, update, replace, delete; defaults and generated columns; parent existence; ON DELETE cascades over row trees |
//! | `validate.rs` | the checks of one row: NOT NULL, lengths and the cell limit, commit-timestamp rules, CHECK constraints |
//! | `index.rs` | index maintenance: the entries a changed row deletes and adds, UNIQUE |
//! | `foreign_keys.rs` | FOREIGN KEY checks and ON DELETE CASCADE foreign keys |
//! | `prepared.rs` | a key/value write, ready or waiting for the commit timestamp |
//! | `commit.rs` | a resolved commit's way to durability: split accounting, the commit pipeline, the commit timestamp filled in |
//!
//! What the rest of the crate shares with the resolver lives below it, in
//! leaf modules that depend on nothing above them: key ranges of a table or
//! index (`target.rs`), row assembly (`row.rs`), the overlay (`overlay.rs`)
//! and the expression contexts (`eval.rs`).

use rowtree_types::{Timestamp, Value};

mod commit;
mod foreign_keys;
mod index;
mod mutations;
mod prepared;
mod resolver;
mod validate;

pub(crate) use commit::Submitted;
pub use prepared::stamp_row;
pub(crate) use prepared::PreparedWrite;
pub(crate) use resolver::{Resolved, Resolver};

/// The value that stands for "this transaction's commit timestamp" in a
/// column with `allow_commit_timestamp = true` (Spanner's
/// `spanner.commit_timestamp()` / `PENDING_COMMIT_TIMESTAMP()`). It is
/// replaced by the commit timestamp when the commit is made durable.
pub const PENDING_COMMIT_TIMESTAMP: Timestamp = Timestamp::PENDING_COMMIT;

/// Spanner's limit on mutations per commit.
pub const MAX_MUTATIONS: usize = 80_000;
/// Spanner's limit on the size of one commit.
pub const MAX_COMMIT_BYTES: usize = 100 << 20;
/// Spanner's limit on one cell.
pub const MAX_CELL_BYTES: usize = 10 << 20;

/// A row a DML statement wrote: its state before and after the statement.
#[derive(Debug, Clone, PartialEq)]
pub struct WrittenRow {
    pub table: String,
    pub old: Option<Vec<Value>>,
    pub new: Option<Vec<Value>>,
}

/// Key values as error messages print them: in brackets, comma-separated.
pub(crate) fn key_string(key: &[Value]) -> String {
    let parts: Vec<String> = key.iter().map(|v| v.to_string()).collect();
    format!("[{}]", parts.join(","))
}
