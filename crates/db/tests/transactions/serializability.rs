//! Serializability: write skew is prevented, concurrent read-modify-write
//! transactions lose no update, range reads block phantoms.

use std::collections::BTreeMap;
use std::sync::mpsc;
use std::sync::{Arc, Barrier};
use std::thread;

use rowtree_db::{KeySet, Mutation, ReadRequest, ReadWriteTransaction, Value};

use crate::{
    accounts_db, as_balances, assert_aborted, balances, set_balances, txn_balances, update_balance,
    CommitWith, BLOCKED_GRACE,
};

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
