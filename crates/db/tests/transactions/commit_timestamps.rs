//! `PENDING_COMMIT_TIMESTAMP` becomes the commit timestamp, in values and
//! keys.

use rowtree_db::{
    Code, CommitResult, Database, KeySet, Mutation, ReadRequest, Timestamp, Value,
    PENDING_COMMIT_TIMESTAMP,
};

const EVENTS: &[&str] = &[
    "CREATE TABLE Events (Id INT64 NOT NULL, Ts TIMESTAMP OPTIONS (allow_commit_timestamp = true), Plain TIMESTAMP) PRIMARY KEY (Id)",
    "CREATE INDEX EventsByTs ON Events(Ts)",
    "CREATE TABLE Log (Ts TIMESTAMP NOT NULL OPTIONS (allow_commit_timestamp = true), Seq INT64 NOT NULL, Note STRING(MAX)) PRIMARY KEY (Ts, Seq)",
    "CREATE TABLE LogLines (Ts TIMESTAMP NOT NULL OPTIONS (allow_commit_timestamp = true), Seq INT64 NOT NULL, Line INT64 NOT NULL) PRIMARY KEY (Ts, Seq, Line), INTERLEAVE IN PARENT Log ON DELETE CASCADE",
];

fn pending() -> Value {
    Value::Timestamp(PENDING_COMMIT_TIMESTAMP)
}

fn ts_value(c: &CommitResult) -> Value {
    Value::Timestamp(c.timestamp())
}

#[test]
fn pending_commit_timestamp_becomes_the_commit_timestamp() {
    let db = Database::in_memory();
    db.apply_ddl(EVENTS).expect("schema");
    let c1 = db
        .write(vec![Mutation::insert(
            "Events",
            &["Id", "Ts"],
            vec![
                vec![Value::Int64(1), pending()],
                vec![Value::Int64(2), pending()],
            ],
        )])
        .expect("insert with the commit timestamp");
    let c2 = db
        .write(vec![Mutation::update(
            "Events",
            &["Id", "Ts"],
            vec![vec![Value::Int64(2), pending()]],
        )])
        .expect("update with the commit timestamp");
    assert!(c2.commit_timestamp > c1.commit_timestamp);
    let rows = db
        .read(&ReadRequest::new("Events", &["Id", "Ts"], KeySet::all()))
        .expect("read");
    assert_eq!(
        rows,
        vec![
            vec![Value::Int64(1), ts_value(&c1)],
            vec![Value::Int64(2), ts_value(&c2)],
        ]
    );
    // The index holds the commit timestamps too, in order.
    let entries = db
        .read(&ReadRequest::new("Events", &["Ts", "Id"], KeySet::all()).with_index("EventsByTs"))
        .expect("index read");
    assert_eq!(
        entries,
        vec![
            vec![ts_value(&c1), Value::Int64(1)],
            vec![ts_value(&c2), Value::Int64(2)],
        ]
    );
}

#[test]
fn pending_commit_timestamp_is_refused_without_the_option() {
    let db = Database::in_memory();
    db.apply_ddl(EVENTS).expect("schema");
    let err = db
        .write(vec![Mutation::insert(
            "Events",
            &["Id", "Plain"],
            vec![vec![Value::Int64(1), pending()]],
        )])
        .expect_err("Plain has no allow_commit_timestamp");
    assert_eq!(err.code(), Code::FailedPrecondition, "{err}");
    assert!(err.to_string().contains("allow_commit_timestamp"), "{err}");
    assert!(db
        .read(&ReadRequest::new("Events", &["Id"], KeySet::all()))
        .expect("read")
        .is_empty());
}

#[test]
fn the_largest_timestamp_is_an_ordinary_value() {
    // 9999-12-31T23:59:59.999999999Z is a valid TIMESTAMP. Writing it to a
    // column without allow_commit_timestamp must store it, not mistake it
    // for "the commit timestamp".
    let db = Database::in_memory();
    db.apply_ddl(EVENTS).expect("schema");
    let max = Timestamp::from_seconds_nanos(253_402_300_799, 999_999_999).expect("in range");
    db.write(vec![Mutation::insert(
        "Events",
        &["Id", "Plain"],
        vec![vec![Value::Int64(1), Value::Timestamp(max)]],
    )])
    .expect("the largest TIMESTAMP is a value like any other");
    let rows = db
        .read(&ReadRequest::new("Events", &["Plain"], KeySet::all()))
        .expect("read");
    assert_eq!(rows, vec![vec![Value::Timestamp(max)]]);
}

#[test]
fn pending_commit_timestamp_in_key_columns() {
    let db = Database::in_memory();
    db.apply_ddl(EVENTS).expect("schema");
    // A parent and its child keyed by the same commit timestamp, in one commit.
    let c = db
        .write(vec![
            Mutation::insert(
                "Log",
                &["Ts", "Seq", "Note"],
                vec![vec![
                    pending(),
                    Value::Int64(1),
                    Value::String("first".into()),
                ]],
            ),
            Mutation::insert(
                "LogLines",
                &["Ts", "Seq", "Line"],
                vec![
                    vec![pending(), Value::Int64(1), Value::Int64(1)],
                    vec![pending(), Value::Int64(1), Value::Int64(2)],
                ],
            ),
        ])
        .expect("rows keyed by the commit timestamp");
    let c2 = db
        .write(vec![Mutation::insert(
            "Log",
            &["Ts", "Seq", "Note"],
            vec![vec![
                pending(),
                Value::Int64(1),
                Value::String("second".into()),
            ]],
        )])
        .expect("a second row keyed by its own commit timestamp");
    let log = db
        .read(&ReadRequest::new(
            "Log",
            &["Ts", "Seq", "Note"],
            KeySet::all(),
        ))
        .expect("read");
    assert_eq!(
        log,
        vec![
            vec![ts_value(&c), Value::Int64(1), Value::String("first".into())],
            vec![
                ts_value(&c2),
                Value::Int64(1),
                Value::String("second".into())
            ],
        ]
    );
    let lines = db
        .read(&ReadRequest::new(
            "LogLines",
            &["Ts", "Seq", "Line"],
            KeySet::key(vec![ts_value(&c), Value::Int64(1), Value::Int64(2)]),
        ))
        .expect("point read by the commit timestamp");
    assert_eq!(
        lines,
        vec![vec![ts_value(&c), Value::Int64(1), Value::Int64(2)]]
    );
    // Deleting the parent by its (real) key cascades to both children.
    db.write(vec![Mutation::delete(
        "Log",
        KeySet::key(vec![ts_value(&c), Value::Int64(1)]),
    )])
    .expect("delete");
    let lines = db
        .read(&ReadRequest::new("LogLines", &["Line"], KeySet::all()))
        .expect("read");
    assert!(lines.is_empty(), "{lines:?}");
}
