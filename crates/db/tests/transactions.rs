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
//!
//! Concurrency tests are made deterministic with barriers, and, where a test
//! must know that a thread is blocked on a lock, with a short wait after which
//! the thread must still be unfinished (a blocked thread can only finish
//! early if the database is wrong, so the wait makes the test slower, never
//! flaky in the passing direction).

use std::collections::{BTreeMap, HashSet};
use std::sync::mpsc;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Duration;

use rowtree_db::{
    Code, CommitResult, Database, Error, KeySet, Mutation, Options, ReadRequest,
    ReadWriteTransaction, Timestamp, TimestampBound, Value, PENDING_COMMIT_TIMESTAMP,
};
use rowtree_txn::{Clock, ManualClock};

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

// ---------------------------------------------------------------------------
// Serializability
// ---------------------------------------------------------------------------

/// The write-skew body: read both accounts and withdraw 150 from `from` if
/// the invariant `x + y >= 0` still holds afterwards.
fn withdraw_if_allowed(txn: &mut ReadWriteTransaction, from: i64) -> rowtree_db::Result<bool> {
    let b = txn_balances(txn, &[1, 2])?;
    let sum: i64 = b.values().sum();
    if sum - 150 >= 0 {
        txn.buffer(update_balance(from, b[&from] - 150))?;
        Ok(true)
    } else {
        Ok(false)
    }
}

#[test]
fn write_skew_is_prevented_with_retries() {
    let db = accounts_db();
    for round in 0..50 {
        set_balances(&db, &[(1, 100), (2, 100)]);
        let start = Arc::new(Barrier::new(2));
        let handles: Vec<_> = [1i64, 2]
            .into_iter()
            .map(|from| {
                let db = db.clone();
                let start = start.clone();
                thread::spawn(move || {
                    start.wait();
                    db.run_in_transaction(|txn| withdraw_if_allowed(txn, from))
                        .expect("run_in_transaction retries aborts")
                })
            })
            .collect();
        for h in handles {
            h.join().expect("worker");
        }
        let b = balances(&db);
        let sum: i64 = b.values().sum();
        assert!(sum >= 0, "round {round}: invariant broken: {b:?}");
        assert_eq!(sum, 50, "round {round}: exactly one withdrawal fits: {b:?}");
    }
}

#[test]
fn write_skew_aborts_the_younger_without_retries() {
    let db = accounts_db();
    set_balances(&db, &[(1, 100), (2, 100)]);
    // Begun in this order, so `older` has the smaller (stronger) priority.
    let older = db.begin();
    let younger = db.begin();
    assert!(older.priority() < younger.priority());
    let both_read = Arc::new(Barrier::new(2));
    let run = |mut txn: ReadWriteTransaction, from: i64, both_read: Arc<Barrier>| {
        thread::spawn(move || {
            let b = txn_balances(&mut txn, &[1, 2]);
            // Both transactions have read before either writes.
            both_read.wait();
            let b = b?;
            assert_eq!(b.values().sum::<i64>(), 200, "each sees the initial state");
            txn.buffer(update_balance(from, b[&from] - 150))?;
            txn.commit()
        })
    };
    let h_older = run(older, 1, both_read.clone());
    let h_younger = run(younger, 2, both_read);
    let r_older = h_older.join().expect("older thread");
    let r_younger = h_younger.join().expect("younger thread");
    assert!(r_older.is_ok(), "the older transaction wins: {r_older:?}");
    assert_aborted(r_younger, "the younger transaction");
    assert_eq!(balances(&db), BTreeMap::from([(1, -50), (2, 100)]));
}

#[test]
fn concurrent_increments_lose_no_update() {
    const THREADS: i64 = 16;
    const PER_THREAD: i64 = 200;
    const ROWS: i64 = 8;
    let db = accounts_db();
    set_balances(&db, &(0..ROWS).map(|id| (id, 0)).collect::<Vec<_>>());
    let start = Arc::new(Barrier::new(THREADS as usize));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let db = db.clone();
            let start = start.clone();
            thread::spawn(move || {
                start.wait();
                for i in 0..PER_THREAD {
                    // Spread the threads over the rows in different orders.
                    let id = (t * 3 + i * (t % 3 + 1)) % ROWS;
                    db.run_in_transaction(|txn| {
                        let b = txn_balances(txn, &[id])?;
                        txn.buffer(update_balance(id, b[&id] + 1))
                    })
                    .expect("increment");
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("worker");
    }
    let mut expected: BTreeMap<i64, i64> = (0..ROWS).map(|id| (id, 0)).collect();
    for t in 0..THREADS {
        for i in 0..PER_THREAD {
            *expected
                .entry((t * 3 + i * (t % 3 + 1)) % ROWS)
                .or_default() += 1;
        }
    }
    assert_eq!(balances(&db), expected);
    assert_eq!(
        balances(&db).values().sum::<i64>(),
        THREADS * PER_THREAD,
        "no lost update"
    );
}

#[test]
fn a_range_read_blocks_phantoms() {
    // The older transaction reads every account (a range) and then writes a
    // summary row; a younger insert into the range must wait for it, so the
    // summary counts exactly the rows that existed when it committed.
    let db = accounts_db();
    set_balances(&db, &[(1, 10), (2, 20)]);
    let mut older = db.begin();
    let seen = as_balances(
        older
            .read(&ReadRequest::new(
                "Accounts",
                &["Id", "Balance"],
                KeySet::all(),
            ))
            .expect("range read"),
    );
    let (tx, rx) = mpsc::channel();
    let db2 = db.clone();
    let inserter = thread::spawn(move || {
        let r = db2.begin().commit_with(Mutation::insert(
            "Accounts",
            &["Id", "Balance"],
            vec![vec![Value::Int64(3), Value::Int64(30)]],
        ));
        tx.send(()).ok();
        r
    });
    assert!(
        rx.recv_timeout(BLOCKED_GRACE).is_err(),
        "an insert into a range read by an older transaction must wait"
    );
    let total: i64 = seen.values().sum();
    older.buffer(update_balance(1, 10 + total)).expect("buffer");
    let older_commit = older.commit().expect("older commits");
    let inserted = inserter
        .join()
        .expect("inserter")
        .expect("younger commits after");
    assert!(inserted.commit_timestamp > older_commit.commit_timestamp);
    assert_eq!(balances(&db), BTreeMap::from([(1, 40), (2, 20), (3, 30)]));
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

// ---------------------------------------------------------------------------
// Wound-wait
// ---------------------------------------------------------------------------

#[test]
fn older_wounds_a_younger_that_waits_for_it() {
    let db = accounts_db();
    set_balances(&db, &[(1, 100)]);
    let mut older = db.begin();
    let mut younger = db.begin();
    assert_eq!(
        txn_balances(&mut older, &[1]).expect("older reads")[&1],
        100
    );
    assert_eq!(
        txn_balances(&mut younger, &[1]).expect("younger reads")[&1],
        100
    );

    // The younger commits first: it needs X on the row the older holds S on,
    // so it waits (it may not wound an older transaction).
    let (tx, rx) = mpsc::channel();
    let h = thread::spawn(move || {
        let r = younger.commit_with(update_balance(1, 200));
        tx.send(()).ok();
        r
    });
    assert!(
        rx.recv_timeout(BLOCKED_GRACE).is_err(),
        "the younger must wait for the older's shared lock"
    );
    // Now the older commits: it wounds the waiting younger, which gives up
    // its lock, and the older goes through.
    let committed = older
        .commit_with(update_balance(1, 101))
        .expect("the older commits");
    assert_aborted(h.join().expect("younger thread"), "the waiting younger");
    assert_eq!(balances(&db)[&1], 101);
    assert!(committed.commit_timestamp > 0);
}

#[test]
fn older_wounds_an_idle_younger_and_commits() {
    let db = accounts_db();
    set_balances(&db, &[(1, 100)]);
    let mut older = db.begin();
    let mut younger = db.begin();
    txn_balances(&mut older, &[1]).expect("older reads");
    txn_balances(&mut younger, &[1]).expect("younger reads");

    // The older commits while the younger sits idle holding its shared lock.
    let h = thread::spawn(move || older.commit_with(update_balance(1, 101)));
    thread::sleep(BLOCKED_GRACE);
    // The younger learns it was wounded at its next call and cannot commit.
    assert_aborted(
        younger.commit_with(update_balance(1, 200)),
        "the wounded younger",
    );
    h.join().expect("older thread").expect("the older commits");
    assert_eq!(balances(&db)[&1], 101);
}

#[test]
fn a_wounded_transaction_releases_its_locks_when_told_it_aborted() {
    // Spanner releases a wounded transaction's locks when it aborts it; here
    // wounding is cooperative, but once the victim has been *told* it is
    // aborted (its read fails with ABORTED) its locks must be gone, even if
    // the client has not dropped the transaction object yet.
    let db = accounts_db();
    set_balances(&db, &[(1, 100), (2, 100)]);
    let mut older = db.begin();
    let mut younger = db.begin();
    txn_balances(&mut older, &[1]).expect("older reads");
    txn_balances(&mut younger, &[1]).expect("younger reads");

    let (tx, rx) = mpsc::channel();
    let h = thread::spawn(move || {
        let r = older.commit_with(update_balance(1, 101));
        tx.send(()).ok();
        r
    });
    // Wait until the older has wounded the younger.
    let mut wounded = false;
    for _ in 0..200 {
        match younger.read(&balance_request(&[2])) {
            Err(Error::Aborted { .. }) => {
                wounded = true;
                break;
            }
            Ok(_) => thread::sleep(Duration::from_millis(5)),
            Err(e) => panic!("unexpected error {e}"),
        }
    }
    assert!(wounded, "the younger was never wounded");
    let released = rx.recv_timeout(Duration::from_secs(2)).is_ok();
    drop(younger);
    let r = h.join().expect("older thread");
    assert!(
        released,
        "the older stayed blocked behind a transaction that had already been told it aborted"
    );
    r.expect("the older commits");
}

#[test]
fn younger_waits_for_an_older_lock_holder_without_aborting() {
    let db = accounts_db();
    set_balances(&db, &[(1, 100)]);
    let mut older = db.begin();
    txn_balances(&mut older, &[1]).expect("older reads");

    let (tx, rx) = mpsc::channel();
    let db2 = db.clone();
    let h = thread::spawn(move || {
        // Begun after `older`, so younger: a blind write of the row.
        let r = db2.begin().commit_with(update_balance(1, 500));
        tx.send(()).ok();
        r
    });
    assert!(
        rx.recv_timeout(BLOCKED_GRACE).is_err(),
        "the younger must wait while the older holds its shared lock"
    );
    let older_commit = older
        .commit_with(update_balance(1, 101))
        .expect("the older commits");
    let younger_commit = h
        .join()
        .expect("younger thread")
        .expect("the younger proceeds after the older commits, without aborting");
    assert!(younger_commit.commit_timestamp > older_commit.commit_timestamp);
    assert_eq!(
        balances(&db)[&1],
        500,
        "the younger's write is the last one"
    );
}

// ---------------------------------------------------------------------------
// Timestamps and read-only transactions
// ---------------------------------------------------------------------------

#[test]
fn commit_timestamps_increase_strictly_and_strong_reads_see_commits() {
    let db = accounts_db();
    let threads: Vec<_> = (0..4i64)
        .map(|t| {
            let db = db.clone();
            thread::spawn(move || {
                let mut stamps = Vec::new();
                for i in 0..50 {
                    let c = set_balances(&db, &[(t, i)]);
                    // A strong read started after the commit was acknowledged sees it.
                    let ro = db.read_only(TimestampBound::Strong).expect("strong");
                    assert!(ro.read_timestamp() >= c.commit_timestamp);
                    let seen = as_balances(ro.read(&balance_request(&[t])).expect("read"));
                    assert_eq!(seen[&t], i, "strong read after commit {i} of thread {t}");
                    stamps.push(c.commit_timestamp);
                }
                stamps
            })
        })
        .collect();
    let mut all = HashSet::new();
    for h in threads {
        let stamps = h.join().expect("worker");
        for w in stamps.windows(2) {
            assert!(w[0] < w[1], "one thread's commits: {} then {}", w[0], w[1]);
        }
        for s in stamps {
            assert_eq!(
                s % 1000,
                0,
                "commit timestamps have microsecond granularity"
            );
            assert!(all.insert(s), "commit timestamp {s} was given twice");
        }
    }
}

#[test]
fn read_at_each_commit_timestamp_sees_exactly_that_version() {
    let db = accounts_db();
    let mut history = Vec::new();
    for i in 0..10 {
        history.push((set_balances(&db, &[(1, i)]), i));
    }
    let delete = db
        .write(vec![Mutation::delete("Accounts", KeySet::all())])
        .expect("delete");
    for (c, i) in &history {
        let ro = db
            .read_only(TimestampBound::ReadTimestamp(c.commit_timestamp))
            .expect("read-only");
        assert_eq!(ro.read_timestamp(), c.commit_timestamp);
        assert_eq!(balances_at(&ro), BTreeMap::from([(1, *i)]), "at commit {i}");
        // Just before the commit, the previous version.
        let before = db
            .read_only(TimestampBound::ReadTimestamp(c.commit_timestamp - 1))
            .expect("read-only");
        let expected: BTreeMap<i64, i64> = if *i == 0 {
            BTreeMap::new()
        } else {
            BTreeMap::from([(1, i - 1)])
        };
        assert_eq!(balances_at(&before), expected, "just before commit {i}");
    }
    let ro = db
        .read_only(TimestampBound::ReadTimestamp(delete.commit_timestamp))
        .expect("read-only");
    assert!(balances_at(&ro).is_empty());
}

fn balances_at(ro: &rowtree_db::ReadOnlyTransaction) -> BTreeMap<i64, i64> {
    as_balances(
        ro.read(&ReadRequest::new(
            "Accounts",
            &["Id", "Balance"],
            KeySet::all(),
        ))
        .expect("read"),
    )
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

#[test]
fn staleness_bounds_pick_the_promised_timestamps() {
    let (db, clock) = manual_clock_db(Duration::from_secs(3600));
    let first = set_balances(&db, &[(1, 1)]);
    clock.advance(10 * SECOND);
    let second = set_balances(&db, &[(1, 2)]);
    assert!(second.commit_timestamp >= T0 + 10 * SECOND);
    let now = clock.now_nanos();

    // Exactly 5 s ago: between the commits, so the first version.
    let ro = db
        .read_only(TimestampBound::ExactStaleness(Duration::from_secs(5)))
        .expect("exact staleness");
    assert_eq!(ro.read_timestamp(), now - 5 * SECOND);
    assert_eq!(balances_at(&ro), BTreeMap::from([(1, 1)]));

    // Exactly 20 s ago: before anything was written.
    let ro = db
        .read_only(TimestampBound::ExactStaleness(Duration::from_secs(20)))
        .expect("exact staleness");
    assert_eq!(ro.read_timestamp(), now - 20 * SECOND);
    assert!(balances_at(&ro).is_empty());

    // At most 5 s stale: Rowtree reads the freshest data.
    let ro = db
        .read_only(TimestampBound::MaxStaleness(Duration::from_secs(5)))
        .expect("max staleness");
    assert!(ro.read_timestamp() >= now - 5 * SECOND);
    assert!(ro.read_timestamp() >= second.commit_timestamp);
    assert_eq!(balances_at(&ro), BTreeMap::from([(1, 2)]));

    // No older than the first commit: also the freshest.
    let ro = db
        .read_only(TimestampBound::MinReadTimestamp(first.commit_timestamp))
        .expect("min read timestamp");
    assert!(ro.read_timestamp() >= second.commit_timestamp);
    assert_eq!(balances_at(&ro), BTreeMap::from([(1, 2)]));
}

#[test]
fn a_read_in_the_future_waits_and_later_commits_land_after_it() {
    let (db, clock) = manual_clock_db(Duration::from_secs(3600));
    set_balances(&db, &[(1, 1)]);
    let future = clock.now_nanos() + SECOND;
    // Nobody commits, so only the clock can make `future` visible.
    let ticker = {
        let clock = clock.clone();
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(50));
            clock.advance(2 * SECOND);
        })
    };
    let ro = db
        .read_only(TimestampBound::MinReadTimestamp(future))
        .expect("min read timestamp in the future");
    ticker.join().expect("ticker");
    assert!(ro.read_timestamp() >= future);
    assert_eq!(balances_at(&ro), BTreeMap::from([(1, 1)]));

    let at = db
        .read_only(TimestampBound::ReadTimestamp(future))
        .expect("read at a now visible timestamp");
    assert_eq!(balances_at(&at), BTreeMap::from([(1, 1)]));
    // A commit after the read must not change what the read saw: it lands
    // after every timestamp that has been read.
    let later = set_balances(&db, &[(1, 2)]);
    assert!(later.commit_timestamp > ro.read_timestamp());
    assert_eq!(balances_at(&at), BTreeMap::from([(1, 1)]), "repeatable");
}

#[test]
fn reads_older_than_the_retention_period_fail() {
    let db = Database::in_memory_with(Options {
        version_retention: Duration::from_millis(200),
        ..Options::default()
    });
    db.apply_ddl(&[ACCOUNTS]).expect("schema");
    let first = set_balances(&db, &[(1, 1)]);
    let opened_early = db
        .read_only(TimestampBound::ReadTimestamp(first.commit_timestamp))
        .expect("a fresh timestamp is readable");
    let _second = set_balances(&db, &[(1, 2)]);
    thread::sleep(Duration::from_millis(400));

    let err = db
        .read_only(TimestampBound::ReadTimestamp(first.commit_timestamp))
        .and_then(|ro| ro.read(&balance_request(&[1])))
        .expect_err("the first version is past the retention period");
    assert_eq!(err.code(), Code::FailedPrecondition, "{err}");
    assert!(!err.is_retryable());

    let err = db
        .read_only(TimestampBound::ExactStaleness(Duration::from_secs(1)))
        .and_then(|ro| ro.read(&balance_request(&[1])))
        .expect_err("1 s stale is past a 200 ms retention period");
    assert_eq!(err.code(), Code::FailedPrecondition, "{err}");

    let err = opened_early
        .read(&balance_request(&[1]))
        .expect_err("a snapshot that aged past the retention period");
    assert_eq!(err.code(), Code::FailedPrecondition, "{err}");

    // Strong and bounded-staleness reads of an idle database still work.
    assert_eq!(balances(&db), BTreeMap::from([(1, 2)]));
    let ro = db
        .read_only(TimestampBound::MaxStaleness(Duration::from_millis(100)))
        .expect("max staleness");
    assert_eq!(balances_at(&ro), BTreeMap::from([(1, 2)]));
}

// ---------------------------------------------------------------------------
// Commit limits
// ---------------------------------------------------------------------------

#[test]
fn more_than_80000_mutations_are_rejected() {
    let db = accounts_db();
    // 40,001 rows x 2 columns = 80,002 mutations.
    let rows: Vec<Vec<Value>> = (0..40_001)
        .map(|i| vec![Value::Int64(i), Value::Int64(0)])
        .collect();
    let err = db
        .write(vec![Mutation::insert("Accounts", &["Id", "Balance"], rows)])
        .expect_err("80,002 mutations");
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("too many mutations") && msg.contains("80000"),
        "{msg}"
    );
    assert!(balances(&db).is_empty(), "nothing of it was written");

    // Deletes count one per key.
    let keys = (0..80_001).map(|i| vec![Value::Int64(i)]);
    let err = db
        .write(vec![Mutation::delete("Accounts", KeySet::keys(keys))])
        .expect_err("80,001 deleted keys");
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");

    // Split over several mutations of one transaction, it is still too many.
    let half = |from: i64| {
        Mutation::insert(
            "Accounts",
            &["Id", "Balance"],
            (from..from + 20_001)
                .map(|i| vec![Value::Int64(i), Value::Int64(0)])
                .collect(),
        )
    };
    let err = db
        .write(vec![half(0), half(20_001)])
        .expect_err("2 x 40,002 mutations");
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
}

#[test]
fn exactly_80000_mutations_are_accepted() {
    let db = Database::in_memory();
    db.apply_ddl(&["CREATE TABLE Wide (Id INT64 NOT NULL, C1 INT64, C2 INT64, C3 INT64, C4 INT64, C5 INT64, C6 INT64, C7 INT64, C8 INT64, C9 INT64) PRIMARY KEY (Id)"])
        .expect("schema");
    let columns = ["Id", "C1", "C2", "C3", "C4", "C5", "C6", "C7", "C8", "C9"];
    let rows: Vec<Vec<Value>> = (0..8_000)
        .map(|i| (0..10).map(|c| Value::Int64(i * 10 + c)).collect())
        .collect();
    let c = db
        .write(vec![Mutation::insert("Wide", &columns, rows)])
        .expect("80,000 mutations fit");
    assert_eq!(c.mutation_count, 80_000);
}

const BLOBS: &str =
    "CREATE TABLE Blobs (Id INT64 NOT NULL, B BYTES(MAX), S STRING(MAX)) PRIMARY KEY (Id)";

#[test]
fn a_cell_over_10_mib_is_rejected() {
    let db = Database::in_memory();
    db.apply_ddl(&[BLOBS]).expect("schema");
    let put = |id: i64, col: &str, v: Value| {
        db.write(vec![Mutation::insert_or_update(
            "Blobs",
            &["Id", col],
            vec![vec![Value::Int64(id), v]],
        )])
    };
    put(1, "B", Value::Bytes(vec![7; 10 << 20])).expect("exactly 10 MiB fits");
    let err = put(2, "B", Value::Bytes(vec![7; (10 << 20) + 1])).expect_err("10 MiB + 1");
    assert!(!err.is_retryable());
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert!(err.to_string().contains("10 MiB"), "{err}");
    // Also through an update of an existing row.
    let err = put(1, "B", Value::Bytes(vec![7; (10 << 20) + 1])).expect_err("update to 10 MiB + 1");
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    let ids = db
        .read(&ReadRequest::new("Blobs", &["Id"], KeySet::all()))
        .expect("read");
    assert_eq!(ids, vec![vec![Value::Int64(1)]]);
}

#[test]
fn a_string_max_value_over_2621440_characters_is_rejected() {
    // Spanner: STRING(MAX) holds at most 2,621,440 characters (10 MiB / 4).
    let db = Database::in_memory();
    db.apply_ddl(&[BLOBS]).expect("schema");
    let s = "x".repeat(2_621_441);
    let err = db
        .write(vec![Mutation::insert(
            "Blobs",
            &["Id", "S"],
            vec![vec![Value::Int64(1), Value::String(s)]],
        )])
        .expect_err("2,621,441 characters in STRING(MAX)");
    assert!(!err.is_retryable(), "{err}");
}

#[test]
fn a_key_over_8_kib_is_rejected() {
    let db = Database::in_memory();
    db.apply_ddl(&[
        "CREATE TABLE Named (Name STRING(MAX) NOT NULL, Note STRING(MAX)) PRIMARY KEY (Name)",
        "CREATE INDEX NamedByNote ON Named(Note)",
    ])
    .expect("schema");
    let write = |name: String, note: String| {
        db.write(vec![Mutation::insert(
            "Named",
            &["Name", "Note"],
            vec![vec![Value::String(name), Value::String(note)]],
        )])
    };
    write("k".repeat(8000), "short".into()).expect("a key under 8 KiB fits");
    let err = write("k".repeat(8 * 1024 + 1), "short".into()).expect_err("an 8 KiB + 1 key");
    assert!(!err.is_retryable(), "{err}");
    assert!(err.to_string().contains("Key too large"), "{err}");
    // An index key over 8 KiB is refused too, and the row is not written.
    let err = write("small".into(), "n".repeat(9000)).expect_err("an index key over 8 KiB");
    assert!(err.to_string().contains("Key too large"), "{err}");
    let rows = db
        .read(&ReadRequest::new("Named", &["Note"], KeySet::all()))
        .expect("read");
    assert_eq!(rows, vec![vec![Value::String("short".into())]]);
}

// ---------------------------------------------------------------------------
// Commit timestamps in data
// ---------------------------------------------------------------------------

const EVENTS: &[&str] = &[
    "CREATE TABLE Events (Id INT64 NOT NULL, Ts TIMESTAMP OPTIONS (allow_commit_timestamp = true), Plain TIMESTAMP) PRIMARY KEY (Id)",
    "CREATE INDEX EventsByTs ON Events(Ts)",
    "CREATE TABLE Log (Ts TIMESTAMP NOT NULL OPTIONS (allow_commit_timestamp = true), Seq INT64 NOT NULL, Note STRING(MAX)) PRIMARY KEY (Ts, Seq)",
    "CREATE TABLE LogLines (Ts TIMESTAMP NOT NULL OPTIONS (allow_commit_timestamp = true), Seq INT64 NOT NULL, Line INT64 NOT NULL) PRIMARY KEY (Ts, Seq, Line), INTERLEAVE IN PARENT Log ON DELETE CASCADE",
];

fn pending() -> Value {
    Value::Timestamp(PENDING_COMMIT_TIMESTAMP)
}

fn ts_value(c: &CommitResult) -> Value {
    Value::Timestamp(c.timestamp())
}

#[test]
fn pending_commit_timestamp_becomes_the_commit_timestamp() {
    let db = Database::in_memory();
    db.apply_ddl(EVENTS).expect("schema");
    let c1 = db
        .write(vec![Mutation::insert(
            "Events",
            &["Id", "Ts"],
            vec![
                vec![Value::Int64(1), pending()],
                vec![Value::Int64(2), pending()],
            ],
        )])
        .expect("insert with the commit timestamp");
    let c2 = db
        .write(vec![Mutation::update(
            "Events",
            &["Id", "Ts"],
            vec![vec![Value::Int64(2), pending()]],
        )])
        .expect("update with the commit timestamp");
    assert!(c2.commit_timestamp > c1.commit_timestamp);
    let rows = db
        .read(&ReadRequest::new("Events", &["Id", "Ts"], KeySet::all()))
        .expect("read");
    assert_eq!(
        rows,
        vec![
            vec![Value::Int64(1), ts_value(&c1)],
            vec![Value::Int64(2), ts_value(&c2)],
        ]
    );
    // The index holds the commit timestamps too, in order.
    let entries = db
        .read(&ReadRequest::new("Events", &["Ts", "Id"], KeySet::all()).with_index("EventsByTs"))
        .expect("index read");
    assert_eq!(
        entries,
        vec![
            vec![ts_value(&c1), Value::Int64(1)],
            vec![ts_value(&c2), Value::Int64(2)],
        ]
    );
}

#[test]
fn pending_commit_timestamp_is_refused_without_the_option() {
    let db = Database::in_memory();
    db.apply_ddl(EVENTS).expect("schema");
    let err = db
        .write(vec![Mutation::insert(
            "Events",
            &["Id", "Plain"],
            vec![vec![Value::Int64(1), pending()]],
        )])
        .expect_err("Plain has no allow_commit_timestamp");
    assert_eq!(err.code(), Code::FailedPrecondition, "{err}");
    assert!(err.to_string().contains("allow_commit_timestamp"), "{err}");
    assert!(db
        .read(&ReadRequest::new("Events", &["Id"], KeySet::all()))
        .expect("read")
        .is_empty());
}

#[test]
fn the_largest_timestamp_is_an_ordinary_value() {
    // 9999-12-31T23:59:59.999999999Z is a valid TIMESTAMP. Writing it to a
    // column without allow_commit_timestamp must store it, not mistake it
    // for "the commit timestamp".
    let db = Database::in_memory();
    db.apply_ddl(EVENTS).expect("schema");
    let max = Timestamp::from_seconds_nanos(253_402_300_799, 999_999_999).expect("in range");
    db.write(vec![Mutation::insert(
        "Events",
        &["Id", "Plain"],
        vec![vec![Value::Int64(1), Value::Timestamp(max)]],
    )])
    .expect("the largest TIMESTAMP is a value like any other");
    let rows = db
        .read(&ReadRequest::new("Events", &["Plain"], KeySet::all()))
        .expect("read");
    assert_eq!(rows, vec![vec![Value::Timestamp(max)]]);
}

#[test]
fn pending_commit_timestamp_in_key_columns() {
    let db = Database::in_memory();
    db.apply_ddl(EVENTS).expect("schema");
    // A parent and its child keyed by the same commit timestamp, in one commit.
    let c = db
        .write(vec![
            Mutation::insert(
                "Log",
                &["Ts", "Seq", "Note"],
                vec![vec![
                    pending(),
                    Value::Int64(1),
                    Value::String("first".into()),
                ]],
            ),
            Mutation::insert(
                "LogLines",
                &["Ts", "Seq", "Line"],
                vec![
                    vec![pending(), Value::Int64(1), Value::Int64(1)],
                    vec![pending(), Value::Int64(1), Value::Int64(2)],
                ],
            ),
        ])
        .expect("rows keyed by the commit timestamp");
    let c2 = db
        .write(vec![Mutation::insert(
            "Log",
            &["Ts", "Seq", "Note"],
            vec![vec![
                pending(),
                Value::Int64(1),
                Value::String("second".into()),
            ]],
        )])
        .expect("a second row keyed by its own commit timestamp");
    let log = db
        .read(&ReadRequest::new(
            "Log",
            &["Ts", "Seq", "Note"],
            KeySet::all(),
        ))
        .expect("read");
    assert_eq!(
        log,
        vec![
            vec![ts_value(&c), Value::Int64(1), Value::String("first".into())],
            vec![
                ts_value(&c2),
                Value::Int64(1),
                Value::String("second".into())
            ],
        ]
    );
    let lines = db
        .read(&ReadRequest::new(
            "LogLines",
            &["Ts", "Seq", "Line"],
            KeySet::key(vec![ts_value(&c), Value::Int64(1), Value::Int64(2)]),
        ))
        .expect("point read by the commit timestamp");
    assert_eq!(
        lines,
        vec![vec![ts_value(&c), Value::Int64(1), Value::Int64(2)]]
    );
    // Deleting the parent by its (real) key cascades to both children.
    db.write(vec![Mutation::delete(
        "Log",
        KeySet::key(vec![ts_value(&c), Value::Int64(1)]),
    )])
    .expect("delete");
    let lines = db
        .read(&ReadRequest::new("LogLines", &["Line"], KeySet::all()))
        .expect("read");
    assert!(lines.is_empty(), "{lines:?}");
}

// ---------------------------------------------------------------------------
// Durability across reopen
// ---------------------------------------------------------------------------

const DURABLE_SCHEMA: &[&str] = &[
    "CREATE SEQUENCE Seq OPTIONS (sequence_kind = 'bit_reversed_positive')",
    "CREATE TABLE Singers (Id INT64 NOT NULL DEFAULT (GET_NEXT_SEQUENCE_VALUE(SEQUENCE Seq)), Name STRING(MAX)) PRIMARY KEY (Id)",
    "CREATE TABLE Albums (Id INT64 NOT NULL, AlbumId INT64 NOT NULL, Title STRING(MAX)) PRIMARY KEY (Id, AlbumId), INTERLEAVE IN PARENT Singers ON DELETE CASCADE",
    "CREATE INDEX AlbumsByTitle ON Albums(Title)",
];

fn singers(db: &Database) -> Vec<Vec<Value>> {
    db.read(&ReadRequest::new("Singers", &["Id", "Name"], KeySet::all()))
        .expect("read singers")
}

fn next_values(db: &Database, n: usize) -> Vec<i64> {
    let mut out = Vec::new();
    db.run_in_transaction(|txn| {
        out.clear();
        for _ in 0..n {
            out.push(txn.next_sequence_value("Seq")?);
        }
        Ok(())
    })
    .expect("sequence values");
    out
}

#[test]
fn schema_data_history_and_sequences_survive_reopen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut used: HashSet<i64> = HashSet::new();
    let (ddl, rows, albums, first_commit, last_commit) = {
        let db = Database::open(dir.path()).expect("open");
        db.apply_ddl(DURABLE_SCHEMA).expect("schema");
        let first = db
            .write(vec![Mutation::insert(
                "Singers",
                &["Name"],
                vec![
                    vec![Value::String("Ann".into())],
                    vec![Value::String("Bob".into())],
                ],
            )])
            .expect("insert singers");
        let rows = singers(&db);
        assert_eq!(rows.len(), 2);
        let ann = rows
            .iter()
            .find(|r| r[1] == Value::String("Ann".into()))
            .expect("Ann")[0]
            .clone();
        let last = db
            .write(vec![
                Mutation::update(
                    "Singers",
                    &["Id", "Name"],
                    vec![vec![ann.clone(), Value::String("Anne".into())]],
                ),
                Mutation::insert(
                    "Albums",
                    &["Id", "AlbumId", "Title"],
                    vec![vec![
                        ann.clone(),
                        Value::Int64(1),
                        Value::String("Blue".into()),
                    ]],
                ),
            ])
            .expect("update and insert album");
        for r in &rows {
            let Value::Int64(id) = r[0] else { panic!("id") };
            used.insert(id);
        }
        used.extend(next_values(&db, 3));
        (db.ddl(), singers(&db), album_index(&db), first, last)
    };

    let db = Database::open(dir.path()).expect("reopen");
    assert_eq!(db.ddl(), ddl, "schema survives");
    assert_eq!(singers(&db), rows, "data survives");
    assert_eq!(album_index(&db), albums, "index survives");
    // MVCC history survives: the first version is still readable.
    let ro = db
        .read_only(TimestampBound::ReadTimestamp(first_commit.commit_timestamp))
        .expect("read at the first commit");
    let names: Vec<Value> = ro
        .read(&ReadRequest::new("Singers", &["Name"], KeySet::all()))
        .expect("read")
        .into_iter()
        .map(|mut r| r.remove(0))
        .collect();
    assert!(names.contains(&Value::String("Ann".into())), "{names:?}");
    // A read-only transaction holds the database open.
    drop(ro);
    // New commits come after every commit before the reopen.
    let after = db
        .write(vec![Mutation::insert(
            "Singers",
            &["Name"],
            vec![vec![Value::String("Cy".into())]],
        )])
        .expect("insert after reopen");
    assert!(after.commit_timestamp > last_commit.commit_timestamp);
    // The sequence never repeats a value across reopens.
    for id in next_values(&db, 5) {
        assert!(used.insert(id), "sequence value {id} repeated after reopen");
    }
    for r in singers(&db) {
        let Value::Int64(id) = r[0] else { panic!("id") };
        if r[1] == Value::String("Cy".into()) {
            assert!(used.insert(id), "row id {id} repeated after reopen");
        }
    }
    drop(db);
    let db = Database::open(dir.path()).expect("reopen twice");
    for id in next_values(&db, 5) {
        assert!(
            used.insert(id),
            "sequence value {id} repeated after a second reopen"
        );
    }
    assert_eq!(singers(&db).len(), 3);
}

fn album_index(db: &Database) -> Vec<Vec<Value>> {
    db.read(
        &ReadRequest::new("Albums", &["Title", "Id", "AlbumId"], KeySet::all())
            .with_index("AlbumsByTitle"),
    )
    .expect("index read")
}

#[test]
fn commit_timestamps_stay_ahead_when_the_clock_goes_back_across_reopen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let options = |at: u64| Options {
        clock: Arc::new(ManualClock::new(at)),
        ..Options::default()
    };
    let before = {
        let db = Database::open_with(dir.path(), options(T0 + 100 * SECOND)).expect("open");
        db.apply_ddl(&[ACCOUNTS]).expect("schema");
        set_balances(&db, &[(1, 1)])
    };
    // The machine's clock stepped back 100 s while the database was closed.
    let db = Database::open_with(dir.path(), options(T0)).expect("reopen");
    assert_eq!(
        balances(&db),
        BTreeMap::from([(1, 1)]),
        "strong reads see old commits"
    );
    let after = set_balances(&db, &[(1, 2)]);
    assert!(after.commit_timestamp > before.commit_timestamp);
    assert_eq!(balances(&db), BTreeMap::from([(1, 2)]));
}

#[test]
fn a_directory_in_use_is_refused_clearly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let _first = Database::open(dir.path()).expect("first open");
    let err = match Database::open(dir.path()) {
        Ok(_) => panic!("a second open of the same directory must fail"),
        Err(e) => e,
    };
    assert_eq!(err.code(), Code::FailedPrecondition, "{err}");
    assert!(err.to_string().contains("in use"), "{err}");
}

/// Views, roles, grants and the proto bundle are replayed from the DDL log
/// when a database is reopened, and what depends on them is still enforced.
#[test]
fn views_roles_and_proto_bundle_survive_reopen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ddl = {
        let db = Database::open(dir.path()).expect("open");
        db.apply_ddl(&[
            "CREATE TABLE contacts (contact_id INT64, email STRING(MAX)) PRIMARY KEY (contact_id)",
            "CREATE VIEW contacts_emails SQL SECURITY INVOKER AS SELECT c.email FROM contacts AS c",
            "CREATE OR REPLACE VIEW contacts_emails SQL SECURITY DEFINER AS \
             SELECT c.email, c.contact_id FROM contacts AS c",
            "CREATE ROLE parent",
            "CREATE ROLE child",
            "GRANT SELECT ON TABLE contacts TO ROLE parent",
            "GRANT SELECT(email) ON TABLE contacts TO ROLE child",
            "GRANT ROLE parent TO ROLE child",
            "CREATE PROTO BUNDLE (examples.spanner.music.SingerInfo, examples.spanner.music.Genre,)",
            "ALTER PROTO BUNDLE INSERT (examples.spanner.music.CustomerInfo) \
             DELETE (examples.spanner.music.Genre)",
            "ALTER DATABASE db SET OPTIONS (version_retention_period = '7d', \
             default_leader = 'us-east1', optimizer_version = 5, enable_key_visualizer = true)",
        ])
        .expect("schema");
        db.ddl()
    };
    let db = Database::open(dir.path()).expect("reopen");
    assert_eq!(db.ddl(), ddl, "schema survives");
    let catalog = db.catalog();
    assert_eq!(
        catalog.proto_bundle(),
        Some(
            &[
                "examples.spanner.music.SingerInfo".to_string(),
                "examples.spanner.music.CustomerInfo".to_string()
            ][..]
        )
    );
    let view = catalog.view("CONTACTS_EMAILS").expect("view survives");
    assert_eq!(view.security, rowtree_schema::ast::SqlSecurity::Definer);
    assert_eq!(
        view.query_text,
        "SELECT c.email, c.contact_id FROM contacts AS c"
    );
    assert_eq!(catalog.roles().count(), 2);
    let err = db
        .apply_ddl_statement("DROP TABLE contacts")
        .expect_err("a view reads contacts");
    assert!(
        err.to_string().contains("dependent views: contacts_emails"),
        "{err}"
    );
    let err = db
        .apply_ddl_statement("DROP ROLE parent")
        .expect_err("parent has privileges");
    assert!(err.to_string().contains("Cannot drop role parent"), "{err}");
}
