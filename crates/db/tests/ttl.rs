//! Row deletion policies (TTL) at work: a pass deletes exactly the expired
//! rows, with their cascading children and index entries, in bounded
//! transactions; the background task runs passes on its own; the policy
//! survives reopening the database.

use std::time::{Duration, Instant};

use rowtree_db::keys::Object;
use rowtree_db::ttl::TTL_BATCH;
use rowtree_db::{Database, KeySet, Mutation, Options, ReadRequest, Timestamp, Value};

const DAY: i128 = 86_400 * 1_000_000_000;

fn now() -> i128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as i128
}

fn days_ago(days: i128) -> Value {
    Value::Timestamp(Timestamp::from_nanos(now() - days * DAY).unwrap())
}

fn ids(db: &Database, table: &str, columns: &[&str], index: Option<&str>) -> Vec<Vec<Value>> {
    let mut request = ReadRequest::new(table, columns, KeySet::all());
    if let Some(index) = index {
        request = request.with_index(index);
    }
    let mut rows = db.read(&request).unwrap();
    rows.sort_by_key(|r| format!("{r:?}"));
    rows
}

fn schema(db: &Database) {
    db.apply_ddl(&[
        "CREATE TABLE Events (Id INT64 NOT NULL, CreatedAt TIMESTAMP, Name STRING(MAX)) \
         PRIMARY KEY (Id), ROW DELETION POLICY (OLDER_THAN(CreatedAt, INTERVAL 30 DAY))",
        "CREATE INDEX EventsByName ON Events(Name)",
        "CREATE TABLE Logs (Id INT64 NOT NULL, Seq INT64 NOT NULL, Msg STRING(MAX)) \
         PRIMARY KEY (Id, Seq), INTERLEAVE IN PARENT Events ON DELETE CASCADE",
    ])
    .unwrap();
}

#[test]
fn a_pass_deletes_only_expired_rows_with_their_children_and_index_entries() {
    let db = Database::in_memory();
    schema(&db);
    let s = |v: &str| Value::String(v.into());
    db.write(vec![
        Mutation::insert(
            "Events",
            &["Id", "CreatedAt", "Name"],
            vec![
                vec![Value::Int64(1), days_ago(40), s("old")],
                vec![Value::Int64(2), days_ago(1), s("new")],
                vec![Value::Int64(3), Value::Null, s("never")],
                vec![Value::Int64(4), days_ago(31), s("older")],
                vec![Value::Int64(5), days_ago(29), s("almost")],
            ],
        ),
        Mutation::insert(
            "Logs",
            &["Id", "Seq", "Msg"],
            vec![
                vec![Value::Int64(1), Value::Int64(1), s("a")],
                vec![Value::Int64(1), Value::Int64(2), s("b")],
                vec![Value::Int64(2), Value::Int64(1), s("c")],
                vec![Value::Int64(4), Value::Int64(1), s("d")],
            ],
        ),
    ])
    .unwrap();

    let stats = db.delete_expired_rows().unwrap();
    assert_eq!(stats.rows_deleted, 2);
    assert_eq!(stats.transactions, 1);
    assert_eq!(stats.rows_failed, 0);

    let remaining = ids(&db, "Events", &["Id"], None);
    assert_eq!(
        remaining,
        vec![
            vec![Value::Int64(2)],
            vec![Value::Int64(3)],
            vec![Value::Int64(5)]
        ]
    );
    assert_eq!(
        ids(&db, "Logs", &["Id", "Seq"], None),
        vec![vec![Value::Int64(2), Value::Int64(1)]]
    );
    assert_eq!(
        ids(&db, "Events", &["Name"], Some("EventsByName")),
        vec![vec![s("almost")], vec![s("never")], vec![s("new")]]
    );
    // Nothing of the deleted rows is left in storage: no row, child or
    // index key names 1 or 4.
    let catalog = db.catalog();
    let index_id = catalog.index("EventsByName").unwrap().id;
    for (_, object, values) in db.dump().unwrap() {
        let gone = [Value::Int64(1), Value::Int64(4), s("old"), s("older")];
        match object {
            Object::Table(_) => assert!(!gone.contains(&values[0]), "{values:?}"),
            Object::Index(id) => {
                assert_eq!(id, index_id);
                assert!(!values.iter().any(|v| gone.contains(v)), "{values:?}");
            }
        }
    }

    // A second pass finds nothing more.
    assert_eq!(db.delete_expired_rows().unwrap().rows_deleted, 0);
}

#[test]
fn large_deletions_are_split_into_bounded_transactions() {
    let db = Database::in_memory();
    schema(&db);
    let n = 2 * TTL_BATCH + 500;
    let rows: Vec<Vec<Value>> = (0..n as i64)
        .map(|i| {
            // Every third row is fresh.
            let age = if i % 3 == 0 { 1 } else { 60 };
            vec![Value::Int64(i), days_ago(age), Value::Null]
        })
        .collect();
    for chunk in rows.chunks(1000) {
        db.write(vec![Mutation::insert(
            "Events",
            &["Id", "CreatedAt", "Name"],
            chunk.to_vec(),
        )])
        .unwrap();
    }
    let stats = db.delete_expired_rows().unwrap();
    let expired = (0..n).filter(|i| i % 3 != 0).count() as u64;
    assert_eq!(stats.rows_deleted, expired);
    assert!(stats.transactions >= 3, "{stats:?}");
    assert_eq!(
        ids(&db, "Events", &["Id"], None).len(),
        n - expired as usize
    );
}

#[test]
fn a_parent_with_no_action_children_is_left_and_the_rest_deleted() {
    let db = Database::in_memory();
    db.apply_ddl(&[
        "CREATE TABLE P (Id INT64 NOT NULL, Ts TIMESTAMP) PRIMARY KEY (Id), \
         ROW DELETION POLICY (OLDER_THAN(Ts, INTERVAL 0 DAY))",
        "CREATE TABLE C (Id INT64 NOT NULL, K INT64 NOT NULL) PRIMARY KEY (Id, K), \
         INTERLEAVE IN PARENT P ON DELETE NO ACTION",
    ])
    .unwrap();
    db.write(vec![
        Mutation::insert(
            "P",
            &["Id", "Ts"],
            (1..=3)
                .map(|i| vec![Value::Int64(i), days_ago(2)])
                .collect(),
        ),
        Mutation::insert(
            "C",
            &["Id", "K"],
            vec![vec![Value::Int64(2), Value::Int64(1)]],
        ),
    ])
    .unwrap();
    let stats = db.delete_expired_rows().unwrap();
    assert_eq!((stats.rows_deleted, stats.rows_failed), (2, 1));
    assert_eq!(ids(&db, "P", &["Id"], None), vec![vec![Value::Int64(2)]]);
}

#[test]
fn the_background_task_deletes_expired_rows_on_its_own() {
    let db = Database::in_memory_with(Options {
        ttl_interval: Duration::from_millis(20),
        ..Options::default()
    });
    schema(&db);
    db.write(vec![Mutation::insert(
        "Events",
        &["Id", "CreatedAt"],
        vec![
            vec![Value::Int64(1), days_ago(100)],
            vec![Value::Int64(2), days_ago(0)],
        ],
    )])
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let remaining = ids(&db, "Events", &["Id"], None);
        if remaining == vec![vec![Value::Int64(2)]] {
            break;
        }
        assert!(Instant::now() < deadline, "still there: {remaining:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn the_policy_is_replayed_from_the_ddl_log() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Database::open(dir.path()).unwrap();
        schema(&db);
        db.apply_ddl(&[
            "ALTER TABLE Events REPLACE ROW DELETION POLICY (OLDER_THAN(CreatedAt, INTERVAL 7 DAY))",
            // A no-op statement in the log replays too.
            "ANALYZE",
        ])
        .unwrap();
    }
    let db = Database::open(dir.path()).unwrap();
    let ddl = db.ddl();
    assert!(
        ddl[0].ends_with("ROW DELETION POLICY (OLDER_THAN(CreatedAt, INTERVAL 7 DAY))"),
        "{ddl:?}"
    );
    db.write(vec![Mutation::insert(
        "Events",
        &["Id", "CreatedAt"],
        vec![
            vec![Value::Int64(1), days_ago(8)],
            vec![Value::Int64(2), days_ago(6)],
        ],
    )])
    .unwrap();
    assert_eq!(db.delete_expired_rows().unwrap().rows_deleted, 1);
    db.apply_ddl(&["ALTER TABLE Events DROP ROW DELETION POLICY"])
        .unwrap();
    db.write(vec![Mutation::insert(
        "Events",
        &["Id", "CreatedAt"],
        vec![vec![Value::Int64(3), days_ago(800)]],
    )])
    .unwrap();
    assert_eq!(db.delete_expired_rows().unwrap().rows_deleted, 0);
}
