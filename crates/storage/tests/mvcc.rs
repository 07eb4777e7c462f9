//! MVCC visibility, scans and garbage collection.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use proptest::prelude::*;
use rowtree_storage::{
    Durability, Engine, FjallEngine, FjallOptions, KeyRange, MemoryEngine, Mvcc, Space, WriteBatch,
};

fn commit(mvcc: &Mvcc, ts: u64, writes: &[(&[u8], Option<&[u8]>)]) {
    let mut batch = WriteBatch::new();
    mvcc.put_versions(&mut batch, ts, writes.iter().copied());
    mvcc.engine().write(batch, Durability::Buffered).unwrap();
}

fn scan(mvcc: &Mvcc, ts: u64, reverse: bool) -> Vec<(Vec<u8>, Vec<u8>)> {
    mvcc.scan_at(Bound::Unbounded, Bound::Unbounded, ts, reverse)
        .map(Result::unwrap)
        .collect()
}

fn engines() -> Vec<(Arc<dyn Engine>, Option<tempfile::TempDir>)> {
    let dir = tempfile::tempdir().unwrap();
    let fjall = FjallEngine::open(dir.path(), FjallOptions::default()).unwrap();
    vec![
        (Arc::new(MemoryEngine::new()), None),
        (Arc::new(fjall), Some(dir)),
    ]
}

/// The scenario of the brief: versions at 10 (put), 20 (delete), 30 (put).
#[test]
fn visibility_at_timestamps() {
    for (engine, _dir) in engines() {
        let mvcc = Mvcc::new(engine);
        commit(&mvcc, 10, &[(b"k\0", Some(b"v10")), (b"j\0", Some(b"j10"))]);
        commit(&mvcc, 20, &[(b"k\0", None)]);
        commit(&mvcc, 30, &[(b"k\0", Some(b"v30"))]);
        let expected: [(u64, Option<&[u8]>); 7] = [
            (5, None),
            (10, Some(b"v10")),
            (15, Some(b"v10")),
            (20, None),
            (25, None),
            (30, Some(b"v30")),
            (35, Some(b"v30")),
        ];
        for (ts, want) in expected {
            let got = mvcc.get_at(b"k\0", ts).unwrap();
            assert_eq!(got.as_deref(), want, "get_at ts {ts}");
            let mut rows = Vec::new();
            if ts >= 10 {
                rows.push((b"j\0".to_vec(), b"j10".to_vec()));
            }
            if let Some(v) = want {
                rows.push((b"k\0".to_vec(), v.to_vec()));
            }
            assert_eq!(scan(&mvcc, ts, false), rows, "scan ts {ts}");
            rows.reverse();
            assert_eq!(scan(&mvcc, ts, true), rows, "reverse scan ts {ts}");
        }
        assert_eq!(mvcc.get_at(b"other\0", 100).unwrap(), None);
    }
}

#[test]
fn scan_bounds_are_user_key_bounds() {
    let mvcc = Mvcc::new(Arc::new(MemoryEngine::new()));
    for (i, key) in [b"a\0", b"b\0", b"c\0", b"d\0"].iter().enumerate() {
        for ts in 1..=3 {
            commit(&mvcc, ts * 10 + i as u64, &[(*key, Some(&[ts as u8]))]);
        }
    }
    let keys = |start: Bound<&[u8]>, end: Bound<&[u8]>, reverse| {
        mvcc.scan_at(start, end, 100, reverse)
            .map(|r| r.unwrap().0)
            .collect::<Vec<_>>()
    };
    let b = b"b\0".as_slice();
    let c = b"c\0".as_slice();
    assert_eq!(
        keys(Bound::Included(b), Bound::Excluded(c), false),
        vec![b.to_vec()]
    );
    assert_eq!(
        keys(Bound::Excluded(b), Bound::Included(c), false),
        vec![c.to_vec()]
    );
    assert_eq!(
        keys(Bound::Excluded(b), Bound::Included(c), true),
        vec![c.to_vec()]
    );
    assert_eq!(
        keys(Bound::Included(b), Bound::Included(c), true),
        vec![c.to_vec(), b.to_vec()]
    );
    // A prefix bound that is not itself a key.
    assert_eq!(
        keys(Bound::Excluded(b"b"), Bound::Excluded(b"c"), false),
        vec![b.to_vec()]
    );
    // Values are those of the newest version.
    assert_eq!(mvcc.get_at(b, 100).unwrap(), Some(vec![3]));
}

#[test]
fn many_versions_are_skipped_by_seeking() {
    let mvcc = Mvcc::new(Arc::new(MemoryEngine::new()));
    // 100 rows, each with 50 versions at ts 1..=50, and a tombstone at 60 for
    // the odd ones.
    for ts in 1..=50u64 {
        let mut batch = WriteBatch::new();
        let writes: Vec<(Vec<u8>, Option<Vec<u8>>)> = (0u8..100)
            .map(|i| (vec![i, 0], Some(ts.to_be_bytes().to_vec())))
            .collect();
        mvcc.put_versions(&mut batch, ts, writes);
        mvcc.engine().write(batch, Durability::Buffered).unwrap();
    }
    let deletes: Vec<(Vec<u8>, Option<Vec<u8>>)> = (0u8..100)
        .filter(|i| i % 2 == 1)
        .map(|i| (vec![i, 0], None))
        .collect();
    let mut batch = WriteBatch::new();
    mvcc.put_versions(&mut batch, 60, deletes);
    mvcc.engine().write(batch, Durability::Buffered).unwrap();

    for reverse in [false, true] {
        for (ts, rows, value) in [(25u64, 100usize, 25u64), (50, 100, 50), (70, 50, 50)] {
            let mut scan = mvcc.scan_at(Bound::Unbounded, Bound::Unbounded, ts, reverse);
            let got: Vec<_> = scan.by_ref().map(Result::unwrap).collect();
            assert_eq!(got.len(), rows, "ts {ts} reverse {reverse}");
            assert!(got.iter().all(|(_, v)| v == &value.to_be_bytes()));
            let mut keys: Vec<_> = got.iter().map(|(k, _)| k.clone()).collect();
            if reverse {
                keys.reverse();
            }
            assert!(keys.windows(2).all(|w| w[0] < w[1]));
            // 5,100 versions are stored; seeking keeps the scan near
            // SEEK_AFTER (+ a lookup) per row.
            assert!(
                scan.versions_read() <= 100 * 20,
                "read {} versions at ts {ts} reverse {reverse}",
                scan.versions_read()
            );
        }
    }
}

// ---------------------------------------------------------------------------
// Garbage collection against a model.

#[derive(Debug, Clone)]
enum Op {
    /// Commit writes at the next timestamp.
    Commit(Vec<(u8, Option<u8>)>),
    /// Run gc with the horizon at `now - lag` and the given budget.
    Gc { lag: u64, budget: usize },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => prop::collection::vec((0u8..6, prop::option::of(any::<u8>())), 1..4).prop_map(Op::Commit),
        1 => (0u64..4, 0usize..10).prop_map(|(lag, budget)| Op::Gc { lag, budget }),
    ]
}

fn user_key(k: u8) -> Vec<u8> {
    vec![b'k', k, 0]
}

/// Everything visible at `ts`: by point reads and by scans both ways.
fn snapshot(mvcc: &Mvcc, ts: u64) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let forward: BTreeMap<_, _> = scan(mvcc, ts, false).into_iter().collect();
    let mut reverse = scan(mvcc, ts, true);
    reverse.reverse();
    assert_eq!(forward.clone().into_iter().collect::<Vec<_>>(), reverse);
    for k in 0u8..6 {
        assert_eq!(
            mvcc.get_at(&user_key(k), ts).unwrap().as_ref(),
            forward.get(&user_key(k))
        );
    }
    forward
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn gc_preserves_reads_at_and_above_the_horizon(ops in prop::collection::vec(op(), 1..40)) {
        gc_model(Arc::new(MemoryEngine::new()), ops)?;
    }

    /// The same on the disk engine, whose point reads go through each row's
    /// head (two gets) rather than a seek.
    #[test]
    fn gc_preserves_reads_through_row_heads(ops in prop::collection::vec(op(), 1..40)) {
        let dir = tempfile::tempdir().unwrap();
        let engine = Arc::new(FjallEngine::open(dir.path(), FjallOptions::default()).unwrap());
        prop_assert!(engine.prefers_point_gets());
        gc_model(engine, ops)?;
    }
}

fn gc_model(engine: Arc<dyn Engine>, ops: Vec<Op>) -> Result<(), TestCaseError> {
    let mvcc = Mvcc::new(engine.clone());
    // The model: every committed version, never collected.
    let mut model: BTreeMap<Vec<u8>, BTreeMap<u64, Option<Vec<u8>>>> = BTreeMap::new();
    let mut now = 0u64;
    let mut horizon = 0u64;
    for op in ops {
        match op {
            Op::Commit(writes) => {
                now += 1;
                let writes: BTreeMap<_, _> = writes
                    .into_iter()
                    .map(|(k, v)| (user_key(k), v.map(|b| vec![b])))
                    .collect();
                for (k, v) in &writes {
                    model.entry(k.clone()).or_default().insert(now, v.clone());
                }
                let mut batch = WriteBatch::new();
                mvcc.put_versions(&mut batch, now, writes);
                engine.write(batch, Durability::Buffered).unwrap();
            }
            Op::Gc { lag, budget } => {
                // The horizon never moves back, and no commit happens at
                // or below it afterwards.
                horizon = horizon.max(now.saturating_sub(lag));
                mvcc.gc(horizon, budget).unwrap();
            }
        }
        for ts in horizon..=now + 1 {
            let expected: BTreeMap<Vec<u8>, Vec<u8>> = model
                .iter()
                .filter_map(|(k, versions)| {
                    let (_, v) = versions.range(..=ts).next_back()?;
                    Some((k.clone(), v.clone()?))
                })
                .collect();
            prop_assert_eq!(
                snapshot(&mvcc, ts),
                expected,
                "ts {} horizon {}",
                ts,
                horizon
            );
        }
    }
    // A full pass at the final horizon leaves at most one version per row
    // at or below the horizon, and no tombstone there.
    // (The first loop finishes the pass in progress; the second is a
    // full pass from the start.)
    horizon = now;
    for _pass in 0..2 {
        while !mvcc.gc(horizon, 3).unwrap().pass_complete {}
    }
    let stored: Vec<_> = engine
        .scan(Space::Data, KeyRange::all(), false)
        .map(Result::unwrap)
        .collect();
    let live = model
        .values()
        .filter(|versions| matches!(versions.values().next_back(), Some(Some(_))))
        .count();
    // Each live row keeps its newest version and, on an engine with heads,
    // its head; a deleted row keeps nothing, its head included.
    prop_assert_eq!(stored.len(), live);
    let heads = engine.scan(Space::Heads, KeyRange::all(), false).count();
    let expected_heads = if engine.prefers_point_gets() { live } else { 0 };
    prop_assert_eq!(heads, expected_heads);
    Ok(())
}

#[test]
fn gc_resumes_where_it_stopped() {
    let mvcc = Mvcc::new(Arc::new(MemoryEngine::new()));
    for ts in 1..=3u64 {
        let writes: Vec<(Vec<u8>, Option<Vec<u8>>)> = (0u8..10)
            .map(|i| (vec![i, 0], Some(vec![ts as u8])))
            .collect();
        let mut batch = WriteBatch::new();
        mvcc.put_versions(&mut batch, ts, writes);
        mvcc.engine().write(batch, Durability::Buffered).unwrap();
    }
    // Budget 6 versions = 2 rows per call: 5 calls for 10 rows.
    let mut calls = 0;
    let mut deleted = 0;
    loop {
        calls += 1;
        let stats = mvcc.gc(3, 6).unwrap();
        deleted += stats.versions_deleted;
        if stats.pass_complete {
            break;
        }
        assert_eq!(stats.keys_examined, 2);
    }
    assert_eq!(calls, 5);
    assert_eq!(deleted, 20);
    assert_eq!(scan(&mvcc, 3, false).len(), 10);
}

fn fjall() -> (Arc<dyn Engine>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let engine = FjallEngine::open(dir.path(), FjallOptions::default()).unwrap();
    (Arc::new(engine), dir)
}

/// The old-style head of `key` naming `ts`, as one build stored it among
/// the versions (the slot of timestamp `u64::MAX`).
fn old_style_head(key: &[u8], ts: u64) -> (Vec<u8>, Vec<u8>) {
    let mut value = vec![2];
    value.extend_from_slice(&ts.to_be_bytes());
    (rowtree_storage::mvcc::version_key(key, u64::MAX), value)
}

/// A read through a row's head gives what a seek gives, whatever the head
/// says: absent (rows written before heads), naming a version newer than
/// the read, or naming a version that is gone.
#[test]
fn reads_through_heads_fall_back_to_a_seek() {
    let (engine, _dir) = fjall();
    let mvcc = Mvcc::new(engine.clone());
    commit(&mvcc, 10, &[(b"k\0", Some(b"v10"))]);
    commit(&mvcc, 20, &[(b"k\0", Some(b"v20"))]);
    // The head is in its own space, under the row key, naming 20.
    assert_eq!(
        engine.get(Space::Heads, b"k\0").unwrap(),
        Some([&[2u8][..], &20u64.to_be_bytes()].concat())
    );
    // Reads at and after it take the head's path, reads before it seek.
    assert_eq!(
        mvcc.get_at(b"k\0", 25).unwrap().as_deref(),
        Some(&b"v20"[..])
    );
    assert_eq!(
        mvcc.get_at(b"k\0", 15).unwrap().as_deref(),
        Some(&b"v10"[..])
    );
    assert_eq!(
        mvcc.get_at(b"k\0", u64::MAX).unwrap().as_deref(),
        Some(&b"v20"[..])
    );
    // No head (a row written by an older build): the seek answers.
    let mut batch = WriteBatch::new();
    batch.delete(Space::Heads, b"k\0".to_vec());
    engine.write(batch, Durability::Buffered).unwrap();
    assert_eq!(
        mvcc.get_at(b"k\0", 25).unwrap().as_deref(),
        Some(&b"v20"[..])
    );
    // A head whose version is gone: the seek answers with the one before.
    commit(&mvcc, 30, &[(b"k\0", Some(b"v30"))]);
    let mut batch = WriteBatch::new();
    batch.delete(Space::Data, rowtree_storage::mvcc::version_key(b"k\0", 30));
    engine.write(batch, Durability::Buffered).unwrap();
    assert_eq!(
        mvcc.get_at(b"k\0", 35).unwrap().as_deref(),
        Some(&b"v20"[..])
    );
    // Scans never show a head as a row, at any timestamp.
    assert_eq!(
        scan(&mvcc, u64::MAX, false),
        vec![(b"k\0".to_vec(), b"v20".to_vec())]
    );
    assert_eq!(
        scan(&mvcc, u64::MAX, true),
        vec![(b"k\0".to_vec(), b"v20".to_vec())]
    );
}

/// Scans read versions only: on an engine with heads, a scan of n rows
/// with one version each reads n entries, not 2n.
#[test]
fn scans_do_not_step_over_heads() {
    let (engine, _dir) = fjall();
    let mvcc = Mvcc::new(engine.clone());
    let rows: Vec<(Vec<u8>, Option<Vec<u8>>)> =
        (0u8..50).map(|i| (vec![i, 0], Some(vec![i]))).collect();
    let mut batch = WriteBatch::new();
    mvcc.put_versions(&mut batch, 7, rows);
    engine.write(batch, Durability::Buffered).unwrap();
    assert_eq!(
        engine.scan(Space::Heads, KeyRange::all(), false).count(),
        50
    );
    let mut scan = mvcc.scan_at(Bound::Unbounded, Bound::Unbounded, 7, false);
    assert_eq!(scan.by_ref().count(), 50);
    assert_eq!(scan.versions_read(), 50);
}

/// The memory engine, where a seek costs what a get costs, keeps no heads.
#[test]
fn an_engine_without_point_gets_keeps_no_heads() {
    let engine: Arc<dyn Engine> = Arc::new(MemoryEngine::new());
    let mvcc = Mvcc::new(engine.clone());
    commit(&mvcc, 5, &[(b"a\0", Some(b"x")), (b"b\0", None)]);
    assert_eq!(engine.scan(Space::Heads, KeyRange::all(), false).count(), 0);
    assert_eq!(engine.scan(Space::Data, KeyRange::all(), false).count(), 2);
    assert_eq!(mvcc.get_at(b"a\0", 5).unwrap().as_deref(), Some(&b"x"[..]));
}

/// A head stored among the versions (by one earlier build) is never read
/// as a version, by gets or scans, and garbage collection removes it with
/// its row's last version.
#[test]
fn old_style_heads_are_skipped_and_collected() {
    for (engine, _dir) in engines() {
        let mvcc = Mvcc::new(engine.clone());
        commit(&mvcc, 10, &[(b"k\0", Some(b"v10")), (b"j\0", Some(b"j10"))]);
        let mut batch = WriteBatch::new();
        for (key, ts) in [(&b"k\0"[..], 10), (&b"j\0"[..], 10)] {
            let (head, value) = old_style_head(key, ts);
            batch.put(Space::Data, head, value);
        }
        engine.write(batch, Durability::Buffered).unwrap();
        for ts in [10, 15, u64::MAX] {
            assert_eq!(
                mvcc.get_at(b"k\0", ts).unwrap().as_deref(),
                Some(&b"v10"[..])
            );
            assert_eq!(scan(&mvcc, ts, false).len(), 2);
            assert_eq!(scan(&mvcc, ts, true).len(), 2);
        }
        assert_eq!(mvcc.get_at(b"k\0", 5).unwrap(), None);
        // k is deleted; once gc passes its tombstone, nothing of k is left,
        // neither its old-style head nor its head; j keeps both.
        commit(&mvcc, 20, &[(b"k\0", None)]);
        while !mvcc.gc(25, 100).unwrap().pass_complete {}
        let data: Vec<Vec<u8>> = engine
            .scan(Space::Data, KeyRange::all(), false)
            .map(|item| item.unwrap().0)
            .collect();
        assert_eq!(
            data,
            vec![
                old_style_head(b"j\0", 10).0,
                rowtree_storage::mvcc::version_key(b"j\0", 10)
            ]
        );
        let heads: Vec<Vec<u8>> = engine
            .scan(Space::Heads, KeyRange::all(), false)
            .map(|item| item.unwrap().0)
            .collect();
        let expected: Vec<Vec<u8>> = if engine.prefers_point_gets() {
            vec![b"j\0".to_vec()]
        } else {
            vec![]
        };
        assert_eq!(heads, expected);
    }
}

/// Rebuilding a range's heads from the versions it will hold: a head per
/// row naming its newest version, every other head in the range deleted,
/// heads outside it untouched.
#[test]
fn stage_heads_rebuilds_a_range() {
    let (engine, _dir) = fjall();
    let mvcc = Mvcc::new(engine.clone());
    // Heads for a, b (inside [a, m)) and x (outside).
    commit(
        &mvcc,
        5,
        &[
            (b"a\0", Some(b"1")),
            (b"b\0", Some(b"1")),
            (b"x\0", Some(b"1")),
        ],
    );
    // The versions the range will hold: b at 9 and 4, c at 3 (and an
    // old-style head of c, which names nothing).
    let vk = rowtree_storage::mvcc::version_key;
    let stored = [
        vk(b"b\0", 9),
        vk(b"b\0", 4),
        old_style_head(b"c\0", 3).0,
        vk(b"c\0", 3),
    ];
    let mut batch = WriteBatch::new();
    mvcc.stage_heads(
        &mut batch,
        &[(&b"a"[..], Some(&b"m"[..]))],
        stored.iter().map(Vec::as_slice),
    )
    .unwrap();
    engine.write(batch, Durability::Buffered).unwrap();
    let heads: Vec<(Vec<u8>, Vec<u8>)> = engine
        .scan(Space::Heads, KeyRange::all(), false)
        .map(Result::unwrap)
        .collect();
    let head = |ts: u64| [&[2u8][..], &ts.to_be_bytes()].concat();
    assert_eq!(
        heads,
        vec![
            (b"b\0".to_vec(), head(9)),
            (b"c\0".to_vec(), head(3)),
            (b"x\0".to_vec(), head(5)),
        ]
    );
}
