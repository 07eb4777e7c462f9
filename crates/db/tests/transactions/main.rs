//! Transactions with Spanner's semantics, checked from the outside.
//!
//! * Serializability: write skew is prevented, concurrent read-modify-write
//!   transactions lose no update.
//! * Wound-wait: the older of two conflicting transactions commits, the
//!   younger is aborted (retryably); a younger transaction waits for an older
//!   lock holder instead of aborting it.
//! * Timestamps: commit timestamps increase strictly; strong reads see every
//!   acknowledged commit; reads at a timestamp see exactly the versions
//!   committed at or before it; staleness bounds pick the timestamps they
//!   promise; reads older than the version retention period fail.
//! * Commit limits: 80,000 mutations, 10 MiB cells, 8 KiB keys.
//! * `PENDING_COMMIT_TIMESTAMP` becomes the commit timestamp, in values and keys.
//! * Durability: schema, data, MVCC history and sequences survive a reopen.
//! * Commits in two halves: starting without waiting for locks, waiting for
//!   durability on a thread or in a task, a dropped waiter.
//!
//! Concurrency tests are made deterministic with barriers, and, where a test
//! must know that a thread is blocked on a lock, with a short wait after which
//! the thread must still be unfinished (a blocked thread can only finish
//! early if the database is wrong, so the wait makes the test slower, never
//! flaky in the passing direction).
//!
//! One module per topic (the list above, in order); the shared fixtures (an
//! `Accounts` table, balance reads and writes, a database on a manual
//! clock) are here.

mod async_commit;
mod commit_timestamps;
mod durability;
mod garbage;
mod limits;
mod serializability;
mod timestamps;
mod wound_wait;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use rowtree_db::{
    Code, CommitResult, Database, Error, KeySet, Mutation, Options, ReadRequest,
    ReadWriteTransaction, Value,
};
use rowtree_txn::ManualClock;

const ACCOUNTS: &str =
    "CREATE TABLE Accounts (Id INT64 NOT NULL, Balance INT64 NOT NULL) PRIMARY KEY (Id)";

/// How long a thread that should be blocked on a lock is given to (wrongly)
/// get through.
const BLOCKED_GRACE: Duration = Duration::from_millis(150);

fn accounts_db() -> Database {
    let db = Database::in_memory();
    db.apply_ddl(&[ACCOUNTS]).expect("schema");
    db
}

fn set_balances(db: &Database, balances: &[(i64, i64)]) -> CommitResult {
    let rows = balances
        .iter()
        .map(|&(id, b)| vec![Value::Int64(id), Value::Int64(b)])
        .collect();
    db.write(vec![Mutation::insert_or_update(
        "Accounts",
        &["Id", "Balance"],
        rows,
    )])
    .expect("set balances")
}

fn balance_request(ids: &[i64]) -> ReadRequest {
    ReadRequest::new(
        "Accounts",
        &["Id", "Balance"],
        KeySet::keys(ids.iter().map(|&id| vec![Value::Int64(id)])),
    )
}

fn as_balances(rows: Vec<Vec<Value>>) -> BTreeMap<i64, i64> {
    rows.into_iter()
        .map(|r| match r.as_slice() {
            [Value::Int64(id), Value::Int64(b)] => (*id, *b),
            other => panic!("unexpected row {other:?}"),
        })
        .collect()
}

/// Balances as a strong read sees them.
fn balances(db: &Database) -> BTreeMap<i64, i64> {
    as_balances(
        db.read(&ReadRequest::new(
            "Accounts",
            &["Id", "Balance"],
            KeySet::all(),
        ))
        .expect("read balances"),
    )
}

/// Balances inside a read-write transaction (under shared locks).
fn txn_balances(
    txn: &mut ReadWriteTransaction,
    ids: &[i64],
) -> rowtree_db::Result<BTreeMap<i64, i64>> {
    Ok(as_balances(txn.read(&balance_request(ids))?))
}

fn update_balance(id: i64, balance: i64) -> Mutation {
    Mutation::update(
        "Accounts",
        &["Id", "Balance"],
        vec![vec![Value::Int64(id), Value::Int64(balance)]],
    )
}

fn assert_aborted<T: std::fmt::Debug>(result: rowtree_db::Result<T>, what: &str) {
    match result {
        Err(e @ Error::Aborted { .. }) => {
            assert!(e.is_retryable(), "{what}: Aborted must be retryable");
            assert_eq!(e.code(), Code::Aborted, "{what}");
        }
        other => panic!("{what}: expected Aborted, got {other:?}"),
    }
}

/// Commits one mutation in a fresh transaction, without retries.
trait CommitWith {
    fn commit_with(self, m: Mutation) -> rowtree_db::Result<CommitResult>;
}

impl CommitWith for ReadWriteTransaction {
    fn commit_with(mut self, m: Mutation) -> rowtree_db::Result<CommitResult> {
        self.buffer(m)?;
        self.commit()
    }
}

/// A point in time well inside the supported range: 2023-11-14.
const T0: u64 = 1_700_000_000_000_000_000;
const SECOND: u64 = 1_000_000_000;

fn manual_clock_db(retention: Duration) -> (Database, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(T0));
    let db = Database::in_memory_with(Options {
        clock: clock.clone(),
        version_retention: retention,
        ..Options::default()
    });
    db.apply_ddl(&[ACCOUNTS]).expect("schema");
    (db, clock)
}
