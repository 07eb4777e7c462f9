//! Durability: schema, data, MVCC history and sequences survive a reopen.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use rowtree_db::{Code, Database, KeySet, Mutation, Options, ReadRequest, TimestampBound, Value};
use rowtree_txn::ManualClock;

use crate::{balances, set_balances, ACCOUNTS, SECOND, T0};

const DURABLE_SCHEMA: &[&str] = &[
    "CREATE SEQUENCE Seq OPTIONS (sequence_kind = 'bit_reversed_positive')",
    "CREATE TABLE Singers (Id INT64 NOT NULL DEFAULT (GET_NEXT_SEQUENCE_VALUE(SEQUENCE Seq)), Name STRING(MAX)) PRIMARY KEY (Id)",
    "CREATE TABLE Albums (Id INT64 NOT NULL, AlbumId INT64 NOT NULL, Title STRING(MAX)) PRIMARY KEY (Id, AlbumId), INTERLEAVE IN PARENT Singers ON DELETE CASCADE",
    "CREATE INDEX AlbumsByTitle ON Albums(Title)",
];

fn singers(db: &Database) -> Vec<Vec<Value>> {
    db.read(&ReadRequest::new("Singers", &["Id", "Name"], KeySet::all()))
        .expect("read singers")
}

fn next_values(db: &Database, n: usize) -> Vec<i64> {
    let mut out = Vec::new();
    db.run_in_transaction(|txn| {
        out.clear();
        for _ in 0..n {
            out.push(txn.next_sequence_value("Seq")?);
        }
        Ok(())
    })
    .expect("sequence values");
    out
}

#[test]
fn schema_data_history_and_sequences_survive_reopen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut used: HashSet<i64> = HashSet::new();
    let (ddl, rows, albums, first_commit, last_commit) = {
        let db = Database::open(dir.path()).expect("open");
        db.apply_ddl(DURABLE_SCHEMA).expect("schema");
        let first = db
            .write(vec![Mutation::insert(
                "Singers",
                &["Name"],
                vec![
                    vec![Value::String("Ann".into())],
                    vec![Value::String("Bob".into())],
                ],
            )])
            .expect("insert singers");
        let rows = singers(&db);
        assert_eq!(rows.len(), 2);
        let ann = rows
            .iter()
            .find(|r| r[1] == Value::String("Ann".into()))
            .expect("Ann")[0]
            .clone();
        let last = db
            .write(vec![
                Mutation::update(
                    "Singers",
                    &["Id", "Name"],
                    vec![vec![ann.clone(), Value::String("Anne".into())]],
                ),
                Mutation::insert(
                    "Albums",
                    &["Id", "AlbumId", "Title"],
                    vec![vec![
                        ann.clone(),
                        Value::Int64(1),
                        Value::String("Blue".into()),
                    ]],
                ),
            ])
            .expect("update and insert album");
        for r in &rows {
            let Value::Int64(id) = r[0] else { panic!("id") };
            used.insert(id);
        }
        used.extend(next_values(&db, 3));
        (db.ddl(), singers(&db), album_index(&db), first, last)
    };

    let db = Database::open(dir.path()).expect("reopen");
    assert_eq!(db.ddl(), ddl, "schema survives");
    assert_eq!(singers(&db), rows, "data survives");
    assert_eq!(album_index(&db), albums, "index survives");
    // MVCC history survives: the first version is still readable.
    let ro = db
        .read_only(TimestampBound::ReadTimestamp(first_commit.commit_timestamp))
        .expect("read at the first commit");
    let names: Vec<Value> = ro
        .read(&ReadRequest::new("Singers", &["Name"], KeySet::all()))
        .expect("read")
        .into_iter()
        .map(|mut r| r.remove(0))
        .collect();
    assert!(names.contains(&Value::String("Ann".into())), "{names:?}");
    // A read-only transaction holds the database open.
    drop(ro);
    // New commits come after every commit before the reopen.
    let after = db
        .write(vec![Mutation::insert(
            "Singers",
            &["Name"],
            vec![vec![Value::String("Cy".into())]],
        )])
        .expect("insert after reopen");
    assert!(after.commit_timestamp > last_commit.commit_timestamp);
    // The sequence never repeats a value across reopens.
    for id in next_values(&db, 5) {
        assert!(used.insert(id), "sequence value {id} repeated after reopen");
    }
    for r in singers(&db) {
        let Value::Int64(id) = r[0] else { panic!("id") };
        if r[1] == Value::String("Cy".into()) {
            assert!(used.insert(id), "row id {id} repeated after reopen");
        }
    }
    drop(db);
    let db = Database::open(dir.path()).expect("reopen twice");
    for id in next_values(&db, 5) {
        assert!(
            used.insert(id),
            "sequence value {id} repeated after a second reopen"
        );
    }
    assert_eq!(singers(&db).len(), 3);
}

fn album_index(db: &Database) -> Vec<Vec<Value>> {
    db.read(
        &ReadRequest::new("Albums", &["Title", "Id", "AlbumId"], KeySet::all())
            .with_index("AlbumsByTitle"),
    )
    .expect("index read")
}

#[test]
fn commit_timestamps_stay_ahead_when_the_clock_goes_back_across_reopen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let options = |at: u64| Options {
        clock: Arc::new(ManualClock::new(at)),
        ..Options::default()
    };
    let before = {
        let db = Database::open_with(dir.path(), options(T0 + 100 * SECOND)).expect("open");
        db.apply_ddl(&[ACCOUNTS]).expect("schema");
        set_balances(&db, &[(1, 1)])
    };
    // The machine's clock stepped back 100 s while the database was closed.
    let db = Database::open_with(dir.path(), options(T0)).expect("reopen");
    assert_eq!(
        balances(&db),
        BTreeMap::from([(1, 1)]),
        "strong reads see old commits"
    );
    let after = set_balances(&db, &[(1, 2)]);
    assert!(after.commit_timestamp > before.commit_timestamp);
    assert_eq!(balances(&db), BTreeMap::from([(1, 2)]));
}

#[test]
fn a_directory_in_use_is_refused_clearly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let _first = Database::open(dir.path()).expect("first open");
    let err = match Database::open(dir.path()) {
        Ok(_) => panic!("a second open of the same directory must fail"),
        Err(e) => e,
    };
    assert_eq!(err.code(), Code::FailedPrecondition, "{err}");
    assert!(err.to_string().contains("in use"), "{err}");
}

/// Views, roles, grants and the proto bundle are replayed from the DDL log
/// when a database is reopened, and what depends on them is still enforced.
#[test]
fn views_roles_and_proto_bundle_survive_reopen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ddl = {
        let db = Database::open(dir.path()).expect("open");
        db.apply_ddl(&[
            "CREATE TABLE contacts (contact_id INT64, email STRING(MAX)) PRIMARY KEY (contact_id)",
            "CREATE VIEW contacts_emails SQL SECURITY INVOKER AS SELECT c.email FROM contacts AS c",
            "CREATE OR REPLACE VIEW contacts_emails SQL SECURITY DEFINER AS \
             SELECT c.email, c.contact_id FROM contacts AS c",
            "CREATE ROLE parent",
            "CREATE ROLE child",
            "GRANT SELECT ON TABLE contacts TO ROLE parent",
            "GRANT SELECT(email) ON TABLE contacts TO ROLE child",
            "GRANT ROLE parent TO ROLE child",
            "CREATE PROTO BUNDLE (examples.spanner.music.SingerInfo, examples.spanner.music.Genre,)",
            "ALTER PROTO BUNDLE INSERT (examples.spanner.music.CustomerInfo) \
             DELETE (examples.spanner.music.Genre)",
            "ALTER DATABASE db SET OPTIONS (version_retention_period = '7d', \
             default_leader = 'us-east1', optimizer_version = 5, enable_key_visualizer = true)",
        ])
        .expect("schema");
        db.ddl()
    };
    let db = Database::open(dir.path()).expect("reopen");
    assert_eq!(db.ddl(), ddl, "schema survives");
    let catalog = db.catalog();
    assert_eq!(
        catalog.proto_bundle(),
        Some(
            &[
                "examples.spanner.music.SingerInfo".to_string(),
                "examples.spanner.music.CustomerInfo".to_string()
            ][..]
        )
    );
    let view = catalog.view("CONTACTS_EMAILS").expect("view survives");
    assert_eq!(view.security, rowtree_schema::ast::SqlSecurity::Definer);
    assert_eq!(
        view.query_text,
        "SELECT c.email, c.contact_id FROM contacts AS c"
    );
    assert_eq!(catalog.roles().count(), 2);
    let err = db
        .apply_ddl_statement("DROP TABLE contacts")
        .expect_err("a view reads contacts");
    assert!(
        err.to_string().contains("dependent views: contacts_emails"),
        "{err}"
    );
    let err = db
        .apply_ddl_statement("DROP ROLE parent")
        .expect_err("parent has privileges");
    assert!(err.to_string().contains("Cannot drop role parent"), "{err}");
}
