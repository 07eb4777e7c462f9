//! Two-phase commit's entries on the replica state machine: prepared writes
//! stay invisible until resolved, the first decision is final, late or
//! repeated entries change nothing, the rules on timestamps hold, and the
//! prepared table survives a restart and travels in a snapshot image.

mod common;

use std::sync::Arc;

use common::{memory, stored, Log};
use proptest::prelude::*;
use rowtree_cluster::twophase::OUTCOME_RETENTION;
use rowtree_cluster::{
    Command, Commit, Descriptor, Error, GlobalTxnId, LogId, Outcome, Prepare, Replica,
};
use rowtree_kv::{Router, SplitId, SplitMap};
use rowtree_storage::{Engine, FjallEngine, FjallOptions, Mvcc};
use rowtree_txn::lock::{LockMode, LockTarget};

fn router(engine: Arc<dyn Engine>) -> Arc<Router> {
    Arc::new(Router::new(Mvcc::new(engine), SplitMap::new()))
}

const SPLIT: SplitId = SplitId(7);
const COORDINATOR: SplitId = SplitId(3);

/// The split of keys `[b"k", b"l")`.
fn descriptor() -> Descriptor {
    Descriptor {
        split: SPLIT,
        start: b"k".to_vec(),
        limit: Some(b"l".to_vec()),
        epoch: 1,
    }
}

fn key(i: u8) -> Vec<u8> {
    vec![b'k', i]
}

fn txn(i: u128) -> GlobalTxnId {
    GlobalTxnId(0xabc0_0000_0000_0000_0000_0000_0000_0000 + i)
}

fn prepare(id: GlobalTxnId, ts: u64, writes: Vec<(Vec<u8>, Option<Vec<u8>>)>) -> Prepare {
    let locks = writes
        .iter()
        .map(|(k, _)| (LockTarget::key(k.clone()), LockMode::Exclusive))
        .chain([(
            LockTarget::range(key(0x40), Some(key(0x50))),
            LockMode::Shared,
        )])
        .collect();
    Prepare {
        txn: id,
        ts,
        coordinator: COORDINATOR,
        participants: vec![COORDINATOR, SPLIT],
        writes,
        pending: false,
        locks,
    }
}

fn put(k: u8, v: &str) -> (Vec<u8>, Option<Vec<u8>>) {
    (key(k), Some(v.as_bytes().to_vec()))
}

fn commit_at(ts: u64) -> Outcome {
    Outcome::Commit { ts }
}

fn resolve(id: GlobalTxnId, outcome: Outcome) -> Command {
    Command::Resolve {
        txn: id,
        outcome,
        writes: None,
    }
}

#[test]
fn prepared_writes_stay_invisible_until_resolved_then_appear_at_the_commit_timestamp() {
    let mut log = Log::new(descriptor());
    log.apply(Command::Write {
        commits: vec![Commit {
            ts: 10,
            writes: vec![put(1, "old")],
        }],
        closed_ts: None,
        meta: Vec::new(),
    });
    let a = txn(1);
    log.apply(Command::Prepare(prepare(
        a,
        20,
        vec![put(1, "new"), put(2, "two"), (key(3), None)],
    )));
    assert_eq!(log.replica.prepared_txn(a).unwrap().ts, 20);
    assert_eq!(log.replica.prepared_view().floor(), 20);
    assert_eq!(log.read(&key(1), u64::MAX - 1), Some("old".into()));
    assert_eq!(log.read(&key(2), u64::MAX - 1), None);
    assert_eq!(log.replica.outcome(a).unwrap(), None);

    // The same prepare again (a retry that reached the log twice).
    log.apply(Command::Prepare(prepare(a, 20, vec![put(1, "other")])));
    assert_eq!(log.replica.prepared().count(), 1);
    assert_eq!(log.replica.prepared_txn(a).unwrap().writes.len(), 3);

    log.apply(resolve(a, commit_at(25)));
    assert_eq!(log.read(&key(1), 24), Some("old".into()));
    assert_eq!(log.read(&key(2), 24), None);
    assert_eq!(log.read(&key(1), 25), Some("new".into()));
    assert_eq!(log.read(&key(2), 25), Some("two".into()));
    assert_eq!(log.replica.prepared().count(), 0);
    assert_eq!(log.replica.prepared_view().floor(), u64::MAX);
    assert_eq!(log.replica.outcome(a).unwrap(), Some(commit_at(25)));

    // Resolved again, differently: nothing changes.
    let before = stored(&log.router);
    log.apply(resolve(a, Outcome::Abort { at: 30 }));
    log.apply(resolve(a, commit_at(40)));
    assert_eq!(log.replica.outcome(a).unwrap(), Some(commit_at(25)));
    let after = stored(&log.router);
    assert_eq!(
        after
            .iter()
            .filter(|(k, _)| !k.starts_with(b"raft/"))
            .collect::<Vec<_>>(),
        before
            .iter()
            .filter(|(k, _)| !k.starts_with(b"raft/"))
            .collect::<Vec<_>>()
    );

    // An abort drops the prepared writes.
    let b = txn(2);
    log.apply(Command::Prepare(prepare(b, 50, vec![put(4, "never")])));
    log.apply(resolve(b, Outcome::Abort { at: 51 }));
    assert_eq!(log.read(&key(4), u64::MAX - 1), None);
    assert_eq!(log.replica.prepared().count(), 0);
    assert_eq!(
        log.replica.outcome(b).unwrap(),
        Some(Outcome::Abort { at: 51 })
    );
}

#[test]
fn the_first_decision_is_final() {
    let mut log = Log::new(descriptor());
    let a = txn(1);
    log.apply(Command::Decide {
        txn: a,
        outcome: commit_at(30),
        writes: vec![put(1, "a")],
    });
    // A recovery's abort that came second, and a repeated commit.
    log.apply(Command::Decide {
        txn: a,
        outcome: Outcome::Abort { at: 31 },
        writes: Vec::new(),
    });
    log.apply(Command::Decide {
        txn: a,
        outcome: commit_at(40),
        writes: vec![put(1, "again")],
    });
    assert_eq!(log.replica.outcome(a).unwrap(), Some(commit_at(30)));
    assert_eq!(log.read(&key(1), u64::MAX - 1), Some("a".into()));
    assert_eq!(log.read(&key(1), 29), None);

    // A recovery's abort first: the gateway's late commit changes nothing.
    let b = txn(2);
    log.apply(Command::Decide {
        txn: b,
        outcome: Outcome::Abort { at: 50 },
        writes: Vec::new(),
    });
    log.apply(Command::Decide {
        txn: b,
        outcome: commit_at(60),
        writes: vec![put(2, "b")],
    });
    assert_eq!(
        log.replica.outcome(b).unwrap(),
        Some(Outcome::Abort { at: 50 })
    );
    assert_eq!(log.read(&key(2), u64::MAX - 1), None);
}

#[test]
fn a_prepare_after_the_outcome_changes_nothing() {
    let mut log = Log::new(descriptor());
    let a = txn(1);
    // The coordinator aborted the transaction and resolved this participant
    // before the participant's retried prepare reached its log.
    log.apply(resolve(a, Outcome::Abort { at: 10 }));
    log.apply(Command::Prepare(prepare(a, 20, vec![put(1, "late")])));
    assert_eq!(log.replica.prepared().count(), 0);
    assert_eq!(log.replica.prepared_view().floor(), u64::MAX);
    // So a closed timestamp may pass the late prepare's timestamp.
    log.apply(Command::ClosedTs(100));
    assert_eq!(log.read(&key(1), u64::MAX - 1), None);
}

#[test]
fn a_pending_commit_timestamp_is_filled_in_by_the_commit() {
    let mut log = Log::new(descriptor());
    let a = txn(1);
    // The commit may carry the finished writes.
    let mut p = prepare(a, 20, vec![put(1, "ts=<pending>")]);
    p.pending = true;
    log.apply(Command::Prepare(p));
    log.apply(Command::Resolve {
        txn: a,
        outcome: commit_at(30),
        writes: Some(vec![put(1, "ts=30")]),
    });
    assert_eq!(log.read(&key(1), 30), Some("ts=30".into()));
}

/// A row of another node's transaction that writes the commit timestamp
/// is prepared as a template (the columns to stamp, and the row), and the
/// replica stamps it itself when the commit is applied: no schema needed,
/// and no finished writes from the node that ran the transaction, which
/// may be gone by then (a participant learning the outcome by asking).
#[test]
fn a_template_is_stamped_with_the_commit_timestamp() {
    use rowtree_cluster::twophase::{parse_template, stamp, template};
    use rowtree_encoding::{decode_row, encode_row};
    use rowtree_types::{Timestamp, Value};
    let row = |at: Timestamp| {
        encode_row([
            (1, &Value::String("x".into())),
            (2, &Value::Timestamp(at)),
            (3, &Value::Int64(7)),
        ])
        .unwrap()
    };
    let mut log = Log::new(descriptor());
    let a = txn(1);
    let mut p = prepare(
        a,
        20,
        vec![
            (key(1), Some(template(&[2], &row(Timestamp::UNIX_EPOCH)))),
            (key(2), None),
        ],
    );
    p.pending = true;
    log.apply(Command::Prepare(p));
    assert_eq!(
        log.router.get(&key(1), u64::MAX - 1).unwrap(),
        None,
        "invisible until resolved"
    );
    let ts = 1_764_000_000_123_456_789u64;
    log.apply(resolve(a, commit_at(ts)));
    let stored = log.router.get(&key(1), ts).unwrap().expect("the row");
    assert_eq!(stored, row(Timestamp::from_nanos(ts as i128).unwrap()));
    assert_eq!(
        decode_row(&stored).unwrap()[1],
        (
            2,
            Value::Timestamp(Timestamp::from_nanos(ts as i128).unwrap())
        )
    );
    assert_eq!(log.router.get(&key(1), ts - 1).unwrap(), None);

    // Malformed templates are errors, never a panic or a row.
    assert!(stamp(&[0, 0], ts).is_err());
    assert!(stamp(&[0, 0, 0, 9, 0, 0, 0, 1], ts).is_err());
    assert!(stamp(&[0, 0, 4, 1], ts).unwrap_err().contains("above 1024"));
    assert!(stamp(&template(&[2], b"not a row"), ts).is_err());
    let made = template(&[5, 9], b"r");
    let (columns, rest) = parse_template(&made).unwrap();
    assert_eq!((columns, rest), (vec![5, 9], &b"r"[..]));
}

#[test]
fn entries_that_break_two_phase_rules_are_refused_whole() {
    let mut log = Log::new(descriptor());
    log.apply(Command::ClosedTs(100));
    let a = txn(1);
    let err = log.refuse(Command::Prepare(prepare(a, 100, vec![put(1, "x")])));
    assert!(
        err.to_string()
            .contains("not above the closed timestamp 100"),
        "{err}"
    );
    let err = log.refuse(Command::Prepare(prepare(
        a,
        150,
        vec![(b"m".to_vec(), Some(b"x".to_vec()))],
    )));
    assert!(matches!(err, Error::OutOfRange { .. }), "{err}");
    let mut wide = prepare(a, 150, vec![put(1, "x")]);
    wide.locks
        .push((LockTarget::range(key(9), None), LockMode::Shared));
    let err = log.refuse(Command::Prepare(wide));
    assert!(matches!(err, Error::OutOfRange { .. }), "{err}");
    let mut elsewhere = prepare(a, 150, vec![put(1, "x")]);
    elsewhere.participants = vec![COORDINATOR];
    let err = log.refuse(Command::Prepare(elsewhere));
    assert!(err.to_string().contains("participants"), "{err}");

    log.apply(Command::Prepare(prepare(a, 150, vec![put(1, "x")])));
    // No closed timestamp may reach a prepared transaction's timestamp:
    // alone, or riding on a write.
    let err = log.refuse(Command::ClosedTs(150));
    assert!(err.to_string().contains("prepare timestamp 150"), "{err}");
    let err = log.refuse(Command::Write {
        commits: vec![Commit {
            ts: 120,
            writes: vec![put(2, "y")],
        }],
        closed_ts: Some(160),
        meta: Vec::new(),
    });
    assert!(matches!(err, Error::Transaction { .. }), "{err}");
    log.apply(Command::ClosedTs(149));
    // A commit below the prepare timestamp; an abort with writes.
    let err = log.refuse(resolve(a, commit_at(140)));
    assert!(
        err.to_string().contains("below its prepare timestamp 150"),
        "{err}"
    );
    let err = log.refuse(Command::Resolve {
        txn: a,
        outcome: Outcome::Abort { at: 160 },
        writes: Some(Vec::new()),
    });
    assert!(err.to_string().contains("abort carries writes"), "{err}");
    let err = log.refuse(Command::Decide {
        txn: txn(2),
        outcome: Outcome::Abort { at: 160 },
        writes: vec![put(3, "z")],
    });
    assert!(err.to_string().contains("abort carries writes"), "{err}");
    // Writes for a transaction that was never prepared here.
    let err = log.refuse(Command::Resolve {
        txn: txn(3),
        outcome: commit_at(170),
        writes: Some(vec![put(3, "z")]),
    });
    assert!(err.to_string().contains("not prepared here"), "{err}");
    // A decision's writes obey the rules of any commit.
    let err = log.refuse(Command::Decide {
        txn: txn(2),
        outcome: commit_at(149),
        writes: vec![put(3, "z")],
    });
    assert!(matches!(err, Error::TimestampOrder { .. }), "{err}");
    // The commit of the prepared writes does too: above every stored
    // version of their keys.
    log.apply(Command::Write {
        commits: vec![Commit {
            ts: 200,
            writes: vec![put(1, "later")],
        }],
        closed_ts: None,
        meta: Vec::new(),
    });
    let err = log.refuse(resolve(a, commit_at(180)));
    assert!(matches!(err, Error::TimestampOrder { .. }), "{err}");
    log.apply(resolve(a, commit_at(210)));
    assert_eq!(log.read(&key(1), 210), Some("x".into()));
}

#[test]
fn outcomes_are_kept_until_the_closed_timestamp_passes_their_retention() {
    let mut log = Log::new(descriptor());
    let (a, b) = (txn(1), txn(2));
    log.apply(Command::Decide {
        txn: a,
        outcome: commit_at(100),
        writes: vec![put(1, "a")],
    });
    log.apply(resolve(b, Outcome::Abort { at: 300 }));
    log.apply(Command::ClosedTs(100 + OUTCOME_RETENTION));
    assert_eq!(log.replica.outcome(a).unwrap(), Some(commit_at(100)));
    log.apply(Command::ClosedTs(101 + OUTCOME_RETENTION));
    assert_eq!(log.replica.outcome(a).unwrap(), None);
    assert_eq!(
        log.replica.outcome(b).unwrap(),
        Some(Outcome::Abort { at: 300 })
    );
    // The write stays; only the record of the outcome goes.
    assert_eq!(log.read(&key(1), u64::MAX - 1), Some("a".into()));
    log.apply(Command::Write {
        commits: Vec::new(),
        closed_ts: Some(301 + OUTCOME_RETENTION),
        meta: Vec::new(),
    });
    assert_eq!(log.replica.outcome(b).unwrap(), None);
    let left: Vec<_> = stored(&log.router)
        .into_iter()
        .filter(|(k, _)| k.starts_with(b"raft/") && !k.ends_with(b"/state"))
        .collect();
    assert_eq!(left, Vec::new());
}

#[test]
fn the_prepared_table_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let open = || {
        let engine: Arc<dyn Engine> =
            Arc::new(FjallEngine::open(dir.path(), FjallOptions::default()).unwrap());
        router(engine)
    };
    let a = txn(1);
    let entries = [
        Command::Prepare(prepare(a, 20, vec![put(1, "a")])),
        Command::Decide {
            txn: txn(2),
            outcome: commit_at(21),
            writes: vec![put(2, "b")],
        },
    ];
    {
        let r = open();
        let mut replica = Replica::create(r.clone(), descriptor()).unwrap();
        for (i, c) in entries.iter().enumerate() {
            replica.apply(LogId::new(1, i as u64), c).unwrap();
        }
        replica.sync().unwrap();
    }
    let r = open();
    let mut replica = Replica::open(r.clone(), SPLIT).unwrap();
    assert_eq!(
        replica.prepared_txn(a),
        Some(&prepare(a, 20, vec![put(1, "a")]))
    );
    assert_eq!(replica.prepared_view().floor(), 20);
    assert_eq!(replica.outcome(txn(2)).unwrap(), Some(commit_at(21)));
    // Replaying the log changes nothing; the next entry resolves.
    for (i, c) in entries.iter().enumerate() {
        replica.apply(LogId::new(1, i as u64), c).unwrap();
    }
    replica
        .apply(LogId::new(1, 2), &resolve(a, commit_at(30)))
        .unwrap();
    assert_eq!(r.get(&key(1), 30).unwrap(), Some(b"a".to_vec()));
    assert_eq!(replica.prepared().count(), 0);
}

#[test]
fn a_snapshot_image_carries_prepared_transactions_and_outcomes() {
    let mut log = Log::new(descriptor());
    let a = txn(1);
    log.apply(Command::Prepare(prepare(a, 20, vec![put(1, "a")])));
    log.apply(Command::Decide {
        txn: txn(2),
        outcome: commit_at(21),
        writes: vec![put(2, "b")],
    });
    // The receiver had a transaction of its own prepared, which the image
    // does not have: it goes.
    let other = memory();
    let mut receiver = Replica::create(other.clone(), descriptor()).unwrap();
    receiver
        .apply(
            LogId::new(1, 0),
            &Command::Prepare(prepare(txn(9), 5, vec![put(9, "gone")])),
        )
        .unwrap();
    receiver.install(&log.replica.image().unwrap()).unwrap();
    assert_eq!(stored(&other), stored(&log.router));
    assert_eq!(
        receiver.prepared().map(|p| p.txn).collect::<Vec<_>>(),
        vec![a]
    );
    assert_eq!(receiver.prepared_view().floor(), 20);
    assert_eq!(receiver.outcome(txn(2)).unwrap(), Some(commit_at(21)));
    receiver
        .apply(LogId::new(1, 2), &resolve(a, commit_at(30)))
        .unwrap();
    assert_eq!(other.get(&key(1), 30).unwrap(), Some(b"a".to_vec()));
}

/// A generated two-phase entry: which transaction, what kind, and a
/// timestamp offset.
#[derive(Debug, Clone)]
enum Step {
    Prepare {
        txn: u8,
        pending: bool,
        keys: Vec<u8>,
    },
    Decide {
        txn: u8,
        commit: bool,
        keys: Vec<u8>,
    },
    Resolve {
        txn: u8,
        commit: bool,
        finished: bool,
    },
    Close {
        back: u64,
    },
    Write {
        keys: Vec<u8>,
    },
}

fn arb_step() -> impl Strategy<Value = Step> {
    let keys = prop::collection::vec(0u8..6, 0..3);
    prop_oneof![
        3 => (0u8..4, any::<bool>(), keys.clone())
            .prop_map(|(txn, pending, keys)| Step::Prepare { txn, pending, keys }),
        2 => (0u8..4, any::<bool>(), keys.clone())
            .prop_map(|(txn, commit, keys)| Step::Decide { txn, commit, keys }),
        3 => (0u8..4, any::<bool>(), any::<bool>())
            .prop_map(|(txn, commit, finished)| Step::Resolve { txn, commit, finished }),
        1 => (0u64..40).prop_map(|back| Step::Close { back }),
        1 => keys.prop_map(|keys| Step::Write { keys }),
    ]
}

/// Turns a step into an entry; timestamps rise by 10 a step.
fn entry(step: &Step, ts: u64) -> Command {
    let writes = |keys: &[u8], tag: &str| -> Vec<(Vec<u8>, Option<Vec<u8>>)> {
        let mut keys = keys.to_vec();
        keys.sort_unstable();
        keys.dedup();
        keys.iter()
            .map(|k| put(*k, &format!("{tag}@{ts}")))
            .collect()
    };
    match step {
        Step::Prepare {
            txn: t,
            pending,
            keys,
        } => {
            let mut p = prepare(txn(u128::from(*t)), ts, writes(keys, "prepared"));
            p.pending = *pending;
            Command::Prepare(p)
        }
        Step::Decide {
            txn: t,
            commit,
            keys,
        } => Command::Decide {
            txn: txn(u128::from(*t) + 100),
            outcome: if *commit {
                commit_at(ts)
            } else {
                Outcome::Abort { at: ts }
            },
            writes: if *commit {
                writes(keys, "decided")
            } else {
                Vec::new()
            },
        },
        Step::Resolve {
            txn: t,
            commit,
            finished,
        } => Command::Resolve {
            txn: txn(u128::from(*t)),
            outcome: if *commit {
                commit_at(ts)
            } else {
                Outcome::Abort { at: ts }
            },
            writes: (*finished && *commit).then(|| writes(&[5], "finished")),
        },
        Step::Close { back } => Command::ClosedTs(ts.saturating_sub(*back)),
        Step::Write { keys } => Command::Write {
            commits: vec![Commit {
                ts,
                writes: writes(keys, "written"),
            }],
            closed_ts: None,
            meta: Vec::new(),
        },
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Any stream of two-phase entries, good or bad: a refused entry
    /// changes nothing; replicas applying what was accepted store the same
    /// bytes, as does one that installs an image halfway and applies the
    /// rest; every transaction's recorded outcome is the first one applied
    /// for it; a resolved transaction's writes are visible exactly from
    /// its commit timestamp; nothing is prepared that has an outcome; and
    /// the closed timestamp stays below every prepared transaction's.
    #[test]
    fn two_phase_entries_keep_replicas_equal_and_outcomes_final(
        steps in prop::collection::vec(arb_step(), 1..24),
        image_at in any::<prop::sample::Index>(),
    ) {
        let (ra, rb, rc) = (memory(), memory(), memory());
        let mut a = Replica::create(ra.clone(), descriptor()).unwrap();
        let mut b = Replica::create(rb.clone(), descriptor()).unwrap();
        let mut c = Replica::create(rc.clone(), descriptor()).unwrap();
        let image_at = image_at.index(steps.len());
        let mut first: std::collections::HashMap<GlobalTxnId, Outcome> = Default::default();
        let mut next = 0u64;
        let mut installed = false;
        for (i, step) in steps.iter().enumerate() {
            let ts = 10 * (i as u64 + 1);
            let command = entry(step, ts);
            let before = stored(&ra);
            let id = LogId::new(1, next);
            let was_prepared = match &command {
                Command::Resolve { txn, .. } => a.prepared_txn(*txn).is_some(),
                _ => false,
            };
            match a.apply(id, &command) {
                Err(_) => {
                    prop_assert_eq!(stored(&ra), before, "refused {} but wrote", command);
                    continue;
                }
                Ok(_) => next += 1,
            }
            b.apply(id, &command).unwrap();
            if installed {
                c.apply(id, &command).unwrap();
            } else if i >= image_at {
                c.install(&a.image().unwrap()).unwrap();
                installed = true;
            }
            match &command {
                Command::Decide { txn, outcome, .. } | Command::Resolve { txn, outcome, .. } => {
                    let recorded = first.entry(*txn).or_insert(*outcome);
                    prop_assert_eq!(a.outcome(*txn).unwrap(), Some(*recorded));
                    if let (Command::Resolve { .. }, Outcome::Commit { ts }, true) =
                        (&command, *recorded, was_prepared && *recorded == *outcome)
                    {
                        // Just resolved: its writes are there from `ts` on.
                        if let Command::Resolve { writes: Some(w), .. } = &command {
                            for (k, v) in w {
                                prop_assert_eq!(&ra.get(k, ts).unwrap(), v);
                                prop_assert_ne!(&ra.get(k, ts - 1).unwrap(), v);
                            }
                        }
                    }
                }
                _ => {}
            }
            for p in a.prepared() {
                prop_assert!(a.outcome(p.txn).unwrap().is_none());
                prop_assert!(p.ts > a.closed_ts());
            }
        }
        if !installed {
            c.install(&a.image().unwrap()).unwrap();
        }
        prop_assert_eq!(stored(&rb), stored(&ra));
        prop_assert_eq!(stored(&rc), stored(&ra));
        let prepared = |r: &Replica| r.prepared().cloned().collect::<Vec<_>>();
        prop_assert_eq!(prepared(&b), prepared(&a));
        prop_assert_eq!(prepared(&c), prepared(&a));
        prop_assert_eq!(c.prepared_view().floor(), a.prepared_view().floor());
    }

    /// Every two-phase entry survives its binary form; its truncations are
    /// errors.
    #[test]
    fn two_phase_entries_round_trip(step in arb_step(), ts in 1u64..u64::MAX / 2, high: u64) {
        let mut command = entry(&step, ts);
        if let Command::Prepare(p) = &mut command {
            p.txn = GlobalTxnId(u128::from(high) << 64 | p.txn.0);
        }
        let bytes = command.encode();
        prop_assert_eq!(Command::decode(&bytes).unwrap(), command);
        for cut in 0..bytes.len() {
            prop_assert!(Command::decode(&bytes[..cut]).is_err(), "cut at {}", cut);
        }
    }
}
