//! Plan tests: for representative queries, the chosen key ranges, index,
//! direction, limit and join method, asserted on `EXPLAIN` text, plus the
//! results and rows-read counters that show the plan paid off.

use rowtree_db::Database;
use rowtree_sql::{ExecuteResult, Params, QueryResult, Session};
use rowtree_types::{Type, Value};

fn session() -> Session {
    let db = Database::in_memory();
    let mut s = Session::new(db);
    for ddl in [
        "CREATE TABLE Users (UserId INT64 NOT NULL, Name STRING(MAX), Email STRING(MAX), Age INT64) PRIMARY KEY (UserId)",
        "CREATE TABLE Events (UserId INT64 NOT NULL, Ts INT64 NOT NULL, Kind STRING(MAX)) PRIMARY KEY (UserId, Ts DESC), INTERLEAVE IN PARENT Users ON DELETE CASCADE",
        "CREATE INDEX UsersByName ON Users (Name) STORING (Email)",
        "CREATE NULL_FILTERED INDEX UsersByAge ON Users (Age)",
        "CREATE TABLE Orders (OrderId INT64 NOT NULL, UserId INT64, Total FLOAT64) PRIMARY KEY (OrderId)",
    ] {
        run(&mut s, ddl);
    }
    run(&mut s, "INSERT INTO Users (UserId, Name, Email, Age) VALUES (1, 'ann', 'a@x', 30), (2, 'bob', 'b@x', NULL), (3, 'cy', NULL, 41)");
    let mut values = Vec::new();
    for u in 1..=3 {
        for t in 1..=if u == 2 { 300 } else { 50 } {
            values.push(format!("({u}, {t}, 'k{}')", t % 3));
        }
    }
    insert_rows(
        &mut s,
        "INSERT INTO Events (UserId, Ts, Kind) VALUES",
        &values,
    );
    run(&mut s, "INSERT INTO Orders (OrderId, UserId, Total) VALUES (10, 1, 5.0), (11, 1, 7.5), (12, 3, 1.0), (13, NULL, 2.0)");
    s
}

fn run(s: &mut Session, sql: &str) -> ExecuteResult {
    s.execute(sql, &Params::new())
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

fn query(s: &mut Session, sql: &str) -> QueryResult {
    match run(s, sql) {
        ExecuteResult::Query(q) => q,
        other => panic!("{sql}: not a query result: {other:?}"),
    }
}

/// Runs `insert` (an `INSERT ... VALUES` without its rows) with `rows`,
/// each a parenthesized row literal.
fn insert_rows(s: &mut Session, insert: &str, rows: &[String]) {
    run(s, &format!("{insert} {}", rows.join(", ")));
}

fn explain(s: &mut Session, sql: &str) -> String {
    plan_text(&query(s, &format!("EXPLAIN {sql}")))
}

/// An `EXPLAIN` result's lines, joined.
fn plan_text(q: &QueryResult) -> String {
    q.rows
        .iter()
        .map(|r| match &r[0] {
            Value::String(l) => l.clone(),
            other => panic!("{other:?}"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn ints(q: &QueryResult) -> Vec<Vec<i64>> {
    q.rows
        .iter()
        .map(|r| {
            r.iter()
                .map(|v| match v {
                    Value::Int64(i) => *i,
                    Value::Null => -1,
                    other => panic!("{other:?}"),
                })
                .collect()
        })
        .collect()
}

#[test]
fn point_lookup_by_primary_key() {
    let mut s = session();
    let plan = explain(&mut s, "SELECT Name FROM Users WHERE UserId = 2");
    assert!(plan.contains("TableScan Users: key (2)"), "{plan}");
    assert!(!plan.contains("Filter"), "{plan}");
    let q = query(&mut s, "SELECT Name FROM Users WHERE UserId = 2");
    assert_eq!(q.rows, vec![vec![Value::String("bob".into())]]);
}

#[test]
fn in_list_becomes_point_lookups() {
    let mut s = session();
    let plan = explain(&mut s, "SELECT UserId FROM Users WHERE UserId IN (3, 1, 9)");
    assert!(plan.contains("key (1), key (3), key (9)"), "{plan}");
    let q = query(
        &mut s,
        "SELECT UserId FROM Users WHERE UserId IN (3, 1, 9) ORDER BY UserId",
    );
    assert_eq!(ints(&q), vec![vec![1], vec![3]]);
}

#[test]
fn latest_events_read_in_key_order_with_early_limit() {
    let mut s = session();
    let sql = "SELECT Ts FROM Events WHERE UserId = 2 ORDER BY Ts DESC LIMIT 10";
    let plan = explain(&mut s, sql);
    assert!(
        plan.contains("TableScan Events: prefix (2), limit 10"),
        "{plan}"
    );
    assert!(!plan.contains("Sort"), "{plan}");
    let q = query(&mut s, sql);
    assert_eq!(
        ints(&q),
        (291..=300).rev().map(|t| vec![t]).collect::<Vec<_>>()
    );
    // The scan stops early: it reads (at most) its first chunk, not all 301 keys of the row tree.
    assert!(
        q.stats.rows_scanned < 100,
        "read {} rows",
        q.stats.rows_scanned
    );
    // Ascending order on a DESC key: the scan runs backwards.
    let sql = "SELECT Ts FROM Events WHERE UserId = 2 ORDER BY Ts LIMIT 3";
    let plan = explain(&mut s, sql);
    assert!(plan.contains("reverse, limit 3"), "{plan}");
    assert_eq!(ints(&query(&mut s, sql)), vec![vec![1], vec![2], vec![3]]);
}

#[test]
fn range_on_desc_key_column() {
    let mut s = session();
    let sql = "SELECT Ts FROM Events WHERE UserId = 1 AND Ts > 45 AND Ts <= 48";
    let plan = explain(&mut s, sql);
    assert!(plan.contains("range [(1, 48) .. (1, 45))"), "{plan}");
    assert_eq!(
        ints(&query(&mut s, sql)),
        vec![vec![48], vec![47], vec![46]]
    );
}

#[test]
fn covering_index_and_back_join() {
    let mut s = session();
    let plan = explain(&mut s, "SELECT Email FROM Users WHERE Name = 'ann'");
    assert!(
        plan.contains("IndexScan Users@UsersByName (covering): prefix (\"ann\")"),
        "{plan}"
    );
    let plan = explain(&mut s, "SELECT Age FROM Users WHERE Name = 'cy'");
    assert!(plan.contains("back join"), "{plan}");
    let q = query(&mut s, "SELECT Age FROM Users WHERE Name = 'cy'");
    assert_eq!(ints(&q), vec![vec![41]]);
}

#[test]
fn null_filtered_index_only_when_nulls_excluded() {
    let mut s = session();
    let plan = explain(&mut s, "SELECT UserId FROM Users WHERE Age > 35");
    assert!(plan.contains("UsersByAge"), "{plan}");
    let plan = explain(&mut s, "SELECT UserId FROM Users WHERE Age IS NULL");
    assert!(plan.contains("TableScan Users"), "{plan}");
    assert_eq!(
        ints(&query(&mut s, "SELECT UserId FROM Users WHERE Age IS NULL")),
        vec![vec![2]]
    );
}

#[test]
fn force_index_hints() {
    let mut s = session();
    let plan = explain(&mut s, "SELECT Name FROM Users@{FORCE_INDEX=UsersByName}");
    assert!(
        plan.contains("IndexScan Users@UsersByName (covering): full scan"),
        "{plan}"
    );
    let plan = explain(
        &mut s,
        "SELECT Email FROM Users@{FORCE_INDEX=_BASE_TABLE} WHERE Name = 'ann'",
    );
    assert!(
        plan.contains("TableScan Users: full scan, filter: Name = 'ann'"),
        "{plan}"
    );
    let err = s
        .execute("SELECT 1 FROM Users@{FORCE_INDEX=Nope}", &Params::new())
        .unwrap_err();
    assert_eq!(err.code, "INVALID_ARGUMENT");
}

#[test]
fn interleaved_join_merges_row_trees() {
    let mut s = session();
    let sql = "SELECT u.Name, e.Ts FROM Users u JOIN Events e ON e.UserId = u.UserId WHERE u.UserId = 3 ORDER BY e.Ts LIMIT 2";
    let plan = explain(&mut s, sql);
    assert!(
        plan.contains("InterleavedMergeJoin INNER (one scan of each row tree)"),
        "{plan}"
    );
    assert!(plan.contains("TreeScan Users+Events: key (3)"), "{plan}");
    assert!(!plan.contains("TableScan"), "{plan}");
    let q = query(&mut s, sql);
    assert_eq!(q.rows.len(), 2);
    assert_eq!(q.rows[0][1], Value::Int64(1));
}

#[test]
fn hash_join_for_root_tables() {
    let mut s = session();
    let sql = "SELECT u.Name, o.Total FROM Users u JOIN Orders o ON o.UserId = u.UserId ORDER BY o.OrderId";
    let plan = explain(&mut s, sql);
    assert!(plan.contains("HashJoin INNER"), "{plan}");
    let q = query(&mut s, sql);
    assert_eq!(q.rows.len(), 3);
    let plan = explain(
        &mut s,
        "SELECT 1 FROM Users u JOIN@{JOIN_METHOD=APPLY_JOIN} Orders o ON o.UserId = u.UserId",
    );
    assert!(plan.contains("NestedLoopJoin INNER"), "{plan}");
}

/// (UserId, Ts) pairs of a query returning them (NULL as -1).
fn pairs(s: &mut Session, sql: &str) -> (Vec<Vec<i64>>, u64) {
    let q = query(s, sql);
    (ints(&q), q.stats.rows_scanned)
}

#[test]
fn interleaved_join_reads_each_row_tree_once() {
    let mut s = session();
    // User 2 has N = 300 events: the join reads its row tree's N + 1 keys once.
    let sql = "SELECT u.UserId, e.Ts FROM Users u JOIN Events e ON e.UserId = u.UserId WHERE u.UserId = 2";
    let plan = explain(&mut s, sql);
    assert!(
        plan.contains("InterleavedMergeJoin INNER (one scan of each row tree)"),
        "{plan}"
    );
    assert!(plan.contains("TreeScan Users+Events: key (2)"), "{plan}");
    let (rows, scanned) = pairs(&mut s, sql);
    assert_eq!(
        rows,
        (1..=300).rev().map(|t| vec![2, t]).collect::<Vec<_>>()
    );
    assert_eq!(scanned, 300 + 1);
    // EXPLAIN ANALYZE shows the same count on the tree scan and in the totals.
    let analyzed = explain(&mut s, &format!("ANALYZE {sql}"));
    assert!(
        analyzed.contains("[rows=301 scanned=301 splits=1]"),
        "{analyzed}"
    );
    assert!(analyzed.contains("rows scanned: 301"), "{analyzed}");
    // The whole table: every key of Users' row trees once (3 users, 400
    // events), where two scans read each tree twice.
    let sql = "SELECT u.UserId, e.Ts FROM Users u JOIN Events e ON e.UserId = u.UserId";
    assert!(explain(&mut s, sql).contains("TreeScan Users+Events: full scan"));
    let (rows, scanned) = pairs(&mut s, sql);
    assert_eq!(rows.len(), 400);
    assert_eq!(scanned, 403);
    // The same data joined by hash reads every tree twice.
    let hash = "SELECT u.UserId, e.Ts FROM Users u JOIN@{JOIN_METHOD=HASH_JOIN} Events e ON e.UserId = u.UserId";
    assert!(explain(&mut s, hash).contains("HashJoin INNER"));
    let (mut hashed, hash_scanned) = pairs(&mut s, hash);
    assert_eq!(hash_scanned, 2 * 403);
    let mut merged = rows;
    merged.sort();
    hashed.sort();
    assert_eq!(merged, hashed);
}

#[test]
fn interleaved_left_join_keeps_childless_parents() {
    let mut s = session();
    run(
        &mut s,
        "INSERT INTO Users (UserId, Name) VALUES (4, 'dee'), (5, 'eve')",
    );
    let sql = "SELECT u.UserId, e.Ts FROM Users u LEFT JOIN Events e ON e.UserId = u.UserId AND e.Ts > 48 WHERE u.UserId IN (1, 3, 4)";
    let plan = explain(&mut s, sql);
    assert!(
        plan.contains("InterleavedMergeJoin LEFT (one scan of each row tree)"),
        "{plan}"
    );
    assert!(
        plan.contains("TreeScan Users+Events: key (1), key (3), key (4)"),
        "{plan}"
    );
    let (rows, scanned) = pairs(&mut s, sql);
    assert_eq!(
        rows,
        vec![
            vec![1, 50],
            vec![1, 49],
            vec![3, 50],
            vec![3, 49],
            vec![4, -1]
        ]
    );
    assert_eq!(scanned, 51 + 51 + 1);
    // Every user: those without events (4, 5) come out once with NULLs.
    let sql =
        "SELECT u.UserId, e.Ts FROM Users u LEFT JOIN Events e ON e.UserId = u.UserId AND e.Ts = 7";
    let (rows, scanned) = pairs(&mut s, sql);
    assert_eq!(
        rows,
        vec![vec![1, 7], vec![2, 7], vec![3, 7], vec![4, -1], vec![5, -1]]
    );
    assert_eq!(scanned, 5 + 400);
}

#[test]
fn interleaved_join_filters_on_both_sides() {
    let mut s = session();
    // Email is NULL for user 3; Kind 'k0' is every third event.
    let sql = "SELECT u.UserId, e.Ts FROM Users u JOIN Events e ON e.UserId = u.UserId WHERE u.Email IS NOT NULL AND e.Kind = 'k0' AND e.Ts < 10";
    let plan = explain(&mut s, sql);
    assert!(plan.contains("TreeScan Users+Events: full scan"), "{plan}");
    assert!(plan.contains("Users filter: "), "{plan}");
    assert!(
        plan.contains("Events filter: e.Kind = 'k0' AND e.Ts < 10"),
        "{plan}"
    );
    let (rows, scanned) = pairs(&mut s, sql);
    assert_eq!(
        rows,
        vec![
            vec![1, 9],
            vec![1, 6],
            vec![1, 3],
            vec![2, 9],
            vec![2, 6],
            vec![2, 3]
        ]
    );
    assert_eq!(scanned, 403);
    // A LEFT join whose parent filter drops a parent drops its children too.
    let sql = "SELECT u.UserId, e.Ts FROM Users u LEFT JOIN Events e ON e.UserId = u.UserId AND e.Ts = 1 WHERE u.Name != 'bob'";
    let (rows, _) = pairs(&mut s, sql);
    assert_eq!(rows, vec![vec![1, 1], vec![3, 1]]);
}

#[test]
fn interleaved_join_over_several_parents() {
    let mut s = session();
    let sql = "SELECT u.UserId, e.Ts FROM Users u JOIN Events e ON e.UserId = u.UserId WHERE u.UserId IN (3, 1) AND e.Kind = 'k2'";
    let plan = explain(&mut s, sql);
    assert!(
        plan.contains("TreeScan Users+Events: key (1), key (3), Events filter: e.Kind = 'k2'"),
        "{plan}"
    );
    let (rows, scanned) = pairs(&mut s, sql);
    let want: Vec<Vec<i64>> = [1, 3]
        .into_iter()
        .flat_map(|u| {
            (1..=50)
                .rev()
                .filter(|t| t % 3 == 2)
                .map(move |t| vec![u, t])
        })
        .collect();
    assert_eq!(rows, want);
    assert_eq!(scanned, 2 * (50 + 1));
    // A range of parents reads their trees, and only theirs.
    let sql =
        "SELECT COUNT(*) FROM Users u JOIN Events e ON e.UserId = u.UserId WHERE u.UserId >= 2";
    let (rows, scanned) = pairs(&mut s, sql);
    assert_eq!(rows, vec![vec![350]]);
    assert_eq!(scanned, 301 + 51);
}

#[test]
fn interleaved_join_skips_sibling_tables_in_the_tree() {
    let mut s = session();
    for ddl in [
        "CREATE TABLE Notes (UserId INT64 NOT NULL, NoteId INT64 NOT NULL, Body STRING(MAX)) PRIMARY KEY (UserId, NoteId), INTERLEAVE IN PARENT Users ON DELETE CASCADE",
        "CREATE TABLE Drafts (UserId INT64 NOT NULL, DraftId INT64 NOT NULL) PRIMARY KEY (UserId, DraftId), INTERLEAVE IN Users",
    ] {
        run(&mut s, ddl);
    }
    run(
        &mut s,
        "INSERT INTO Notes (UserId, NoteId, Body) VALUES (3, 1, 'x'), (3, 2, 'y'), (1, 1, 'z')",
    );
    // Drafts may exist without their parent row (INTERLEAVE IN): user 9.
    run(
        &mut s,
        "INSERT INTO Drafts (UserId, DraftId) VALUES (1, 1), (9, 1), (9, 2)",
    );
    let sql = "SELECT u.UserId, e.Ts FROM Users u JOIN Events e ON e.UserId = u.UserId WHERE u.UserId = 3";
    let (rows, scanned) = pairs(&mut s, sql);
    assert_eq!(rows.len(), 50);
    assert!(rows.iter().all(|r| r[0] == 3));
    // User 3's tree: the user, 50 events and 2 notes, each read once.
    assert_eq!(scanned, 1 + 50 + 2);
    // Joining the sibling instead skips the events.
    let sql = "SELECT u.UserId, n.NoteId FROM Users u JOIN Notes n ON n.UserId = u.UserId";
    assert!(explain(&mut s, sql).contains("TreeScan Users+Notes: full scan"));
    let (rows, scanned) = pairs(&mut s, sql);
    assert_eq!(rows, vec![vec![1, 1], vec![3, 1], vec![3, 2]]);
    assert_eq!(scanned, 3 + 400 + 3 + 3);
    // Orphan drafts of the missing user 9 match no parent, even in a LEFT join.
    let sql = "SELECT u.UserId, d.DraftId FROM Users u LEFT JOIN Drafts d ON d.UserId = u.UserId";
    assert!(explain(&mut s, sql).contains("TreeScan Users+Drafts: full scan"));
    let (rows, _) = pairs(&mut s, sql);
    assert_eq!(rows, vec![vec![1, 1], vec![2, -1], vec![3, -1]]);
}

#[test]
fn interleaved_join_keeps_two_scans_when_the_child_range_is_narrower() {
    let mut s = session();
    // The child's key range bounds Ts inside one row tree: two scans read
    // fewer keys than the whole tree.
    let sql = "SELECT u.UserId, e.Ts FROM Users u JOIN Events e ON e.UserId = u.UserId WHERE u.UserId = 2 AND e.Ts > 295";
    let plan = explain(&mut s, sql);
    assert!(plan.contains("InterleavedMergeJoin INNER"), "{plan}");
    assert!(!plan.contains("TreeScan"), "{plan}");
    assert!(plan.contains("TableScan Users: key (2)"), "{plan}");
    let (rows, scanned) = pairs(&mut s, sql);
    assert_eq!(
        rows,
        vec![
            vec![2, 300],
            vec![2, 299],
            vec![2, 298],
            vec![2, 297],
            vec![2, 296]
        ]
    );
    assert!(scanned < 20, "read {scanned} keys");
}

#[test]
fn interleaved_join_sees_the_transactions_own_writes() {
    let mut s = session();
    run(&mut s, "BEGIN");
    run(
        &mut s,
        "INSERT INTO Events (UserId, Ts, Kind) VALUES (3, 51, 'new')",
    );
    run(&mut s, "DELETE FROM Events WHERE UserId = 3 AND Ts < 50");
    let sql = "SELECT u.UserId, e.Ts FROM Users u JOIN Events e ON e.UserId = u.UserId WHERE u.UserId = 3";
    let (rows, _) = pairs(&mut s, sql);
    assert_eq!(rows, vec![vec![3, 51], vec![3, 50]]);
    run(&mut s, "ROLLBACK");
}

#[test]
fn interleaved_join_with_the_parent_chosen_through_an_index() {
    let mut s = session();
    // Index order ('cy', 'zed') is not key order (3, 1): a merge of two
    // scans would lose user 1; the tree scan reads the trees in key order.
    run(&mut s, "UPDATE Users SET Name = 'zed' WHERE UserId = 1");
    let sql = "SELECT u.UserId, e.Ts FROM Users u JOIN Events e ON e.UserId = u.UserId WHERE u.Name >= 'c' AND e.Ts = 5";
    let plan = explain(&mut s, sql);
    assert!(
        plan.contains("TreeScan Users+Events: full scan, Users filter: u.Name >= 'c', Events filter: e.Ts = 5"),
        "{plan}"
    );
    let (rows, scanned) = pairs(&mut s, sql);
    assert_eq!(rows, vec![vec![1, 5], vec![3, 5]]);
    assert_eq!(scanned, 403);
}

#[test]
fn interleaved_join_with_a_grandchild() {
    let mut s = session();
    run(&mut s, "CREATE TABLE Marks (UserId INT64 NOT NULL, Ts INT64 NOT NULL, Mark STRING(MAX) NOT NULL) PRIMARY KEY (UserId, Ts DESC, Mark), INTERLEAVE IN PARENT Events ON DELETE CASCADE");
    run(
        &mut s,
        "INSERT INTO Marks (UserId, Ts, Mark) VALUES (1, 2, 'a'), (1, 2, 'b'), (3, 9, 'c')",
    );
    let sql = "SELECT u.UserId, m.Ts FROM Users u LEFT JOIN Marks m ON m.UserId = u.UserId";
    let plan = explain(&mut s, sql);
    assert!(plan.contains("TreeScan Users+Marks: full scan"), "{plan}");
    let (rows, scanned) = pairs(&mut s, sql);
    assert_eq!(rows, vec![vec![1, 2], vec![1, 2], vec![2, -1], vec![3, 9]]);
    // The events between the users and their marks are read once and skipped.
    assert_eq!(scanned, 403 + 3);
}

/// The session with two root tables keyed like the SQL benchmark's
/// `RSingers` / `RAlbums` (20 singers, 50 albums each; singer 21 has none)
/// and `RSongs` (3 songs on albums 1 and 2 of each of the 20 singers).
fn root_tables() -> Session {
    let mut s = session();
    for ddl in [
        "CREATE TABLE RSingers (SingerId INT64 NOT NULL, Name STRING(MAX)) PRIMARY KEY (SingerId)",
        "CREATE TABLE RAlbums (SingerId INT64 NOT NULL, AlbumId INT64 NOT NULL, Title STRING(MAX)) PRIMARY KEY (SingerId, AlbumId)",
        "CREATE TABLE RSongs (SingerId INT64 NOT NULL, AlbumId INT64 NOT NULL, TrackId INT64 NOT NULL) PRIMARY KEY (SingerId, AlbumId, TrackId)",
    ] {
        run(&mut s, ddl);
    }
    let singers: Vec<String> = (1..=21).map(|i| format!("({i}, 's{i}')")).collect();
    insert_rows(
        &mut s,
        "INSERT INTO RSingers (SingerId, Name) VALUES",
        &singers,
    );
    let mut albums = Vec::new();
    let mut songs = Vec::new();
    for i in 1..=20 {
        for a in 1..=50 {
            albums.push(format!("({i}, {a}, 't{i}.{a}')"));
        }
        for a in 1..=2 {
            for t in 1..=3 {
                songs.push(format!("({i}, {a}, {t})"));
            }
        }
    }
    insert_rows(
        &mut s,
        "INSERT INTO RAlbums (SingerId, AlbumId, Title) VALUES",
        &albums,
    );
    insert_rows(
        &mut s,
        "INSERT INTO RSongs (SingerId, AlbumId, TrackId) VALUES",
        &songs,
    );
    s
}

fn with_id(s: &mut Session, sql: &str, id: i64) -> QueryResult {
    let params = Params::from([("id".to_string(), (Type::Int64, Value::Int64(id)))]);
    match s.execute(sql, &params) {
        Ok(ExecuteResult::Query(q)) => q,
        other => panic!("{sql}: {other:?}"),
    }
}

fn explain_with_id(s: &mut Session, sql: &str, id: i64) -> String {
    plan_text(&with_id(s, &format!("EXPLAIN {sql}"), id))
}

#[test]
fn join_transfers_a_key_bound_across_root_tables() {
    let mut s = root_tables();
    // The benchmark's query: `s.SingerId = @id` holds for `a.SingerId` too,
    // so RAlbums reads one key prefix instead of the whole table (1,000
    // rows, which it read before the transfer).
    for sql in [
        "SELECT s.Name, a.Title FROM RSingers s JOIN RAlbums a ON a.SingerId = s.SingerId WHERE s.SingerId = @id",
        "SELECT s.Name, a.Title FROM RSingers s JOIN@{JOIN_METHOD=HASH_JOIN} RAlbums a ON a.SingerId = s.SingerId WHERE s.SingerId = @id",
        "SELECT s.Name, a.Title FROM RSingers s JOIN RAlbums a ON s.SingerId = a.SingerId WHERE @id = s.SingerId",
        "SELECT s.Name, a.Title FROM RSingers s JOIN RAlbums a USING (SingerId) WHERE s.SingerId = @id",
        // The other way round: a bound on the album's column keys the singer.
        "SELECT s.Name, a.Title FROM RSingers s JOIN RAlbums a ON a.SingerId = s.SingerId WHERE a.SingerId = @id",
        // Both given: each scan keeps one copy.
        "SELECT s.Name, a.Title FROM RSingers s JOIN RAlbums a ON a.SingerId = s.SingerId WHERE s.SingerId = @id AND a.SingerId = @id",
    ] {
        let plan = explain_with_id(&mut s, sql, 7);
        assert!(plan.contains("HashJoin INNER"), "{sql}\n{plan}");
        assert!(plan.contains("TableScan RSingers: key (7)"), "{sql}\n{plan}");
        assert!(plan.contains("TableScan RAlbums: prefix (7)"), "{sql}\n{plan}");
        assert!(!plan.contains("full scan"), "{sql}\n{plan}");
        assert!(!plan.contains("filter"), "{sql}\n{plan}");
        let q = with_id(&mut s, sql, 7);
        assert_eq!(q.rows.len(), 50, "{sql}");
        assert!(q
            .rows
            .iter()
            .all(|r| r[0] == Value::String("s7".into())));
        assert_eq!(q.stats.rows_scanned, 1 + 50, "{sql}");
    }
    // IN lists and ranges carry over too.
    let sql = "SELECT a.SingerId, a.AlbumId FROM RSingers s JOIN RAlbums a ON a.SingerId = s.SingerId WHERE s.SingerId IN (9, 3)";
    let plan = explain(&mut s, sql);
    assert!(
        plan.contains("TableScan RAlbums: prefix (3), prefix (9)"),
        "{plan}"
    );
    let (rows, scanned) = pairs(&mut s, sql);
    assert_eq!(rows.len(), 100);
    assert_eq!(scanned, 2 + 100);
    let sql = "SELECT COUNT(*) FROM RSingers s JOIN RAlbums a ON a.SingerId = s.SingerId WHERE s.SingerId > 18";
    let plan = explain(&mut s, sql);
    assert!(!plan.contains("full scan"), "{plan}");
    let (rows, scanned) = pairs(&mut s, sql);
    assert_eq!(rows, vec![vec![100]]);
    assert_eq!(scanned, 3 + 100);
    // No equality of plain columns, no transfer (the plan reads everything).
    let sql = "SELECT COUNT(*) FROM RSingers s JOIN RAlbums a ON a.SingerId + 0 = s.SingerId WHERE s.SingerId = 7";
    assert!(explain(&mut s, sql).contains("TableScan RAlbums: full scan"));
    let (rows, scanned) = pairs(&mut s, sql);
    assert_eq!(rows, vec![vec![50]]);
    assert_eq!(scanned, 1 + 1000);
}

#[test]
fn left_join_transfers_only_to_the_null_supplying_side() {
    let mut s = root_tables();
    // A bound on the preserved side keys the NULL-supplying side; singer 21
    // (no albums) still comes out, with NULLs.
    let sql = "SELECT s.SingerId, a.AlbumId FROM RSingers s LEFT JOIN RAlbums a ON a.SingerId = s.SingerId WHERE s.SingerId IN (21, 7)";
    let plan = explain(&mut s, sql);
    assert!(plan.contains("HashJoin LEFT"), "{plan}");
    assert!(
        plan.contains("TableScan RSingers: key (7), key (21)"),
        "{plan}"
    );
    assert!(
        plan.contains("TableScan RAlbums: prefix (7), prefix (21)"),
        "{plan}"
    );
    let (mut rows, scanned) = pairs(&mut s, sql);
    rows.sort();
    let mut want: Vec<Vec<i64>> = (1..=50).map(|a| vec![7, a]).collect();
    want.push(vec![21, -1]);
    assert_eq!(rows, want);
    assert_eq!(scanned, 2 + 50);
    // The same through RIGHT JOIN (the preserved side on the right).
    let sql = "SELECT s.SingerId, a.AlbumId FROM RAlbums a RIGHT JOIN RSingers s ON a.SingerId = s.SingerId WHERE s.SingerId = 21";
    let plan = explain(&mut s, sql);
    assert!(plan.contains("TableScan RAlbums: prefix (21)"), "{plan}");
    let (rows, scanned) = pairs(&mut s, sql);
    assert_eq!(rows, vec![vec![21, -1]]);
    assert_eq!(scanned, 1);
    // An anti-join: the bound on the preserved side stays right.
    let sql = "SELECT s.SingerId FROM RSingers s LEFT JOIN RAlbums a ON a.SingerId = s.SingerId WHERE s.SingerId >= 20 AND a.SingerId IS NULL";
    let (rows, _) = pairs(&mut s, sql);
    assert_eq!(rows, vec![vec![21]]);
    // A bound on the NULL-supplying side (in ON, or in WHERE) is not copied
    // to the preserved side: every singer still comes out of the ON case.
    let sql = "SELECT s.SingerId, a.AlbumId FROM RSingers s LEFT JOIN RAlbums a ON a.SingerId = s.SingerId AND a.SingerId = 7 AND a.AlbumId = 1";
    let plan = explain(&mut s, sql);
    assert!(plan.contains("TableScan RSingers: full scan"), "{plan}");
    let (mut rows, _) = pairs(&mut s, sql);
    rows.sort();
    let want: Vec<Vec<i64>> = (1..=21)
        .map(|i| vec![i, if i == 7 { 1 } else { -1 }])
        .collect();
    assert_eq!(rows, want);
    let sql = "SELECT s.SingerId, a.AlbumId FROM RSingers s LEFT JOIN RAlbums a ON a.SingerId = s.SingerId WHERE a.SingerId = 7";
    let plan = explain(&mut s, sql);
    assert!(plan.contains("TableScan RSingers: full scan"), "{plan}");
    assert!(plan.contains("Filter: a.SingerId = 7"), "{plan}");
    let (rows, _) = pairs(&mut s, sql);
    assert_eq!(rows.len(), 50);
    // FULL JOIN: neither side is bounded by the other.
    let sql = "SELECT s.SingerId, a.AlbumId FROM RSingers s FULL JOIN RAlbums a ON a.SingerId = s.SingerId WHERE s.SingerId = 21";
    let plan = explain(&mut s, sql);
    assert!(plan.contains("TableScan RAlbums: full scan"), "{plan}");
    let (rows, _) = pairs(&mut s, sql);
    assert_eq!(rows, vec![vec![21, -1]]);
}

#[test]
fn join_transfers_a_bound_through_two_joins() {
    let mut s = root_tables();
    // s.SingerId = 7 → a.SingerId (a = s) → so.SingerId (so = a).
    let sql = "SELECT so.AlbumId, so.TrackId FROM RSingers s JOIN RAlbums a ON a.SingerId = s.SingerId JOIN RSongs so ON so.SingerId = a.SingerId AND so.AlbumId = a.AlbumId WHERE s.SingerId = 7";
    let plan = explain(&mut s, sql);
    assert!(plan.contains("TableScan RSingers: key (7)"), "{plan}");
    assert!(plan.contains("TableScan RAlbums: prefix (7)"), "{plan}");
    assert!(plan.contains("TableScan RSongs: prefix (7)"), "{plan}");
    let (mut rows, scanned) = pairs(&mut s, sql);
    rows.sort();
    let want: Vec<Vec<i64>> = (1..=2)
        .flat_map(|a| (1..=3).map(move |t| vec![a, t]))
        .collect();
    assert_eq!(rows, want);
    assert_eq!(scanned, 1 + 50 + 6);
    // From the last table back to the first two.
    let sql = "SELECT COUNT(*) FROM RSingers s JOIN RAlbums a ON a.SingerId = s.SingerId JOIN RSongs so ON so.SingerId = a.SingerId AND so.AlbumId = a.AlbumId WHERE so.SingerId = 7";
    let plan = explain(&mut s, sql);
    assert!(plan.contains("TableScan RSingers: key (7)"), "{plan}");
    assert!(plan.contains("TableScan RAlbums: prefix (7)"), "{plan}");
    let (rows, scanned) = pairs(&mut s, sql);
    assert_eq!(rows, vec![vec![6]]);
    assert_eq!(scanned, 1 + 50 + 6);
    // Preserved → NULL-supplying → NULL-supplying through two LEFT joins.
    let sql = "SELECT s.SingerId, so.TrackId FROM RSingers s LEFT JOIN RAlbums a ON a.SingerId = s.SingerId LEFT JOIN RSongs so ON so.SingerId = a.SingerId AND so.AlbumId = a.AlbumId WHERE s.SingerId = 21";
    let plan = explain(&mut s, sql);
    assert!(plan.contains("TableScan RSongs: prefix (21)"), "{plan}");
    let (rows, scanned) = pairs(&mut s, sql);
    assert_eq!(rows, vec![vec![21, -1]]);
    assert_eq!(scanned, 1);
}

fn lines(q: &QueryResult) -> String {
    q.rows
        .iter()
        .map(|r| match &r[0] {
            Value::String(l) => l.clone(),
            other => panic!("{other:?}"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn users(s: &mut Session) -> Vec<Vec<Value>> {
    query(s, "SELECT UserId, Name, Age FROM Users ORDER BY UserId").rows
}

#[test]
fn explain_update_by_key_is_a_point_and_writes_nothing() {
    let mut s = session();
    let before = users(&mut s);
    let plan = explain(&mut s, "UPDATE Users SET Name = 'x' WHERE UserId = 3");
    let mut it = plan.lines();
    assert_eq!(it.next(), Some("Update Users: set Name"), "{plan}");
    assert!(plan.contains("  TableScan Users: key (3)"), "{plan}");
    assert!(!plan.contains("Filter"), "{plan}");
    assert!(!plan.contains("rolled back"), "{plan}");
    // Two columns, a residual filter.
    let plan = explain(
        &mut s,
        "UPDATE Users SET Name = 'x', Age = Age + 1 WHERE UserId = 3 AND Name = 'cy'",
    );
    assert!(plan.starts_with("Update Users: set Name, Age\n"), "{plan}");
    assert!(plan.contains("key (3)"), "{plan}");
    assert!(plan.contains("Name = 'cy'"), "{plan}");
    assert_eq!(users(&mut s), before);
}

#[test]
fn explain_delete_with_a_range() {
    let mut s = session();
    let plan = explain(
        &mut s,
        "DELETE FROM Orders WHERE OrderId >= 11 AND OrderId < 13",
    );
    assert!(plan.starts_with("Delete Orders\n"), "{plan}");
    let scan = plan.lines().nth(1).unwrap();
    assert!(scan.starts_with("  TableScan Orders: "), "{plan}");
    assert!(scan.contains("[(11) .. (13))"), "{plan}");
    assert!(!scan.contains("full"), "{plan}");
    assert_eq!(
        ints(&query(&mut s, "SELECT COUNT(*) FROM Orders")),
        vec![vec![4]]
    );
}

#[test]
fn explain_insert_values_and_select() {
    let mut s = session();
    let plan = explain(
        &mut s,
        "INSERT INTO Users (UserId, Name) VALUES (7, 'g'), (8, 'h')",
    );
    assert_eq!(plan, "Insert Users (UserId, Name): 2 rows");
    let plan = explain(
        &mut s,
        "INSERT OR UPDATE INTO Users (UserId, Name) VALUES (1, 'g')",
    );
    assert_eq!(plan, "InsertOrUpdate Users (UserId, Name): 1 row");
    let plan = explain(
        &mut s,
        "INSERT INTO Orders (OrderId, UserId) SELECT UserId + 100, UserId FROM Users WHERE UserId = 2",
    );
    assert!(
        plan.starts_with("Insert Orders (OrderId, UserId)\n"),
        "{plan}"
    );
    // The SELECT's own plan, one level down.
    assert!(plan.contains("\n  Project: _, UserId\n"), "{plan}");
    assert!(plan.contains("\n    TableScan Users: key (2)"), "{plan}");
    assert_eq!(users(&mut s).len(), 3);
    assert_eq!(
        ints(&query(&mut s, "SELECT COUNT(*) FROM Orders")),
        vec![vec![4]]
    );
}

#[test]
fn explain_analyze_dml_rolls_back() {
    let mut s = session();
    let before = users(&mut s);
    let out = lines(&query(
        &mut s,
        "EXPLAIN ANALYZE UPDATE Users SET Name = 'x' WHERE UserId = 3",
    ));
    println!("{out}");
    assert!(
        out.starts_with("Update Users: set Name  [rows=1]\n"),
        "{out}"
    );
    assert!(
        out.contains("TableScan Users: key (3)  [rows=1 scanned=1"),
        "{out}"
    );
    assert!(out.contains("rows affected: 1,"), "{out}");
    assert!(
        out.ends_with("(rolled back: EXPLAIN ANALYZE does not commit)"),
        "{out}"
    );
    assert_eq!(users(&mut s), before);

    let out = lines(&query(
        &mut s,
        "EXPLAIN ANALYZE DELETE FROM Users WHERE UserId >= 2",
    ));
    println!("{out}");
    assert!(out.starts_with("Delete Users  [rows=2]\n"), "{out}");
    assert!(out.contains("rows affected: 2,"), "{out}");
    assert_eq!(users(&mut s), before);
    assert_eq!(
        ints(&query(&mut s, "SELECT COUNT(*) FROM Events")),
        vec![vec![400]]
    );

    let out = lines(&query(
        &mut s,
        "EXPLAIN ANALYZE INSERT INTO Users (UserId, Name) SELECT UserId + 10, Name FROM Users",
    ));
    println!("{out}");
    assert!(
        out.starts_with("Insert Users (UserId, Name)  [rows=3]\n"),
        "{out}"
    );
    assert!(out.contains("TableScan Users: "), "{out}");
    assert_eq!(users(&mut s), before);

    let out = lines(&query(
        &mut s,
        "EXPLAIN ANALYZE INSERT INTO Users (UserId, Name) VALUES (9, 'z')",
    ));
    assert!(
        out.starts_with("Insert Users (UserId, Name): 1 row  [rows=1]\n"),
        "{out}"
    );
    assert_eq!(users(&mut s), before);

    // A failing statement still reports its error and changes nothing.
    let err = s
        .execute(
            "EXPLAIN ANALYZE INSERT INTO Users (UserId, Name) VALUES (1, 'dup')",
            &Params::new(),
        )
        .unwrap_err();
    assert!(err.to_string().contains("ALREADY_EXISTS"), "{err}");
    assert_eq!(users(&mut s), before);
}

#[test]
fn explain_dml_inside_a_transaction() {
    let mut s = session();
    run(&mut s, "BEGIN");
    run(&mut s, "UPDATE Users SET Name = 'q' WHERE UserId = 1");
    let plan = explain(&mut s, "DELETE FROM Users WHERE UserId = 1");
    assert!(plan.starts_with("Delete Users\n"), "{plan}");
    let err = s
        .execute(
            "EXPLAIN ANALYZE DELETE FROM Users WHERE UserId = 1",
            &Params::new(),
        )
        .unwrap_err();
    assert!(err.to_string().contains("FAILED_PRECONDITION"), "{err}");
    run(&mut s, "COMMIT");
    let q = query(&mut s, "SELECT Name FROM Users WHERE UserId = 1");
    assert_eq!(q.rows, vec![vec![Value::String("q".into())]]);
}
