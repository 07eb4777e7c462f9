//! Fault injection at the engine: a failed write or fsync stops the disk
//! engine's writes (not its reads), and reopening recovers every synced
//! write. Run with `cargo test -p rowtree-storage --features failpoints
//! --test faults`; the database-level tests are in `crates/db/tests/faults.rs`.
#![cfg(feature = "failpoints")]

use fail::FailScenario;
use rowtree_storage::{
    Durability, Engine, Error, Failed, FjallEngine, FjallOptions, Space, Stop, WriteBatch,
};

fn put(engine: &FjallEngine, key: &[u8], durability: Durability) -> rowtree_storage::Result<()> {
    let mut batch = WriteBatch::new();
    batch.put(Space::Data, key.to_vec(), b"v".to_vec());
    engine.write(batch, durability)
}

fn stop_of(result: rowtree_storage::Result<()>) -> Stop {
    match result {
        Err(Error::Stopped(stop)) => stop,
        other => panic!("expected a stopped engine, got {other:?}"),
    }
}

#[test]
fn a_failed_fsync_stops_writes_until_reopened() {
    let scenario = FailScenario::setup();
    let dir = tempfile::tempdir().unwrap();
    let engine = FjallEngine::open(dir.path(), FjallOptions::default()).unwrap();
    put(&engine, b"a", Durability::Sync).unwrap();
    // One fsync fails; the next would succeed.
    fail::cfg("storage::fjall::fsync", "1*return->off").unwrap();
    let stop = stop_of(put(&engine, b"b", Durability::Sync));
    assert_eq!(stop.failed, Failed::Fsync);
    assert!(!stop.disk_full);
    assert_eq!(
        stop.to_string(),
        "the database stopped accepting writes after a failed fsync: Input/output error (os \
         error 5); reopen the database once the cause is fixed (acknowledged commits are \
         recovered)"
    );
    // Every later write and sync gets the same stop; reads go on, without
    // the failed batch.
    assert_eq!(stop_of(put(&engine, b"c", Durability::Buffered)), stop);
    assert_eq!(stop_of(put(&engine, b"d", Durability::Sync)), stop);
    assert_eq!(stop_of(engine.sync()), stop);
    assert_eq!(engine.get(Space::Data, b"a").unwrap(), Some(b"v".to_vec()));
    assert_eq!(engine.get(Space::Data, b"b").unwrap(), None);
    drop(engine);

    let engine = FjallEngine::open(dir.path(), FjallOptions::default()).unwrap();
    assert_eq!(engine.get(Space::Data, b"a").unwrap(), Some(b"v".to_vec()));
    put(&engine, b"e", Durability::Sync).unwrap();
    engine.sync().unwrap();
    scenario.teardown();
}

#[test]
fn a_failed_sync_stops_writes() {
    let scenario = FailScenario::setup();
    let dir = tempfile::tempdir().unwrap();
    let engine = FjallEngine::open(dir.path(), FjallOptions::default()).unwrap();
    put(&engine, b"a", Durability::Buffered).unwrap();
    fail::cfg("storage::fjall::fsync", "1*return->off").unwrap();
    let stop = stop_of(engine.sync());
    assert_eq!(stop.failed, Failed::Fsync);
    assert_eq!(stop_of(put(&engine, b"b", Durability::Buffered)), stop);
    scenario.teardown();
}

#[test]
fn a_full_disk_says_so() {
    let scenario = FailScenario::setup();
    let dir = tempfile::tempdir().unwrap();
    let engine = FjallEngine::open(dir.path(), FjallOptions::default()).unwrap();
    fail::cfg("storage::fjall::write", "1*return(enospc)->off").unwrap();
    let stop = stop_of(put(&engine, b"a", Durability::Buffered));
    assert_eq!(stop.failed, Failed::Write);
    assert!(stop.disk_full);
    assert_eq!(
        Error::Stopped(stop.clone()).to_string(),
        "the database stopped accepting writes after a failed write: the disk is full (No \
         space left on device (os error 28)); free space, then reopen the database"
    );
    assert_eq!(stop_of(put(&engine, b"b", Durability::Sync)), stop);
    scenario.teardown();
}

#[test]
fn full_disk_is_recognised_by_kind_and_by_errno() {
    use rowtree_storage::is_disk_full;
    assert!(is_disk_full(&std::io::Error::from_raw_os_error(28)));
    assert!(is_disk_full(&std::io::Error::from(
        std::io::ErrorKind::StorageFull
    )));
    assert!(!is_disk_full(&std::io::Error::from_raw_os_error(5)));
}
