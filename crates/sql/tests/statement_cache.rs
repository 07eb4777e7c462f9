//! The statement cache (`rowtree_sql::cache`) and plan templates: a
//! repeated statement is parsed and bound once, gives the rows its
//! parameter values ask for, follows schema changes, keeps errors as they
//! were, and stays within its limits.

use rowtree_db::{Database, Dialect, TimestampBound};
use rowtree_sql::{
    database_options, execute_in, statement_cache, CacheLimits, ExecuteResult, Params, QueryMode,
    Session, TxnRef,
};
use rowtree_types::{Type, Value};

const POINT: &str = "SELECT UserId, Payload FROM Users WHERE UserId = @id";

fn database() -> Database {
    let db = Database::in_memory_with(database_options());
    let mut s = Session::new(db.clone());
    for ddl in [
        "CREATE TABLE Users (UserId INT64 NOT NULL, Payload STRING(MAX)) PRIMARY KEY (UserId)",
        "CREATE TABLE Posts (UserId INT64 NOT NULL, PostId INT64 NOT NULL, Body STRING(MAX)) \
         PRIMARY KEY (UserId, PostId), INTERLEAVE IN PARENT Users ON DELETE CASCADE",
    ] {
        s.execute(ddl, &Params::new()).expect(ddl);
    }
    for id in 0..20i64 {
        s.execute(
            "INSERT INTO Users (UserId, Payload) VALUES (@id, @p)",
            &Params::from([
                ("id".to_string(), (Type::Int64, Value::Int64(id))),
                (
                    "p".to_string(),
                    (Type::String, Value::String(format!("u{id}"))),
                ),
            ]),
        )
        .expect("insert user");
        s.execute(
            "INSERT INTO Posts (UserId, PostId, Body) VALUES (@id, 1, 'a'), (@id, 2, 'b')",
            &Params::from([("id".to_string(), (Type::Int64, Value::Int64(id)))]),
        )
        .expect("insert posts");
    }
    db
}

fn int(name: &str, v: i64) -> Params {
    Params::from([(name.to_string(), (Type::Int64, Value::Int64(v)))])
}

fn rows(s: &mut Session, sql: &str, params: &Params) -> Vec<Vec<Value>> {
    match s
        .execute(sql, params)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
    {
        ExecuteResult::Query(q) => q.rows,
        other => panic!("{sql}: {other:?}"),
    }
}

fn user(id: i64) -> Vec<Value> {
    vec![Value::Int64(id), Value::String(format!("u{id}"))]
}

#[test]
fn a_repeated_query_hits_and_reads_each_requests_rows() {
    let db = database();
    let mut s = Session::new(db.clone());
    let before = statement_cache(&db).stats();
    for id in [3, 7, 3, 19, 25] {
        let want: Vec<Vec<Value>> = if id < 20 { vec![user(id)] } else { vec![] };
        assert_eq!(rows(&mut s, POINT, &int("id", id)), want, "id {id}");
    }
    let after = statement_cache(&db).stats();
    assert_eq!(after.misses - before.misses, 1, "{after:?}");
    assert_eq!(after.hits - before.hits, 4, "{after:?}");
    // The second execution makes the template, the next three use it.
    assert_eq!(after.plan_hits - before.plan_hits, 3, "{after:?}");
}

#[test]
fn the_grpc_entry_point_shares_the_cache() {
    let db = database();
    let before = statement_cache(&db).stats();
    for id in [1, 2, 3, 4] {
        let mut ro = db.read_only(TimestampBound::Strong).expect("snapshot");
        let out = execute_in(
            TxnRef::ReadOnly(&mut ro),
            POINT,
            &int("id", id),
            QueryMode::Normal,
            None,
        )
        .expect("query");
        match out.result {
            ExecuteResult::Query(q) => assert_eq!(q.rows, vec![user(id)]),
            other => panic!("{other:?}"),
        }
    }
    let after = statement_cache(&db).stats();
    assert_eq!(after.plan_hits - before.plan_hits, 2, "{after:?}");
}

/// Every statement gives with the cache what it gives without it, over
/// values that change the plan's shape (NULLs, empty ranges, duplicates).
#[test]
fn results_and_errors_are_those_without_the_cache() {
    let cached_db = database();
    let plain_db = database();
    statement_cache(&plain_db).set_limits(CacheLimits {
        max_entries: 0,
        max_bytes: 0,
    });
    let mut cached = Session::new(cached_db.clone());
    let mut plain = Session::new(plain_db);
    let null_int = |name: &str| (name.to_string(), (Type::Int64, Value::Null));
    let statements: Vec<(&str, Vec<Params>)> =
        vec![
        (
            POINT,
            vec![
                int("id", 4),
                Params::from([null_int("id")]),
                int("id", 5),
                Params::from([("id".to_string(), (Type::String, Value::String("5".into())))]),
                Params::from([("id".to_string(), (Type::Float64, Value::Float64(5.5)))]),
                Params::from([("id".to_string(), (Type::Float64, Value::Float64(6.0)))]),
                Params::new(),
            ],
        ),
        (
            "SELECT UserId FROM Users WHERE UserId > @lo AND UserId <= @hi ORDER BY UserId DESC",
            vec![
                Params::from([
                    ("lo".to_string(), (Type::Int64, Value::Int64(3))),
                    ("hi".to_string(), (Type::Int64, Value::Int64(6))),
                ]),
                Params::from([
                    ("lo".to_string(), (Type::Int64, Value::Int64(9))),
                    ("hi".to_string(), (Type::Int64, Value::Int64(2))),
                ]),
                Params::from([
                    null_int("lo"),
                    ("hi".to_string(), (Type::Int64, Value::Int64(2))),
                ]),
            ],
        ),
        (
            "SELECT UserId FROM Users WHERE UserId BETWEEN @lo AND @hi LIMIT @n",
            vec![
                Params::from([
                    ("lo".to_string(), (Type::Int64, Value::Int64(3))),
                    ("hi".to_string(), (Type::Int64, Value::Int64(6))),
                    ("n".to_string(), (Type::Int64, Value::Int64(2))),
                ]),
                Params::from([
                    ("lo".to_string(), (Type::Int64, Value::Int64(1))),
                    ("hi".to_string(), (Type::Int64, Value::Int64(16))),
                    ("n".to_string(), (Type::Int64, Value::Int64(-1))),
                ]),
                Params::from([
                    ("lo".to_string(), (Type::Int64, Value::Int64(1))),
                    ("hi".to_string(), (Type::Int64, Value::Int64(16))),
                    null_int("n"),
                ]),
            ],
        ),
        (
            "SELECT UserId FROM Users WHERE UserId IN (@a, @b, 3) ORDER BY UserId",
            vec![
                Params::from([
                    ("a".to_string(), (Type::Int64, Value::Int64(8))),
                    ("b".to_string(), (Type::Int64, Value::Int64(1))),
                ]),
                Params::from([
                    ("a".to_string(), (Type::Int64, Value::Int64(3))),
                    ("b".to_string(), (Type::Int64, Value::Int64(3))),
                ]),
                Params::from([
                    null_int("a"),
                    ("b".to_string(), (Type::Int64, Value::Int64(4))),
                ]),
            ],
        ),
        (
            "SELECT u.UserId, p.PostId FROM Users u JOIN Posts p ON u.UserId = p.UserId \
             WHERE u.UserId = @id ORDER BY p.PostId",
            vec![int("id", 2), int("id", 11), Params::from([null_int("id")])],
        ),
        (
            "SELECT UserId, (SELECT COUNT(*) FROM Posts p WHERE p.UserId = @id) AS n \
             FROM Users WHERE UserId = @id + 1",
            vec![int("id", 2), int("id", 19), Params::from([null_int("id")])],
        ),
        (
            "SELECT UserId FROM Users WHERE UserId IN UNNEST(@ids) AND Payload != @p",
            vec![
                Params::from([
                    (
                        "ids".to_string(),
                        (
                            Type::Array(Box::new(Type::Int64)),
                            Value::Array(vec![Value::Int64(2), Value::Int64(9)]),
                        ),
                    ),
                    ("p".to_string(), (Type::String, Value::String("u2".into()))),
                ]),
                Params::from([
                    (
                        "ids".to_string(),
                        (
                            Type::Array(Box::new(Type::Int64)),
                            Value::Array(vec![Value::Int64(4)]),
                        ),
                    ),
                    ("p".to_string(), (Type::String, Value::String("u2".into()))),
                ]),
            ],
        ),
        ("SELECT nope FROM Users WHERE UserId = @id", vec![int("id", 1), int("id", 2)]),
        ("SELEC 1", vec![Params::new(), Params::new()]),
    ];
    for (sql, values) in &statements {
        // Twice round, so the second pass runs from the cache throughout.
        for round in 0..2 {
            for params in values {
                let a = cached.execute(sql, params).map(|r| match r {
                    ExecuteResult::Query(q) => (q.columns, q.rows),
                    other => panic!("{other:?}"),
                });
                let b = plain.execute(sql, params).map(|r| match r {
                    ExecuteResult::Query(q) => (q.columns, q.rows),
                    other => panic!("{other:?}"),
                });
                assert_eq!(a, b, "{sql} with {params:?} (round {round})");
            }
        }
    }
    let stats = statement_cache(&cached_db).stats();
    assert!(stats.plan_hits > 10, "{stats:?}");
}

#[test]
fn schema_changes_invalidate() {
    let db = database();
    let mut s = Session::new(db.clone());
    let sql = "SELECT * FROM Users WHERE UserId = @id";
    assert_eq!(rows(&mut s, sql, &int("id", 1)), vec![user(1)]);
    assert_eq!(rows(&mut s, sql, &int("id", 2)), vec![user(2)]);
    let before = statement_cache(&db).stats();
    s.execute("ALTER TABLE Users ADD COLUMN Extra INT64", &Params::new())
        .expect("add column");
    let mut want = user(1);
    want.push(Value::Null);
    assert_eq!(rows(&mut s, sql, &int("id", 1)), vec![want]);
    let after = statement_cache(&db).stats();
    assert_eq!(after.invalidations - before.invalidations, 1, "{after:?}");
    // The ALTER (parsed, never cached) and the query, parsed again.
    assert_eq!(after.misses - before.misses, 2, "{after:?}");
    assert_eq!(after.hits, before.hits, "{after:?}");

    s.execute("ALTER TABLE Users DROP COLUMN Extra", &Params::new())
        .expect("drop column");
    assert_eq!(rows(&mut s, sql, &int("id", 1)), vec![user(1)]);

    // A new index is used by the next execution of the same text.
    let by_payload = "SELECT UserId FROM Users WHERE Payload = @p";
    let p = Params::from([("p".to_string(), (Type::String, Value::String("u4".into())))]);
    let explain = |s: &mut Session| -> String {
        rows(s, &format!("EXPLAIN {by_payload}"), &p)
            .into_iter()
            .map(|r| format!("{:?}", r[0]))
            .collect()
    };
    assert_eq!(rows(&mut s, by_payload, &p), vec![vec![Value::Int64(4)]]);
    assert!(!explain(&mut s).contains("UsersByPayload"));
    s.execute(
        "CREATE INDEX UsersByPayload ON Users(Payload)",
        &Params::new(),
    )
    .expect("create index");
    assert_eq!(rows(&mut s, by_payload, &p), vec![vec![Value::Int64(4)]]);
    assert!(explain(&mut s).contains("UsersByPayload"));
    s.execute("DROP INDEX UsersByPayload", &Params::new())
        .expect("drop index");
    assert_eq!(rows(&mut s, by_payload, &p), vec![vec![Value::Int64(4)]]);

    // Dropping the table: the cached statement now fails as a new one would.
    s.execute("DROP TABLE Posts", &Params::new())
        .expect("drop Posts");
    let posts = "SELECT PostId FROM Posts WHERE UserId = @id";
    assert!(s.execute(posts, &int("id", 1)).is_err());
}

#[test]
fn the_cache_stays_within_its_limits() {
    let db = database();
    let cache = statement_cache(&db);
    cache.set_limits(CacheLimits {
        max_entries: 10,
        max_bytes: 1 << 20,
    });
    let mut s = Session::new(db.clone());
    for i in 0..200 {
        let sql = format!("SELECT UserId FROM Users WHERE UserId = @id AND {i} = {i}");
        assert_eq!(
            rows(&mut s, &sql, &int("id", 3)),
            vec![vec![Value::Int64(3)]]
        );
        let stats = cache.stats();
        assert!(stats.entries <= 10, "{stats:?}");
    }
    let stats = cache.stats();
    assert!(stats.evictions >= 190, "{stats:?}");
    // The most recently used statements stay.
    let before = cache.stats().hits;
    rows(
        &mut s,
        "SELECT UserId FROM Users WHERE UserId = @id AND 199 = 199",
        &int("id", 3),
    );
    assert_eq!(cache.stats().hits, before + 1);

    // The byte bound: long statements fill it before the entry bound.
    cache.set_limits(CacheLimits {
        max_entries: 1000,
        max_bytes: 200_000,
    });
    let pad = "x".repeat(500);
    for i in 0..100 {
        let sql = format!("SELECT UserId FROM Users WHERE UserId = @id AND '{pad}{i}' != ''");
        rows(&mut s, &sql, &int("id", 3));
        assert!(cache.stats().bytes <= 200_000, "{:?}", cache.stats());
    }
    assert!(cache.stats().entries < 100, "{:?}", cache.stats());

    // Off.
    cache.set_limits(CacheLimits {
        max_entries: 0,
        max_bytes: 0,
    });
    assert_eq!(cache.stats().entries, 0);
    rows(&mut s, POINT, &int("id", 3));
    assert_eq!(cache.stats().entries, 0);
}

#[test]
fn postgresql_statements_are_cached_under_their_dialect() {
    let db = Database::in_memory_with(rowtree_db::Options {
        dialect: Dialect::PostgreSql,
        ..database_options()
    });
    let mut s = Session::new(db.clone());
    s.execute(
        "CREATE TABLE users (user_id bigint PRIMARY KEY, payload varchar)",
        &Params::new(),
    )
    .expect("create");
    for id in 0..5i64 {
        s.execute(
            "INSERT INTO users (user_id, payload) VALUES ($1, 'x')",
            &int("p1", id),
        )
        .expect("insert");
    }
    let before = statement_cache(&db).stats();
    for id in 0..5i64 {
        assert_eq!(
            rows(
                &mut s,
                "SELECT user_id FROM users WHERE user_id = $1",
                &int("p1", id)
            ),
            vec![vec![Value::Int64(id)]]
        );
    }
    let after = statement_cache(&db).stats();
    assert_eq!(after.plan_hits - before.plan_hits, 3, "{after:?}");
}
