//! Fault injection: what the database does when the disk fails under it.
//!
//! Run with `cargo test -p rowtree-db --features failpoints --test faults`
//! (scripts/check does). Fail points (the `fail` crate) make the storage
//! engine's writes and fsyncs fail; the on-disk faults (a torn journal tail,
//! flipped bytes) are made by editing the files of a closed database. Every
//! test checks the same promises (docs/reliability.md, "Faults"):
//!
//! * the failing call gets a clear error, and after a failed write or fsync
//!   every later write gets it too (the database stops acknowledging);
//! * no acknowledged commit is lost: reopening finds every one of them;
//! * damaged data is reported (DATA_LOSS), never served.
//!
//! Fail points are process-wide, so each test holds a `FailScenario`, which
//! also runs the tests one at a time.
#![cfg(feature = "failpoints")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use fail::FailScenario;
use rowtree_db::{Code, Database, Error, KeySet, Mutation, Options, ReadRequest, Value};
use rowtree_storage::{FjallEngine, FjallOptions};

const SCHEMA: &str = "CREATE TABLE Kv (K INT64 NOT NULL, V STRING(MAX)) PRIMARY KEY (K)";

fn value_of(k: i64) -> String {
    format!("value-{k}")
}

fn put(db: &Database, k: i64) -> rowtree_db::Result<()> {
    put_value(db, k, value_of(k))
}

fn put_value(db: &Database, k: i64, v: String) -> rowtree_db::Result<()> {
    db.write(vec![Mutation::insert(
        "Kv",
        &["K", "V"],
        vec![vec![Value::Int64(k), Value::String(v)]],
    )])
    .map(|_| ())
}

/// Every row of `Kv`, by key.
fn rows(db: &Database) -> rowtree_db::Result<BTreeMap<i64, String>> {
    let rows = db.read(&ReadRequest::new("Kv", &["K", "V"], KeySet::all()))?;
    Ok(rows
        .into_iter()
        .map(|row| match (&row[0], &row[1]) {
            (Value::Int64(k), Value::String(v)) => (*k, v.clone()),
            other => panic!("unexpected row {other:?}"),
        })
        .collect())
}

/// Asserts `e` is the error of a database that stopped after a failed
/// `failed` ("fsync", "write", ...).
fn assert_stopped(e: &Error, failed: &str) {
    assert_eq!(e.code(), Code::Internal, "{e}");
    let message = e.to_string();
    assert!(
        message.contains(&format!(
            "the database stopped accepting writes after a failed {failed}"
        )) && message.contains("reopen the database"),
        "{message}"
    );
}

/// Four threads commit distinct keys until each has seen three failed
/// commits in a row (or 400 commits each). Returns the acknowledged keys
/// and every error. Checks on the way that once a thread saw a commit fail,
/// none of its later commits succeeded.
fn commit_until_stopped(db: &Database) -> (Vec<i64>, Vec<Error>) {
    let threads: Vec<_> = (0..4i64)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || {
                let mut acked = Vec::new();
                let mut errors = Vec::new();
                for n in 0..400i64 {
                    let k = n * 4 + t;
                    match put(&db, k) {
                        Ok(()) => {
                            assert!(
                                errors.is_empty(),
                                "commit {k} succeeded after a failed commit: {:?}",
                                errors[0]
                            );
                            acked.push(k);
                        }
                        Err(e) => {
                            errors.push(e);
                            if errors.len() == 3 {
                                break;
                            }
                        }
                    }
                }
                (acked, errors)
            })
        })
        .collect();
    let mut acked = Vec::new();
    let mut errors = Vec::new();
    for thread in threads {
        let (a, e) = thread.join().expect("committer");
        acked.extend(a);
        errors.extend(e);
    }
    acked.sort();
    (acked, errors)
}

fn create_schema(db: &Database) {
    db.apply_ddl(&[SCHEMA]).expect("schema");
}

/// After the fault: the database serves exactly the acknowledged commits,
/// refuses writes and DDL with the same error; reopened without the fault,
/// it has every acknowledged commit and takes writes again.
fn check_stop_and_recovery(dir: &Path, db: Database, acked: &[i64], failed: &str) {
    let seen = rows(&db).expect("reads go on after the stop");
    assert_eq!(
        seen.keys().copied().collect::<Vec<_>>(),
        acked,
        "the database serves exactly the acknowledged commits"
    );
    assert_stopped(&put(&db, -1).unwrap_err(), failed);
    let ddl = db
        .apply_ddl(&["CREATE TABLE Later (K INT64 NOT NULL) PRIMARY KEY (K)"])
        .unwrap_err();
    assert_stopped(&ddl.error, failed);
    drop(db);

    fail::cfg("storage::fjall::fsync", "off").unwrap();
    fail::cfg("storage::fjall::write", "off").unwrap();
    let db = Database::open(dir).expect("reopens once the fault is gone");
    let seen = rows(&db).unwrap();
    for k in acked {
        assert_eq!(seen.get(k), Some(&value_of(*k)), "acknowledged commit {k}");
    }
    // What was not acknowledged may or may not be there (a failed fsync
    // leaves its outcome unknown), but is never half there.
    for (k, v) in &seen {
        assert_eq!(v, &value_of(*k));
    }
    put(&db, 1_000_000).expect("writes again after the reopen");
    assert!(db.catalog().table("Later").is_none());
}

/// Fault 1: a failed fsync of the group commit's flush fails the whole group and
/// stops the database; no acknowledged commit is lost.
#[test]
fn failed_fsync_of_a_group_commit_stops_the_database() {
    let scenario = FailScenario::setup();
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).unwrap();
    create_schema(&db);
    // The 31st synced write (a group's flush) fails; later fsyncs would
    // succeed, as they may on a real disk after the kernel dropped the
    // failed pages, which is why the database must not carry on.
    fail::cfg("storage::fjall::fsync", "30*off->1*return->off").unwrap();
    let (acked, errors) = commit_until_stopped(&db);
    assert!(acked.len() >= 30, "{} acknowledged", acked.len());
    assert_eq!(errors.len(), 12, "three failures per thread");
    for e in &errors {
        assert_stopped(e, "fsync");
        assert!(e.to_string().contains("os error 5"), "{e}");
    }
    check_stop_and_recovery(dir.path(), db, &acked, "fsync");
    scenario.teardown();
}

/// Fault 2: a failed write of a batch to the journal: the same stop.
#[test]
fn failed_write_stops_the_database() {
    let scenario = FailScenario::setup();
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).unwrap();
    create_schema(&db);
    fail::cfg("storage::fjall::write", "20*off->1*return(eio)->off").unwrap();
    let (acked, errors) = commit_until_stopped(&db);
    assert!(acked.len() >= 20, "{} acknowledged", acked.len());
    for e in &errors {
        assert_stopped(e, "write");
        assert!(e.to_string().contains("Input/output error"), "{e}");
    }
    check_stop_and_recovery(dir.path(), db, &acked, "write");
    scenario.teardown();
}

/// Fault 3: a full disk (ENOSPC): the message says so and what to do.
#[test]
fn full_disk_says_the_disk_is_full() {
    let scenario = FailScenario::setup();
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).unwrap();
    create_schema(&db);
    for k in 0..10 {
        put(&db, k).unwrap();
    }
    fail::cfg("storage::fjall::write", "return(enospc)").unwrap();
    let e = put(&db, 10).unwrap_err();
    assert_stopped(&e, "write");
    let message = e.to_string();
    assert!(
        message.contains("the disk is full (No space left on device (os error 28))")
            && message.contains("free space, then reopen the database"),
        "{message}"
    );
    // Space freed: still stopped until reopened (fjall cannot resume a
    // journal whose last write failed halfway).
    fail::cfg("storage::fjall::write", "off").unwrap();
    assert_eq!(put(&db, 11).unwrap_err().to_string(), message);
    check_stop_and_recovery(dir.path(), db, &(0..10).collect::<Vec<_>>(), "write");
    scenario.teardown();
}

/// The journal files of a closed database (`<dir>/<id>.jnl`), oldest first.
fn journals(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<(u64, PathBuf)> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let path = e.unwrap().path();
            let id = path
                .file_name()?
                .to_str()?
                .strip_suffix(".jnl")?
                .parse()
                .ok()?;
            Some((id, path))
        })
        .collect();
    files.sort();
    files.into_iter().map(|(_, p)| p).collect()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Fault 4: a torn journal tail (a write the crash interrupted): the database
/// opens, drops the torn batch, and keeps every batch before it.
#[test]
fn torn_journal_tail_is_dropped() {
    let scenario = FailScenario::setup();
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Database::open(dir.path()).unwrap();
        create_schema(&db);
        for k in 0..20 {
            put(&db, k).unwrap();
        }
    }
    // fjall preallocates a new journal file with zeros; opening cuts them
    // off (they are where the valid batches end), and later writes append.
    drop(Database::open(dir.path()).unwrap());
    let journal = journals(dir.path()).pop().expect("a journal");
    let before = std::fs::metadata(&journal).unwrap().len();
    {
        let db = Database::open(dir.path()).unwrap();
        put_value(&db, 20, "last".repeat(100)).unwrap();
    }
    assert_eq!(
        journals(dir.path()).pop().as_ref(),
        Some(&journal),
        "the second session appended to the same journal"
    );
    let after = std::fs::metadata(&journal).unwrap().len();
    assert!(after > before + 400, "{before} -> {after}");

    // Cut the journal at points from just after the first session's bytes
    // to one byte short of the end: each time the first session's commits
    // are whole, and the last commit is there only from some cut on.
    let mut last_seen_from = None;
    let step = ((after - before) / 24).max(1);
    let cuts: Vec<u64> = (before + 1..after)
        .step_by(step as usize)
        .chain([after - 1])
        .collect();
    for &cut in &cuts {
        let copy = tempfile::tempdir().unwrap();
        copy_dir(dir.path(), copy.path());
        let torn = copy.path().join(journal.file_name().unwrap());
        std::fs::OpenOptions::new()
            .write(true)
            .open(&torn)
            .unwrap()
            .set_len(cut)
            .unwrap();
        let db = Database::open(copy.path())
            .unwrap_or_else(|e| panic!("cut at {cut} of {after}: does not open: {e}"));
        let seen = rows(&db).unwrap();
        for k in 0..20 {
            assert_eq!(seen.get(&k), Some(&value_of(k)), "cut at {cut}: key {k}");
        }
        match seen.get(&20) {
            Some(v) => {
                assert_eq!(v, &"last".repeat(100), "cut at {cut}");
                last_seen_from.get_or_insert(cut);
            }
            None => assert!(
                last_seen_from.is_none(),
                "cut at {cut}: the last commit vanished after it was whole at a shorter cut"
            ),
        }
        assert_eq!(seen.len(), 20 + usize::from(seen.contains_key(&20)));
        // The torn tail was cut off, so the journal takes new writes.
        put(&db, 21).unwrap();
    }
    // The first cut tears the last commit's batch: it is dropped. The last
    // cut only tears what was written after it (at close).
    assert_ne!(
        last_seen_from,
        Some(cuts[0]),
        "the first cut dropped nothing"
    );
    assert!(
        last_seen_from.is_some(),
        "the last commit never survived a cut"
    );
    scenario.teardown();
}

/// Flips one bit of the byte at `offset` of `file`.
fn flip_bit(file: &Path, offset: u64) {
    let mut bytes = std::fs::read(file).unwrap();
    bytes[offset as usize] ^= 0x10;
    std::fs::write(file, bytes).unwrap();
}

/// Fault 4b: a flipped bit inside an acknowledged journal batch (not its torn
/// tail): the batch's checksum fails and the database refuses to open
/// rather than serve or silently drop it.
#[test]
fn flipped_bit_in_the_journal_is_detected() {
    let scenario = FailScenario::setup();
    let dir = tempfile::tempdir().unwrap();
    let marker = "journal-marker-0123456789";
    {
        let db = Database::open(dir.path()).unwrap();
        create_schema(&db);
        put(&db, 1).unwrap();
        put_value(&db, 2, marker.into()).unwrap();
        put(&db, 3).unwrap();
    }
    let journal = journals(dir.path()).pop().unwrap();
    let bytes = std::fs::read(&journal).unwrap();
    let at = bytes
        .windows(marker.len())
        .position(|w| w == marker.as_bytes())
        .expect("the value is in the journal (uncompressed)");
    flip_bit(&journal, (at + 5) as u64);
    let e = Database::open(dir.path()).err().expect("must not open");
    assert_eq!(e.code(), Code::DataLoss, "{e}");
    assert!(e.to_string().contains("journal does not verify"), "{e}");
    scenario.teardown();
}

/// Fault 4c: a flipped bit anywhere in the middle of the journal: the database
/// refuses to open (DATA_LOSS) or serves the state after some prefix of the
/// commits, never a state that did not exist, and never panics.
///
/// A prefix shorter than all commits is a silent loss: fjall's checksum
/// covers each batch's items, not its framing (entry tags, lengths, the
/// sequence number), and a damaged tag or length reads like the torn tail of
/// an interrupted write, so fjall cuts the journal there. This test does not
/// hide that; docs/reliability.md says so.
#[test]
fn flipped_bits_in_the_journal_never_serve_a_state_that_did_not_exist() {
    let scenario = FailScenario::setup();
    let dir = tempfile::tempdir().unwrap();
    // The state after each commit: ten inserts, then an update of each row.
    let mut states = vec![BTreeMap::new()];
    {
        let db = Database::open(dir.path()).unwrap();
        create_schema(&db);
        for k in 0..20 {
            let (key, value) = if k < 10 {
                (k, value_of(k))
            } else {
                (k - 10, format!("updated-{k}"))
            };
            db.write(vec![Mutation::insert_or_update(
                "Kv",
                &["K", "V"],
                vec![vec![Value::Int64(key), Value::String(value.clone())]],
            )])
            .unwrap();
            let mut state = states.last().unwrap().clone();
            state.insert(key, value);
            states.push(state);
        }
    }
    drop(Database::open(dir.path()).unwrap());
    let journal = journals(dir.path()).pop().unwrap();
    let len = std::fs::metadata(&journal).unwrap().len();
    let (mut refused, mut whole, mut prefix) = (0, 0, 0);
    for at in (len / 4..len * 3 / 4).step_by(9) {
        let copy = tempfile::tempdir().unwrap();
        copy_dir(dir.path(), copy.path());
        flip_bit(&copy.path().join(journal.file_name().unwrap()), at);
        match Database::open(copy.path()) {
            Err(e) => {
                assert_eq!(e.code(), Code::DataLoss, "flip at {at}: {e}");
                refused += 1;
            }
            Ok(db) => {
                let seen = rows(&db).unwrap_or_else(|e| panic!("flip at {at}: {e}"));
                match states.iter().position(|s| s == &seen) {
                    Some(p) if p == states.len() - 1 => whole += 1,
                    Some(_) => prefix += 1,
                    None => panic!("flip at {at}: a state that never existed: {seen:?}"),
                }
            }
        }
    }
    println!("{refused} refused, {whole} whole, {prefix} cut short");
    assert!(refused > 0, "no flip was detected");
    scenario.teardown();
}

/// The table files of the data keyspace (the largest
/// `keyspaces/*/tables`).
fn data_tables(dir: &Path) -> Vec<PathBuf> {
    let mut best: Vec<PathBuf> = Vec::new();
    let mut best_size = 0;
    for keyspace in std::fs::read_dir(dir.join("keyspaces")).unwrap() {
        let tables = keyspace.unwrap().path().join("tables");
        let Ok(entries) = std::fs::read_dir(&tables) else {
            continue;
        };
        let files: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
        let size: u64 = files
            .iter()
            .map(|f| std::fs::metadata(f).unwrap().len())
            .sum();
        if size > best_size {
            best_size = size;
            best = files;
        }
    }
    best
}

/// Fault 5: a flipped bit in a block of a table file: reads of the keys in that
/// block fail with DATA_LOSS naming the checksum; every other key reads
/// back right; nothing reads back wrong.
#[test]
fn flipped_bit_in_a_table_block_is_detected_not_served() {
    let scenario = FailScenario::setup();
    let dir = tempfile::tempdir().unwrap();
    let open = |dir: &Path| {
        let engine = FjallEngine::open(
            dir,
            FjallOptions {
                // Small memtables, so the rows go to table files quickly.
                memtable_size: 256 * 1024,
                ..FjallOptions::default()
            },
        )
        .unwrap();
        Database::with_engine(Arc::new(engine), Options::default()).unwrap()
    };
    let n = 4000i64;
    let long = |k: i64| format!("{}-{}", value_of(k), "x".repeat(200));
    {
        let db = open(dir.path());
        create_schema(&db);
        for chunk in (0..n).collect::<Vec<_>>().chunks(200) {
            let rows = chunk
                .iter()
                .map(|&k| vec![Value::Int64(k), Value::String(long(k))])
                .collect();
            db.write(vec![Mutation::insert("Kv", &["K", "V"], rows)])
                .unwrap();
        }
        // Wait until fjall has written rows to table files in the
        // background.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while data_tables(dir.path()).len() < 2 {
            assert!(std::time::Instant::now() < deadline, "no table files");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
    // One flipped bit in each table file. Data blocks come first in a table
    // file (its index and filter last): a third of the way in is inside one.
    for table in data_tables(dir.path()) {
        let len = std::fs::metadata(&table).unwrap().len();
        flip_bit(&table, len / 3);
    }

    let db = open(dir.path());
    let mut ok = 0;
    let mut corrupt = 0;
    for k in 0..n {
        match db.read(&ReadRequest::new(
            "Kv",
            &["V"],
            KeySet::key(vec![Value::Int64(k)]),
        )) {
            Ok(rows) => {
                assert_eq!(rows, vec![vec![Value::String(long(k))]], "key {k}");
                ok += 1;
            }
            Err(e) => {
                assert_eq!(e.code(), Code::DataLoss, "key {k}: {e}");
                assert!(e.to_string().contains("checksum"), "key {k}: {e}");
                corrupt += 1;
            }
        }
    }
    assert!(corrupt > 0, "the flipped block was never reported");
    assert!(ok > n * 9 / 10, "{ok} of {n} keys read back");
    // A scan over the damaged block fails too, rather than skip its rows.
    let e = rows(&db).unwrap_err();
    assert_eq!(e.code(), Code::DataLoss, "{e}");
    // Writes still work: corruption is reported, not a reason to stop.
    put(&db, n + 1).unwrap();
    scenario.teardown();
}

/// Rows of `Kv` read through the index `ByV`, as (V, K).
fn index_rows(db: &Database) -> Vec<(String, i64)> {
    db.read(&ReadRequest::new("Kv", &["V", "K"], KeySet::all()).with_index("ByV"))
        .unwrap()
        .into_iter()
        .map(|row| match (&row[0], &row[1]) {
            (Value::String(v), Value::Int64(k)) => (v.clone(), *k),
            other => panic!("unexpected index row {other:?}"),
        })
        .collect()
}

fn with_rows(dir: &Path) -> Database {
    let db = Database::open(dir).unwrap();
    create_schema(&db);
    for k in 0..10 {
        put(&db, k).unwrap();
    }
    db
}

/// DDL: a crash between writing the statement to the DDL log and publishing
/// the new schema. The statement is in the log with its data, so the
/// reopened database has it, whole.
#[test]
fn crash_after_the_ddl_log_write_keeps_the_statement() {
    let scenario = FailScenario::setup();
    let dir = tempfile::tempdir().unwrap();
    let db = with_rows(dir.path());
    fail::cfg("db::ddl::after_log", "panic").unwrap();
    let crashed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        db.apply_ddl(&["CREATE INDEX ByV ON Kv(V)"])
    }));
    assert!(crashed.is_err(), "the fail point simulates a crash");
    drop(db);
    fail::cfg("db::ddl::after_log", "off").unwrap();

    let db = Database::open(dir.path()).unwrap();
    assert!(
        db.catalog().index("ByV").is_some(),
        "the statement is there"
    );
    let mut expected: Vec<(String, i64)> = (0..10).map(|k| (value_of(k), k)).collect();
    expected.sort();
    assert_eq!(index_rows(&db), expected, "with its backfilled entries");
    scenario.teardown();
}

/// DDL: a failure after a statement's data work was done but before its
/// log entry was written. Nothing of it is kept: not its schema, and not
/// its data either (a new table that reuses the index's object id must be
/// empty, not show the index's entries as rows).
#[test]
fn failure_before_the_ddl_log_write_keeps_nothing() {
    let scenario = FailScenario::setup();
    let dir = tempfile::tempdir().unwrap();
    let db = with_rows(dir.path());
    let before = db.ddl();
    fail::cfg("db::ddl::before_log", "return").unwrap();
    let e = db.apply_ddl(&["CREATE INDEX ByV ON Kv(V)"]).unwrap_err();
    assert!(e.error.to_string().contains("db::ddl::before_log"), "{e}");
    let e = db.apply_ddl(&["DROP TABLE Kv"]).unwrap_err();
    assert!(e.error.to_string().contains("db::ddl::before_log"), "{e}");
    fail::cfg("db::ddl::before_log", "off").unwrap();
    assert_eq!(db.ddl(), before);
    drop(db);

    let db = Database::open(dir.path()).unwrap();
    assert_eq!(db.ddl(), before, "the schema is as before");
    assert_eq!(rows(&db).unwrap().len(), 10, "DROP TABLE deleted nothing");
    db.apply_ddl(&["CREATE TABLE Next (V STRING(MAX), K INT64) PRIMARY KEY (V, K)"])
        .unwrap();
    let next = db
        .read(&ReadRequest::new("Next", &["V", "K"], KeySet::all()))
        .unwrap();
    assert_eq!(next, Vec::<Vec<Value>>::new(), "no leftover index entries");
    scenario.teardown();
}

/// DDL: the statement's own commit hits a failed fsync. The database
/// stops; reopened, it has the statement whole or not at all.
#[test]
fn failed_fsync_of_a_ddl_commit_leaves_it_whole_or_absent() {
    let scenario = FailScenario::setup();
    let dir = tempfile::tempdir().unwrap();
    let db = with_rows(dir.path());
    fail::cfg("storage::fjall::fsync", "return").unwrap();
    let e = db.apply_ddl(&["CREATE INDEX ByV ON Kv(V)"]).unwrap_err();
    assert_stopped(&e.error, "fsync");
    assert!(db.catalog().index("ByV").is_none());
    drop(db);
    fail::cfg("storage::fjall::fsync", "off").unwrap();

    let db = Database::open(dir.path()).unwrap();
    assert_eq!(rows(&db).unwrap().len(), 10);
    if db.catalog().index("ByV").is_some() {
        assert_eq!(index_rows(&db).len(), 10);
    } else {
        db.apply_ddl(&["CREATE TABLE Next (V STRING(MAX), K INT64) PRIMARY KEY (V, K)"])
            .unwrap();
        let next = db
            .read(&ReadRequest::new("Next", &["V", "K"], KeySet::all()))
            .unwrap();
        assert!(next.is_empty(), "leftover index entries: {next:?}");
    }
    scenario.teardown();
}
