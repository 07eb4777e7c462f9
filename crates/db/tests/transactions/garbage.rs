//! The periodic garbage collector skips passes that cannot find anything:
//! no row version written since the last complete pass at a timestamp the
//! horizon has reached.

use std::time::Duration;

use std::sync::Arc;

use rowtree_db::{Database, Options};
use rowtree_txn::ManualClock;

use super::{balances, manual_clock_db, set_balances, ACCOUNTS, SECOND, T0};

#[test]
fn a_pass_runs_only_when_a_write_reached_the_horizon() {
    let (db, clock) = manual_clock_db(Duration::from_secs(10));
    set_balances(&db, &[(1, 100)]);
    set_balances(&db, &[(1, 90)]);
    // A database created just now held nothing, and both writes are above
    // the horizon (the clock less 10 s): no pass.
    assert!(!db.collect_garbage_if_needed().unwrap());

    // The horizon (the clock less 10 s of retention) passes both writes:
    // the old balance is garbage now, and a pass must run.
    clock.advance(20 * SECOND);
    assert!(db.collect_garbage_if_needed().unwrap());
    assert!(!db.collect_garbage_if_needed().unwrap());
    clock.advance(60 * SECOND);
    assert!(
        !db.collect_garbage_if_needed().unwrap(),
        "a minute without writes leaves nothing to collect"
    );

    // A new write: no pass until the horizon reaches it.
    set_balances(&db, &[(1, 80)]);
    assert!(!db.collect_garbage_if_needed().unwrap());
    clock.advance(20 * SECOND);
    assert!(db.collect_garbage_if_needed().unwrap());
    assert_eq!(balances(&db).get(&1), Some(&80));

    // An explicit pass always runs, whatever the watch says.
    db.collect_garbage().unwrap();
    assert!(!db.collect_garbage_if_needed().unwrap());
}

#[test]
fn a_reopened_database_is_read_once_but_a_new_one_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(T0));
    let open = || {
        Database::open_with(
            dir.path(),
            Options {
                clock: clock.clone(),
                version_retention: Duration::from_secs(10),
                ..Options::default()
            },
        )
        .unwrap()
    };
    let db = open();
    db.apply_ddl(&[ACCOUNTS]).unwrap();
    set_balances(&db, &[(1, 100)]);
    set_balances(&db, &[(1, 90)]);
    assert!(
        !db.collect_garbage_if_needed().unwrap(),
        "a database created empty has nothing to collect before a write passes the horizon"
    );
    drop(db);

    // Reopened, its files may hold anything: the first pass reads them.
    clock.advance(20 * SECOND);
    let db = open();
    assert!(db.collect_garbage_if_needed().unwrap());
    assert!(!db.collect_garbage_if_needed().unwrap());
    assert_eq!(balances(&db).get(&1), Some(&90));
}
