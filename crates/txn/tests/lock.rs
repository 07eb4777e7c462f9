//! Behaviour of the lock manager: compatibility, upgrades, wound-wait, ranges, and freedom
//! from deadlock under random contention.

use std::collections::HashMap;
use std::sync::{Arc, Barrier, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use rowtree_txn::{Error, LockManager, LockMode, LockTarget, TxnHandle, TxnState};

use LockMode::{Exclusive as X, Shared as S};

/// A deadline that has already passed: the request succeeds only if it needs no wait.
fn no_wait() -> Option<Instant> {
    Some(Instant::now())
}

fn within(secs: u64) -> Option<Instant> {
    Some(Instant::now() + Duration::from_secs(secs))
}

fn key(k: &str) -> LockTarget {
    LockTarget::key(k.as_bytes())
}

/// Polls `cond` until it holds; panics after 5 s.
fn eventually(what: &str, cond: impl Fn() -> bool) {
    let until = Instant::now() + Duration::from_secs(5);
    while !cond() {
        assert!(Instant::now() < until, "timed out waiting for: {what}");
        thread::sleep(Duration::from_millis(1));
    }
}

fn is_aborted(r: &Result<(), Error>) -> bool {
    matches!(r, Err(Error::Aborted { .. }))
}

#[test]
fn shared_locks_are_compatible() {
    let lm = LockManager::new();
    let (t1, t2) = (lm.begin(None), lm.begin(None));
    lm.lock(&t1, key("a"), S, no_wait()).unwrap();
    lm.lock(&t2, key("a"), S, no_wait()).unwrap();
    assert_eq!(lm.held_mode(&t1, &key("a")), Some(S));
    assert_eq!(lm.held_mode(&t2, &key("a")), Some(S));
    assert!(!t1.is_wounded() && !t2.is_wounded());
}

#[test]
fn shared_exclusive_conflict_waits_until_release() {
    let lm = Arc::new(LockManager::new());
    let (old, young) = (lm.begin(None), lm.begin(None));
    lm.lock(&old, key("a"), S, no_wait()).unwrap();
    // The younger writer must wait for the older reader (and must not wound it).
    assert_eq!(
        lm.lock(&young, key("a"), X, no_wait()),
        Err(Error::DeadlineExceeded)
    );
    assert_eq!(young.state(), TxnState::Active, "a deadline does not abort");

    let waiter = {
        let (lm, young) = (lm.clone(), young.clone());
        thread::spawn(move || lm.lock(&young, key("a"), X, within(10)))
    };
    eventually("writer blocked", || lm.stats().waiting == 1);
    assert!(!old.is_wounded());
    lm.release_all(&old);
    waiter.join().unwrap().unwrap();
    assert_eq!(lm.held_mode(&young, &key("a")), Some(X));
}

#[test]
fn exclusive_blocks_readers_of_the_same_key_only() {
    let lm = LockManager::new();
    let (old, young) = (lm.begin(None), lm.begin(None));
    lm.lock(&old, key("a"), X, no_wait()).unwrap();
    assert_eq!(
        lm.lock(&young, key("a"), S, no_wait()),
        Err(Error::DeadlineExceeded)
    );
    lm.lock(&young, key("b"), X, no_wait()).unwrap();
}

#[test]
fn shared_lock_upgrades_to_exclusive() {
    let lm = LockManager::new();
    let (t1, t2) = (lm.begin(None), lm.begin(None));
    lm.lock(&t1, key("a"), S, no_wait()).unwrap();
    lm.lock(&t1, key("a"), X, no_wait()).unwrap();
    assert_eq!(lm.held_mode(&t1, &key("a")), Some(X));
    // Asking for S again never downgrades.
    lm.lock(&t1, key("a"), S, no_wait()).unwrap();
    assert_eq!(lm.held_mode(&t1, &key("a")), Some(X));
    assert_eq!(lm.stats().locked_keys, 1);
    assert_eq!(
        lm.lock(&t2, key("a"), S, no_wait()),
        Err(Error::DeadlineExceeded)
    );
}

#[test]
fn upgrade_blocked_by_another_reader_waits() {
    let lm = LockManager::new();
    let (old, young) = (lm.begin(None), lm.begin(None));
    lm.lock(&old, key("a"), S, no_wait()).unwrap();
    lm.lock(&young, key("a"), S, no_wait()).unwrap();
    assert_eq!(
        lm.lock(&young, key("a"), X, no_wait()),
        Err(Error::DeadlineExceeded)
    );
    assert_eq!(lm.held_mode(&young, &key("a")), Some(S));
}

#[test]
fn older_requester_wounds_younger_holder() {
    let lm = LockManager::new();
    let (old, young) = (lm.begin(None), lm.begin(None));
    lm.lock(&young, key("a"), X, no_wait()).unwrap();

    // The younger is idle, so wounding it releases its locks on the spot: the older gets
    // the lock even with a deadline that has already passed.
    lm.lock(&old, key("a"), X, no_wait()).unwrap();
    assert!(young.is_wounded());
    assert_eq!(lm.held_mode(&young, &key("a")), None);

    // The wounded transaction's next request and its commit are refused.
    assert!(is_aborted(&lm.lock(&young, key("b"), S, no_wait())));
    assert!(is_aborted(&lm.mark_committing(&young)));
    assert!(Error::Aborted {
        reason: String::new()
    }
    .is_retryable());

    lm.release_all(&young);
    assert_eq!(young.state(), TxnState::Done);
    assert_eq!(lm.held_mode(&old, &key("a")), Some(X));
}

#[test]
fn older_proceeds_past_an_idle_wounded_younger_without_its_help() {
    let lm = Arc::new(LockManager::new());
    let (old, young) = (lm.begin(None), lm.begin(None));
    let youngest = lm.begin(None);
    lm.lock(&young, key("a"), S, no_wait()).unwrap();
    lm.lock(&young, key("b"), X, no_wait()).unwrap();
    lm.lock(
        &young,
        LockTarget::range("m", Some(b"p".to_vec())),
        S,
        no_wait(),
    )
    .unwrap();

    // The youngest waits for the younger's write lock (it may not wound an older one).
    let youngest_req = {
        let (lm, youngest) = (lm.clone(), youngest.clone());
        thread::spawn(move || lm.lock(&youngest, key("b"), S, within(10)))
    };
    eventually("youngest blocked", || lm.stats().waiting == 1);

    // The older needs the younger's key. The younger makes no call at all from here on,
    // yet the older gets through well within its 1 s deadline (before, it would have
    // waited for the younger's next call or release and failed with DeadlineExceeded).
    let started = Instant::now();
    lm.lock(&old, key("a"), X, within(1)).unwrap();
    lm.lock(&old, key("n"), X, within(1)).unwrap();
    assert!(started.elapsed() < Duration::from_secs(1));
    assert!(young.is_wounded());
    assert_eq!(
        young.state(),
        TxnState::Active,
        "only its owner ends the handle"
    );

    // Its waiters were woken too: the youngest gets the key it waited for.
    youngest_req.join().unwrap().unwrap();
    assert_eq!(lm.held_mode(&youngest, &key("b")), Some(S));
    for target in [
        key("a"),
        key("b"),
        LockTarget::range("m", Some(b"p".to_vec())),
    ] {
        assert_eq!(lm.held_mode(&young, &target), None, "{target:?}");
    }

    // The younger learns it at its next call, and can never lock again or commit.
    assert!(is_aborted(&lm.lock(&young, key("z"), S, no_wait())));
    assert!(is_aborted(&lm.lock(&young, key("a"), S, within(10))));
    assert!(is_aborted(&lm.mark_committing(&young)));
    assert_eq!(lm.held_mode(&young, &key("z")), None);

    // Its owner's release_all is a harmless no-op for the tables (twice, even).
    let before = lm.stats();
    lm.release_all(&young);
    lm.release_all(&young);
    assert_eq!(young.state(), TxnState::Done);
    assert_eq!(lm.stats(), before);
    assert_eq!(lm.held_mode(&old, &key("a")), Some(X));
    assert_eq!(lm.held_mode(&old, &key("n")), Some(X));
    assert_eq!(lm.held_mode(&youngest, &key("b")), Some(S));

    lm.release_all(&old);
    lm.release_all(&youngest);
    assert_eq!(lm.stats(), Default::default());
}

#[test]
fn a_wounded_victim_racing_for_new_locks_never_gets_one() {
    // The victim keeps taking fresh locks (never blocking) while the older wounds it: once
    // its locks are released at wound time it must not be granted another one.
    for round in 0..100 {
        let lm = Arc::new(LockManager::new());
        let (old, young) = (lm.begin(None), lm.begin(None));
        lm.lock(&young, key("a"), X, no_wait()).unwrap();
        let barrier = Arc::new(Barrier::new(2));
        let victim = {
            let (lm, young, barrier) = (lm.clone(), young.clone(), barrier.clone());
            thread::spawn(move || {
                barrier.wait();
                for i in 0u32.. {
                    let r = lm.lock(&young, LockTarget::key(i.to_be_bytes()), X, no_wait());
                    if is_aborted(&r) {
                        return i;
                    }
                    r.unwrap();
                }
                unreachable!()
            })
        };
        barrier.wait();
        lm.lock(&old, key("a"), X, within(1)).unwrap();
        let stopped_at = victim.join().unwrap();
        // Before the victim's release_all, only the older holds anything.
        let stats = lm.stats();
        assert_eq!(
            (stats.locked_keys, stats.transactions),
            (1, 1),
            "round {round}, stopped at {stopped_at}"
        );
        assert_eq!(lm.held_mode(&young, &key("a")), None);
        assert_eq!(lm.held_mode(&old, &key("a")), Some(X));
        lm.release_all(&young);
        lm.release_all(&old);
        assert_eq!(lm.stats(), Default::default());
    }
}

#[test]
fn a_victim_wounded_while_waiting_fails_and_its_owner_releases() {
    let lm = Arc::new(LockManager::new());
    let (old, young) = (lm.begin(None), lm.begin(None));
    lm.lock(&young, key("a"), X, no_wait()).unwrap();
    lm.lock(&old, key("b"), X, no_wait()).unwrap();

    // The younger blocks behind the older's lock on "b"; its owner releases only when told
    // (and is slow about it).
    let (told_tx, told_rx) = std::sync::mpsc::channel();
    let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
    let young_req = {
        let (lm, young) = (lm.clone(), young.clone());
        thread::spawn(move || {
            let r = lm.lock(&young, key("b"), S, within(10));
            told_tx.send(is_aborted(&r)).unwrap();
            go_rx.recv().unwrap();
            lm.release_all(&young);
        })
    };
    eventually("younger blocked", || lm.stats().waiting == 1);
    let requester = {
        let (lm, old) = (lm.clone(), old.clone());
        thread::spawn(move || lm.lock(&old, key("a"), X, within(10)))
    };
    // The wound interrupts the blocked request, which fails with Aborted.
    assert!(told_rx.recv_timeout(Duration::from_secs(5)).unwrap());
    go_tx.send(()).unwrap();
    young_req.join().unwrap();
    requester.join().unwrap().unwrap();
    assert_eq!(lm.held_mode(&old, &key("a")), Some(X));
    assert_eq!(young.state(), TxnState::Done);
}

#[test]
fn wounding_interrupts_a_pending_request() {
    let lm = Arc::new(LockManager::new());
    let (old, young) = (lm.begin(None), lm.begin(None));
    lm.lock(&young, key("a"), S, no_wait()).unwrap();
    lm.lock(&old, key("b"), S, no_wait()).unwrap();

    // The younger one blocks behind the older one's read...
    let young_req = {
        let (lm, young) = (lm.clone(), young.clone());
        thread::spawn(move || {
            let r = lm.lock(&young, key("b"), X, within(10));
            lm.release_all(&young);
            r
        })
    };
    eventually("younger blocked", || lm.stats().waiting == 1);
    // ...then the older one needs the younger one's key: its pending request fails now,
    // long before its 10 s deadline.
    let started = Instant::now();
    lm.lock(&old, key("a"), X, within(10)).unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(is_aborted(&young_req.join().unwrap()));
}

#[test]
fn younger_requester_waits_for_older_holder() {
    let lm = Arc::new(LockManager::new());
    let (old, young) = (lm.begin(None), lm.begin(None));
    lm.lock(&old, key("a"), X, no_wait()).unwrap();
    let requester = {
        let (lm, young) = (lm.clone(), young.clone());
        thread::spawn(move || lm.lock(&young, key("a"), X, within(10)))
    };
    eventually("younger blocked", || lm.stats().waiting == 1);
    assert!(!old.is_wounded(), "a younger transaction never wounds");
    lm.mark_committing(&old).unwrap();
    lm.release_all(&old);
    requester.join().unwrap().unwrap();
}

#[test]
fn committing_holder_is_not_wounded() {
    let lm = Arc::new(LockManager::new());
    let (old, young) = (lm.begin(None), lm.begin(None));
    lm.lock(&young, key("a"), X, no_wait()).unwrap();
    lm.mark_committing(&young).unwrap();
    assert_eq!(young.state(), TxnState::Committing);

    let requester = {
        let (lm, old) = (lm.clone(), old.clone());
        thread::spawn(move || lm.lock(&old, key("a"), X, within(10)))
    };
    eventually("older blocked", || lm.stats().waiting == 1);
    assert!(!young.is_wounded());
    lm.mark_committing(&young).unwrap(); // idempotent, still fine
    lm.release_all(&young);
    requester.join().unwrap().unwrap();
}

#[test]
fn retry_keeps_its_priority_and_wins() {
    let lm = LockManager::new();
    let first = lm.begin(None);
    let other = lm.begin(None);
    lm.release_all(&first);
    // A retry begun after `other` still counts as older than it.
    let retry = lm.begin(Some(first.priority()));
    assert_eq!(retry.priority(), first.priority());
    assert_ne!(retry.id(), first.id());
    lm.lock(&other, key("a"), X, no_wait()).unwrap();
    // The idle `other` is wounded and its locks released at once.
    lm.lock(&retry, key("a"), X, no_wait()).unwrap();
    assert!(other.is_wounded());
}

#[test]
fn requests_outside_the_active_state_are_refused() {
    let lm = LockManager::new();
    let t = lm.begin(None);
    lm.mark_committing(&t).unwrap();
    assert!(matches!(
        lm.lock(&t, key("a"), X, no_wait()),
        Err(Error::FailedPrecondition(_))
    ));
    lm.release_all(&t);
    assert!(matches!(
        lm.lock(&t, key("a"), S, no_wait()),
        Err(Error::FailedPrecondition(_))
    ));
    assert!(matches!(
        lm.mark_committing(&t),
        Err(Error::FailedPrecondition(_))
    ));
}

#[test]
fn release_all_empties_the_tables() {
    let lm = LockManager::new();
    let t = lm.begin(None);
    for k in ["a", "b", "c"] {
        lm.lock(&t, key(k), X, no_wait()).unwrap();
    }
    lm.lock(&t, LockTarget::range("d", None), S, no_wait())
        .unwrap();
    let stats = lm.stats();
    assert_eq!(
        (stats.locked_keys, stats.range_locks, stats.transactions),
        (3, 1, 1)
    );
    lm.release_all(&t);
    assert_eq!(lm.stats(), Default::default());
}

#[test]
fn range_lock_blocks_inserts_inside_only() {
    let lm = LockManager::new();
    let (reader, writer) = (lm.begin(None), lm.begin(None));
    let range = LockTarget::range("b", Some(b"d".to_vec()));
    lm.lock(&reader, range, S, no_wait()).unwrap();

    for inside in ["b", "c", "cz"] {
        assert_eq!(
            lm.lock(&writer, key(inside), X, no_wait()),
            Err(Error::DeadlineExceeded),
            "insert of {inside} must wait"
        );
    }
    for outside in ["a", "d", "e"] {
        lm.lock(&writer, key(outside), X, no_wait()).unwrap();
    }
    // Reads inside the range are compatible.
    lm.lock(&writer, key("c"), S, no_wait()).unwrap();
}

#[test]
fn unbounded_range_covers_everything_after_start() {
    let lm = LockManager::new();
    let (reader, writer) = (lm.begin(None), lm.begin(None));
    lm.lock(&reader, LockTarget::range("m", None), S, no_wait())
        .unwrap();
    assert_eq!(
        lm.lock(&writer, key("zzzz"), X, no_wait()),
        Err(Error::DeadlineExceeded)
    );
    lm.lock(&writer, key("l"), X, no_wait()).unwrap();
}

#[test]
fn range_request_conflicts_with_keys_and_ranges_held() {
    let lm = LockManager::new();
    let (old, young) = (lm.begin(None), lm.begin(None));
    lm.lock(&old, key("c"), X, no_wait()).unwrap();
    lm.lock(
        &old,
        LockTarget::range("x", Some(b"z".to_vec())),
        X,
        no_wait(),
    )
    .unwrap();
    let blocked = [
        LockTarget::range("a", Some(b"d".to_vec())),
        LockTarget::range("c", None),
        LockTarget::range("y", Some(b"yy".to_vec())),
        LockTarget::range("w", Some(b"x\0".to_vec())),
    ];
    for r in blocked {
        assert_eq!(
            lm.lock(&young, r.clone(), S, no_wait()),
            Err(Error::DeadlineExceeded),
            "{r:?}"
        );
    }
    let free = [
        LockTarget::range("a", Some(b"c".to_vec())),
        LockTarget::range("d", Some(b"x".to_vec())),
        LockTarget::range("z", None),
        // Empty and inverted ranges cover nothing (and must not panic).
        LockTarget::range("c", Some(b"c".to_vec())),
        LockTarget::range("y", Some(b"a".to_vec())),
    ];
    for r in free {
        lm.lock(&young, r.clone(), S, no_wait())
            .unwrap_or_else(|e| panic!("{r:?}: {e}"));
    }
}

#[test]
fn shared_ranges_are_compatible_and_block_writers_until_released() {
    let lm = Arc::new(LockManager::new());
    let (old, young) = (lm.begin(None), lm.begin(None));
    lm.lock(
        &young,
        LockTarget::range("a", Some(b"m".to_vec())),
        S,
        no_wait(),
    )
    .unwrap();
    lm.lock(&old, LockTarget::range("f", None), S, no_wait())
        .unwrap();
    // The older one inserts into the younger one's range: it wounds and waits.
    let insert = {
        let (lm, old) = (lm.clone(), old.clone());
        thread::spawn(move || lm.lock(&old, key("g"), X, within(10)))
    };
    eventually("younger wounded", || young.is_wounded());
    lm.release_all(&young);
    insert.join().unwrap().unwrap();
}

#[test]
fn write_skew_is_prevented() {
    // Each transaction reads one key and writes the other: serially, the second would see
    // the first's write. Under 2PL exactly one of the two may commit: the older one.
    for round in 0..100 {
        let lm = Arc::new(LockManager::new());
        let barrier = Arc::new(Barrier::new(2));
        let txns = [lm.begin(None), lm.begin(None)];
        let older = txns[0].id();
        let plans = if round % 2 == 0 {
            [("a", "b"), ("b", "a")]
        } else {
            [("b", "a"), ("a", "b")]
        };
        let threads: Vec<_> = txns
            .into_iter()
            .zip(plans)
            .map(|(txn, (read, write))| {
                let (lm, barrier) = (lm.clone(), barrier.clone());
                thread::spawn(move || {
                    lm.lock(&txn, key(read), S, within(10)).unwrap();
                    barrier.wait(); // both have read before either writes
                    let committed = lm
                        .lock(&txn, key(write), X, within(10))
                        .and_then(|()| lm.mark_committing(&txn));
                    lm.release_all(&txn);
                    match committed {
                        Ok(()) => Some(txn.id()),
                        Err(Error::Aborted { .. }) => None,
                        Err(e) => panic!("round {round}: unexpected {e}"),
                    }
                })
            })
            .collect();
        let committed: Vec<_> = threads
            .into_iter()
            .filter_map(|t| t.join().unwrap())
            .collect();
        assert_eq!(committed, vec![older], "round {round}");
        assert_eq!(lm.stats(), Default::default(), "round {round}");
    }
}

/// A small deterministic PRNG (xorshift64*), so the stress test needs no dependency.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

/// Who holds what, as the test itself observes it while transactions believe they hold
/// their locks: the transactions and modes per key. A transaction wounded while idle loses
/// its locks at once (it can never commit), so two conflicting entries are fine as long as
/// one of them is wounded; a transaction that reached `mark_committing` really holds its
/// locks, so nothing conflicting with it may be unwounded.
type Model = Mutex<HashMap<u8, Vec<(Arc<TxnHandle>, LockMode)>>>;

/// Asserts that `txn` holding `mine` is exclusive in `model`, up to wounded transactions.
fn check_exclusion(
    held: &HashMap<u8, Vec<(Arc<TxnHandle>, LockMode)>>,
    txn: &TxnHandle,
    mine: &HashMap<u8, LockMode>,
    when: &str,
) {
    for (&k, &mode) in mine {
        for (other, other_mode) in held.get(&k).into_iter().flatten() {
            if other.id() != txn.id() && !mode.is_compatible_with(*other_mode) {
                assert!(
                    other.is_wounded() || txn.is_wounded(),
                    "{when}: key {k} held {mode:?} by {} and {other_mode:?} by {}, \
                     neither wounded",
                    txn.id(),
                    other.id()
                );
            }
        }
    }
}

#[test]
fn random_contention_never_deadlocks() {
    const THREADS: u64 = 8;
    const TXNS_PER_THREAD: usize = 150;
    const KEYS: u64 = 12;

    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let runner = thread::spawn(move || {
        let lm = Arc::new(LockManager::new());
        let model: Arc<Model> = Arc::default();
        let threads: Vec<_> = (0..THREADS)
            .map(|t| {
                let (lm, model) = (lm.clone(), model.clone());
                thread::spawn(move || {
                    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (t + 1).wrapping_mul(0x1234_5677));
                    let mut aborts = 0;
                    for _ in 0..TXNS_PER_THREAD {
                        // (first key, last key, mode): single keys, plus some shared ranges.
                        let ops: Vec<(u8, u8, LockMode)> = (0..1 + rng.below(4))
                            .map(|_| {
                                let k = rng.below(KEYS) as u8;
                                match rng.below(4) {
                                    0 => (k, (k + 1 + rng.below(3) as u8).min(KEYS as u8), S),
                                    1 => (k, k + 1, S),
                                    _ => (k, k + 1, X),
                                }
                            })
                            .collect();
                        let priority = rng.below(1_000);
                        loop {
                            let txn = lm.begin(Some(priority));
                            match run_txn(&lm, &model, &txn, &ops) {
                                Ok(()) => break,
                                Err(Error::Aborted { .. }) => aborts += 1,
                                Err(e) => panic!("deadlock or bug: {e}"),
                            }
                        }
                    }
                    aborts
                })
            })
            .collect();
        let aborts: u64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
        assert_eq!(lm.stats(), Default::default(), "every lock was released");
        done_tx.send(aborts).unwrap();
    });
    match done_rx.recv_timeout(Duration::from_secs(120)) {
        Ok(aborts) => {
            eprintln!("stress test finished with {aborts} aborts");
            assert!(aborts > 0, "the workload must actually contend");
        }
        Err(_) => {
            if runner.is_finished() {
                // A worker panicked: surface its message.
                runner.join().unwrap();
            }
            panic!("stress test hung: deadlock");
        }
    }
    runner.join().unwrap();
}

/// Locks everything in `ops` (in order), checks exclusion against the model while holding
/// the locks, then commits; always releases.
fn run_txn(
    lm: &LockManager,
    model: &Model,
    txn: &Arc<TxnHandle>,
    ops: &[(u8, u8, LockMode)],
) -> Result<(), Error> {
    let result = (|| {
        for &(first, end, mode) in ops {
            let target = if end == first + 1 {
                LockTarget::key([first])
            } else {
                LockTarget::range([first], Some(vec![end]))
            };
            lm.lock(txn, target, mode, within(30))?;
        }
        // The strongest mode this transaction holds on each key.
        let mut mine: HashMap<u8, LockMode> = HashMap::new();
        for &(first, end, mode) in ops {
            for k in first..end {
                let m = mine.entry(k).or_insert(mode);
                *m = (*m).max(mode);
            }
        }
        {
            let mut held = model.lock().unwrap();
            check_exclusion(&held, txn, &mine, "after locking");
            for (&k, &mode) in &mine {
                held.entry(k).or_default().push((txn.clone(), mode));
            }
        }
        thread::yield_now();
        let committing = lm.mark_committing(txn);
        let mut held = model.lock().unwrap();
        if committing.is_ok() {
            // Committing: it cannot be wounded and truly holds everything it locked.
            assert!(!txn.is_wounded());
            check_exclusion(&held, txn, &mine, "when committing");
        }
        for k in mine.keys() {
            held.get_mut(k).unwrap().retain(|(t, _)| t.id() != txn.id());
        }
        committing
    })();
    lm.release_all(txn);
    result
}
