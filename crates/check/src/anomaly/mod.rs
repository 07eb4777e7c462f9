//! Isolation checks over the gRPC API: workloads whose histories prove or
//! refute serializability and external consistency, while the server is
//! killed and restarted under them.
//!
//! Two workloads run concurrent clients against a real `rowtree serve`
//! (started by [`crate::server`]) and record what each transaction did and
//! how it ended:
//!
//! - [`list_append`]: read-write transactions read lists and append unique
//!   elements, read-only transactions read them at the latest timestamp or
//!   in the past; [`history::check`] finds every anomaly the history shows
//!   (dependency cycles, aborted and intermediate reads, lost appends,
//!   timestamps out of real-time order, stale reads that are not snapshots);
//! - [`bank`]: transfers between accounts, each logged in the same
//!   transaction, with strong and stale reads of the total and partitioned
//!   DML running beside them: every read sees the same total, and the
//!   balances match the logged transfers exactly.
//!
//! A *nemesis* task SIGKILLs the server every `kill_every` and starts it
//! again; clients whose calls fail while it is down record the outcome as
//! failed (the transaction never reached its commit) or unknown (the
//! commit was sent and no answer came back), open new sessions and go on.
//!
//! The target is one `rowtree serve`, or ([`Options::nodes`] > 1) a cluster
//! of `rowtree serve --cluster` processes on loopback whose database is
//! replicated on three of them. Clients then take their connections from
//! every node in turn (a node that does not lead forwards to the one that
//! does), and each kill takes down one node drawn at random, leader or not,
//! for [`Options::down_for`], while the others go on serving; some of the
//! time ([`Options::pause_share`], at random), the node is frozen (SIGSTOP)
//! for that long instead and then let go on (SIGCONT), so a leader comes
//! back from a pause it did not notice. Some of the time
//! ([`Options::partition_share`]), it cuts a random minority of the nodes
//! off from the rest instead: the nodes then reach each other through a
//! proxy on every link ([`crate::proxy`]), and the links across the cut are
//! dropped or go silent for [`Options::down_for`]. Clients go on talking to
//! the minority's nodes, and a commit acknowledged there, of a transaction
//! begun after the cut, is a failure of its own ([`Strikes::minority_acks`]):
//! without a majority no write may succeed. Some of the time
//! ([`Options::restart_share`]), it restarts every node in turn instead,
//! each stopped gracefully, as a rolling upgrade does. The nemesis also
//! times, for each strike, how long until a transaction begun after it
//! commits: how long writes stopped.

pub mod bank;
pub mod history;
pub mod list_append;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};

use tokio::sync::{Mutex, RwLock};

use crate::client::{Client, PROJECT};
use crate::error::{Error, Result};
use crate::server::{Options as ServerOptions, Server};
use crate::wire::Value;

/// How a workload runs.
#[derive(Debug, Clone)]
pub struct Options {
    /// The `rowtree` binary.
    pub binary: PathBuf,
    /// Concurrent clients.
    pub clients: usize,
    /// How long the clients run.
    pub duration: Duration,
    /// Kill and restart a server this often (`None`: never).
    pub kill_every: Option<Duration>,
    /// Seed of the clients' random choices (and of which node dies).
    pub seed: u64,
    /// 1: one `rowtree serve`. More: a cluster of that many `rowtree serve
    /// --cluster` processes, the database replicated on three of them;
    /// clients spread over every node, and each kill takes down a random
    /// node for [`Options::down_for`].
    pub nodes: usize,
    /// How long a killed cluster node stays down before it is started
    /// again (a single server restarts at once), or a frozen one frozen.
    pub down_for: Duration,
    /// In a cluster, the share of the nemesis's strikes that freeze a node
    /// (SIGSTOP, then SIGCONT) instead of killing it (0 to 1).
    pub pause_share: f64,
    /// In a cluster, the share of the nemesis's strikes that cut a minority
    /// of the nodes off from the rest for [`Options::down_for`] (0 to 1,
    /// with `pause_share` at most 1). Nodes then reach each other through
    /// proxies ([`crate::proxy`]); without it, directly.
    pub partition_share: f64,
    /// In a cluster, the share of the nemesis's strikes that restart every
    /// node in turn, each stopped gracefully (SIGTERM) and started again,
    /// as a rolling upgrade does (0 to 1; the three shares at most 1).
    pub restart_share: f64,
    /// In a cluster, on how many nodes the database lives (`rowtree serve
    /// --replicas`; `None`: the server's default, three).
    pub replicas: Option<usize>,
    /// In a cluster, how many of the database's nodes hold each split but
    /// the first (`rowtree serve --split-replicas`; `None`: all of them).
    /// Fewer than [`Options::replicas`] leaves each node without some
    /// splits, which it then reads through a node that has them.
    pub split_replicas: Option<usize>,
    /// Into how many key ranges the workload's tables are cut by split
    /// points before the clients start (1: none), so that transactions
    /// span split groups and commit in two phases.
    pub splits: usize,
    /// In a cluster, whether split groups are spread over the nodes by
    /// count (`rowtree serve --spread-leases`), so that transactions span
    /// nodes.
    pub scatter: bool,
    /// Where to copy each server's log when the run ends (`node-N.log`),
    /// if anywhere: the logs are otherwise removed with the data.
    pub keep_logs: Option<PathBuf>,
    /// Say on stderr, as it happens, every transaction that did not
    /// commit: when (UTC), which client, how long it ran and the error (to
    /// find what the clients waited on after a strike).
    pub trace_failures: bool,
}

impl Options {
    /// One server, `clients` clients for `duration`, no kills, seed 1.
    pub fn new(binary: impl Into<PathBuf>, clients: usize, duration: Duration) -> Options {
        Options {
            binary: binary.into(),
            clients,
            duration,
            kill_every: None,
            seed: 1,
            nodes: 1,
            down_for: Duration::from_secs(1),
            pause_share: 0.5,
            partition_share: 0.0,
            restart_share: 0.0,
            replicas: None,
            split_replicas: None,
            splits: 1,
            scatter: false,
            keep_logs: None,
            trace_failures: false,
        }
    }
}

/// The largest cluster a check starts.
pub const MAX_NODES: usize = 9;

/// How far in the past the workloads' stale reads go, at most: past a
/// cluster replica's safe time (its closed timestamp trails the leader's
/// clock by a second and a little), so that about half of them are
/// follower reads where the client talks to a replica that does not lead.
pub const STALEST: Duration = Duration::from_secs(3);

/// The staleness of one stale read: uniform in `[0, STALEST)`, by the
/// millisecond.
pub(crate) fn stale(rng: &mut impl rand::Rng) -> Duration {
    Duration::from_millis(rng.gen_range(0..STALEST.as_millis() as u64))
}

/// A node of the target: its process and a client connected to it while
/// it is up (`None` while the nemesis holds it down).
struct NodeSlot {
    server: Mutex<Server>,
    client: RwLock<Option<Client>>,
}

/// The servers under test (one, or the nodes of a cluster) and clients
/// connected to them, replaced after every restart.
pub(crate) struct Target {
    nodes: Vec<NodeSlot>,
    /// Which node the next [`Target::client`] call gets (round robin over
    /// the nodes that are up).
    next: AtomicUsize,
    down_for: Duration,
    pause_share: f64,
    partition_share: f64,
    /// The proxies between the nodes, when partitions are on.
    network: Option<crate::proxy::Network>,
    /// Each node's gRPC address (to tell which node a client talks to).
    addrs: Vec<std::net::SocketAddr>,
    /// Each cluster node's peer port (none for one server), and the binary
    /// that asks them for the cluster's status.
    peer_ports: Vec<u16>,
    binary: PathBuf,
    /// See [`Options::keep_logs`].
    keep_logs: Option<PathBuf>,
    /// See [`Options::trace_failures`].
    pub(crate) trace_failures: bool,
    /// The partition in force, if one is.
    cut: std::sync::Mutex<Option<Cut>>,
    /// Partitions made, and the minority's acknowledgements seen.
    pub partitions: std::sync::atomic::AtomicU32,
    /// Nodes restarted gracefully.
    restarts: std::sync::atomic::AtomicU32,
    restart_share: f64,
    minority_acks: std::sync::Mutex<Vec<String>>,
    /// Where the data directories and logs live; removed when the run
    /// ends, unless a server failed to stop (then kept for its log).
    dir: std::sync::Mutex<tempfile::TempDir>,
    pub database: String,
    /// Kills done by the nemesis.
    pub kills: std::sync::atomic::AtomicU32,
    /// Pauses done by the nemesis (a cluster's node frozen with SIGSTOP).
    pub pauses: std::sync::atomic::AtomicU32,
    /// When the run began; and, of the acknowledged transactions, the one
    /// begun last: when it began and when it was acknowledged (nanoseconds
    /// since the epoch; zeros: none yet).
    epoch: Instant,
    fresh_ack: std::sync::Mutex<(u64, u64)>,
    /// For each strike: how long after it a transaction begun after it
    /// was acknowledged.
    pub resumes: std::sync::Mutex<Vec<Resume>>,
}

/// What the nemesis did to a run, and what it saw.
#[derive(Debug, Clone, Default)]
pub struct Strikes {
    /// Times a server was killed and restarted.
    pub kills: u32,
    /// Times a cluster node was frozen and let go on.
    pub pauses: u32,
    /// Times a minority of a cluster's nodes was cut off from the rest.
    pub partitions: u32,
    /// Nodes stopped gracefully and started again (rolling restarts).
    pub restarts: u32,
    /// How long after each strike the next commit was acknowledged,
    /// shortest first (a strike the run ended before any commit followed
    /// is left out).
    pub resumes: Vec<Resume>,
    /// Commits acknowledged through a node on the minority side of a
    /// partition, of transactions that wrote, begun after the cut, while
    /// it lasted: each a write the minority should have refused, since it
    /// cannot reach a majority of the database's replicas. (A read-write
    /// transaction that only read is not counted: it has nothing to
    /// replicate, and a leader may answer it while its lease lasts.)
    pub minority_acks: Vec<String>,
}

impl Strikes {
    /// Kills, pauses, partitions and restarts.
    pub fn total(&self) -> u32 {
        self.kills + self.pauses + self.partitions + self.restarts
    }

    /// Whether the nemesis saw nothing wrong (no minority acknowledged a
    /// write).
    pub fn ok(&self) -> bool {
        self.minority_acks.is_empty()
    }
}

impl std::fmt::Display for Strikes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} kills, {} pauses", self.kills, self.pauses)?;
        if self.restarts > 0 {
            write!(f, ", {} graceful restarts", self.restarts)?;
        }
        if self.partitions > 0 {
            write!(
                f,
                ", {} partitions ({} writes acknowledged on a minority)",
                self.partitions,
                self.minority_acks.len()
            )?;
        }
        Ok(())
    }
}

/// A partition in force: the nodes cut off, and since when.
struct Cut {
    side: Vec<usize>,
    since: Instant,
    what: String,
}

/// One timed strike: what it was and how long writes stopped after it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Resume {
    /// How long after the strike the next commit was acknowledged.
    pub after: Duration,
    /// The strike: `kill of node 2`, `pause of node 3`.
    pub strike: String,
}

impl Target {
    /// Starts the servers over fresh directories (`options.nodes` of them)
    /// and creates a database with `ddl` in it.
    pub(crate) async fn start(options: &Options, ddl: &[&str]) -> Result<Arc<Target>> {
        let nodes = options.nodes;
        if !(1..=MAX_NODES).contains(&nodes) || nodes == 2 {
            return Err(Error::Server(format!(
                "a check runs 1 server or a cluster of 3 to {MAX_NODES} nodes, not {nodes}"
            )));
        }
        let dir = tempfile::tempdir()?;
        let mut slots = Vec::with_capacity(nodes);
        let mut network = None;
        let mut fixed_api_ports: Option<Vec<u16>> = None;
        let mut peers = Vec::new();
        if nodes == 1 {
            let server =
                Server::start(ServerOptions::new(&options.binary, dir.path().join("data"))).await?;
            slots.push(server);
        } else {
            // Peer ports are fixed: the cluster's membership records them,
            // and a restarted node must be found where it was. So are
            // Spanner ports when proxies stand in front of them.
            let peer_ports = (0..nodes)
                .map(|_| crate::server::lasting_port())
                .collect::<Result<Vec<_>>>()?;
            if options.partition_share > 0.0 {
                let api_ports = (0..nodes)
                    .map(|_| crate::server::lasting_port())
                    .collect::<Result<Vec<_>>>()?;
                let local = |port: u16| std::net::SocketAddr::from(([127, 0, 0, 1], port));
                let ends: Vec<_> = peer_ports
                    .iter()
                    .zip(&api_ports)
                    .map(|(peer, api)| (local(*peer), local(*api)))
                    .collect();
                network = Some(crate::proxy::Network::start(&ends).await?);
                fixed_api_ports = Some(api_ports);
            }
            for (i, port) in peer_ports.iter().enumerate() {
                let mut args = vec![
                    "--cluster".to_string(),
                    "--node-id".into(),
                    (i + 1).to_string(),
                    "--peer-port".into(),
                    port.to_string(),
                ];
                if i > 0 {
                    args.push("--join".into());
                    args.push(format!("127.0.0.1:{}", peer_ports[0]));
                }
                if let Some(n) = options.replicas {
                    args.extend(["--replicas".into(), n.to_string()]);
                }
                if let Some(n) = options.split_replicas {
                    args.extend(["--split-replicas".into(), n.to_string()]);
                }
                if options.scatter {
                    args.push("--spread-leases".into());
                }
                if let Some(network) = &network {
                    args.extend(network.route_args(i));
                }
                let data = dir.path().join(format!("node-{}", i + 1)).join("data");
                let mut server_options = ServerOptions::new(&options.binary, data).args(args);
                server_options.port = fixed_api_ports.as_ref().map(|ports| ports[i]);
                // openraft logs every heartbeat a down peer misses; each
                // transaction decided across nodes gets a line (the logs
                // kept show how many there were, and their outcomes).
                // `ROWTREE_CHECK_SERVER_LOG` replaces the filter, to look
                // closer at a run kept with --keep-logs.
                server_options.log_filter = std::env::var("ROWTREE_CHECK_SERVER_LOG")
                    .unwrap_or_else(|_| {
                        "info,openraft=error,rowtree_cluster::raft::groups::spanning=debug".into()
                    });
                let server = Server::start(server_options).await?;
                slots.push(server);
            }
            peers = peer_ports;
        }
        // The database is made through the first node, which opens it at
        // once; the others follow the registry within a moment, and clients
        // that come early are told to try again (UNAVAILABLE).
        let client = slots[0].client().await?;
        let instance = client.create_instance("anomalies").await?;
        let database = client.create_database(&instance, "db", ddl).await?;
        debug_assert!(database.starts_with(PROJECT));
        let addrs = slots.iter().map(Server::addr).collect();
        let mut nodes_up = Vec::with_capacity(slots.len());
        for server in slots {
            let client = server.client().await?;
            nodes_up.push(NodeSlot {
                server: Mutex::new(server),
                client: RwLock::new(Some(client)),
            });
        }
        Ok(Arc::new(Target {
            nodes: nodes_up,
            next: AtomicUsize::new(0),
            down_for: options.down_for,
            pause_share: options.pause_share.clamp(0.0, 1.0),
            partition_share: options.partition_share.clamp(0.0, 1.0),
            network,
            addrs,
            peer_ports: peers,
            binary: options.binary.clone(),
            keep_logs: options.keep_logs.clone(),
            trace_failures: options.trace_failures,
            cut: Default::default(),
            partitions: Default::default(),
            restarts: Default::default(),
            restart_share: options.restart_share.clamp(0.0, 1.0),
            minority_acks: Default::default(),
            dir: std::sync::Mutex::new(dir),
            database,
            kills: Default::default(),
            pauses: Default::default(),
            epoch: Instant::now(),
            fresh_ack: Default::default(),
            resumes: Default::default(),
        }))
    }

    /// A client for a server that is up now: the next one in turn (in a
    /// cluster), waiting while every one is down (a single server being
    /// restarted).
    pub(crate) async fn client(&self) -> Client {
        let n = self.nodes.len();
        let first = self.next.fetch_add(1, Ordering::Relaxed);
        loop {
            for i in 0..n {
                if let Some(c) = &*self.nodes[(first + i) % n].client.read().await {
                    return c.clone();
                }
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// A client of the first node: the one that made the database, which
    /// serves it from the start. (Only the setup uses it, before any kill.)
    /// Cuts `table`, whose keys are `0..keys`, into `splits` key ranges of
    /// about equal size with split points (before the clients start, so
    /// through the first node).
    pub(crate) async fn cut(&self, table: &str, keys: i64, splits: usize) -> Result<()> {
        let splits = i64::try_from(splits.max(1)).unwrap_or(i64::MAX).min(keys);
        let mut points: Vec<i64> = (1..splits).map(|i| i * keys / splits).collect();
        points.dedup();
        if points.is_empty() {
            return Ok(());
        }
        let points: Vec<Vec<Value>> = points.into_iter().map(|k| vec![Value::Int64(k)]).collect();
        self.first_client()
            .await
            .add_split_points(&self.database, table, &points)
            .await
    }

    /// On a cluster, waits (at most [`GROUPS_WAIT`]) until the database
    /// has at least `groups` split groups: a split point is cut by the
    /// node leading its group, a moment after AddSplitPoints returns, and
    /// the workload is meant to run over them all. Says on stderr if they
    /// did not appear.
    pub(crate) async fn wait_for_groups(&self, groups: usize) {
        if self.peer_ports.is_empty() || groups <= 1 {
            return;
        }
        let deadline = Instant::now() + GROUPS_WAIT;
        loop {
            let now = self.split_voters().await.len();
            if now >= groups {
                return;
            }
            if Instant::now() >= deadline {
                eprintln!(
                    "the database has {now} split groups after {} s, not {groups}",
                    GROUPS_WAIT.as_secs()
                );
                return;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// The voters of each of the database's split groups, in the order of
    /// the groups' ids, as `rowtree cluster status` gives them (asked of
    /// each node in turn until one answers). Empty for one server, or if
    /// no node answered (said on stderr): a report, not a verdict.
    pub(crate) async fn split_voters(&self) -> Vec<Vec<u64>> {
        for port in &self.peer_ports {
            let out = tokio::process::Command::new(&self.binary)
                .args(["cluster", "status", "--format", "json", "--node"])
                .arg(format!("127.0.0.1:{port}"))
                .kill_on_drop(true)
                .output();
            let out = match tokio::time::timeout(Duration::from_secs(20), out).await {
                Ok(Ok(out)) if out.status.success() => out,
                Ok(Ok(out)) => {
                    eprintln!(
                        "cluster status through peer port {port}: {}",
                        String::from_utf8_lossy(&out.stderr).trim()
                    );
                    continue;
                }
                Ok(Err(e)) => {
                    eprintln!("cluster status through peer port {port}: {e}");
                    continue;
                }
                Err(_) => {
                    eprintln!("cluster status through peer port {port}: no answer in 20 s");
                    continue;
                }
            };
            let status: serde_json::Value = match serde_json::from_slice(&out.stdout) {
                Ok(status) => status,
                Err(e) => {
                    eprintln!("cluster status through peer port {port}: {e}");
                    continue;
                }
            };
            let groups = status["groups"].as_array().cloned().unwrap_or_default();
            return groups
                .iter()
                .map(|g| {
                    let mut voters: Vec<u64> = g["members"]
                        .as_array()
                        .map(|m| m.iter().filter_map(serde_json::Value::as_u64).collect())
                        .unwrap_or_default();
                    voters.sort_unstable();
                    voters
                })
                .collect();
        }
        Vec::new()
    }

    pub(crate) async fn first_client(&self) -> Client {
        self.nodes[0]
            .client
            .read()
            .await
            .clone()
            .expect("no node is down before the nemesis starts")
    }

    /// Records that a commit of a transaction that wrote was acknowledged
    /// now, to `client`, the transaction begun at `began`: for how long writes stop after a
    /// strike, and whether a partition's minority acknowledged a write.
    pub(crate) fn acknowledged(&self, client: &Client, began: Instant) {
        let now = self.epoch.elapsed().as_nanos() as u64;
        let began_at = began.saturating_duration_since(self.epoch).as_nanos() as u64;
        {
            let mut fresh = self.fresh_ack.lock().expect("fresh ack");
            if began_at >= fresh.0 {
                *fresh = (began_at, now);
            }
        }
        let cut = self.cut.lock().expect("cut");
        let Some(cut) = &*cut else { return };
        let node = client
            .addr()
            .and_then(|a| self.addrs.iter().position(|n| *n == a));
        if let Some(node) = node.filter(|n| cut.side.contains(n)) {
            if began >= cut.since {
                self.minority_acks
                    .lock()
                    .expect("minority acks")
                    .push(format!(
                        "node {} acknowledged a commit {:.2} s into the {}",
                        node + 1,
                        cut.since.elapsed().as_secs_f64(),
                        cut.what
                    ));
            }
        }
    }

    /// What the nemesis did and saw, once the run is over.
    pub(crate) fn strikes(&self) -> Strikes {
        let mut resumes = self.resumes.lock().expect("resumes").clone();
        resumes.sort();
        Strikes {
            kills: self.kills.load(Ordering::Relaxed),
            pauses: self.pauses.load(Ordering::Relaxed),
            partitions: self.partitions.load(Ordering::Relaxed),
            restarts: self.restarts.load(Ordering::Relaxed),
            resumes,
            minority_acks: self.minority_acks.lock().expect("minority acks").clone(),
        }
    }

    /// SIGKILLs a server and starts it again over the same directory: the
    /// single server at once; in a cluster, node `victim` after
    /// [`Options::down_for`], while the others serve. Measures how long
    /// writes stopped.
    pub(crate) async fn kill_and_restart(
        self: &Arc<Self>,
        victim: usize,
        until: Instant,
    ) -> Result<()> {
        let node = &self.nodes[victim % self.nodes.len()];
        let mut server = node.server.lock().await;
        *node.client.write().await = None;
        server.kill()?;
        self.kills.fetch_add(1, Ordering::Relaxed);
        // A single server's writes resume with its restart, which is not
        // what the timing is about; a cluster's others serve meanwhile.
        let watcher = (self.nodes.len() > 1)
            .then(|| self.watch_resume(format!("kill of node {}", victim + 1), until));
        if watcher.is_some() {
            tokio::time::sleep(self.down_for).await;
        }
        server.restart().await?;
        *node.client.write().await = Some(server.client().await?);
        drop(server);
        if let Some(watcher) = watcher {
            let _ = watcher.await;
        }
        Ok(())
    }

    /// Freezes cluster node `victim` (SIGSTOP) for [`Options::down_for`]
    /// and lets it go on (SIGCONT). Its clients are not taken away: their
    /// calls hang until it resumes. A paused leader comes back still
    /// believing it leads; whatever it serves then must be right.
    pub(crate) async fn pause(self: &Arc<Self>, victim: usize, until: Instant) -> Result<()> {
        let node = &self.nodes[victim % self.nodes.len()];
        let mut server = node.server.lock().await;
        server.pause(true)?;
        self.pauses.fetch_add(1, Ordering::Relaxed);
        let watcher = self.watch_resume(format!("pause of node {}", victim + 1), until);
        tokio::time::sleep(self.down_for).await;
        server.pause(false)?;
        drop(server);
        let _ = watcher.await;
        Ok(())
    }

    /// Restarts every node in turn, as a rolling upgrade does: each stopped
    /// gracefully (SIGTERM; a node stopping hands the groups it leads to
    /// others), started again over its directory and waited for before the
    /// next. Each restart is timed. A node that does not stop cleanly fails
    /// the run.
    pub(crate) async fn rolling_restart(self: &Arc<Self>, until: Instant) -> Result<()> {
        for (i, node) in self.nodes.iter().enumerate() {
            if Instant::now() >= until {
                break;
            }
            let mut server = node.server.lock().await;
            *node.client.write().await = None;
            let watcher = self.watch_resume(format!("restart of node {}", i + 1), until);
            server
                .stop()
                .await
                .map_err(|e| Error::Server(format!("node {} did not stop cleanly: {e}", i + 1)))?;
            server.restart().await?;
            *node.client.write().await = Some(server.client().await?);
            drop(server);
            self.restarts.fetch_add(1, Ordering::Relaxed);
            let _ = watcher.await;
        }
        Ok(())
    }

    /// Cuts a minority of the cluster's nodes, drawn with `rng`, off from
    /// the rest for [`Options::down_for`], its links dropped or silent (at
    /// random), and heals the network. Clients keep talking to every node:
    /// those of the minority must see their writes fail.
    pub(crate) async fn partition(
        self: &Arc<Self>,
        rng: &mut rand::rngs::StdRng,
        until: Instant,
    ) -> Result<()> {
        let Some(network) = &self.network else {
            return Err(Error::Protocol(
                "a partition needs the nodes started behind proxies".into(),
            ));
        };
        let n = self.nodes.len();
        let size = rng.gen_range(1..=(n - 1) / 2);
        let mut side: Vec<usize> = rand::seq::index::sample(rng, n, size).into_vec();
        side.sort_unstable();
        let state = if rng.gen_bool(0.5) {
            crate::proxy::LinkState::Dropped
        } else {
            crate::proxy::LinkState::Silent
        };
        let names: Vec<String> = side.iter().map(|i| (i + 1).to_string()).collect();
        let what = format!(
            "partition of node{} {} ({})",
            if size > 1 { "s" } else { "" },
            names.join(", "),
            if state == crate::proxy::LinkState::Dropped {
                "dropped"
            } else {
                "silent"
            }
        );
        *self.cut.lock().expect("cut") = Some(Cut {
            side: side.clone(),
            since: Instant::now(),
            what: what.clone(),
        });
        network.partition(&side, state);
        self.partitions.fetch_add(1, Ordering::Relaxed);
        let watcher = self.watch_resume(what, until);
        tokio::time::sleep(self.down_for).await;
        *self.cut.lock().expect("cut") = None;
        network.heal();
        let _ = watcher.await;
        Ok(())
    }

    /// Starts timing a strike made just now: a task that waits (up to
    /// 30 s) for the first commit acknowledged of a transaction begun after
    /// the strike, and records how long after the strike it came. (A
    /// transaction begun before may still be acknowledged after, with its
    /// commit replicated before the strike: that says nothing of whether
    /// writes go on.) A strike the clients' run (ending at `until`) ended
    /// before such a commit is not timed.
    fn watch_resume(
        self: &Arc<Self>,
        strike: String,
        until: Instant,
    ) -> tokio::task::JoinHandle<()> {
        let struck_at = self.epoch.elapsed().as_nanos() as u64;
        // When, on the wall clock (UTC), to find the strike in the nodes' logs.
        let strike = format!("{strike} at {}", utc_time_of_day());
        let target = self.clone();
        tokio::spawn(async move { target.time_resume(strike, struck_at, until).await })
    }

    async fn time_resume(&self, strike: String, killed_at: u64, until: Instant) {
        let deadline = Instant::now() + Duration::from_secs(30);
        // A stall is said as it happens, so that whoever watches the run
        // can look at the nodes while they are stuck.
        let mut stall_said = false;
        while Instant::now() < deadline {
            if !stall_said && deadline - Instant::now() < Duration::from_secs(20) {
                stall_said = true;
                eprintln!(
                    "stall: no transaction begun after the {strike} has committed in 10 s \
                     (now {})",
                    utc_time_of_day()
                );
            }
            if Instant::now() >= until {
                return;
            }
            let (began, acked) = *self.fresh_ack.lock().expect("fresh ack");
            if began > killed_at {
                self.resumes.lock().expect("resumes").push(Resume {
                    after: Duration::from_nanos(acked.saturating_sub(killed_at)),
                    strike,
                });
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        self.resumes.lock().expect("resumes").push(Resume {
            after: Duration::from_secs(30),
            strike,
        });
    }

    /// Stops every server gracefully (the end of a run).
    pub(crate) async fn stop(&self) -> Result<()> {
        for (i, node) in self.nodes.iter().enumerate() {
            let mut server = node.server.lock().await;
            if let Err(e) = server.stop().await {
                let mut dir = self.dir.lock().expect("dir");
                dir.disable_cleanup(true);
                return Err(Error::Server(format!(
                    "node {} of {}: {e}; its log ({}) ends:\n{}",
                    i + 1,
                    self.nodes.len(),
                    server.log_path().display(),
                    server.log_tail()
                )));
            }
        }
        Ok(())
    }

    /// How many transactions the nodes decided across nodes (run by one
    /// node, with writes prepared at others), and how many of those were
    /// aborted, as their logs say (each logs a debug line per decision,
    /// which the cluster's log filter keeps).
    pub(crate) fn decided_across_nodes(&self) -> (usize, usize) {
        let (mut decided, mut aborted) = (0, 0);
        for node in &self.nodes {
            let Ok(server) = node.server.try_lock() else {
                continue;
            };
            let Ok(log) = std::fs::read_to_string(server.log_path()) else {
                continue;
            };
            for line in log.lines().filter(|l| l.contains(DECIDED_ACROSS_NODES)) {
                decided += 1;
                if line.contains("Abort") {
                    aborted += 1;
                }
            }
        }
        (decided, aborted)
    }

    /// Copies each server's log to [`Options::keep_logs`], if set.
    fn keep_logs(&self) {
        let Some(dir) = &self.keep_logs else { return };
        if let Err(e) = std::fs::create_dir_all(dir) {
            eprintln!("cannot keep the logs in {}: {e}", dir.display());
            return;
        }
        for (i, node) in self.nodes.iter().enumerate() {
            let Ok(server) = node.server.try_lock() else {
                eprintln!("node {}'s log is not kept: its server is busy", i + 1);
                continue;
            };
            let to = dir.join(format!("node-{}.log", i + 1));
            if let Err(e) = std::fs::copy(server.log_path(), &to) {
                eprintln!("cannot copy node {}'s log to {}: {e}", i + 1, to.display());
            }
        }
    }
}

impl Drop for Target {
    /// Keeps the logs (if asked) however the run ended, before the data
    /// directory goes.
    fn drop(&mut self) {
        self.keep_logs();
    }
}

/// How long a run waits for the split groups its split points make
/// ([`Target::wait_for_groups`]).
const GROUPS_WAIT: Duration = Duration::from_secs(30);

/// What a cluster node logs (at debug level, for
/// `rowtree_cluster::raft::groups::spanning`) when it decides a transaction
/// that prepared writes at other nodes.
const DECIDED_ACROSS_NODES: &str = "decided a transaction that prepared writes at other nodes";

/// The time of day now, UTC, as `HH:MM:SS.mmm` (the servers' logs stamp
/// their lines in UTC).
pub(crate) fn utc_time_of_day() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = now.as_secs() % 86_400;
    format!(
        "{:02}:{:02}:{:02}.{:03}",
        secs / 3_600,
        secs / 60 % 60,
        secs % 60,
        now.subsec_millis()
    )
}

/// Kills and restarts a server every `every` until `until`; in a cluster a
/// random node each time (drawn from `seed`), which it freezes instead of
/// killing [`Options::pause_share`] of the time (at random), instead cuts
/// a random minority off [`Options::partition_share`] of the time, and
/// restarts every node in turn [`Options::restart_share`] of the time.
pub(crate) async fn nemesis(
    target: Arc<Target>,
    every: Option<Duration>,
    until: Instant,
    seed: u64,
) -> Result<()> {
    let Some(every) = every else {
        return Ok(());
    };
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0x006e_656d_6573_6973);
    loop {
        let next = Instant::now() + every;
        if next >= until {
            return Ok(());
        }
        tokio::time::sleep_until(next.into()).await;
        let victim = rng.gen_range(0..target.nodes.len());
        let draw: f64 = rng.gen();
        if target.nodes.len() == 1 {
            target.kill_and_restart(victim, until).await?;
        } else if draw < target.pause_share {
            target.pause(victim, until).await?;
        } else if draw < target.pause_share + target.partition_share {
            target.partition(&mut rng, until).await?;
        } else if draw < target.pause_share + target.partition_share + target.restart_share {
            target.rolling_restart(until).await?;
        } else {
            target.kill_and_restart(victim, until).await?;
        }
    }
}

/// A session of `client` on the target database, created anew when the
/// server lost it (a restart) or the client changed.
pub(crate) struct SessionSlot {
    session: Option<(Client, String)>,
}

impl SessionSlot {
    pub(crate) fn new() -> SessionSlot {
        SessionSlot { session: None }
    }

    /// The client and session to use for the next transaction.
    pub(crate) async fn get(&mut self, target: &Target) -> Result<(Client, String)> {
        if let Some(s) = &self.session {
            return Ok(s.clone());
        }
        let client = target.client().await;
        let session = client.create_session(&target.database).await?;
        self.session = Some((client.clone(), session.clone()));
        Ok((client, session))
    }

    /// [`SessionSlot::get`] for a client's loop: on failure (the server is
    /// down, being restarted) waits a little and answers `None`, so the
    /// loop goes round again.
    pub(crate) async fn next(&mut self, target: &Target) -> Option<(Client, String)> {
        match self.get(target).await {
            Ok(s) => Some(s),
            Err(e) => {
                if target.trace_failures {
                    eprintln!("{} a session could not be made: {e}", utc_time_of_day());
                }
                self.reset_after(&e);
                tokio::time::sleep(Duration::from_millis(50)).await;
                None
            }
        }
    }

    /// Forgets the session after an error that may mean it is gone, and
    /// deletes it in the background, as a client library's pool does with
    /// a session it gives up (a session that is gone answers NOT_FOUND):
    /// a database holds at most 10,000.
    pub(crate) fn reset_after(&mut self, error: &Error) {
        if error.is_unavailable()
            || matches!(
                error.code(),
                Some(tonic::Code::NotFound | tonic::Code::DeadlineExceeded)
            )
            || matches!(error, Error::Timeout(_))
        {
            if let Some((client, session)) = self.session.take() {
                tokio::spawn(async move {
                    let _ = tokio::time::timeout(
                        Duration::from_secs(2),
                        client.delete_session(&session),
                    )
                    .await;
                });
            }
        }
    }
}

/// Runs `call` with a deadline: a call to a server that was killed may
/// otherwise wait for a connection that never comes back.
pub(crate) async fn bounded<T>(
    what: &str,
    call: impl std::future::Future<Output = Result<T>>,
) -> Result<T> {
    match tokio::time::timeout(Duration::from_secs(20), call).await {
        Ok(r) => r,
        Err(_) => Err(Error::Timeout(what.to_string())),
    }
}

/// Nanoseconds on the client's monotonic clock since `epoch`.
pub(crate) fn since(epoch: Instant) -> i128 {
    epoch.elapsed().as_nanos() as i128
}
