//! The server-wide query memory budget over real gRPC: while one streamed
//! sort holds its rows, a second one that would not fit beside it fails
//! with RESOURCE_EXHAUSTED naming the server's budget; the first finishes,
//! and the pool is back to empty.
//!
//! The server draws from the process's pool
//! (`rowtree_sql::limits::server_memory_pool`), which this test shrinks, so
//! it lives alone in its own test binary.

use std::time::{Duration, Instant};

use googleapis_tonic_google_spanner_v1::google::spanner::v1 as pb;
use pb::spanner_client::SpannerClient;
use rowtree_server::registry::InstanceMeta;
use rowtree_server::{Config, Server};
use rowtree_sql::limits;
use rowtree_sql::{Params, Session};
use tonic::transport::{Channel, Endpoint};
use tonic::Code;

const INSTANCE: &str = "projects/p/instances/inst";
const DATABASE: &str = "projects/p/instances/inst/databases/db";
/// A sort of every row: it holds all of them until the stream ends.
const SORT: &str = "SELECT Id, Pad FROM T ORDER BY Pad, Id";
/// More rows (~12 MB) than the server's stream buffers and the transport's
/// window hold, so a reader that stops keeps the sort running.
const ROWS: i64 = 60_000;

/// A server with `ROWS` rows of ~200 bytes in `T`.
async fn server() -> Server {
    let server = Server::start(Config {
        data_dir: None,
        addr: "127.0.0.1:0".parse().unwrap(),
        http_addr: None,
        ..Config::default()
    })
    .await
    .expect("the server starts");
    let registry = server.registry().clone();
    tokio::task::spawn_blocking(move || {
        registry
            .create_instance(InstanceMeta {
                name: INSTANCE.into(),
                config: "projects/p/instanceConfigs/emulator-config".into(),
                display_name: "i".into(),
                node_count: 1,
                processing_units: 1000,
                labels: Default::default(),
                create_time: 0,
                update_time: 0,
                edition: 0,
            })
            .unwrap();
        let hosted = registry.create_database(DATABASE, b"", 1).unwrap();
        hosted
            .db
            .apply_ddl(&["CREATE TABLE T (Id INT64 NOT NULL, Pad STRING(MAX)) PRIMARY KEY (Id)"])
            .unwrap();
        let mut s = Session::new(hosted.db.clone());
        for start in (0..ROWS).step_by(1000) {
            let values: Vec<String> = (start..start + 1000)
                .map(|id| format!("({id}, '{}')", "x".repeat(200)))
                .collect();
            let sql = format!("INSERT INTO T (Id, Pad) VALUES {}", values.join(", "));
            s.execute(&sql, &Params::new()).unwrap();
        }
    })
    .await
    .unwrap();
    server
}

async fn client(server: &Server) -> (SpannerClient<Channel>, String) {
    let channel = Endpoint::from_shared(format!("http://{}", server.local_addr))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut client = SpannerClient::new(channel).max_decoding_message_size(64 << 20);
    let session = client
        .create_session(pb::CreateSessionRequest {
            database: DATABASE.into(),
            session: None,
        })
        .await
        .unwrap()
        .into_inner()
        .name;
    (client, session)
}

fn sort(session: &str) -> pb::ExecuteSqlRequest {
    pb::ExecuteSqlRequest {
        session: session.into(),
        sql: SORT.into(),
        ..Default::default()
    }
}

/// Waits until the pool is empty: a stream's last message may reach the
/// client a moment before the server's query is dropped.
async fn pool_empties() {
    let pool = limits::server_memory_pool();
    let start = Instant::now();
    while pool.reserved() != 0 {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the pool still holds {} bytes",
            pool.reserved()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_query_that_does_not_fit_beside_the_others_fails_alone() {
    let server = server().await;
    let (mut a, session_a) = client(&server).await;
    let (mut b, session_b) = client(&server).await;
    let pool = limits::server_memory_pool();

    // The first sort emits its first rows, then its reader stops reading.
    let mut first = a
        .execute_streaming_sql(sort(&session_a))
        .await
        .unwrap()
        .into_inner();
    first.message().await.unwrap().expect("a first message");
    let holds = pool.reserved();
    assert!(holds > 10 << 20, "the sort holds {holds} bytes");
    limits::set_server_query_memory(holds + holds / 2);
    let limit_mib = limits::server_query_memory() >> 20;

    let refused = b
        .execute_sql(sort(&session_b))
        .await
        .expect_err("no room for a second sort");
    assert_eq!(refused.code(), Code::ResourceExhausted, "{refused:?}");
    let message = refused.message();
    assert!(
        message.contains("all queries in flight on this server together hold")
            && message.contains(&format!(
                "the server's limit is {limit_mib} MiB (rowtree serve --server-query-memory)"
            )),
        "{message}"
    );
    // The session serves on: a query that streams holds nothing.
    let small = b
        .execute_sql(pb::ExecuteSqlRequest {
            session: session_b.clone(),
            sql: "SELECT COUNT(*) FROM T".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(small.rows.len(), 1);

    // The first sort finishes.
    while let Some(m) = first.message().await.unwrap() {
        drop(m);
    }
    pool_empties().await;
    // Alone, the second fits.
    let alone = b.execute_sql(sort(&session_b)).await.unwrap().into_inner();
    assert_eq!(alone.rows.len(), ROWS as usize);
    pool_empties().await;

    // A reader that goes away cancels its query, which gives its memory
    // back.
    let mut cancelled = a
        .execute_streaming_sql(sort(&session_a))
        .await
        .unwrap()
        .into_inner();
    cancelled.message().await.unwrap().expect("a first message");
    assert!(pool.reserved() >= holds);
    drop(cancelled);
    pool_empties().await;
    server.shutdown().await.unwrap();
}
