//! The PostgreSQL port end to end, with tokio-postgres as the client: the
//! extended protocol with typed parameters and binary results, SQLSTATEs,
//! transaction blocks, and the bounds that keep a bad client from hurting
//! the server (oversized messages, garbage, unknown databases).

use std::net::SocketAddr;
use std::sync::Arc;

use rowtree_pgwire::{PgConfig, PgServer};
use rowtree_server::registry::{InstanceMeta, Registry};
use rowtree_server::security::Security;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_postgres::error::SqlState;
use tokio_postgres::NoTls;

async fn server(create: bool) -> (PgServer, Arc<Registry>) {
    let registry = Arc::new(Registry::open(None, rowtree_sql::database_options()).unwrap());
    let pg = PgServer::start(
        PgConfig {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            create_databases: create,
        },
        registry.clone(),
        &Security::default(),
    )
    .await
    .unwrap();
    (pg, registry)
}

async fn connect(
    addr: SocketAddr,
    db: &str,
) -> Result<tokio_postgres::Client, tokio_postgres::Error> {
    let (client, conn) = tokio_postgres::connect(
        &format!("host=127.0.0.1 port={} user=test dbname={db}", addr.port()),
        NoTls,
    )
    .await?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(client)
}

#[tokio::test(flavor = "multi_thread")]
async fn typed_parameters_and_binary_results() {
    let (pg, _r) = server(true).await;
    let c = connect(pg.local_addr, "typed").await.unwrap();
    c.batch_execute("CREATE TABLE t (id bigint PRIMARY KEY, name varchar, score float8, ok bool)")
        .await
        .unwrap();
    let insert = c
        .prepare_typed(
            "INSERT INTO t (id, name, score, ok) VALUES ($1, $2, $3, $4)",
            &[
                tokio_postgres::types::Type::INT8,
                tokio_postgres::types::Type::VARCHAR,
                tokio_postgres::types::Type::FLOAT8,
                tokio_postgres::types::Type::BOOL,
            ],
        )
        .await
        .unwrap();
    for i in 0..5i64 {
        let n = c
            .execute(
                &insert,
                &[&i, &format!("n{i}"), &(i as f64 / 2.0), &(i % 2 == 0)],
            )
            .await
            .unwrap();
        assert_eq!(n, 1);
    }
    let rows = c
        .query(
            "SELECT id, name, score, ok FROM t WHERE id >= $1 ORDER BY id",
            &[&3i64],
        )
        .await
        .unwrap();
    assert_eq!(rows.len(), 2);
    let id: i64 = rows[0].get(0);
    let name: String = rows[0].get(1);
    let score: f64 = rows[1].get(2);
    let ok: bool = rows[1].get(3);
    assert_eq!((id, name.as_str(), score, ok), (3, "n3", 2.0, true));
}

#[tokio::test(flavor = "multi_thread")]
async fn errors_have_sqlstates_and_blocks_fail() {
    let (pg, _r) = server(true).await;
    let c = connect(pg.local_addr, "errors").await.unwrap();
    let e = c.simple_query("SELEC 1").await.unwrap_err();
    assert_eq!(e.code(), Some(&SqlState::SYNTAX_ERROR));
    let e = c.simple_query("SELECT * FROM nowhere").await.unwrap_err();
    assert_eq!(e.code(), Some(&SqlState::UNDEFINED_TABLE));
    c.batch_execute("CREATE TABLE u (id bigint PRIMARY KEY)")
        .await
        .unwrap();
    c.batch_execute("INSERT INTO u (id) VALUES (1)")
        .await
        .unwrap();
    let e = c
        .simple_query("INSERT INTO u (id) VALUES (1)")
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some(&SqlState::UNIQUE_VIOLATION));

    // An error inside a block fails it until ROLLBACK; the write is undone.
    c.batch_execute("BEGIN").await.unwrap();
    c.batch_execute("INSERT INTO u (id) VALUES (2)")
        .await
        .unwrap();
    assert!(c.simple_query("SELECT * FROM nowhere").await.is_err());
    let e = c.simple_query("SELECT 1").await.unwrap_err();
    assert_eq!(e.code(), Some(&SqlState::IN_FAILED_SQL_TRANSACTION));
    c.batch_execute("ROLLBACK").await.unwrap();
    let rows = c.query("SELECT count(*) FROM u", &[]).await.unwrap();
    let n: i64 = rows[0].get(0);
    assert_eq!(n, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_and_googlesql_databases_are_refused() {
    let (pg, registry) = server(false).await;
    let e = connect(pg.local_addr, "missing").await.unwrap_err();
    assert_eq!(e.code(), Some(&SqlState::INVALID_CATALOG_NAME));
    registry
        .create_instance(InstanceMeta {
            name: "projects/p/instances/i".into(),
            config: "projects/p/instanceConfigs/c".into(),
            display_name: "i".into(),
            node_count: 1,
            processing_units: 1000,
            labels: Default::default(),
            create_time: 0,
            update_time: 0,
            edition: 0,
        })
        .unwrap();
    registry
        .create_database("projects/p/instances/i/databases/gsql", b"", 1)
        .unwrap();
    let e = connect(pg.local_addr, "gsql").await.unwrap_err();
    assert_eq!(e.code(), Some(&SqlState::INVALID_CATALOG_NAME));
    registry
        .create_database("projects/p/instances/i/databases/pgdb", b"", 2)
        .unwrap();
    let c = connect(pg.local_addr, "projects/p/instances/i/databases/pgdb")
        .await
        .unwrap();
    c.simple_query("SELECT 1").await.unwrap();
}

/// A startup packet for `db`.
fn startup(db: &str) -> Vec<u8> {
    let mut body = Vec::new();
    body.extend_from_slice(&196_608i32.to_be_bytes());
    for (k, v) in [("user", "raw"), ("database", db)] {
        body.extend_from_slice(k.as_bytes());
        body.push(0);
        body.extend_from_slice(v.as_bytes());
        body.push(0);
    }
    body.push(0);
    let mut out = ((body.len() + 4) as i32).to_be_bytes().to_vec();
    out.extend(body);
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn oversized_messages_and_garbage_end_only_their_connection() {
    let (pg, _r) = server(true).await;
    // A Query claiming 1 GiB: refused from its header, nothing buffered.
    let mut s = tokio::net::TcpStream::connect(pg.local_addr).await.unwrap();
    s.write_all(&startup("bounds")).await.unwrap();
    let mut buf = vec![0u8; 4096];
    let _ = s.read(&mut buf).await.unwrap();
    let mut q = vec![b'Q'];
    q.extend_from_slice(&(1i32 << 30).to_be_bytes());
    s.write_all(&q).await.unwrap();
    let mut reply = Vec::new();
    let _ =
        tokio::time::timeout(std::time::Duration::from_secs(5), s.read_to_end(&mut reply)).await;
    let text = String::from_utf8_lossy(&reply);
    assert!(text.contains("54000"), "{text}");

    // Garbage instead of a startup packet.
    let mut s = tokio::net::TcpStream::connect(pg.local_addr).await.unwrap();
    s.write_all(&[0xff; 64]).await.unwrap();
    let mut reply = Vec::new();
    let _ =
        tokio::time::timeout(std::time::Duration::from_secs(5), s.read_to_end(&mut reply)).await;

    // An unknown message type after startup.
    let mut s = tokio::net::TcpStream::connect(pg.local_addr).await.unwrap();
    s.write_all(&startup("bounds")).await.unwrap();
    let _ = s.read(&mut buf).await.unwrap();
    s.write_all(&[b'?', 0, 0, 0, 4]).await.unwrap();
    let mut reply = Vec::new();
    let _ =
        tokio::time::timeout(std::time::Duration::from_secs(5), s.read_to_end(&mut reply)).await;

    // The server still serves.
    let c = connect(pg.local_addr, "bounds").await.unwrap();
    let rows = c.query("SELECT 1", &[]).await.unwrap();
    let one: i64 = rows[0].get(0);
    assert_eq!(one, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn untyped_text_parameters_are_inferred() {
    let (pg, _r) = server(true).await;
    let c = connect(pg.local_addr, "infer").await.unwrap();
    c.batch_execute("CREATE TABLE v (id bigint PRIMARY KEY, name varchar)")
        .await
        .unwrap();
    // simple_query has no parameters; the extended protocol with untyped
    // parameters is what node-postgres and pgbench send: use the raw
    // protocol through a prepared statement whose types are unknown.
    let st = c
        .prepare_typed(
            "INSERT INTO v (id, name) VALUES ($1, $2)",
            &[
                tokio_postgres::types::Type::UNKNOWN,
                tokio_postgres::types::Type::UNKNOWN,
            ],
        )
        .await
        .unwrap();
    // The server described the parameters with the types it inferred.
    assert_eq!(
        st.params(),
        &[
            tokio_postgres::types::Type::INT8,
            tokio_postgres::types::Type::VARCHAR
        ]
    );
    c.execute(&st, &[&7i64, &"seven"]).await.unwrap();
    let rows = c
        .query("SELECT name FROM v WHERE id = $1", &[&7i64])
        .await
        .unwrap();
    let name: String = rows[0].get(0);
    assert_eq!(name, "seven");
}

/// A session speaking the protocol by hand, as pgbench and node-postgres
/// do: statements with untyped parameters sent as text.
struct Raw {
    s: tokio::net::TcpStream,
}

impl Raw {
    async fn open(addr: SocketAddr, db: &str) -> Raw {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.write_all(&startup(db)).await.unwrap();
        let mut raw = Raw { s };
        raw.until_ready().await;
        raw
    }

    /// The messages up to and including ReadyForQuery, as (type, body).
    async fn until_ready(&mut self) -> Vec<(u8, Vec<u8>)> {
        let mut out = Vec::new();
        loop {
            let mut head = [0u8; 5];
            self.s.read_exact(&mut head).await.unwrap();
            let len = i32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
            let mut body = vec![0u8; len - 4];
            self.s.read_exact(&mut body).await.unwrap();
            out.push((head[0], body));
            if head[0] == b'Z' {
                return out;
            }
        }
    }

    fn message(kind: u8, body: &[u8]) -> Vec<u8> {
        let mut m = vec![kind];
        m.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
        m.extend_from_slice(body);
        m
    }

    async fn query(&mut self, sql: &str) -> Vec<(u8, Vec<u8>)> {
        let mut body = sql.as_bytes().to_vec();
        body.push(0);
        self.s.write_all(&Self::message(b'Q', &body)).await.unwrap();
        self.until_ready().await
    }

    /// Parse (no parameter types), Bind (text values), Execute, Sync.
    async fn execute_untyped(&mut self, sql: &str, params: &[&str]) -> Vec<(u8, Vec<u8>)> {
        let mut parse = vec![0u8]; // unnamed statement
        parse.extend_from_slice(sql.as_bytes());
        parse.push(0);
        parse.extend_from_slice(&0i16.to_be_bytes());
        let mut bind = vec![0u8, 0u8]; // unnamed portal, unnamed statement
        bind.extend_from_slice(&0i16.to_be_bytes()); // every value is text
        bind.extend_from_slice(&(params.len() as i16).to_be_bytes());
        for p in params {
            bind.extend_from_slice(&(p.len() as i32).to_be_bytes());
            bind.extend_from_slice(p.as_bytes());
        }
        bind.extend_from_slice(&0i16.to_be_bytes());
        let mut execute = vec![0u8];
        execute.extend_from_slice(&0i32.to_be_bytes());
        let mut out = Self::message(b'P', &parse);
        out.extend(Self::message(b'B', &bind));
        out.extend(Self::message(b'E', &execute));
        out.extend(Self::message(b'S', &[]));
        self.s.write_all(&out).await.unwrap();
        self.until_ready().await
    }
}

/// The command tags of `messages`, or the error's text.
fn completed(messages: &[(u8, Vec<u8>)]) -> Result<Vec<String>, String> {
    let mut tags = Vec::new();
    for (kind, body) in messages {
        match kind {
            b'C' => tags.push(String::from_utf8_lossy(&body[..body.len() - 1]).into_owned()),
            b'E' => return Err(String::from_utf8_lossy(body).into_owned()),
            _ => {}
        }
    }
    Ok(tags)
}

/// Inferring untyped parameters executes DML with sample values (zero for
/// a number). Inside a transaction block that used to run in the block's
/// own transaction and keep the sample row's lock until the block ended: a
/// second session then waited for it (in CI two pgbench clients doing so
/// at once hung the server, the waiting one blocking its event loop). The
/// probe now runs in a transaction of its own that keeps no lock.
#[tokio::test(flavor = "multi_thread")]
async fn inferring_parameters_in_a_block_leaves_no_lock_behind() {
    let (pg, _r) = server(true).await;
    let b = connect(pg.local_addr, "probe").await.unwrap();
    b.batch_execute("CREATE TABLE w (id bigint PRIMARY KEY, v bigint)")
        .await
        .unwrap();
    b.batch_execute("INSERT INTO w (id, v) VALUES (0, 0), (1, 0)")
        .await
        .unwrap();
    let mut a = Raw::open(pg.local_addr, "probe").await;
    assert_eq!(completed(&a.query("BEGIN").await).unwrap(), ["BEGIN"]);
    // The block's transaction exists before the inference.
    assert_eq!(
        completed(&a.query("UPDATE w SET v = 10 WHERE id = 1").await).unwrap(),
        ["UPDATE 1"]
    );
    let done = a
        .execute_untyped("UPDATE w SET v = $1 WHERE id = $2", &["11", "1"])
        .await;
    assert_eq!(completed(&done).unwrap(), ["UPDATE 1"]);
    // A's block wrote row 1 only: B's write of row 0 must not wait.
    tokio::time::timeout(
        std::time::Duration::from_secs(5),
        b.batch_execute("UPDATE w SET v = 5 WHERE id = 0"),
    )
    .await
    .expect("B waited for a lock that only A's parameter inference took")
    .unwrap();
    assert_eq!(completed(&a.query("COMMIT").await).unwrap(), ["COMMIT"]);
    let rows = b
        .query("SELECT id, v FROM w ORDER BY id", &[])
        .await
        .unwrap();
    let got: Vec<(i64, i64)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(got, vec![(0, 5), (1, 11)]);
}

#[tokio::test(flavor = "multi_thread")]
async fn copy_from_stdin_in_batches_and_in_a_block() {
    use futures_util::SinkExt;
    let (pg, _r) = server(true).await;
    let c = connect(pg.local_addr, "copying").await.unwrap();
    c.batch_execute("CREATE TABLE w (id bigint PRIMARY KEY, name varchar, score float8)")
        .await
        .unwrap();
    // 30,000 rows of 3 values: more than one batch, committed as they go.
    let sink = c
        .copy_in("COPY w (id, name, score) FROM STDIN")
        .await
        .unwrap();
    futures_util::pin_mut!(sink);
    let mut data = String::new();
    for i in 0..30_000 {
        data.push_str(&format!("{i}\tn\\t{i}\t{}\n", i as f64 / 4.0));
        if data.len() > 60_000 {
            sink.send(bytes::Bytes::from(std::mem::take(&mut data)))
                .await
                .unwrap();
        }
    }
    data.push_str("30000\t\\N\t\\N\n");
    sink.send(bytes::Bytes::from(data)).await.unwrap();
    let n = sink.finish().await.unwrap();
    assert_eq!(n, 30_001);
    let rows = c
        .query(
            "SELECT count(*), max(name) FROM w WHERE name IS NOT NULL",
            &[],
        )
        .await
        .unwrap();
    let count: i64 = rows[0].get(0);
    assert_eq!(count, 30_000);

    // Inside a block the rows commit with it: a ROLLBACK leaves nothing.
    c.batch_execute("BEGIN").await.unwrap();
    let sink = c
        .copy_in("COPY w FROM STDIN WITH (FORMAT csv)")
        .await
        .unwrap();
    futures_util::pin_mut!(sink);
    sink.send(bytes::Bytes::from_static(b"40000,\"a,b\",1.5\n"))
        .await
        .unwrap();
    assert_eq!(sink.finish().await.unwrap(), 1);
    c.batch_execute("ROLLBACK").await.unwrap();
    let rows = c
        .query("SELECT count(*) FROM w WHERE id = 40000", &[])
        .await
        .unwrap();
    let count: i64 = rows[0].get(0);
    assert_eq!(count, 0);

    // A bad row fails the COPY with the line and column.
    let sink = c.copy_in("COPY w FROM STDIN").await.unwrap();
    futures_util::pin_mut!(sink);
    sink.send(bytes::Bytes::from_static(b"x\ty\t1\n"))
        .await
        .unwrap();
    let e = sink.finish().await.unwrap_err();
    assert_eq!(e.code(), Some(&SqlState::INVALID_TEXT_REPRESENTATION));
}

#[tokio::test(flavor = "multi_thread")]
async fn settings_and_read_only_blocks() {
    let (pg, _r) = server(true).await;
    let c = connect(pg.local_addr, "settings").await.unwrap();
    c.batch_execute("CREATE TABLE r (id bigint PRIMARY KEY)")
        .await
        .unwrap();
    c.batch_execute("SET application_name = 'protocol test'")
        .await
        .unwrap();
    let rows = c.simple_query("SHOW application_name").await.unwrap();
    let value = rows.iter().find_map(|m| match m {
        tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0).map(str::to_string),
        _ => None,
    });
    assert_eq!(value.as_deref(), Some("protocol test"));
    let e = c
        .simple_query("SET client_encoding = 'LATIN1'")
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some(&SqlState::INVALID_PARAMETER_VALUE));

    c.batch_execute("BEGIN READ ONLY").await.unwrap();
    c.simple_query("SELECT count(*) FROM r").await.unwrap();
    let e = c
        .simple_query("INSERT INTO r (id) VALUES (1)")
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some(&SqlState::READ_ONLY_SQL_TRANSACTION));
    c.batch_execute("ROLLBACK").await.unwrap();
    // DDL inside a block is refused.
    c.batch_execute("BEGIN").await.unwrap();
    let e = c
        .simple_query("CREATE TABLE r2 (id bigint PRIMARY KEY)")
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some(&SqlState::ACTIVE_SQL_TRANSACTION));
    c.batch_execute("ROLLBACK").await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn version_and_schema_answer() {
    let (pg, _r) = server(true).await;
    let c = connect(pg.local_addr, "versions").await.unwrap();
    let rows = c.query("SELECT version()", &[]).await.unwrap();
    let v: String = rows[0].get(0);
    assert!(v.starts_with("PostgreSQL 15"), "{v}");
    let rows = c.query("select current_schema()", &[]).await.unwrap();
    let s: String = rows[0].get(0);
    assert_eq!(s, "public");
}

#[tokio::test(flavor = "multi_thread")]
async fn several_statements_of_one_message_are_one_transaction() {
    let (pg, _r) = server(true).await;
    let c = connect(pg.local_addr, "implicit").await.unwrap();
    c.batch_execute("CREATE TABLE m (id bigint PRIMARY KEY)")
        .await
        .unwrap();
    c.batch_execute("INSERT INTO m (id) VALUES (1); INSERT INTO m (id) VALUES (2)")
        .await
        .unwrap();
    // The second insert fails: the first is undone with it.
    let e = c
        .batch_execute("INSERT INTO m (id) VALUES (3); INSERT INTO m (id) VALUES (1)")
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some(&SqlState::UNIQUE_VIOLATION));
    let rows = c.query("SELECT count(*) FROM m", &[]).await.unwrap();
    let n: i64 = rows[0].get(0);
    assert_eq!(n, 2);
    // And the connection is not left in a block.
    c.batch_execute("INSERT INTO m (id) VALUES (4)")
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn with_a_certificate_plaintext_is_refused_and_ssl_accepted() {
    use rowtree_server::security::{Tls, Token};
    let c = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let tls = Tls::from_pem(
        c.cert.pem().as_bytes(),
        c.signing_key.serialize_pem().as_bytes(),
    )
    .unwrap();
    let registry = Arc::new(Registry::open(None, rowtree_sql::database_options()).unwrap());
    let security = Security {
        tls: Some(tls),
        token: Some(Token::new("the-token").unwrap()),
        insecure: false,
    };
    let pg = PgServer::start(
        PgConfig {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            create_databases: true,
        },
        registry,
        &security,
    )
    .await
    .unwrap();
    // A startup without SSLRequest: FATAL 28000, nothing else.
    let mut s = tokio::net::TcpStream::connect(pg.local_addr).await.unwrap();
    s.write_all(&startup("plain")).await.unwrap();
    let mut reply = Vec::new();
    let _ =
        tokio::time::timeout(std::time::Duration::from_secs(5), s.read_to_end(&mut reply)).await;
    let text = String::from_utf8_lossy(&reply);
    assert!(text.contains("28000"), "{text}");
    // An SSLRequest is answered S (the TLS handshake follows).
    let mut s = tokio::net::TcpStream::connect(pg.local_addr).await.unwrap();
    let mut ssl = 8i32.to_be_bytes().to_vec();
    ssl.extend_from_slice(&80_877_103i32.to_be_bytes());
    s.write_all(&ssl).await.unwrap();
    let mut answer = [0u8; 1];
    s.read_exact(&mut answer).await.unwrap();
    assert_eq!(&answer, b"S");
}
