//! Commit limits: 80,000 mutations, 10 MiB cells, 8 KiB keys.

use rowtree_db::{Code, Database, KeySet, Mutation, ReadRequest, Value};

use crate::{accounts_db, balances};

#[test]
fn more_than_80000_mutations_are_rejected() {
    let db = accounts_db();
    // 40,001 rows x 2 columns = 80,002 mutations.
    let rows: Vec<Vec<Value>> = (0..40_001)
        .map(|i| vec![Value::Int64(i), Value::Int64(0)])
        .collect();
    let err = db
        .write(vec![Mutation::insert("Accounts", &["Id", "Balance"], rows)])
        .expect_err("80,002 mutations");
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("too many mutations") && msg.contains("80000"),
        "{msg}"
    );
    assert!(balances(&db).is_empty(), "nothing of it was written");

    // Deletes count one per key.
    let keys = (0..80_001).map(|i| vec![Value::Int64(i)]);
    let err = db
        .write(vec![Mutation::delete("Accounts", KeySet::keys(keys))])
        .expect_err("80,001 deleted keys");
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");

    // Split over several mutations of one transaction, it is still too many.
    let half = |from: i64| {
        Mutation::insert(
            "Accounts",
            &["Id", "Balance"],
            (from..from + 20_001)
                .map(|i| vec![Value::Int64(i), Value::Int64(0)])
                .collect(),
        )
    };
    let err = db
        .write(vec![half(0), half(20_001)])
        .expect_err("2 x 40,002 mutations");
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
}

#[test]
fn exactly_80000_mutations_are_accepted() {
    let db = Database::in_memory();
    db.apply_ddl(&["CREATE TABLE Wide (Id INT64 NOT NULL, C1 INT64, C2 INT64, C3 INT64, C4 INT64, C5 INT64, C6 INT64, C7 INT64, C8 INT64, C9 INT64) PRIMARY KEY (Id)"])
        .expect("schema");
    let columns = ["Id", "C1", "C2", "C3", "C4", "C5", "C6", "C7", "C8", "C9"];
    let rows: Vec<Vec<Value>> = (0..8_000)
        .map(|i| (0..10).map(|c| Value::Int64(i * 10 + c)).collect())
        .collect();
    let c = db
        .write(vec![Mutation::insert("Wide", &columns, rows)])
        .expect("80,000 mutations fit");
    assert_eq!(c.mutation_count, 80_000);
}

const BLOBS: &str =
    "CREATE TABLE Blobs (Id INT64 NOT NULL, B BYTES(MAX), S STRING(MAX)) PRIMARY KEY (Id)";

#[test]
fn a_cell_over_10_mib_is_rejected() {
    let db = Database::in_memory();
    db.apply_ddl(&[BLOBS]).expect("schema");
    let put = |id: i64, col: &str, v: Value| {
        db.write(vec![Mutation::insert_or_update(
            "Blobs",
            &["Id", col],
            vec![vec![Value::Int64(id), v]],
        )])
    };
    put(1, "B", Value::Bytes(vec![7; 10 << 20])).expect("exactly 10 MiB fits");
    let err = put(2, "B", Value::Bytes(vec![7; (10 << 20) + 1])).expect_err("10 MiB + 1");
    assert!(!err.is_retryable());
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert!(err.to_string().contains("10 MiB"), "{err}");
    // Also through an update of an existing row.
    let err = put(1, "B", Value::Bytes(vec![7; (10 << 20) + 1])).expect_err("update to 10 MiB + 1");
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    let ids = db
        .read(&ReadRequest::new("Blobs", &["Id"], KeySet::all()))
        .expect("read");
    assert_eq!(ids, vec![vec![Value::Int64(1)]]);
}

#[test]
fn a_string_max_value_over_2621440_characters_is_rejected() {
    // Spanner: STRING(MAX) holds at most 2,621,440 characters (10 MiB / 4).
    let db = Database::in_memory();
    db.apply_ddl(&[BLOBS]).expect("schema");
    let s = "x".repeat(2_621_441);
    let err = db
        .write(vec![Mutation::insert(
            "Blobs",
            &["Id", "S"],
            vec![vec![Value::Int64(1), Value::String(s)]],
        )])
        .expect_err("2,621,441 characters in STRING(MAX)");
    assert!(!err.is_retryable(), "{err}");
}

#[test]
fn a_key_over_8_kib_is_rejected() {
    let db = Database::in_memory();
    db.apply_ddl(&[
        "CREATE TABLE Named (Name STRING(MAX) NOT NULL, Note STRING(MAX)) PRIMARY KEY (Name)",
        "CREATE INDEX NamedByNote ON Named(Note)",
    ])
    .expect("schema");
    let write = |name: String, note: String| {
        db.write(vec![Mutation::insert(
            "Named",
            &["Name", "Note"],
            vec![vec![Value::String(name), Value::String(note)]],
        )])
    };
    write("k".repeat(8000), "short".into()).expect("a key under 8 KiB fits");
    let err = write("k".repeat(8 * 1024 + 1), "short".into()).expect_err("an 8 KiB + 1 key");
    assert!(!err.is_retryable(), "{err}");
    assert!(err.to_string().contains("Key too large"), "{err}");
    // An index key over 8 KiB is refused too, and the row is not written.
    let err = write("small".into(), "n".repeat(9000)).expect_err("an index key over 8 KiB");
    assert!(err.to_string().contains("Key too large"), "{err}");
    let rows = db
        .read(&ReadRequest::new("Named", &["Note"], KeySet::all()))
        .expect("read");
    assert_eq!(rows, vec![vec![Value::String("short".into())]]);
}
