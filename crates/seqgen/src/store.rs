//! Where the `sequences` table lives: the [`Store`] and [`Txn`] traits.
//!
//! Every generator is written once against these two traits, and works the
//! same against the embedded database ([`rowtree_db::Database`] implements
//! [`Store`], see [`embedded`](crate::embedded)) and against any endpoint
//! that speaks Spanner's gRPC API (`rowtree serve`, Google's emulator, Cloud
//! Spanner itself; see [`remote`](crate::remote)).
//!
//! A [`Store`] runs read-write transactions. Its [`Store::run`] retries the
//! whole body while the transaction is aborted (a lost lock conflict), as
//! Spanner's client libraries do, so a body must be safe to run more than
//! once: everything it learns from the database is re-read on each attempt.
//! The state the generators keep is one row per sequence:
//!
//! ```sql
//! CREATE TABLE sequences (
//!   name STRING(64) NOT NULL,
//!   next_value INT64 NOT NULL,
//! ) PRIMARY KEY (name)
//! ```
//!
//! `next_value` is the next value nobody has been given yet. Handing out
//! `n` values is reading `v`, writing `v + n` and using `v .. v + n`.

use rowtree_types::Timestamp;

use crate::error::{Error, Result};

/// The table that holds every sequence's next value.
pub const SEQUENCES_TABLE: &str = "sequences";

/// The DDL that creates [`SEQUENCES_TABLE`].
pub const SEQUENCES_DDL: &str = "CREATE TABLE sequences (\n  name STRING(64) NOT NULL,\n  \
     next_value INT64 NOT NULL,\n) PRIMARY KEY (name)";

/// What a committed transaction returns: the body's value and the commit
/// timestamp (the order in which transactions took effect).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Committed<T> {
    pub value: T,
    pub commit_timestamp: Timestamp,
}

/// The operations a generator needs inside one read-write transaction.
pub trait Txn {
    /// Reads `next_value` of sequence `name` (under the transaction's read
    /// lock, so a concurrent writer of the row conflicts with this
    /// transaction); `None` if the sequence has no row.
    fn read_next_value(&mut self, name: &str) -> Result<Option<i64>>;

    /// Buffers a write of `next_value` for sequence `name`, applied when the
    /// transaction commits. A later call for the same name replaces it.
    fn write_next_value(&mut self, name: &str, next_value: i64) -> Result<()>;

    /// `GET_NEXT_SEQUENCE_VALUE(SEQUENCE name)`: a value of a built-in
    /// bit-reversed sequence (created with `CREATE SEQUENCE`), for
    /// comparison with the table-based generators. Built-in sequences are
    /// not transactional: the value is used up even if this transaction
    /// aborts.
    fn next_bit_reversed_value(&mut self, sequence: &str) -> Result<i64>;
}

/// Runs read-write transactions against a database holding the
/// `sequences` table.
pub trait Store: Send + Sync + 'static {
    /// Runs `body` in a read-write transaction and commits it; while the
    /// transaction is aborted (by a conflict, or by the body returning an
    /// error whose [`Error::is_aborted`] holds) the whole body runs again in
    /// a new transaction after a pause ([`RetryPolicy`](crate::RetryPolicy)),
    /// up to [`MAX_ATTEMPTS`] attempts. Any other error rolls the
    /// transaction back and is returned.
    fn run<T>(&self, body: &mut dyn FnMut(&mut dyn Txn) -> Result<T>) -> Result<Committed<T>>;

    /// Applies DDL statements (one schema change; waits until done).
    fn apply_ddl(&self, statements: &[&str]) -> Result<()>;

    /// Whether a table of this name exists.
    fn has_table(&self, table: &str) -> Result<bool>;
}

/// The longest a transaction is retried: attempts beyond this give up with
/// [`Error::TooManyAborts`] rather than spin forever.
pub const MAX_ATTEMPTS: u32 = 10_000;

/// Creates the `sequences` table unless it exists, and the row of sequence
/// `name` starting at `start` unless it exists (an existing sequence keeps
/// its `next_value`). Returns the sequence's `next_value`.
pub fn create_sequence<S: Store + ?Sized>(store: &S, name: &str, start: i64) -> Result<i64> {
    if name.is_empty() || name.chars().count() > 64 {
        return Err(Error::Config(format!(
            "a sequence name has 1 to 64 characters; got {name:?}"
        )));
    }
    if !store.has_table(SEQUENCES_TABLE)? {
        if let Err(e) = store.apply_ddl(&[SEQUENCES_DDL]) {
            // Another process may have created it meanwhile; only then is
            // the failure harmless.
            if !store.has_table(SEQUENCES_TABLE)? {
                return Err(e);
            }
        }
    }
    let committed = store.run(&mut |t| match t.read_next_value(name)? {
        Some(v) => Ok(v),
        None => {
            t.write_next_value(name, start)?;
            Ok(start)
        }
    })?;
    Ok(committed.value)
}

/// Reserves `count` values of sequence `name` inside `txn`: reads
/// `next_value`, buffers `next_value + count`, and returns the first value
/// of the reserved run `first .. first + count`.
pub fn reserve(txn: &mut dyn Txn, name: &str, count: i64) -> Result<i64> {
    let next_value = txn
        .read_next_value(name)?
        .ok_or_else(|| Error::NoSuchSequence { name: name.into() })?;
    let end = next_value.checked_add(count).ok_or(Error::Exhausted {
        name: name.into(),
        next_value,
        count,
    })?;
    txn.write_next_value(name, end)?;
    Ok(next_value)
}

/// Reserves `count` values of sequence `name` in a transaction of their own
/// (the "get and increment" every out-of-transaction generator uses) and
/// returns the first.
pub fn reserve_in_own_transaction<S: Store + ?Sized>(
    store: &S,
    name: &str,
    count: i64,
) -> Result<i64> {
    Ok(store.run(&mut |t| reserve(t, name, count))?.value)
}
