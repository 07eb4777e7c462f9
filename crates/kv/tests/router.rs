//! Routing reads and writes across splits, and charging each split.

use std::ops::Bound;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rowtree_kv::{Router, SplitCounters, SplitMap};
use rowtree_storage::{Durability, MemoryEngine, Mvcc};

/// A prefix-free row key for row `i`: its number, then ROW_END.
fn key(i: u8) -> Vec<u8> {
    vec![i, 0]
}

fn value(i: u8) -> Vec<u8> {
    vec![i; 3]
}

/// 100 rows at ts 10, in splits `[.., 25) [25, 50) [50, 75) [75, ..)`.
fn router() -> Router {
    let splits = SplitMap::with_split_points([[25u8], [50], [75]]);
    let router = Router::new(Mvcc::new(Arc::new(MemoryEngine::new())), splits);
    let writes: Vec<(Vec<u8>, Option<Vec<u8>>)> =
        (0..100).map(|i| (key(i), Some(value(i)))).collect();
    let touched = router.commit(10, &writes, Durability::Buffered).unwrap();
    assert_eq!(touched.len(), 4);
    router
}

fn counters(router: &Router) -> Vec<SplitCounters> {
    router.stats_snapshot().iter().map(|s| s.counters).collect()
}

fn rows_read(router: &Router) -> Vec<u64> {
    counters(router).iter().map(|c| c.rows_read).collect()
}

#[test]
fn scans_cross_splits_in_order_and_charge_each_split() {
    let router = router();
    let rows: Vec<_> = router
        .scan_bounds(Bound::Unbounded, Bound::Unbounded, 10, false)
        .map(Result::unwrap)
        .collect();
    let expected: Vec<_> = (0..100).map(|i| (key(i), value(i))).collect();
    assert_eq!(rows, expected);
    assert_eq!(rows_read(&router), vec![25, 25, 25, 25]);
    for c in counters(&router) {
        assert_eq!(c.reads, 1);
        assert_eq!(c.bytes_read, 25 * 5);
    }

    let rows: Vec<_> = router
        .scan_bounds(Bound::Unbounded, Bound::Unbounded, 10, true)
        .map(Result::unwrap)
        .collect();
    let mut reversed = expected.clone();
    reversed.reverse();
    assert_eq!(rows, reversed);
    assert_eq!(rows_read(&router), vec![50, 50, 50, 50]);
}

#[test]
fn ranged_scans_touch_only_overlapping_splits() {
    let router = router();
    let start = key(10);
    let end = key(60);
    for reverse in [false, true] {
        let keys: Vec<_> = router
            .scan_bounds(Bound::Included(&start), Bound::Excluded(&end), 10, reverse)
            .map(|r| r.unwrap().0)
            .collect();
        let mut expected: Vec<_> = (10..60).map(key).collect();
        if reverse {
            expected.reverse();
        }
        assert_eq!(keys, expected);
    }
    assert_eq!(rows_read(&router), vec![30, 50, 20, 0]);
    let reads: Vec<_> = counters(&router).iter().map(|c| c.reads).collect();
    assert_eq!(reads, vec![2, 2, 2, 0]);

    // Bounds that are exactly split boundaries.
    let n: Vec<_> = router
        .scan_bounds(
            Bound::Included(&[25u8][..]),
            Bound::Excluded(&[50u8][..]),
            10,
            false,
        )
        .map(|r| r.unwrap().0)
        .collect();
    assert_eq!(n, (25..50).map(key).collect::<Vec<_>>());
    assert_eq!(rows_read(&router), vec![30, 75, 20, 0]);
    // An empty range reads nothing and charges nothing.
    assert_eq!(
        router
            .scan_bounds(Bound::Included(&end), Bound::Excluded(&start), 10, false)
            .count(),
        0
    );
    assert_eq!(rows_read(&router), vec![30, 75, 20, 0]);
}

#[test]
fn half_open_scans() {
    let router = router();
    let keys = |start: &[u8], end: Option<&[u8]>, reverse| {
        router
            .scan(start, end, 10, reverse)
            .map(|r| r.unwrap().0)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        keys(&[20], Some(&[30]), false),
        (20..30).map(key).collect::<Vec<_>>()
    );
    assert_eq!(keys(&[98], None, true), vec![key(99), key(98)]);
    assert_eq!(keys(&[], None, false).len(), 100);
    assert!(keys(&[30], Some(&[20]), false).is_empty());
}

#[test]
fn a_dropped_scan_charges_only_the_rows_it_served() {
    let router = router();
    let mut scan = router.scan_bounds(Bound::Unbounded, Bound::Unbounded, 10, false);
    let first: Vec<_> = scan.by_ref().take(30).map(Result::unwrap).collect();
    assert_eq!(first.last().unwrap().0, key(29));
    drop(scan);
    assert_eq!(rows_read(&router), vec![25, 5, 0, 0]);
}

#[test]
fn gets_and_visibility() {
    let router = router();
    router
        .commit(20, &[(key(30), None::<Vec<u8>>)], Durability::Buffered)
        .unwrap();
    assert_eq!(router.get(&key(30), 15).unwrap(), Some(value(30)));
    assert_eq!(router.get(&key(30), 20).unwrap(), None);
    assert_eq!(router.get(&key(200), 20).unwrap(), None);
    let c = counters(&router);
    assert_eq!((c[1].reads, c[1].rows_read, c[1].bytes_read), (2, 1, 5));
    assert_eq!((c[3].reads, c[3].rows_read), (1, 0));
    let at_20 = router
        .scan_bounds(Bound::Unbounded, Bound::Unbounded, 20, false)
        .count();
    assert_eq!(at_20, 99);
}

#[test]
fn writes_are_charged_to_their_splits() {
    let router = Router::new(
        Mvcc::new(Arc::new(MemoryEngine::new())),
        SplitMap::with_split_points([[25u8], [50], [75]]),
    );
    let one = router.charge_writes(&[(key(1), Some(vec![0u8; 10])), (key(2), None)]);
    assert_eq!(one.len(), 1);
    assert!(!one.is_multi_split());
    let two = router.charge_writes(&[
        (key(3), Some(vec![1u8])),
        (key(80), Some(vec![1u8])),
        (key(4), None),
    ]);
    assert!(two.is_multi_split());
    let ids: Vec<_> = router.stats_snapshot().iter().map(|s| s.id).collect();
    assert!(two.contains(ids[0]) && two.contains(ids[3]));
    let c = counters(&router);
    assert_eq!(
        (c[0].writes, c[0].rows_written, c[0].bytes_written),
        (2, 4, 12 + 2 + 3 + 2)
    );
    assert_eq!(
        (c[3].writes, c[3].rows_written, c[3].bytes_written),
        (1, 1, 3)
    );
    assert_eq!(c[1], SplitCounters::default());
}

#[test]
fn split_points_added_later_route_new_requests() {
    let router = router();
    assert!(router.splits().add_split_point(&[10u8]));
    assert!(!router.splits().add_split_point(&[10u8]));
    let snapshot = router.stats_snapshot();
    assert_eq!(snapshot.len(), 5);
    assert_eq!(snapshot[0].limit, Some(vec![10u8]));
    assert_eq!(snapshot[1].start, vec![10u8]);
    let n = router
        .scan_bounds(Bound::Unbounded, Bound::Unbounded, 10, false)
        .count();
    assert_eq!(n, 100);
    assert_eq!(rows_read(&router), vec![10, 15, 25, 25, 25]);
}

#[test]
fn concurrent_scans_while_adding_split_points() {
    let router = Arc::new(router());
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        for reverse in [false, true] {
            let router = &router;
            let stop = &stop;
            s.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let keys: Vec<_> = router
                        .scan_bounds(Bound::Unbounded, Bound::Unbounded, 10, reverse)
                        .map(|r| r.unwrap().0)
                        .collect();
                    let mut expected: Vec<_> = (0..100).map(key).collect();
                    if reverse {
                        expected.reverse();
                    }
                    assert_eq!(keys, expected);
                    assert_eq!(router.get(&key(42), 10).unwrap(), Some(value(42)));
                }
            });
        }
        for point in 1..100u8 {
            router.splits().add_split_point(&[point, 0]);
            std::thread::yield_now();
        }
        stop.store(true, Ordering::Relaxed);
    });
    // 100 rows, 1 + 3 + 99 split points: each row in its own split.
    let snapshot = router.stats_snapshot();
    assert_eq!(snapshot.len(), 103);
    let total: u64 = snapshot.iter().map(|s| s.counters.rows_read).sum();
    let n = router
        .scan_bounds(Bound::Unbounded, Bound::Unbounded, 10, false)
        .count();
    assert_eq!(n, 100);
    let after: u64 = router
        .stats_snapshot()
        .iter()
        .map(|s| s.counters.rows_read)
        .sum();
    assert_eq!(after - total, 100);
    // Splits are contiguous and cover everything.
    let splits = router.splits().splits();
    assert!(splits[0].start.is_empty());
    assert!(splits.last().unwrap().limit.is_none());
    for pair in splits.windows(2) {
        assert_eq!(pair[0].limit.as_ref(), Some(&pair[1].start));
    }
}

/// The paths that are not load (the write path, metadata, raw stored scans,
/// garbage collection, inspection) reach storage through the router without
/// charging any split.
#[test]
fn writes_metadata_and_stored_scans_go_through_the_router_uncharged() {
    let router = router();
    let before = counters(&router);

    // One batch: a new version of row 30, a delete of row 31, two metadata keys.
    let mut batch = rowtree_storage::WriteBatch::new();
    router.stage_writes(
        &mut batch,
        20,
        [(key(30), Some(value(99))), (key(31), None::<Vec<u8>>)],
    );
    router.stage_meta(&mut batch, b"m/a".to_vec(), Some(b"1".to_vec()));
    router.stage_meta(&mut batch, b"m/b".to_vec(), Some(b"2".to_vec()));
    router.write(batch, Durability::Buffered).unwrap();
    assert_eq!(counters(&router), before);

    assert_eq!(router.meta_get(b"m/a").unwrap(), Some(b"1".to_vec()));
    let mut batch = rowtree_storage::WriteBatch::new();
    router.stage_meta(&mut batch, b"m/a".to_vec(), None);
    router.write(batch, Durability::Buffered).unwrap();
    assert_eq!(router.meta_get(b"m/a").unwrap(), None);
    let meta: Vec<_> = router.meta_scan(b"m/").map(Result::unwrap).collect();
    assert_eq!(meta, vec![(b"m/b".to_vec(), b"2".to_vec())]);

    // The raw scan sees every version: rows 30 and 31 have two each.
    let stored = router.scan_stored(&[25], Some(&[50])).count();
    assert_eq!(stored, 25 + 2);
    assert_eq!(router.scan_stored(&[75], None).count(), 25);

    // A snapshot read sees the new state, uncharged.
    let rows: Vec<_> = router
        .scan_uncharged(
            Bound::Included(&key(30)[..]),
            Bound::Included(&key(31)[..]),
            20,
            false,
        )
        .map(Result::unwrap)
        .collect();
    assert_eq!(rows, vec![(key(30), value(99))]);

    // Collecting garbage above ts 20 leaves one version of row 30 and none of
    // row 31 (its tombstone shadows everything older).
    router.collect_garbage(30, usize::MAX).unwrap();
    assert_eq!(router.scan_stored(&[25], Some(&[50])).count(), 25 - 1);
    assert_eq!(counters(&router), before);
}
