//! A schema change is applied whole or not at all: its data work commits
//! together with its DDL log entry, after every check passed. A statement
//! that fails after part of its work changed nothing, neither the schema nor
//! the data. (tests/faults.rs checks the same across crashes and failed
//! fsyncs.)

use rowtree_db::{Code, Database, KeySet, Mutation, ReadRequest, Value};

#[test]
fn a_failed_alter_column_leaves_the_data_as_it_was() {
    let db = Database::in_memory();
    db.apply_ddl(&["CREATE TABLE T (K INT64 NOT NULL, S STRING(MAX)) PRIMARY KEY (K)"])
        .unwrap();
    db.write(vec![Mutation::insert(
        "T",
        &["K", "S"],
        vec![
            vec![Value::Int64(1), Value::String("abc".into())],
            vec![Value::Int64(2), Value::Null],
        ],
    )])
    .unwrap();
    let before = db.ddl();
    // STRING -> BYTES rewrites every value; NOT NULL then finds the NULL.
    let e = db
        .apply_ddl(&["ALTER TABLE T ALTER COLUMN S BYTES(MAX) NOT NULL"])
        .unwrap_err();
    assert_eq!(e.error.code(), Code::FailedPrecondition, "{e}");
    assert_eq!(db.ddl(), before);
    // The rewrite was not kept: the column still holds strings.
    let rows = db
        .read(&ReadRequest::new("T", &["K", "S"], KeySet::all()))
        .unwrap();
    assert_eq!(
        rows,
        vec![
            vec![Value::Int64(1), Value::String("abc".into())],
            vec![Value::Int64(2), Value::Null],
        ]
    );
}

#[test]
fn each_statement_of_a_batch_commits_once() {
    let db = Database::in_memory();
    let flushes = db.commit_stats().flushes;
    db.apply_ddl(&[
        "CREATE TABLE T (K INT64 NOT NULL, S STRING(MAX)) PRIMARY KEY (K)",
        "CREATE SEQUENCE Seq OPTIONS (sequence_kind = 'bit_reversed_positive')",
        "CREATE INDEX ByS ON T(S)",
    ])
    .unwrap();
    // One commit per statement: its log entry with its data and sequence
    // state.
    assert_eq!(db.commit_stats().flushes - flushes, 3);
    let mut txn = db.begin();
    let first = txn.next_sequence_value("Seq").unwrap();
    assert!(first > 0);
    txn.rollback();
}
