//! Sessions and transactions: inline begin, concurrency, conflicts, DML,
//! batch DML, read timestamps, commit responses.

use std::sync::Arc;

use crate::*;
use pb::transaction_options::read_only::TimestampBound;

const ACCOUNTS: &str =
    "CREATE TABLE Accounts (Id INT64 NOT NULL, Balance INT64 NOT NULL) PRIMARY KEY (Id)";

/// A server with one database holding `Accounts` rows 1..=n (balance 100).
async fn accounts(n: i64) -> (Env, String, String) {
    let env = start().await;
    let inst = env.instance("inst").await;
    let db = env.database(&inst, "bank", &[ACCOUNTS]).await;
    let s = env.session(&db).await;
    if n > 0 {
        let rows = (1..=n).map(|i| row![i, 100]).collect();
        env.write(&s, vec![upsert("Accounts", &["Id", "Balance"], rows)])
            .await;
    }
    (env, db, s)
}

async fn balance(env: &Env, s: &str, id: i64) -> String {
    let sql = format!("SELECT Balance FROM Accounts WHERE Id = {id}");
    env.query(s, &sql).await.concat()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn unknown_sessions_are_not_found() {
    let (env, db, s) = accounts(1).await;
    let missing = format!("{db}/sessions/nope");
    let e = expect_err(
        env.execute(&missing, "SELECT 1", None).await,
        Code::NotFound,
        "Session not found",
    );
    let d = details(&e);
    assert_eq!(d.code, Code::NotFound as i32);
    assert!(
        d.details
            .iter()
            .any(|a| a.type_url.ends_with("google.rpc.ResourceInfo")),
        "{d:?}"
    );
    let commit = env
        .commit(
            &missing,
            pb::commit_request::Transaction::SingleUseTransaction(read_write()),
            vec![],
            false,
        )
        .await;
    expect_err(commit, Code::NotFound, "Session not found");
    // A deleted session is not found either; others still work.
    let other = env.session(&db).await;
    env.spanner()
        .delete_session(pb::DeleteSessionRequest {
            name: other.clone(),
        })
        .await
        .unwrap();
    expect_err(
        env.execute(&other, "SELECT 1", None).await,
        Code::NotFound,
        "Session not found",
    );
    assert_eq!(env.query(&s, "SELECT 1").await, vec!["1"]);
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn inline_begin_returns_the_transaction() {
    let (env, _db, s) = accounts(2).await;
    let rs = env
        .execute(
            &s,
            "UPDATE Accounts SET Balance = 50 WHERE Id = 1",
            Some(begin_with(read_write())),
        )
        .await
        .unwrap();
    assert_eq!(row_count(&rs), 1);
    let txn = rs
        .metadata
        .unwrap()
        .transaction
        .expect("the begun transaction");
    assert!(!txn.id.is_empty());
    // The transaction sees its own write; others do not until it commits.
    let own = env
        .execute(
            &s,
            "SELECT Balance FROM Accounts WHERE Id = 1",
            Some(use_id(&txn.id)),
        )
        .await
        .unwrap();
    assert_eq!(rows(&own), vec!["50"]);
    assert_eq!(balance(&env, &s, 2).await, "100");
    env.commit_id(&s, &txn.id, vec![]).await.unwrap();
    assert_eq!(balance(&env, &s, 1).await, "50");
    // A committed transaction cannot be used again.
    let again = env.execute(&s, "SELECT 1", Some(use_id(&txn.id))).await;
    assert!(again.is_err());

    // Inline begin of a read-only transaction, streamed: the first message
    // carries the transaction and its read timestamp.
    let ro = read_only(TimestampBound::Strong(true));
    let messages = env
        .stream(pb::ExecuteSqlRequest {
            session: s.clone(),
            sql: "SELECT Id FROM Accounts ORDER BY Id".into(),
            transaction: Some(begin_with(ro)),
            ..Default::default()
        })
        .await
        .unwrap();
    let txn = messages[0]
        .metadata
        .as_ref()
        .and_then(|m| m.transaction.clone())
        .expect("the begun transaction");
    assert!(
        !txn.id.is_empty() && txn.read_timestamp.is_some(),
        "{txn:?}"
    );
    let again = env
        .execute(&s, "SELECT COUNT(*) FROM Accounts", Some(use_id(&txn.id)))
        .await
        .unwrap();
    assert_eq!(rows(&again), vec!["2"]);
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn read_write_transactions_on_different_rows_run_at_once() {
    const N: i64 = 12;
    let (env, db, s) = accounts(N).await;
    let env = Arc::new(env);
    // Every transaction holds its lock until all have written.
    let barrier = Arc::new(tokio::sync::Barrier::new(N as usize));
    let mut tasks = Vec::new();
    for i in 1..=N {
        let (env, db, barrier) = (env.clone(), db.clone(), barrier.clone());
        tasks.push(tokio::spawn(async move {
            let session = env.session(&db).await;
            let id = env.begin_rw(&session).await;
            let sql = format!("UPDATE Accounts SET Balance = Balance + {i} WHERE Id = {i}");
            assert_eq!(env.dml(&session, &id, &sql).await, 1);
            // A buffered mutation on a row of its own too.
            let extra = upsert("Accounts", &["Id", "Balance"], vec![row![100 + i, i]]);
            barrier.wait().await;
            env.commit_id(&session, &id, vec![extra]).await
        }));
    }
    for t in tasks {
        let r = within(30, t).await.unwrap();
        assert!(r.is_ok(), "{r:?}");
    }
    let rows = env
        .query(&s, "SELECT Id, Balance FROM Accounts ORDER BY Id")
        .await;
    let expected: Vec<String> = (1..=N)
        .map(|i| format!("{i}|{}", 100 + i))
        .chain((1..=N).map(|i| format!("{}|{i}", 100 + i)))
        .collect();
    assert_eq!(rows, expected);
    Arc::into_inner(env).unwrap().stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn conflicts_abort_the_younger_with_retry_info() {
    let (env, db, s1) = accounts(2).await;
    let env = Arc::new(env);
    let s2 = env.session(&db).await;
    let older = env.begin_rw(&s1).await;
    let younger = env.begin_rw(&s2).await;
    assert_eq!(
        env.dml(
            &s2,
            &younger,
            "UPDATE Accounts SET Balance = 2 WHERE Id = 1"
        )
        .await,
        1
    );
    // The older transaction wants the same row: it wounds the younger.
    let task = {
        let (env, s1, older) = (env.clone(), s1.clone(), older.clone());
        tokio::spawn(async move {
            env.dml(&s1, &older, "UPDATE Accounts SET Balance = 1 WHERE Id = 1")
                .await
        })
    };
    let count = within(20, task).await.unwrap();
    assert_eq!(count, 1);
    // The wounded transaction's next statement and its commit are ABORTED.
    let next = env
        .execute(
            &s2,
            "SELECT Balance FROM Accounts WHERE Id = 2",
            Some(use_id(&younger)),
        )
        .await;
    let e = expect_err(next, Code::Aborted, "");
    assert!(details(&e)
        .details
        .iter()
        .any(|a| a.type_url.ends_with("google.rpc.RetryInfo")));
    let e = expect_err(
        env.commit_id(&s2, &younger, vec![]).await,
        Code::Aborted,
        "",
    );
    let d = details(&e);
    assert_eq!(d.code, Code::Aborted as i32);
    let retry = d
        .details
        .iter()
        .find(|a| a.type_url == "type.googleapis.com/google.rpc.RetryInfo")
        .expect("a RetryInfo detail");
    let retry = rpc::RetryInfo::decode(retry.value.as_slice()).unwrap();
    assert!(retry.retry_delay.is_some(), "{retry:?}");
    env.commit_id(&s1, &older, vec![]).await.unwrap();
    assert_eq!(balance(&env, &s1, 1).await, "1");

    // The younger waits for the older instead of aborting it.
    let older = env.begin_rw(&s1).await;
    let younger = env.begin_rw(&s2).await;
    env.dml(
        &s1,
        &older,
        "UPDATE Accounts SET Balance = Balance + 10 WHERE Id = 2",
    )
    .await;
    let task = {
        let (env, s2, younger) = (env.clone(), s2.clone(), younger.clone());
        tokio::spawn(async move {
            env.dml(
                &s2,
                &younger,
                "UPDATE Accounts SET Balance = Balance * 2 WHERE Id = 2",
            )
            .await;
            env.commit_id(&s2, &younger, vec![]).await
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert!(!task.is_finished(), "the younger did not wait for the lock");
    env.commit_id(&s1, &older, vec![]).await.unwrap();
    within(20, task).await.unwrap().unwrap();
    assert_eq!(balance(&env, &s1, 2).await, "220");
    Arc::into_inner(env).unwrap().stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn dml_row_counts_are_exact() {
    let (env, _db, s) = accounts(5).await;
    let id = env.begin_rw(&s).await;
    let cases = [
        (
            "INSERT INTO Accounts (Id, Balance) VALUES (6, 1), (7, 2), (8, 3)",
            3,
        ),
        ("UPDATE Accounts SET Balance = Balance + 1 WHERE Id > 4", 4),
        ("UPDATE Accounts SET Balance = 0 WHERE Id = 42", 0),
        ("DELETE FROM Accounts WHERE Balance < 5", 3),
        ("DELETE FROM Accounts WHERE FALSE", 0),
        ("UPDATE Accounts SET Balance = 7 WHERE TRUE", 5),
    ];
    for (sql, n) in cases {
        assert_eq!(env.dml(&s, &id, sql).await, n, "{sql}");
    }
    env.commit_id(&s, &id, vec![]).await.unwrap();
    assert_eq!(
        env.query(&s, "SELECT COUNT(*), SUM(Balance) FROM Accounts")
            .await,
        vec!["5|35"]
    );
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn batch_dml_stops_at_the_failing_statement() {
    let (env, _db, s) = accounts(1).await;
    let statement = |sql: &str| pb::execute_batch_dml_request::Statement {
        sql: sql.into(),
        ..Default::default()
    };
    let response = env
        .spanner()
        .execute_batch_dml(pb::ExecuteBatchDmlRequest {
            session: s.clone(),
            transaction: Some(begin_with(read_write())),
            statements: vec![
                statement("INSERT INTO Accounts (Id, Balance) VALUES (2, 1), (3, 1)"),
                statement("INSERT INTO Accounts (Id, Balance) VALUES (1, 1)"),
                statement("UPDATE Accounts SET Balance = 9 WHERE TRUE"),
            ],
            seqno: 1,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(response.result_sets.len(), 1, "{response:?}");
    assert_eq!(row_count(&response.result_sets[0]), 2);
    let status = response.status.expect("a status");
    assert_eq!(status.code, Code::AlreadyExists as i32, "{status:?}");
    let id = response.result_sets[0]
        .metadata
        .as_ref()
        .and_then(|m| m.transaction.as_ref())
        .map(|t| t.id.clone())
        .expect("the begun transaction");
    // The transaction goes on: the first statement stays, the third never ran.
    env.commit_id(&s, &id, vec![]).await.unwrap();
    assert_eq!(
        env.query(&s, "SELECT Id, Balance FROM Accounts ORDER BY Id")
            .await,
        vec!["1|100", "2|1", "3|1"]
    );

    // All statements succeeding: one result set each, OK status.
    let id = env.begin_rw(&s).await;
    let response = env
        .spanner()
        .execute_batch_dml(pb::ExecuteBatchDmlRequest {
            session: s.clone(),
            transaction: Some(use_id(&id)),
            statements: vec![
                statement("UPDATE Accounts SET Balance = 5 WHERE Id > 1"),
                statement("DELETE FROM Accounts WHERE Id = 3"),
            ],
            seqno: 2,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let counts: Vec<i64> = response.result_sets.iter().map(row_count).collect();
    assert_eq!(counts, vec![2, 1]);
    assert_eq!(response.status.unwrap().code, 0);
    env.commit_id(&s, &id, vec![]).await.unwrap();
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn read_timestamps_see_the_past() {
    let (env, _db, s) = accounts(0).await;
    let cols = ["Id", "Balance"];
    let first = env
        .write(&s, vec![upsert("Accounts", &cols, vec![row![1, 10]])])
        .await;
    let t1 = first.commit_timestamp.expect("a commit timestamp");
    let second = env
        .write(&s, vec![upsert("Accounts", &cols, vec![row![1, 20]])])
        .await;
    let t2 = second.commit_timestamp.unwrap();
    assert!((t2.seconds, t2.nanos) > (t1.seconds, t1.nanos));

    // A read-only transaction at t1, begun after the second write.
    let txn = env
        .begin(&s, read_only(TimestampBound::ReadTimestamp(t1)))
        .await;
    assert_eq!(txn.read_timestamp, Some(t1));
    let sql = "SELECT Balance FROM Accounts WHERE Id = 1";
    let old = env.execute(&s, sql, Some(use_id(&txn.id))).await.unwrap();
    assert_eq!(rows(&old), vec!["10"]);
    // A later write does not change what it sees.
    env.write(&s, vec![upsert("Accounts", &cols, vec![row![1, 30]])])
        .await;
    let old = env.execute(&s, sql, Some(use_id(&txn.id))).await.unwrap();
    assert_eq!(rows(&old), vec!["10"]);

    // A single-use read at t2 reports its timestamp.
    let at_t2 = env
        .execute(
            &s,
            sql,
            Some(single_use(read_only(TimestampBound::ReadTimestamp(t2)))),
        )
        .await
        .unwrap();
    assert_eq!(rows(&at_t2), vec!["20"]);
    let reported = at_t2.metadata.unwrap().transaction.unwrap().read_timestamp;
    assert_eq!(reported, Some(t2));
    // A strong read sees the latest.
    assert_eq!(env.query(&s, sql).await, vec!["30"]);
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn single_use_commit_reports_timestamp_and_stats() {
    let (env, _db, s) = accounts(1).await;
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let mutations = vec![
        upsert("Accounts", &["Id", "Balance"], vec![row![2, 1], row![3, 2]]),
        pb::Mutation {
            operation: Some(pb::mutation::Operation::Delete(pb::mutation::Delete {
                table: "Accounts".into(),
                key_set: Some(pb::KeySet {
                    keys: vec![prost_types::ListValue {
                        values: vec![val("1".to_string())],
                    }],
                    ..Default::default()
                }),
            })),
        },
    ];
    let t = pb::commit_request::Transaction::SingleUseTransaction(read_write());
    let response = env.commit(&s, t, mutations, true).await.unwrap();
    let ts = response.commit_timestamp.expect("a commit timestamp");
    assert!((before - 5..before + 60).contains(&ts.seconds), "{ts:?}");
    let stats = response.commit_stats.expect("commit stats");
    // Two rows of two columns, and one deleted key.
    assert_eq!(stats.mutation_count, 5);
    assert_eq!(
        env.query(&s, "SELECT Id FROM Accounts ORDER BY Id").await,
        vec!["2", "3"]
    );
    // Without the request flag there are no stats.
    let t = pb::commit_request::Transaction::SingleUseTransaction(read_write());
    let plain = env.commit(&s, t, vec![], false).await.unwrap();
    assert!(plain.commit_stats.is_none());
    let later = plain.commit_timestamp.unwrap();
    assert!((later.seconds, later.nanos) > (ts.seconds, ts.nanos));
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn streamed_dml_reports_its_transaction_and_count() {
    let (env, db, s) = accounts(3).await;
    let messages = env
        .stream(pb::ExecuteSqlRequest {
            session: s.clone(),
            sql: "UPDATE Accounts SET Balance = 0 WHERE Id >= 2".into(),
            transaction: Some(begin_with(read_write())),
            seqno: 1,
            ..Default::default()
        })
        .await
        .unwrap();
    let id = messages[0]
        .metadata
        .as_ref()
        .and_then(|m| m.transaction.as_ref())
        .map(|t| t.id.clone())
        .expect("the begun transaction");
    let stats = messages.last().unwrap().stats.clone().expect("statistics");
    assert_eq!(
        stats.row_count,
        Some(pb::result_set_stats::RowCount::RowCountExact(2))
    );
    env.commit_id(&s, &id, vec![]).await.unwrap();
    assert_eq!(
        env.query(&s, "SELECT SUM(Balance) FROM Accounts").await,
        vec!["100"]
    );

    // Sessions of a dropped database are gone with it.
    env.dbs()
        .drop_database(dpb::DropDatabaseRequest { database: db })
        .await
        .unwrap();
    expect_err(
        env.execute(&s, "SELECT 1", None).await,
        Code::NotFound,
        "not found",
    );
    env.stop().await;
}

/// A snapshot at a future timestamp waits until that time, on a blocking
/// thread: the other requests of its connection, which share its event
/// loop, are answered meanwhile (waiting in the loop stalled them all).
#[tokio::test(flavor = "multi_thread")]
async fn a_read_at_a_future_timestamp_waits_without_stalling_other_requests() {
    let (env, _db, s) = accounts(1).await;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    let future = prost_types::Timestamp {
        seconds: now.as_secs() as i64 + 3,
        nanos: 0,
    };
    let sql = "SELECT Balance FROM Accounts WHERE Id = 1";
    let mut client = env.spanner();
    let request = pb::ExecuteSqlRequest {
        session: s.clone(),
        sql: sql.into(),
        transaction: Some(single_use(read_only(TimestampBound::ReadTimestamp(future)))),
        ..Default::default()
    };
    let waiting = tokio::spawn(async move { client.execute_sql(request).await });
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let strong = within(10, env.execute(&s, sql, None)).await.unwrap();
    assert_eq!(rows(&strong), vec!["100"]);
    assert!(
        !waiting.is_finished(),
        "the strong read was answered only after the future one"
    );
    let later = within(30, waiting).await.unwrap().unwrap().into_inner();
    assert_eq!(rows(&later), vec!["100"]);
    let read_ts = later.metadata.unwrap().transaction.unwrap().read_timestamp;
    assert_eq!(read_ts, Some(future));
}
