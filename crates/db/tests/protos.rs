//! Proto descriptors given with DDL: they resolve PROTO and ENUM column
//! types, are stored with the statement they came with, and are installed
//! again when the DDL log is replayed.

use rowtree_db::{Code, Database, KeySet, Mutation, ReadRequest, Value};
use rowtree_testkit::protos::{music, singer_info};
use rowtree_types::Type;

const BUNDLE: &str =
    "CREATE PROTO BUNDLE (examples.spanner.music.SingerInfo, examples.spanner.music.Genre)";
const TABLE: &str = "CREATE TABLE S (K INT64 NOT NULL, Info examples.spanner.music.SingerInfo, \
                     G examples.spanner.music.Genre) PRIMARY KEY (K)";

#[test]
fn descriptors_survive_a_reopen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let info = singer_info(Some(7), Some("NO"), Some(3));
    {
        let db = Database::open(dir.path()).expect("create");
        db.apply_ddl_with_protos(&[BUNDLE, TABLE], Some(&music()))
            .expect("ddl");
        db.write(vec![Mutation::insert(
            "S",
            &["K", "Info", "G"],
            vec![vec![
                Value::Int64(1),
                Value::Bytes(info.clone()),
                Value::Int64(3),
            ]],
        )])
        .expect("write");
    }
    let db = Database::open(dir.path()).expect("reopen");
    let catalog = db.catalog();
    assert!(catalog.proto_descriptors().is_some());
    let table = catalog.table("S").expect("table S");
    assert_eq!(
        table.columns[1].ty,
        Type::Proto("examples.spanner.music.SingerInfo".into())
    );
    assert_eq!(
        table.columns[2].ty,
        Type::Enum("examples.spanner.music.Genre".into())
    );
    let rows = db
        .read(&ReadRequest::new("S", &["Info", "G"], KeySet::all()))
        .expect("read");
    assert_eq!(rows, vec![vec![Value::Bytes(info), Value::Int64(3)]]);
    // A later statement without descriptors keeps them.
    db.apply_ddl(&["CREATE TABLE U (K INT64, G examples.spanner.music.Genre) PRIMARY KEY (K)"])
        .expect("ddl without descriptors");
}

#[test]
fn bad_descriptors_and_unknown_types_are_refused() {
    let db = Database::in_memory();
    let err = db
        .apply_ddl_with_protos(&[BUNDLE], Some(b"\xff\xff"))
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(
        err.to_string().starts_with("Invalid proto descriptors"),
        "{err}"
    );
    // Without descriptors the bundle is kept, but its types cannot be
    // column types.
    db.apply_ddl(&[BUNDLE]).expect("bundle");
    let err = db.apply_ddl(&[TABLE]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.to_string().contains("Type not found"), "{err}");
}
