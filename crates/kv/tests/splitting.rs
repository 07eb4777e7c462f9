//! Load-based splitting, merging and balancing, driven with injected time.
//!
//! Each scenario feeds a [`SplitManager`] one virtual second at a time (a
//! batch of accesses, then `tick`), prints the events, and checks the
//! outcome.

use std::sync::Arc;

use rowtree_kv::{
    Access, BalancerConfig, Granularity, ManagerConfig, NodeId, RawKeys, SplitEvent, SplitManager,
    SplitMap, SplitReason, UnsplittableReason,
};

const S: u64 = 1_000_000_000;
/// Virtual time starts at a round hour, so minute/10-minute/hour ends line up.
const T0: u64 = 1_800_000 * S;

/// xorshift64*, for deterministic "random" keys.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

fn key(x: u64) -> Vec<u8> {
    x.to_be_bytes().to_vec()
}

fn manager(nodes: u32) -> SplitManager {
    let config = ManagerConfig {
        nodes,
        ..ManagerConfig::default()
    };
    SplitManager::new(Arc::new(SplitMap::new()), config, Arc::new(RawKeys))
}

/// Runs seconds `from..to` (relative to T0): `load(now, manager)` then
/// `tick`. Returns the events, printed.
fn run(
    m: &SplitManager,
    from: u64,
    to: u64,
    mut load: impl FnMut(u64, &SplitManager),
) -> Vec<SplitEvent> {
    let mut events = Vec::new();
    for sec in from..to {
        let now = T0 + sec * S;
        load(now, m);
        for ev in m.tick(now) {
            println!("{}", describe(&ev));
            events.push(ev);
        }
    }
    events
}

fn describe(ev: &SplitEvent) -> String {
    match ev {
        SplitEvent::Split {
            at,
            parent,
            key,
            left,
            right,
            reason,
        } => format!(
            "t={:>4} split {parent} at {key:02x?} -> {left} {right} ({reason:?})",
            (at - T0) / S
        ),
        SplitEvent::Merge {
            at,
            left,
            right,
            into,
        } => format!("t={:>4} merge {left} + {right} -> {into}", (at - T0) / S),
        SplitEvent::Move {
            at,
            split,
            from,
            to,
        } => format!("t={:>4} move {split} {from} -> {to}", (at - T0) / S),
        SplitEvent::Unsplittable { at, split, reason } => {
            format!("t={:>4} unsplittable {split}: {reason}", (at - T0) / S)
        }
    }
}

fn load_splits(events: &[SplitEvent]) -> Vec<u64> {
    events
        .iter()
        .filter_map(|e| match e {
            SplitEvent::Split {
                at,
                reason: SplitReason::Load,
                ..
            } => Some((at - T0) / S),
            _ => None,
        })
        .collect()
}

fn scores(m: &SplitManager, now: u64) -> Vec<f64> {
    m.map()
        .splits()
        .iter()
        .map(|s| s.load.lock().score(now))
        .collect()
}

/// 1,000 reads a second at uniformly random keys, 3 ms of CPU each: a score
/// of 300 in total.
fn uniform(rng: &mut Rng, per_sec: u64, cpu: u64) -> impl FnMut(u64, &SplitManager) + '_ {
    move |now, m| {
        for _ in 0..per_sec {
            let k = key(rng.next());
            m.record(now, &Access::read(&k, 1, 100, cpu));
        }
    }
}

#[test]
fn uniform_load_splits_after_hot_for_and_keeps_doubling() {
    let m = manager(1);
    let mut rng = Rng(7);
    let events = run(&m, 0, 600, uniform(&mut rng, 1000, 3_000_000));
    let at = load_splits(&events);
    println!("load splits at {at:?}, {} splits", m.map().len());
    // Hot from t=0 (score 300): the first cut after hot_for (120 s).
    assert_eq!(at[0], 120);
    // Each generation of children is hot for another 120 s (counted from
    // the first tick after its creation) before its cut:
    // 1 -> 2 (t=120) -> 4 (t=241) -> 8 (t=362), then about 37.5 each
    // (a child left above 50 by an uneven cut is cut once more).
    assert_eq!(&at[..7], &[120, 241, 241, 362, 362, 362, 362], "{at:?}");
    assert!(at[7..].iter().all(|t| *t >= 483 && *t < 500), "{at:?}");
    let now = T0 + 599 * S;
    let s = scores(&m, now);
    println!("scores {s:.1?}");
    assert!(
        s.iter().all(|x| *x < 50.0),
        "all under the threshold: {s:?}"
    );
    assert!((4..=16).contains(&s.len()), "{}", s.len());
    let total: f64 = s.iter().sum();
    assert!((total - 300.0).abs() < 15.0, "{total}");
    // Both halves stay on the parent's node.
    assert!(m.map().splits().iter().all(|s| s.node() == NodeId(0)));
    assert!(m.unsplittable().is_empty());
}

#[test]
fn monotonic_keys_are_a_moving_hot_spot() {
    let m = manager(1);
    let mut next = 1u64 << 40;
    let events = run(&m, 0, 600, |now, m| {
        for _ in 0..1000 {
            next += 1;
            m.record(now, &Access::write(&key(next), 1, 1000, 1_000_000));
        }
    });
    let reasons: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            SplitEvent::Unsplittable { at, reason, .. } => Some(((at - T0) / S, *reason)),
            _ => None,
        })
        .collect();
    assert_eq!(reasons, vec![(120, UnsplittableReason::MovingHotSpot)]);
    assert!(load_splits(&events).is_empty(), "no split would help");
    // The load is all in the split holding the newest keys.
    let s = scores(&m, T0 + 599 * S);
    let max = s.iter().cloned().fold(0.0, f64::max);
    assert!(max >= 0.9 * s.iter().sum::<f64>(), "{s:?}");
    assert_eq!(
        m.unsplittable(),
        vec![(
            m.map().split_for(&key(next)).id,
            UnsplittableReason::MovingHotSpot
        )]
    );
}

#[test]
fn one_hot_key_is_isolated_then_a_hot_row() {
    let m = manager(1);
    let mut rng = Rng(11);
    let hot = key(500);
    let events = run(&m, 0, 900, |now, m| {
        for i in 0..1000 {
            let k = if i % 10 == 0 {
                key(rng.next() % 1000)
            } else {
                hot.clone()
            };
            m.record(now, &Access::read(&k, 1, 100, 1_000_000));
        }
    });
    let cuts: Vec<Vec<u8>> = events
        .iter()
        .filter_map(|e| match e {
            SplitEvent::Split { key, .. } => Some(key.clone()),
            _ => None,
        })
        .collect();
    let mut after = hot.clone();
    after.push(0);
    assert_eq!(cuts, vec![hot.clone(), after.clone()], "isolate the row");
    let split = m.map().split_for(&hot);
    assert_eq!(
        (split.start.clone(), split.limit.clone()),
        (hot, Some(after))
    );
    assert_eq!(
        m.unsplittable(),
        vec![(split.id, UnsplittableReason::HotRow)]
    );
}

#[test]
fn whole_range_scans_are_a_large_scan_hot_spot() {
    let m = manager(1);
    let events = run(&m, 0, 300, |now, m| {
        for _ in 0..1000 {
            m.record(now, &Access::scan(b"", None, 50, 5000, 1_000_000));
        }
    });
    assert!(load_splits(&events).is_empty());
    assert_eq!(
        m.unsplittable(),
        vec![(m.map().splits()[0].id, UnsplittableReason::LargeScanHotSpot)]
    );
}

#[test]
fn cold_neighbours_merge_but_not_across_a_live_manual_split_point() {
    let m = manager(1);
    let manual = vec![0x80];
    assert!(m.add_split_point(T0, &manual, T0 + 1500 * S));
    let mut rng = Rng(3);
    let mut events = run(&m, 0, 400, uniform(&mut rng, 1000, 3_000_000));
    println!("{} splits after the hot period", m.map().len());
    assert_eq!(m.map().len(), 8);
    // Load stops. Pairs go cold once the 60 s window drains (score < 25),
    // and merge 300 s later; each merged pair starts its own 300 s.
    events.extend(run(&m, 400, 1450, |_, _| {}));
    let merges: Vec<u64> = events
        .iter()
        .filter_map(|e| match e {
            SplitEvent::Merge { at, .. } => Some((at - T0) / S),
            _ => None,
        })
        .collect();
    println!("merges at {merges:?}");
    assert!(merges.iter().all(|t| *t >= 400 + 300), "{merges:?}");
    let starts: Vec<Vec<u8>> = m.map().splits().iter().map(|s| s.start.clone()).collect();
    assert_eq!(
        starts,
        vec![vec![], manual.clone()],
        "the manual point holds"
    );
    // It expires at 1500: then the last two merge 300 s later.
    let late = run(&m, 1450, 1850, |_, _| {});
    assert_eq!(m.map().len(), 1);
    assert!(matches!(
        late.as_slice(),
        [SplitEvent::Merge { at, .. }] if (at - T0) / S == 1800
    ));
}

#[test]
fn balancer_spreads_uniform_load_over_four_nodes() {
    let config = ManagerConfig {
        nodes: 4,
        balancer: BalancerConfig::default(),
        ..ManagerConfig::default()
    };
    let points: Vec<Vec<u8>> = (1..8u64).map(|i| key(i << 61)).collect();
    let m = SplitManager::new(
        Arc::new(SplitMap::with_split_points(points)),
        config,
        Arc::new(RawKeys),
    );
    // 8 splits of score 30 each, all on node 0: node 0 at 2.4, mean 0.6.
    let mut rng = Rng(5);
    let events = run(&m, 0, 400, uniform(&mut rng, 800, 3_000_000));
    let moves: Vec<u64> = events
        .iter()
        .filter_map(|e| match e {
            SplitEvent::Move { at, .. } => Some((at - T0) / S),
            _ => None,
        })
        .collect();
    println!("moves at {moves:?}");
    assert!(moves.iter().all(|t| *t >= 180), "after move_after");
    assert_eq!(moves.len(), 6, "one move per interval until balanced");
    let loads = m.node_loads(T0 + 399 * S);
    println!("node loads {loads:.2?}");
    let mean = loads.iter().sum::<f64>() / 4.0;
    assert!(
        loads.iter().all(|l| (l - mean).abs() <= 0.2 * mean),
        "{loads:?}"
    );
    let mut per_node = [0; 4];
    for s in m.map().splits() {
        per_node[s.node().0 as usize] += 1;
    }
    assert_eq!(per_node, [2, 2, 2, 2]);
    assert_eq!(m.map().len(), 8, "no load splits, no merges");
}

#[test]
fn history_rolls_up_minutes_into_ten_minutes_and_hours() {
    let m = manager(1);
    let mut rng = Rng(9);
    // 100 reads/s of 1 ms: score 10, below every threshold.
    run(&m, 0, 3601, uniform(&mut rng, 100, 1_000_000));
    let h = m.history();
    let minutes = h.intervals(Granularity::Minute);
    let tens = h.intervals(Granularity::TenMinutes);
    let hours = h.intervals(Granularity::Hour);
    assert_eq!((minutes.len(), tens.len(), hours.len()), (60, 6, 1));
    // The first minute row ends at T0+60s and holds seconds 0..59 (60 s of load).
    let (end, rows) = &minutes[0];
    assert_eq!(*end, T0 + 60 * S);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].requests, 6000);
    assert!((rows[0].cpu_score - 10.0).abs() < 1e-9);
    let (end, rows) = &hours[0];
    assert_eq!(*end, T0 + 3600 * S);
    assert_eq!(rows[0].requests, 360_000);
    assert!((rows[0].cpu_score - 10.0).abs() < 1e-9);
    assert_eq!(tens[0].1[0].requests, 60_000);
    let copy = rowtree_kv::LoadHistory::from_bytes(&h.to_bytes()).unwrap();
    assert_eq!(copy, *h);
}

/// A manager reopened from its record (as a database does at open) keeps
/// the boundaries, the nodes, the manual split point with its expiry and
/// which boundaries are mergeable: the scenario above, restarted in the
/// middle, ends the same way; new ids never repeat old ones.
#[test]
fn a_restored_manager_keeps_boundaries_nodes_and_manual_points() {
    let m = manager(2);
    let manual = vec![0x80];
    assert!(m.add_split_point(T0, &manual, T0 + 1500 * S));
    let mut rng = Rng(3);
    run(&m, 0, 400, uniform(&mut rng, 1000, 3_000_000));
    assert_eq!(m.map().len(), 8);
    let last = m.map().splits().last().unwrap().id;
    assert!(m.map().set_node(last, NodeId(1)));
    let before = m.generation();
    let record = m.to_record();
    assert_eq!(m.generation(), before, "reading changes nothing");
    let layout = |m: &SplitManager| -> Vec<_> {
        m.map()
            .splits()
            .iter()
            .map(|s| (s.id, s.start.clone(), s.limit.clone(), s.node()))
            .collect()
    };

    // "Restart": a fresh map and manager, restored from the stored bytes.
    let bytes = record.to_bytes();
    let restored = manager(2);
    let record = rowtree_kv::SplitsRecord::from_bytes(&bytes).unwrap();
    restored.restore(record, T0 + 400 * S).unwrap();
    assert_eq!(layout(&restored), layout(&m));
    assert_eq!(restored.to_record(), m.to_record());
    let old_ids: Vec<_> = m.map().splits().iter().map(|s| s.id).collect();

    // The load splits merge away, the manual point holds until it expires,
    // then goes too.
    let events = run(&restored, 400, 1450, |_, _| {});
    let starts: Vec<Vec<u8>> = restored
        .map()
        .splits()
        .iter()
        .map(|s| s.start.clone())
        .collect();
    assert_eq!(starts, vec![vec![], manual.clone()]);
    for ev in &events {
        if let SplitEvent::Merge { into, .. } = ev {
            assert!(!old_ids.contains(into), "{into} reused");
        }
    }
    run(&restored, 1450, 1850, |_, _| {});
    assert_eq!(restored.map().len(), 1);

    // Fewer nodes after the restart: splits on a missing node move.
    let one = manager(1);
    one.restore(m.to_record(), T0 + 400 * S).unwrap();
    assert!(one.map().splits().iter().all(|s| s.node() == NodeId(0)));
}

/// An invalid record changes nothing.
#[test]
fn an_invalid_record_is_refused_and_changes_nothing() {
    let m = manager(1);
    assert!(m.add_split_point(T0, &[0x40], T0 + S));
    let good = m.to_record();
    let fresh = manager(1);
    let mut partial = good.clone();
    partial.splits.pop();
    assert!(fresh.restore(partial, T0).is_err());
    assert_eq!(fresh.map().len(), 1);
    assert_eq!(fresh.to_record().manual, vec![]);
    fresh.restore(good.clone(), T0).unwrap();
    assert_eq!(fresh.to_record(), good);
}

/// A replication whose group leader declines the first `declines` cuts of
/// a split point (its new group had no leader yet, say), then makes them.
struct Declining {
    declines: std::sync::atomic::AtomicU32,
    asked: std::sync::atomic::AtomicU32,
}

impl rowtree_kv::Replication for Declining {
    fn replicate(&self, _group: rowtree_kv::CommitGroup) -> rowtree_kv::Result<()> {
        Ok(())
    }

    fn ready_to_commit(&self) -> rowtree_kv::Result<()> {
        Ok(())
    }

    fn check_read(&self, _ts: Option<u64>) -> rowtree_kv::Result<()> {
        Ok(())
    }

    fn cut_at_split_point(&self, _key: &[u8], _expires_at: u64) -> rowtree_kv::Result<bool> {
        use std::sync::atomic::Ordering;
        self.asked.fetch_add(1, Ordering::SeqCst);
        Ok(self
            .declines
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_err())
    }
}

/// A split point whose cut the replication declines at first is not lost:
/// the manager tries it again every two seconds, makes it once the cut is
/// carried out, and stops trying. An expired one is not tried.
#[test]
fn a_declined_split_point_is_made_once_its_cut_is_carried_out() {
    use std::sync::atomic::Ordering;
    let replication = Arc::new(Declining {
        declines: 3.into(),
        asked: 0.into(),
    });
    let m = SplitManager::new(
        Arc::new(SplitMap::new()),
        ManagerConfig::default(),
        Arc::new(RawKeys),
    )
    .with_replication(replication.clone());
    let point = key(1 << 62);
    assert!(!m.add_split_point(T0, &point, T0 + 3600 * S));
    assert_eq!(m.map().splits().len(), 1, "declined: not in the map");
    let events = run(&m, 1, 10, |_, _| {});
    let made: Vec<_> = events
        .iter()
        .filter(|e| matches!(e, SplitEvent::Split { key, reason: SplitReason::Manual, .. } if *key == point))
        .collect();
    assert_eq!(made.len(), 1, "{events:?}");
    assert_eq!(m.map().splits().len(), 2);
    assert_eq!(m.map().split_for(&point).start, point);
    // Asked once by add_split_point, then every 2 s: at 2, 4 and 6 s, the
    // last carried out; never again after.
    assert_eq!(replication.asked.load(Ordering::SeqCst), 4);
    run(&m, 10, 20, |_, _| {});
    assert_eq!(replication.asked.load(Ordering::SeqCst), 4);

    // A point that expires while declined is given up.
    replication.declines.store(u32::MAX, Ordering::SeqCst);
    let other = key(3 << 62);
    assert!(!m.add_split_point(T0 + 20 * S, &other, T0 + 23 * S));
    run(&m, 21, 40, |_, _| {});
    let asked = replication.asked.load(Ordering::SeqCst);
    run(&m, 40, 60, |_, _| {});
    assert_eq!(
        replication.asked.load(Ordering::SeqCst),
        asked,
        "tried after its expiry"
    );
    assert_eq!(m.map().split_for(&other).start, point);
}
