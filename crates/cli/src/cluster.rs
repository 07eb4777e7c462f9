//! `rowtree serve --cluster` (one node of a cluster) and `rowtree cluster
//! up|status` (a local cluster of node processes, and what it looks like).
//!
//! A node is the `rowtree-cluster` crate's [`Node`]: its peer port, its
//! replica of the placement group, joining and status. `cluster up` starts
//! N of them as child processes of itself on 127.0.0.1, writes where they
//! are to `DIR/cluster.json`, waits until every node is live, prints the
//! endpoints and then watches them until Ctrl-C or SIGTERM, when it stops
//! them. Each child is started with `--exit-on-stdin-eof` and a pipe as its
//! standard input, so the nodes also stop if `cluster up` itself is killed.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitCode, Stdio};
use std::time::{Duration, Instant};

use clap::{Args, Subcommand, ValueEnum};
use rowtree_cluster::node::status::ClusterStatus;
use rowtree_cluster::node::{api, Node, NodeConfig};
use serde::{Deserialize, Serialize};

/// `rowtree cluster ...`.
#[derive(Debug, Subcommand)]
pub enum ClusterCommand {
    /// Start a local cluster: N node processes on 127.0.0.1, each with its
    /// own data directory under DIR (DIR/node-1, ...), and wait until all
    /// of them are live members.
    ///
    /// Node 1 bootstraps the cluster; the others join it. Where the nodes
    /// are (ids, peer addresses, process ids, log files) is written to
    /// DIR/cluster.json, which `rowtree cluster status --dir DIR` reads.
    /// The command stays in the foreground and reports nodes that exit;
    /// Ctrl-C (or SIGTERM) stops every node. Run it again on the same DIR
    /// to start the same cluster again, from its data.
    ///
    /// Each node serves Spanner's gRPC API on a port of its own (printed,
    /// and in DIR/cluster.json): point a client at it with
    /// SPANNER_EMULATOR_HOST. Each database is replicated on three nodes
    /// and served by the node leading its group; any node accepts a
    /// client's requests and forwards them to that node.
    Up(UpArgs),
    /// Show the cluster's nodes as one node sees them: the placement
    /// group's leader and term, and per node its peer address, state
    /// (joining, live, removed), part in the placement group (voter,
    /// learner), when the leader last heard from it, its clock's offset
    /// from the answering node's, its load, and the nodes that do not hear
    /// it; then, per database by name, its split groups in key order, each
    /// with its leader, replicas, load (a share of its leader's node), Raft
    /// term and key range in the schema's terms (the leader asks each node
    /// for the groups it holds).
    ///
    /// Any node answers; one that is not the leader asks the leader. If no
    /// leader can be reached (no quorum), the node answers from its own
    /// copy and says so.
    Status(StatusArgs),
    /// Take a node out of the cluster for good: its record becomes
    /// `removed`, it leaves the placement group (a voter is replaced by a
    /// reachable learner if there is one), and its id can never join
    /// again. Stop the node's process afterwards; it no longer takes part.
    ///
    /// Refused for the placement group's only voter. Removing the leader
    /// hands the group to another voter.
    Remove(RemoveArgs),
}

#[derive(Debug, Args)]
pub struct RemoveArgs {
    /// The node to remove.
    #[arg(long, value_name = "N")]
    node_id: u64,
    #[command(flatten)]
    target: Target,
}

/// Which node to ask.
#[derive(Debug, Args)]
pub struct Target {
    /// A cluster started by `rowtree cluster up --dir DIR`: ask its nodes,
    /// in order, until one answers.
    #[arg(
        long,
        value_name = "DIR",
        conflicts_with = "node",
        required_unless_present = "node"
    )]
    dir: Option<PathBuf>,
    /// The peer address (HOST:PORT) of any node.
    #[arg(long, value_name = "HOST:PORT")]
    node: Option<String>,
}

#[derive(Debug, Args)]
pub struct UpArgs {
    /// Number of nodes.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=9))]
    nodes: u64,
    /// Directory of the cluster (created if missing).
    #[arg(long, value_name = "DIR")]
    dir: PathBuf,
    /// Give up if the nodes are not all live after this many seconds.
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    timeout: u64,
    /// More `rowtree serve` flags for every node, after `--`; for
    /// experiments, e.g. `-- --merge-after 5 --split-hot-for 10`.
    #[arg(last = true, value_name = "SERVE FLAGS")]
    serve_flags: Vec<String>,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    #[command(flatten)]
    target: Target,
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Json,
}

/// What `cluster up` writes to DIR/cluster.json.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClusterFile {
    pub nodes: Vec<NodeEntry>,
}

/// One node in DIR/cluster.json.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NodeEntry {
    pub id: u64,
    pub peer_addr: String,
    /// Where it serves Spanner's gRPC API (empty in a file written before
    /// nodes served databases: a port is chosen on the next start).
    #[serde(default)]
    pub client_addr: String,
    /// Where it serves the key visualizer over HTTP (empty in a file
    /// written before nodes did: a port is chosen on the next start).
    #[serde(default)]
    pub http_addr: String,
    pub data_dir: PathBuf,
    pub log: PathBuf,
    /// The process id of its last start.
    pub pid: u32,
}

/// A multi-threaded tokio runtime, or the error printed for the user.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, ExitCode> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        // A node serves requests on these threads: the stack size Rowtree's
        // recursion guard is tuned for.
        .thread_stack_size(rowtree_types::stack::THREAD_STACK)
        .build()
        .map_err(|e| {
            eprintln!("error: cannot start the runtime: {e}");
            ExitCode::FAILURE
        })
}

/// `rowtree cluster ...`.
pub fn run(command: ClusterCommand) -> ExitCode {
    let runtime = match runtime() {
        Ok(r) => r,
        Err(code) => return code,
    };
    let result = match command {
        ClusterCommand::Up(args) => runtime.block_on(up(args)),
        ClusterCommand::Status(args) => runtime.block_on(status(args)),
        ClusterCommand::Remove(args) => runtime.block_on(remove(args)),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The settings `rowtree serve --cluster` passes on to a node.
pub struct ServeNode {
    pub node_id: u64,
    pub data_dir: PathBuf,
    pub listen: std::net::SocketAddr,
    pub advertise: Option<String>,
    /// Addresses dialled in place of others (`--route`).
    pub routes: rowtree_cluster::raft::Routes,
    pub join: Vec<String>,
    pub join_timeout: Duration,
    pub dead_after: Duration,
    pub max_clock_offset: Duration,
    pub exit_on_stdin_eof: bool,
    /// How many nodes hold a replica of each new database.
    pub replicas: usize,
    /// How many of a database's hosts hold a replica of each split other
    /// than its first (`None`: all of them).
    pub split_replicas: Option<usize>,
    /// Whether split groups are spread over their voters by count
    /// (`--spread-leases`) instead of cold ones gathered.
    pub spread_leases: bool,
    /// How many entries each split group applies between snapshots.
    pub snapshot_every: u64,
    /// The Spanner API server the node runs once it is a member.
    pub server: rowtree_server::Config,
}

/// `rowtree serve --cluster`: runs one node until SIGINT, SIGTERM or (with
/// `exit_on_stdin_eof`) the end of standard input.
pub fn serve_node(settings: ServeNode) -> ExitCode {
    if settings.data_dir.join("registry.json").exists() {
        eprintln!(
            "error: {} holds a single-process Rowtree (registry.json); a cluster node needs a \
             directory of its own (converting one into a cluster is not supported)",
            settings.data_dir.display()
        );
        return ExitCode::FAILURE;
    }
    let runtime = match runtime() {
        Ok(r) => r,
        Err(code) => return code,
    };
    let code = runtime.block_on(async move {
        let config = NodeConfig {
            node_id: settings.node_id,
            data_dir: settings.data_dir,
            listen: settings.listen,
            advertise: settings.advertise,
            join: settings.join,
            join_timeout: settings.join_timeout,
            dead_after: settings.dead_after,
            max_clock_offset: settings.max_clock_offset,
            clock: rowtree_cluster::node::clock::WallClock::system(),
            routes: settings.routes,
            snapshot_every: settings.snapshot_every,
        };
        let node = match Node::start(config).await {
            Ok(n) => n,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        };
        eprintln!(
            "rowtree: node {} of cluster {}, peer port {}",
            node.id(),
            node.cluster_id(),
            node.peer_addr()
        );
        node.hosting()
            .set_split_replicas(settings.split_replicas.unwrap_or(0));
        node.hosting().set_spread_leases(settings.spread_leases);
        let server = rowtree_server::Server::start(rowtree_server::Config {
            cluster: Some(rowtree_server::ClusterConfig {
                hosting: node.hosting(),
                replicas: settings.replicas,
            }),
            ..settings.server
        })
        .await;
        let server = match server {
            Ok(s) => s,
            Err(e) => {
                eprintln!("error: {e}");
                node.shutdown().await;
                return ExitCode::FAILURE;
            }
        };
        // Other nodes forward requests here: tell them where. A wildcard
        // address is reached at the peer address's host.
        let client_addr = if server.local_addr.ip().is_unspecified() {
            let host = node
                .peer_addr()
                .rsplit_once(':')
                .map_or("127.0.0.1", |(h, _)| h);
            format!("{host}:{}", server.local_addr.port())
        } else {
            server.local_addr.to_string()
        };
        // Until it is recorded (the placement group may have no leader
        // now), the others cannot forward here; the node serves anyway.
        let hosting = node.hosting();
        let announcer = tokio::spawn(async move {
            while let Err(e) = hosting.announce(client_addr.clone()).await {
                tracing::warn!(
                    error = %e.message(),
                    "cannot record this node's Spanner address in the cluster yet; trying again"
                );
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        });
        eprintln!(
            "rowtree: serving Spanner's gRPC API on {}; `rowtree cluster status --node {}` shows the cluster",
            server.local_addr,
            node.peer_addr()
        );
        if let Some(http) = server.http_addr {
            eprintln!("rowtree: key visualizer on http://{http}/");
        }
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("error: cannot watch for SIGTERM: {e}");
                    return ExitCode::FAILURE;
                }
            };
        let stdin_closed = async {
            if settings.exit_on_stdin_eof {
                // Reads until end of file (the parent closed the pipe or died).
                let _ = tokio::task::spawn_blocking(|| {
                    std::io::copy(&mut std::io::stdin(), &mut std::io::sink())
                })
                .await;
            } else {
                std::future::pending::<()>().await;
            }
        };
        let guard = tokio::select! {
            _ = tokio::signal::ctrl_c() => None,
            _ = term.recv() => None,
            _ = stdin_closed => None,
            why = node.stopped() => Some(why),
        };
        announcer.abort();
        tracing::info!("stopping the node");
        // The groups this node leads go to other nodes while its server
        // drains: the cluster's writes need not wait for the drain.
        let (stopped, ()) = tokio::join!(server.shutdown(), node.hand_over_groups());
        if let Err(e) = stopped {
            tracing::warn!(error = %e, "the server stopped with an error");
        }
        node.shutdown().await;
        match guard {
            None => ExitCode::SUCCESS,
            Some(why) => {
                eprintln!("error: the node stopped: {why}");
                ExitCode::FAILURE
            }
        }
    });
    // A request cut off by the server's drain may still be on a blocking
    // thread (waiting for a lock or its group): do not wait for it forever.
    runtime.shutdown_timeout(EXIT_TIMEOUT);
    code
}

/// How long a stopping process waits for work still on its threads.
const EXIT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Free TCP ports on 127.0.0.1, each held until the last is chosen so no
/// two are the same (free when asked: the nodes bind them a moment later).
///
/// `cluster.json` records a node's ports, and a node started again must find
/// them free. The system's own picks (a bind to port 0, the local end of any
/// outgoing connection) come from its ephemeral range, 32768–60999 on Linux
/// by default, where any connection made while a node is down may take that
/// node's port. So these come from below that range, which only programs
/// asking for a port by its number use, tried in turn from a random place.
struct FreePorts {
    held: Vec<std::net::TcpListener>,
    /// Ports are taken from `LOWEST..below`.
    below: u16,
    /// Tried next, as an offset from `LOWEST`.
    offset: u16,
}

impl FreePorts {
    /// The lowest port handed out.
    const LOWEST: u16 = 10_000;

    fn new() -> FreePorts {
        let below = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
            .ok()
            .and_then(|text| text.split_whitespace().next()?.parse().ok())
            .unwrap_or(49_152u16);
        let span = below.saturating_sub(Self::LOWEST).max(1);
        FreePorts {
            held: Vec::new(),
            below,
            offset: rand::random::<u16>() % span,
        }
    }

    /// Another free port, not one handed out before.
    fn next(&mut self) -> Result<u16, String> {
        let span = self.below.saturating_sub(Self::LOWEST);
        // A system whose ephemeral range reaches this low has no safe place:
        // take what it gives.
        let candidates: Vec<u16> = if span < 1_000 {
            vec![0]
        } else {
            let span = u32::from(span);
            (0..span)
                .map(|i| {
                    // Below `span`, which fits a u16.
                    let offset = (u32::from(self.offset) + i) % span;
                    Self::LOWEST + offset as u16
                })
                .collect()
        };
        for port in candidates {
            if let Ok(listener) = std::net::TcpListener::bind(("127.0.0.1", port)) {
                let port = listener
                    .local_addr()
                    .map_err(|e| format!("cannot find a free port: {e}"))?
                    .port();
                if span >= 1_000 {
                    self.offset = port - Self::LOWEST + 1;
                }
                self.held.push(listener);
                return Ok(port);
            }
        }
        Err(format!(
            "cannot find a free port on 127.0.0.1 between {} and {}",
            Self::LOWEST,
            self.below
        ))
    }
}

fn cluster_file(dir: &Path) -> PathBuf {
    dir.join("cluster.json")
}

fn read_cluster_file(dir: &Path) -> Result<Option<ClusterFile>, String> {
    let path = cluster_file(dir);
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| format!("{}: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

fn write_cluster_file(dir: &Path, file: &ClusterFile) -> Result<(), String> {
    let path = cluster_file(dir);
    let tmp = dir.join("cluster.json.tmp");
    let json = serde_json::to_vec_pretty(file).expect("cluster file serializes");
    std::fs::write(&tmp, json)
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Starts one node process.
fn spawn_node(entry: &NodeEntry, join: Option<&str>, flags: &[String]) -> Result<Child, String> {
    std::fs::create_dir_all(&entry.data_dir)
        .map_err(|e| format!("{}: {e}", entry.data_dir.display()))?;
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&entry.log)
        .map_err(|e| format!("{}: {e}", entry.log.display()))?;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find rowtree itself: {e}"))?;
    let port_of = |addr: &str| {
        addr.rsplit_once(':')
            .map(|(_, p)| p.to_string())
            .unwrap_or_default()
    };
    let port = port_of(&entry.peer_addr);
    let mut command = std::process::Command::new(exe);
    command
        // Every process reads the same clock: the tightest bound.
        .args([
            "serve",
            "--cluster",
            "--exit-on-stdin-eof",
            "--max-clock-offset",
            "1",
        ])
        .args(["--node-id", &entry.id.to_string()])
        .arg("--data-dir")
        .arg(&entry.data_dir)
        .args(["--peer-port", &port])
        .args(["--port", &port_of(&entry.client_addr)])
        .args(["--http-port", &port_of(&entry.http_addr)])
        .stdin(Stdio::piped())
        .stdout(log.try_clone().map_err(|e| e.to_string())?)
        .stderr(log);
    if let Some(join) = join {
        command.args(["--join", join]);
    }
    command.args(flags);
    command
        .spawn()
        .map_err(|e| format!("cannot start node {}: {e}", entry.id))
}

/// A local cluster of node processes, children of this process (`cluster
/// up`, and `demo hotspots --cluster`): started by [`LocalCluster::start`],
/// stopped when dropped.
pub struct LocalCluster {
    /// Where the nodes are.
    pub file: ClusterFile,
    /// The cluster's directory (canonical).
    pub dir: PathBuf,
    children: Vec<(u64, Option<Child>)>,
}

impl LocalCluster {
    /// Starts `nodes` node processes in `dir` (the same cluster again if
    /// `dir` holds one), each with `serve_flags` more, and waits at most
    /// `timeout` until every node is live and serves Spanner's API,
    /// printing its progress on standard error. Returns the cluster and
    /// its status once up; on failure the nodes started are stopped.
    pub async fn start(
        dir: &Path,
        nodes: u64,
        serve_flags: &[String],
        timeout: Duration,
    ) -> Result<(LocalCluster, ClusterStatus), String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let dir = dir
            .canonicalize()
            .map_err(|e| format!("{}: {e}", dir.display()))?;
        let existing = read_cluster_file(&dir)?;
        let mut ports = FreePorts::new();
        let mut file = match existing {
            Some(file) => {
                if file.nodes.len() as u64 != nodes {
                    return Err(format!(
                        "{} holds a cluster of {} nodes; start it with --nodes {} (adding and \
                         removing nodes is not supported by `cluster up`)",
                        dir.display(),
                        file.nodes.len(),
                        file.nodes.len()
                    ));
                }
                eprintln!("rowtree: starting the cluster in {} again", dir.display());
                file
            }
            None => {
                let mut entries = Vec::new();
                for id in 1..=nodes {
                    let data_dir = dir.join(format!("node-{id}"));
                    entries.push(NodeEntry {
                        id,
                        peer_addr: format!("127.0.0.1:{}", ports.next()?),
                        client_addr: format!("127.0.0.1:{}", ports.next()?),
                        http_addr: format!("127.0.0.1:{}", ports.next()?),
                        log: data_dir.join("node.log"),
                        data_dir,
                        pid: 0,
                    });
                }
                ClusterFile { nodes: entries }
            }
        };
        for entry in &mut file.nodes {
            if entry.client_addr.is_empty() {
                entry.client_addr = format!("127.0.0.1:{}", ports.next()?);
            }
            if entry.http_addr.is_empty() {
                entry.http_addr = format!("127.0.0.1:{}", ports.next()?);
            }
        }
        // Released for the nodes to bind.
        drop(ports);
        let first = file.nodes[0].peer_addr.clone();
        let mut cluster = LocalCluster {
            file,
            dir,
            children: Vec::new(),
        };
        for i in 0..cluster.file.nodes.len() {
            let entry = &mut cluster.file.nodes[i];
            let join = (entry.id != 1).then_some(first.as_str());
            let child = spawn_node(entry, join, serve_flags)?;
            entry.pid = child.id();
            let id = entry.id;
            cluster.children.push((id, Some(child)));
        }
        write_cluster_file(&cluster.dir, &cluster.file)?;
        let status = cluster.wait_until_up(nodes, timeout).await?;
        Ok((cluster, status))
    }

    /// Waits until every node is live and serves Spanner's API, with a
    /// line of progress.
    async fn wait_until_up(
        &mut self,
        nodes: u64,
        timeout: Duration,
    ) -> Result<ClusterStatus, String> {
        let started = Instant::now();
        let deadline = started + timeout;
        let tty = std::io::IsTerminal::is_terminal(&std::io::stderr());
        let mut last_line = String::new();
        let ready = loop {
            let status = ask_any(&self.file, Duration::from_secs(2)).await;
            let live = status
                .as_ref()
                .map_or(0, |s| s.nodes.iter().filter(|n| n.state == "live").count());
            let line = format!(
                "waiting for the nodes: {live}/{nodes} live ({} s)",
                started.elapsed().as_secs()
            );
            if tty {
                eprint!("\r{line}");
            } else if line != last_line && live as u64 != nodes {
                eprintln!("{line}");
            }
            last_line = line;
            if let Ok(s) = &status {
                // Every node live, and serving Spanner's API.
                let serving = self.file.nodes.iter().all(|n| {
                    n.client_addr
                        .parse::<std::net::SocketAddr>()
                        .is_ok_and(|addr| {
                            std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200))
                                .is_ok()
                        })
                }) && s.nodes.iter().all(|n| n.client_addr.is_some());
                if s.from_leader && live as u64 == nodes && serving {
                    break Ok(s.clone());
                }
            }
            if let Some((id, exit)) = exited(&mut self.children) {
                break Err(format!(
                    "node {id} exited ({exit}) before the cluster was up; its log: {}",
                    self.file.nodes[(id - 1) as usize].log.display()
                ));
            }
            if Instant::now() > deadline {
                break Err(format!(
                    "the nodes were not all live after {} s (last: {}); logs in {}/node-*/node.log",
                    timeout.as_secs(),
                    match &status {
                        Ok(s) => format!("{} of {} live", live, s.nodes.len()),
                        Err(e) => e.clone(),
                    },
                    self.dir.display()
                ));
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        if tty {
            eprintln!();
        }
        ready
    }

    /// The cluster's status, from the first node that answers.
    pub async fn status(&self) -> Result<ClusterStatus, String> {
        ask_any(&self.file, Duration::from_secs(2)).await
    }

    /// A node that exited since the last look, with how.
    pub fn exited(&mut self) -> Option<(u64, String)> {
        exited(&mut self.children)
    }

    /// Stops every node: closes its standard input (a node stops when it
    /// closes), then kills what lingers after 5 s.
    pub fn stop(&mut self) {
        for (_, child) in self.children.iter_mut() {
            if let Some(c) = child.as_mut() {
                drop(c.stdin.take());
            }
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        for (_, child) in self.children.iter_mut() {
            if let Some(mut c) = child.take() {
                while Instant::now() < deadline {
                    if let Ok(Some(_)) = c.try_wait() {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
                let _ = c.kill();
                let _ = c.wait();
            }
        }
    }
}

impl Drop for LocalCluster {
    fn drop(&mut self) {
        self.stop();
    }
}

/// `rowtree cluster up`.
async fn up(args: UpArgs) -> Result<(), String> {
    let (mut cluster, status) = LocalCluster::start(
        &args.dir,
        args.nodes,
        &args.serve_flags,
        Duration::from_secs(args.timeout),
    )
    .await?;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "cluster {} is up: {} nodes, placement leader node {}",
        status.cluster_id,
        args.nodes,
        status.leader.unwrap_or(0)
    );
    for entry in &cluster.file.nodes {
        let _ = writeln!(
            out,
            "  node {}: SPANNER_EMULATOR_HOST={}  peer port {}  key visualizer http://{}/  pid {}  data {}  log {}",
            entry.id,
            entry.client_addr,
            entry.peer_addr,
            entry.http_addr,
            entry.pid,
            entry.data_dir.display(),
            entry.log.display()
        );
    }
    let _ = writeln!(
        out,
        "rowtree cluster status --dir {} shows it; Ctrl-C stops it",
        cluster.dir.display()
    );
    let _ = out.flush();
    drop(out);
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|e| format!("cannot watch for SIGTERM: {e}"))?;
    loop {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => break,
            _ = term.recv() => break,
            _ = tokio::time::sleep(Duration::from_millis(500)) => {
                if let Some((id, exit)) = cluster.exited() {
                    eprintln!("rowtree: node {id} exited ({exit})");
                }
            }
        }
    }
    eprintln!("rowtree: stopping the cluster");
    tokio::task::block_in_place(|| cluster.stop());
    Ok(())
}

/// A node that has exited since the last look, with how; it is then no
/// longer watched.
fn exited(children: &mut [(u64, Option<Child>)]) -> Option<(u64, String)> {
    for (id, child) in children.iter_mut() {
        if let Some(c) = child.as_mut() {
            if let Ok(Some(exit)) = c.try_wait() {
                *child = None;
                return Some((*id, exit.to_string()));
            }
        }
    }
    None
}

/// The status from the first node of `file` that answers.
async fn ask_any(file: &ClusterFile, timeout: Duration) -> Result<ClusterStatus, String> {
    let mut errors = Vec::new();
    for entry in &file.nodes {
        match api::status(&entry.peer_addr, timeout).await {
            Ok(s) => return Ok(s),
            Err(e) => errors.push(e),
        }
    }
    Err(format!("no node answered: {}", errors.join("; ")))
}

/// `rowtree cluster status`.
async fn status(args: StatusArgs) -> Result<(), String> {
    let timeout = Duration::from_secs(5);
    let mut errors = Vec::new();
    let mut answer = None;
    for addr in targets(&args.target)? {
        match api::status(&addr, timeout).await {
            Ok(s) => {
                answer = Some(s);
                break;
            }
            Err(e) => errors.push(e),
        }
    }
    let status = answer.ok_or_else(|| format!("no node answered: {}", errors.join("; ")))?;
    match args.format {
        Format::Text => print!("{}", status.to_table()),
        Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(&status).expect("status serializes")
        ),
    }
    Ok(())
}

/// The peer addresses to ask: `--node`, or every node of `--dir`'s
/// cluster.json.
fn targets(target: &Target) -> Result<Vec<String>, String> {
    match (&target.node, &target.dir) {
        (Some(node), _) => Ok(vec![node.clone()]),
        (None, Some(dir)) => {
            let file = read_cluster_file(dir)?.ok_or_else(|| {
                format!(
                    "{} has no cluster.json: not a cluster started by `rowtree cluster up`",
                    dir.display()
                )
            })?;
            Ok(file.nodes.into_iter().map(|n| n.peer_addr).collect())
        }
        (None, None) => unreachable!("clap requires --dir or --node"),
    }
}

/// `rowtree cluster remove`.
async fn remove(args: RemoveArgs) -> Result<(), String> {
    let mut errors = Vec::new();
    for addr in targets(&args.target)? {
        match api::remove(&addr, args.node_id, Duration::from_secs(60)).await {
            Ok(reply) => {
                println!(
                    "node {} removed (by placement leader node {})",
                    args.node_id, reply.leader
                );
                return Ok(());
            }
            // A refusal is final; an unreachable node is not.
            Err(e) if e.contains("NotFound") || e.contains("FailedPrecondition") => return Err(e),
            Err(e) => errors.push(e),
        }
    }
    Err(format!(
        "no node could remove node {}: {}",
        args.node_id,
        errors.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_ports_are_distinct_and_outside_the_systems_own_range() {
        let mut ports = FreePorts::new();
        let picked: Vec<u16> = (0..30).map(|_| ports.next().unwrap()).collect();
        let mut distinct = picked.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), picked.len(), "{picked:?}");
        if ports.below >= FreePorts::LOWEST + 1_000 {
            assert!(
                picked
                    .iter()
                    .all(|p| (FreePorts::LOWEST..ports.below).contains(p)),
                "{picked:?}"
            );
        }
    }
}
