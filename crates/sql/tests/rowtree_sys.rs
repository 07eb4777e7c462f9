//! ROWTREE_SYS: the schema advisor's findings through SQL, and hot splits
//! explained by the rule behind them. (As in `spanner_sys.rs`, a test
//! cannot make a split really hot, so the load history is set directly.)

use rowtree_db::Database;
use rowtree_kv::{IntervalStat, LoadHistory, NodeId, SplitId};
use rowtree_sql::{ExecuteResult, Params, Session};
use rowtree_types::Value;

const MINUTE: u64 = 60_000_000_000;
const END: u64 = 29_000_000 * MINUTE;

fn run(session: &mut Session, sql: &str) {
    session.execute(sql, &Params::new()).unwrap();
}

fn query(session: &mut Session, sql: &str) -> Vec<Vec<String>> {
    match session.execute(sql, &Params::new()).unwrap() {
        ExecuteResult::Query(q) => q
            .rows
            .iter()
            .map(|r| r.iter().map(Value::sql_literal).collect())
            .collect(),
        other => panic!("not a query: {other:?}"),
    }
}

fn hot(start: Vec<u8>, limit: Option<Vec<u8>>, score: f64) -> IntervalStat {
    IntervalStat {
        interval_end: 0,
        split: SplitId(3),
        start,
        limit,
        node: NodeId(0),
        replicas: Vec::new(),
        cpu_score: score,
        requests: 1,
        rows_read: 0,
        rows_written: 1,
        bytes_read: 0,
        bytes_written: 10,
        cpu_nanos: (score / 100.0 * MINUTE as f64) as u64,
        unsplittable: Vec::new(),
        buckets: Default::default(),
    }
}

#[test]
fn schema_advice_follows_the_schema() {
    let db = Database::in_memory_with(rowtree_sql::database_options());
    let mut session = Session::new(db);
    let advice = "SELECT RULE, SEVERITY, OBJECT, FIX IS NOT NULL FROM ROWTREE_SYS.SCHEMA_ADVICE \
                  ORDER BY RULE, OBJECT";
    assert!(query(&mut session, advice).is_empty(), "an empty schema");

    run(
        &mut session,
        "CREATE TABLE UserAccessLogs (LastAccess TIMESTAMP NOT NULL, UserId STRING(36) NOT NULL) \
         PRIMARY KEY (LastAccess, UserId)",
    );
    run(
        &mut session,
        "CREATE TABLE Events (EventId STRING(36) NOT NULL DEFAULT (GENERATE_UUID()), \
         OccurredAt TIMESTAMP NOT NULL) PRIMARY KEY (EventId)",
    );
    run(
        &mut session,
        "CREATE INDEX EventsByTime ON Events(OccurredAt)",
    );
    assert_eq!(
        query(&mut session, advice),
        vec![
            vec![
                "\"monotonic-index\"",
                "\"error\"",
                "\"EventsByTime\"",
                "TRUE"
            ],
            vec![
                "\"monotonic-key\"",
                "\"error\"",
                "\"UserAccessLogs\"",
                "TRUE"
            ],
        ]
    );

    // The fixes: swap the key, interleave nothing, drop the index.
    run(&mut session, "DROP INDEX EventsByTime");
    run(&mut session, "DROP TABLE UserAccessLogs");
    run(
        &mut session,
        "CREATE TABLE UserAccessLogs (UserId STRING(36) NOT NULL, LastAccess TIMESTAMP NOT NULL) \
         PRIMARY KEY (UserId, LastAccess)",
    );
    assert!(query(&mut session, advice).is_empty());

    // The message names the mechanism.
    run(
        &mut session,
        "CREATE TABLE Ledger (PostedAt TIMESTAMP NOT NULL, Id STRING(36) NOT NULL) \
         PRIMARY KEY (PostedAt, Id)",
    );
    let message = query(
        &mut session,
        "SELECT MESSAGE, FIX FROM ROWTREE_SYS.SCHEMA_ADVICE WHERE OBJECT = 'Ledger'",
    );
    assert_eq!(message.len(), 1);
    assert!(message[0][0].contains("PostedAt"), "{message:?}");
    assert!(message[0][1].contains("CREATE TABLE"), "{message:?}");
}

#[test]
fn hot_splits_are_explained_by_rule() {
    let db = Database::in_memory_with(rowtree_sql::database_options());
    let mut session = Session::new(db.clone());
    run(
        &mut session,
        "CREATE TABLE Logs (LoggedAt TIMESTAMP NOT NULL, Host STRING(64) NOT NULL) \
         PRIMARY KEY (LoggedAt, Host)",
    );
    run(
        &mut session,
        "CREATE TABLE Users (UserId STRING(36) NOT NULL, Name STRING(64)) PRIMARY KEY (UserId)",
    );
    let catalog = db.catalog();
    let split_of = |table: &str| {
        db.router()
            .split_map()
            .splits()
            .into_iter()
            .find(|s| rowtree_db::keys::describe(&catalog, &s.start) == table)
            .unwrap()
    };
    let (logs, users) = (split_of("Logs"), split_of("Users"));
    let mut history = LoadHistory::new();
    history.add_minute(
        END,
        vec![
            hot(logs.start.clone(), logs.limit.clone(), 98.0),
            hot(users.start.clone(), users.limit.clone(), 60.0),
        ],
    );
    db.split_manager().set_history(history);

    let rows = query(
        &mut session,
        "SELECT SPLIT_START, CPU_USAGE_SCORE, OBJECT, KEY_COLUMNS, RULE, FIX IS NOT NULL, \
         EXPLANATION FROM ROWTREE_SYS.HOT_SPLIT_ADVICE",
    );
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(
        rows[0][..6],
        [
            "\"Logs(<begin>)\"",
            "98",
            "\"Logs\"",
            "[\"LoggedAt\", \"Host\"]",
            "\"monotonic-key\"",
            "TRUE"
        ]
    );
    // A hot split of a well-keyed table: no rule explains it.
    assert_eq!(
        rows[1][..6],
        [
            "\"Users(<begin>)\"",
            "60",
            "\"Users\"",
            "[\"UserId\"]",
            "NULL",
            "FALSE"
        ]
    );
    assert!(rows[1][6].contains("No schema rule"), "{rows:?}");
}
