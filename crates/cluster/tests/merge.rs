//! `Freeze` and `Merge` on the replica state machine: a split frozen into
//! its left neighbour takes no more writes, and the neighbour then takes
//! over its range, its kept outcomes and nothing else, on the same engine;
//! a replica that gets the merged image instead drops the merged replica.

mod common;

use std::sync::Arc;

use common::{key, memory, prepare_keys, row_keys, split_k, stored, write_keys, Log};
use parking_lot::Mutex;
use proptest::prelude::*;
use rowtree_cluster::{
    Command, Descriptor, Error, GlobalTxnId, Lease, LogId, Outcome, Prepare, Replica,
};
use rowtree_kv::SplitId;

/// What a merge observer was told: the wider split and the splits gone.
type Merged = (Descriptor, Vec<SplitId>);

/// The right half of `log`'s split at `key(cut)` (split 8), opened from
/// the engine, and the next index of its own log.
fn split_at(log: &mut Log, cut: u8) -> Replica {
    log.apply(Command::SplitAt {
        at: key(cut),
        right: SplitId(8),
    });
    Replica::open(log.router.clone(), SplitId(8)).unwrap()
}

/// The `Merge` of `right` (frozen at `frozen`) into its left neighbour.
fn merge_of(right: &Replica, frozen: LogId) -> Command {
    let d = right.descriptor();
    Command::Merge {
        right: d.split,
        start: d.start.clone(),
        limit: d.limit.clone(),
        epoch: d.epoch,
        right_applied: frozen,
    }
}

#[test]
fn a_merge_joins_the_halves_of_a_split_again() {
    let mut log = Log::new(split_k());
    log.apply(write_keys(100, &[1, 2, 4, 5]));
    log.apply(Command::ClosedTs(150));
    let mut right = split_at(&mut log, 3);
    // The right half writes, and decides a transaction as a coordinator.
    right
        .apply(LogId::new(1, 0), &write_keys(200, &[4, 6]))
        .unwrap();
    right
        .apply(
            LogId::new(1, 1),
            &Command::Decide {
                txn: GlobalTxnId(9),
                outcome: Outcome::Commit { ts: 210 },
                writes: vec![(key(7), Some(b"d9".to_vec()))],
            },
        )
        .unwrap();
    // Frozen into the left half: no more writes; other entries change
    // nothing stored.
    let frozen = LogId::new(1, 2);
    right
        .apply(frozen, &Command::Freeze { into: SplitId(7) })
        .unwrap();
    assert_eq!(right.frozen(), Some(SplitId(7)));
    let e = right
        .apply(LogId::new(1, 3), &write_keys(300, &[4]))
        .unwrap_err();
    assert!(e.to_string().contains("frozen"), "{e}");
    let before = stored(&log.router);
    right
        .apply(LogId::new(1, 3), &Command::ClosedTs(250))
        .unwrap();
    right.apply_config(LogId::new(1, 4), None).unwrap();
    // Its leader keeps a lease until the merge: taken in memory.
    let lease = Lease {
        seq: 1,
        holder: 1,
        start: 260,
        expiry: 2_000,
    };
    right
        .apply(LogId::new(1, 5), &Command::Lease(lease))
        .unwrap();
    assert_eq!(
        stored(&log.router),
        before,
        "a frozen replica writes nothing"
    );
    assert_eq!(right.applied(), Some(LogId::new(1, 5)));
    assert_eq!(right.closed_ts(), 250, "closed in memory");
    assert_eq!(right.lease_view().get(), Some(lease), "served in memory");
    // A reopened frozen replica is frozen, at its freeze.
    let reopened = Replica::open(log.router.clone(), SplitId(8)).unwrap();
    assert_eq!(reopened.frozen(), Some(SplitId(7)));
    assert_eq!(reopened.applied(), Some(frozen));

    // The left half takes the range back.
    let seen: Arc<Mutex<Vec<Merged>>> = Arc::default();
    let observed = seen.clone();
    let mut left = Replica::open(log.router.clone(), SplitId(7))
        .unwrap()
        .with_merge_observer(Arc::new(move |d, gone| {
            observed.lock().push((d.clone(), gone.to_vec()))
        }));
    left.apply(LogId::new(1, log.next), &merge_of(&right, frozen))
        .unwrap();
    log.next += 1;
    let merged = Descriptor {
        split: SplitId(7),
        start: b"k".to_vec(),
        limit: Some(b"l".to_vec()),
        epoch: 5,
    };
    assert_eq!(left.descriptor(), &merged);
    assert_eq!(
        seen.lock().clone(),
        vec![(merged.clone(), vec![SplitId(8)])]
    );
    assert_eq!(
        Replica::stored_splits(&log.router).unwrap(),
        vec![SplitId(7)],
        "the merged split's replica is gone"
    );
    assert!(Replica::open(log.router.clone(), SplitId(8)).is_err());
    assert_eq!(
        left.outcome(GlobalTxnId(9)).unwrap(),
        Some(Outcome::Commit { ts: 210 }),
        "the merged split's outcomes are the survivor's"
    );
    assert_eq!(left.closed_ts(), 150);
    // It takes writes on the whole range, and its image holds every key.
    left.apply(LogId::new(1, log.next), &write_keys(400, &[2, 4]))
        .unwrap();
    let target = memory();
    let mut copy = Replica::create(target.clone(), merged.clone()).unwrap();
    copy.install(&left.image().unwrap()).unwrap();
    assert_eq!(
        row_keys(&target),
        vec![key(1), key(2), key(4), key(5), key(6), key(7)]
    );
    assert_eq!(target.get(&key(4), 400).unwrap(), Some(b"v400".to_vec()));
    let reopened = Replica::open(log.router.clone(), SplitId(7)).unwrap();
    assert_eq!(reopened.descriptor(), &merged);
}

#[test]
fn a_split_holding_prepared_transactions_is_not_frozen() {
    let mut log = Log::new(split_k());
    let mut right = split_at(&mut log, 3);
    right
        .apply(LogId::new(1, 0), &prepare_keys(1, 200, &[5], SplitId(8)))
        .unwrap();
    right
        .apply(LogId::new(1, 1), &Command::Freeze { into: SplitId(7) })
        .unwrap();
    assert_eq!(
        right.frozen(),
        None,
        "a no-op while a transaction is prepared"
    );
    right
        .apply(
            LogId::new(1, 2),
            &Command::Resolve {
                txn: GlobalTxnId(1),
                outcome: Outcome::Commit { ts: 220 },
                writes: None,
            },
        )
        .unwrap();
    right
        .apply(LogId::new(1, 3), &Command::Freeze { into: SplitId(7) })
        .unwrap();
    assert_eq!(right.frozen(), Some(SplitId(7)));
    let e = right
        .apply(LogId::new(1, 4), &prepare_keys(2, 300, &[5], SplitId(8)))
        .unwrap_err();
    assert!(e.to_string().contains("frozen"), "{e}");
}

#[test]
fn merges_that_break_a_rule_are_refused() {
    let mut log = Log::new(split_k());
    let mut right = split_at(&mut log, 3);
    let good = merge_of(&right, LogId::new(1, 0));
    // Not frozen yet.
    let e = log.refuse(good.clone());
    assert!(e.to_string().contains("not frozen"), "{e}");
    right
        .apply(LogId::new(1, 0), &Command::Freeze { into: SplitId(9) })
        .unwrap();
    let e = log.refuse(good.clone());
    assert!(e.to_string().contains("not frozen into split-7"), "{e}");

    let mut log = Log::new(split_k());
    let mut right = split_at(&mut log, 3);
    right
        .apply(LogId::new(1, 0), &write_keys(200, &[4]))
        .unwrap();
    right
        .apply(LogId::new(1, 1), &Command::Freeze { into: SplitId(7) })
        .unwrap();
    let d = right.descriptor().clone();
    let bad = |right_id: u64, start: Vec<u8>, epoch: u64, applied: u64| Command::Merge {
        right: SplitId(right_id),
        start,
        limit: d.limit.clone(),
        epoch,
        right_applied: LogId::new(1, applied),
    };
    for (command, why) in [
        (bad(7, key(3), d.epoch, 1), "it is this split"),
        (bad(8, key(4), d.epoch, 1), "does not end there"),
        (bad(8, key(3), d.epoch + 1, 1), "at epoch"),
        (bad(8, key(3), d.epoch, 2), "not yet its freeze"),
        (bad(6, key(3), d.epoch, 1), "holds no replica"),
    ] {
        let e = log.refuse(command);
        assert!(e.to_string().contains(why), "{why}: {e}");
    }
    assert!(matches!(
        log.refuse(bad(7, key(3), d.epoch, 1)),
        Error::Replica { .. }
    ));
    log.apply(bad(8, key(3), d.epoch, 1));
    assert_eq!(log.replica.descriptor().limit, Some(b"l".to_vec()));
}

#[test]
fn a_replica_sent_the_merged_image_drops_the_merged_replica() {
    // Node A merges; node B is behind, with both halves' replicas, and is
    // sent A's image of the merged split.
    let mut a = Log::new(split_k());
    a.apply(write_keys(100, &[1, 5]));
    let mut b = Log::new(split_k());
    b.apply(write_keys(100, &[1, 5]));
    let mut a_right = split_at(&mut a, 3);
    let _b_right = split_at(&mut b, 3);
    a_right
        .apply(LogId::new(1, 0), &write_keys(200, &[6]))
        .unwrap();
    a_right
        .apply(LogId::new(1, 1), &Command::Freeze { into: SplitId(7) })
        .unwrap();
    a.apply(merge_of(&a_right, LogId::new(1, 1)));
    let seen: Arc<Mutex<Vec<Vec<SplitId>>>> = Arc::default();
    let observed = seen.clone();
    let mut b_left = Replica::open(b.router.clone(), SplitId(7))
        .unwrap()
        .with_merge_observer(Arc::new(move |_, gone| observed.lock().push(gone.to_vec())));
    b_left.install(&a.replica.image().unwrap()).unwrap();
    assert_eq!(b_left.descriptor(), a.replica.descriptor());
    assert_eq!(seen.lock().clone(), vec![vec![SplitId(8)]]);
    assert_eq!(Replica::stored_splits(&b.router).unwrap(), vec![SplitId(7)]);
    assert_eq!(row_keys(&b.router), vec![key(1), key(5), key(6)]);
    assert_eq!(stored(&b.router), stored(&a.router));
}

#[test]
fn a_replica_sent_an_image_made_after_a_cut_it_missed_shrinks_and_says_so() {
    // Node A cuts the split at key 3; node B missed the `SplitAt` (it was
    // down, and the leader's log no longer holds it) and is sent A's image
    // of the left half. B's replica shrinks to it and drops the keys from
    // the cut on (B holds no replica of the right half: its node must be
    // given one), and its observer is told the new range, with no split
    // gone: that is how the node learns its groups changed.
    let mut a = Log::new(split_k());
    a.apply(write_keys(100, &[1, 5]));
    let mut b = Log::new(split_k());
    b.apply(write_keys(100, &[1, 5]));
    let _a_right = split_at(&mut a, 3);
    a.apply(write_keys(200, &[2]));
    let seen: Arc<Mutex<Vec<Merged>>> = Arc::default();
    let observed = seen.clone();
    let mut b_left = Replica::open(b.router.clone(), SplitId(7))
        .unwrap()
        .with_merge_observer(Arc::new(move |d, gone| {
            observed.lock().push((d.clone(), gone.to_vec()))
        }));
    let wide = b_left.descriptor().clone();
    b_left.install(&a.replica.image().unwrap()).unwrap();
    let narrow = a.replica.descriptor().clone();
    assert_ne!(narrow.limit, wide.limit, "the image is of the left half");
    assert_eq!(b_left.descriptor(), &narrow);
    assert_eq!(seen.lock().clone(), vec![(narrow, Vec::new())]);
    assert_eq!(Replica::stored_splits(&b.router).unwrap(), vec![SplitId(7)]);
    assert_eq!(
        row_keys(&b.router),
        vec![key(1), key(2)],
        "the cut-off keys are not kept under no replica"
    );
    // An image of the same range tells the observer nothing.
    b_left.install(&a.replica.image().unwrap()).unwrap();
    assert_eq!(seen.lock().len(), 1);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Wherever the cut falls and whatever each half writes after it, the
    /// merged split holds exactly what both halves held, its image says so,
    /// and the entries survive their binary form.
    #[test]
    fn a_merged_split_holds_exactly_what_its_halves_held(
        writes in prop::collection::vec(prop::collection::vec(0u8..=255, 1..4), 1..6),
        later in prop::collection::vec(prop::collection::vec(0u8..=255, 1..4), 0..6),
        cut in 1u8..=255,
    ) {
        let mut log = Log::new(split_k());
        let mut ts = 100;
        for keys in &writes {
            let mut keys = keys.clone();
            keys.sort_unstable();
            keys.dedup();
            log.apply(write_keys(ts, &keys));
            ts += 1;
        }
        let mut right = split_at(&mut log, cut);
        let mut next = 0;
        for keys in &later {
            let mut keys = keys.clone();
            keys.sort_unstable();
            keys.dedup();
            let (l, r): (Vec<u8>, Vec<u8>) = keys.iter().partition(|k| **k < cut);
            if !l.is_empty() {
                log.apply(write_keys(ts, &l));
            }
            if !r.is_empty() {
                right.apply(LogId::new(1, next), &write_keys(ts, &r)).unwrap();
                next += 1;
            }
            ts += 1;
        }
        let before = row_keys(&log.router);
        let freeze = Command::Freeze { into: SplitId(7) };
        prop_assert_eq!(Command::decode(&freeze.encode()).unwrap(), freeze.clone());
        let frozen = LogId::new(1, next);
        right.apply(frozen, &freeze).unwrap();
        let merge = merge_of(&right, frozen);
        prop_assert_eq!(Command::decode(&merge.encode()).unwrap(), merge.clone());
        log.apply(merge);
        prop_assert_eq!(row_keys(&log.router), before.clone());
        let target = memory();
        let mut copy = Replica::create(target.clone(), log.replica.descriptor().clone()).unwrap();
        copy.install(&log.replica.image().unwrap()).unwrap();
        prop_assert_eq!(row_keys(&target), before);
        prop_assert_eq!(Replica::stored_splits(&log.router).unwrap(), vec![SplitId(7)]);
    }
}

/// A coordinator merged into its participant before the participant was
/// told the outcome: the merge brings the coordinator's decisions into the
/// participant's outcome table, and the participant's resolutions must
/// still finish the halves prepared there (not be taken for repeats of a
/// resolution already applied), or a committed transaction would keep
/// its participant's writes prepared forever, invisible, and hold the
/// split's closed timestamp below its prepare timestamp. Found by the
/// simulator of transactions and cuts (`tests/sim_txn.rs`).
#[test]
fn a_coordinator_merged_into_its_participant_still_finishes_the_prepared_halves() {
    let mut log = Log::new(split_k());
    log.apply(Command::ClosedTs(50));
    let mut right = split_at(&mut log, 3);
    // Two transactions coordinated by the right half, prepared in the left.
    for (txn, k) in [(9, 1), (10, 2)] {
        log.apply(Command::Prepare(Prepare {
            txn: GlobalTxnId(txn),
            ts: 100,
            coordinator: SplitId(8),
            participants: vec![SplitId(7), SplitId(8)],
            writes: vec![(key(k), Some(format!("p{txn}").into_bytes()))],
            pending: false,
            locks: Vec::new(),
        }));
    }
    // The right half decides: 9 commits with its own write, 10 aborts.
    right
        .apply(
            LogId::new(1, 0),
            &Command::Decide {
                txn: GlobalTxnId(9),
                outcome: Outcome::Commit { ts: 120 },
                writes: vec![(key(5), Some(b"d9".to_vec()))],
            },
        )
        .unwrap();
    right
        .apply(
            LogId::new(1, 1),
            &Command::Decide {
                txn: GlobalTxnId(10),
                outcome: Outcome::Abort { at: 130 },
                writes: Vec::new(),
            },
        )
        .unwrap();
    // It is frozen and merged into the left half before the left half is
    // told: the decisions are the left half's outcomes now.
    let frozen = LogId::new(1, 2);
    right
        .apply(frozen, &Command::Freeze { into: SplitId(7) })
        .unwrap();
    log.apply(merge_of(&right, frozen));
    assert_eq!(
        log.replica.outcome(GlobalTxnId(9)).unwrap(),
        Some(Outcome::Commit { ts: 120 })
    );
    assert_eq!(log.replica.prepared().count(), 2);
    // The resolutions arrive.
    log.apply(Command::Resolve {
        txn: GlobalTxnId(9),
        outcome: Outcome::Commit { ts: 120 },
        writes: None,
    });
    log.apply(Command::Resolve {
        txn: GlobalTxnId(10),
        outcome: Outcome::Abort { at: 130 },
        writes: None,
    });
    assert_eq!(log.replica.prepared().count(), 0, "nothing stays prepared");
    assert_eq!(log.read(&key(1), 120).as_deref(), Some("p9"));
    assert_eq!(log.read(&key(1), 119), None);
    assert_eq!(log.read(&key(5), 120).as_deref(), Some("d9"));
    assert_eq!(
        log.read(&key(2), u64::MAX - 1),
        None,
        "the abort writes nothing"
    );
    // A repeated resolution changes nothing but the applied state.
    let data = |router: &rowtree_kv::Router| -> Vec<(Vec<u8>, Vec<u8>)> {
        stored(router)
            .into_iter()
            .filter(|(k, _)| !k.ends_with(b"/state"))
            .collect()
    };
    let before = data(&log.router);
    log.apply(Command::Resolve {
        txn: GlobalTxnId(9),
        outcome: Outcome::Commit { ts: 120 },
        writes: None,
    });
    assert_eq!(data(&log.router), before);
}
