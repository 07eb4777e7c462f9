//! SPANNER_SYS.SPLIT_STATS_TOP_*: hot splits from the database's load
//! history, keys in human terms. (A test cannot make a split really hot —
//! 30 CPU-seconds a minute — so the history is set directly.)

use rowtree_db::Database;
use rowtree_kv::{IntervalStat, LoadHistory, NodeId, SplitId, UnsplittableReason};
use rowtree_sql::{ExecuteResult, Params, Session};
use rowtree_types::Value;

const MINUTE: u64 = 60_000_000_000;
const END: u64 = 29_000_000 * MINUTE;

fn query(session: &mut Session, sql: &str) -> Vec<Vec<Value>> {
    match session.execute(sql, &Params::new()).unwrap() {
        ExecuteResult::Query(q) => q.rows,
        other => panic!("not a query: {other:?}"),
    }
}

fn stat(
    start: Vec<u8>,
    limit: Option<Vec<u8>>,
    score: f64,
    why: &[UnsplittableReason],
) -> IntervalStat {
    IntervalStat {
        interval_end: 0,
        split: SplitId(9),
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
        unsplittable: why.to_vec(),
        buckets: Default::default(),
    }
}

#[test]
fn hot_splits_are_listed_with_human_keys() {
    let db = Database::in_memory_with(rowtree_sql::database_options());
    let mut session = Session::new(db.clone());
    session
        .execute(
            "CREATE TABLE Users (Id INT64 NOT NULL) PRIMARY KEY (Id)",
            &Params::new(),
        )
        .unwrap();
    session
        .execute(
            "CREATE TABLE Events (Id INT64 NOT NULL, Seq INT64 NOT NULL) PRIMARY KEY (Id, Seq), \
             INTERLEAVE IN PARENT Users",
            &Params::new(),
        )
        .unwrap();
    let catalog = db.catalog();
    let key = |id: i64| {
        let k = rowtree_db::keys::write_keys(&catalog, "Users", &[Value::Int64(id)]).unwrap();
        rowtree_db::keys::Aligner::new(&catalog)
            .root_row(&k[0])
            .unwrap()
    };
    let child =
        rowtree_db::keys::write_keys(&catalog, "Events", &[Value::Int64(42), Value::Int64(7)])
            .unwrap()
            .remove(0);
    let child = rowtree_db::keys::Aligner::new(&catalog)
        .row(&child)
        .unwrap();
    let users_start = db
        .router()
        .split_map()
        .splits()
        .into_iter()
        .find(|s| rowtree_db::keys::describe(&catalog, &s.start) == "Users")
        .unwrap();

    let mut history = LoadHistory::new();
    history.add_minute(
        END,
        vec![
            stat(users_start.start.clone(), Some(key(42)), 30.0, &[]),
            stat(
                key(42),
                Some(child.clone()),
                100.0,
                &[UnsplittableReason::HotRow],
            ),
            stat(child, users_start.limit.clone(), 75.0, &[]),
        ],
    );
    db.split_manager().set_history(history);

    let rows = query(
        &mut session,
        "SELECT CAST(INTERVAL_END AS STRING), SPLIT_START, SPLIT_LIMIT, CPU_USAGE_SCORE, \
         AFFECTED_TABLES, UNSPLITTABLE_REASONS FROM SPANNER_SYS.SPLIT_STATS_TOP_MINUTE",
    );
    let text = |v: &Value| v.sql_literal();
    let rows: Vec<Vec<String>> = rows.iter().map(|r| r.iter().map(text).collect()).collect();
    // 1,740,000,000 s after the epoch, in the default time zone.
    let when = "\"2025-02-19 13:20:00-08\"";
    let tables = "[\"Events\", \"Users\"]";
    assert_eq!(
        rows,
        vec![
            vec![
                when.to_string(),
                "\"Users(42)\"".into(),
                "\"Users(42)/Events(7)\"".into(),
                "100".into(),
                tables.into(),
                "[\"HOT_ROW\"]".into(),
            ],
            vec![
                when.to_string(),
                "\"Users(42)/Events(7)\"".into(),
                // Users is the last object: its end is the key space's.
                "\"<end>\"".into(),
                "75".into(),
                tables.into(),
                "[]".into(),
            ],
        ],
        "the split under 50 is not listed; hottest first"
    );
    // The coarser tables have nothing yet (no 10-minute boundary closed).
    let n = query(
        &mut session,
        "SELECT COUNT(*) FROM SPANNER_SYS.SPLIT_STATS_TOP_HOUR",
    );
    assert_eq!(n, vec![vec![Value::Int64(0)]]);
}
