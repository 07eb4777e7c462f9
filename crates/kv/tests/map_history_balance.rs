//! The split map's invariant under random splits and merges, history
//! retention, balancer rules, policy corner cases, and the router feeding the
//! load trackers.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use proptest::prelude::*;
use rowtree_kv::{
    Balancer, BalancerConfig, Granularity, IntervalStat, KeyAligner, LoadDecision, LoadHistory,
    LoadTracker, NodeId, Router, SampleSnapshot, SplitId, SplitMap, SplitPolicy,
    UnsplittableReason,
};
use rowtree_storage::{Durability, MemoryEngine, Mvcc};

const S: u64 = 1_000_000_000;
const MINUTE: u64 = 60 * S;

fn covers_key_space(map: &SplitMap) -> Result<(), String> {
    let splits = map.splits();
    if splits[0].start != b"" {
        return Err("first split does not start at the empty key".into());
    }
    for w in splits.windows(2) {
        if w[0].limit.as_deref() != Some(w[1].start.as_slice()) {
            return Err(format!("gap or overlap at {:?}", w[1].start));
        }
        if w[0].start >= w[1].start {
            return Err("not ordered".into());
        }
    }
    if splits.last().unwrap().limit.is_some() {
        return Err("last split has a limit".into());
    }
    Ok(())
}

#[derive(Debug, Clone)]
enum Op {
    Split(Vec<u8>, u32),
    Merge(usize),
    Move(usize, u32),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (prop::collection::vec(0u8..4, 0..4), 0u32..4).prop_map(|(k, n)| Op::Split(k, n)),
        (0usize..32).prop_map(Op::Merge),
        (0usize..32, 0u32..4).prop_map(|(i, n)| Op::Move(i, n)),
    ]
}

proptest! {
    #[test]
    fn map_covers_the_key_space_after_random_splits_and_merges(ops in prop::collection::vec(op(), 0..60)) {
        let map = SplitMap::new();
        for op in ops {
            let before = map.len();
            match op {
                Op::Split(key, node) => {
                    let r = map.add_split_point_on(&key, NodeId(node), NodeId(node + 1));
                    prop_assert_eq!(r.is_some(), map.len() == before + 1);
                    if let Some((l, r)) = r {
                        prop_assert_eq!(map.get(l).unwrap().node(), NodeId(node));
                        prop_assert_eq!(map.get(r).unwrap().node(), NodeId(node + 1));
                    }
                }
                Op::Merge(i) => {
                    let splits = map.splits();
                    if i + 1 < splits.len() {
                        let into = map.merge(splits[i].id, splits[i + 1].id);
                        prop_assert!(into.is_some());
                        prop_assert_eq!(map.get(into.unwrap()).unwrap().node(), splits[i].node());
                        prop_assert_eq!(map.len(), before - 1);
                    }
                    // Non-neighbours never merge.
                    if i + 2 < splits.len() {
                        prop_assert!(map.merge(splits[i].id, splits[i + 2].id).is_none());
                    }
                }
                Op::Move(i, node) => {
                    let splits = map.splits();
                    if let Some(s) = splits.get(i) {
                        prop_assert!(map.set_node(s.id, NodeId(node)));
                        prop_assert_eq!(s.node(), NodeId(node));
                    }
                }
            }
            prop_assert!(covers_key_space(&map).is_ok(), "{:?}", covers_key_space(&map));
        }
    }
}

fn stat(cpu_nanos: u64) -> IntervalStat {
    IntervalStat {
        interval_end: 0,
        split: SplitId(1),
        start: vec![],
        limit: None,
        node: NodeId(0),
        replicas: Vec::new(),
        cpu_score: cpu_nanos as f64 / MINUTE as f64 * 100.0,
        requests: 1,
        rows_read: 1,
        rows_written: 0,
        bytes_read: 10,
        bytes_written: 0,
        cpu_nanos,
        unsplittable: vec![],
        buckets: Default::default(),
    }
}

#[test]
fn history_retention_24h_4d_30d() {
    let mut h = LoadHistory::new();
    let days = 31;
    for m in 1..=days * 24 * 60 {
        h.add_minute(m * MINUTE, vec![stat(30 * S)]);
    }
    let end = days * 24 * 60 * MINUTE;
    let minutes = h.intervals(Granularity::Minute);
    let tens = h.intervals(Granularity::TenMinutes);
    let hours = h.intervals(Granularity::Hour);
    assert_eq!(minutes.len(), 24 * 60);
    assert_eq!(tens.len(), 4 * 24 * 6);
    assert_eq!(hours.len(), 30 * 24);
    assert_eq!(minutes.last().unwrap().0, end);
    assert_eq!(minutes[0].0, end - 24 * 60 * MINUTE + MINUTE);
    assert_eq!(hours[0].0, end - 30 * 24 * 60 * MINUTE + 60 * MINUTE);
    // Half a node busy throughout: score 50 at every granularity.
    for (_, rows) in hours.iter().chain(&tens).chain(&minutes) {
        assert_eq!(rows.len(), 1);
        assert!((rows[0].cpu_score - 50.0).abs() < 1e-9);
    }
    assert_eq!(hours[0].1[0].requests, 60);
    assert_eq!(tens[0].1[0].requests, 10);
    // Adding the same minute twice changes nothing.
    h.add_minute(end, vec![stat(1)]);
    assert_eq!(h.intervals(Granularity::Minute).len(), 24 * 60);
}

#[test]
fn balancer_never_moves_a_split_that_alone_exceeds_the_target() {
    let mut b = Balancer::new(BalancerConfig::default());
    // Node 0 holds one split of 1.5 CPU and a small one; the rest idle.
    let splits = [
        (SplitId(1), NodeId(0), 1.5),
        (SplitId(2), NodeId(0), 0.1),
        (SplitId(3), NodeId(1), 0.1),
    ];
    let mut moved = Vec::new();
    for t in 0..40 {
        moved.extend(b.plan(t * 10 * S, &splits, 3));
    }
    // Only the small split may move, and only after move_after.
    assert!(moved.iter().all(|m| m.split == SplitId(2)), "{moved:?}");
    // Below move_after nothing moves.
    let mut b = Balancer::new(BalancerConfig::default());
    for t in 0..18 {
        assert!(b.plan(t * 10 * S, &splits, 3).is_empty());
    }
}

/// Keys `[root][child]`: the root row is the first byte, the row is all of it.
struct TwoLevel;
impl KeyAligner for TwoLevel {
    fn root_row(&self, key: &[u8]) -> Option<Vec<u8>> {
        key.get(..1).map(<[u8]>::to_vec)
    }
    fn row(&self, key: &[u8]) -> Option<Vec<u8>> {
        Some(key.to_vec())
    }
}

/// 2000 reads cycling through `keys`, 200 a second over ten seconds.
fn sample_of(keys: &[&[u8]]) -> SampleSnapshot {
    let mut t = LoadTracker::new();
    for i in 0..2000 {
        let k = keys[i % keys.len()];
        t.record(
            (1 + i as u64 / 200) * S,
            &rowtree_kv::Access::read(k, 1, 1, 1),
        );
    }
    t.sample_snapshot()
}

#[test]
fn policy_aligns_to_root_rows_and_isolates_child_rows() {
    let p = SplitPolicy::default();
    // Even load over root rows 1..32 (with children): cut at a root row.
    let keys: Vec<Vec<u8>> = (1..=32u8).flat_map(|r| [vec![r], vec![r, 1]]).collect();
    let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
    match p.load_decision(b"", None, &sample_of(&refs), &TwoLevel) {
        LoadDecision::Split(k) => assert_eq!(k.len(), 1, "a root-row boundary: {k:?}"),
        other => panic!("{other:?}"),
    }
    // All load on root row 7's child [7, 3], inside a split of row 7's tree:
    // isolate the child row with its descendants.
    let s = sample_of(&[&[7, 3]]);
    assert_eq!(
        p.load_decision(&[7], Some(&[8]), &s, &TwoLevel),
        LoadDecision::Split(vec![7, 3])
    );
    assert_eq!(
        p.load_decision(&[7, 3], Some(&[8]), &s, &TwoLevel),
        LoadDecision::Split(vec![7, 4])
    );
    assert_eq!(
        p.load_decision(&[7, 3], Some(&[7, 4]), &s, &TwoLevel),
        LoadDecision::Unsplittable(UnsplittableReason::HotRow)
    );
    // The hot row with a (less) hot descendant: unisolatable.
    let s = sample_of(&[&[7, 3], &[7, 3], &[7, 3], &[7, 3, 1]]);
    assert_eq!(
        p.load_decision(&[7, 3], Some(&[7, 4]), &s, &TwoLevel),
        LoadDecision::Unsplittable(UnsplittableReason::UnisolatableHotRow)
    );
    assert_eq!(
        UnsplittableReason::UnisolatableHotRow.as_str(),
        "UNISOLATABLE_HOT_ROW"
    );
    // Too few observations: wait.
    let mut t = LoadTracker::new();
    t.record(S, &rowtree_kv::Access::read(b"a", 1, 1, 1));
    assert_eq!(
        p.load_decision(b"", None, &t.sample_snapshot(), &TwoLevel),
        LoadDecision::Wait
    );
}

#[test]
fn router_records_accesses_with_its_clock() {
    let now = Arc::new(AtomicU64::new(100 * S));
    let clock = now.clone();
    let router = Router::with_clock(
        Mvcc::new(Arc::new(MemoryEngine::new())),
        Arc::new(SplitMap::with_split_points([[50u8]])),
        Arc::new(move || clock.load(Ordering::Relaxed)),
    );
    let writes: Vec<(Vec<u8>, Option<Vec<u8>>)> =
        (0..100u8).map(|i| (vec![i, 0], Some(vec![i; 3]))).collect();
    router.commit(10, &writes, Durability::Buffered).unwrap();
    now.store(101 * S, Ordering::Relaxed);
    assert!(router.get(&[10, 0], 20).unwrap().is_some());
    let rows = router.scan(&[40], Some(&[60]), 20, false).count();
    assert_eq!(rows, 20);
    let splits = router.splits().splits();
    let left = splits[0].load.lock();
    let t = left.totals();
    // One commit (50 rows), one get, one scan part.
    assert_eq!((t.requests, t.rows_written, t.rows_read), (3, 50, 11));
    assert_eq!(
        t.cpu_nanos - (splits[0].stats.snapshot().cpu_nanos),
        0,
        "the tracker and the counters agree on CPU"
    );
    assert!(t.cpu_nanos >= 50 * rowtree_kv::WRITE_CPU_NANOS_PER_ROW);
    let snap = left.sample_snapshot();
    assert_eq!(snap.scans, 1);
    assert_eq!(left.window_totals(101 * S).requests, 3);
    assert_eq!(left.window_totals(200 * S).requests, 0);
    let right = splits[1].load.lock().totals();
    assert_eq!((right.requests, right.rows_read), (2, 10));
}

/// A commit updating a timestamp index deletes the row's old entry (a key in
/// the middle) and inserts its new one at the tail, in that key order. Both
/// must join the split's sample: were only a commit's first key sampled, the
/// tail's sequence would be invisible.
#[test]
fn every_key_a_commit_writes_in_a_split_joins_its_sample() {
    let now = Arc::new(AtomicU64::new(S));
    let clock = now.clone();
    let router = Router::with_clock(
        Mvcc::new(Arc::new(MemoryEngine::new())),
        Arc::new(SplitMap::new()),
        Arc::new(move || clock.load(Ordering::Relaxed)),
    );
    let mut rng = 7u64;
    let mut tail = 1_000u64;
    for sec in 1..=20u64 {
        now.store(sec * S, Ordering::Relaxed);
        for _ in 0..50 {
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1);
            let old = (rng >> 11) % tail;
            tail += 1;
            let writes = [
                (old.to_be_bytes().to_vec(), None),
                (tail.to_be_bytes().to_vec(), Some(vec![1u8])),
            ];
            router.charge_writes(&writes);
        }
    }
    let split = router.splits().split_for(b"");
    let tracker = split.load.lock();
    // One request per commit, both rows in the totals.
    let totals = tracker.totals();
    assert_eq!((totals.requests, totals.rows_written), (1000, 2000));
    let sample = tracker.sample_snapshot();
    assert_eq!(sample.points, 2000);
    // The inserts (half the keys) all go beyond the frontier.
    assert!(
        sample.beyond_max as f64 >= 0.45 * sample.compared as f64,
        "{sample:?}"
    );

    // A bulk write of 100 rows in one split: 8 of its keys are sampled.
    let router = Router::new(Mvcc::new(Arc::new(MemoryEngine::new())), SplitMap::new());
    let writes: Vec<(Vec<u8>, Option<Vec<u8>>)> =
        (0..100u8).map(|i| (vec![i], Some(vec![i]))).collect();
    router.charge_writes(&writes);
    let split = router.splits().split_for(b"");
    let tracker = split.load.lock();
    assert_eq!(tracker.totals().rows_written, 100);
    assert_eq!(
        tracker.sample_snapshot().points,
        rowtree_kv::SAMPLED_WRITES_PER_SPLIT
    );
}

/// The tail of an index on a timestamp: most accesses insert beyond
/// everything before, a third delete older entries in the middle. No key
/// divides that load, and it is still a moving hot spot.
#[test]
fn a_sequence_mixed_with_other_work_is_still_a_moving_hot_spot() {
    let mut t = LoadTracker::new();
    let mut rng = 99u64;
    let mut next = 0u64;
    for sec in 0..30u64 {
        for i in 0..100u64 {
            // Deletes of entries written before the tracker's frontier
            // (more than three seconds, 200 inserts, ago).
            let key = if i % 3 == 0 && next > 200 {
                rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1);
                (rng >> 11) % (next - 200)
            } else {
                next += 1;
                next
            };
            t.record(
                sec * S,
                &rowtree_kv::Access::write(&key.to_be_bytes(), 1, 1, 1),
            );
        }
    }
    let sample = t.sample_snapshot();
    // Compared with a frontier: all but the first three seconds.
    assert_eq!(sample.compared, 2700);
    let points = sample.compared as f64;
    assert!(sample.beyond_max as f64 >= 0.5 * points, "{sample:?}");
    assert!((sample.beyond_max as f64) < 0.7 * points, "{sample:?}");
    assert_eq!(
        SplitPolicy::default().load_decision(b"", None, &sample, &rowtree_kv::RawKeys),
        LoadDecision::Unsplittable(UnsplittableReason::MovingHotSpot)
    );
}
