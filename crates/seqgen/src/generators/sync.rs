//! The synchronous generator: values come from the caller's own read-write
//! transaction.
//!
//! The caller's transaction reads the sequence's `next_value` (taking the
//! row's read lock), buffers `next_value + 1`, and commits it together with
//! whatever it uses the value for. If the transaction aborts, its increment
//! is rolled back with it, so the values in use are exactly `start ..
//! start + n`, in commit order: ordered and gapless. The price is that the
//! row's lock is held for the caller's whole transaction, so at most one
//! transaction that takes a value commits per transaction latency, across
//! the whole database, and concurrent callers abort one another.
//!
//! This is the article's improved form: one [`SyncValues`] per transaction
//! attempt reads the row once and hands out several values from it,
//! buffering one write of the final `next_value`.

use crate::error::{Error, Result};
use crate::store::Txn;

/// Hands out values of one sequence inside the caller's transactions.
#[derive(Debug, Clone)]
pub struct Sync {
    name: String,
}

impl Sync {
    /// The generator for sequence `name` (a row of the `sequences` table).
    pub fn new(name: impl Into<String>) -> Sync {
        Sync { name: name.into() }
    }

    /// The sequence's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Starts handing out values in one transaction attempt. Create it
    /// inside the transaction body, so a retried attempt starts afresh.
    pub fn in_transaction(&self) -> SyncValues<'_> {
        SyncValues {
            name: &self.name,
            next: None,
        }
    }

    /// One value in `txn` (shorthand for a one-value [`SyncValues`]).
    pub fn next_value(&self, txn: &mut dyn Txn) -> Result<i64> {
        self.in_transaction().next(txn)
    }
}

/// The values one transaction attempt took from a [`Sync`] generator.
#[derive(Debug)]
pub struct SyncValues<'g> {
    name: &'g str,
    /// The next value to hand out, once the row was read.
    next: Option<i64>,
}

impl SyncValues<'_> {
    /// The next value. The first call reads the row; every call buffers the
    /// new `next_value` (the last buffered write wins at commit).
    pub fn next(&mut self, txn: &mut dyn Txn) -> Result<i64> {
        let value = match self.next {
            Some(v) => v,
            None => txn
                .read_next_value(self.name)?
                .ok_or_else(|| Error::NoSuchSequence {
                    name: self.name.to_string(),
                })?,
        };
        let following = value.checked_add(1).ok_or(Error::Exhausted {
            name: self.name.to_string(),
            next_value: value,
            count: 1,
        })?;
        txn.write_next_value(self.name, following)?;
        self.next = Some(following);
        Ok(value)
    }
}
