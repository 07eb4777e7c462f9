//! Timestamps and read-only transactions: commit timestamps increase
//! strictly, strong reads see every acknowledged commit, reads at a
//! timestamp see exactly the versions committed at or before it, staleness
//! bounds pick the timestamps they promise, reads older than the version
//! retention period fail.

use std::collections::{BTreeMap, HashSet};
use std::thread;
use std::time::Duration;

use rowtree_db::{Code, Database, KeySet, Mutation, Options, ReadRequest, TimestampBound};
use rowtree_txn::Clock;

use crate::{
    accounts_db, as_balances, balance_request, balances, manual_clock_db, set_balances, ACCOUNTS,
    SECOND, T0,
};

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
