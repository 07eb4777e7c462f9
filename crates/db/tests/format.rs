//! The on-disk format version (`rowtree_db::format`): recorded when a
//! database is created, checked when it is opened.
//!
//! The tests edit the marker with the storage engine directly, as an older or
//! newer build of Rowtree would have left it.

use std::path::Path;

use rowtree_db::{Code, Database, Error, KeySet, Mutation, ReadRequest, Value, FORMAT_VERSION};
use rowtree_storage::{Durability, Engine, FjallEngine, FjallOptions, Space, WriteBatch};

const MARKER: &[u8] = b"format/version";

/// A database in `dir` with one row.
fn create(dir: &Path) {
    let db = Database::open(dir).expect("create");
    db.apply_ddl(&["CREATE TABLE T (K INT64 NOT NULL, V STRING(MAX)) PRIMARY KEY (K)"])
        .expect("ddl");
    db.write(vec![Mutation::insert(
        "T",
        &["K", "V"],
        vec![vec![Value::Int64(1), Value::String("one".into())]],
    )])
    .expect("write");
}

/// The row `create` wrote, read back.
fn assert_row(db: &Database) {
    let rows = db
        .read(&ReadRequest::new("T", &["V"], KeySet::all()))
        .expect("read");
    assert_eq!(rows, vec![vec![Value::String("one".into())]]);
}

/// Runs `f` on the closed database's storage engine.
fn with_engine<T>(dir: &Path, f: impl FnOnce(&FjallEngine) -> T) -> T {
    let engine = FjallEngine::open(dir, FjallOptions::default()).expect("open the engine");
    f(&engine)
}

fn marker(dir: &Path) -> Option<Vec<u8>> {
    with_engine(dir, |e| e.get(Space::Meta, MARKER).expect("get"))
}

fn set_marker(dir: &Path, value: Option<Vec<u8>>) {
    with_engine(dir, |e| {
        let mut batch = WriteBatch::new();
        match value {
            Some(v) => batch.put(Space::Meta, MARKER.to_vec(), v),
            None => batch.delete(Space::Meta, MARKER.to_vec()),
        }
        e.write(batch, Durability::Sync).expect("write");
    })
}

#[test]
fn a_new_database_records_the_version_and_reopens() {
    let dir = tempfile::tempdir().expect("tempdir");
    create(dir.path());
    assert_eq!(
        marker(dir.path()),
        Some(FORMAT_VERSION.to_be_bytes().to_vec())
    );
    let db = Database::open(dir.path()).expect("reopen");
    assert_row(&db);
}

#[test]
fn a_newer_version_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    create(dir.path());
    let newer = FORMAT_VERSION + 1;
    set_marker(dir.path(), Some(newer.to_be_bytes().to_vec()));

    let err = Database::open(dir.path())
        .err()
        .expect("a newer format must not open");
    assert_eq!(
        err,
        Error::UnsupportedFormat {
            found: newer,
            supported: FORMAT_VERSION
        }
    );
    assert_eq!(err.code(), Code::FailedPrecondition);
    let message = err.to_string();
    assert!(
        message.contains(&format!("format version {newer}"))
            && message.contains(&format!("format version {FORMAT_VERSION}")),
        "the message names both versions: {message}"
    );
    // Refusing wrote nothing: the marker is still the newer one.
    assert_eq!(marker(dir.path()), Some(newer.to_be_bytes().to_vec()));
}

#[test]
fn a_version_never_written_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    create(dir.path());
    set_marker(dir.path(), Some(0u32.to_be_bytes().to_vec()));
    let err = Database::open(dir.path())
        .err()
        .expect("version 0 must not open");
    assert_eq!(
        err,
        Error::UnsupportedFormat {
            found: 0,
            supported: FORMAT_VERSION
        }
    );
}

#[test]
fn a_database_from_before_the_marker_opens_and_gets_the_current_version() {
    let dir = tempfile::tempdir().expect("tempdir");
    create(dir.path());
    // What a build from before the format version left: no marker.
    set_marker(dir.path(), None);
    assert_eq!(marker(dir.path()), None);

    let db = Database::open(dir.path()).expect("an unmarked database opens");
    assert_row(&db);
    drop(db);
    assert_eq!(
        marker(dir.path()),
        Some(FORMAT_VERSION.to_be_bytes().to_vec())
    );
}

/// A format 1 directory (no row heads) opens, reads and writes, and its
/// marker is raised to the current version, so a format 1 build, which
/// would write rows without updating their heads, refuses it from then on.
#[test]
fn a_version_1_database_opens_and_is_upgraded() {
    assert_eq!(FORMAT_VERSION, 2);
    let dir = tempfile::tempdir().expect("tempdir");
    create(dir.path());
    // What a format 1 build leaves: its marker, and no heads.
    with_engine(dir.path(), |e| {
        let mut batch = WriteBatch::new();
        for item in e.scan(Space::Heads, rowtree_storage::KeyRange::all(), false) {
            batch.delete(Space::Heads, item.expect("scan").0);
        }
        batch.put(Space::Meta, MARKER.to_vec(), 1u32.to_be_bytes().to_vec());
        e.write(batch, Durability::Sync).expect("write");
    });
    let db = Database::open(dir.path()).expect("a format 1 database opens");
    assert_row(&db);
    drop(db);
    assert_eq!(
        marker(dir.path()),
        Some(FORMAT_VERSION.to_be_bytes().to_vec())
    );
    let db = Database::open(dir.path()).expect("reopen");
    // A row written now gets its head, and a row from before reads by seek.
    db.write(vec![Mutation::insert(
        "T",
        &["K", "V"],
        vec![vec![Value::Int64(2), Value::String("two".into())]],
    )])
    .expect("write");
    let rows = db
        .read(&ReadRequest::new("T", &["V"], KeySet::all()))
        .expect("read");
    assert_eq!(
        rows,
        vec![
            vec![Value::String("one".into())],
            vec![Value::String("two".into())]
        ]
    );
    for (k, v) in [(1, "one"), (2, "two")] {
        let key = ReadRequest::new("T", &["V"], KeySet::key(vec![Value::Int64(k)]));
        let rows = db.read(&key).expect("point read");
        assert_eq!(rows, vec![vec![Value::String(v.into())]]);
    }
    drop(db);
    let heads = with_engine(dir.path(), |e| {
        e.scan(Space::Heads, rowtree_storage::KeyRange::all(), false)
            .count()
    });
    assert_eq!(heads, 1);
}

#[test]
fn a_damaged_marker_is_data_loss() {
    let dir = tempfile::tempdir().expect("tempdir");
    create(dir.path());
    set_marker(dir.path(), Some(vec![0, 1]));
    let err = Database::open(dir.path())
        .err()
        .expect("a damaged marker must not open");
    assert_eq!(err.code(), Code::DataLoss, "{err}");
}
