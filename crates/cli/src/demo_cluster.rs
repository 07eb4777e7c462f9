//! `rowtree demo hotspots --cluster`: the six seed designs of the hotspot
//! scenario on real node processes, not the simulator.
//!
//! The command starts a local cluster of N node processes (`cluster up`'s
//! [`LocalCluster`]), every node capped by the node gate at a small
//! capacity (`--node-capacity`, 300 reads per second by default, so that
//! N saturated nodes fit in two cores), with every database on every node
//! and each of its splits other than the first on three of them
//! (`--split-replicas`, [`SPLIT_REPLICAS`]: each split group's leader
//! places its replicas, and moves one to a less loaded node when none of
//! its voters can take its load) and load-based
//! splitting quickened for a demo (a split using a quarter of its node
//! for 5 s is split, at most one split per split per 5 s: four saturated
//! nodes need a few splits each before their load can be shared out). Then, for each design in turn, it
//! creates the design's database from its seed schema and offers it N x C
//! single-row commits per second for `--duration`, spread over every
//! node's Spanner port, where C is what one node serves of the design's
//! commits under the node gate's cost model (a commit reads its row once,
//! and writes it and its index entries: 1/22,500 of a node per read,
//! 1/3,500 per row written). Each commit is what a client library's
//! `insert_or_update` sends: a single-use Commit of one mutation.
//!
//! What makes the difference is what the cluster does by itself: a hot
//! split is split by load, its new group is handed by the lease balancer
//! to a less loaded node (if that helps, and only then), and every node
//! sends each commit to the node leading its key. A design whose load
//! spreads over many splits (a UUID or a hash shard first, the user
//! first, an interleaved index) ends up using every node; one whose
//! writes all go to the newest key (a timestamp first, an index on the
//! timestamp) keeps one node busy however often that split is cut: the
//! split manager reports it as a moving hot spot.
//!
//! Every ten seconds a line shows the design's commits per second, its
//! splits and which node leads how many of them. The report gives, per
//! design, the commits per second achieved over the last third of the run
//! and that as a multiple of C, against the targets (good designs at
//! least 3.2 x C on four nodes, bad ones at most 1.2 x C with a moving
//! hot spot), the splits and
//! lease and replica moves seen (every 10 s, the status's leader and
//! replicas of each split compared with the previous look's; the progress
//! lines show how many splits each node leads and holds a replica of), the
//! reasons the design's hot splits could not be
//! split (of the splits `SPANNER_SYS.SPLIT_STATS_TOP_MINUTE` lists, those
//! scoring at least 50, and of the splits in the key visualizer's list of
//! hot and unsplittable splits that scored at least the split threshold,
//! 25, over a minute: on a saturated node an index's tail shares the node
//! with the rows it indexes and can score less than 50), and the nodes the
//! key visualizer shows
//! serving the design's keys. A bad design meets its target only if a
//! split was found to be a `MOVING_HOT_SPOT`. Both come from the node
//! leading the database's first split, which gathers every node's split
//! load history; the key visualizer page of each design is saved in the
//! cluster's directory (`keyviz-<design>.html`), and each node serves its
//! own on the port `cluster.json` lists while the demo runs. After a bad
//! design's run the demo waits for the minute then running to be rolled
//! up and gathered (up to 77 s), since its reason is often found late.
//!
//! The driver sheds offered commits beyond half a second of them in
//! flight, as a client's session pool would: a deeper queue on a saturated
//! node would serve the keys it stamped in order so far out of order that
//! a timestamp-first tail would no longer look like the sequence it is.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::Rng;
use rowtree_check::client::{Client, Selector, Statement, TxnMode};
use rowtree_check::wire::{insert_or_update, Value};
use rowtree_kv::nodes::{FULL_NODE_READS_PER_SECOND, READ_COST, WRITE_ROW_COST};
use rowtree_sim::demo::{Design, DESIGNS};
use serde::Serialize;

use crate::cluster::LocalCluster;

/// What `demo hotspots --cluster` runs.
#[derive(Debug, Clone)]
pub struct ClusterDemo {
    /// Node processes.
    pub nodes: u64,
    /// Each node's capacity, reads per second (`--node-capacity`).
    pub capacity: f64,
    /// How long each design runs.
    pub duration: Duration,
    /// Offered load per node, in units of C.
    pub load_per_node: f64,
    /// The designs, by name (empty: all six).
    pub designs: Vec<String>,
    /// The cluster's directory (`None`: a temporary one, removed after).
    pub dir: Option<PathBuf>,
    /// More `rowtree serve` flags for every node (after the demo's own).
    pub serve_flags: Vec<String>,
}

/// One design's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct DesignOutcome {
    pub name: String,
    /// Whether the design should spread (the target it is held to).
    pub good: bool,
    /// One node's commits per second for the design (C).
    pub capacity_per_node: f64,
    /// Commits per second offered.
    pub offered: f64,
    /// Commits per second acknowledged over the last third of the run.
    pub achieved: f64,
    /// `achieved / capacity_per_node`.
    pub times_c: f64,
    /// Commits that failed (any error), over the whole run.
    pub failed: u64,
    /// Offered commits not sent because too many were in flight.
    pub shed: u64,
    /// The database's splits at the end.
    pub splits: usize,
    /// Lease moves seen (a split's leader changing between two looks).
    pub moves: usize,
    /// Replica moves seen (a node joining a split's replicas between two
    /// looks).
    pub replica_moves: usize,
    /// How many of the splits each node led at the end.
    pub leaders: BTreeMap<u64, usize>,
    /// How many of the splits' replicas each node held at the end.
    pub replicas: BTreeMap<u64, usize>,
    /// Why the design's hot splits could not be split, as the split
    /// managers reported them: for the splits in
    /// `SPANNER_SYS.SPLIT_STATS_TOP_MINUTE` (scoring at least 50), and for
    /// the splits in the key visualizer's list of hot and unsplittable
    /// splits that scored at least [`SPLIT_THRESHOLD`] over a minute (on a
    /// saturated node the tail of an index shares the node with the rows
    /// it indexes and may score less than 50).
    pub unsplittable_reasons: Vec<String>,
    /// The nodes the key visualizer of the node serving the database's
    /// sessions shows serving its key ranges over the run.
    pub keyviz_nodes: Vec<u32>,
    /// Where that key visualizer page was saved (empty if it could not be
    /// fetched; the reason was printed).
    pub keyviz_page: String,
    /// Whether the design met its target.
    pub met: bool,
}

/// The demo's report.
#[derive(Debug, Clone, Serialize)]
pub struct ClusterDemoReport {
    pub nodes: u64,
    pub node_capacity_reads_per_sec: f64,
    pub duration_secs: u64,
    pub designs: Vec<DesignOutcome>,
}

/// Good designs must reach this many C on four nodes (scaled by nodes / 4).
pub const GOOD_TARGET: f64 = 3.2;
/// Bad designs must stay at or below this many C, and have a split the
/// split manager found to be a [`MOVING_HOT_SPOT`].
pub const BAD_TARGET: f64 = 1.2;
/// The unsplittable reason a bad design must show.
pub const MOVING_HOT_SPOT: &str = "MOVING_HOT_SPOT";

/// The most commits in flight at once, in seconds of the offered load
/// (at least 16, at most 256): beyond it the driver sheds offered load
/// rather than queueing without bound, as a client's session pool would.
/// Half a second of the cluster's offered load queued on one saturated
/// node is about two seconds of its work, within the split manager's
/// frontier ([`rowtree_kv::FRONTIER_LAG_SECS`]), so a hot tail's keys,
/// stamped in order by the driver, still reach it as a sequence.
const IN_FLIGHT_SECS: f64 = 0.5;

/// The CPU score from which the nodes' split managers count a split as hot
/// (`--split-threshold`): a quarter of a node. The report takes the
/// unsplittable reasons of the splits in the key visualizer's list whose
/// score reached it over a minute ([`hot_list_reasons`]).
const SPLIT_THRESHOLD: u32 = 25;

/// How many replicas each split other than a database's first keeps (of
/// the database's replicas, one on every node): three, as Spanner keeps
/// in a region, so that on four nodes the splits' replicas move by load.
const SPLIT_REPLICAS: u64 = 3;

/// The serve flags every node gets.
fn serve_flags(demo: &ClusterDemo) -> Vec<String> {
    [
        "--node-capacity",
        &demo.capacity.to_string(),
        "--replicas",
        &demo.nodes.to_string(),
        "--split-replicas",
        &SPLIT_REPLICAS.min(demo.nodes).to_string(),
        "--split-hot-for",
        "5",
        "--split-cooldown",
        "5",
        "--split-threshold",
        &SPLIT_THRESHOLD.to_string(),
        "--merge-after",
        "3600",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain(demo.serve_flags.iter().cloned())
    .collect()
}

/// The design's statements: its seed file without comments, split at `;`.
fn statements(schema: &str) -> Vec<String> {
    let text: String = schema
        .lines()
        .filter(|l| !l.trim_start().starts_with("--"))
        .collect::<Vec<_>>()
        .join("\n");
    text.split(';')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// One node's commits per second for `design` under the node gate's
/// model: each commit reads its row once and writes the row, plus for an
/// insert every index entry, for an update of `LastAccess` the old and new
/// entries of every index on it (the updated users are made beforehand
/// with a `LastAccess`, [`PRELOADED_USERS`], so the old entry exists).
pub fn capacity_per_node(design: &Design, reads_per_sec: f64) -> Result<f64, String> {
    let catalog = rowtree_sim::catalog_from_sql(design.schema).map_err(|e| e.to_string())?;
    let table = catalog
        .table(design.table)
        .ok_or_else(|| format!("{}: no table {}", design.name, design.table))?;
    let indexes = catalog.indexes_of(table.id);
    let rows = if design.inserts {
        1 + indexes.len()
    } else {
        let last_access = table.column("LastAccess").map(|(p, _)| p);
        let changed = indexes
            .iter()
            .filter(|ix| ix.keys.iter().any(|k| Some(k.column) == last_access))
            .count();
        1 + 2 * changed
    };
    let cost = READ_COST + WRITE_ROW_COST * rows as f64;
    Ok(reads_per_sec / FULL_NODE_READS_PER_SECOND / cost)
}

/// The users the Users designs update, made before their run with a
/// `LastAccess` in the last 30 days, so that every update replaces an
/// index entry (deletes the old, inserts the new), as
/// [`capacity_per_node`] counts it: 4,000 rows, about 85 s on one node
/// capped at 300 reads per second.
pub const PRELOADED_USERS: i64 = 2_000;

/// Users per commit of the preload.
const PRELOAD_BATCH: i64 = 100;

/// Makes users 1 to [`PRELOADED_USERS`] of a Users design, in random
/// order, each with a `LastAccess` at a random time of the last 30 days,
/// through `client` in `session`, a commit of [`PRELOAD_BATCH`] users at a
/// time (each retried a few times).
async fn preload_users(
    design: &Design,
    client: &Client,
    session: &parking_lot::Mutex<String>,
) -> Result<(), String> {
    let began = Instant::now();
    eprintln!(
        "  {}: making {PRELOADED_USERS} users with a past LastAccess (each update then replaces an index entry)",
        design.name
    );
    // In random order: users made in key order would be a moving hot spot
    // of their own in the split statistics the report reads.
    let mut users: Vec<i64> = (1..=PRELOADED_USERS).collect();
    {
        use rand::seq::SliceRandom;
        users.shuffle(&mut rand::thread_rng());
    }
    for batch in users.chunks(PRELOAD_BATCH as usize) {
        let mut rng = rand::thread_rng();
        let rows: Vec<Vec<Value>> = batch
            .iter()
            .map(|&user| {
                let ago = chrono::Duration::seconds(rng.gen_range(60..30 * 86_400));
                let at =
                    (chrono::Utc::now() - ago).to_rfc3339_opts(chrono::SecondsFormat::Nanos, true);
                vec![Value::Int64(user), Value::Timestamp(at)]
            })
            .collect();
        drop(rng);
        let mut tries = 0;
        loop {
            let name = session.lock().clone();
            let result = client
                .commit(
                    &name,
                    Selector::SingleUse(TxnMode::ReadWrite),
                    vec![insert_or_update(
                        design.table,
                        &["UserId", "LastAccess"],
                        rows.clone(),
                    )],
                )
                .await;
            match result {
                Ok(_) => break,
                Err(e) if tries < 20 => {
                    tries += 1;
                    if e.code() == Some(tonic::Code::NotFound) {
                        let database = name
                            .split("/sessions/")
                            .next()
                            .unwrap_or_default()
                            .to_string();
                        if let Ok(s) = client.create_session(&database).await {
                            *session.lock() = s;
                        }
                    }
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
                Err(e) => return Err(format!("{}: making users: {e}", design.name)),
            }
        }
    }
    eprintln!(
        "  {}: {PRELOADED_USERS} users made in {:.0} s",
        design.name,
        began.elapsed().as_secs_f64()
    );
    Ok(())
}

/// A commit of one row of `design`'s table: an access-log row (a new
/// timestamp, a random user; a UUID first for the uuid design) or a
/// preloaded user's `LastAccess` set to now.
fn mutation(design: &Design) -> rowtree_check::proto::pb::Mutation {
    let mut rng = rand::thread_rng();
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Nanos, true);
    let user: i64 = if design.inserts {
        rng.gen_range(1..=1_000_000)
    } else {
        rng.gen_range(1..=PRELOADED_USERS)
    };
    match design.name {
        "timestamp-first" => insert_or_update(
            design.table,
            &["LastAccess", "UserId"],
            vec![vec![Value::Timestamp(now), Value::String(user.to_string())]],
        ),
        "uuid" => insert_or_update(
            design.table,
            &["LogEntryId", "LastAccess", "UserId"],
            vec![vec![
                Value::String(uuid::Uuid::new_v4().to_string()),
                Value::Timestamp(now),
                Value::String(user.to_string()),
            ]],
        ),
        _ => insert_or_update(
            design.table,
            &["UserId", "LastAccess"],
            vec![vec![Value::Int64(user), Value::Timestamp(now)]],
        ),
    }
}

/// Counts of one design's run, shared with the commit tasks.
#[derive(Default)]
struct Counts {
    /// Acknowledged commits per second of the run.
    per_second: parking_lot::Mutex<Vec<u64>>,
    failed: AtomicU64,
    shed: AtomicU64,
    first_error: parking_lot::Mutex<Option<String>>,
}

impl Counts {
    fn acked(&self, second: usize) {
        let mut v = self.per_second.lock();
        if v.len() <= second {
            v.resize(second + 1, 0);
        }
        v[second] += 1;
    }
}

/// The splits of the database whose group is not among `before`, with
/// their leaders and replicas: (split, leader, replicas).
fn splits_of(
    status: &rowtree_cluster::node::status::ClusterStatus,
    before: &BTreeSet<u64>,
) -> Vec<(String, Option<u64>, BTreeSet<u64>)> {
    status
        .groups
        .iter()
        .filter(|g| g.database.is_some_and(|d| !before.contains(&d)))
        .map(|g| {
            (
                g.split.clone().unwrap_or_default(),
                g.leader,
                g.members.iter().copied().collect(),
            )
        })
        .collect()
}

/// What the demo saw of a database's splits between two looks at the
/// cluster's status: lease moves (a split's leader changing) and replica
/// moves (a node joining a split's replicas).
#[derive(Debug, Default)]
struct Seen {
    leaders: BTreeMap<String, Option<u64>>,
    replicas: BTreeMap<String, BTreeSet<u64>>,
    lease_moves: usize,
    replica_moves: usize,
}

impl Seen {
    fn look(&mut self, splits: &[(String, Option<u64>, BTreeSet<u64>)]) {
        for (split, leader, replicas) in splits {
            if let Some(old) = self.leaders.insert(split.clone(), *leader) {
                if old.is_some() && leader.is_some() && *leader != old {
                    self.lease_moves += 1;
                }
            }
            if let Some(old) = self.replicas.insert(split.clone(), replicas.clone()) {
                if !old.is_empty() {
                    self.replica_moves += replicas.difference(&old).count();
                }
            }
        }
    }
}

/// How many of the splits' replicas each node holds.
fn replicas_by_node(splits: &[(String, Option<u64>, BTreeSet<u64>)]) -> BTreeMap<u64, usize> {
    let mut by_node = BTreeMap::new();
    for (_, _, replicas) in splits {
        for node in replicas {
            *by_node.entry(*node).or_default() += 1;
        }
    }
    by_node
}

/// The databases the cluster's groups serve.
fn databases(status: &rowtree_cluster::node::status::ClusterStatus) -> BTreeSet<u64> {
    status.groups.iter().filter_map(|g| g.database).collect()
}

/// Runs the demo (see the module docs).
pub async fn run(demo: &ClusterDemo) -> Result<ClusterDemoReport, String> {
    let designs: Vec<&Design> = if demo.designs.is_empty() {
        DESIGNS.iter().collect()
    } else {
        demo.designs
            .iter()
            .map(|name| {
                DESIGNS.iter().find(|d| d.name == name).ok_or_else(|| {
                    format!(
                        "no design {name:?}; the designs: {}",
                        DESIGNS
                            .iter()
                            .map(|d| d.name)
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                })
            })
            .collect::<Result<_, _>>()?
    };
    let temp;
    let dir = match &demo.dir {
        Some(dir) => dir.clone(),
        None => {
            temp = tempfile::tempdir().map_err(|e| format!("a temporary directory: {e}"))?;
            temp.path().to_path_buf()
        }
    };
    eprintln!(
        "demo hotspots --cluster: starting {} nodes in {} (each capped at {} reads/s)",
        demo.nodes,
        dir.display(),
        demo.capacity
    );
    let (cluster, _) = LocalCluster::start(
        &dir,
        demo.nodes,
        &serve_flags(demo),
        Duration::from_secs(60),
    )
    .await?;
    let mut clients = Vec::new();
    for node in &cluster.file.nodes {
        let addr = node
            .client_addr
            .parse()
            .map_err(|e| format!("node {}'s address {}: {e}", node.id, node.client_addr))?;
        clients.push(
            Client::connect(addr)
                .await
                .map_err(|e| format!("connecting to node {}: {e}", node.id))?,
        );
    }
    let instance = clients[0]
        .create_instance("hotspots")
        .await
        .map_err(|e| format!("creating the instance: {e}"))?;
    let mut outcomes = Vec::new();
    for design in designs {
        outcomes.push(run_design(demo, &cluster, &clients, &instance, design).await?);
    }
    drop(cluster);
    Ok(ClusterDemoReport {
        nodes: demo.nodes,
        node_capacity_reads_per_sec: demo.capacity,
        duration_secs: demo.duration.as_secs(),
        designs: outcomes,
    })
}

async fn run_design(
    demo: &ClusterDemo,
    cluster: &LocalCluster,
    clients: &[Client],
    instance: &str,
    design: &'static Design,
) -> Result<DesignOutcome, String> {
    let before = databases(&cluster.status().await?);
    let ddl = statements(design.schema);
    let ddl: Vec<&str> = ddl.iter().map(String::as_str).collect();
    let database = clients[0]
        .create_database(instance, &design.name.replace('_', "-"), &ddl)
        .await
        .map_err(|e| format!("creating the {} database: {e}", design.name))?;
    let c = capacity_per_node(design, demo.capacity)?;
    let rate = c * demo.nodes as f64 * demo.load_per_node;
    eprintln!(
        "demo hotspots --cluster: {}: C = {c:.1} commits/s per node, offering {rate:.1}/s for {} s",
        design.name,
        demo.duration.as_secs()
    );
    // One session per node, made through it (sessions live on the node
    // leading the database's first split).
    let mut sessions = Vec::new();
    for client in clients {
        let mut tries = 0;
        let session = loop {
            match client.create_session(&database).await {
                Ok(s) => break s,
                Err(e) if tries < 50 => {
                    tries += 1;
                    let _ = e;
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                Err(e) => return Err(format!("a session of {}: {e}", design.name)),
            }
        };
        sessions.push(Arc::new(parking_lot::Mutex::new(session)));
    }
    if !design.inserts {
        preload_users(design, &clients[0], &sessions[0]).await?;
    }
    let counts = Arc::new(Counts::default());
    let max_in_flight = ((rate * IN_FLIGHT_SECS).ceil() as usize).clamp(16, 256);
    let in_flight = Arc::new(tokio::sync::Semaphore::new(max_in_flight));
    let started = Instant::now();
    let end = started + demo.duration;
    let interval = Duration::from_secs_f64(1.0 / rate);
    let mut next = tokio::time::Instant::now();
    let mut sent: u64 = 0;
    let mut seen = Seen::default();
    let mut next_report = started + Duration::from_secs(10);
    let mut last_count = 0u64;
    while Instant::now() < end {
        next += interval;
        tokio::time::sleep_until(next).await;
        let Ok(permit) = in_flight.clone().try_acquire_owned() else {
            counts.shed.fetch_add(1, Ordering::Relaxed);
            continue;
        };
        let i = (sent % clients.len() as u64) as usize;
        sent += 1;
        let client = clients[i].clone();
        let session = sessions[i].clone();
        let task_counts = counts.clone();
        let database = database.clone();
        tokio::spawn(async move {
            let counts = task_counts;
            let name = session.lock().clone();
            let result = client
                .commit(
                    &name,
                    Selector::SingleUse(TxnMode::ReadWrite),
                    vec![mutation(design)],
                )
                .await;
            match result {
                Ok(_) => counts.acked(started.elapsed().as_secs() as usize),
                Err(e) => {
                    counts.failed.fetch_add(1, Ordering::Relaxed);
                    if e.code() == Some(tonic::Code::NotFound) {
                        // The session's node stopped leading: a new one.
                        if let Ok(s) = client.create_session(&database).await {
                            *session.lock() = s;
                        }
                    }
                    counts
                        .first_error
                        .lock()
                        .get_or_insert_with(|| e.to_string());
                }
            }
            drop(permit);
        });
        if Instant::now() >= next_report {
            next_report += Duration::from_secs(10);
            let status = cluster.status().await?;
            let splits = splits_of(&status, &before);
            seen.look(&splits);
            let acked: u64 = counts.per_second.lock().iter().sum();
            let mut by_node: BTreeMap<u64, usize> = BTreeMap::new();
            for (_, leader, _) in &splits {
                if let Some(l) = leader {
                    *by_node.entry(*l).or_default() += 1;
                }
            }
            let load: Vec<String> = status
                .nodes
                .iter()
                .map(|n| {
                    format!(
                        "{}:{}",
                        n.id,
                        n.utilization
                            .map_or_else(|| "-".into(), |u| format!("{:.0}%", u * 100.0))
                    )
                })
                .collect();
            eprintln!(
                "  {}: {:>3} s  {:>6.1} commits/s ({:.2} x C)  {} splits, leaders {:?}, replicas {:?}, load {}",
                design.name,
                started.elapsed().as_secs(),
                (acked - last_count) as f64 / 10.0,
                (acked - last_count) as f64 / 10.0 / c,
                splits.len(),
                by_node,
                replicas_by_node(&splits),
                load.join(" ")
            );
            last_count = acked;
        }
    }
    // Let the commits in flight finish.
    let _ = tokio::time::timeout(
        Duration::from_secs(15),
        in_flight.acquire_many(max_in_flight as u32),
    )
    .await;
    let secs = demo.duration.as_secs().max(3) as usize;
    let per_second = counts.per_second.lock().clone();
    let last_third: u64 = per_second.iter().skip(secs - secs / 3).take(secs / 3).sum();
    let achieved = last_third as f64 / (secs / 3) as f64;
    let status = cluster.status().await?;
    let splits = splits_of(&status, &before);
    seen.look(&splits);
    let mut leaders: BTreeMap<u64, usize> = BTreeMap::new();
    for (_, leader, _) in &splits {
        if let Some(l) = leader {
            *leaders.entry(*l).or_default() += 1;
        }
    }
    // Each node keeps the statistics of the splits it led, and the node
    // serving the database's sessions gathers them: one query sees all.
    // A bad design's reason may have been found in the minute still
    // running: wait for that minute's statistics to be rolled up and
    // gathered.
    if !design.good {
        let wall = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        let wait = 60 - wall % 60 + STATS_GATHERED_SECS;
        eprintln!(
            "  {}: waiting {wait} s for this minute's split statistics",
            design.name
        );
        tokio::time::sleep(Duration::from_secs(wait)).await;
    }
    let mut unsplittable_reasons: BTreeSet<String> = hot_split_reasons(&clients[0], &database)
        .await
        .into_iter()
        .collect();
    let (keyviz_nodes, keyviz_page) =
        match key_visualizer(cluster, &status, &before, &database, design.name).await {
            Ok(seen) => {
                unsplittable_reasons.extend(seen.reasons);
                (seen.nodes, seen.page)
            }
            Err(e) => {
                eprintln!("  {}: the key visualizer: {e}", design.name);
                (Vec::new(), String::new())
            }
        };
    let unsplittable_reasons: Vec<String> = unsplittable_reasons.into_iter().collect();
    let times_c = achieved / c;
    let good_target = GOOD_TARGET * demo.nodes as f64 / 4.0;
    let met = if design.good {
        times_c >= good_target
    } else {
        times_c <= BAD_TARGET && unsplittable_reasons.iter().any(|r| r == MOVING_HOT_SPOT)
    };
    if let Some(e) = counts.first_error.lock().as_ref() {
        eprintln!("  {}: first failed commit: {e}", design.name);
    }
    Ok(DesignOutcome {
        name: design.name.to_string(),
        good: design.good,
        capacity_per_node: c,
        offered: rate,
        achieved,
        times_c,
        failed: counts.failed.load(Ordering::Relaxed),
        shed: counts.shed.load(Ordering::Relaxed),
        splits: splits.len(),
        moves: seen.lease_moves,
        replica_moves: seen.replica_moves,
        leaders,
        replicas: replicas_by_node(&splits),
        unsplittable_reasons,
        keyviz_nodes,
        keyviz_page,
        met,
    })
}

/// How long after a minute ends its split statistics are, at the latest,
/// on the node serving the database's sessions: each node rolls the
/// minute up within a second, and that node gathers them every 15 s
/// (`rowtree_cluster`'s `GATHER_HISTORIES_EVERY`).
const STATS_GATHERED_SECS: u64 = 17;

/// The largest key visualizer answer read.
const MAX_PAGE: u64 = 64 << 20;

/// What the key visualizer showed of a design's database.
struct KeyvizSeen {
    /// The nodes its cells show serving the database's keys.
    nodes: Vec<u32>,
    /// The unsplittable reasons of its hot and unsplittable splits.
    reasons: Vec<String>,
    /// Where its page was saved.
    page: String,
}

/// Saves the key visualizer page of `database` (as the node leading its
/// first split, which gathers every node's split history, draws it) as
/// `keyviz-<design>.html` in the cluster's directory, and returns what it
/// shows ([`KeyvizSeen`]).
async fn key_visualizer(
    cluster: &LocalCluster,
    status: &rowtree_cluster::node::status::ClusterStatus,
    before: &BTreeSet<u64>,
    database: &str,
    design: &str,
) -> Result<KeyvizSeen, String> {
    let group = databases(status)
        .difference(before)
        .next()
        .copied()
        .ok_or("the database's group is not in the cluster's status")?;
    let leader = status
        .groups
        .iter()
        .find(|g| g.group == group)
        .and_then(|g| g.leader)
        .ok_or("the database's first split has no leader")?;
    let node = cluster
        .file
        .nodes
        .iter()
        .find(|n| n.id == leader)
        .ok_or_else(|| format!("node {leader} is not in cluster.json"))?;
    let data = http_get(&node.http_addr, &format!("/keyviz/{database}/data.json")).await?;
    let data: serde_json::Value =
        serde_json::from_slice(&data).map_err(|e| format!("a malformed data.json: {e}"))?;
    let nodes: BTreeSet<u32> = data["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| n.as_u64().and_then(|n| u32::try_from(n).ok()))
        .collect();
    let reasons = hot_list_reasons(&data, f64::from(SPLIT_THRESHOLD));
    let page = http_get(&node.http_addr, &format!("/keyviz/{database}")).await?;
    let path = cluster.dir.join(format!("keyviz-{design}.html"));
    std::fs::write(&path, page).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(KeyvizSeen {
        nodes: nodes.into_iter().collect(),
        reasons,
        page: path.display().to_string(),
    })
}

/// The unsplittable reasons, each once and sorted, of the splits in a key
/// visualizer `data.json`'s list of hot and unsplittable splits (`hot`)
/// whose peak CPU score over a minute (`max_cpu_score`) reached
/// `min_score`. Cooler splits are left out: a good design's split may be
/// marked for a moment before it is cut, and the report is about what
/// holds the design back. Not only the hottest: an index's tail (a moving
/// hot spot) may peak a point below the whole index's first minute.
fn hot_list_reasons(data: &serde_json::Value, min_score: f64) -> Vec<String> {
    let reasons: BTreeSet<String> = data["hot"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|split| {
            split["max_cpu_score"]
                .as_f64()
                .is_some_and(|s| s >= min_score)
        })
        .flat_map(|split| split["reasons"].as_array().into_iter().flatten())
        .filter_map(|r| r.as_str().map(str::to_string))
        .collect();
    reasons.into_iter().collect()
}

/// The body of a `200 OK` answer to `GET path` from the HTTP server at
/// `addr` (a node's key visualizer, on loopback), at most [`MAX_PAGE`]
/// bytes, within 20 s.
async fn http_get(addr: &str, path: &str) -> Result<Vec<u8>, String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let exchange = async {
        let mut stream = tokio::net::TcpStream::connect(addr)
            .await
            .map_err(|e| format!("{addr}: {e}"))?;
        stream
            .write_all(
                format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n")
                    .as_bytes(),
            )
            .await
            .map_err(|e| format!("{addr}: {e}"))?;
        let mut answer = Vec::new();
        stream
            .take(MAX_PAGE)
            .read_to_end(&mut answer)
            .await
            .map_err(|e| format!("{addr}: {e}"))?;
        Ok::<_, String>(answer)
    };
    let answer = tokio::time::timeout(Duration::from_secs(20), exchange)
        .await
        .map_err(|_| format!("{addr} did not answer within 20 s"))??;
    let split = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| format!("{addr} answered without a header"))?;
    let head = String::from_utf8_lossy(&answer[..split]).to_ascii_lowercase();
    let body = &answer[split + 4..];
    let status_line = head.lines().next().unwrap_or_default();
    if !status_line.contains(" 200") {
        return Err(format!("{addr}{path}: {status_line}"));
    }
    if head.contains("transfer-encoding: chunked") {
        dechunk(body).ok_or_else(|| format!("{addr}{path}: a malformed chunked body"))
    } else {
        Ok(body.to_vec())
    }
}

/// A chunked HTTP body's content.
fn dechunk(mut body: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = body.windows(2).position(|w| w == b"\r\n")?;
        let size_text = std::str::from_utf8(&body[..line_end]).ok()?;
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        body = &body[line_end + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(body.get(..size)?);
        body = body.get(size + 2..)?;
    }
}

/// The reasons the nodes' split managers gave for not splitting the
/// database's hot splits in the last minutes
/// (`SPANNER_SYS.SPLIT_STATS_TOP_MINUTE`).
async fn hot_split_reasons(client: &Client, database: &str) -> Vec<String> {
    let session = match client.create_session(database).await {
        Ok(session) => session,
        Err(e) => {
            eprintln!("  the split statistics are out of reach: {e}");
            return Vec::new();
        }
    };
    let rows = match client
        .execute_sql(
            &session,
            &Statement::new(
                "SELECT UNSPLITTABLE_REASONS FROM SPANNER_SYS.SPLIT_STATS_TOP_MINUTE \
                 ORDER BY INTERVAL_END DESC LIMIT 20",
            ),
            Selector::strong(),
        )
        .await
    {
        Ok(rows) => rows,
        Err(e) => {
            eprintln!("  reading SPANNER_SYS.SPLIT_STATS_TOP_MINUTE: {e}");
            return Vec::new();
        }
    };
    let mut reasons = BTreeSet::new();
    for row in &rows.rows {
        if let Some(Value::Array(items)) = row.first() {
            for item in items {
                if let Some(s) = item.as_str() {
                    reasons.insert(s.to_string());
                }
            }
        }
    }
    reasons.into_iter().collect()
}

/// The report as text.
pub fn render_text(report: &ClusterDemoReport) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Hotspot demo on {} node processes (each capped at {} reads/s), offered {} x C for {} s per design\n(C = one node's commits/s for the design; achieved = acknowledged commits/s over the last third)\n",
        report.nodes, report.node_capacity_reads_per_sec, report.nodes, report.duration_secs
    );
    let _ = writeln!(
        out,
        "{:<22} {:>7} {:>9} {:>6} {:>7} {:>6} {:>6} {:>6}  {:<18} {:<8} {:<7} unsplittable reasons",
        "design",
        "C/s",
        "achieved",
        "xC",
        "target",
        "splits",
        "leases",
        "copies",
        "splits led by node",
        "keyviz",
        "met"
    );
    for d in &report.designs {
        let target = if d.good {
            format!(">={:.1}", GOOD_TARGET * report.nodes as f64 / 4.0)
        } else {
            format!("<={BAD_TARGET:.1}")
        };
        let led: Vec<String> = d.leaders.iter().map(|(n, k)| format!("{n}:{k}")).collect();
        let _ = writeln!(
            out,
            "{:<22} {:>7.1} {:>9.1} {:>6.2} {:>7} {:>6} {:>6} {:>6}  {:<18} {:<8} {:<7} {}",
            d.name,
            d.capacity_per_node,
            d.achieved,
            d.times_c,
            target,
            d.splits,
            d.moves,
            d.replica_moves,
            led.join(" "),
            if d.keyviz_nodes.is_empty() {
                "-".to_string()
            } else {
                d.keyviz_nodes
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            },
            if d.met { "yes" } else { "NO" },
            if d.unsplittable_reasons.is_empty() {
                "-".to_string()
            } else {
                d.unsplittable_reasons.join(", ")
            }
        );
    }
    let failed: u64 = report.designs.iter().map(|d| d.failed).sum();
    let shed: u64 = report.designs.iter().map(|d| d.shed).sum();
    let _ = writeln!(
        out,
        "\n{failed} commits failed and {shed} offered commits were shed (too many in flight) over the run"
    );
    let _ = writeln!(
        out,
        "keyviz: the nodes the key visualizer shows serving the design's keys; its pages: {}",
        report
            .designs
            .iter()
            .filter(|d| !d.keyviz_page.is_empty())
            .map(|d| d.keyviz_page.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn design(name: &str) -> &'static Design {
        DESIGNS.iter().find(|d| d.name == name).expect("a design")
    }

    #[test]
    fn one_nodes_capacity_follows_the_rows_each_commit_writes() {
        // An access-log row: one read (its existence), one row written.
        let one_row = 300.0 / (1.0 + 22_500.0 / 3_500.0);
        let c = capacity_per_node(design("timestamp-first"), 300.0).unwrap();
        assert!((c - one_row).abs() < 1e-9, "{c}");
        // A user's LastAccess under an index on it: the row, the old entry
        // and the new one.
        let three_rows = 300.0 / (1.0 + 3.0 * 22_500.0 / 3_500.0);
        for name in ["index-non-interleaved", "index-interleaved"] {
            let c = capacity_per_node(design(name), 300.0).unwrap();
            assert!((c - three_rows).abs() < 1e-9, "{name}: {c}");
        }
        // Twice the capacity, twice the commits.
        let c2 = capacity_per_node(design("uuid"), 600.0).unwrap();
        assert!((c2 - 2.0 * one_row).abs() < 1e-9, "{c2}");
    }

    #[test]
    fn a_seed_schema_becomes_its_statements_without_comments() {
        let s = statements(design("hash-sharded").schema);
        assert_eq!(s.len(), 2, "{s:?}");
        assert!(s[0].starts_with("CREATE TABLE UserAccessLogs ("), "{s:?}");
        assert!(
            s.iter().all(|s| !s.contains("--") && !s.ends_with(';')),
            "{s:?}"
        );
        let s = statements(design("index-non-interleaved").schema);
        assert_eq!(s.len(), 2, "{s:?}");
        assert!(s[1].starts_with("CREATE NULL_FILTERED INDEX"), "{s:?}");
    }

    /// A split the manager found to be a moving hot spot is in the key
    /// visualizer's list even when it scores under 50 (the index tail on a
    /// saturated node), and the demo reads the reasons of the splits there
    /// that reached the split threshold, not those of cooler ones, even when
    /// the moving hot spot is not the hottest.
    #[test]
    fn a_reason_below_the_hot_score_is_read_from_the_key_visualizers_list() {
        use rowtree_kv::{IntervalStat, NodeId, SplitId, UnsplittableReason};
        const MINUTE: u64 = 60_000_000_000;
        let stat = |start: &[u8], limit: Option<&[u8]>, score: f64, reasons| IntervalStat {
            interval_end: 0,
            split: SplitId(1),
            start: start.to_vec(),
            limit: limit.map(<[u8]>::to_vec),
            node: NodeId(2),
            replicas: Vec::new(),
            cpu_score: score,
            requests: 100,
            rows_read: 100,
            rows_written: 100,
            bytes_read: 1000,
            bytes_written: 1000,
            cpu_nanos: (score / 100.0 * MINUTE as f64) as u64,
            unsplittable: reasons,
            buckets: Default::default(),
        };
        let t0 = 1_767_225_600_000_000_000;
        let history = vec![
            (
                t0 + MINUTE,
                vec![
                    stat(b"a", Some(b"m"), 10.0, vec![]),
                    stat(b"m", None, 43.0, vec![UnsplittableReason::MovingHotSpot]),
                ],
            ),
            (
                t0 + 2 * MINUTE,
                vec![
                    stat(
                        b"a",
                        Some(b"m"),
                        20.0,
                        vec![UnsplittableReason::Unspecified],
                    ),
                    stat(b"m", None, 41.0, vec![]),
                ],
            ),
        ];
        let data = |history: &[(u64, Vec<IntervalStat>)]| -> serde_json::Value {
            let heatmap = rowtree_keyviz::heatmap_from_history(history, |k| {
                String::from_utf8_lossy(k).into_owned()
            });
            serde_json::from_str(&rowtree_keyviz::render_json(&heatmap)).unwrap()
        };
        let threshold = f64::from(SPLIT_THRESHOLD);
        let seen = data(&history);
        assert_eq!(seen["hot"].as_array().map(Vec::len), Some(2), "{seen}");
        assert_eq!(
            hot_list_reasons(&seen, threshold),
            vec![MOVING_HOT_SPOT.to_string()],
            "the split scoring 20 is left out"
        );
        // The whole index, hot in its first minute before it was cut,
        // peaks a point above its tail: both count.
        let history = vec![
            (
                t0 + MINUTE,
                vec![stat(
                    b"a",
                    None,
                    46.4,
                    vec![UnsplittableReason::Unspecified],
                )],
            ),
            (
                t0 + 2 * MINUTE,
                vec![
                    stat(b"a", Some(b"m"), 5.0, vec![]),
                    stat(b"m", None, 45.2, vec![UnsplittableReason::MovingHotSpot]),
                ],
            ),
        ];
        let seen = data(&history);
        assert_eq!(
            hot_list_reasons(&seen, threshold),
            vec![MOVING_HOT_SPOT.to_string(), "UNSPECIFIED".to_string()],
            "{seen}"
        );
        assert!(hot_list_reasons(&serde_json::json!({}), threshold).is_empty());
    }
}
