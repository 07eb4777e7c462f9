//! The embedded database as a [`Store`]: a `rowtree_db::Database` in this
//! process.
//!
//! A transaction here is a [`ReadWriteTransaction`]: reads take shared
//! locks, buffered writes are applied at commit under exclusive locks, and a
//! conflict is settled by wound-wait (the older transaction wins, the
//! younger is aborted). That is Spanner's locking, so the generators contend
//! here exactly as the article describes for Spanner: two transactions that
//! both read a sequence's row cannot both commit a new `next_value`.

use rowtree_db::{Database, Key, KeySet, Mutation, ReadRequest, ReadWriteTransaction, Value};

use crate::backoff::{retry_aborted, RetryPolicy};
use crate::error::{Error, Result};
use crate::store::{Committed, Store, Txn, SEQUENCES_TABLE};

/// One attempt of a read-write transaction of the embedded database.
pub struct EmbeddedTxn {
    txn: ReadWriteTransaction,
}

impl EmbeddedTxn {
    /// The underlying transaction, for the application's own reads and
    /// writes in the same transaction as a [`Sync`](crate::Sync) value.
    pub fn transaction(&mut self) -> &mut ReadWriteTransaction {
        &mut self.txn
    }
}

impl Txn for EmbeddedTxn {
    fn read_next_value(&mut self, name: &str) -> Result<Option<i64>> {
        let key: Key = vec![Value::String(name.to_string())];
        let request = ReadRequest::new(SEQUENCES_TABLE, &["next_value"], KeySet::key(key));
        let rows = self.txn.read(&request)?;
        match rows.first().and_then(|r| r.first()) {
            None => Ok(None),
            Some(Value::Int64(v)) => Ok(Some(*v)),
            Some(other) => Err(Error::Database {
                code: rowtree_types::Code::FailedPrecondition,
                message: format!("sequences.next_value of {name:?} is {other:?}, not an INT64"),
            }),
        }
    }

    fn write_next_value(&mut self, name: &str, next_value: i64) -> Result<()> {
        self.txn.buffer(Mutation::insert_or_update(
            SEQUENCES_TABLE,
            &["name", "next_value"],
            vec![vec![
                Value::String(name.to_string()),
                Value::Int64(next_value),
            ]],
        ))?;
        Ok(())
    }

    fn next_bit_reversed_value(&mut self, sequence: &str) -> Result<i64> {
        Ok(self.txn.next_sequence_value(sequence)?)
    }
}

/// Runs `body` in a read-write transaction of `db` with retries, as
/// [`Store::run`] does, but hands the body the embedded transaction itself,
/// so that the application's reads and writes
/// ([`EmbeddedTxn::transaction`]) share the transaction with a
/// [`Sync`](crate::Sync) generator's value.
pub fn run<T>(
    db: &Database,
    body: &mut dyn FnMut(&mut EmbeddedTxn) -> Result<T>,
) -> Result<Committed<T>> {
    run_with(db, RetryPolicy::FAST, body)
}

/// [`run`] with the pauses between aborted attempts set by `retry`.
pub fn run_with<T>(
    db: &Database,
    retry: RetryPolicy,
    body: &mut dyn FnMut(&mut EmbeddedTxn) -> Result<T>,
) -> Result<Committed<T>> {
    let mut priority = None;
    retry_aborted(retry, || {
        // Each attempt is a new transaction. Unless the policy keeps the
        // first attempt's wound-wait priority (as Spanner does for a
        // transaction retried on the same session), it gets a new one, as
        // when a client library retries with a fresh BeginTransaction on
        // any session: then a newcomer may beat a retried attempt.
        let txn = match priority {
            Some(p) => db.begin_with_priority(p),
            None => db.begin(),
        };
        if retry.keep_priority {
            priority = Some(txn.priority());
        }
        let mut attempt = EmbeddedTxn { txn };
        match body(&mut attempt) {
            Ok(value) => attempt
                .txn
                .commit()
                .map(|c| Committed {
                    value,
                    commit_timestamp: c.timestamp(),
                })
                .map_err(Error::from),
            Err(e) => {
                attempt.txn.rollback();
                Err(e)
            }
        }
    })
}

/// The embedded database with a retry policy of its own (a bare
/// [`Database`] is a [`Store`] too, retrying with [`RetryPolicy::FAST`]).
#[derive(Clone)]
pub struct Embedded {
    db: Database,
    retry: RetryPolicy,
}

impl Embedded {
    /// `db`, retrying aborted transactions under `retry`.
    pub fn new(db: Database, retry: RetryPolicy) -> Embedded {
        Embedded { db, retry }
    }

    /// The database.
    pub fn database(&self) -> &Database {
        &self.db
    }
}

impl Store for Embedded {
    fn run<T>(&self, body: &mut dyn FnMut(&mut dyn Txn) -> Result<T>) -> Result<Committed<T>> {
        run_with(&self.db, self.retry, &mut |t| body(t))
    }

    fn apply_ddl(&self, statements: &[&str]) -> Result<()> {
        Store::apply_ddl(&self.db, statements)
    }

    fn has_table(&self, table: &str) -> Result<bool> {
        self.db.has_table(table)
    }
}

impl Store for Database {
    fn run<T>(&self, body: &mut dyn FnMut(&mut dyn Txn) -> Result<T>) -> Result<Committed<T>> {
        run(self, &mut |t| body(t))
    }

    fn apply_ddl(&self, statements: &[&str]) -> Result<()> {
        Database::apply_ddl(self, statements)?;
        Ok(())
    }

    fn has_table(&self, table: &str) -> Result<bool> {
        Ok(self.catalog().table(table).is_some())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// The priorities of two attempts, the first aborted on purpose.
    fn priorities(keep_priority: bool) -> (u64, u64) {
        let db = Database::in_memory();
        let retry = RetryPolicy {
            first: Duration::from_micros(10),
            keep_priority,
            ..RetryPolicy::FAST
        };
        let mut seen = Vec::new();
        run_with(&db, retry, &mut |t| {
            seen.push(t.transaction().priority());
            if seen.len() == 1 {
                return Err(Error::aborted("the first attempt loses"));
            }
            Ok(())
        })
        .unwrap();
        assert_eq!(seen.len(), 2);
        (seen[0], seen[1])
    }

    #[test]
    fn a_retried_attempt_keeps_its_priority_only_when_the_policy_says_so() {
        let (first, second) = priorities(true);
        assert_eq!(first, second);
        let (first, second) = priorities(false);
        assert!(
            second > first,
            "a fresh attempt is younger: {first} then {second}"
        );
    }
}
