//! Conformance tests of the [`Engine`] contract, run against every engine.

use std::ops::Bound;
use std::sync::Arc;

use rowtree_storage::{
    Durability, Engine, FjallEngine, FjallOptions, KeyRange, MemoryEngine, Space, WriteBatch,
};

/// Runs `test` against a fresh engine of each kind.
fn for_each_engine(test: impl Fn(&dyn Engine)) {
    test(&MemoryEngine::new());
    let dir = tempfile::tempdir().unwrap();
    let fjall = FjallEngine::open(dir.path(), FjallOptions::default()).unwrap();
    test(&fjall);
}

fn put_all(engine: &dyn Engine, space: Space, keys: &[&[u8]]) {
    let mut batch = WriteBatch::new();
    for k in keys {
        batch.put(space, k.to_vec(), [b"v".as_slice(), k].concat());
    }
    engine.write(batch, Durability::Buffered).unwrap();
}

fn keys(engine: &dyn Engine, range: KeyRange, reverse: bool) -> Vec<Vec<u8>> {
    engine
        .scan(Space::Data, range, reverse)
        .map(|r| r.unwrap().0)
        .collect()
}

#[test]
fn get_put_delete() {
    for_each_engine(|e| {
        assert_eq!(e.get(Space::Data, b"a").unwrap(), None);
        let mut batch = WriteBatch::new();
        batch.put(Space::Data, b"a".to_vec(), b"1".to_vec());
        batch.put(Space::Data, b"b".to_vec(), b"2".to_vec());
        e.write(batch, Durability::Sync).unwrap();
        assert_eq!(e.get(Space::Data, b"a").unwrap(), Some(b"1".to_vec()));

        let mut batch = WriteBatch::new();
        batch.delete(Space::Data, b"a".to_vec());
        batch.put(Space::Data, b"b".to_vec(), b"3".to_vec());
        batch.delete(Space::Data, b"missing".to_vec());
        e.write(batch, Durability::Buffered).unwrap();
        assert_eq!(e.get(Space::Data, b"a").unwrap(), None);
        assert_eq!(e.get(Space::Data, b"b").unwrap(), Some(b"3".to_vec()));
        e.sync().unwrap();
    });
}

#[test]
fn last_operation_on_a_key_wins() {
    for_each_engine(|e| {
        let mut batch = WriteBatch::new();
        batch.put(Space::Data, b"k".to_vec(), b"1".to_vec());
        batch.delete(Space::Data, b"k".to_vec());
        batch.put(Space::Data, b"j".to_vec(), b"1".to_vec());
        batch.put(Space::Data, b"j".to_vec(), b"2".to_vec());
        e.write(batch, Durability::Buffered).unwrap();
        assert_eq!(e.get(Space::Data, b"k").unwrap(), None);
        assert_eq!(e.get(Space::Data, b"j").unwrap(), Some(b"2".to_vec()));
    });
}

#[test]
fn first_is_the_first_pair_of_the_range() {
    for_each_engine(|e| {
        put_all(e, Space::Data, &[b"a", b"b", b"ba", b"c"]);
        put_all(e, Space::Meta, &[b"0"]);
        let first = |range: KeyRange| e.first(Space::Data, range).unwrap().map(|(k, _)| k);
        assert_eq!(first(KeyRange::all()), Some(b"a".to_vec()));
        assert_eq!(
            first(KeyRange::half_open(b"b".to_vec(), b"c".to_vec())),
            Some(b"b".to_vec())
        );
        // Excluded start, included end.
        let r = KeyRange::new(
            Bound::Excluded(b"b".to_vec()),
            Bound::Included(b"ba".to_vec()),
        );
        assert_eq!(
            e.first(Space::Data, r).unwrap(),
            Some((b"ba".to_vec(), b"vba".to_vec()))
        );
        // Nothing in the range, an empty range, a range of the other space.
        assert_eq!(
            first(KeyRange::half_open(b"bb".to_vec(), b"c".to_vec())),
            None
        );
        assert_eq!(
            first(KeyRange::half_open(b"c".to_vec(), b"c".to_vec())),
            None
        );
        assert_eq!(
            first(KeyRange::half_open(b"d".to_vec(), b"a".to_vec())),
            None
        );
        assert_eq!(
            e.first(Space::Meta, KeyRange::all()).unwrap(),
            Some((b"0".to_vec(), b"v0".to_vec()))
        );
    });
}

#[test]
fn scans_respect_bounds_in_both_directions() {
    for_each_engine(|e| {
        put_all(e, Space::Data, &[b"a", b"b", b"ba", b"c", b"d"]);
        let all: Vec<Vec<u8>> = ["a", "b", "ba", "c", "d"]
            .map(|s| s.as_bytes().to_vec())
            .into();
        assert_eq!(keys(e, KeyRange::all(), false), all);
        let mut rev = all.clone();
        rev.reverse();
        assert_eq!(keys(e, KeyRange::all(), true), rev);

        let r = KeyRange::half_open(b"b".to_vec(), b"c".to_vec());
        assert_eq!(
            keys(e, r.clone(), false),
            vec![b"b".to_vec(), b"ba".to_vec()]
        );
        assert_eq!(keys(e, r, true), vec![b"ba".to_vec(), b"b".to_vec()]);

        let r = KeyRange::new(
            Bound::Excluded(b"b".to_vec()),
            Bound::Included(b"c".to_vec()),
        );
        assert_eq!(
            keys(e, r.clone(), false),
            vec![b"ba".to_vec(), b"c".to_vec()]
        );
        assert_eq!(keys(e, r, true), vec![b"c".to_vec(), b"ba".to_vec()]);

        assert_eq!(
            keys(e, KeyRange::prefix(b"b"), false),
            vec![b"b".to_vec(), b"ba".to_vec()]
        );
        // Empty and inverted ranges yield nothing (and must not panic).
        assert!(keys(e, KeyRange::half_open(b"c".to_vec(), b"c".to_vec()), false).is_empty());
        assert!(keys(e, KeyRange::half_open(b"d".to_vec(), b"a".to_vec()), true).is_empty());
        let r = KeyRange::new(
            Bound::Excluded(b"c".to_vec()),
            Bound::Excluded(b"c".to_vec()),
        );
        assert!(keys(e, r, false).is_empty());
        // Values come with their keys.
        let first = e
            .scan(Space::Data, KeyRange::all(), false)
            .next()
            .unwrap()
            .unwrap();
        assert_eq!(first, (b"a".to_vec(), b"va".to_vec()));
    });
}

#[test]
fn long_scans_cross_chunk_boundaries() {
    for_each_engine(|e| {
        let owned: Vec<Vec<u8>> = (0u32..1000).map(|i| i.to_be_bytes().to_vec()).collect();
        let refs: Vec<&[u8]> = owned.iter().map(Vec::as_slice).collect();
        put_all(e, Space::Data, &refs);
        assert_eq!(keys(e, KeyRange::all(), false), owned);
        let mut rev = owned.clone();
        rev.reverse();
        assert_eq!(keys(e, KeyRange::all(), true), rev);
        let r = KeyRange::half_open(owned[100].clone(), owned[900].clone());
        assert_eq!(keys(e, r, true), rev[100..900].to_vec());
    });
}

#[test]
fn spaces_are_independent_and_batches_span_both() {
    for_each_engine(|e| {
        let mut batch = WriteBatch::new();
        batch.put(Space::Data, b"k".to_vec(), b"data".to_vec());
        batch.put(Space::Meta, b"k".to_vec(), b"meta".to_vec());
        batch.put(Space::Meta, b"m".to_vec(), b"meta".to_vec());
        e.write(batch, Durability::Sync).unwrap();
        assert_eq!(e.get(Space::Data, b"k").unwrap(), Some(b"data".to_vec()));
        assert_eq!(e.get(Space::Meta, b"k").unwrap(), Some(b"meta".to_vec()));
        assert_eq!(e.get(Space::Data, b"m").unwrap(), None);
        assert_eq!(keys(e, KeyRange::all(), false), vec![b"k".to_vec()]);
        let meta: Vec<_> = e
            .scan(Space::Meta, KeyRange::all(), false)
            .map(|r| r.unwrap().0)
            .collect();
        assert_eq!(meta, vec![b"k".to_vec(), b"m".to_vec()]);
    });
}

#[test]
fn batches_are_atomic_for_concurrent_readers() {
    // A writer moves a unit between two keys in each batch; readers must
    // always see the sum unchanged.
    fn run(engine: Arc<dyn Engine>) {
        let mut batch = WriteBatch::new();
        batch.put(Space::Data, b"x".to_vec(), 100u64.to_be_bytes().to_vec());
        batch.put(Space::Meta, b"y".to_vec(), 0u64.to_be_bytes().to_vec());
        engine.write(batch, Durability::Buffered).unwrap();
        let read = |space, key: &[u8]| {
            let v = engine.get(space, key).unwrap().unwrap();
            u64::from_be_bytes(v.try_into().unwrap())
        };
        std::thread::scope(|s| {
            let writer = s.spawn(|| {
                for i in 1..=100u64 {
                    let mut batch = WriteBatch::new();
                    batch.put(Space::Data, b"x".to_vec(), (100 - i).to_be_bytes().to_vec());
                    batch.put(Space::Meta, b"y".to_vec(), i.to_be_bytes().to_vec());
                    engine.write(batch, Durability::Buffered).unwrap();
                }
            });
            while !writer.is_finished() {
                // Two gets are not a snapshot, but x only falls and y only
                // rises: reading x first, then y, gives x + y >= 100 unless
                // a batch was seen half applied (x new, y old: 99).
                let x = read(Space::Data, b"x");
                let y = read(Space::Meta, b"y");
                assert!(x + y >= 100, "saw x={x} y={y}");
            }
        });
        assert_eq!(read(Space::Data, b"x"), 0);
        assert_eq!(read(Space::Meta, b"y"), 100);
    }
    run(Arc::new(MemoryEngine::new()));
    let dir = tempfile::tempdir().unwrap();
    run(Arc::new(
        FjallEngine::open(dir.path(), FjallOptions::default()).unwrap(),
    ));
}

#[test]
fn fjall_sync_writes_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let engine = FjallEngine::open(dir.path(), FjallOptions::default()).unwrap();
        let mut batch = WriteBatch::new();
        batch.put(Space::Data, b"row".to_vec(), b"1".to_vec());
        batch.put(Space::Meta, b"schema".to_vec(), b"v1".to_vec());
        engine.write(batch, Durability::Sync).unwrap();
        let mut batch = WriteBatch::new();
        batch.delete(Space::Data, b"row".to_vec());
        batch.put(Space::Data, b"row2".to_vec(), b"2".to_vec());
        engine.write(batch, Durability::Sync).unwrap();
    }
    let engine = FjallEngine::open(dir.path(), FjallOptions::default()).unwrap();
    assert_eq!(engine.get(Space::Data, b"row").unwrap(), None);
    assert_eq!(
        engine.get(Space::Data, b"row2").unwrap(),
        Some(b"2".to_vec())
    );
    assert_eq!(
        engine.get(Space::Meta, b"schema").unwrap(),
        Some(b"v1".to_vec())
    );
}

/// The child half of [`fjall_writes_survive_a_crash`]: writes, then dies
/// without running any destructor (so fjall gets no chance to flush on drop).
fn crash_child(dir: &str) -> ! {
    let engine = FjallEngine::open(dir, FjallOptions::default()).unwrap();
    let mut batch = WriteBatch::new();
    batch.put(Space::Data, b"synced".to_vec(), b"1".to_vec());
    batch.put(Space::Meta, b"synced-meta".to_vec(), b"1".to_vec());
    engine.write(batch, Durability::Sync).unwrap();
    let mut batch = WriteBatch::new();
    batch.put(Space::Data, b"buffered".to_vec(), b"2".to_vec());
    engine.write(batch, Durability::Buffered).unwrap();
    std::process::abort();
}

#[test]
fn fjall_writes_survive_a_crash() {
    const CHILD_ENV: &str = "ROWTREE_STORAGE_CRASH_CHILD_DIR";
    if let Ok(dir) = std::env::var(CHILD_ENV) {
        crash_child(&dir);
    }
    let dir = tempfile::tempdir().unwrap();
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "fjall_writes_survive_a_crash", "--nocapture"])
        .env(CHILD_ENV, dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(!status.success(), "the child must have crashed");
    let engine = FjallEngine::open(dir.path(), FjallOptions::default()).unwrap();
    assert_eq!(
        engine.get(Space::Data, b"synced").unwrap(),
        Some(b"1".to_vec())
    );
    assert_eq!(
        engine.get(Space::Meta, b"synced-meta").unwrap(),
        Some(b"1".to_vec())
    );
    // Buffered writes reach the OS before returning, so a process crash
    // (not a power loss) keeps them too.
    assert_eq!(
        engine.get(Space::Data, b"buffered").unwrap(),
        Some(b"2".to_vec())
    );
}
