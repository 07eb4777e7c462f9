//! Commit timestamps stay strictly increasing and on the microsecond grid under concurrency.

use std::sync::Arc;
use std::thread;

use rowtree_txn::{Clock, ManualClock, SystemClock, TimestampOracle};

fn hammer(oracle: Arc<TimestampOracle>) {
    const THREADS: usize = 8;
    const PER_THREAD: usize = 5_000;
    let per_thread: Vec<Vec<u64>> = (0..THREADS)
        .map(|_| {
            let oracle = oracle.clone();
            thread::spawn(move || (0..PER_THREAD).map(|_| oracle.next()).collect())
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().unwrap())
        .collect();
    for seq in &per_thread {
        assert!(seq.windows(2).all(|w| w[0] < w[1]), "increasing per thread");
    }
    let mut all: Vec<u64> = per_thread.concat();
    assert!(
        all.iter().all(|ts| ts % 1_000 == 0),
        "microsecond granularity"
    );
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), THREADS * PER_THREAD, "no timestamp issued twice");
    assert_eq!(oracle.last(), *all.last().unwrap());
}

#[test]
fn unique_and_increasing_with_the_system_clock() {
    let before = SystemClock.now_nanos();
    let oracle = Arc::new(TimestampOracle::new(Arc::new(SystemClock)));
    hammer(oracle.clone());
    assert!(oracle.last() >= before - before % 1_000);
}

#[test]
fn unique_and_increasing_with_a_frozen_clock() {
    let oracle = Arc::new(TimestampOracle::new(Arc::new(ManualClock::new(42_000))));
    hammer(oracle.clone());
    // 40,000 timestamps 1 µs apart, starting at the clock.
    assert_eq!(oracle.last(), 42_000 + 39_999 * 1_000);
}
