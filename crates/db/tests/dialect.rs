//! The database's SQL dialect: recorded when a PostgreSQL-dialect database
//! is created, read when it is opened, and the dialect its DDL log is
//! parsed and printed in. GoogleSQL databases carry no record and behave as
//! before.

use std::path::Path;

use rowtree_db::{Database, Dialect, KeySet, Mutation, Options, ReadRequest, Value};
use rowtree_storage::{Engine, FjallEngine, FjallOptions, Space};

const PG_SCHEMA: &[&str] = &[
    "CREATE SEQUENCE seq BIT_REVERSED_POSITIVE",
    "CREATE TABLE Singers (singer_id bigint PRIMARY KEY, \"Name\" varchar(100) NOT NULL, \
     tags text[], score float8 DEFAULT 0)",
    "CREATE TABLE albums (singer_id bigint, album_id bigint DEFAULT nextval('seq'), \
     title text, budget numeric, PRIMARY KEY (singer_id, album_id)) \
     INTERLEAVE IN PARENT singers ON DELETE CASCADE",
    "CREATE INDEX albums_by_title ON albums (title) INCLUDE (budget)",
    "ALTER TABLE singers ALTER COLUMN score SET NOT NULL",
];

fn pg_options() -> Options {
    Options {
        dialect: Dialect::PostgreSql,
        ..Options::default()
    }
}

fn dialect_record(dir: &Path) -> Option<Vec<u8>> {
    let engine = FjallEngine::open(dir, FjallOptions::default()).expect("open the engine");
    engine.get(Space::Meta, b"format/dialect").expect("get")
}

#[test]
fn a_postgresql_database_replays_its_ddl_after_reopening() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ddl = {
        let db = Database::open_with(dir.path(), pg_options()).expect("create");
        assert_eq!(db.dialect(), Dialect::PostgreSql);
        db.apply_ddl(PG_SCHEMA).expect("ddl");
        db.write(vec![Mutation::insert(
            "singers",
            &["singer_id", "Name", "score"],
            vec![vec![
                Value::Int64(1),
                Value::String("Ann".into()),
                Value::Float64(2.5),
            ]],
        )])
        .expect("write");
        db.ddl()
    };
    assert!(ddl[0].starts_with("CREATE SEQUENCE seq"), "{ddl:?}");
    assert!(
        ddl.iter()
            .any(|s| s.contains("\"Name\" character varying(100) NOT NULL")),
        "{ddl:?}"
    );
    assert_eq!(
        dialect_record(dir.path()).as_deref(),
        Some(&b"POSTGRESQL"[..])
    );

    // Reopened with default options: the record decides, not the options.
    let db = Database::open(dir.path()).expect("reopen");
    assert_eq!(db.dialect(), Dialect::PostgreSql);
    assert_eq!(db.ddl(), ddl);
    let rows = db
        .read(&ReadRequest::new(
            "singers",
            &["Name", "score"],
            KeySet::all(),
        ))
        .expect("read");
    assert_eq!(
        rows,
        vec![vec![Value::String("Ann".into()), Value::Float64(2.5)]]
    );
    // New DDL is parsed as PostgreSQL; GoogleSQL's syntax is refused.
    db.apply_ddl_statement("ALTER TABLE albums ADD COLUMN released date")
        .expect("pg ddl");
    let err = db
        .apply_ddl_statement("CREATE TABLE t (k INT64) PRIMARY KEY (k)")
        .expect_err("GoogleSQL syntax");
    assert!(
        err.to_string().contains("INT64") || err.to_string().contains("int64"),
        "{err}"
    );
}

#[test]
fn a_googlesql_database_has_no_record_and_ignores_the_option_once_created() {
    let dir = tempfile::tempdir().expect("tempdir");
    {
        let db = Database::open(dir.path()).expect("create");
        assert_eq!(db.dialect(), Dialect::GoogleSql);
        db.apply_ddl(&["CREATE TABLE T (K INT64 NOT NULL) PRIMARY KEY (K)"])
            .expect("ddl");
    }
    assert_eq!(dialect_record(dir.path()), None);
    // An existing GoogleSQL database stays GoogleSQL.
    let db = Database::open_with(dir.path(), pg_options()).expect("reopen");
    assert_eq!(db.dialect(), Dialect::GoogleSql);
    assert_eq!(
        db.ddl(),
        vec!["CREATE TABLE T (\n  K INT64 NOT NULL,\n) PRIMARY KEY(K)".to_string()]
    );
    drop(db);
    assert_eq!(dialect_record(dir.path()), None);
}

#[test]
fn in_memory_databases_take_the_dialect_too() {
    let db = Database::in_memory_with(pg_options());
    assert_eq!(db.dialect(), Dialect::PostgreSql);
    db.apply_ddl_all_or_nothing(&["create table t (k bigint primary key, v jsonb)"])
        .expect("ddl");
    assert_eq!(
        db.ddl(),
        vec!["CREATE TABLE t (\n  k bigint NOT NULL,\n  v jsonb,\n  PRIMARY KEY(k)\n)".to_string()]
    );
}
