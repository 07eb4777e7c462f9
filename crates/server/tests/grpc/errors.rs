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

fn read(session: &str, table: &str, index: &str, columns: &[&str]) -> pb::ReadRequest {
    pb::ReadRequest {
        session: session.into(),
        table: table.into(),
        index: index.into(),
        columns: columns.iter().map(|c| c.to_string()).collect(),
        key_set: Some(pb::KeySet {
            all: true,
            ..Default::default()
        }),
        ..Default::default()
    }
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
        (read(&s, "Nope", "", &["Id"]), "Table not found: Nope"),
        (
            read(&s, "Singers", "", &["Id", "Nope"]),
            "Column not found in table Singers: Nope",
        ),
        (read(&s, "Singers", "Nope", &["Id"]), "Nope"),
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
        let ok = spanner.read(read(&s, "Singers", "", &["Id", "Name"])).await;
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
