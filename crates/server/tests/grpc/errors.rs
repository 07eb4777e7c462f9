//! Errors: codes, messages and positions; the server serves on afterwards.

use crate::*;

async fn singers() -> (Env, String) {
    let env = start().await;
    let inst = env.instance("inst").await;
    let db = env
        .database(
            &inst,
            "db",
            &[
                "CREATE TABLE Singers (Id INT64 NOT NULL, Name STRING(MAX)) PRIMARY KEY (Id)",
                "CREATE INDEX SingersByName ON Singers(Name)",
            ],
        )
        .await;
    let s = env.session(&db).await;
    env.write(
        &s,
        vec![upsert("Singers", &["Id", "Name"], vec![row![1, "Ann"]])],
    )
    .await;
    (env, s)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn syntax_errors_name_the_position() {
    let (env, s) = singers().await;
    let ok = "SELECT Id, Name FROM Singers";
    let cases = [
        // The second WHERE starts at column 30.
        ("SELECT Id FROM Singers WHERE WHERE", "[at 1:30]"),
        ("SELECT Id\nFROM Singers\nWHERE WHERE", "[at 3:7]"),
        ("SELEC 1", "[at 1:1]"),
    ];
    for (sql, at) in cases {
        expect_err(env.execute(&s, sql, None).await, Code::InvalidArgument, at);
        assert_eq!(env.query(&s, ok).await, vec!["1|Ann"]);
    }
    // The streaming call reports it too (in the stream or at once).
    let streamed = env
        .stream(pb::ExecuteSqlRequest {
            session: s.clone(),
            sql: cases[0].0.into(),
            ..Default::default()
        })
        .await;
    expect_err(streamed, Code::InvalidArgument, "[at 1:30]");
    // DML in a transaction, with an inline begin that fails: the client
    // begins again explicitly, and that works.
    let bad = env
        .execute(
            &s,
            "UPDATE Singers SET Name = WHERE Id = 1",
            Some(begin_with(read_write())),
        )
        .await;
    expect_err(bad, Code::InvalidArgument, "[at 1:");
    let id = env.begin_rw(&s).await;
    assert_eq!(
        env.dml(&s, &id, "UPDATE Singers SET Name = 'Bo' WHERE Id = 1")
            .await,
        1
    );
    env.commit_id(&s, &id, vec![]).await.unwrap();
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn unknown_tables_and_columns() {
    let (env, s) = singers().await;
    let mut spanner = env.spanner();
    let cases = [
        (read_all(&s, "Nope", "", &["Id"]), "Table not found: Nope"),
        (
            read_all(&s, "Singers", "", &["Id", "Nope"]),
            "Column not found in table Singers: Nope",
        ),
        (read_all(&s, "Singers", "Nope", &["Id"]), "Nope"),
    ];
    for (request, message) in cases {
        expect_err(spanner.read(request.clone()).await, Code::NotFound, message);
        let streamed = async {
            let mut stream = spanner.streaming_read(request).await?.into_inner();
            while stream.message().await?.is_some() {}
            Ok::<_, Status>(())
        }
        .await;
        expect_err(streamed, Code::NotFound, message);
        let ok = spanner
            .read(read_all(&s, "Singers", "", &["Id", "Name"]))
            .await;
        assert_eq!(rows(&ok.unwrap().into_inner()), vec!["1|Ann"]);
    }
    // In a query, Spanner reports names it cannot resolve as INVALID_ARGUMENT.
    let queries = [
        ("SELECT * FROM Nope", "Nope"),
        ("SELECT Nope FROM Singers", "Nope"),
    ];
    for (sql, needle) in queries {
        expect_err(
            env.execute(&s, sql, None).await,
            Code::InvalidArgument,
            needle,
        );
    }
    // A statement that fails inside a read-write transaction leaves it usable.
    let id = env.begin_rw(&s).await;
    env.dml(&s, &id, "INSERT INTO Singers (Id, Name) VALUES (2, 'Bea')")
        .await;
    let bad = env
        .execute(&s, "UPDATE Nope SET X = 1 WHERE TRUE", Some(use_id(&id)))
        .await;
    expect_err(bad, Code::InvalidArgument, "Nope");
    let dup = env
        .execute(
            &s,
            "INSERT INTO Singers (Id, Name) VALUES (1, 'x')",
            Some(use_id(&id)),
        )
        .await;
    expect_err(dup, Code::AlreadyExists, "");
    env.dml(&s, &id, "INSERT INTO Singers (Id, Name) VALUES (3, 'Cy')")
        .await;
    env.commit_id(&s, &id, vec![]).await.unwrap();
    assert_eq!(
        env.query(&s, "SELECT Id FROM Singers ORDER BY Id").await,
        vec!["1", "2", "3"]
    );
    env.stop().await;
}

/// Statements built to take a server down: each gets a small, clear error
/// (the position, the rule broken), and the server serves on.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn hostile_statements_get_small_clear_errors() {
    let (env, s) = singers().await;
    let ok = "SELECT Id, Name FROM Singers";
    let nest = |n: usize| format!("SELECT {}1{}", "(".repeat(n), ")".repeat(n));
    let deep: [(String, &str); 4] = [
        // 4 KB of parentheses: this overflowed a worker's stack and killed
        // the whole process.
        (nest(2_000), "[at 1:"),
        (format!("SELECT 1{}", "+1".repeat(100_000)), "[at 1:"),
        (format!("SELECT {}TRUE", "NOT ".repeat(50_000)), "[at 1:"),
        (
            format!(
                "SELECT Id FROM Singers WHERE {}",
                "Id = 1 OR ".repeat(5_000) + "TRUE"
            ),
            "[at 1:",
        ),
    ];
    for (sql, at) in &deep {
        let e = expect_err(
            env.execute(&s, sql, None).await,
            Code::InvalidArgument,
            "Out of stack space due to deeply nested query expression",
        );
        assert!(e.message().contains(at), "{}", e.message());
        assert_eq!(env.query(&s, ok).await, vec!["1|Ann"]);
    }
    // The deepest statement the parser allows runs.
    assert_eq!(env.query(&s, &nest(900)).await, vec!["1"]);

    // An error at the end of a 200 KB one-line statement quotes a window
    // around its caret, so the status fits a client's metadata limit.
    let long = format!("SELECT {}nope", "1, ".repeat(66_667));
    let e = expect_err(
        env.execute(&s, &long, None).await,
        Code::InvalidArgument,
        &format!("Unrecognized name: nope [at 1:{}]", long.len() - 3),
    );
    assert!(e.message().len() < 400, "{} bytes", e.message().len());
    let caret_line = e.message().lines().nth(1).unwrap();
    assert!(caret_line.starts_with("...") && caret_line.ends_with("nope"));

    // Spanner's documented limits.
    let too_long = format!("SELECT '{}'", "x".repeat(1_000_000));
    expect_err(
        env.execute(&s, &too_long, None).await,
        Code::InvalidArgument,
        "Statement is too long: 1000009 characters; the maximum is 1000000",
    );
    let mut params = prost_types::Struct::default();
    let mut param_types = std::collections::HashMap::new();
    for i in 0..951 {
        params.fields.insert(format!("p{i}"), val(i.to_string()));
        param_types.insert(
            format!("p{i}"),
            pb::Type {
                code: pb::TypeCode::Int64 as i32,
                ..Default::default()
            },
        );
    }
    let many = env
        .spanner()
        .execute_sql(pb::ExecuteSqlRequest {
            session: s.clone(),
            sql: "SELECT @p0".into(),
            params: Some(params),
            param_types,
            ..Default::default()
        })
        .await;
    expect_err(many, Code::InvalidArgument, "Too many parameters: 951");
    // A request over 10 MiB (commits excepted) is refused as a whole.
    let huge = format!("SELECT 1 -- {}", "x".repeat(11 << 20));
    expect_err(
        env.execute(&s, &huge, None).await,
        Code::InvalidArgument,
        "Request is too large",
    );
    // Any status echoing a huge input is cut where it becomes a header: a
    // Read of a 100 KB table name.
    let name = "T".repeat(100_000);
    let e = expect_err(
        env.spanner().read(read_all(&s, &name, "", &["Id"])).await,
        Code::NotFound,
        "Table not found: TTTT",
    );
    assert!(e.message().len() <= 4096, "{} bytes", e.message().len());
    assert!(e.message().ends_with("(message truncated)"));
    assert_eq!(env.query(&s, ok).await, vec!["1|Ann"]);
    env.stop().await;
}
