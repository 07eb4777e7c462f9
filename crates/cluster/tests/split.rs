//! `SplitAt` on the replica state machine: the split shrinks to the keys
//! below the cut and a replica of the new split takes the rest on the same
//! engine, with the lease, closed timestamp and the prepared transactions
//! that lie wholly on its side; each half then refuses the other's keys.

mod common;

use common::{key, memory, prepare_keys, row_keys, split_k, write_keys, Log};
use proptest::prelude::*;
use rowtree_cluster::{
    Applied, Command, Descriptor, Error, GlobalTxnId, Lease, LogId, Outcome, Replica,
};
use rowtree_kv::SplitId;

#[test]
fn a_split_gives_the_keys_from_the_cut_on_to_a_replica_of_the_new_split() {
    let mut log = Log::new(split_k());
    let lease = Lease {
        seq: 1,
        holder: 2,
        start: 10,
        expiry: 5_000,
    };
    log.apply(Command::Lease(lease));
    log.apply(write_keys(100, &[1, 2, 4, 5]));
    log.apply(Command::ClosedTs(150));
    // One transaction prepared on each side of the cut to come.
    log.apply(prepare_keys(1, 200, &[1], SplitId(7)));
    log.apply(prepare_keys(2, 210, &[5], SplitId(7)));
    log.apply(Command::SplitAt {
        at: key(3),
        right: SplitId(8),
    });

    let left = log.replica.descriptor().clone();
    assert_eq!(
        left,
        Descriptor {
            split: SplitId(7),
            start: b"k".to_vec(),
            limit: Some(key(3)),
            epoch: 4,
        }
    );
    assert_eq!(
        log.replica.prepared().map(|p| p.txn).collect::<Vec<_>>(),
        vec![GlobalTxnId(1)]
    );
    let mut right = Replica::open(log.router.clone(), SplitId(8)).unwrap();
    assert_eq!(
        right.descriptor(),
        &Descriptor {
            split: SplitId(8),
            start: key(3),
            limit: Some(b"l".to_vec()),
            epoch: 4,
        }
    );
    assert_eq!(right.applied(), None);
    assert_eq!(right.lease(), Some(lease));
    assert_eq!(right.closed_ts(), 150);
    assert_eq!(
        right.prepared().map(|p| p.txn).collect::<Vec<_>>(),
        vec![GlobalTxnId(2)]
    );
    assert_eq!(right.prepared_view().floor(), 210);
    assert_eq!(log.replica.prepared_view().floor(), 200);

    // Each half refuses the other's keys.
    let e = log.refuse(write_keys(300, &[4]));
    assert!(matches!(e, Error::OutOfRange { .. }), "{e}");
    log.apply(write_keys(300, &[2]));
    let e = right
        .apply(LogId::new(1, 0), &write_keys(300, &[2]))
        .unwrap_err();
    assert!(matches!(e, Error::OutOfRange { .. }), "{e}");
    right
        .apply(LogId::new(1, 0), &write_keys(300, &[4]))
        .unwrap();
    // The moved transaction is resolved in the new split.
    right
        .apply(
            LogId::new(1, 1),
            &Command::Resolve {
                txn: GlobalTxnId(2),
                outcome: Outcome::Commit { ts: 320 },
                writes: None,
            },
        )
        .unwrap();
    assert_eq!(log.router.get(&key(5), 320).unwrap(), Some(b"p2".to_vec()));

    // Each half's image holds its own keys only.
    let keys_of = |replica: &Replica| {
        let target = memory();
        let mut copy = Replica::create(target.clone(), replica.descriptor().clone()).unwrap();
        copy.install(&replica.image().unwrap()).unwrap();
        row_keys(&target)
    };
    assert_eq!(keys_of(&log.replica), vec![key(1), key(2)]);
    assert_eq!(keys_of(&right), vec![key(4), key(5)]);

    // The entry again (a replay) changes nothing; the halves reopen as
    // they are.
    let at = LogId::new(1, 5);
    let split = Command::SplitAt {
        at: key(3),
        right: SplitId(8),
    };
    assert_eq!(
        log.replica.apply(at, &split).unwrap(),
        Applied::AlreadyApplied
    );
    let reopened = Replica::open(log.router.clone(), SplitId(7)).unwrap();
    assert_eq!(reopened.descriptor(), &left);
    assert_eq!(reopened.prepared().count(), 1);
}

#[test]
fn a_split_waits_for_a_transaction_prepared_on_both_sides() {
    let mut log = Log::new(split_k());
    log.apply(prepare_keys(1, 200, &[1, 5], SplitId(7)));
    log.apply(Command::SplitAt {
        at: key(3),
        right: SplitId(8),
    });
    assert_eq!(log.replica.descriptor(), &split_k());
    assert!(Replica::open(log.router.clone(), SplitId(8)).is_err());
    log.apply(Command::Resolve {
        txn: GlobalTxnId(1),
        outcome: Outcome::Abort { at: 210 },
        writes: None,
    });
    log.apply(Command::SplitAt {
        at: key(3),
        right: SplitId(8),
    });
    assert_eq!(log.replica.descriptor().limit, Some(key(3)));
}

#[test]
fn splits_that_break_a_rule_are_refused() {
    let mut log = Log::new(split_k());
    let other = Replica::create(log.router.clone(), {
        let mut d = split_k();
        d.split = SplitId(9);
        d.start = b"m".to_vec();
        d.limit = None;
        d
    })
    .unwrap();
    drop(other);
    for (at, right, why) in [
        (b"k".to_vec(), 8, "not strictly inside"),
        (b"l".to_vec(), 8, "not strictly inside"),
        (b"a".to_vec(), 8, "not strictly inside"),
        (key(3), 7, "this split's id"),
        (key(3), 9, "holds a replica of split-9 already"),
    ] {
        let e = log.refuse(Command::SplitAt {
            at,
            right: SplitId(right),
        });
        assert!(e.to_string().contains(why), "{e}");
        assert_eq!(log.replica.descriptor(), &split_k());
        assert_eq!(log.replica.applied(), None);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Wherever the cut falls, the two halves hold between them exactly
    /// what the split held, each only its own side; and the entry survives
    /// its binary form.
    #[test]
    fn the_halves_of_a_split_hold_exactly_what_it_held(
        writes in prop::collection::vec(prop::collection::vec(0u8..=255, 1..4), 1..8),
        cut in 1u8..=255,
    ) {
        let mut log = Log::new(split_k());
        for (i, keys) in writes.iter().enumerate() {
            let mut keys = keys.clone();
            keys.sort_unstable();
            keys.dedup();
            log.apply(write_keys(100 + i as u64, &keys));
        }
        let before = row_keys(&log.router);
        let split = Command::SplitAt { at: key(cut), right: SplitId(8) };
        prop_assert_eq!(Command::decode(&split.encode()).unwrap(), split.clone());
        log.apply(split);
        let right = Replica::open(log.router.clone(), SplitId(8)).unwrap();
        let image_keys = |replica: &Replica| {
            let target = memory();
            let mut copy = Replica::create(target.clone(), replica.descriptor().clone()).unwrap();
            copy.install(&replica.image().unwrap()).unwrap();
            row_keys(&target)
        };
        let (l, r) = (image_keys(&log.replica), image_keys(&right));
        prop_assert!(l.iter().all(|k| *k < key(cut)));
        prop_assert!(r.iter().all(|k| *k >= key(cut)));
        let mut both = l;
        both.extend(r);
        prop_assert_eq!(both, before);
    }
}
