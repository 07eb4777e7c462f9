//! `PartialResultSet`s: chunked values, metadata, resume tokens, many rows.

use crate::*;

const ROWS: i64 = 20_000;

fn pad(i: i64) -> String {
    format!("{i:0>120}")
}

/// A server with table `Pads` holding `ROWS` rows of about 130 bytes.
async fn pads() -> (Env, String) {
    let env = start().await;
    let inst = env.instance("inst").await;
    let db = env
        .database(
            &inst,
            "db",
            &["CREATE TABLE Pads (Id INT64 NOT NULL, Pad STRING(MAX)) PRIMARY KEY (Id)"],
        )
        .await;
    let s = env.session(&db).await;
    let rows = (1..=ROWS).map(|i| row![i, pad(i)]).collect();
    env.write(&s, vec![upsert("Pads", &["Id", "Pad"], rows)])
        .await;
    (env, s)
}

fn request(session: &str, sql: &str) -> pb::ExecuteSqlRequest {
    pb::ExecuteSqlRequest {
        session: session.into(),
        sql: sql.into(),
        ..Default::default()
    }
}

/// Checks streamed `Pads` rows are exactly `first..=ROWS`, in order.
fn check_pads(messages: &[pb::PartialResultSet], first: i64) {
    let values = assemble(messages);
    assert_eq!(values.len() as i64, 2 * (ROWS - first + 1));
    for (row, i) in values.chunks(2).zip(first..) {
        assert_eq!(text(&row[0]), i.to_string());
        assert_eq!(text(&row[1]), pad(i));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn long_strings_come_back_in_chunks() {
    let env = start().await;
    let inst = env.instance("inst").await;
    let db = env
        .database(
            &inst,
            "db",
            &[
                "CREATE TABLE Docs (Id INT64 NOT NULL, Body STRING(MAX), Tail STRING(MAX)) \
               PRIMARY KEY (Id)",
            ],
        )
        .await;
    let s = env.session(&db).await;
    // 2.8 MB of 1-, 2- and 4-byte characters: chunk boundaries fall anywhere.
    let big = "aé😀".repeat(400_000);
    let rows = vec![row![1, big, "end"], row![2, "small", "x"]];
    env.write(&s, vec![upsert("Docs", &["Id", "Body", "Tail"], rows)])
        .await;

    let messages = env
        .stream(request(&s, "SELECT Id, Body, Tail FROM Docs ORDER BY Id"))
        .await
        .unwrap();
    assert!(messages.len() >= 3, "{} messages", messages.len());
    assert_eq!(width(&messages), 3);
    assert!(messages[1..].iter().all(|m| m.metadata.is_none()));
    let chunked = messages.iter().filter(|m| m.chunked_value).count();
    assert!(chunked >= 2, "{chunked} chunked messages");
    for m in messages.iter().filter(|m| m.chunked_value) {
        assert!(m.resume_token.is_empty(), "a resume token inside a value");
    }
    let values: Vec<String> = assemble(&messages).iter().map(text).collect();
    assert_eq!(values.len(), 6);
    assert!(values[1] == big, "the long string differs");
    assert_eq!(
        [&values[..1], &values[2..]].concat(),
        vec!["1", "end", "2", "small", "x"]
    );

    // StreamingRead chunks the same way.
    let mut stream = env
        .spanner()
        .streaming_read(read_all(&s, "Docs", "", &["Body", "Id"]))
        .await
        .unwrap()
        .into_inner();
    let mut messages = Vec::new();
    while let Some(m) = stream.message().await.unwrap() {
        messages.push(m);
    }
    assert!(messages.len() >= 3);
    let values: Vec<String> = assemble(&messages).iter().map(text).collect();
    assert!(values[0] == big);
    assert_eq!(&values[1..], ["1", "small", "2"]);

    // The unary call carries it whole.
    let whole = env
        .execute(&s, "SELECT Body FROM Docs WHERE Id = 1", None)
        .await
        .unwrap();
    assert!(text(&whole.rows[0].values[0]) == big);
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_rows_stream_and_resume() {
    let (env, s) = pads().await;
    let sql = "SELECT Id, Pad FROM Pads ORDER BY Id";
    let messages = env.stream(request(&s, sql)).await.unwrap();
    assert!(messages.len() > 4, "{} messages", messages.len());
    assert_eq!(width(&messages), 2);
    assert!(messages[1..].iter().all(|m| m.metadata.is_none()));
    check_pads(&messages, 1);

    // Resume after a message in the middle: only the rest comes back.
    let k = messages.len() / 2;
    let token = messages[k].resume_token.clone();
    assert!(!token.is_empty(), "message {k} has no resume token");
    let sent: usize = messages[..=k].iter().map(|m| m.values.len()).sum();
    let sent = (sent / 2) as i64;
    let resumed = env
        .stream(pb::ExecuteSqlRequest {
            resume_token: token,
            ..request(&s, sql)
        })
        .await
        .unwrap();
    check_pads(&resumed, sent + 1);

    // A full scan without ORDER BY streams every row too.
    let all = env
        .stream(request(&s, "SELECT Id, Pad FROM Pads"))
        .await
        .unwrap();
    assert!(all.len() > 4);
    assert_eq!(assemble(&all).len() as i64, 2 * ROWS);

    // No rows: one message, with the row type.
    let none = env
        .stream(request(&s, "SELECT Id, Pad FROM Pads WHERE Id < 0"))
        .await
        .unwrap();
    assert_eq!(none.len(), 1);
    assert_eq!(width(&none), 2);
    assert!(none[0].values.is_empty());

    // Resuming inside a read-only transaction continues its snapshot.
    let ro = read_only(pb::transaction_options::read_only::TimestampBound::Strong(
        true,
    ));
    let txn = env.begin(&s, ro).await;
    let in_txn = pb::ExecuteSqlRequest {
        transaction: Some(use_id(&txn.id)),
        ..request(&s, sql)
    };
    let messages = env.stream(in_txn.clone()).await.unwrap();
    check_pads(&messages, 1);
    let token = messages[1].resume_token.clone();
    let sent = (messages[..2].iter().map(|m| m.values.len()).sum::<usize>() / 2) as i64;
    let resumed = env
        .stream(pb::ExecuteSqlRequest {
            resume_token: token,
            ..in_txn
        })
        .await
        .unwrap();
    check_pads(&resumed, sent + 1);
    env.stop().await;
}

/// A resumed single-use strong query must continue the original snapshot:
/// Spanner's resume token pins the read timestamp, so a write committed
/// between the two requests neither shifts nor changes the remaining rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_resumed_query_keeps_its_snapshot() {
    let (env, s) = pads().await;
    let sql = "SELECT Id, Pad FROM Pads ORDER BY Id";
    let messages = env.stream(request(&s, sql)).await.unwrap();
    let k = messages.len() / 2;
    let token = messages[k].resume_token.clone();
    let sent: usize = messages[..=k].iter().map(|m| m.values.len()).sum();
    let sent = (sent / 2) as i64;
    let delete = pb::Mutation {
        operation: Some(pb::mutation::Operation::Delete(pb::mutation::Delete {
            table: "Pads".into(),
            key_set: Some(pb::KeySet {
                keys: vec![prost_types::ListValue {
                    values: vec![val("1".to_string())],
                }],
                ..Default::default()
            }),
        })),
    };
    env.write(&s, vec![delete]).await;
    let resumed = env
        .stream(pb::ExecuteSqlRequest {
            resume_token: token,
            ..request(&s, sql)
        })
        .await
        .unwrap();
    let first = assemble(&resumed).first().map(text);
    env.stop().await;
    assert_eq!(first, Some((sent + 1).to_string()));
}
