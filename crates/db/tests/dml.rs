//! DML inside a read-write transaction: applied at once, visible to the
//! transaction's later scans (table and index), all or nothing per call.

use rowtree_db::{Database, Error, KeySet, Mutation, ScanRequest, Value};

fn int(i: i64) -> Value {
    Value::Int64(i)
}

fn db() -> Database {
    let db = Database::in_memory();
    db.apply_ddl(&[
        "CREATE TABLE T (Id INT64 NOT NULL, Name STRING(MAX), Score INT64 DEFAULT (7)) PRIMARY KEY (Id)",
        "CREATE INDEX TByName ON T(Name) STORING (Score)",
    ])
    .expect("schema");
    db.write(vec![Mutation::insert(
        "T",
        &["Id", "Name"],
        vec![vec![int(1), Value::String("b".into())]],
    )])
    .expect("seed");
    db
}

fn ids(stream: rowtree_db::RowStream) -> Vec<i64> {
    stream
        .map(|r| match r.expect("row")[0] {
            Value::Int64(i) => i,
            ref other => panic!("unexpected {other:?}"),
        })
        .collect()
}

#[test]
fn dml_is_visible_to_later_scans_of_the_same_transaction() {
    let db = db();
    let mut txn = db.begin();
    let written = txn
        .apply_dml(vec![Mutation::insert(
            "T",
            &["Id", "Name"],
            vec![vec![int(2), Value::String("a".into())]],
        )])
        .expect("insert");
    assert_eq!(written.len(), 1);
    assert_eq!(written[0].old, None);
    // The DEFAULT was applied and is reported.
    assert_eq!(written[0].new.as_ref().expect("new")[2], int(7));
    assert_eq!(
        ids(txn
            .scan(&ScanRequest::table("T", KeySet::all()))
            .expect("scan")),
        vec![1, 2]
    );
    // Through the index, in index order: 'a' (2) before 'b' (1).
    let by_name = ScanRequest {
        index: Some("TByName".into()),
        ..ScanRequest::table("T", KeySet::all())
    };
    assert_eq!(ids(txn.scan(&by_name).expect("index scan")), vec![2, 1]);
    // Reverse scans see it too.
    let rev = ScanRequest {
        reverse: true,
        ..ScanRequest::table("T", KeySet::all())
    };
    assert_eq!(ids(txn.scan(&rev).expect("reverse")), vec![2, 1]);
    // Another transaction does not see uncommitted DML.
    let ro = db.read_only(Default::default()).expect("ro");
    assert_eq!(
        ids(ro
            .scan(&ScanRequest::table("T", KeySet::all()))
            .expect("scan")),
        vec![1]
    );
    txn.apply_dml(vec![Mutation::delete("T", KeySet::key(vec![int(1)]))])
        .expect("delete");
    assert_eq!(
        ids(txn
            .scan(&ScanRequest::table("T", KeySet::all()))
            .expect("scan")),
        vec![2]
    );
    assert_eq!(ids(txn.scan(&by_name).expect("index scan")), vec![2]);
    txn.commit().expect("commit");
    let ro = db.read_only(Default::default()).expect("ro");
    assert_eq!(
        ids(ro
            .scan(&ScanRequest::table("T", KeySet::all()))
            .expect("scan")),
        vec![2]
    );
}

#[test]
fn a_failed_dml_call_leaves_the_transaction_as_it_was() {
    let db = db();
    let mut txn = db.begin();
    txn.apply_dml(vec![Mutation::insert("T", &["Id"], vec![vec![int(5)]])])
        .expect("insert 5");
    // The second row of this call collides: nothing of the call stays.
    let err = txn
        .apply_dml(vec![Mutation::insert(
            "T",
            &["Id"],
            vec![vec![int(6)], vec![int(1)]],
        )])
        .expect_err("duplicate key");
    assert!(matches!(err, Error::AlreadyExists { .. }), "{err}");
    assert_eq!(
        ids(txn
            .scan(&ScanRequest::table("T", KeySet::all()))
            .expect("scan")),
        vec![1, 5]
    );
    txn.commit().expect("commit");
    let rows = db
        .read(&rowtree_db::ReadRequest::new("T", &["Id"], KeySet::all()))
        .expect("read");
    assert_eq!(rows, vec![vec![int(1)], vec![int(5)]]);
}

#[test]
fn insert_or_ignore_keeps_the_existing_row() {
    let db = db();
    let mut txn = db.begin();
    let written = txn
        .apply_dml(vec![Mutation::insert_or_ignore(
            "T",
            &["Id", "Name"],
            vec![
                vec![int(1), Value::String("z".into())],
                vec![int(3), Value::String("c".into())],
            ],
        )])
        .expect("insert or ignore");
    assert_eq!(written.len(), 1, "only the new row counts");
    txn.commit().expect("commit");
    let rows = db
        .read(&rowtree_db::ReadRequest::new(
            "T",
            &["Id", "Name"],
            KeySet::all(),
        ))
        .expect("read");
    assert_eq!(rows[0], vec![int(1), Value::String("b".into())]);
    assert_eq!(rows.len(), 2);
}

#[test]
fn a_schema_change_between_dml_and_commit_aborts() {
    let db = db();
    let mut txn = db.begin();
    txn.apply_dml(vec![Mutation::insert("T", &["Id"], vec![vec![int(9)]])])
        .expect("insert");
    db.apply_ddl(&["ALTER TABLE T ADD COLUMN Extra STRING(MAX)"])
        .expect("ddl");
    let err = txn.commit().expect_err("schema changed");
    assert!(err.is_retryable(), "{err}");
}

#[test]
fn a_scan_resumes_after_a_key_and_counts_the_dml_mutations() {
    let db = db();
    let mut txn = db.begin();
    assert_eq!(txn.mutation_count(), 0);
    let rows = (2..=6)
        .map(|i| vec![int(i), Value::String(format!("n{i}"))])
        .collect();
    txn.apply_dml(vec![Mutation::insert("T", &["Id", "Name"], rows)])
        .expect("insert");
    // Two columns written for each of five rows.
    assert_eq!(txn.mutation_count(), 10);
    // Buffered mutations count at commit, not here.
    txn.buffer(Mutation::delete("T", KeySet::key(vec![int(1)])))
        .expect("buffer");
    assert_eq!(txn.mutation_count(), 10);
    let after = |key: i64, reverse: bool, key_set: KeySet| ScanRequest {
        after: Some(vec![int(key)]),
        reverse,
        ..ScanRequest::table("T", key_set)
    };
    // The transaction's own rows and the committed one alike.
    assert_eq!(
        ids(txn.scan(&after(3, false, KeySet::all())).expect("scan")),
        vec![4, 5, 6]
    );
    assert_eq!(
        ids(txn.scan(&after(3, true, KeySet::all())).expect("scan")),
        vec![2, 1]
    );
    // After a key that is not there, and with points and ranges.
    let mixed = KeySet {
        keys: vec![vec![int(1)], vec![int(5)]],
        ranges: vec![rowtree_db::KeyRange::closed(vec![int(2)], vec![int(3)])],
        all: false,
    };
    assert_eq!(
        ids(txn.scan(&after(2, false, mixed.clone())).expect("scan")),
        vec![3, 5]
    );
    assert_eq!(
        ids(txn.scan(&after(3, true, mixed)).expect("scan")),
        vec![2, 1]
    );
    assert_eq!(
        ids(txn.scan(&after(6, false, KeySet::all())).expect("scan")),
        Vec::<i64>::new()
    );
    txn.rollback();
}
