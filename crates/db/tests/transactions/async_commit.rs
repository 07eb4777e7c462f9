//! Commits in two halves: resolving and queueing without waiting
//! (`try_start_commit`), then waiting for durability on a thread or in a
//! task (`PendingCommit`). A commit whose waiter goes away still completes
//! and frees its locks.

use std::future::Future;
use std::pin::pin;
use std::sync::{mpsc, Arc};
use std::task::{Context, Poll, Wake, Waker};
use std::thread;
use std::time::Duration;

use rowtree_db::{CommitStart, Database, Mutation, ReadWriteTransaction, Value};

use crate::{accounts_db, balances, set_balances, txn_balances, update_balance};

/// Runs a future to completion on this thread, without an async runtime.
fn block_on<F: Future>(future: F) -> F::Output {
    struct Unpark(thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
        thread::park();
    }
}

/// The balance of account 1 as a new read-write transaction sees it: it
/// needs the row's lock, so it also proves that the lock was released.
/// Fails instead of hanging if it never is.
fn balance_under_lock(db: &Database) -> i64 {
    let db = db.clone();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut txn = db.begin();
        txn.buffer(update_balance(1, -1)).unwrap();
        let seen = txn_balances(&mut txn, &[1]).unwrap()[&1];
        txn.rollback();
        tx.send(seen).ok();
    });
    rx.recv_timeout(Duration::from_secs(10))
        .expect("the row's lock was never released")
}

fn started(start: CommitStart) -> rowtree_db::PendingCommit {
    match start {
        CommitStart::Started(pending) => pending,
        CommitStart::WouldWait(_) => panic!("expected the commit to start without waiting"),
    }
}

#[test]
fn an_uncontended_commit_starts_without_waiting_and_can_be_awaited() {
    let db = accounts_db();
    set_balances(&db, &[(1, 100)]);
    let mut txn = db.begin();
    txn.buffer(update_balance(1, 150)).unwrap();
    let pending = started(txn.try_start_commit().unwrap());
    let result = block_on(pending).expect("commit");
    assert!(db.visible_timestamp() >= result.commit_timestamp);
    assert_eq!(balances(&db)[&1], 150);
    assert_eq!(balance_under_lock(&db), 150);
}

#[test]
fn a_commit_that_would_wait_for_an_older_holder_is_handed_back_intact() {
    let db = accounts_db();
    set_balances(&db, &[(1, 100), (2, 200)]);
    let mut older = db.begin();
    assert_eq!(txn_balances(&mut older, &[1]).unwrap()[&1], 100);

    let mut younger = db.begin();
    // DML (applied now) and a buffered mutation (applied at commit, on the
    // row the older transaction holds).
    younger
        .apply_dml(vec![Mutation::update(
            "Accounts",
            &["Id", "Balance"],
            vec![vec![Value::Int64(2), Value::Int64(222)]],
        )])
        .unwrap();
    younger.buffer(update_balance(1, 111)).unwrap();
    let younger: ReadWriteTransaction = match younger.try_start_commit().unwrap() {
        CommitStart::WouldWait(txn) => txn,
        CommitStart::Started(_) => panic!("the row is locked by an older transaction"),
    };
    // Where waiting is allowed, the same transaction commits once the older
    // one is gone, with its DML and its mutations.
    let committer = thread::spawn(move || younger.start_commit()?.wait());
    thread::sleep(Duration::from_millis(50));
    older.rollback();
    committer.join().unwrap().expect("commit after waiting");
    let now = balances(&db);
    assert_eq!((now[&1], now[&2]), (111, 222));
}

#[test]
fn a_dropped_pending_commit_still_commits_and_releases_its_locks() {
    let db = accounts_db();
    set_balances(&db, &[(1, 100)]);
    let mut txn = db.begin();
    txn.buffer(update_balance(1, 5)).unwrap();
    drop(txn.start_commit().unwrap());
    assert_eq!(balance_under_lock(&db), 5);
    assert_eq!(balances(&db)[&1], 5);
}

#[test]
fn a_commit_future_dropped_mid_wait_still_commits_and_releases_its_locks() {
    let db = accounts_db();
    set_balances(&db, &[(1, 100)]);
    for round in 0..20 {
        let mut txn = db.begin();
        txn.buffer(update_balance(1, round)).unwrap();
        let mut pending = Box::pin(started(txn.try_start_commit().unwrap()));
        // Polled once (a waker registered, as a task awaiting it would),
        // then abandoned, as when the client disconnects.
        let _ = pending
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()));
        drop(pending);
        assert_eq!(balance_under_lock(&db), round);
    }
}

#[test]
fn a_commit_on_a_database_with_simulated_node_capacity_is_handed_back() {
    // Charging a commit's writes waits for its splits' nodes there: a task
    // on an event loop must not do that wait, so it is told to commit where
    // waiting is allowed.
    let db = Database::in_memory_with(rowtree_db::Options {
        node_capacity: Some(1_000.0),
        ..rowtree_db::Options::default()
    });
    db.apply_ddl(&[crate::ACCOUNTS]).expect("schema");
    assert!(db.node_gated());
    assert!(!accounts_db().node_gated());
    set_balances(&db, &[(1, 100)]);
    let mut txn = db.begin();
    txn.buffer(update_balance(1, 150)).unwrap();
    let txn = match txn.try_start_commit().unwrap() {
        CommitStart::WouldWait(txn) => txn,
        CommitStart::Started(_) => panic!("a gated database must not commit inline"),
    };
    txn.commit().expect("commit where waiting is allowed");
    assert_eq!(balances(&db)[&1], 150);
}
