//! `sql`: one statement run through a session, against a small schema.
//!
//! The schema (created once per process) has the shapes the binder, planner
//! and executor treat specially: scalar, ARRAY and JSON columns, a
//! secondary index, an interleaved child with a DESC key, and a few rows.
//! Query parameters `@i`, `@s`, `@a`, `@j` are always bound.
//!
//! Every input leaves the database as it found it, so a crash reproduces
//! from its input alone: a query runs in a single-use read-only snapshot;
//! anything else (DML, EXPLAIN ANALYZE, BEGIN/COMMIT/ROLLBACK) runs inside
//! a transaction that is rolled back; DDL is skipped. Errors are expected;
//! panics are bugs.

#![no_main]

use std::sync::Mutex;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use rowtree_db::Database;
use rowtree_parser::ast::StatementKind;
use rowtree_sql::{Params, Session};
use rowtree_types::{parse_json, Type, Value};

/// Longer statements add run time, not new shapes.
const MAX_INPUT: usize = 4096;

const SCHEMA: &[&str] = &[
    "CREATE TABLE Users (
       Id INT64 NOT NULL,
       Name STRING(MAX),
       Age INT64,
       Score FLOAT64,
       Tags ARRAY<STRING(MAX)>,
       Nums ARRAY<INT64>,
       Doc JSON,
       Born DATE,
       Seen TIMESTAMP OPTIONS (allow_commit_timestamp = true),
       Raw BYTES(MAX),
       Amount NUMERIC,
       Active BOOL NOT NULL DEFAULT (TRUE),
     ) PRIMARY KEY (Id)",
    "CREATE INDEX UsersByName ON Users (Name) STORING (Age)",
    "CREATE TABLE Posts (
       Id INT64 NOT NULL,
       PostId INT64 NOT NULL,
       Title STRING(100),
       Likes INT64,
     ) PRIMARY KEY (Id, PostId DESC), INTERLEAVE IN PARENT Users ON DELETE CASCADE",
    "INSERT INTO Users (Id, Name, Age, Score, Tags, Nums, Doc, Born, Seen, Raw, Amount)
     VALUES (1, 'ann', 30, 1.5, ['a', 'b'], [1, 2, 3], JSON '{\"a\": [1, {\"b\": null}]}',
             DATE '2000-01-01', TIMESTAMP '2020-02-02T00:00:00Z', b'\\x00\\xff', NUMERIC '1.25'),
            (2, 'bob', NULL, CAST('nan' AS FLOAT64), [], NULL, JSON '\"x\"', NULL, NULL, NULL, NULL),
            (3, NULL, -7, -0.0, [NULL, 'z'], [NULL], NULL, DATE '9999-12-31', NULL, b'', NUMERIC '-99')",
    "INSERT INTO Posts (Id, PostId, Title, Likes)
     VALUES (1, 1, 'first', 10), (1, 2, 'second', NULL), (3, 1, NULL, 0)",
];

fn params() -> Params {
    let mut p = Params::new();
    p.insert("i".into(), (Type::Int64, Value::Int64(2)));
    p.insert("s".into(), (Type::String, Value::String("ann".into())));
    p.insert(
        "a".into(),
        (
            Type::Array(Box::new(Type::Int64)),
            Value::Array(vec![Value::Int64(1), Value::Null]),
        ),
    );
    p.insert(
        "j".into(),
        (
            Type::Json,
            Value::Json(parse_json(r#"{"k": [1, 2]}"#).unwrap()),
        ),
    );
    p
}

fn session() -> &'static Mutex<(Session, Params)> {
    static SESSION: OnceLock<Mutex<(Session, Params)>> = OnceLock::new();
    SESSION.get_or_init(|| {
        let mut s = Session::new(Database::in_memory_with(rowtree_sql::database_options()));
        for sql in SCHEMA {
            s.execute(sql, &Params::new())
                .unwrap_or_else(|e| panic!("{sql}: {e}"));
        }
        Mutex::new((s, params()))
    })
}

fuzz_target!(
    init: {
        session();
    },
    |data: &[u8]| {
        if data.len() > MAX_INPUT {
            return;
        }
        let Ok(sql) = std::str::from_utf8(data) else {
            return;
        };
        let kind = rowtree_parser::parse_statement(sql).ok().map(|s| s.kind);
        let read_only = match &kind {
            Some(StatementKind::Query(_)) => true,
            Some(
                StatementKind::Insert(_)
                | StatementKind::Update(_)
                | StatementKind::Delete(_)
                | StatementKind::Explain { .. },
            )
            | None => false,
            Some(_) => return, // DDL would change the schema for later inputs
        };
        let mut guard = session().lock().unwrap_or_else(|p| p.into_inner());
        let (s, params) = &mut *guard;
        if read_only {
            let _ = s.execute(sql, params);
        } else {
            s.execute("BEGIN", params).expect("BEGIN");
            let _ = s.execute(sql, params);
            if s.in_transaction() {
                s.execute("ROLLBACK", params).expect("ROLLBACK");
            }
        }
        assert!(!s.in_transaction());
    }
);
