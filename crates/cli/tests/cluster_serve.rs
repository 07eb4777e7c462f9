//! A local cluster of four `rowtree serve --cluster` processes serving a
//! database replicated on three of them to a Spanner gRPC client (the
//! client of `crates/check`, which speaks Spanner's wire API as the client
//! libraries do), through any node:
//!
//! * an instance created through one node and a database through another
//!   are in every node's registry (the document in the placement group);
//! * the node that created the database hands its group's leadership to
//!   the node the registry chose (`rowtree cluster status` shows it); the
//!   others forward sessions, commits, queries, schema changes and the
//!   schema change's operation to it, and follow its schema
//!   (GetDatabaseDdl answers from the node's own replica); the fourth
//!   node, which holds no replica, lists the database and sends its
//!   requests to a node that does;
//! * after the leader is killed with SIGKILL, the survivors elect a new
//!   one, which serves every acknowledged row and takes new commits
//!   (the time until the first commit succeeds is printed);
//! * dropping the database through one node removes its files on the
//!   others, and its group's log from their log stores;
//! * a node stopped on purpose (SIGTERM) has the idle read-write
//!   transactions of the clients it brought in rolled back at once, so a
//!   request of its own waiting for their locks finishes its drain;
//! * so does a node killed and started again at once (its new process's
//!   start time tells the leader);
//! * a commit forwarded to the leader, which dies before answering, gets
//!   a settled answer (here: not committed, ABORTED) rather than a broken
//!   call with its outcome unknown;
//! * with the database's two splits led by different nodes, the node
//!   running a commit across both crashes between its two phases (a crash
//!   point, with the `failpoints` feature, which `scripts/check` builds
//!   with): after the prepare, the transaction is aborted everywhere;
//!   after the decision, committed everywhere; either way the other
//!   split's leader settles it as one of a node gone; a participant
//!   crashing after its prepare leaves the commit aborted; a node
//!   crashing in a split, after the cut, or in a merge, after the freeze,
//!   has the split's groups made, or the merge finished, once it is
//!   started again;
//! * a stale read through a node that holds a replica but does not lead
//!   is served by that node's replica below its closed timestamp (a
//!   follower read, marked `x-rowtree-follower-read`), also while the
//!   leader's process is paused with SIGSTOP; a strong read through it
//!   still goes to the leader;
//! * a split point cuts the database's group in two on every replica's
//!   node, and once it expires the two groups are merged back into one on
//!   every node (`--merge-after`), with every row kept; with three
//!   replicas per split on four hosts, the right group first takes the
//!   left one's four voters;
//! * a node holding a replica that is removed from the cluster is
//!   replaced by the fourth node, which gets the data and votes: the
//!   database survives the loss of its leader afterwards;
//! * a fifth node joining receives a replica from the node holding the
//!   most, which closes and deletes its copy; the new replica votes.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rowtree_check::client::{Client, Selector, Statement, TxnMode};
use rowtree_check::wire::{insert, insert_or_update, Value};

const ROWTREE: &str = env!("CARGO_BIN_EXE_rowtree");

std::thread_local! {
    /// The cluster directory of the test running on this thread (each
    /// test runs on a thread of its own, and `Runtime::block_on` drives its
    /// futures on it): [`retry`]'s failure prints the nodes' log tails from
    /// it, as the directory is deleted with the test.
    static CLUSTER_DIR: std::cell::RefCell<Option<PathBuf>> =
        const { std::cell::RefCell::new(None) };
}

/// The nodes' log filter. Each transaction decided across nodes gets a
/// line in the node's log (`decided_across_nodes`), as does each strong
/// read sent to a split's leader (`read_at_leaders`).
const NODE_LOG_FILTER: &str = "info,openraft=error,rowtree_cluster::raft::groups::spanning=debug,\
     rowtree_cluster::raft::groups::reads=debug,rowtree_cluster::node::participant=debug";

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
    /// Its key visualizer's HTTP address.
    keyviz: SocketAddr,
    pid: u32,
    data: PathBuf,
}

/// Starts `rowtree cluster up --nodes 4` on `dir` and reads the nodes from
/// its banner; returns it and the cluster's directory. `cluster up` picks free ports by binding and releasing them,
/// so a cluster starting beside it (the tests run in parallel) can take
/// one first; a start that ends early is tried again (its error printed),
/// up to three times.
fn up(dir: &Path) -> (Up, Vec<NodeLine>, PathBuf) {
    up_with(dir, &[])
}

/// [`up`] with more `rowtree serve` flags for every node.
fn up_with(dir: &Path, serve_flags: &[&str]) -> (Up, Vec<NodeLine>, PathBuf) {
    up_with_env(dir, serve_flags, &[])
}

/// [`up_with`], with more environment variables for every node.
fn up_with_env(
    dir: &Path,
    serve_flags: &[&str],
    env: &[(&str, &str)],
) -> (Up, Vec<NodeLine>, PathBuf) {
    for attempt in 1..=3 {
        let log = dir.join(format!("cluster-up-{attempt}.log"));
        let cluster = dir.join(format!("cluster-{attempt}"));
        let mut child = Command::new(ROWTREE)
            .env("RUST_LOG", NODE_LOG_FILTER)
            .envs(env.iter().copied())
            .args(["cluster", "up", "--nodes", "4", "--timeout", "60", "--dir"])
            .arg(&cluster)
            .arg("--")
            .args(serve_flags)
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).expect("cluster up's log"))
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
                assert_eq!(nodes.len(), 4, "four nodes in the banner");
                CLUSTER_DIR.with(|d| *d.borrow_mut() = Some(cluster.clone()));
                return (up, nodes, cluster);
            }
        }
        drop(up);
        eprintln!(
            "cluster up ended before the cluster was up (attempt {attempt}): {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
    }
    panic!("cluster up ended before the cluster was up, three times");
}

/// `  node 2: SPANNER_EMULATOR_HOST=127.0.0.1:P  peer port ...  key visualizer
/// http://127.0.0.1:H/  pid N  data D  log L`.
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
        keyviz: field("key visualizer http://")?
            .trim_end_matches('/')
            .parse()
            .ok()?,
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
            Err(e) => {
                let tails = CLUSTER_DIR
                    .with(|d| d.borrow().clone())
                    .map(|dir| node_log_tails(&dir, 40))
                    .unwrap_or_default();
                panic!("{what}: still failing after {limit:?}: {e}\n{tails}")
            }
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
    commit_rows(client, db, ids, insert).await
}

/// Commits rows `ids` of T (value `v<id>`) in one single-use read-write
/// transaction, as the mutation `kind` (insert, insert-or-update) makes them.
async fn commit_rows(
    client: &Client,
    db: &str,
    ids: impl Iterator<Item = i64>,
    kind: fn(&str, &[&str], Vec<Vec<Value>>) -> rowtree_check::proto::pb::Mutation,
) -> rowtree_check::Result<()> {
    let session = client.create_session(db).await?;
    let rows = ids
        .map(|i| vec![Value::from(i), Value::from(format!("v{i}"))])
        .collect();
    client
        .commit(
            &session,
            Selector::SingleUse(TxnMode::ReadWrite),
            vec![kind("T", &["Id", "V"], rows)],
        )
        .await
        .map(|_| ())
}

/// The leader of the cluster's one database group, once it is the node
/// the registry chose (the creating node, node 1, hands it over).
fn wait_for_leader(dir: &Path) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut last = String::new();
    while Instant::now() < deadline {
        let out = Command::new(ROWTREE)
            .args(["cluster", "status", "--format", "json", "--dir"])
            .arg(dir)
            .output()
            .expect("run rowtree cluster status");
        let status: serde_json::Value =
            serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
        if let Some(leader) = status["groups"][0]["leader"].as_u64() {
            if leader != 1 {
                return leader;
            }
        }
        last = String::from_utf8_lossy(&out.stdout).into_owned();
        std::thread::sleep(Duration::from_millis(200));
    }
    panic!("the database group has no leader other than its creator: {last}");
}

fn databases_on(node: &NodeLine) -> usize {
    std::fs::read_dir(node.data.join("databases")).map_or(0, |d| d.count())
}

#[test]
fn a_database_is_served_through_every_node_and_survives_the_kill_of_its_leader() {
    let dir = tempfile::tempdir().unwrap();
    let (up, nodes, cluster) = up(dir.path());
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (group, survivors) = rt.block_on(async {
        let mut clients = Vec::new();
        for n in &nodes {
            clients.push(Client::connect(n.addr).await.expect("connect"));
        }

        // The instance through node 3, the database through node 1: its
        // replicas are on nodes 1 to 3 (the creating node, then the nodes
        // holding the fewest replicas, none yet, lowest id first), none on
        // node 4.
        let instance = clients[2]
            .create_instance("inst")
            .await
            .expect("create instance through node 3");
        let db = table_t(&clients[0], &instance, "db")
            .await
            .expect("create database through node 1");

        // Node 1 made it and handed its leadership to the node the registry
        // chose; the status shows which.
        let leader = wait_for_leader(&cluster);
        assert!(
            [2, 3].contains(&leader),
            "handed over to a replica: {leader}"
        );
        let follower = if leader == 2 { 0 } else { 1 };
        assert_eq!(databases_on(&nodes[3]), 0, "node 4 holds no replica");
        let listed: Vec<String> = clients[3]
            .database_admin()
            .list_databases(rowtree_check::proto::dpb::ListDatabasesRequest {
                parent: instance.clone(),
                ..Default::default()
            })
            .await
            .expect("list through node 4")
            .into_inner()
            .databases
            .into_iter()
            .map(|d| d.name)
            .collect();
        assert_eq!(listed, vec![db.clone()], "node 4 lists it");

        // Every node serves it: the others forward to the leader.
        write(&clients[follower], &db, 0..10)
            .await
            .expect("commit through a node that does not lead");
        for (n, c) in nodes.iter().zip(&clients) {
            let what = format!("a query through node {}", n.id);
            let (rows, _) = retry(&what, Duration::from_secs(10), || count(c, &db)).await;
            assert_eq!(rows, 10, "through node {}", n.id);
        }

        // A schema change through a follower, its operation awaited there.
        clients[follower]
            .update_ddl(&db, &["CREATE INDEX TByV ON T(V)"], Duration::from_secs(30))
            .await
            .expect("schema change through a follower");
        // Every node's replica follows the schema.
        for (n, c) in nodes.iter().zip(&clients) {
            let what = format!("node {}'s schema", n.id);
            retry(&what, Duration::from_secs(10), || async {
                let ddl = c.get_ddl(&db).await?;
                if ddl.iter().any(|s| s.contains("TByV")) {
                    Ok(())
                } else {
                    Err(rowtree_check::Error::Protocol(format!(
                        "no index yet: {ddl:?}"
                    )))
                }
            })
            .await;
        }

        // Kill the leader's process; go on through the others.
        let killed_pid = nodes[(leader - 1) as usize].pid;
        let status = Command::new("kill")
            .args(["-9", &killed_pid.to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let killed = Instant::now();
        let survivors: Vec<usize> = (0..3).filter(|i| *i != (leader - 1) as usize).collect();
        let (a, b) = (&clients[survivors[0]], &clients[survivors[1]]);
        retry("a commit after the kill", Duration::from_secs(30), || {
            write(a, &db, 10..20)
        })
        .await;
        eprintln!(
            "writes resumed {:.2} s after the leader was killed",
            killed.elapsed().as_secs_f64()
        );
        // Through node 4 too, which holds no replica.
        retry("a commit through node 4", Duration::from_secs(10), || {
            write(&clients[3], &db, 20..30)
        })
        .await;
        let (rows, _) = retry("a query after the kill", Duration::from_secs(10), || {
            count(b, &db)
        })
        .await;
        assert_eq!(
            rows, 30,
            "every acknowledged row, through the other survivor"
        );
        assert_eq!(count(a, &db).await.unwrap(), 30);
        assert_eq!(count(&clients[3], &db).await.unwrap(), 30);

        // Dropping the database through one survivor removes it on the other.
        let group = database_groups(&cluster)[0].0;
        let other = &nodes[survivors[1]];
        assert!(databases_on(other) >= 1);
        a.database_admin()
            .drop_database(rowtree_check::proto::dpb::DropDatabaseRequest {
                database: db.clone(),
            })
            .await
            .expect("drop through a survivor");
        let what = "the other survivor removing the dropped database";
        retry(what, Duration::from_secs(10), || async {
            match databases_on(other) {
                0 => Ok(()),
                n => Err(rowtree_check::Error::Protocol(format!("{n} left"))),
            }
        })
        .await;
        let gone = count(b, &db).await.expect_err("the database is gone");
        assert_eq!(gone.code(), Some(tonic::Code::NotFound), "{gone}");
        (
            group,
            survivors
                .iter()
                .map(|i| nodes[*i].clone())
                .collect::<Vec<_>>(),
        )
    });
    // And its group's log: the survivors' log stores hold nothing of it.
    drop(up);
    no_log_of(group, &survivors);
}

/// Waits until `nodes` have stopped, then checks that their log stores
/// hold nothing of `group`.
fn no_log_of(group: u64, nodes: &[NodeLine]) {
    for node in nodes {
        let deadline = Instant::now() + Duration::from_secs(20);
        while running(node.pid) {
            assert!(Instant::now() < deadline, "node {} did not stop", node.id);
            std::thread::sleep(Duration::from_millis(50));
        }
        let store = rowtree_cluster::raft::LogStore::open(node.data.join("raft")).unwrap();
        assert!(
            !store
                .holds_group(rowtree_cluster::raft::GroupId(group))
                .unwrap(),
            "node {} still holds the log of group {group}",
            node.id
        );
    }
}

/// Clients of every node, and a database made through node 1 with row 1
/// in table T, once its group's leader is the node the registry chose
/// (returned).
async fn one_row_database(nodes: &[NodeLine], dir: &Path) -> (Vec<Client>, String, u64) {
    let mut clients = Vec::new();
    for n in nodes {
        clients.push(Client::connect(n.addr).await.expect("connect"));
    }
    let instance = clients[0].create_instance("inst").await.expect("instance");
    let db = table_t(&clients[0], &instance, "db")
        .await
        .expect("database");
    let leader = wait_for_leader(dir);
    retry("the first row", Duration::from_secs(10), || {
        write(&clients[0], &db, 1..2)
    })
    .await;
    (clients, db, leader)
}

/// Creates database `name` in `instance` through `client`, with the table
/// the tests write (`T`: an id and a string); returns its name.
async fn table_t(client: &Client, instance: &str, name: &str) -> rowtree_check::Result<String> {
    client
        .create_database(
            instance,
            name,
            &["CREATE TABLE T (Id INT64 NOT NULL, V STRING(MAX)) PRIMARY KEY (Id)"],
        )
        .await
}

/// Begins a read-write transaction in `session` through `client` that sets
/// row 1's value to `v` (taking its lock) and stays open; returns its id.
async fn hold_row_one(client: &Client, session: &str, v: &str) -> Vec<u8> {
    let id = client
        .begin(session, TxnMode::ReadWrite)
        .await
        .expect("begin");
    client
        .execute_sql_seq(
            session,
            &Statement::new("UPDATE T SET V = @v WHERE Id = 1").param("v", v.to_string()),
            Selector::Id(id.clone()),
            1,
        )
        .await
        .expect("the update of row 1");
    id
}

/// A node stopped on purpose (SIGTERM) says so in its clock heartbeat
/// answers, and the database's leader rolls back at once the idle
/// read-write transactions of the clients that came in through it: their
/// connections are being closed, so they would otherwise hold their locks
/// until they time out (10 s), and a request still in flight through the
/// stopping node, waiting for one of those locks, would hold its drain
/// (and its stop) as long.
#[test]
fn a_stopping_gateway_has_its_clients_idle_transactions_rolled_back_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let (_up, nodes, cluster) = up(dir.path());
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let (clients, db, leader) = one_row_database(&nodes, &cluster).await;

        // Through node 4 (it holds no replica: everything it is sent goes
        // on to the leader), an older transaction takes row 1's lock and
        // goes idle; a younger one asks for the same lock and waits. The
        // older one's session was made straight at the leader: what counts
        // is the way in of the requests that began and ran the transaction.
        let gateway = &clients[3];
        let update =
            |v: &str| Statement::new("UPDATE T SET V = @v WHERE Id = 1").param("v", v.to_string());
        let older_session = clients[(leader - 1) as usize]
            .create_session(&db)
            .await
            .expect("session");
        let older = hold_row_one(gateway, &older_session, "older").await;
        let younger_session = gateway.create_session(&db).await.expect("session");
        let younger = gateway
            .begin(&younger_session, TxnMode::ReadWrite)
            .await
            .expect("begin the younger");
        let waiting = {
            let gateway = gateway.clone();
            let statement = update("younger");
            let (session, id) = (younger_session.clone(), younger.clone());
            tokio::spawn(async move {
                let r = gateway
                    .execute_sql_seq(&session, &statement, Selector::Id(id), 1)
                    .await;
                (r, Instant::now())
            })
        };
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(!waiting.is_finished(), "the younger waits for the lock");

        // Stop node 4 on purpose while the request waits.
        let status = Command::new("kill")
            .args(["-TERM", &nodes[3].pid.to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let stopped = Instant::now();
        let (answer, at) = tokio::time::timeout(Duration::from_secs(30), waiting)
            .await
            .expect("the waiting request ends")
            .expect("the task");
        let waited = at.duration_since(stopped);
        eprintln!(
            "the request waiting through the stopping node ended {:.2} s after SIGTERM: {:?}",
            waited.as_secs_f64(),
            answer.as_ref().map(|_| "updated")
        );
        assert!(
            waited < Duration::from_secs(5),
            "the older transaction's lock was released within the heartbeat, not the idle \
             timeout: {waited:?}"
        );
        answer.expect("the younger got the lock and updated the row");

        // The older transaction was rolled back for its way in; through
        // the leader's own node, its commit says so.
        let direct = &clients[(leader - 1) as usize];
        let refused = direct
            .commit(&older_session, Selector::Id(older), vec![])
            .await
            .expect_err("the older transaction was rolled back");
        assert_eq!(refused.code(), Some(tonic::Code::Aborted), "{refused}");
        assert!(
            refused.to_string().contains("stopped answering"),
            "rolled back for its way in: {refused}"
        );
    });
}

/// A node process started again from a dead one's command line, stopped
/// (its standard input closed, then killed) when dropped.
struct Restarted(Child);

impl Restarted {
    /// Starts a node again from the command line it ran with
    /// (`command[0]` is the program), its log added to the end of the one
    /// `cluster up` gave it (`node.log` in its `--data-dir`).
    fn spawn(command: &[String]) -> Restarted {
        Restarted::spawn_with(command, &[])
    }

    /// [`Restarted::spawn`] with more environment variables.
    fn spawn_with(command: &[String], env: &[(&str, &str)]) -> Restarted {
        let log = command
            .iter()
            .position(|a| a == "--data-dir")
            .and_then(|i| command.get(i + 1))
            .and_then(|dir| {
                std::fs::OpenOptions::new()
                    .append(true)
                    .create(true)
                    .open(Path::new(dir).join("node.log"))
                    .ok()
            });
        Restarted(
            Command::new(&command[0])
                .args(&command[1..])
                .env("RUST_LOG", NODE_LOG_FILTER)
                .envs(env.iter().copied())
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(log.map_or_else(Stdio::null, Stdio::from))
                .spawn()
                .expect("start the node again"),
        )
    }
}

impl Drop for Restarted {
    fn drop(&mut self) {
        drop(self.0.stdin.take());
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Kills `node` with SIGKILL and starts it again at once, with the same
/// command line.
fn kill_and_restart(node: &NodeLine) -> Restarted {
    let pid = node.pid;
    let args = command_of(node);
    let status = Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    Restarted::spawn(&args)
}

/// Sets row `id`'s value to "after" in a single-use commit through
/// `client`, retried for up to 30 s (while a lock it needs is held).
async fn commit_after(client: &Client, session: &str, id: i64) {
    let update = insert_or_update(
        "T",
        &["Id", "V"],
        vec![vec![Value::from(id), Value::from("after".to_string())]],
    );
    retry(
        &format!("a commit on row {id}"),
        Duration::from_secs(30),
        || {
            client.commit(
                session,
                Selector::SingleUse(TxnMode::ReadWrite),
                vec![update.clone()],
            )
        },
    )
    .await;
}

/// A gateway killed with SIGKILL and started again at once may come back
/// between two of the leader's heartbeats, which then never sees it gone;
/// the transactions begun through its old process are still rolled back
/// within a heartbeat of its return (its answers carry its start time),
/// not after the 10 s idle timeout.
#[test]
fn a_gateway_killed_and_restarted_at_once_has_its_old_transactions_rolled_back() {
    let dir = tempfile::tempdir().unwrap();
    let (_up, nodes, cluster) = up(dir.path());
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let (clients, db, leader) = one_row_database(&nodes, &cluster).await;

        // Through node 4, a transaction takes row 1's lock and goes idle.
        let gateway = &clients[3];
        let session = gateway.create_session(&db).await.expect("session");
        let orphan = hold_row_one(gateway, &session, "orphan").await;

        // Node 4 dies and is started again at once, with the same command.
        let _again = kill_and_restart(&nodes[3]);
        let killed = Instant::now();

        // Through the leader's own node, a commit needing row 1's lock waits
        // until the orphan is rolled back.
        let direct = &clients[(leader - 1) as usize];
        let direct_session = direct.create_session(&db).await.expect("session");
        commit_after(direct, &direct_session, 1).await;
        let waited = killed.elapsed();
        eprintln!(
            "row 1's lock was free {:.2} s after node 4 was killed and started again",
            waited.as_secs_f64()
        );
        let refused = direct
            .commit(&session, Selector::Id(orphan), vec![])
            .await
            .expect_err("the orphan was rolled back");
        assert_eq!(refused.code(), Some(tonic::Code::Aborted), "{refused}");
        assert!(refused.to_string().contains("node 4"), "{refused}");
        eprintln!("the orphan's commit: {refused}");
        assert!(
            waited < Duration::from_secs(6),
            "rolled back within a heartbeat of node 4's return, not the idle timeout: {waited:?}"
        );
    });
}

/// With the database's two splits led by different nodes
/// (`--spread-leases`), a transaction run by the first split's leader
/// that updates a row of the other split holds that row's lock at the
/// other split's leader. When the transaction's node is killed (and
/// started again at once), the other leader lets the lock go as soon as
/// it sees the node's process is gone, not after the 10 s idle timeout:
/// a commit of the row through it waits only that long.
#[test]
fn the_locks_a_killed_node_held_at_another_splits_leader_are_let_go_at_once() {
    let apart = HalvesApart::start();
    let (nodes, db, first, other) = (&apart.nodes, &apart.db, apart.first, apart.other);
    apart.rt.block_on(async {
        let runner = apart.client(first);

        // Through the first split's leader, a transaction updates row 500
        // (its lock taken at node `other`) and stays open.
        let session = runner.create_session(db).await.expect("session");
        let (orphan, _) = retry("a transaction on row 500", Duration::from_secs(10), || {
            runner.begin(&session, TxnMode::ReadWrite)
        })
        .await;
        runner
            .execute_sql_seq(
                &session,
                &Statement::new("UPDATE T SET V = 'orphan' WHERE Id = 500"),
                Selector::Id(orphan),
                1,
            )
            .await
            .expect("the update of row 500");
        let let_go_before = log_lines(nodes, "its locks here let go");
        let direct = apart.client(other);
        let direct_session = direct.create_session(db).await.expect("session");

        let _again = kill_and_restart(apart.node(first));
        let killed = Instant::now();
        commit_after(direct, &direct_session, 500).await;
        let waited = killed.elapsed();
        eprintln!(
            "row 500's lock was free {:.2} s after node {first} was killed and started again",
            waited.as_secs_f64()
        );
        let let_go = log_lines(nodes, "its locks here let go") - let_go_before;
        assert!(let_go >= 1, "node {other} logged no lock let go");
        assert!(
            waited < Duration::from_secs(7),
            "let go once node {first}'s process was seen gone, not after the idle timeout: \
             {waited:?}"
        );
    });
}

/// A transaction run by the first split's leader that writes rows of both
/// halves (led by different nodes) commits in two phases: the other
/// split's leader prepares row 500, then the first split records the
/// decision. Here every node has a crash point set (a fail point that
/// aborts the process, `rowtree_cluster::failpoints`) after the prepare,
/// before the decision: the node running the transaction crashes there,
/// and is started again. Nothing was decided, so the transaction must be
/// aborted everywhere. The participant sees the node gone and settles
/// the transaction with the first split's leader as one of a node gone
/// (its log says `node_gone=true`), which it does at once rather than
/// once the transaction has been prepared for 3 s; row 500 is readable
/// again, and neither row changed.
#[cfg(feature = "failpoints")]
#[test]
fn a_node_crashing_after_the_prepare_leaves_its_commit_aborted_everywhere() {
    crash_between_the_phases("cluster::2pc::after_prepare", false, Some("Abort"));
}

/// As [`a_node_crashing_after_the_prepare_leaves_its_commit_aborted_everywhere`],
/// with the crash after the first split recorded the commit decision,
/// before any participant was told: the commit point was passed, so the
/// transaction must be committed everywhere. The participant learns the
/// outcome from the first split's leader, and both rows hold the
/// transaction's writes.
#[cfg(feature = "failpoints")]
#[test]
fn a_node_crashing_after_the_decision_leaves_its_commit_committed_everywhere() {
    crash_between_the_phases("cluster::2pc::after_decide", true, Some("Commit"));
}

/// As [`a_node_crashing_after_the_prepare_leaves_its_commit_aborted_everywhere`],
/// with the crash at the participant: the other split's leader applies
/// its `Prepare` entry and crashes before answering. The node running the
/// transaction never hears that it prepared and aborts it; the prepared
/// entry left in the other split's log is settled with the first split by
/// whichever node leads that split next (the restarted one or another).
/// The client's commit is answered ABORTED, and neither row changed.
#[cfg(feature = "failpoints")]
#[test]
fn a_participant_crashing_after_its_prepare_leaves_the_commit_aborted_everywhere() {
    crash_between_the_phases("cluster::2pc::participant_prepared", false, None);
}

/// The three tests above: a cluster whose every node has `point` set to
/// `return`, and a commit across the halves that crashes a node; the node
/// is started again. Then rows 50 and 500, read through a node that did
/// not crash, hold the commit's writes if it `commits`, else what they
/// held before. The commit's answer is an error, ABORTED when the node
/// the client called is not the one that crashed. (A commit that crashed
/// nothing, as the leaders changed in between, is made again.)
/// A participant's log shows it settled the transaction (`settled`: the
/// outcome) as one of a node gone. (Nothing more is committed across the
/// halves: a node that took over a split from the crashed one has the
/// crash point set too.)
#[cfg(feature = "failpoints")]
fn crash_between_the_phases(point: &str, commits: bool, settled: Option<&str>) {
    let failing = format!("{point}=return");
    let apart = HalvesApart::start_with(&[("ROWTREE_FAILPOINTS", &failing)]);
    let db = &apart.db;
    let args: Vec<Vec<String>> = apart.nodes.iter().map(command_of).collect();
    let settled_before = settled_lines(&apart.nodes);
    // What rows 50 and 500 hold before the commit that crashes a node.
    let mut before = ["v50".to_string(), "v500".to_string()];
    let (first, other, value, refused) = apart.rt.block_on(async {
        for attempt in 1..=3 {
            let (first, other) = led_apart(&apart.cluster).await;
            let runner = apart.client(first);
            let (session, _) = retry("a session", Duration::from_secs(30), || {
                runner.create_session(db)
            })
            .await;
            let value = format!("crash {attempt}");
            let update = insert_or_update(
                "T",
                &["Id", "V"],
                vec![
                    vec![Value::from(50), Value::from(value.clone())],
                    vec![Value::from(500), Value::from(value.clone())],
                ],
            );
            // Begun first, so that the server does not try the commit
            // again (it retries a single-use one that aborts): another try
            // would crash another node that the split's leadership moved to.
            let (txn, _) = retry("a transaction", Duration::from_secs(30), || {
                runner.begin(&session, TxnMode::ReadWrite)
            })
            .await;
            let answer = runner
                .commit(&session, Selector::Id(txn), vec![update])
                .await;
            eprintln!("{point}: the commit through node {first}: {answer:?}");
            match answer {
                Err(refused) => return (first, other, value, refused),
                // Committed with no crash: the halves' leaders changed
                // between the look and the commit, which did not span two
                // nodes. Again.
                Ok(_) => {
                    eprintln!(
                        "{point}: no node crashed (the groups' leaders now: {:?}); again",
                        group_leaders(&apart.cluster)
                    );
                    before = [value.clone(), value];
                }
            }
        }
        panic!("{point}: three commits across the halves crashed no node");
    });
    // The node that crashed: for a crash point of the node running the
    // transaction, the first split's leader (unless the leadership moved
    // since it was looked up).
    let crashed = Instant::now();
    let dead = crashed_node(&apart.nodes, point, Duration::from_secs(10));
    eprintln!("{point}: node {dead} crashed (node {first} led the first split)");
    if dead != first {
        // The node the client called answered.
        assert_eq!(
            refused.code(),
            Some(tonic::Code::Aborted),
            "{point}: {refused}"
        );
    }
    let expected = if commits {
        [value.clone(), value]
    } else {
        before
    };
    // Started again, without the fail point.
    let _again = Restarted::spawn(&args[(dead - 1) as usize]);

    // Through the other split's leader, row 500 is readable once the
    // participant settled the transaction.
    let reader = apart.client(if dead == other { first } else { other });
    let both = Statement::new("SELECT Id, V FROM T WHERE Id IN (50, 500) ORDER BY Id");
    let (read, _) = apart.rt.block_on(async {
        let (session, _) = retry(
            &format!("{point}: a session"),
            Duration::from_secs(30),
            || reader.create_session(db),
        )
        .await;
        retry(
            &format!("{point}: rows 50 and 500"),
            Duration::from_secs(30),
            || reader.execute_sql(&session, &both, Selector::strong()),
        )
        .await
    });
    eprintln!(
        "{point}: rows 50 and 500 read {:.2} s after the crash",
        crashed.elapsed().as_secs_f64()
    );
    assert_eq!(
        read.rows,
        vec![
            vec![Value::Int64(50), Value::String(expected[0].clone())],
            vec![Value::Int64(500), Value::String(expected[1].clone())],
        ],
        "{point}: rows 50 and 500"
    );
    if let Some(outcome) = settled {
        let settled: Vec<String> = settled_lines(&apart.nodes)
            .into_iter()
            .filter(|l| !settled_before.contains(l))
            .collect();
        eprintln!("{point}: settled: {settled:?}");
        assert!(
            settled
                .iter()
                .any(|l| l.contains("node_gone=true") && l.contains(outcome)),
            "{point}: a participant settled the transaction ({outcome}) as one of a node \
             gone: {settled:?}"
        );
    }
}

/// Waits (at most 60 s) for a node to crash at `point` ([`crashed_node`]),
/// starts it again from its command line (`args`, by node) without the
/// point, and waits until the status shows `groups` database groups, each
/// with three voters; returns the node and its new process.
#[cfg(feature = "failpoints")]
fn restarted_into_groups(
    nodes: &[NodeLine],
    args: &[Vec<String>],
    cluster: &Path,
    point: &str,
    groups: usize,
) -> (u64, Restarted) {
    let dead = crashed_node(nodes, point, Duration::from_secs(60));
    let crashed = Instant::now();
    let again = Restarted::spawn(&args[(dead - 1) as usize]);
    wait_for_groups(cluster, groups, None);
    eprintln!(
        "{point}: {groups} groups {:.2} s after node {dead} crashed: {:?}",
        crashed.elapsed().as_secs_f64(),
        database_groups(cluster)
    );
    (dead, again)
}

/// Waits (at most `limit`) until one of `nodes` has stopped, and checks
/// that its log says it ended at the crash point `point`; returns its id.
#[cfg(feature = "failpoints")]
fn crashed_node(nodes: &[NodeLine], point: &str, limit: Duration) -> u64 {
    let started = Instant::now();
    let node = loop {
        if let Some(node) = nodes.iter().find(|n| !running(n.pid)) {
            break node;
        }
        assert!(
            started.elapsed() < limit,
            "{point}: no node crashed within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let log = std::fs::read_to_string(node.data.join("node.log")).unwrap_or_default();
    let line = format!("fail point {point}: the process ends here");
    assert!(
        log.contains(&line),
        "node {}'s log does not say it crashed at {point}",
        node.id
    );
    node.id
}

/// The lines of the nodes' logs that say a node settled a transaction
/// prepared there for another node.
#[cfg(feature = "failpoints")]
fn settled_lines(nodes: &[NodeLine]) -> Vec<String> {
    nodes
        .iter()
        .flat_map(|n| {
            std::fs::read_to_string(n.data.join("node.log"))
                .unwrap_or_default()
                .lines()
                .filter(|l| l.contains("settled a transaction prepared here for another node"))
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// A cluster of four nodes run with `--spread-leases`, and a database
/// (see [`one_row_database`]) cut at Id 100 whose two splits' groups are
/// led by different nodes, with rows 50 and 500 written.
struct HalvesApart {
    _dir: tempfile::TempDir,
    /// The cluster's directory (its `cluster.json`).
    cluster: PathBuf,
    _up: Up,
    nodes: Vec<NodeLine>,
    rt: tokio::runtime::Runtime,
    clients: Vec<Client>,
    db: String,
    /// The node leading the first split (Ids below 100).
    first: u64,
    /// The node leading the other split.
    other: u64,
}

impl HalvesApart {
    fn start() -> HalvesApart {
        HalvesApart::start_with(&[])
    }

    /// [`HalvesApart::start`] with more environment variables for every
    /// node.
    fn start_with(env: &[(&str, &str)]) -> HalvesApart {
        let dir = tempfile::tempdir().unwrap();
        let (up, nodes, cluster) = up_with_env(dir.path(), &["--spread-leases"], env);
        let rt = tokio::runtime::Runtime::new().unwrap();
        let (clients, db, first, other) = rt.block_on(halves_led_apart(&nodes, &cluster));
        HalvesApart {
            _dir: dir,
            cluster,
            _up: up,
            nodes,
            rt,
            clients,
            db,
            first,
            other,
        }
    }

    /// A client of node `id`.
    fn client(&self, id: u64) -> &Client {
        &self.clients[(id - 1) as usize]
    }

    /// Node `id`'s line.
    fn node(&self, id: u64) -> &NodeLine {
        &self.nodes[(id - 1) as usize]
    }
}

/// The database of [`HalvesApart`], made: the clients, its name, and the
/// nodes leading the first split and the other.
async fn halves_led_apart(nodes: &[NodeLine], cluster: &Path) -> (Vec<Client>, String, u64, u64) {
    let (clients, db, _) = one_row_database(nodes, cluster).await;
    // Written before the cut, so that nothing commits across the halves
    // before a test does (the crash points of the fail point tests are set
    // on every node from the start).
    for id in [50, 500] {
        retry("rows 50 and 500", Duration::from_secs(10), || {
            commit_rows(&clients[0], &db, id..id + 1, insert_or_update)
        })
        .await;
    }
    clients[0]
        .add_split_points(&db, "T", &[vec![Value::from(100)]])
        .await
        .expect("AddSplitPoints");
    let (first, other) = led_apart(cluster).await;
    eprintln!("the halves are led by nodes {first} and {other}");
    (clients, db, first, other)
}

/// Waits (at most 60 s) until the database's two groups have been led by
/// the same two different nodes for 2 s, each group with three voters;
/// returns the first split's leader and the other's.
async fn led_apart(cluster: &Path) -> (u64, u64) {
    let started = Instant::now();
    let mut seen: Option<((u64, u64), Instant)> = None;
    loop {
        let leaders = group_leaders(cluster);
        let now = match leaders[..] {
            [Some(a), Some(b)]
                if a != b && database_groups(cluster).iter().all(|g| g.2.len() == 3) =>
            {
                Some((a, b))
            }
            _ => None,
        };
        seen = match (seen, now) {
            (Some((was, since)), Some(now)) if was == now => Some((was, since)),
            (_, now) => now.map(|now| (now, Instant::now())),
        };
        if let Some((pair, since)) = seen {
            if since.elapsed() >= Duration::from_secs(2) {
                return pair;
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the two groups were not led by the same different nodes for 2 s within 60 s: \
             {:?}",
            database_groups(cluster)
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// A transaction run by one node that writes `spanner.commit_timestamp()`
/// into rows of both halves, led by different nodes, commits, and both
/// rows hold its commit timestamp. The row of the other node's split is
/// prepared there as a template (the columns to stamp, and the row) that
/// the split's replicas stamp when the commit is applied. Before, such a
/// commit was refused (FAILED_PRECONDITION).
#[test]
fn a_commit_timestamp_written_across_nodes_is_the_transactions() {
    let apart = HalvesApart::start();
    let db = &apart.db;
    apart.rt.block_on(async {
        let runner = apart.client(apart.first);
        retry(
            "the commit timestamp column",
            Duration::from_secs(30),
            || {
                runner.update_ddl(
                db,
                &["ALTER TABLE T ADD COLUMN Stamped TIMESTAMP OPTIONS (allow_commit_timestamp = true)"],
                Duration::from_secs(30),
            )
            },
        )
        .await;
        let session = runner.create_session(db).await.expect("session");
        let pending = || Value::Timestamp("spanner.commit_timestamp()".into());
        let rows = vec![
            vec![Value::from(50), Value::from("c50".to_string()), pending()],
            vec![Value::from(500), Value::from("c500".to_string()), pending()],
        ];
        let (committed, _) = retry(
            "the commit across both halves",
            Duration::from_secs(30),
            || {
                runner.commit(
                    &session,
                    Selector::SingleUse(TxnMode::ReadWrite),
                    vec![insert_or_update("T", &["Id", "V", "Stamped"], rows.clone())],
                )
            },
        )
        .await;
        // Still led apart: the commit spanned the two nodes.
        let leaders = group_leaders(&apart.cluster);
        assert_eq!(
            leaders,
            vec![Some(apart.first), Some(apart.other)],
            "the halves' leaders after the commit"
        );
        let nanos = i128::from(committed.seconds) * 1_000_000_000 + i128::from(committed.nanos);
        let expected = rowtree_types::Timestamp::from_nanos(nanos)
            .expect("a commit timestamp in range")
            .to_rfc3339();
        let reader = apart.client(apart.other);
        let reader_session = reader.create_session(db).await.expect("session");
        let read = reader
            .execute_sql(
                &reader_session,
                &Statement::new("SELECT Id, V, Stamped FROM T WHERE Id IN (50, 500) ORDER BY Id"),
                Selector::strong(),
            )
            .await
            .expect("rows 50 and 500");
        assert_eq!(
            read.rows,
            vec![
                vec![
                    Value::Int64(50),
                    Value::String("c50".into()),
                    Value::Timestamp(expected.clone())
                ],
                vec![
                    Value::Int64(500),
                    Value::String("c500".into()),
                    Value::Timestamp(expected)
                ],
            ],
            "both rows hold the commit timestamp"
        );
    });
}

/// A transaction that read a row of the split led by another node, under
/// a shared lock there, and writes only rows of splits its own node
/// leads, must still hold that lock when it commits. Here the other node
/// is killed (and started again) after the read: the lock went with its
/// process, and any transaction could have updated the row since. The
/// commit is refused ABORTED. Before, nothing asked the reading node at
/// commit, and such a transaction committed on a stale read (found by the
/// anomaly checker with leaders spread and kills: a G2 cycle).
#[test]
fn a_transaction_that_lost_a_read_lock_at_another_node_does_not_commit() {
    let apart = HalvesApart::start();
    let db = &apart.db;
    apart.rt.block_on(async {
        let runner = apart.client(apart.first);
        let session = runner.create_session(db).await.expect("session");
        let txn = runner
            .begin(&session, TxnMode::ReadWrite)
            .await
            .expect("begin");
        let read = runner
            .execute_sql(
                &session,
                &Statement::new("SELECT V FROM T WHERE Id = 500"),
                Selector::Id(txn.clone()),
            )
            .await
            .expect("row 500 read under its lock at the other split's leader");
        assert_eq!(read.rows.len(), 1);

        let _again = kill_and_restart(apart.node(apart.other));
        runner
            .execute_sql_seq(
                &session,
                &Statement::new("UPDATE T SET V = 'stale' WHERE Id = 50"),
                Selector::Id(txn.clone()),
                1,
            )
            .await
            .expect("the update of row 50, led by the transaction's node");
        let refused = runner
            .commit(&session, Selector::Id(txn), vec![])
            .await
            .expect_err("its lock on row 500 was lost: it must not commit");
        eprintln!("the commit: {refused}");
        assert_eq!(refused.code(), Some(tonic::Code::Aborted), "{refused}");

        let check = runner.create_session(db).await.expect("session");
        let row_50 = Statement::new("SELECT V FROM T WHERE Id = 50");
        let (rows, _) = retry("row 50", Duration::from_secs(20), || {
            runner.execute_sql(&check, &row_50, Selector::strong())
        })
        .await;
        assert_eq!(
            rows.rows[0][0].as_str(),
            Some("v50"),
            "row 50 kept its value"
        );
    });
}

/// A client's commit that a follower forwards to the leader, which is
/// killed before it answers, gets a settled answer from the follower: it
/// tagged the commit, and asks the next leader whether the tag was
/// committed, rather than relaying the broken call (UNAVAILABLE, outcome
/// unknown). Here the commit waits for a lock when the leader dies, so
/// it never committed: the answer is ABORTED, which the client retries.
#[test]
fn a_forwarded_commit_whose_leader_dies_gets_a_settled_answer() {
    let dir = tempfile::tempdir().unwrap();
    let (_up, nodes, cluster) = up(dir.path());
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let (clients, db, leader) = one_row_database(&nodes, &cluster).await;
        // A follower holding a replica: it sends commits to the leader
        // itself, tagged.
        let follower = (1..=3).find(|id| *id != leader).expect("a follower");
        let gateway = &clients[(follower - 1) as usize];

        // An older transaction takes row 1's lock and goes idle; a younger
        // single-use commit on row 1 waits for it at the leader.
        let older_session = gateway.create_session(&db).await.expect("session");
        hold_row_one(gateway, &older_session, "older").await;
        let waiting = {
            let gateway = gateway.clone();
            let db = db.clone();
            tokio::spawn(async move {
                let session = gateway.create_session(&db).await.expect("session");
                let update = insert_or_update(
                    "T",
                    &["Id", "V"],
                    vec![vec![Value::from(1i64), Value::from("younger".to_string())]],
                );
                let r = gateway
                    .commit(
                        &session,
                        Selector::SingleUse(TxnMode::ReadWrite),
                        vec![update],
                    )
                    .await;
                (r, Instant::now())
            })
        };
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(
            !waiting.is_finished(),
            "the younger commit waits for the lock"
        );

        // The leader dies with the commit in its hands, and comes back.
        let _again = kill_and_restart(&nodes[(leader - 1) as usize]);
        let killed = Instant::now();
        let (answer, at) = tokio::time::timeout(Duration::from_secs(40), waiting)
            .await
            .expect("the commit is answered")
            .expect("the task");
        let took = at.duration_since(killed);
        let refused = answer.expect_err("the commit never took effect");
        eprintln!(
            "the forwarded commit was answered {:.2} s after its leader was killed: {refused}",
            took.as_secs_f64()
        );
        assert_eq!(refused.code(), Some(tonic::Code::Aborted), "{refused}");
        assert!(
            refused.to_string().contains("was not committed"),
            "settled by the lookup, not by a lock or a wound: {refused}"
        );

        // And indeed row 1 holds neither transaction's value.
        let (v, _) = retry("row 1 after the kill", Duration::from_secs(30), || async {
            let session = gateway.create_session(&db).await?;
            gateway
                .execute_sql(
                    &session,
                    &Statement::new("SELECT COUNT(*) FROM T WHERE Id = 1 AND V = 'v1'"),
                    Selector::strong(),
                )
                .await?
                .single_int()
        })
        .await;
        assert_eq!(v, 1, "row 1 has neither the older nor the younger value");
    });
}

/// `rowtree cluster status --format json` (node 1 answers).
fn cluster_status(dir: &Path) -> serde_json::Value {
    let out = Command::new(ROWTREE)
        .args(["cluster", "status", "--format", "json", "--dir"])
        .arg(dir)
        .output()
        .expect("run rowtree cluster status");
    serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null)
}

/// The leader of the database group, as node 1 sees it.
fn group_leader(dir: &Path) -> Option<u64> {
    cluster_status(dir)["groups"][0]["leader"].as_u64()
}

/// A node holding one of the database's three replicas is removed from
/// the cluster: the database's leader names node 4 in its place, node 4
/// is sent the data and becomes a voter, and the removed node leaves the
/// group. With three replicas again, the database survives the kill of
/// its leader: the survivors (one of them node 4) elect a new one, which
/// serves every acknowledged row.
#[test]
fn a_removed_nodes_replica_is_replaced_and_the_database_keeps_three() {
    removed_replica_is_replaced(false, false);
}

/// As above, with the database's leader itself removed: it hands the
/// group to another member first, which then replaces it.
#[test]
fn a_removed_leaders_replica_is_replaced_too() {
    removed_replica_is_replaced(true, false);
}

/// As above, with the database cut in two by a split point first: node 4
/// takes the removed node's place in both splits' groups (the leader asks
/// it to hold an empty replica of the second split and sends it a
/// snapshot), and the two survivors must then serve both halves.
#[test]
fn a_split_databases_removed_replica_is_replaced_in_every_group() {
    removed_replica_is_replaced(false, true);
}

/// Removes a node holding a replica (the leader, or the follower that is
/// not node 1), waits for node 4 to take its place among the group's
/// voters (every group's, the database first cut at Id 10 if `split`),
/// writes through node 4, kills the leader of the moment, and reads every
/// row back.
fn removed_replica_is_replaced(the_leader: bool, split: bool) {
    let dir = tempfile::tempdir().unwrap();
    let (_up, nodes, cluster) = up(dir.path());
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let (clients, db, leader) = one_row_database(&nodes, &cluster).await;
        retry("rows 2 to 20", Duration::from_secs(10), || {
            write(&clients[0], &db, 2..21)
        })
        .await;
        let (groups, leader) = if split {
            clients[0]
                .add_split_points(&db, "T", &[vec![Value::from(10)]])
                .await
                .expect("AddSplitPoints");
            (2, wait_for_groups(&cluster, 2, Some(1)))
        } else {
            (1, leader)
        };
        // Node 1 (which `cluster status` asks) stays; the leader (never
        // node 1 here) or the other follower goes.
        let gone = if the_leader {
            leader
        } else {
            (2..=3)
                .find(|id| *id != leader)
                .expect("a follower besides node 1")
        };
        let stays = (2..=3).find(|id| *id != gone).expect("the third replica");
        remove_node(&cluster, gone);
        let started = Instant::now();
        let mut expected = vec![1, stays, 4];
        expected.sort_unstable();
        wait_for_voters(
            &cluster,
            &expected,
            groups,
            &format!("node 4 replacing node {gone}"),
        );
        eprintln!(
            "node {gone}'s replica was replaced by node 4 in {:.2} s",
            started.elapsed().as_secs_f64()
        );
        // The removed node's process is told to stop, as an operator would.
        let status = Command::new("kill")
            .args(["-9", &nodes[(gone - 1) as usize].pid.to_string()])
            .status()
            .unwrap();
        assert!(status.success());

        // More rows through node 4, then the leader dies (or, if node 4
        // leads, the other old replica): node 4 and one other are the
        // majority that must elect a leader.
        retry(
            "rows 21 to 40 through node 4",
            Duration::from_secs(20),
            || write(&clients[3], &db, 21..41),
        )
        .await;
        let now_leading = (0..100)
            .find_map(|_| {
                let leader = group_leader(&cluster).filter(|l| expected.contains(l));
                if leader.is_none() {
                    std::thread::sleep(Duration::from_millis(200));
                }
                leader
            })
            .expect("the group has a leader among its voters");
        let victim = if now_leading == 4 { stays } else { now_leading };
        let status = Command::new("kill")
            .args(["-9", &nodes[(victim - 1) as usize].pid.to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let (n, took) = retry(
            "the rows after the leader's kill",
            Duration::from_secs(30),
            || count(&clients[3], &db),
        )
        .await;
        eprintln!(
            "node 4 and one other served all {n} rows {:.2} s after node {victim} was killed",
            took.as_secs_f64()
        );
        assert_eq!(n, 40, "every acknowledged row");
        retry(
            "a commit after the leader's kill",
            Duration::from_secs(30),
            || write(&clients[3], &db, 41..42),
        )
        .await;
        if split {
            // Rows on both sides of the cut in one commit: both groups
            // serve with node 4's votes.
            retry(
                "a commit across both splits after the leader's kill",
                Duration::from_secs(30),
                || write_across(&clients[3], &db, 0),
            )
            .await;
        }
    });
}

/// A node down while a split is cut, and started again once the left
/// half's log has been purged past the cut (`--snapshot-every 20`), is
/// sent an image of the left half and never applies the cut itself, so it
/// holds no replica of the right half, though it is a voter of its group.
/// The right half's leader gives it one back (an empty replica, filled
/// with a snapshot): the right half then survives the kill of another of
/// its three voters, and serves every row. Without it, the right half
/// would keep one live voter of three and commit nothing.
///
/// A leader may keep the entries a follower it cannot reach still needs
/// (openraft purges no entry in flight to a follower), so the image comes
/// from another leader: a follower purges its log freely, and the leader
/// is killed while the node comes back, so that the follower leads.
#[test]
fn a_node_that_missed_a_cut_gets_the_right_half_back() {
    let dir = tempfile::tempdir().unwrap();
    let (_up, nodes, cluster) = up_with(dir.path(), &["--snapshot-every", "20"]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let (clients, db, leader) = one_row_database(&nodes, &cluster).await;
        // The database is on nodes 1 to 3, led by 2 or 3; the other of
        // the two misses the cut, and node 1 then leads while the leader
        // is down.
        let missing = if leader == 2 { 3 } else { 2 };
        let node = &nodes[(missing - 1) as usize];
        let command = command_of(node);
        kill_9(node.pid);
        clients[0]
            .add_split_points(&db, "T", &[vec![Value::from(100)]])
            .await
            .expect("AddSplitPoints");
        wait_for_groups(&cluster, 2, None);
        let first = database_groups(&cluster)[0].0;
        let (cut, _) = log_of(&cluster, first);
        let cut = cut.expect("the first group applied the cut");
        // Commits on the left half (a log entry each) until a replica's
        // log is purged past the cut (each snapshots every 20 entries and
        // keeps 4 below the snapshot), then 40 more, for node 1's too.
        let mut id = 2;
        let started = Instant::now();
        let mut more = 40;
        while more > 0 {
            assert!(
                started.elapsed() < Duration::from_secs(90) && id < 1_000,
                "the first group's log was not purged past the cut (entry {cut}) within 90 s \
                 and {id} commits: {:?}",
                log_of(&cluster, first)
            );
            retry(&format!("row {id}"), Duration::from_secs(20), || {
                write(&clients[0], &db, id..id + 1)
            })
            .await;
            id += 1;
            if log_of(&cluster, first).1.is_some_and(|purged| purged > cut) {
                more -= 1;
            }
        }
        retry("row 500", Duration::from_secs(20), || {
            write(&clients[0], &db, 500..501)
        })
        .await;
        // The leader killed, the node comes back; node 1 leads the left
        // half and sends it the image (a commit there needs both). Then
        // the leader comes back too, and the right half has a leader again.
        let old_leader = &nodes[(leader - 1) as usize];
        let leader_command = command_of(old_leader);
        kill_9(old_leader.pid);
        let _back = Restarted::spawn(&command);
        retry(
            &format!("a commit on the left half by nodes 1 and {missing}"),
            Duration::from_secs(60),
            || write(&clients[0], &db, id..id + 1),
        )
        .await;
        id += 1;
        let mut leader_back = Restarted::spawn(&leader_command);
        let started = Instant::now();
        while log_lines(&nodes, "it missed the cut that made the split") == 0 {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "node {missing} was not given the right half back within 60 s\n{}",
                node_log_tails(&cluster, 40)
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        eprintln!(
            "node {missing} was given the right half back {:.2} s after node {leader} restarted",
            started.elapsed().as_secs_f64()
        );
        // The right half now needs node `missing`'s vote.
        kill_9(leader_back.0.id());
        let _ = leader_back.0.wait();
        retry(
            "a commit on the right half after the kill",
            Duration::from_secs(30),
            || write(&clients[0], &db, 501..502),
        )
        .await;
        let (n, _) = retry("every row", Duration::from_secs(30), || {
            count(&clients[0], &db)
        })
        .await;
        assert_eq!(
            n,
            id + 1,
            "every acknowledged row: 1 to {}, 500 and 501",
            id - 1
        );
    });
}

/// The applied and purged indexes of database group `group` in the
/// cluster's status.
fn log_of(dir: &Path, group: u64) -> (Option<u64>, Option<u64>) {
    let status = cluster_status(dir);
    status["groups"]
        .as_array()
        .and_then(|groups| groups.iter().find(|g| g["group"].as_u64() == Some(group)))
        .map_or((None, None), |g| {
            (g["applied_index"].as_u64(), g["purged_index"].as_u64())
        })
}

/// A node holding one of the database's three replicas is killed with
/// SIGKILL and stays down: once it has been silent for `--dead-after`
/// (6 s here) the database's leader names node 4 in its place, node 4 is
/// sent the data and votes, and the group survives the kill of a second
/// original replica. The dead node, started again, serves the rows through
/// the group (not from its stale copy), and deletes its copy once the
/// database's groups say it is out.
#[test]
fn a_dead_nodes_replica_is_replaced_after_dead_after() {
    let dir = tempfile::tempdir().unwrap();
    let (_up, nodes, cluster) = up_with(dir.path(), &["--dead-after", "6"]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let (clients, db, leader) = one_row_database(&nodes, &cluster).await;
        retry("rows 2 to 20", Duration::from_secs(10), || {
            write(&clients[0], &db, 2..21)
        })
        .await;
        // The leader (never node 1, which `cluster status` asks) dies: a
        // survivor leads, and replaces it once it has been silent long
        // enough.
        let gone = leader;
        let stays = (2..=3).find(|id| *id != gone).expect("the third replica");
        let dead = &nodes[(gone - 1) as usize];
        let command = command_of(dead);
        kill_9(dead.pid);
        let killed_at = Instant::now();
        let mut expected = vec![1, stays, 4];
        expected.sort_unstable();
        wait_for_voters(
            &cluster,
            &expected,
            1,
            &format!("node 4 replacing the dead node {gone}"),
        );
        let replaced_after = killed_at.elapsed();
        eprintln!(
            "node {gone}'s replica was replaced by node 4 {:.2} s after its kill",
            replaced_after.as_secs_f64()
        );
        // Silence counts from the node's last answer, which came at most
        // 2.5 s before the kill (or the node did not answer before it).
        assert!(
            replaced_after >= Duration::from_millis(6_000 - 2_500),
            "not before --dead-after: {replaced_after:?}"
        );
        retry(
            "rows 21 to 40 through node 4",
            Duration::from_secs(20),
            || write(&clients[3], &db, 21..41),
        )
        .await;

        // The dead node comes back. It is no longer listed: what it serves
        // comes from the group, with every row, and its copy goes.
        let restarted = Restarted::spawn(&command);
        let (n, _) = retry(
            "the rows through the node that came back",
            Duration::from_secs(30),
            || async {
                let c = Client::connect(dead.addr).await?;
                count(&c, &db).await
            },
        )
        .await;
        assert_eq!(n, 40, "every acknowledged row through node {gone}");
        let back_at = Instant::now();
        // Well before the 120 s after which a copy moved off goes anyway.
        while databases_on(dead) > 0 && back_at.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(500));
        }
        assert_eq!(databases_on(dead), 0, "node {gone} deleted its copy");
        eprintln!(
            "node {gone} deleted its copy {:.2} s after it served again",
            back_at.elapsed().as_secs_f64()
        );

        // Node 4's vote counts: with the other original replica killed,
        // node 1 and node 4 hold the majority.
        let victim = &nodes[(stays - 1) as usize];
        kill_9(victim.pid);
        retry(
            "a commit after a second kill",
            Duration::from_secs(30),
            || write(&clients[3], &db, 41..42),
        )
        .await;
        let (n, _) = retry(
            "the rows after a second kill",
            Duration::from_secs(30),
            || count(&clients[0], &db),
        )
        .await;
        assert_eq!(n, 41, "every acknowledged row after the second kill");
        drop(restarted);
    });
}

/// A session outlives the death of the node leading its database: the
/// new leader adopts it the first time a request names it. A read-write
/// transaction the session held on the dead leader answers ABORTED (the
/// client retries it); the session takes new ones. A session deleted
/// through the new leader stays deleted, and a name whose code does not
/// check out is NOT_FOUND.
#[test]
fn a_session_outlives_the_death_of_its_databases_leader() {
    let dir = tempfile::tempdir().unwrap();
    let (_up, nodes, cluster) = up(dir.path());
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let (clients, db, leader) = one_row_database(&nodes, &cluster).await;
        // Through node 4, which holds no replica: the leader makes them.
        let via = &clients[3];
        let session = via.create_session(&db).await.expect("a session");
        let doomed = via.create_session(&db).await.expect("another session");
        let txn = hold_row_one(via, &session, "held").await;
        kill_9(nodes[(leader - 1) as usize].pid);
        let killed_at = Instant::now();
        let count_in = |s: String| async move {
            via.execute_sql(
                &s,
                &Statement::new("SELECT COUNT(*) FROM T"),
                Selector::strong(),
            )
            .await?
            .single_int()
        };
        let (n, took) = retry(
            "a query in the old session",
            Duration::from_secs(30),
            || count_in(session.clone()),
        )
        .await;
        assert_eq!(n, 1);
        eprintln!(
            "the session served again {:.2} s after its leader was killed ({took:?} of retries)",
            killed_at.elapsed().as_secs_f64()
        );
        let lost = via
            .commit(&session, Selector::Id(txn), Vec::new())
            .await
            .expect_err("the transaction went with the old leader");
        assert_eq!(lost.code(), Some(tonic::Code::Aborted), "{lost}");
        via.commit(
            &session,
            Selector::SingleUse(TxnMode::ReadWrite),
            vec![insert(
                "T",
                &["Id", "V"],
                vec![vec![Value::from(2), Value::from("v2")]],
            )],
        )
        .await
        .expect("a new transaction in the old session");
        assert_eq!(count_in(session.clone()).await.expect("a count"), 2);

        via.delete_session(&doomed)
            .await
            .expect("delete the other old session");
        let gone = count_in(doomed.clone()).await.expect_err("deleted");
        assert_eq!(gone.code(), Some(tonic::Code::NotFound), "{gone}");
        let mut forged = session.clone().into_bytes();
        let last = forged.len() - 1;
        forged[last] = if forged[last] == b'0' { b'1' } else { b'0' };
        let forged = String::from_utf8(forged).unwrap();
        let refused = count_in(forged).await.expect_err("a forged name");
        assert_eq!(refused.code(), Some(tonic::Code::NotFound), "{refused}");
    });
}

/// A query through `client`'s node in `session`, under `selector`: the
/// count of T's rows, and the node that served it by a follower read, if
/// one did (`x-rowtree-follower-read`).
async fn count_at(
    client: &Client,
    session: &str,
    selector: Selector,
) -> rowtree_check::Result<(i64, Option<u64>)> {
    let response = client
        .spanner()
        .execute_sql(Statement::new("SELECT COUNT(*) FROM T").to_request(session, &selector, 0))
        .await?;
    let served = response
        .metadata()
        .get("x-rowtree-follower-read")
        .and_then(|v| v.to_str().ok()?.parse().ok());
    let rows = rowtree_check::client::ResultSet::from_pb(response.into_inner())?;
    Ok((rows.single_int()?, served))
}

/// A single-use read 2 s stale.
fn two_seconds_stale() -> Selector {
    Selector::SingleUse(TxnMode::ReadOnlyStale(Duration::from_secs(2)))
}

/// A count of T 2 s stale through `through` in `session`, once the rows
/// written just before are 2 s old and a closing round has passed them
/// (3 s later), retried for 20 s: the count, and the node that served it
/// from its own replica, if one did.
async fn stale_count(through: &Client, session: &str, what: &str) -> (i64, Option<u64>) {
    tokio::time::sleep(Duration::from_millis(3_000)).await;
    let stale = two_seconds_stale();
    retry(what, Duration::from_secs(20), || {
        count_at(through, session, stale.clone())
    })
    .await
    .0
}

/// Takes node `id` out of the cluster with `rowtree cluster remove`.
fn remove_node(cluster: &Path, id: u64) {
    let removed = Command::new(ROWTREE)
        .args(["cluster", "remove", "--node-id", &id.to_string(), "--dir"])
        .arg(cluster)
        .status()
        .expect("run rowtree cluster remove");
    assert!(removed.success(), "node {id} removed");
}

/// A node that holds a replica of the database but does not lead its
/// group serves stale reads from its replica below its closed timestamp,
/// even while the leader cannot answer (paused with SIGSTOP), and sends
/// strong reads to the leader.
#[test]
fn stale_reads_are_served_by_a_followers_replica_even_with_the_leader_paused() {
    let dir = tempfile::tempdir().unwrap();
    let (_up, nodes, cluster) = up(dir.path());
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let (clients, db, leader) = one_row_database(&nodes, &cluster).await;
        // The replicas are on nodes 1 to 3 (node 1 made the database).
        let follower = (1..=3).find(|id| *id != leader).unwrap();
        let through = &clients[(follower - 1) as usize];
        retry("rows 2 to 9", Duration::from_secs(10), || {
            write(&clients[(leader - 1) as usize], &db, 2..10)
        })
        .await;
        // The leader closes timestamps 1 s behind its clock, 5 times a
        // second: a read 2 s stale is below the follower's safe time once
        // the rows are 2 s old and a round has reached it.
        tokio::time::sleep(Duration::from_millis(3_000)).await;
        let session = through.create_session(&db).await.expect("session");
        let stale = Selector::SingleUse(TxnMode::ReadOnlyStale(Duration::from_secs(2)));
        let (rows, served) = count_at(through, &session, stale.clone())
            .await
            .expect("a stale read through the follower");
        assert_eq!(rows, 9);
        assert_eq!(served, Some(follower), "served by the follower's replica");
        // A strong read needs the leader: forwarded, not marked.
        let (rows, served) = count_at(through, &session, Selector::strong())
            .await
            .expect("a strong read through the follower");
        assert_eq!((rows, served), (9, None));
        // A read-only transaction begun stale: begun and read here.
        let began = through
            .begin(&session, TxnMode::ReadOnlyStale(Duration::from_secs(2)))
            .await
            .expect("begin a stale read-only transaction");
        let (rows, served) = count_at(through, &session, Selector::Id(began))
            .await
            .expect("a read in it");
        assert_eq!((rows, served), (9, Some(follower)));

        // Pause the leader: the follower answers stale reads by itself.
        let pid = nodes[(leader - 1) as usize].pid;
        signal(pid, "-STOP");
        let began = Instant::now();
        let answer = tokio::time::timeout(
            Duration::from_secs(5),
            count_at(through, &session, stale.clone()),
        )
        .await;
        let took = began.elapsed();
        signal(pid, "-CONT");
        let (rows, served) = answer
            .expect("answered while the leader is paused")
            .expect("a stale read with the leader paused");
        eprintln!("a stale read through node {follower} with leader {leader} paused took {took:?}");
        assert_eq!((rows, served), (9, Some(follower)));
        assert!(took < Duration::from_secs(1), "took {took:?}");

        // The database dropped and made again under its name: the
        // follower, which remembered the old session, does not serve it
        // from the dropped database.
        clients[0]
            .database_admin()
            .drop_database(rowtree_check::proto::dpb::DropDatabaseRequest {
                database: db.clone(),
            })
            .await
            .expect("drop");
        let instance = db.split("/databases/").next().unwrap().to_string();
        let made = table_t(&clients[0], &instance, "db")
            .await
            .expect("the database made again");
        assert_eq!(made, db);
        retry("a row in the new database", Duration::from_secs(20), || {
            write(&clients[0], &db, 1..2)
        })
        .await;
        // As above: the row 2 s old and a closing round past it.
        tokio::time::sleep(Duration::from_millis(3_000)).await;
        let fresh = through.create_session(&db).await.expect("a new session");
        let (rows, _) = retry(
            "a stale read of the new database",
            Duration::from_secs(10),
            || count_at(through, &fresh, stale.clone()),
        )
        .await;
        assert_eq!(rows.0, 1, "the new database's one row");
        let old = count_at(through, &session, stale.clone())
            .await
            .expect_err("the old session is gone with its database");
        assert_eq!(old.code(), Some(tonic::Code::NotFound), "{old}");
    });
}

/// The database groups `rowtree cluster status` reports (node 1 answers,
/// with the freshest report of each group), as (group, leader, voters,
/// split).
fn database_groups(dir: &Path) -> Vec<(u64, Option<u64>, Vec<u64>, String)> {
    let status = cluster_status(dir);
    status["groups"]
        .as_array()
        .map(|groups| {
            groups
                .iter()
                .map(|g| {
                    let mut voters: Vec<u64> = g["members"]
                        .as_array()
                        .map(|a| a.iter().filter_map(|m| m.as_u64()).collect())
                        .unwrap_or_default();
                    voters.sort_unstable();
                    (
                        g["group"].as_u64().unwrap_or(0),
                        g["leader"].as_u64(),
                        voters,
                        g["split"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The groups of the database, as [`database_groups`] lists them.
type Groups = [(u64, Option<u64>, Vec<u64>, String)];

/// Reads the status every 200 ms until `found` returns something for its
/// database groups, and returns that; fails after `limit`, saying that
/// `what` was not seen, with the last groups and the nodes' log tails.
fn await_groups<T>(
    dir: &Path,
    limit: Duration,
    what: &str,
    mut found: impl FnMut(&Groups) -> Option<T>,
) -> T {
    let deadline = Instant::now() + limit;
    loop {
        let groups = database_groups(dir);
        if let Some(t) = found(&groups) {
            return t;
        }
        assert!(
            Instant::now() < deadline,
            "{what} within {limit:?}: {groups:?}\n{}",
            node_log_tails(dir, 30)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Waits (at most 60 s) until the status shows exactly `groups` database
/// groups, each with `voters` (sorted) as its voters; `what` names the
/// change awaited in the failure.
fn wait_for_voters(dir: &Path, voters: &[u64], groups: usize, what: &str) {
    let started = Instant::now();
    let mut members = Vec::new();
    while started.elapsed() < Duration::from_secs(60) {
        members = database_groups(dir)
            .into_iter()
            .map(|g| g.2)
            .collect::<Vec<_>>();
        if members.len() == groups && members.iter().all(|m| m == voters) {
            return;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(
        members,
        vec![voters.to_vec(); groups],
        "{what}: every group's voters\n{}",
        node_log_tails(dir, 40)
    );
}

/// The last `lines` lines of each node's log in the cluster directory
/// `dir` (`node-N/node.log`), for a failure message: the directory is
/// deleted with the test, and a stall is diagnosed from the logs.
fn node_log_tails(dir: &Path, lines: usize) -> String {
    let mut out = String::new();
    for n in 1..=8 {
        let path = dir.join(format!("node-{n}")).join("node.log");
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let all: Vec<&str> = text.lines().collect();
        let tail = &all[all.len().saturating_sub(lines)..];
        out.push_str(&format!(
            "--- {} (last {} lines)\n",
            path.display(),
            tail.len()
        ));
        for line in tail {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Waits until the status shows `n` database groups with one leader (not
/// `not`), three voters and a split each (a cut's new group is listed
/// with its split once a node holding it has made it); returns the leader.
fn wait_for_groups(dir: &Path, n: usize, not: Option<u64>) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let groups = database_groups(dir);
        let leaders: BTreeSet<Option<u64>> = groups.iter().map(|g| g.1).collect();
        if groups.len() == n
            && groups.iter().all(|g| g.2.len() == 3 && !g.3.is_empty())
            && leaders.len() == 1
        {
            if let Some(Some(leader)) = leaders.into_iter().next() {
                if Some(leader) != not {
                    return leader;
                }
            }
        }
        assert!(
            Instant::now() < deadline,
            "the status did not show {n} groups under one leader within 30 s: {groups:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Writes ten rows of T in one commit, five on each side of Id 100
/// (insert-or-update, so that a retried commit is harmless):
/// Ids `2 + 5k` to `6 + 5k` and `200 + 5k` to `204 + 5k` (`k` below 19).
async fn write_across(client: &Client, db: &str, k: i64) -> rowtree_check::Result<()> {
    let ids = (2 + 5 * k..7 + 5 * k).chain(200 + 5 * k..205 + 5 * k);
    commit_rows(client, db, ids, insert_or_update).await
}

/// One commit across both halves of T (see [`write_across`]) through each
/// of `clients`, retried while the cluster settles: the rows written.
async fn across_through_each(clients: &[Client], db: &str) -> i64 {
    for (k, c) in clients.iter().enumerate() {
        retry(
            "a commit across both splits",
            Duration::from_secs(10),
            || write_across(c, db, k as i64),
        )
        .await;
    }
    10 * clients.len() as i64
}

/// How many transactions the nodes decided across nodes (with writes
/// prepared at other nodes), as their logs say.
fn decided_across_nodes(nodes: &[NodeLine]) -> usize {
    log_lines(
        nodes,
        "decided a transaction that prepared writes at other nodes",
    )
}

/// How many batches of strong reads the nodes have sent to the leader of a
/// split they follow (a debug line each, `raft::groups::reads`).
fn read_at_leaders(nodes: &[NodeLine]) -> usize {
    log_lines(nodes, "at its leader, node")
}

/// The lines of all the nodes' logs that contain `needle`.
fn log_lines(nodes: &[NodeLine], needle: &str) -> usize {
    nodes
        .iter()
        .map(|n| {
            std::fs::read_to_string(n.data.join("node.log"))
                .unwrap_or_default()
                .lines()
                .filter(|l| l.contains(needle))
                .count()
        })
        .sum()
}

/// `n` read-write transactions through `client`, each reading rows 50 and
/// 500 of T (one on each side of Id 100) and appending "+" to both values,
/// retried on ABORTED as client libraries retry; then checks that both
/// rows hold the same value, with `n` appends. Returns the rows written
/// (two).
async fn transfers_across(client: &Client, db: &str, n: usize) -> i64 {
    let rows = vec![
        vec![Value::from(50), Value::from("v")],
        vec![Value::from(500), Value::from("v")],
    ];
    let session = client.create_session(db).await.expect("a session");
    client
        .commit(
            &session,
            Selector::SingleUse(TxnMode::ReadWrite),
            vec![insert_or_update("T", &["Id", "V"], rows)],
        )
        .await
        .expect("rows 50 and 500");
    let read = Statement::new("SELECT Id, V FROM T WHERE Id IN (50, 500) ORDER BY Id");
    let update = Statement::new("UPDATE T SET V = CONCAT(V, '+') WHERE Id IN (50, 500)");
    let mut aborted = 0;
    for i in 0..n {
        let started = Instant::now();
        loop {
            let attempt = async {
                let txn = client.begin(&session, TxnMode::ReadWrite).await?;
                let before = client
                    .execute_sql(&session, &read, Selector::Id(txn.clone()))
                    .await?;
                let values: Vec<String> = before
                    .rows
                    .iter()
                    .filter_map(|r| r[1].as_str().map(str::to_string))
                    .collect();
                assert_eq!(values.len(), 2, "both rows are read in transaction {i}");
                assert_eq!(
                    values[0], values[1],
                    "the rows differ before transaction {i}"
                );
                let updated = client
                    .execute_sql_seq(&session, &update, Selector::Id(txn.clone()), 1)
                    .await?;
                assert_eq!(updated.row_count, Some(2), "both rows updated");
                client.commit(&session, Selector::Id(txn), vec![]).await
            };
            match attempt.await {
                Ok(_) => break,
                Err(e) if e.code() == Some(tonic::Code::Aborted) => aborted += 1,
                Err(e) => panic!("transaction {i} across both halves: {e}"),
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "transaction {i} across both halves aborted for 30 s ({aborted} aborts)"
            );
        }
    }
    let after = client
        .execute_sql(&session, &read, Selector::strong())
        .await
        .expect("the rows after");
    let want = format!("v{}", "+".repeat(n));
    for row in &after.rows {
        assert_eq!(row[1].as_str(), Some(want.as_str()), "row {:?}", row[0]);
    }
    eprintln!("{n} read-write transactions across both halves committed ({aborted} aborts)");
    2
}

/// The command line node `node` was started with.
fn command_of(node: &NodeLine) -> Vec<String> {
    let cmdline = std::fs::read(format!("/proc/{}/cmdline", node.pid)).expect("the node's command");
    cmdline
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

/// Whether process `pid` still runs (a zombie does not: it has exited,
/// and a parent that is gone may leave it unreaped).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let state = stat
                .rsplit_once(')')?
                .1
                .split_whitespace()
                .next()?
                .to_string();
            Some(state != "Z" && state != "X")
        })
        .unwrap_or(false)
}

fn kill_9(pid: u32) {
    signal(pid, "-9");
}

/// Sends `signal` (`-9`, `-STOP`, `-CONT`) to process `pid`.
fn signal(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill {signal} {pid}");
}

/// A split point cuts a cluster database's Raft group in two: its leader
/// proposes the cut, every replica's node makes the new group with the same
/// voters, and `cluster status` lists both, led by one node. Commits that
/// write both halves go through two-phase commit. When the leader is killed
/// with SIGKILL, the survivors elect leaders and bring both groups under
/// one, which serves every acknowledged row and takes commits across both.
/// The killed node, started again, reopens both groups from its disk and
/// catches up: with the third replica killed next, commits across both
/// halves need its votes in both groups, and get them.
#[test]
fn a_split_point_cuts_a_cluster_databases_group_and_both_survive_kills() {
    let dir = tempfile::tempdir().unwrap();
    let (_up, nodes, cluster) = up(dir.path());
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let (clients, db, _) = one_row_database(&nodes, &cluster).await;
        assert_eq!(database_groups(&cluster).len(), 1, "one group at first");

        // The split point through node 4, which holds no replica: forwarded
        // to the leader, which cuts its group.
        clients[3]
            .add_split_points(&db, "T", &[vec![Value::from(100)]])
            .await
            .expect("AddSplitPoints");
        let leader = wait_for_groups(&cluster, 2, None);
        let groups = database_groups(&cluster);
        eprintln!("after the split point: {groups:?}");
        assert!(
            !groups[0].3.ends_with("end)") && groups[1].3.ends_with("end)"),
            "the splits: {groups:?}"
        );
        assert!(
            groups[1].0 >= 1 << 32,
            "the new split's group id: {groups:?}"
        );

        // Commits across both halves, through every node.
        let mut rows = 1 + across_through_each(&clients, &db).await;
        for (n, c) in nodes.iter().zip(&clients) {
            let what = format!("a count through node {}", n.id);
            let (seen, _) = retry(&what, Duration::from_secs(10), || count(c, &db)).await;
            assert_eq!(seen, rows, "through node {}", n.id);
        }

        // Kill the leader; the survivors take both groups.
        let killed = &nodes[(leader - 1) as usize];
        let command = command_of(killed);
        kill_9(killed.pid);
        let killed_at = Instant::now();
        let survivors: Vec<usize> = (0..3).filter(|i| *i != (leader - 1) as usize).collect();
        retry(
            "a commit across both splits after the kill",
            Duration::from_secs(30),
            || write_across(&clients[survivors[0]], &db, 4),
        )
        .await;
        rows += 10;
        eprintln!(
            "commits across both splits resumed {:.2} s after the leader was killed",
            killed_at.elapsed().as_secs_f64()
        );
        let new_leader = wait_for_groups(&cluster, 2, Some(leader));

        // Start the killed node again; it reopens both groups.
        let restarted = Restarted::spawn(&command);
        // It serves again (forwarding the commit to the leader).
        retry(
            "a commit through the restarted node",
            Duration::from_secs(30),
            || async {
                let c = Client::connect(killed.addr).await?;
                write_across(&c, &db, 5).await
            },
        )
        .await;
        rows += 10;

        // Kill the third replica: every commit now needs the restarted
        // node's vote in both groups.
        let third = survivors
            .iter()
            .copied()
            .find(|i| *i != (new_leader - 1) as usize)
            .expect("a survivor that does not lead");
        kill_9(nodes[third].pid);
        retry(
            "a commit across both splits with the restarted node's votes",
            Duration::from_secs(30),
            || write_across(&clients[(new_leader - 1) as usize], &db, 6),
        )
        .await;
        rows += 10;
        let (seen, _) = retry("a count after the kills", Duration::from_secs(10), || {
            count(&clients[(new_leader - 1) as usize], &db)
        })
        .await;
        assert_eq!(seen, rows, "every acknowledged row");
        let (seen, _) = retry("a count through node 4", Duration::from_secs(10), || {
            count(&clients[3], &db)
        })
        .await;
        assert_eq!(seen, rows, "every acknowledged row, through node 4");
        drop(restarted);
    });
}

/// [`one_row_database`] with rows 1 to 299 of T, and a split point at Id
/// 100 added through node 1: its clients and the database.
async fn rows_cut_at_100(nodes: &[NodeLine], cluster: &Path) -> (Vec<Client>, String) {
    let (clients, db, _) = one_row_database(nodes, cluster).await;
    retry("rows 2 to 299", Duration::from_secs(10), || {
        write(&clients[0], &db, 2..300)
    })
    .await;
    clients[0]
        .add_split_points(&db, "T", &[vec![Value::from(100)]])
        .await
        .expect("AddSplitPoints");
    (clients, db)
}

/// With `--split-replicas 3` on four hosts, a split cut off the first
/// keeps three replicas: its group starts on all four (the voters of the
/// group it was cut from) and its leader takes the busiest other voter
/// out. That node releases its replica (the group stops there, and the
/// split's rows are deleted from its engine), keeps the first split, and
/// still serves every row: a stale read through it reads the split it no
/// longer holds from a node that does, and commits through it reach the
/// split's leader. The status lists the first group on four nodes and the
/// second on three.
#[test]
fn a_split_kept_on_three_of_four_hosts_is_read_through_the_host_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let (_up, nodes, cluster) = up_with(dir.path(), &["--replicas", "4", "--split-replicas", "3"]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let (clients, db) = rows_cut_at_100(&nodes, &cluster).await;
        // Two groups: the first on all four nodes, the second on three.
        let deadline = Instant::now() + Duration::from_secs(60);
        let out = loop {
            let groups = database_groups(&cluster);
            if let [first, second] = groups.as_slice() {
                if first.2 == vec![1, 2, 3, 4] && second.2.len() == 3 && !second.3.is_empty() {
                    eprintln!("groups: {groups:?}");
                    break (1..=4).find(|id| !second.2.contains(id)).unwrap();
                }
            }
            assert!(
                Instant::now() < deadline,
                "the status did not show a second group on three nodes: {groups:?}\n{}",
                node_log_tails(&cluster, 30)
            );
            std::thread::sleep(Duration::from_millis(200));
        };
        // The node taken out releases its replica and deletes its rows.
        let log = cluster.join(format!("node-{out}")).join("node.log");
        let deadline = Instant::now() + Duration::from_secs(30);
        while !std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("a released replica's rows are deleted")
        {
            assert!(
                Instant::now() < deadline,
                "node {out} did not delete its released replica's rows:\n{}",
                node_log_tails(&cluster, 40)
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        let through = &clients[(out - 1) as usize];
        // Commits through it to both halves.
        retry(
            "a commit across both splits through the node without one",
            Duration::from_secs(20),
            || write_across(through, &db, 30),
        )
        .await;
        // Rows 1 to 299, and the commit's: Ids 152 to 156 were there, 350
        // to 354 are new.
        let rows = 299 + 5;
        // A stale read served by this node (it holds the first split): the
        // rows of the second split come from a node that holds them.
        let session = through.create_session(&db).await.expect("session");
        let (seen, served) = stale_count(
            through,
            &session,
            "a stale count through the node without the split",
        )
        .await;
        let stale = two_seconds_stale();
        assert_eq!(served, Some(out), "served by node {out}, not forwarded");
        assert_eq!(
            seen, rows,
            "every row, those of the split held elsewhere included"
        );
        let read = |sql: &'static str| {
            let session = session.clone();
            let stale = stale.clone();
            async move {
                through
                    .execute_sql(&session, &Statement::new(sql), stale)
                    .await?
                    .single_int()
            }
        };
        let (max, _) = retry("the largest Id", Duration::from_secs(10), || {
            read("SELECT MAX(Id) FROM T")
        })
        .await;
        assert_eq!(max, 354);
        let (above, _) = retry(
            "the rows of the second split",
            Duration::from_secs(10),
            || read("SELECT COUNT(*) FROM T WHERE Id >= 100"),
        )
        .await;
        assert_eq!(above, 200 + 5);
        // A strong count, wherever it is served, sees the same.
        let (strong, _) = retry("a strong count", Duration::from_secs(10), || {
            count(through, &db)
        })
        .await;
        assert_eq!(strong, rows);
    });
}

/// A failure can make any voter of the first split its leader, and with
/// `--split-replicas 3` on four hosts one of them (`out`) holds no replica
/// of the second split. Such a leader could not commit a transaction
/// touching both splits (it leads one and lacks the other), so it hands
/// the first split's group on to a node holding both. The test kills the
/// first split's leader until `out` wins the election (its log says it
/// handed the group on, or tried to, or the status shows it leading); then the first
/// split is led, within seconds, by a voter of the second, and a commit
/// across both splits goes through every node. (Before, `out` kept the
/// first split until the next failure, and those commits were refused.)
#[test]
fn a_first_split_leader_lacking_another_split_hands_the_first_split_on() {
    let dir = tempfile::tempdir().unwrap();
    let (_up, nodes, cluster) = up_with(dir.path(), &["--replicas", "4", "--split-replicas", "3"]);
    let commands: Vec<Vec<String>> = nodes.iter().map(command_of).collect();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (clients, db) = rt.block_on(rows_cut_at_100(&nodes, &cluster));
    // Two groups: the first on all four nodes, the second on three.
    let deadline = Instant::now() + Duration::from_secs(60);
    let out = loop {
        let groups = database_groups(&cluster);
        if let [first, second] = groups.as_slice() {
            if first.2 == vec![1, 2, 3, 4] && second.2.len() == 3 {
                break (1..=4).find(|id| !second.2.contains(id)).unwrap();
            }
        }
        assert!(
            Instant::now() < deadline,
            "no second group on three nodes: {groups:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    let log = cluster.join(format!("node-{out}")).join("node.log");
    let handed = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("this node leads the first split but lacks other splits")
    };
    let mut pids: Vec<u32> = nodes.iter().map(|n| n.pid).collect();
    let mut restarted = Vec::new();
    let mut kills = 0;
    let deadline = Instant::now() + Duration::from_secs(240);
    loop {
        assert!(
            Instant::now() < deadline,
            "node {out} did not come to lead the first split in {kills} kills of its leader"
        );
        if handed() {
            break;
        }
        let groups = database_groups(&cluster);
        let Some(leader) = groups.first().and_then(|g| g.1) else {
            std::thread::sleep(Duration::from_millis(100));
            continue;
        };
        if leader == out {
            break;
        }
        // Down until the three others elect one of them (node `out` one
        // time in three or so), then up again.
        let i = (leader - 1) as usize;
        Command::new("kill")
            .args(["-9", &pids[i].to_string()])
            .status()
            .expect("kill");
        kills += 1;
        let elected = Instant::now() + Duration::from_secs(20);
        let mut new_leader = None;
        while new_leader.is_none() && Instant::now() < elected && !handed() {
            std::thread::sleep(Duration::from_millis(50));
            new_leader = database_groups(&cluster)
                .first()
                .and_then(|g| g.1)
                .filter(|l| *l != leader);
        }
        eprintln!("kill {kills} of node {leader}: the first split is led by {new_leader:?}");
        let node = Restarted::spawn(&commands[i]);
        pids[i] = node.0.id();
        restarted.push(node);
    }
    eprintln!("node {out} led the first split after {kills} kills of its leader");
    // Within seconds the first split is led by a voter of the second.
    await_groups(
        &cluster,
        Duration::from_secs(15),
        &format!("the first split is still led by node {out}, which lacks the second"),
        |groups| match groups {
            [first, second] if first.1.is_some_and(|l| l != out && second.2.contains(&l)) => {
                eprintln!("groups: {groups:?}");
                Some(())
            }
            _ => None,
        },
    );
    assert!(
        handed(),
        "node {out}'s log says it handed the first split on (or tried to)\n{}",
        node_log_tails(&cluster, 40)
    );
    // Commits across both splits go through again, through every node.
    rt.block_on(across_through_each(&clients, &db));
    drop(restarted);
}

/// A split whose leader crashes once its `SplitAt` entry is applied,
/// before it made the new split's group: every node has the crash point
/// `cluster::split::after_split_at` set. Each surviving replica makes the
/// new group from its replica of the cut, and the crashed node from its
/// own once it is started again: `cluster status` then lists two groups
/// with three voters each, every row is kept, and commits across the cut
/// go through.
#[cfg(feature = "failpoints")]
#[test]
fn a_split_whose_leader_crashes_after_the_cut_has_both_groups_after_the_restart() {
    let dir = tempfile::tempdir().unwrap();
    let (_up, nodes, cluster) = up_with_env(
        dir.path(),
        &[],
        &[(
            "ROWTREE_FAILPOINTS",
            "cluster::split::after_split_at=return",
        )],
    );
    let args: Vec<Vec<String>> = nodes.iter().map(command_of).collect();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let (clients, db, leader) = one_row_database(&nodes, &cluster).await;
        let mut rows = 1;
        let split = clients[0]
            .add_split_points(&db, "T", &[vec![Value::from(100)]])
            .await;
        eprintln!("AddSplitPoints: {split:?}");
        let (dead, _again) =
            restarted_into_groups(&nodes, &args, &cluster, "cluster::split::after_split_at", 2);
        eprintln!("node {dead} crashed after the cut (node {leader} led the group)");
        rows += across_through_each(&clients, &db).await;
        for (n, c) in nodes.iter().zip(&clients) {
            let what = format!("a count through node {}", n.id);
            let (seen, _) = retry(&what, Duration::from_secs(30), || count(c, &db)).await;
            assert_eq!(seen, rows, "every row, through node {}", n.id);
        }
    });
}

/// A merge whose node crashes between its two entries: every node has
/// the crash point `cluster::merge::after_freeze` set, so the leader that
/// merges an expired split point crashes once the right split's `Freeze`
/// is applied, before the `Merge`. The right split stays frozen (its
/// writes refused) until the next leader of both splits, or the crashed
/// node started again, finishes the merge: `cluster status` then lists
/// one group over the whole key space, every row is kept, and commits
/// across the old boundary go through.
#[cfg(feature = "failpoints")]
#[test]
fn a_merge_whose_node_crashes_after_the_freeze_is_finished_after_the_restart() {
    let dir = tempfile::tempdir().unwrap();
    let (_up, nodes, cluster) = up_with_env(
        dir.path(),
        &["--merge-after", "1"],
        &[("ROWTREE_FAILPOINTS", "cluster::merge::after_freeze=return")],
    );
    let args: Vec<Vec<String>> = nodes.iter().map(command_of).collect();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let (clients, db, leader) = cut_for_four_seconds(&nodes, &cluster).await;
        let mut rows = 1 + across_through_each(&clients, &db).await;

        // The point expires: the leader freezes the right split and
        // crashes there.
        let (dead, _again) =
            restarted_into_groups(&nodes, &args, &cluster, "cluster::merge::after_freeze", 1);
        eprintln!("node {dead} crashed after the freeze (node {leader} led both splits)");
        merged_with_every_row(&cluster, &nodes, &clients, &db, rows).await;
        let through = &clients[(dead % 4) as usize];
        retry(
            "a commit across the old boundary",
            Duration::from_secs(30),
            || write_across(through, &db, 6),
        )
        .await;
        rows += 10;
        let (seen, _) = retry("a count after it", Duration::from_secs(10), || {
            count(through, &db)
        })
        .await;
        assert_eq!(seen, rows, "every acknowledged row");
    });
}

/// The database of [`one_row_database`], cut at Id 100 by a split point
/// that expires in 4 s; returns the clients, the database and the leader
/// of both groups once they are made.
async fn cut_for_four_seconds(nodes: &[NodeLine], cluster: &Path) -> (Vec<Client>, String, u64) {
    let (clients, db, _) = one_row_database(nodes, cluster).await;
    let expires = std::time::SystemTime::now() + Duration::from_secs(4);
    clients[0]
        .add_split_points_until(&db, "T", &[vec![Value::from(100)]], Some(expires))
        .await
        .expect("AddSplitPoints");
    let leader = wait_for_groups(cluster, 2, None);
    (clients, db, leader)
}

/// Checks that the status lists one group over the whole key space, and
/// that a count of T through every node is `rows`.
async fn merged_with_every_row(
    cluster: &Path,
    nodes: &[NodeLine],
    clients: &[Client],
    db: &str,
    rows: i64,
) {
    let groups = database_groups(cluster);
    assert!(
        groups[0].3.ends_with("['', end)"),
        "one split over the whole key space: {groups:?}"
    );
    for (n, c) in nodes.iter().zip(clients) {
        let what = format!("a count through node {}", n.id);
        let (seen, _) = retry(&what, Duration::from_secs(30), || count(c, db)).await;
        assert_eq!(seen, rows, "every row, through node {}", n.id);
    }
}

/// With `--split-replicas 3` on four hosts, an expired split point's
/// right group holds three replicas and the first split four, and a merge
/// needs the two groups' voters to be the same. The leader, declining the
/// merge, places a fourth replica of the right group (the left group's
/// voters), then merges: one group over the whole key space on all four
/// nodes, with every row. (Before, the merge was declined for good.)
#[test]
fn an_expired_split_point_held_by_three_of_four_hosts_is_merged_once_the_voters_match() {
    let dir = tempfile::tempdir().unwrap();
    let (_up, nodes, cluster) = up_with(
        dir.path(),
        &[
            "--replicas",
            "4",
            "--split-replicas",
            "3",
            "--merge-after",
            "1",
        ],
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let (clients, db, _) = one_row_database(&nodes, &cluster).await;
        let expires = std::time::SystemTime::now() + Duration::from_secs(20);
        clients[0]
            .add_split_points_until(&db, "T", &[vec![Value::from(100)]], Some(expires))
            .await
            .expect("AddSplitPoints");
        // The second group is trimmed to three voters before the point
        // expires.
        let right = await_groups(
            &cluster,
            Duration::from_secs(20),
            "no second group on three nodes",
            |groups| match groups {
                [first, second]
                    if first.2 == vec![1, 2, 3, 4]
                        && second.2.len() == 3
                        && !second.3.is_empty() =>
                {
                    eprintln!("before the merge: {groups:?}");
                    Some(second.0)
                }
                _ => None,
            },
        );
        let rows = 1 + across_through_each(&clients, &db).await;

        // Expired and cold: merged, on all four nodes.
        await_groups(
            &cluster,
            Duration::from_secs(90),
            "the groups were not merged on all four nodes",
            |groups| matches!(groups, [only] if only.2 == vec![1, 2, 3, 4]).then_some(()),
        );
        assert!(
            log_lines(
                &nodes,
                &format!("group {right}'s voters are now nodes {{1, 2, 3, 4}}")
            ) > 0,
            "the right group took the left one's voters first"
        );
        merged_with_every_row(&cluster, &nodes, &clients, &db, rows).await;
    });
}

/// An expired split point is merged away on a cluster too: the leader
/// freezes the right split's group, waits until every replica applied the
/// freeze (here one is paused with SIGSTOP for a while: `cluster status`
/// shows the group frozen, and it is not merged until the node runs
/// again), and merges it into the left one; every node then drops the
/// right group (`cluster status` lists one group over the whole key
/// space, with all three voters), every row is kept, and the merged group
/// survives the kill of its leader. Once the nodes are stopped, their log
/// stores hold nothing of the merged group.
#[test]
fn an_expired_split_point_is_merged_back_into_one_group_on_every_node() {
    let dir = tempfile::tempdir().unwrap();
    let (up, nodes, cluster) = up_with(dir.path(), &["--merge-after", "1"]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (first, right, survivors) = rt.block_on(async {
        let (clients, db, leader) = cut_for_four_seconds(&nodes, &cluster).await;
        let (first, right) = match database_groups(&cluster).as_slice() {
            [a, b] => (a.0, b.0),
            other => panic!("two groups: {other:?}"),
        };
        let mut rows = 1 + across_through_each(&clients, &db).await;

        // A replica paused before the point expires: the leader freezes
        // the right group, then waits for the paused node to apply the
        // freeze too; meanwhile the status shows the group frozen.
        let paused = if leader == 2 { 3 } else { 2 };
        signal(nodes[paused - 1].pid, "-STOP");
        let deadline = Instant::now() + Duration::from_secs(40);
        let frozen = loop {
            let status = cluster_status(&cluster);
            let frozen: Vec<(u64, String)> = status["groups"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|g| Some((g["group"].as_u64()?, g["frozen_into"].as_str()?.into())))
                .collect();
            if !frozen.is_empty() {
                break frozen;
            }
            assert!(
                Instant::now() < deadline,
                "no group frozen within 40 s: {status}"
            );
            std::thread::sleep(Duration::from_millis(200));
        };
        assert_eq!(frozen, vec![(right, "split-1".to_string())]);
        // Held frozen while the node is paused: past the leader's 10 s wait.
        std::thread::sleep(Duration::from_secs(12));
        assert_eq!(database_groups(&cluster).len(), 2, "not merged yet");

        // Expired, cold, and every replica applied the freeze once the node
        // runs again: merged on every node.
        signal(nodes[paused - 1].pid, "-CONT");
        let began = Instant::now();
        let leader = wait_for_groups(&cluster, 1, None);
        eprintln!(
            "the groups were merged {:.2} s after the paused replica ran again",
            began.elapsed().as_secs_f64()
        );
        assert!(began.elapsed() < Duration::from_secs(30));
        merged_with_every_row(&cluster, &nodes, &clients, &db, rows).await;

        // The merged group takes commits across the old boundary and
        // survives the kill of its leader.
        kill_9(nodes[(leader - 1) as usize].pid);
        let survivor = (0..3).find(|i| *i != (leader - 1) as usize).unwrap();
        let (_, resumed) = retry(
            "a commit across the old boundary after the kill",
            Duration::from_secs(30),
            || write_across(&clients[survivor], &db, 4),
        )
        .await;
        eprintln!(
            "commits resumed {:.2} s after the merged group's leader was killed",
            resumed.as_secs_f64()
        );
        rows += 10;
        wait_for_groups(&cluster, 1, Some(leader));
        let (seen, _) = retry("a count after the kill", Duration::from_secs(10), || {
            count(&clients[survivor], &db)
        })
        .await;
        assert_eq!(seen, rows, "every acknowledged row");
        let survivors: Vec<NodeLine> = (0..3)
            .filter(|i| *i != (leader - 1) as usize)
            .map(|i| nodes[i].clone())
            .collect();
        (first, right, survivors)
    });

    // Stopped, the survivors' log stores hold the merged group's log no
    // more (the first group's is there: the place looked at is right).
    drop(up);
    no_log_of(right, &survivors);
    for node in &survivors {
        let store = rowtree_cluster::raft::LogStore::open(node.data.join("raft")).unwrap();
        let first = rowtree_cluster::raft::GroupId(first);
        assert!(store.holds_group(first).unwrap(), "node {}", node.id);
    }
}

/// A node named a member of a database after a merge took a neighbour's
/// rows into the first split (here node 4, replacing a removed node) is
/// sent an image of the first split, never its log from the start: that
/// log holds none of the rows written in the merged split after the cut.
/// Node 4's replica then serves every row by itself (a stale read through
/// it, served from its replica unless it leads), and with another voter
/// killed. Without the image it replays the cut, making a replica of the
/// right half no group ever sends a `Freeze`, and then waits at the
/// `Merge` for good: it never catches up to become a voter (checked).
#[test]
fn a_replacement_after_a_merge_is_sent_the_merged_rows() {
    let dir = tempfile::tempdir().unwrap();
    let (_up, nodes, cluster) = up_with(dir.path(), &["--merge-after", "1"]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let (clients, db, _) = cut_for_four_seconds(&nodes, &cluster).await;
        let rows = 1 + across_through_each(&clients, &db).await;
        let leader = wait_for_groups(&cluster, 1, None);
        merged_with_every_row(&cluster, &nodes, &clients, &db, rows).await;

        // A follower other than node 1 (which `cluster status` asks) is
        // removed; node 4 takes its place.
        let gone = (2..=3).find(|id| *id != leader).expect("a follower");
        let stays = (2..=3).find(|id| *id != gone).expect("the third replica");
        remove_node(&cluster, gone);
        let mut expected = vec![1, stays, 4];
        expected.sort_unstable();
        wait_for_voters(
            &cluster,
            &expected,
            1,
            &format!("node 4 replacing node {gone}"),
        );
        kill_9(nodes[(gone - 1) as usize].pid);

        // Node 4's replica holds every row: a read 2 s stale through it is
        // served from its replica (once its safe time passed the rows).
        let through = &clients[3];
        let session = through.create_session(&db).await.expect("session");
        let (seen, served) = stale_count(through, &session, "a stale read through node 4").await;
        let leading = group_leader(&cluster);
        eprintln!("node 4 read {seen} rows stale (served by {served:?}; node {leading:?} leads)");
        assert_eq!(seen, rows, "every row, on node 4's replica");
        if leading != Some(4) {
            assert_eq!(served, Some(4), "served by node 4's own replica");
        }

        // The leader killed (or, if node 4 leads, the other old replica):
        // node 4 is in every majority left.
        let victim = match leading {
            Some(l) if l != 4 => l,
            _ => stays,
        };
        kill_9(nodes[(victim - 1) as usize].pid);
        let (seen, took) = retry(
            "a count through node 4 after a kill",
            Duration::from_secs(30),
            || count(through, &db),
        )
        .await;
        eprintln!(
            "node 4 and one other served all {seen} rows {:.2} s after node {victim} was killed",
            took.as_secs_f64()
        );
        assert_eq!(seen, rows, "every acknowledged row");
    });
}

/// One writer of the hot-database test: single-row commits (insert or
/// update, in one reused session) of ids `first, first + step, ...`
/// alternating between the two halves of T (ids from -2 down, left of the
/// split point at 100; ids from 1,000 up, right of it), through `client`, until
/// `stop`. Returns the ids acknowledged and the ids tried.
async fn hot_writer(
    client: Client,
    db: String,
    first: i64,
    step: i64,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> (BTreeSet<i64>, BTreeSet<i64>, usize) {
    let mut acked = BTreeSet::new();
    let mut tried = BTreeSet::new();
    let mut failures = 0;
    let mut session = None;
    let mut n = first;
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        let s = match &session {
            Some(s) => s,
            None => match client.create_session(&db).await {
                Ok(s) => session.insert(s),
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let id = if n % 2 == 0 { -n - 2 } else { 1_000 + n };
        n += step;
        tried.insert(id);
        let rows = vec![vec![Value::from(id), Value::from(format!("v{id}"))]];
        match client
            .commit(
                s,
                Selector::SingleUse(TxnMode::ReadWrite),
                vec![insert_or_update("T", &["Id", "V"], rows)],
            )
            .await
        {
            Ok(_) => {
                acked.insert(id);
            }
            Err(e) => {
                failures += 1;
                if failures <= 3 {
                    eprintln!("writer {first}: row {id}: {e}");
                }
                if e.code() == Some(tonic::Code::NotFound) {
                    session = None;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }
    (acked, tried, failures)
}

/// The nodes the key visualizer at `addr` labels the cells of database
/// `db` with (empty until it answers).
fn keyviz_nodes(addr: SocketAddr, db: &str) -> BTreeSet<u64> {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(2)) else {
        return BTreeSet::new();
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let request = format!("GET /keyviz/{db}/data.json HTTP/1.0\r\nHost: {addr}\r\n\r\n");
    if stream.write_all(request.as_bytes()).is_err() {
        return BTreeSet::new();
    }
    let mut answer = Vec::new();
    let _ = stream.take(64 << 20).read_to_end(&mut answer);
    let text = String::from_utf8_lossy(&answer);
    let Some((head, body)) = text.split_once("\r\n\r\n") else {
        return BTreeSet::new();
    };
    assert!(
        !head.contains("chunked"),
        "the key visualizer answered HTTP/1.0 in chunks: {head}"
    );
    let Ok(data) = serde_json::from_str::<serde_json::Value>(body) else {
        return BTreeSet::new();
    };
    data["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(serde_json::Value::as_u64)
        .collect()
}

/// The leaders of the database's groups, as `cluster status` shows them.
fn group_leaders(dir: &Path) -> Vec<Option<u64>> {
    database_groups(dir).iter().map(|g| g.1).collect()
}

/// A database whose load saturates the node leading it, with its key space
/// cut in two by a split point, has the hot right split's group handed to
/// another node by the lease balancer (every node capped at 300 reads per
/// second, about 47 written rows): `cluster status` shows the two groups
/// led by different nodes. Single-row commits of either half, sent through
/// every node (the fourth, which holds no replica, included), keep being
/// made, each by the node leading its key's split, not the node holding
/// the session (which would refuse the half it does not lead). Once the
/// load stops, the cold group is gathered back on the first split's
/// leader, commits spanning both halves go through every node again, and
/// the table holds every acknowledged row.
#[test]
fn a_hot_databases_groups_are_spread_by_load_and_commits_follow_their_keys() {
    let dir = tempfile::tempdir().unwrap();
    let (_up, nodes, cluster) = up_with(dir.path(), &["--node-capacity", "300"]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let (clients, db, _) = one_row_database(&nodes, &cluster).await;
        clients[0]
            .add_split_points(&db, "T", &[vec![Value::from(100)]])
            .await
            .expect("AddSplitPoints");
        let first_leader = wait_for_groups(&cluster, 2, None);

        // Eight writers, two through each node.
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writers: Vec<_> = (0..8)
            .map(|w| {
                tokio::spawn(hot_writer(
                    clients[w % 4].clone(),
                    db.clone(),
                    w as i64,
                    8,
                    stop.clone(),
                ))
            })
            .collect();

        // The balancer moves the right split's group off the busy leader.
        let started = Instant::now();
        let spread = loop {
            let leaders = group_leaders(&cluster);
            if leaders.len() == 2
                && leaders[0].is_some()
                && leaders[1].is_some()
                && leaders[0] != leaders[1]
            {
                break leaders;
            }
            assert!(
                started.elapsed() < Duration::from_secs(90),
                "the groups were not spread over two nodes within 90 s: {:?}",
                database_groups(&cluster)
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        };
        eprintln!(
            "groups led by {spread:?} after {:.1} s of load",
            started.elapsed().as_secs_f64()
        );
        assert_eq!(
            spread[0],
            Some(first_leader),
            "the first split's group stays"
        );

        // While spread, single-row commits of either half go through
        // every node, with no retry.
        for (i, c) in clients.iter().enumerate() {
            let session = c.create_session(&db).await.expect("a session");
            for id in [-10_000 - i as i64, 10_000 + i as i64] {
                let rows = vec![vec![Value::from(id), Value::from(format!("v{id}"))]];
                c.commit(
                    &session,
                    Selector::SingleUse(TxnMode::ReadWrite),
                    vec![insert_or_update("T", &["Id", "V"], rows)],
                )
                .await
                .unwrap_or_else(|e| panic!("row {id} through node {}: {e}", nodes[i].id));
            }
        }
        assert_eq!(
            group_leaders(&cluster),
            spread,
            "still spread after the commits through every node"
        );

        // Transactions across both halves, now led by different nodes,
        // commit too: their locks and writes on the right half are taken
        // and prepared at its leader (remote locking and two-phase commit
        // across nodes). Single-use commits of ten rows, through every
        // node; then read-write transactions that read a row of each half
        // and update both, which must stay equal.
        let decided_before = decided_across_nodes(&nodes);
        let across = across_through_each(&clients, &db).await;
        let pair = transfers_across(&clients[0], &db, 12).await;
        assert_eq!(
            group_leaders(&cluster),
            spread,
            "still spread after the commits across both halves (they were not gathered first)"
        );
        let decided = decided_across_nodes(&nodes) - decided_before;
        eprintln!("{decided} transactions decided across nodes");
        assert!(
            decided >= clients.len() + 12,
            "only {decided} transactions were decided across nodes, of {} committed",
            clients.len() + 12
        );

        // Strong reads of rows 50 and 500 (one in each half) through every
        // node see both as the transfers left them. Whichever node runs a
        // read follows one of the halves, whose replica there trails the
        // leader's clock by the closing lag: it reads that half at its
        // leader rather than wait for its own replica.
        let read_before = read_at_leaders(&nodes);
        let both = Statement::new("SELECT Id, V FROM T WHERE Id IN (50, 500) ORDER BY Id");
        let want = format!("v{}", "+".repeat(12));
        for c in &clients {
            let session = c.create_session(&db).await.expect("a session");
            for _ in 0..5 {
                let rows = c
                    .execute_sql(&session, &both, Selector::strong())
                    .await
                    .expect("a strong read of both halves")
                    .rows;
                let values: Vec<Option<&str>> = rows.iter().map(|r| r[1].as_str()).collect();
                assert_eq!(values, [Some(want.as_str()); 2], "rows 50 and 500");
            }
        }
        let at_leaders = read_at_leaders(&nodes) - read_before;
        eprintln!("{at_leaders} strong reads of a half read at its leader, of 20");
        assert!(
            at_leaders >= 10,
            "only {at_leaders} of 20 strong reads read the half led elsewhere at its leader"
        );

        // The first split's leader gathers every node's split history: once
        // a minute's statistics are in, its key visualizer shows the hot
        // right split served by the node it was handed to.
        let other = spread[1].expect("the right split's leader");
        let keyviz = nodes
            .iter()
            .find(|n| n.id == first_leader)
            .expect("the first split's leader")
            .keyviz;
        let waited = Instant::now();
        loop {
            let shown = keyviz_nodes(keyviz, &db);
            if shown.contains(&other) {
                eprintln!(
                    "the key visualizer shows nodes {shown:?} after {:.1} s more",
                    waited.elapsed().as_secs_f64()
                );
                break;
            }
            assert!(
                waited.elapsed() < Duration::from_secs(150),
                "node {first_leader}'s key visualizer shows only nodes {shown:?} after 150 s, \
                 not node {other}, which leads the hot split"
            );
            tokio::time::sleep(Duration::from_secs(2)).await;
        }

        // Stop the load: the cold group goes back to the first split's
        // leader.
        tokio::time::sleep(Duration::from_secs(3)).await;
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let mut acked = BTreeSet::new();
        let mut tried = BTreeSet::new();
        let mut failures = 0;
        for w in writers {
            let (a, t, f) = w.await.expect("a writer");
            acked.extend(a);
            tried.extend(t);
            failures += f;
        }
        eprintln!(
            "{} single-row commits acknowledged, {failures} failed, in {:.1} s",
            acked.len(),
            started.elapsed().as_secs_f64()
        );
        let gathered = wait_for_groups(&cluster, 2, None);
        assert_eq!(
            gathered, first_leader,
            "gathered on the first split's leader"
        );

        // Every acknowledged row is there (a failed commit may or may not
        // have been made: its answer may have been lost).
        let (seen, _) = retry("the final count", Duration::from_secs(10), || {
            count(&clients[0], &db)
        })
        .await;
        let extra = 1 + 2 * clients.len() as i64 + across + pair;
        assert!(
            seen >= acked.len() as i64 + extra && seen <= tried.len() as i64 + extra,
            "{seen} rows; {} acknowledged, {} tried, {extra} more",
            acked.len(),
            tried.len()
        );
        let session = clients[0].create_session(&db).await.expect("a session");
        let ids: BTreeSet<i64> = clients[0]
            .execute_sql(
                &session,
                &Statement::new("SELECT Id FROM T WHERE Id < -1 OR Id >= 1000"),
                Selector::strong(),
            )
            .await
            .expect("the written ids")
            .rows
            .iter()
            .filter_map(|r| r[0].as_i64())
            .collect();
        let missing: Vec<&i64> = acked.difference(&ids).take(5).collect();
        assert!(missing.is_empty(), "acknowledged but missing: {missing:?}");
    });
}

/// A node process started by a test (not by `cluster up`), killed when
/// dropped.
struct Joined {
    child: Child,
    addr: SocketAddr,
    data: PathBuf,
}

impl Drop for Joined {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A free port on 127.0.0.1 that no outgoing connection takes while the
/// node is down.
fn free_port() -> u16 {
    rowtree_check::server::lasting_port().expect("a free port")
}

/// Starts node `id` in `dir`, joining the cluster of `cluster` (its
/// `cluster.json`) through node 1.
fn join_node(dir: &Path, cluster: &Path, id: u64) -> Joined {
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(cluster.join("cluster.json")).expect("cluster.json"))
            .expect("cluster.json parses");
    let peer = json["nodes"][0]["peer_addr"]
        .as_str()
        .expect("node 1's peer address")
        .to_string();
    let data = dir.join(format!("node-{id}"));
    let port = free_port();
    let log = std::fs::File::create(dir.join(format!("node-{id}.log"))).expect("a log");
    let child = Command::new(ROWTREE)
        .args(["serve", "--cluster", "--exit-on-stdin-eof"])
        .args(["--max-clock-offset", "1"])
        .args(["--node-id", &id.to_string()])
        .arg("--data-dir")
        .arg(&data)
        .args(["--port", &port.to_string()])
        .args(["--peer-port", &free_port().to_string()])
        .args(["--join", &peer])
        .stdin(Stdio::piped())
        .stdout(log.try_clone().expect("the log"))
        .stderr(log)
        .spawn()
        .expect("start a node");
    Joined {
        child,
        addr: SocketAddr::from(([127, 0, 0, 1], port)),
        data,
    }
}

/// Three databases made through node 1 of four (node 1 holds three
/// replicas, every other node two); node 5 joins. The databases' leaders
/// move replicas to node 5 until the counts are within one, node 1's
/// among them (one other may go first, which is why the test does not
/// say which): node 5 is sent the data and votes, and node 1 closes its
/// copy and deletes its files. Every row of
/// every database is then read through node 5, and the moved database
/// takes commits through node 5 after another old member is killed, so
/// node 5's vote counts.
#[test]
fn a_joining_node_receives_a_replica_from_the_node_holding_the_most() {
    let dir = tempfile::tempdir().unwrap();
    let (_up, nodes, cluster) = up(dir.path());
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let c1 = Client::connect(nodes[0].addr).await.expect("connect");
        let instance = c1.create_instance("inst").await.expect("instance");
        let mut dbs = Vec::new();
        for name in ["db-a", "db-b", "db-c"] {
            let db = table_t(&c1, &instance, name)
            .await
            .expect("database");
            retry("ten rows", Duration::from_secs(20), || {
                write(&c1, &db, 1..11)
            })
            .await;
            dbs.push(db);
        }
        assert_eq!(databases_on(&nodes[0]), 3, "node 1 made and holds all three");
        let held: Vec<usize> = nodes[1..].iter().map(databases_on).collect();
        assert_eq!(held, vec![2, 2, 2], "the others hold two each");
        // Within one of each other: nothing moves.
        std::thread::sleep(Duration::from_secs(3));
        assert_eq!(databases_on(&nodes[0]), 3);

        let joined = join_node(dir.path(), &cluster, 5);
        let started = Instant::now();
        let (moved, groups) = loop {
            let groups = database_groups(&cluster);
            let with_5 = groups
                .iter()
                .position(|g| g.2.contains(&5) && g.2.len() == 3);
            let node1_files = databases_on(&nodes[0]);
            let node5_files = std::fs::read_dir(joined.data.join("databases")).map_or(0, |d| d.count());
            if let (Some(i), 2, 1..) = (with_5, node1_files, node5_files) {
                break (i, groups);
            }
            assert!(
                started.elapsed() < Duration::from_secs(90),
                "no replica moved to node 5 within 90 s: groups {groups:?}, node 1 holds {node1_files}, node 5 {node5_files}"
            );
            std::thread::sleep(Duration::from_millis(250));
        };
        eprintln!(
            "node 5 votes in group {:?} and node 1 deleted its copy {:.2} s after node 5 started",
            groups[moved],
            started.elapsed().as_secs_f64()
        );

        let c5 = Client::connect(joined.addr).await.expect("connect to node 5");
        for db in &dbs {
            let (n, _) = retry("the rows through node 5", Duration::from_secs(30), || {
                count(&c5, db)
            })
            .await;
            assert_eq!(n, 10, "{db}: every row through node 5");
        }
        // Kill an old member of the moved database that neither leads it
        // nor answers `cluster status` (node 1): the leader and node 5
        // are the majority that must commit.
        let (_, leader, members, _) = groups[moved].clone();
        if let Some(victim) = members
            .iter()
            .copied()
            .find(|m| *m != 5 && *m != 1 && Some(*m) != leader)
        {
            kill_9(nodes[(victim - 1) as usize].pid);
            eprintln!("node {victim} killed; node 5 and the leader must commit");
        }
        // Databases were made in order, so their groups' ids are too.
        let db = &dbs[moved];
        retry("a commit through node 5", Duration::from_secs(30), || {
            write(&c5, db, 11..21)
        })
        .await;
        let (n, _) = retry("the rows after the commit", Duration::from_secs(30), || {
            count(&c5, db)
        })
        .await;
        assert_eq!(n, 20, "every acknowledged row");
    });
}

/// Four `rowtree serve --cluster` processes that reach each other only
/// through proxies, one per link ([`rowtree_check::proxy::Network`]), so
/// that a test can cut some links and not others. Dropping it kills the
/// nodes and stops the proxies.
struct Proxied {
    network: rowtree_check::proxy::Network,
    servers: Vec<rowtree_check::server::Server>,
    /// Each node's peer address.
    peers: Vec<SocketAddr>,
}

impl Proxied {
    /// Starts four nodes in `dir`, each with `serve_flags` too, node 1
    /// first and the others joining it. Ports are picked by binding and
    /// releasing them, so a proxy or a test running beside may take one
    /// first: a start that fails is tried again, up to three times.
    async fn start(dir: &Path, serve_flags: &[&str]) -> Proxied {
        for attempt in 1..=3 {
            match Proxied::try_start(&dir.join(format!("try-{attempt}")), serve_flags).await {
                Ok(cluster) => return cluster,
                Err(e) if attempt < 3 => eprintln!("starting the proxied cluster: {e}; again"),
                Err(e) => panic!("starting the proxied cluster: {e}"),
            }
        }
        unreachable!("the last attempt returns or panics")
    }

    async fn try_start(dir: &Path, serve_flags: &[&str]) -> rowtree_check::Result<Proxied> {
        use rowtree_check::server::{lasting_port, Options, Server};
        let local = |port: u16| SocketAddr::from(([127, 0, 0, 1], port));
        let ports = |n| {
            (0..n)
                .map(|_| lasting_port())
                .collect::<rowtree_check::Result<Vec<u16>>>()
        };
        let (peer_ports, api_ports) = (ports(4)?, ports(4)?);
        let ends: Vec<(SocketAddr, SocketAddr)> = peer_ports
            .iter()
            .zip(&api_ports)
            .map(|(peer, api)| (local(*peer), local(*api)))
            .collect();
        let network = rowtree_check::proxy::Network::start(&ends).await?;
        let mut servers = Vec::new();
        for i in 0..4 {
            let mut args: Vec<String> = vec![
                "--cluster".into(),
                "--node-id".into(),
                (i + 1).to_string(),
                "--peer-port".into(),
                peer_ports[i].to_string(),
            ];
            if i > 0 {
                args.push("--join".into());
                args.push(format!("127.0.0.1:{}", peer_ports[0]));
            }
            args.extend(network.route_args(i));
            args.extend(serve_flags.iter().map(|f| f.to_string()));
            let data = dir.join(format!("node-{}", i + 1)).join("data");
            let mut options = Options::new(ROWTREE, data).args(args);
            options.port = Some(api_ports[i]);
            options.log_filter = "info,openraft=error".into();
            servers.push(Server::start(options).await?);
        }
        Ok(Proxied {
            network,
            servers,
            peers: ends.iter().map(|(peer, _)| *peer).collect(),
        })
    }

    /// `rowtree cluster status --format json` as node `id` answers it
    /// (asked directly, not through a proxy).
    fn status(&self, id: u64) -> serde_json::Value {
        let out = Command::new(ROWTREE)
            .args(["cluster", "status", "--format", "json", "--node"])
            .arg(self.peers[(id - 1) as usize].to_string())
            .output()
            .expect("run rowtree cluster status");
        serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null)
    }

    /// The first database group's leader and voters (sorted), as node
    /// `id` answers.
    fn group(&self, id: u64) -> (Option<u64>, Vec<u64>) {
        let status = self.status(id);
        let group = &status["groups"][0];
        let mut voters: Vec<u64> = group["members"]
            .as_array()
            .map(|a| a.iter().filter_map(|m| m.as_u64()).collect())
            .unwrap_or_default();
        voters.sort_unstable();
        (group["leader"].as_u64(), voters)
    }
}

/// A database's leader replaces a member it has not heard from for
/// `--dead-after` only if a majority of the other members do not hear it
/// either. With the links between the leader and one follower cut (both
/// ways, every other link open) for three times `--dead-after`, the
/// follower stays a voter: it still answers the third member, whose clock
/// heartbeat answers say so. Cut off from every node, it is replaced by
/// the spare node within seconds of `--dead-after`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_cut_off_from_its_leader_alone_is_not_replaced_but_one_cut_off_from_all_is() {
    use rowtree_check::proxy::LinkState;
    let dir = tempfile::tempdir().unwrap();
    let cluster = Proxied::start(dir.path(), &["--dead-after", "4"]).await;
    let client = cluster.servers[0].client().await.expect("connect");
    let instance = client.create_instance("inst").await.expect("instance");
    let db = table_t(&client, &instance, "db").await.expect("database");
    retry("the first rows", Duration::from_secs(30), || {
        write(&client, &db, 1..11)
    })
    .await;
    let started = Instant::now();
    let (leader, members) = loop {
        if let (Some(leader), members) = cluster.group(1) {
            if members.len() == 3 {
                break (leader, members);
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "a database group with three voters and a leader"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    // The follower cut off must not lead the placement group: the leader
    // changes the registry through it, and could not reach it.
    let placement = cluster.status(1)["leader"].as_u64();
    let cut = members
        .iter()
        .copied()
        .find(|m| *m != leader && Some(*m) != placement)
        .unwrap();
    let third = members
        .iter()
        .copied()
        .find(|m| *m != leader && *m != cut)
        .unwrap();
    let spare = (1..=4).find(|n| !members.contains(n)).unwrap();
    eprintln!(
        "voters {members:?}, leader {leader}, placement leader {placement:?}: \
         cutting {leader} <-> {cut} only"
    );

    cluster.network.cut_pair(
        (leader - 1) as usize,
        (cut - 1) as usize,
        LinkState::Dropped,
    );
    let cut_at = Instant::now();
    // The leader and the third member commit; the cut follower forwards to
    // the leader over a cut link, so a commit through it fails.
    let through = |id: u64| cluster.servers[(id - 1) as usize].client();
    let leaders_client = through(leader).await.expect("connect");
    retry("commits beside the cut", Duration::from_secs(20), || {
        write(&leaders_client, &db, 11..21)
    })
    .await;
    let cut_client = through(cut).await.expect("connect");
    assert!(
        write(&cut_client, &db, 100..101).await.is_err(),
        "node {cut} reached its leader {leader} over the cut link"
    );
    // Three times --dead-after: the follower stays a voter throughout.
    while cut_at.elapsed() < Duration::from_secs(12) {
        let (_, now) = cluster.group(third);
        assert!(
            now.is_empty() || now == members,
            "node {cut}, heard by node {third}, was replaced: voters {now:?} after {:?}",
            cut_at.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert_eq!(cluster.group(third).1, members, "the voters after the cut");
    // The status shows the failed link: each end unheard by the other.
    let status = cluster.status(third);
    let unheard_by = |id: u64| -> Vec<u64> {
        status["nodes"]
            .as_array()
            .and_then(|nodes| nodes.iter().find(|n| n["id"].as_u64() == Some(id)))
            .and_then(|n| n["unheard_by"].as_array())
            .map(|by| by.iter().filter_map(|b| b.as_u64()).collect())
            .unwrap_or_default()
    };
    assert_eq!(unheard_by(cut), [leader], "{status}");
    assert_eq!(unheard_by(leader), [cut], "{status}");
    assert!(unheard_by(third).is_empty(), "{status}");

    // Now cut off from everyone: dead to every member, and replaced.
    cluster.network.heal();
    cluster
        .network
        .partition(&[(cut - 1) as usize], LinkState::Dropped);
    let isolated_at = Instant::now();
    let mut expected = vec![leader, third, spare];
    expected.sort_unstable();
    loop {
        let (_, now) = cluster.group(third);
        if now == expected {
            break;
        }
        assert!(
            isolated_at.elapsed() < Duration::from_secs(40),
            "node {spare} replacing the isolated node {cut}: voters {now:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    eprintln!(
        "node {cut}, cut off from every node, was replaced by node {spare} {:.2} s later",
        isolated_at.elapsed().as_secs_f64()
    );
    assert!(
        isolated_at.elapsed() >= Duration::from_millis(4_000 - 2_500),
        "not before --dead-after"
    );
    cluster.network.heal();
    let (n, _) = retry(
        "the rows through the spare",
        Duration::from_secs(30),
        || async {
            let c = through(spare).await?;
            count(&c, &db).await
        },
    )
    .await;
    assert_eq!(n, 20, "every acknowledged row");
}
