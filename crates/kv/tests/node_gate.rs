//! Per-node admission: splits on different nodes are served in parallel,
//! splits on one node share its capacity. Time is injected: the clock stands
//! still and the gate's sleeper records each wait instead of sleeping, so a
//! request's wait is the time (after now) at which its node serves it.

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use rowtree_kv::nodes::{NodeGate, READ_COST, WRITE_ROW_COST};
use rowtree_kv::{NodeId, Router, SplitMap};
use rowtree_storage::{Durability, MemoryEngine, Mvcc};

const T0: u64 = 1_000_000_000_000;

/// A router over rows 0..100 in splits `[.., 50) [50, ..)`, the right one
/// on `right_node`, gated at 1,000 reads/s per node; and the recorded waits.
fn gated_router(right_node: u32) -> (Router, Arc<Mutex<Vec<Duration>>>) {
    let map = Arc::new(SplitMap::new());
    map.add_split_point_on(&[50], NodeId(0), NodeId(right_node))
        .unwrap();
    let waits = Arc::new(Mutex::new(Vec::new()));
    let recorded = waits.clone();
    let gate = NodeGate::with_time(
        1_000.0,
        Arc::new(|| T0),
        Arc::new(move |d| recorded.lock().push(d)),
    );
    let router = Router::with_clock(
        Mvcc::new(Arc::new(MemoryEngine::new())),
        map,
        Arc::new(|| T0),
    );
    // Load the rows before the gate is on.
    let writes: Vec<(Vec<u8>, Option<Vec<u8>>)> =
        (0..100u8).map(|i| (vec![i, 0], Some(vec![i]))).collect();
    router.commit(10, &writes, Durability::Buffered).unwrap();
    (router.with_gate(Arc::new(gate)), waits)
}

/// 200 gets alternating between the two splits; the latest time (after
/// now) at which a request of each split was served.
fn serve(router: &Router, waits: &Mutex<Vec<Duration>>) -> (Duration, Duration) {
    let (mut left, mut right) = (Duration::ZERO, Duration::ZERO);
    for i in 0..200u32 {
        let key = if i % 2 == 0 { [10u8, 0] } else { [60u8, 0] };
        let before = waits.lock().len();
        assert!(router.get(&key, 20).unwrap().is_some());
        let wait = waits.lock().get(before).copied().unwrap_or_default();
        if i % 2 == 0 {
            left = left.max(wait);
        } else {
            right = right.max(wait);
        }
    }
    (left, right)
}

#[test]
fn splits_on_different_nodes_are_served_in_parallel() {
    let (router, waits) = gated_router(1);
    let (left, right) = serve(&router, &waits);
    // 100 reads per node at 1,000 reads/s: 100 ms, less the 10 ms burst.
    for t in [left, right] {
        assert!(
            t > Duration::from_millis(80) && t < Duration::from_millis(100),
            "{t:?}"
        );
    }
    let gate = router.gate().unwrap();
    assert_eq!(gate.admitted(), 200);
    assert!(gate.waited(NodeId(1)) > Duration::ZERO);
}

#[test]
fn splits_on_one_node_are_throttled_together() {
    let (router, waits) = gated_router(0);
    let (left, right) = serve(&router, &waits);
    // 200 reads on one node: 200 ms, less the burst; both splits finish late.
    let last = left.max(right);
    assert!(
        last > Duration::from_millis(180) && last < Duration::from_millis(200),
        "{last:?}"
    );
    assert!(left > Duration::from_millis(170), "{left:?}");
    assert_eq!(router.gate().unwrap().waited(NodeId(1)), Duration::ZERO);
}

#[test]
fn writes_and_scans_wait_for_their_node() {
    let (router, waits) = gated_router(1);
    // A commit of 35 rows on node 0 costs 35/3500 s = 10 ms of its time at
    // full speed, i.e. 64 ms at 1,000 reads/s; the burst covers 10 ms.
    let writes: Vec<(Vec<u8>, Option<Vec<u8>>)> =
        (0..35u8).map(|i| (vec![i, 0], Some(vec![1]))).collect();
    router.commit(30, &writes, Durability::Buffered).unwrap();
    let expected = 35.0 * WRITE_ROW_COST * 22_500.0 / 1_000.0 - 0.010;
    let w = waits.lock().last().copied().unwrap();
    assert!((w.as_secs_f64() - expected).abs() < 1e-6, "{w:?}");
    // A scan of the right split (50 rows, node 1) waits for node 1 only.
    let rows = router.scan(&[50], None, 40, false).count();
    assert_eq!(rows, 50);
    assert!(router.gate().unwrap().waited(NodeId(1)) > Duration::ZERO);
    // Read in batches; the last batch is served when node 1 has done all 50
    // reads at 1,000 reads/s, less the 10-read burst: 40 ms.
    let last = waits.lock().last().copied().unwrap().as_secs_f64();
    let expected = (50.0 * READ_COST * 22_500.0 - 10.0) / 1_000.0;
    assert!((last - expected).abs() < 1e-6, "{last}");
}

/// With gates, a split is charged the time it holds its node, so its CPU
/// score is a percentage of that (slowed) node: 500 reads in a second on a
/// node of 1,000 reads/s is half the node.
#[test]
fn scores_are_percentages_of_gated_nodes() {
    let (router, _waits) = gated_router(1);
    for _ in 0..500 {
        assert!(router.get(&[10, 0], 20).unwrap().is_some());
    }
    let split = router.split_map().split_for(&[10, 0]);
    let score = split.load.lock().score(T0);
    assert!((score - 50.0).abs() < 0.5, "score {score}");
}

/// A limited scan reads no more rows than it returns: its node is charged
/// for 20 reads, where `take(20)` over an unlimited scan would have read
/// whole batches (8 + 16 = 24 rows) and dropped the last 4.
#[test]
fn a_limited_scan_reads_only_what_it_returns() {
    let (router, waits) = gated_router(1);
    let rows = router.scan(&[50], None, 40, false).limit(20).count();
    assert_eq!(rows, 20);
    let last = waits.lock().last().copied().unwrap().as_secs_f64();
    let expected = (20.0 * READ_COST * 22_500.0 - 10.0) / 1_000.0;
    assert!((last - expected).abs() < 1e-6, "{last} against {expected}");
    // The same scan without the limit, cut by the iterator: 24 reads.
    let (router, waits) = gated_router(1);
    assert_eq!(router.scan(&[50], None, 40, false).take(20).count(), 20);
    let last = waits.lock().last().copied().unwrap().as_secs_f64();
    let over = (24.0 * READ_COST * 22_500.0 - 10.0) / 1_000.0;
    assert!((last - over).abs() < 1e-6, "{last} against {over}");
}
