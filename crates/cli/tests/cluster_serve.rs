//! A local cluster of three `rowtree serve --cluster` processes serving a
//! database to a Spanner gRPC client (the client of `crates/check`, which
//! speaks Spanner's wire API as the client libraries do), through any
//! node:
//!
//! * an instance created through one node and a database through another
//!   are in every node's registry (the document in the placement group);
//! * the node that created the database leads its group; the others
//!   forward sessions, commits, queries, schema changes and the schema
//!   change's operation to it, and follow its schema (GetDatabaseDdl
//!   answers from the node's own replica);
//! * after the leader is killed with SIGKILL, the survivors elect a new
//!   one, which serves every acknowledged row and takes new commits
//!   (the time until the first commit succeeds is printed);
//! * dropping the database through one node removes its files on the
//!   others.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rowtree_check::client::{Client, Selector, Statement, TxnMode};
use rowtree_check::wire::{insert, Value};

const ROWTREE: &str = env!("CARGO_BIN_EXE_rowtree");

/// A running `rowtree cluster up`, killed (with its nodes, which stop when
/// their standard input closes) when dropped.
struct Up {
    child: Child,
}

impl Drop for Up {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One node as `cluster up` prints it.
#[derive(Debug, Clone)]
struct NodeLine {
    id: u64,
    addr: SocketAddr,
    pid: u32,
    data: PathBuf,
}

/// Starts `rowtree cluster up --nodes 3` on `dir` and reads the nodes from
/// its banner.
fn up(dir: &Path) -> (Up, Vec<NodeLine>) {
    let mut child = Command::new(ROWTREE)
        .args(["cluster", "up", "--nodes", "3", "--timeout", "60", "--dir"])
        .arg(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start rowtree cluster up");
    let stdout = child.stdout.take().expect("stdout");
    let up = Up { child };
    let mut nodes = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.expect("read cluster up's output");
        if let Some(node) = parse_node(&line) {
            nodes.push(node);
        }
        if line.contains("Ctrl-C stops it") {
            assert_eq!(nodes.len(), 3, "three nodes in the banner");
            return (up, nodes);
        }
    }
    panic!("cluster up ended before the cluster was up");
}

/// `  node 2: SPANNER_EMULATOR_HOST=127.0.0.1:P  peer port ...  pid N  data D  log L`.
fn parse_node(line: &str) -> Option<NodeLine> {
    let rest = line.trim_start().strip_prefix("node ")?;
    let (id, rest) = rest.split_once(':')?;
    let field = |name: &str| -> Option<&str> {
        let at = rest.find(name)? + name.len();
        rest[at..].split_whitespace().next()
    };
    Some(NodeLine {
        id: id.parse().ok()?,
        addr: field("SPANNER_EMULATOR_HOST=")?.parse().ok()?,
        pid: field("pid ")?.parse().ok()?,
        data: PathBuf::from(field("data ")?),
    })
}

/// Retries `f` while it fails, up to `limit`; returns its value and how
/// long it took.
async fn retry<T, F, Fut>(what: &str, limit: Duration, mut f: F) -> (T, Duration)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = rowtree_check::Result<T>>,
{
    let start = Instant::now();
    loop {
        match f().await {
            Ok(v) => return (v, start.elapsed()),
            Err(e) if start.elapsed() < limit => {
                eprintln!("{what}: {e}; again");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => panic!("{what}: still failing after {limit:?}: {e}"),
        }
    }
}

async fn count(client: &Client, db: &str) -> rowtree_check::Result<i64> {
    let session = client.create_session(db).await?;
    client
        .execute_sql(
            &session,
            &Statement::new("SELECT COUNT(*) FROM T"),
            Selector::strong(),
        )
        .await?
        .single_int()
}

async fn write(client: &Client, db: &str, ids: std::ops::Range<i64>) -> rowtree_check::Result<()> {
    let session = client.create_session(db).await?;
    let rows = ids
        .map(|i| vec![Value::from(i), Value::from(format!("v{i}"))])
        .collect();
    client
        .commit(
            &session,
            Selector::SingleUse(TxnMode::ReadWrite),
            vec![insert("T", &["Id", "V"], rows)],
        )
        .await
        .map(|_| ())
}

fn databases_on(node: &NodeLine) -> usize {
    std::fs::read_dir(node.data.join("databases")).map_or(0, |d| d.count())
}

#[test]
fn a_database_is_served_through_every_node_and_survives_the_kill_of_its_leader() {
    let dir = tempfile::tempdir().unwrap();
    let (_up, nodes) = up(dir.path());
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut clients = Vec::new();
        for n in &nodes {
            clients.push(Client::connect(n.addr).await.expect("connect"));
        }
        let (c1, c2, c3) = (&clients[0], &clients[1], &clients[2]);

        // The instance through node 3, the database through node 1.
        let instance = c3.create_instance("inst").await.expect("create instance");
        let db = c1
            .create_database(
                &instance,
                "db",
                &["CREATE TABLE T (Id INT64 NOT NULL, V STRING(MAX)) PRIMARY KEY (Id)"],
            )
            .await
            .expect("create database through node 1");

        // Node 1 leads; nodes 2 and 3 forward.
        write(c2, &db, 0..10).await.expect("commit through node 2");
        assert_eq!(count(c3, &db).await.expect("query through node 3"), 10);
        assert_eq!(count(c1, &db).await.expect("query through node 1"), 10);

        // A schema change through node 3, its operation awaited there.
        c3.update_ddl(&db, &["CREATE INDEX TByV ON T(V)"], Duration::from_secs(30))
            .await
            .expect("schema change through node 3");
        // Every node's replica follows the schema.
        for (n, c) in nodes.iter().zip(&clients) {
            retry(
                &format!("node {}'s schema", n.id),
                Duration::from_secs(10),
                || async {
                    let ddl = c.get_ddl(&db).await?;
                    if ddl.iter().any(|s| s.contains("TByV")) {
                        Ok(())
                    } else {
                        Err(rowtree_check::Error::Protocol(format!(
                            "no index yet: {ddl:?}"
                        )))
                    }
                },
            )
            .await;
        }

        // Kill the leader's process.
        let leader = &nodes[0];
        let status = Command::new("kill")
            .args(["-9", &leader.pid.to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let killed = Instant::now();
        let (_, took) = retry("a commit after the kill", Duration::from_secs(30), || {
            write(c2, &db, 10..20)
        })
        .await;
        let resumed = killed.elapsed();
        eprintln!(
            "writes resumed {:.2} s after the leader was killed (the last attempt took {:.2} s)",
            resumed.as_secs_f64(),
            took.as_secs_f64()
        );
        let (n, _) = retry("a query after the kill", Duration::from_secs(10), || {
            count(c3, &db)
        })
        .await;
        assert_eq!(n, 20, "every acknowledged row, through node 3");
        assert_eq!(count(c2, &db).await.unwrap(), 20);

        // Dropping the database through node 3 removes it on node 2 too.
        assert!(databases_on(&nodes[1]) >= 1);
        c3.database_admin()
            .drop_database(rowtree_check::proto::dpb::DropDatabaseRequest {
                database: db.clone(),
            })
            .await
            .expect("drop through node 3");
        retry(
            "node 2 removing the dropped database",
            Duration::from_secs(10),
            || async {
                match databases_on(&nodes[1]) {
                    0 => Ok(()),
                    n => Err(rowtree_check::Error::Protocol(format!("{n} left"))),
                }
            },
        )
        .await;
        assert!(count(c2, &db).await.is_err(), "the database is gone");
    });
}
