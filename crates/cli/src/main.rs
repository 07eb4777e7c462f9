//! `rowtree`: the command-line entry point.
//!
//! * `rowtree sql` applies statements from a file (`-f`) or the command line
//!   (`-e`) to a database in a directory (`--data-dir`) or in memory
//!   (`--in-memory`), reporting each failure with its statement number, line
//!   and column.
//! * `rowtree ddl` prints a database's schema as Spanner's GetDatabaseDdl does.
//! * `rowtree keyviz` writes a database's key visualizer heatmap as one HTML file.

mod advise;
mod advise_forecast;
mod advise_live;
mod bench;
mod cluster;
mod demo;
mod demo_cluster;
mod format;
mod keyviz;
mod params;
mod simulate;
mod sql;

/// Every heap allocation of the `rowtree` binary goes to jemalloc, with its
/// background threads on.
///
/// A busy server runs hundreds of request threads (one per request waiting on
/// a lock or a commit), and glibc's malloc keeps what each thread frees in
/// that thread's cache and arena: under the 256-session soak its RSS kept
/// climbing for as long as the server ran, although the live heap stayed
/// flat (heaptrack). jemalloc's background threads give dirty pages back to
/// the system on a timer, whatever the request threads do, and its arenas
/// scale with the cores rather than with the threads. The soak figures, both
/// allocators side by side, are in docs/reliability.md. `_RJEM_MALLOC_CONF`
/// tunes it at start (e.g. `background_thread:false`).
#[cfg(all(unix, not(target_env = "musl")))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Rowtree: a Spanner-compatible SQL database that shows where your schema will hotspot.
#[derive(Debug, Parser)]
#[command(name = "rowtree", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run GoogleSQL statements: queries, DML, DDL, EXPLAIN.
    ///
    /// Statements are separated by `;`. With -f or -e, every statement runs
    /// in order; a failed statement is reported with its number, line and
    /// column, and the rest still run unless --bail is given; the exit
    /// status is 1 if any statement failed. Without -f/-e, an interactive
    /// shell starts (or, when standard input is not a terminal, the script
    /// on standard input runs). Outside BEGIN ... COMMIT each statement is
    /// its own transaction.
    Sql(SqlArgs),
    /// Print the schema as Spanner's GetDatabaseDdl would: one canonical
    /// statement per entry, separated by `;` and a blank line.
    Ddl(DdlArgs),
    /// Serve Spanner's gRPC API, so the official client libraries work
    /// against Rowtree unmodified.
    ///
    /// Point a client at the server as at Google's emulator:
    /// `SPANNER_EMULATOR_HOST=127.0.0.1:9010` (and a project id, e.g.
    /// `GOOGLE_CLOUD_PROJECT=my-project`). Create an instance (any config
    /// name is accepted; `emulator-config` is listed), then databases, with
    /// the admin APIs as usual. Every instance and database lives in the data
    /// directory and survives restarts. Stop with Ctrl-C or SIGTERM: the
    /// server stops accepting requests and lets those in flight finish.
    ///
    /// It listens on 127.0.0.1, reachable from this machine only. On any
    /// other address (--host 0.0.0.0, ::, a LAN address) anyone who reaches
    /// the ports could read, change and drop every database, so the server
    /// refuses to start there unless both TLS (--tls-cert, --tls-key) and an
    /// auth token (--auth-token-file) are configured, or --insecure is
    /// given. Clients then connect over TLS and send the token as
    /// `authorization: Bearer <token>`, which is what Spanner's client
    /// libraries do with credentials holding an access token (Python: the
    /// credentials `google.oauth2.credentials.Credentials(token)`, the
    /// client option `api_endpoint`, and no SPANNER_EMULATOR_HOST).
    ///
    /// With --demo the server starts with a database to query: instance
    /// demo-instance in project demo-project, database demo-db with singers
    /// and their interleaved albums (created unless the data directory has
    /// it already), and prints how to connect a client to it. Try
    /// `rowtree serve --demo --in-memory` first.
    Serve(Box<ServeArgs>),
    /// Play a workload against the real split, balancing and statistics code
    /// on N simulated nodes in virtual time, and report throughput, latency,
    /// node utilisation, splits, hot splits and a heatmap.
    ///
    /// Each node serves one CPU-second per second; a read costs 1/22,500 s,
    /// a row or index entry written 1/3,500 s (plus two-phase commit when a
    /// write spans splits); requests queue per node and fail after 1 s.
    /// Splitting and balancing react with the kv policy's real delays
    /// (minutes of simulated time). Example:
    ///
    ///   rowtree simulate --schema examples/sim/uuid-logs.sql --workload examples/sim/uuid-logs.toml --nodes 4
    ///
    /// The workload format is documented in docs/simulator.md.
    Simulate(simulate::SimulateArgs),
    /// Built-in scenarios on the simulator.
    #[command(subcommand)]
    Demo(simulate::DemoCommand),
    /// Write a database's key visualizer: a heatmap of the load on its key
    /// ranges over time, as one self-contained HTML file (works offline).
    ///
    /// Time runs left to right (one column per interval of the split load
    /// history), key ranges top to bottom (sorted by table or index, then
    /// key); colour is the chosen metric (CPU score, rows or bytes read or
    /// written, requests) normalised per row, relative to the hottest cell.
    /// `rowtree serve` shows the same page at
    /// http://127.0.0.1:9020/keyviz/projects/P/instances/I/databases/D.
    Keyviz(keyviz::KeyvizArgs),
    /// Benchmarks that reproduce published measurements on this machine.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// Check a GoogleSQL schema for hotspot and locality mistakes, offline,
    /// and print fixes as DDL.
    ///
    /// Reads the DDL files in order as one schema with the database's own
    /// parser and catalog, and reports each finding with a stable rule id,
    /// a severity (error, warning, info), file:line:column of the CREATE
    /// statement, the table or index, why it is a problem (which split, why
    /// one node) and a fix as paste-able DDL. Example:
    ///
    ///   rowtree advise schema.sql --format sarif > advise.sarif
    #[command(after_long_help = advise::rules_help())]
    Advise(advise::AdviseArgs),
    /// A cluster of Rowtree nodes: start a local one, or show one's status.
    #[command(subcommand)]
    Cluster(cluster::ClusterCommand),
}

#[derive(Debug, Args)]
struct ServeArgs {
    /// Directory holding every instance and database (created if missing).
    #[arg(
        long,
        value_name = "DIR",
        default_value = "rowtree-data",
        conflicts_with = "in_memory"
    )]
    data_dir: PathBuf,
    /// Keep everything in memory; nothing survives the process.
    #[arg(long)]
    in_memory: bool,
    /// Start with a demo database (projects/demo-project/instances/demo-instance/databases/demo-db:
    /// tables Singers and Albums, interleaved, with a few rows), created
    /// unless it exists, and print how to connect a client library to it.
    #[arg(long)]
    demo: bool,
    /// Address to listen on. Anything but a loopback address needs TLS and
    /// --auth-token-file, or --insecure.
    #[arg(long, default_value = "127.0.0.1")]
    host: std::net::IpAddr,
    /// Port to listen on (9010, like Google's emulator).
    #[arg(long, default_value_t = 9010)]
    port: u16,
    /// Block cache per database, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 16)]
    cache_mib: u64,
    /// Write buffer (memtable) of each database keyspace, in MiB: writes
    /// collect here before they go to a table file on disk. It and the
    /// block cache are most of the memory a busy database holds. Applies to
    /// databases created from now on; existing ones keep theirs.
    #[arg(long, value_name = "MIB", default_value_t = 64,
          value_parser = clap::value_parser!(u64).range(1..=4096))]
    memtable_mib: u64,
    /// Threads serving the gRPC connections (default: one per core). Each
    /// connection stays on one of them, so a request's steps never hop
    /// between threads; work that may wait (commits, locking reads) runs on
    /// separate blocking threads. 0 serves connections on the server's
    /// general worker pool instead.
    #[arg(long, value_name = "N", default_value_t = rowtree_server::default_event_loops(),
          value_parser = clap::builder::TypedValueParser::map(
              clap::value_parser!(u16).range(0..=1024), usize::from))]
    event_loops: usize,
    /// Port of the key visualizer's HTTP server (on --host): `/` lists the
    /// databases, `/keyviz/projects/P/instances/I/databases/D` shows one.
    /// 0 turns it off. If the default port is taken, the server starts
    /// without it (with a warning); a port given explicitly must be free.
    #[arg(long, value_name = "PORT")]
    http_port: Option<u16>,
    /// Also serve PostgreSQL's wire protocol on this port (on --host), so
    /// psql, pgbench and PostgreSQL drivers connect directly to the
    /// PostgreSQL-dialect databases: the startup message's database is a
    /// database id (or full name). Off by default. The same exposure rule
    /// applies: a non-loopback --host needs TLS and --auth-token-file (the
    /// token is the password), or --insecure.
    #[arg(long, value_name = "PORT")]
    pg_port: Option<u16>,
    /// With --pg-port: a connection to a database id that does not exist
    /// creates it as a PostgreSQL-dialect database in instance
    /// projects/rowtree/instances/pg (created too if missing). Without it,
    /// such a connection is refused (SQLSTATE 3D000).
    #[arg(long, requires = "pg_port")]
    pg_create_databases: bool,
    /// Nodes serving each database's splits. Splits start on node 0 and
    /// the balancer moves them off an overloaded node (see
    /// SPANNER_SYS.SPLITS); each node has its own capacity.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024))]
    nodes: u32,
    /// Each node's capacity, in reads per second (a written row costs as
    /// much as 22,500/3,500 reads): requests to splits on a saturated node
    /// wait. Default: unlimited with one node, 22,500 with several.
    #[arg(long, value_name = "OPS")]
    node_capacity: Option<f64>,
    /// For experiments: seconds a split must stay hot (CPU score at or above
    /// --split-threshold) before it is split by load. Default 120, Spanner-like;
    /// shorter makes splitting react faster than Spanner does.
    #[arg(long, value_name = "SECS")]
    split_hot_for: Option<f64>,
    /// For experiments: at most one load split per split per this many
    /// seconds. Default 60.
    #[arg(long, value_name = "SECS")]
    split_cooldown: Option<f64>,
    /// For experiments: seconds two neighbouring splits must stay cold
    /// together (their combined score under half --split-threshold) before
    /// they are merged, if the boundary between them came from a load or
    /// size split or an expired split point. Default 300.
    #[arg(long, value_name = "SECS")]
    merge_after: Option<f64>,
    /// For experiments: the CPU usage score (percent of a node) at which a
    /// split is hot. Default 50. Scores are host CPU (a written row counts
    /// 10 µs), so with a small --node-capacity scale this down: half a
    /// saturated node is capacity x 3,500 / 22,500 x 0.0005.
    #[arg(long, value_name = "SCORE")]
    split_threshold: Option<f64>,
    /// For experiments: seconds a node must stay overloaded before the
    /// balancer moves a split off it. Default 180 (TiKV's PD).
    #[arg(long, value_name = "SECS")]
    balance_after: Option<f64>,
    /// For experiments: seconds between garbage-collection passes (which
    /// remove versions older than the retention period). Default 60.
    #[arg(long, value_name = "SECS")]
    gc_every: Option<f64>,
    /// For experiments: keep old versions at most this many seconds,
    /// whatever a database's version_retention_period says (Spanner's
    /// minimum is one hour). Reads further back fail; garbage collection
    /// removes what is older.
    #[arg(long, value_name = "SECS")]
    max_version_retention: Option<f64>,
    /// For experiments and tests: seconds between TTL passes (which delete
    /// the expired rows of tables with a row deletion policy). Default 60.
    #[arg(long, value_name = "SECS")]
    ttl_every: Option<f64>,
    /// Memory one query may hold in its sorts, aggregations, hash joins,
    /// DISTINCT, set operations and unstreamed results, in MiB; a query
    /// that needs more fails with RESOURCE_EXHAUSTED instead of the server
    /// running out of memory. See also --server-query-memory.
    #[arg(long, value_name = "MIB", default_value_t = DEFAULT_QUERY_MEMORY_MIB,
          value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    query_memory: u64,
    /// Memory all queries in flight may hold together, in MiB (what
    /// --query-memory counts, summed over every session and database). A
    /// query whose next buffered row would take the total past it fails with
    /// RESOURCE_EXHAUSTED saying the server's budget ran out; the other
    /// queries go on. The default is half this machine's physical memory,
    /// or of the container's (cgroup) limit if lower.
    #[arg(long, value_name = "MIB", default_value_t = default_server_query_memory_mib(),
          value_parser = clap::value_parser!(u64).range(1..=1 << 30))]
    server_query_memory: u64,
    /// Serve TLS on both ports with this certificate chain (PEM, the
    /// server's certificate first). Needs --tls-key.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (PEM: PKCS#8, PKCS#1 or SEC1).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Require a bearer token on both ports: the file's contents, trimmed
    /// (an empty file is refused). gRPC requests without `authorization:
    /// Bearer <token>` get UNAUTHENTICATED; the key visualizer takes the
    /// same header, or the token as the password of HTTP Basic
    /// authentication (any user name), which a browser prompts for.
    #[arg(long, value_name = "FILE")]
    auth_token_file: Option<PathBuf>,
    /// Serve on a non-loopback --host without TLS or without a token
    /// anyway: anyone who reaches the ports can then read, change and drop
    /// every database (and, without TLS, read the traffic). Logs a warning.
    #[arg(long)]
    insecure: bool,
    /// Run as one node of a cluster instead of as a single process: with
    /// --node-id, --peer-port and, except on the node that starts a new
    /// cluster, --join. The node replicates the cluster's membership and
    /// its instances and databases (the placement group) with the others,
    /// and serves Spanner's API on --port: each database is a Raft group
    /// on --replicas nodes, and the node that leads a database's group
    /// serves it; any node accepts a client's requests and forwards those
    /// for a database another node leads to that node. The data directory must be the node's own (not a single-process one).
    /// Nodes talk without TLS or tokens for now, so --host must be a
    /// loopback address unless --insecure is given.
    #[arg(long, requires = "node_id",
          conflicts_with_all = ["in_memory", "demo", "pg_port", "tls_cert", "auth_token_file", "nodes"])]
    cluster: bool,
    /// With --cluster: this node's id, 1 to 999, never reused.
    #[arg(long, value_name = "N", requires = "cluster",
          value_parser = clap::value_parser!(u64).range(1..=999))]
    node_id: Option<u64>,
    /// With --cluster: the port other nodes reach this one on (Raft
    /// messages, joins, status).
    #[arg(
        long,
        value_name = "PORT",
        requires = "cluster",
        default_value_t = 9030
    )]
    peer_port: u16,
    /// With --cluster: peer addresses (HOST:PORT, comma-separated) of nodes
    /// already in the cluster, asked in turn to let this node in. Without
    /// it, a node with an empty data directory starts a new cluster, and a
    /// node that is a member already simply restarts.
    #[arg(
        long,
        value_name = "HOST:PORT,...",
        requires = "cluster",
        value_delimiter = ','
    )]
    join: Vec<String>,
    /// With --cluster: the peer address other nodes dial (default: --host
    /// and --peer-port; set it when --host is 0.0.0.0).
    #[arg(long, value_name = "HOST:PORT", requires = "cluster")]
    advertise: Option<String>,
    /// With --cluster: dial TO wherever this node would dial FROM, a peer
    /// or Spanner address another node announced (both HOST:PORT). For a
    /// tunnel, a NAT, or a proxy on each link (the partition checks of
    /// `rowtree-check anomalies --partition-share`). Repeat for each
    /// address.
    #[arg(long, value_name = "FROM=TO", requires = "cluster")]
    route: Vec<String>,
    /// With --cluster --join: seconds to keep asking before giving up.
    #[arg(long, value_name = "SECS", requires = "cluster", default_value_t = 60)]
    join_timeout: u64,
    /// With --cluster: seconds a node may stay silent before it counts as
    /// dead (silent to the judging leader and to a majority of the other
    /// members: a node cut off from the leader alone is not dead). A dead
    /// voter of the placement group is replaced by a
    /// reachable learner (it stays a member, as a learner); each database
    /// replica on a dead node is replaced by one on a live node (while the
    /// database's other replicas are a majority), and a dead node that
    /// comes back deletes those copies.
    #[arg(long, value_name = "SECS", requires = "cluster", default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(1..))]
    dead_after: u64,
    /// With --cluster: the maximum offset between any two nodes' clocks,
    /// in milliseconds. Every node reads the others' clocks each second; a
    /// node whose clock is provably more than 0.8 x this from a majority of
    /// the live nodes stops (and exits with an error): keep clocks in sync
    /// with chrony or NTP.
    #[arg(long, value_name = "MS", requires = "cluster", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(1..=60_000))]
    max_clock_offset: u64,
    /// With --cluster: how many nodes hold a replica of each database
    /// created (fewer while the cluster has fewer live nodes). Each
    /// database is a Raft group of these nodes: it survives the loss of a
    /// minority of them.
    #[arg(long, value_name = "N", requires = "cluster", default_value_t = 3,
          value_parser = clap::value_parser!(u64).range(1..=7))]
    replicas: u64,
    /// With --cluster: how many of a database's --replicas nodes hold a
    /// replica of each of its splits other than the first (which every one
    /// of them holds: it carries the database's schema). Default: all of
    /// them. Fewer lets a database's load spread over more nodes than any
    /// one split is on: each split group's leader places its replicas on
    /// the least loaded nodes, and a node without a replica of a split
    /// reads it from one that has one. Give every node the same value.
    #[arg(long, value_name = "N", requires = "cluster",
          value_parser = clap::value_parser!(u64).range(1..=7))]
    split_replicas: Option<u64>,
    /// With --cluster: spread each database's split groups over the nodes
    /// holding them, by count (a node leading two or more groups more than
    /// another voter of one of them hands it that group), instead of
    /// handing the cold ones to the node leading the first split (the
    /// default, which spares transactions the calls to other nodes).
    /// Spread, a transaction touching several groups takes its locks at
    /// each group's leader and commits in two phases decided by the first
    /// split. Give every node the same value; the anomaly checker's
    /// --scatter uses it to exercise that path.
    #[arg(long, requires = "cluster")]
    spread_leases: bool,
    /// With --cluster: how many entries each split group's log takes
    /// before the group snapshots its replica. The log then keeps a fifth
    /// of that below the snapshot and drops the rest; a replica further
    /// behind (a node that was down a while) is sent the snapshot instead.
    /// Lower keeps less log on disk and sends snapshots sooner.
    #[arg(long, value_name = "ENTRIES", requires = "cluster",
          default_value_t = rowtree_cluster::raft::SNAPSHOT_EVERY,
          value_parser = clap::value_parser!(u64).range(10..=10_000_000))]
    snapshot_every: u64,
    /// Stop when standard input reaches its end (how `rowtree cluster up`
    /// stops its nodes, even if it is killed itself).
    #[arg(long, hide = true)]
    exit_on_stdin_eof: bool,
}

/// `rowtree serve`'s TLS and token, read from the files its flags name.
fn security_config(
    args: &ServeArgs,
) -> Result<rowtree_server::security::Security, rowtree_server::security::SecurityError> {
    use rowtree_server::security::{Security, Tls, Token};
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Some(Tls::from_files(cert, key)?),
        // clap requires the two flags together.
        _ => None,
    };
    let token = match &args.auth_token_file {
        Some(path) => Some(Token::from_file(path)?),
        None => None,
    };
    Ok(Security {
        tls,
        token,
        insecure: args.insecure,
    })
}

/// An experiment flag's seconds, checked.
fn secs(flag: &str, v: Option<f64>) -> Result<Option<std::time::Duration>, String> {
    match v {
        None => Ok(None),
        Some(s) if s.is_finite() && s >= 0.0 => Ok(Some(std::time::Duration::from_secs_f64(s))),
        Some(s) => Err(format!(
            "--{flag} must be a non-negative number of seconds, not {s}"
        )),
    }
}

/// `rowtree serve`'s garbage-collection experiment flags: the pass interval
/// and the retention cap; and the TTL pass interval.
fn gc_config(args: &ServeArgs) -> Result<rowtree_server::GcConfig, String> {
    let every = secs("gc-every", args.gc_every)?;
    if every == Some(std::time::Duration::ZERO) {
        return Err("--gc-every must be more than 0 seconds".into());
    }
    let ttl_every = secs("ttl-every", args.ttl_every)?;
    if ttl_every == Some(std::time::Duration::ZERO) {
        return Err("--ttl-every must be more than 0 seconds".into());
    }
    Ok(rowtree_server::GcConfig {
        every,
        max_version_retention: secs("max-version-retention", args.max_version_retention)?,
        ttl_every,
    })
}

/// `rowtree serve`'s split policy and balancer: the kv defaults
/// (Spanner-like), with the experiment flags applied.
fn splitting_config(
    args: &ServeArgs,
) -> Result<(rowtree_kv::SplitPolicy, rowtree_kv::BalancerConfig), String> {
    let mut policy = rowtree_kv::SplitPolicy::default();
    let mut balancer = rowtree_kv::BalancerConfig::default();
    if let Some(d) = secs("split-hot-for", args.split_hot_for)? {
        policy.hot_for = d;
    }
    if let Some(d) = secs("split-cooldown", args.split_cooldown)? {
        policy.cooldown = d;
    }
    if let Some(d) = secs("merge-after", args.merge_after)? {
        policy.merge_after = d;
    }
    if let Some(d) = secs("balance-after", args.balance_after)? {
        balancer.move_after = d;
    }
    if let Some(t) = args.split_threshold {
        if !(t.is_finite() && t > 0.0) {
            return Err(format!(
                "--split-threshold must be a positive score, not {t}"
            ));
        }
        policy.split_threshold = t;
    }
    Ok((policy, balancer))
}

/// Where the database lives.
#[derive(Debug, Args)]
#[group(required = true, multiple = false)]
struct Location {
    /// Directory of a durable database (created if missing).
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Use a fresh database held in memory for this command only.
    #[arg(long)]
    in_memory: bool,
}

#[derive(Debug, Args)]
struct SqlArgs {
    #[command(flatten)]
    location: Location,
    /// Read statements from this file (`-` for standard input).
    #[arg(short = 'f', long = "file", value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Run this text (one or more statements separated by `;`).
    #[arg(short = 'e', long = "execute", value_name = "SQL")]
    execute: Vec<String>,
    /// Stop at the first failed statement.
    #[arg(long)]
    bail: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// A typed query parameter, usable as @name: `--param id=INT64:42`.
    #[arg(long = "param", value_name = "NAME=TYPE:VALUE")]
    params: Vec<String>,
    /// The SQL dialect of a new database: GoogleSQL, or Spanner's PostgreSQL
    /// interface (`CREATE TABLE t (id bigint PRIMARY KEY, ...)`, `$1`
    /// parameters named p1, p2, ...). A database keeps the dialect it was
    /// created in: on an existing data directory this flag is ignored.
    #[arg(long, value_enum, default_value_t = SqlDialect::Googlesql)]
    dialect: SqlDialect,
}

#[derive(Debug, Args)]
struct DdlArgs {
    /// Directory of the database.
    #[arg(long, value_name = "DIR")]
    data_dir: PathBuf,
}

/// The dialect `rowtree sql` creates a new database in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SqlDialect {
    /// GoogleSQL.
    Googlesql,
    /// Spanner's PostgreSQL interface.
    Postgresql,
}

impl From<SqlDialect> for rowtree_types::Dialect {
    fn from(d: SqlDialect) -> rowtree_types::Dialect {
        match d {
            SqlDialect::Googlesql => rowtree_types::Dialect::GoogleSql,
            SqlDialect::Postgresql => rowtree_types::Dialect::PostgreSql,
        }
    }
}

/// How `rowtree sql` prints results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Aligned tables for humans.
    Table,
    /// CSV with a header row.
    Csv,
    /// One JSON object per statement per line; values as Spanner's REST API encodes them.
    Json,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    #[cfg(feature = "failpoints")]
    if let Err(e) = set_fail_points() {
        eprintln!("error: ROWTREE_FAILPOINTS: {e}");
        return ExitCode::FAILURE;
    }
    match cli.command {
        Command::Sql(args) => sql::run(args),
        Command::Ddl(args) => sql::print_ddl(&args.data_dir),
        Command::Serve(args) => serve(*args),
        Command::Simulate(args) => simulate::simulate(args),
        Command::Demo(cmd) => simulate::demo(cmd),
        Command::Keyviz(args) => keyviz::run(args),
        Command::Bench(cmd) => bench::run(cmd),
        Command::Advise(args) => advise::run(args),
        Command::Cluster(cmd) => cluster::run(cmd),
    }
}

/// In a build with the `failpoints` feature: sets the fail points that
/// `ROWTREE_FAILPOINTS` names, `name=action` pairs separated by `;`, the
/// actions as the `fail` crate reads them (`return`, `panic`, `sleep(ms)`,
/// `2*return`, `50%off`, ...). The cluster's points and what their
/// `return` does are listed in `rowtree_cluster::failpoints`.
#[cfg(feature = "failpoints")]
fn set_fail_points() -> Result<(), String> {
    let Ok(spec) = std::env::var("ROWTREE_FAILPOINTS") else {
        return Ok(());
    };
    for pair in spec.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        let (name, action) = pair
            .split_once('=')
            .ok_or_else(|| format!("{pair:?} is not name=action"))?;
        fail::cfg(name.trim(), action.trim()).map_err(|e| format!("{name}: {e}"))?;
        eprintln!("fail point {} set to {}", name.trim(), action.trim());
    }
    Ok(())
}

/// The key visualizer's HTTP port in `rowtree serve`.
const DEFAULT_HTTP_PORT: u16 = 9020;

/// `rowtree serve --query-memory`'s default, in MiB.
const DEFAULT_QUERY_MEMORY_MIB: u64 = (rowtree_sql::limits::DEFAULT_QUERY_MEMORY >> 20) as u64;

/// `rowtree serve --server-query-memory`'s default on this machine, in MiB.
fn default_server_query_memory_mib() -> u64 {
    (rowtree_sql::limits::default_server_query_memory() >> 20) as u64
}

/// `rowtree serve --cluster`: one node of a cluster, serving Spanner's
/// API with `config` (its data directory is the node's).
fn serve_cluster_node(args: ServeArgs, config: rowtree_server::Config) -> ExitCode {
    let listen = std::net::SocketAddr::new(args.host, args.peer_port);
    let security = rowtree_server::security::Security {
        tls: None,
        token: None,
        insecure: args.insecure,
    };
    if let Err(e) = rowtree_server::security::check_exposure(&[listen], &security) {
        eprintln!("error: {e}");
        return ExitCode::FAILURE;
    }
    let routes = match rowtree_cluster::raft::Routes::parse(&args.route) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: --route: {e}");
            return ExitCode::FAILURE;
        }
    };
    cluster::serve_node(cluster::ServeNode {
        node_id: args
            .node_id
            .expect("clap requires --node-id with --cluster"),
        data_dir: args.data_dir.clone(),
        listen,
        advertise: args.advertise.clone(),
        routes,
        join: args.join.clone(),
        join_timeout: std::time::Duration::from_secs(args.join_timeout),
        dead_after: std::time::Duration::from_secs(args.dead_after),
        max_clock_offset: std::time::Duration::from_millis(args.max_clock_offset),
        exit_on_stdin_eof: args.exit_on_stdin_eof,
        replicas: args.replicas as usize,
        split_replicas: args.split_replicas.map(|n| n as usize),
        spread_leases: args.spread_leases,
        snapshot_every: args.snapshot_every,
        server: config,
    })
}

/// `rowtree serve`: runs the gRPC server until SIGINT or SIGTERM.
fn serve(args: ServeArgs) -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                // openraft (cluster nodes) warns on every heartbeat a down
                // peer misses: five lines a second per peer; its errors
                // are enough unless RUST_LOG asks for more.
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,openraft=error")),
        )
        .with_writer(std::io::stderr)
        // Colours for a terminal only: a log file (or a tool reading the log,
        // such as rowtree-check) gets plain `field=value` text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    if !args.cluster && !args.in_memory && args.data_dir.join("node.json").exists() {
        eprintln!(
            "error: {} is a cluster node's directory (node.json); start it with --cluster",
            args.data_dir.display()
        );
        return ExitCode::FAILURE;
    }
    let (split_policy, balancer) = match splitting_config(&args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let gc = match gc_config(&args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    rowtree_sql::limits::set_query_memory((args.query_memory << 20) as usize);
    rowtree_sql::limits::set_server_query_memory((args.server_query_memory << 20) as usize);
    let security = match security_config(&args) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let http_scheme = if security.tls.is_some() {
        "https"
    } else {
        "http"
    };
    let config = rowtree_server::Config {
        data_dir: (!args.in_memory).then(|| args.data_dir.clone()),
        addr: std::net::SocketAddr::new(args.host, args.port),
        cache_bytes: args.cache_mib << 20,
        memtable_bytes: args.memtable_mib << 20,
        event_loops: args.event_loops,
        http_addr: match args.http_port.unwrap_or(DEFAULT_HTTP_PORT) {
            0 => None,
            port => Some(std::net::SocketAddr::new(args.host, port)),
        },
        nodes: args.nodes,
        node_capacity: args.node_capacity,
        split_policy,
        balancer,
        security,
        gc,
        cluster: None,
    };
    if args.cluster {
        // A node's key visualizer port only when asked for.
        let config = rowtree_server::Config {
            http_addr: args
                .http_port
                .filter(|p| *p != 0)
                .map(|port| std::net::SocketAddr::new(args.host, port)),
            ..config
        };
        return serve_cluster_node(args, config);
    }
    let http_port_given = args.http_port.is_some();
    let demo = args.demo;
    let pg = args.pg_port.map(|port| rowtree_pgwire::PgConfig {
        addr: std::net::SocketAddr::new(args.host, port),
        create_databases: args.pg_create_databases,
    });
    if let Some(pg) = &pg {
        // Refused before anything starts, like the gRPC and HTTP ports.
        if let Err(e) = rowtree_server::security::check_exposure(&[pg.addr], &config.security) {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    }
    // Requests run on the runtime's workers and blocking threads: give them
    // the stack size Rowtree's recursion guard is tuned for.
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(rowtree_types::stack::THREAD_STACK)
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let config_security = config.security.clone();
    let code = runtime.block_on(async move {
        match &config.data_dir {
            Some(dir) => tracing::info!(data_dir = %dir.display(), "opening"),
            None => tracing::info!("in memory: nothing will be kept"),
        }
        tracing::info!(
            per_query_mib = rowtree_sql::limits::query_memory() >> 20,
            all_queries_mib = rowtree_sql::limits::server_query_memory() >> 20,
            "query memory"
        );
        let started = match rowtree_server::Server::start(config.clone()).await {
            Err(e) if !http_port_given && e.contains("key visualizer HTTP port") => {
                tracing::warn!(
                    "{e}; starting without the key visualizer (choose one with --http-port)"
                );
                rowtree_server::Server::start(rowtree_server::Config {
                    http_addr: None,
                    ..config
                })
                .await
            }
            r => r,
        };
        let mut server = match started {
            Ok(s) => s,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        };
        eprintln!(
            "rowtree: serving Spanner's gRPC API on {}",
            server.local_addr
        );
        if let Some(http) = server.http_addr {
            eprintln!("rowtree: key visualizer on {http_scheme}://{http}/");
        }
        let _pg_server = match pg {
            Some(pg) => {
                match rowtree_pgwire::PgServer::start(
                    pg,
                    server.registry().clone(),
                    &config_security,
                )
                .await
                {
                    Ok(p) => {
                        eprintln!(
                            "rowtree: serving PostgreSQL's wire protocol on {}",
                            p.local_addr
                        );
                        Some(p)
                    }
                    Err(e) => {
                        eprintln!("error: {e}");
                        return ExitCode::FAILURE;
                    }
                }
            }
            None => None,
        };
        if demo {
            let registry = server.registry().clone();
            let created = match tokio::task::spawn_blocking(move || demo::set_up(&registry)).await {
                Ok(Ok(created)) => created,
                Ok(Err(e)) => {
                    eprintln!("error: {e}");
                    return ExitCode::FAILURE;
                }
                Err(e) => {
                    eprintln!("error: setting up the demo database: {e}");
                    return ExitCode::FAILURE;
                }
            };
            let keyviz = server.http_addr.map(|a| format!("{http_scheme}://{a}"));
            println!("{}", demo::banner(server.local_addr, keyviz, created));
        }
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("error: cannot watch for SIGTERM: {e}");
                    return ExitCode::FAILURE;
                }
            };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
            r = server.wait() => {
                eprintln!("error: the server stopped: {}", r.err().unwrap_or_default());
                return ExitCode::FAILURE;
            }
        }
        tracing::info!("shutting down: finishing requests in flight");
        match server.shutdown().await {
            Ok(()) => {
                tracing::info!("stopped");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        }
    });
    // A request cut off by the server's drain may still be on a blocking
    // thread (waiting for a lock): do not wait for it forever.
    runtime.shutdown_timeout(std::time::Duration::from_secs(5));
    code
}
