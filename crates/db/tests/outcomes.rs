//! Commit outcomes recorded with tagged commits (`rowtree_db::outcome`):
//! what a cluster node that lost a forwarded commit's answer looks up.

use std::sync::Arc;

use rowtree_db::outcome::OUTCOME_RETENTION;
use rowtree_db::{Code, Database, KeySet, Mutation, Options, OutcomeTag, ReadRequest, Value};
use rowtree_txn::ManualClock;

/// 2026-11-28 in nanoseconds: the manual clock's start.
const START: u64 = 1_764_288_000_000_000_000;
const SECOND: u64 = 1_000_000_000;

fn database(clock: &Arc<ManualClock>) -> Database {
    let db = Database::in_memory_with(Options {
        clock: clock.clone(),
        ..Options::default()
    });
    db.apply_ddl(&["CREATE TABLE Kv (K INT64 NOT NULL, V STRING(MAX)) PRIMARY KEY (K)"])
        .expect("schema");
    db
}

fn put(k: i64) -> Mutation {
    Mutation::insert(
        "Kv",
        &["K", "V"],
        vec![vec![Value::Int64(k), Value::String(format!("v{k}"))]],
    )
}

fn keys(db: &Database) -> Vec<i64> {
    db.read(&ReadRequest::new("Kv", &["K"], KeySet::all()))
        .expect("read")
        .into_iter()
        .map(|row| match row[0] {
            Value::Int64(k) => k,
            ref other => panic!("unexpected key {other:?}"),
        })
        .collect()
}

fn tag(id: u8, not_after: u64) -> OutcomeTag {
    OutcomeTag {
        id: [id; 16],
        not_after,
    }
}

#[test]
fn a_tagged_commit_records_its_timestamp_and_an_untagged_one_nothing() {
    let clock = Arc::new(ManualClock::new(START));
    let db = database(&clock);
    let soon = START + SECOND;
    let tagged = tag(1, soon);
    let mut txn = db.begin();
    txn.record_outcome(tagged);
    txn.buffer_all(vec![put(1)]).unwrap();
    let result = txn.commit().expect("commit");
    assert_eq!(
        db.recorded_outcome(&tagged).unwrap(),
        Some(result.commit_timestamp)
    );

    // Another id, and the same id with another deadline, were never
    // committed.
    db.write(vec![put(2)]).expect("untagged commit");
    assert_eq!(db.recorded_outcome(&tag(2, soon)).unwrap(), None);
    assert_eq!(db.recorded_outcome(&tag(1, soon + 1)).unwrap(), None);

    // Settled at the deadline (or at once, when the caller knows the
    // process the commit went to is gone): the found one by its
    // timestamp, the others as not committed.
    assert_eq!(db.commit_outcome(&tag(3, soon), true).unwrap(), None);
    clock.set(soon + 1);
    assert_eq!(
        db.commit_outcome(&tagged, false).unwrap(),
        Some(result.commit_timestamp)
    );
    assert_eq!(db.commit_outcome(&tag(2, soon), false).unwrap(), None);
}

#[test]
fn a_commit_past_its_tags_deadline_fails_and_writes_nothing() {
    let clock = Arc::new(ManualClock::new(START));
    let db = database(&clock);
    let late = tag(7, START - 1);
    let mut txn = db.begin();
    txn.record_outcome(late);
    txn.buffer_all(vec![put(1)]).unwrap();
    let e = txn.commit().expect_err("too late to commit");
    assert_eq!(e.code(), Code::Aborted, "{e}");
    assert!(e.to_string().contains("in time"), "{e}");
    assert_eq!(keys(&db), Vec::<i64>::new());
    assert_eq!(db.recorded_outcome(&late).unwrap(), None);
    assert_eq!(db.commit_outcome(&late, false).unwrap(), None);
}

#[test]
fn a_tagged_commit_with_nothing_to_write_still_records_its_outcome() {
    let clock = Arc::new(ManualClock::new(START));
    let db = database(&clock);
    let tagged = tag(9, START + SECOND);
    let mut txn = db.begin();
    txn.record_outcome(tagged);
    let result = txn.commit().expect("empty commit");
    assert_eq!(
        db.recorded_outcome(&tagged).unwrap(),
        Some(result.commit_timestamp)
    );
}

#[test]
fn outcomes_are_pruned_once_their_retention_has_passed() {
    let clock = Arc::new(ManualClock::new(START));
    let db = database(&clock);
    let first = tag(4, START + SECOND);
    let second = tag(5, START + 100 * SECOND);
    for (k, t) in [(4, first), (5, second)] {
        let mut txn = db.begin();
        txn.record_outcome(t);
        txn.buffer_all(vec![put(k)]).unwrap();
        txn.commit().unwrap();
    }
    assert_eq!(db.prune_outcomes().unwrap(), 0);
    // Just past the first one's retention: it goes, the second stays.
    clock.set(first.not_after + OUTCOME_RETENTION.as_nanos() as u64 + 1);
    assert_eq!(db.prune_outcomes().unwrap(), 1);
    assert_eq!(db.recorded_outcome(&first).unwrap(), None);
    assert!(db.recorded_outcome(&second).unwrap().is_some());
    assert_eq!(db.prune_outcomes().unwrap(), 0);
    // The rows are untouched.
    assert_eq!(keys(&db), vec![4, 5]);
}
