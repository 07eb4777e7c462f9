//! Wound-wait: the older of two conflicting transactions commits, the
//! younger is aborted (retryably); a younger transaction waits for an older
//! lock holder instead of aborting it.

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use rowtree_db::Error;

use crate::{
    accounts_db, assert_aborted, balance_request, balances, set_balances, txn_balances,
    update_balance, CommitWith, BLOCKED_GRACE,
};

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

#[test]
fn a_probe_neither_waits_nor_wounds_and_cannot_commit() {
    let db = accounts_db();
    set_balances(&db, &[(1, 100)]);
    // Begun first, so a plain transaction would be the older one and
    // wound the holder; a probe is younger than everyone.
    let mut probe = db.begin_probe();
    let mut holder = db.begin();
    txn_balances(&mut holder, &[1]).expect("the holder reads");

    // The probe's write needs the row the holder has a shared lock on: it
    // fails at once instead of waiting, and leaves the holder unharmed.
    let started = std::time::Instant::now();
    match probe.apply_dml(vec![update_balance(1, 5)]) {
        Err(Error::DeadlineExceeded { .. }) => {}
        other => panic!("expected DeadlineExceeded, got {other:?}"),
    }
    assert!(
        started.elapsed() < BLOCKED_GRACE,
        "a probe must not wait for a lock ({:?})",
        started.elapsed()
    );
    holder
        .commit_with(update_balance(1, 101))
        .expect("the holder was not wounded by the probe");
    assert_eq!(balances(&db)[&1], 101);

    // Nothing holds the row now: the probe's write goes through, but the
    // probe cannot commit it.
    probe
        .apply_dml(vec![update_balance(1, 7)])
        .expect("the probe writes once the row is free");
    match probe.commit() {
        Err(e @ Error::FailedPrecondition { .. }) => {
            assert!(e.to_string().contains("probe"), "{e}")
        }
        other => panic!("expected FailedPrecondition, got {other:?}"),
    }
    assert_eq!(balances(&db)[&1], 101);
    // Its locks went with it: a plain transaction writes the row at once.
    db.begin()
        .commit_with(update_balance(1, 102))
        .expect("the row is free after the probe");
    assert_eq!(balances(&db)[&1], 102);
}
