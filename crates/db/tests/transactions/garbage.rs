//! The periodic garbage collector skips passes that cannot find anything:
//! no row version written since the last complete pass at a timestamp the
//! horizon has reached.

use std::time::Duration;

use super::{balances, manual_clock_db, set_balances, SECOND};

#[test]
fn a_pass_runs_only_when_a_write_reached_the_horizon() {
    let (db, clock) = manual_clock_db(Duration::from_secs(10));
    set_balances(&db, &[(1, 100)]);
    set_balances(&db, &[(1, 90)]);
    // Nothing is known about what storage held at open: the first pass runs.
    assert!(db.collect_garbage_if_needed().unwrap());
    // Nothing was written since, and the horizon did not move.
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
