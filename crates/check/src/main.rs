//! `rowtree-check`: reliability checks against a real `rowtree serve`.
//!
//! `rowtree-check kill --cycles N` SIGKILLs the server mid-commit N times
//! and checks every acknowledged commit survived, whole;
//! `rowtree-check soak --sessions 256 --minutes 10` keeps many sessions
//! busy and reports RSS, throughput and latency over time;
//! `rowtree-check anomalies --seconds 60 --kill-every 10` runs the
//! list-append and bank workloads and checks their histories for isolation
//! anomalies. Each exits with status 1 on a violation, 2 when the check
//! could not run.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use rowtree_check::anomaly::{self, bank, list_append, Strikes};
use rowtree_check::{kill, soak};

#[derive(Debug, Parser)]
#[command(name = "rowtree-check", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// SIGKILL the server mid-commit, restart it, check every acknowledged
    /// commit is there and whole, and indexes equal their tables.
    Kill(KillArgs),
    /// Many sessions doing mixed work for minutes: RSS, throughput,
    /// latency; no stuck operation, no leaked session.
    Soak(SoakArgs),
    /// Concurrent transactions (list-append, bank) while the server is
    /// killed and restarted; their histories checked for serializability
    /// and external-consistency anomalies. With --cluster N, against N
    /// `rowtree serve --cluster` processes: clients spread over every node
    /// and each strike takes down a random node for --down-for seconds
    /// (killed, or frozen), cuts a random minority off from the rest, or
    /// restarts every node in turn.
    Anomalies(AnomaliesArgs),
}

#[derive(Debug, Args)]
struct AnomaliesArgs {
    /// The rowtree binary to run as `rowtree serve`.
    #[arg(long, default_value = "target/release/rowtree")]
    binary: PathBuf,
    /// Seeds the clients' choices.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Which workload: list-append, bank, or both (one after the other).
    #[arg(long, value_enum, default_value_t = Workload::Both)]
    workload: Workload,
    /// Seconds each workload runs.
    #[arg(long, default_value_t = 60.0)]
    seconds: f64,
    /// Concurrent clients.
    #[arg(long, default_value_t = 8)]
    clients: usize,
    /// SIGKILL and restart the server every this many seconds (0: never).
    #[arg(long, default_value_t = 10.0)]
    kill_every: f64,
    /// Run against a cluster of this many nodes (3 to 9) on loopback, each
    /// database replicated on three of them, instead of one server.
    #[arg(long, value_name = "N")]
    cluster: Option<usize>,
    /// With --cluster: how long a killed node stays down before it is
    /// started again, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 1.0, requires = "cluster")]
    down_for: f64,
    /// With --cluster: the share of strikes that freeze a node (SIGSTOP
    /// for --down-for seconds, then SIGCONT) instead of killing it; 0 for
    /// kills only.
    #[arg(
        long,
        value_name = "SHARE",
        default_value_t = 0.5,
        requires = "cluster"
    )]
    pause_share: f64,
    /// With --cluster: the share of strikes that cut a random minority of
    /// the nodes off from the others for --down-for seconds (every link
    /// between the sides dropped, or silent), instead of killing a node.
    /// Nodes then reach each other through a proxy per link. Writes
    /// acknowledged through the minority count as failures.
    #[arg(
        long,
        value_name = "SHARE",
        default_value_t = 0.0,
        requires = "cluster"
    )]
    partition_share: f64,
    /// With --cluster: the share of strikes that restart every node in
    /// turn, each stopped gracefully (SIGTERM) and started again, as a
    /// rolling upgrade does. The three shares together at most 1.
    #[arg(
        long,
        value_name = "SHARE",
        default_value_t = 0.0,
        requires = "cluster"
    )]
    restart_share: f64,
    /// With --cluster: on how many of the nodes the database lives (each
    /// node's `rowtree serve --replicas`; the server's default is 3).
    #[arg(long, value_name = "N", requires = "cluster")]
    replicas: Option<usize>,
    /// With --cluster: how many of the database's nodes hold each split
    /// but the first (`rowtree serve --split-replicas`; default all). Fewer
    /// than --replicas leaves every node without some splits, which it
    /// reads through the nodes that hold them.
    #[arg(long, value_name = "N", requires = "cluster")]
    split_replicas: Option<usize>,
    /// Cut the workload's tables into this many key ranges with split
    /// points before the clients start, so that transactions span split
    /// groups and commit in two phases (1: no split points).
    #[arg(long, value_name = "N", default_value_t = 1)]
    splits: usize,
    /// With --cluster: spread the split groups' leaders over the nodes
    /// (`rowtree serve --spread-leases`) instead of gathering the cold ones
    /// on the first split's leader, so that most transactions span groups
    /// led by different nodes and commit across nodes.
    #[arg(long, requires = "cluster")]
    scatter: bool,
    /// Copy each server's log to DIR/node-N.log when a workload ends (the
    /// second workload's replace the first's); otherwise they are removed
    /// with the data. With --cluster, the environment variable
    /// ROWTREE_CHECK_SERVER_LOG sets the nodes' log filter (RUST_LOG's
    /// syntax) in place of the default.
    #[arg(long, value_name = "DIR")]
    keep_logs: Option<PathBuf>,
    /// Print every transaction that did not commit as it ends: the time
    /// (UTC, as the servers' logs have it), the client, how long it ran and
    /// its error. For finding what clients waited on after a strike.
    #[arg(long)]
    trace_failures: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Workload {
    ListAppend,
    Bank,
    Both,
}

#[derive(Debug, Args)]
struct Common {
    /// The rowtree binary to run as `rowtree serve`.
    #[arg(long, default_value = "target/release/rowtree")]
    binary: PathBuf,
    /// Seeds the workload (and the kill moments).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Directory for the data and the server log (default: a temporary
    /// directory, removed after a passing run, kept after a failing one).
    #[arg(long, value_name = "DIR")]
    work_dir: Option<PathBuf>,
    /// Only the summary, not a line per cycle or interval.
    #[arg(long)]
    quiet: bool,
}

#[derive(Debug, Args)]
struct KillArgs {
    #[command(flatten)]
    common: Common,
    /// Kill cycles (they rotate: commits, ddl, splits, gc).
    #[arg(long, default_value_t = 10)]
    cycles: usize,
    /// Concurrent committing clients.
    #[arg(long, default_value_t = 8)]
    clients: usize,
    /// Rows in the table the DDL cycles index (the backfill's size).
    #[arg(long, default_value_t = 200_000)]
    backfill_rows: usize,
}

#[derive(Debug, Args)]
struct SoakArgs {
    #[command(flatten)]
    common: Common,
    /// Concurrent sessions.
    #[arg(long, default_value_t = 256)]
    sessions: usize,
    /// Minutes of load (fractions allowed).
    #[arg(long, default_value_t = 10.0, conflicts_with = "seconds")]
    minutes: f64,
    /// Seconds of load, instead of --minutes.
    #[arg(long)]
    seconds: Option<f64>,
    /// Seconds between samples.
    #[arg(long, default_value_t = 10.0)]
    interval: f64,
    /// Where to write the JSON report.
    #[arg(long, default_value = "soak.json")]
    json: PathBuf,
    /// Also write an SVG chart of RSS and throughput here.
    #[arg(long)]
    svg: Option<PathBuf>,
    /// The operation mix as name=weight pairs (unnamed ones get 0), e.g.
    /// `point_read=50,transfer=50`. Default: point_read=30, small_query=20,
    /// transfer=30, streaming_query=8, read_only_txn=7, rollback=5.
    #[arg(long, value_name = "NAME=WEIGHT,..")]
    mix: Option<String>,
    /// A `rowtree serve` flag to add (repeat for several), e.g.
    /// `--server-arg=--memtable-mib --server-arg=8`.
    #[arg(long = "server-arg", value_name = "ARG", allow_hyphen_values = true)]
    server_args: Vec<String>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::from(2);
        }
    };
    runtime.block_on(async move {
        match cli.command {
            Command::Kill(a) => run_kill(a).await,
            Command::Soak(a) => run_soak(a).await,
            Command::Anomalies(a) => run_anomalies(a).await,
        }
    })
}

/// The most key ranges `anomalies --splits` cuts a table into.
const MAX_SPLITS: usize = 64;

fn binary_exists(binary: &std::path::Path) -> bool {
    if binary.is_file() {
        return true;
    }
    eprintln!(
        "error: no rowtree binary at {} (build it with `cargo build --release -p rowtree-cli`, or pass --binary)",
        binary.display()
    );
    false
}

async fn run_anomalies(a: AnomaliesArgs) -> ExitCode {
    if !binary_exists(&a.binary) {
        return ExitCode::from(2);
    }
    if !(a.seconds.is_finite()
        && a.seconds > 0.0
        && a.kill_every.is_finite()
        && a.kill_every >= 0.0
        && a.down_for.is_finite()
        && a.down_for >= 0.0
        && (0.0..=1.0).contains(&a.pause_share)
        && (0.0..=1.0).contains(&a.partition_share)
        && (0.0..=1.0).contains(&a.restart_share)
        && a.pause_share + a.partition_share + a.restart_share <= 1.0)
    {
        eprintln!(
            "error: --seconds must be positive, --kill-every and --down-for not negative, \
             --pause-share, --partition-share and --restart-share from 0 to 1, together at most 1"
        );
        return ExitCode::from(2);
    }
    let nodes = a.cluster.unwrap_or(1);
    if a.cluster.is_some() && !(3..=anomaly::MAX_NODES).contains(&nodes) {
        eprintln!(
            "error: --cluster takes 3 to {} nodes, not {nodes}",
            anomaly::MAX_NODES
        );
        return ExitCode::from(2);
    }
    let hosts = a.replicas.unwrap_or(3.min(nodes));
    if a.cluster.is_some()
        && (!(1..=nodes).contains(&hosts)
            || !(1..=hosts).contains(&a.split_replicas.unwrap_or(hosts)))
    {
        eprintln!(
            "error: --replicas takes 1 to the {nodes} nodes, and --split-replicas 1 to --replicas"
        );
        return ExitCode::from(2);
    }
    if !(1..=MAX_SPLITS).contains(&a.splits) {
        eprintln!("error: --splits takes 1 to {MAX_SPLITS}, not {}", a.splits);
        return ExitCode::from(2);
    }
    let options = anomaly::Options {
        binary: a.binary,
        clients: a.clients.max(1),
        duration: Duration::from_secs_f64(a.seconds),
        kill_every: (a.kill_every > 0.0).then(|| Duration::from_secs_f64(a.kill_every)),
        seed: a.seed,
        nodes,
        down_for: Duration::from_secs_f64(a.down_for),
        pause_share: a.pause_share,
        partition_share: a.partition_share,
        restart_share: a.restart_share,
        replicas: a.replicas,
        split_replicas: a.split_replicas,
        splits: a.splits,
        scatter: a.scatter,
        keep_logs: a.keep_logs,
        trace_failures: a.trace_failures,
    };
    let mut failed = false;
    if a.workload != Workload::Bank {
        match list_append::run(&options).await {
            Ok(r) => {
                let c = &r.check;
                println!(
                    "list-append: {:.0} s, {}: {} committed, {} failed, {} unknown; \
                     {} dependency edges, {} appends checked, {} elements at the end, {} follower \
                     reads; {} anomalies",
                    r.elapsed.as_secs_f64(),
                    r.strikes,
                    c.committed,
                    c.failed,
                    c.unknown,
                    c.edges,
                    c.appends_checked,
                    r.final_elements,
                    r.follower_reads,
                    c.anomalies.len()
                );
                print_strikes(&r.strikes);
                print_split_voters(&r.split_voters);
                for anomaly in c.anomalies.iter().take(20) {
                    println!("  {anomaly}");
                }
                for txn in &r.involved {
                    println!("    {txn}");
                }
                failed |= !r.ok();
            }
            Err(e) => {
                eprintln!("error: the list-append workload could not run: {e}");
                return ExitCode::from(2);
            }
        }
    }
    if a.workload != Workload::ListAppend {
        match bank::run(&options).await {
            Ok(r) => {
                println!(
                    "bank: {}: {} transfers acknowledged, {} failed, {} unknown, {} declined; \
                     {} strong and {} stale snapshots ({} follower reads), {} partitioned DML; \
                     final total {}; \
                     {} bad snapshots, {} lost and {} phantom transfers, {} balance mismatches",
                    r.strikes,
                    r.acknowledged,
                    r.failed,
                    r.unknown,
                    r.declined,
                    r.strong_reads,
                    r.stale_reads,
                    r.follower_reads,
                    r.partitioned_dml,
                    r.final_total,
                    r.bad_reads.len(),
                    r.lost_transfers.len(),
                    r.phantom_transfers.len(),
                    r.balance_mismatches.len()
                );
                if options.nodes > 1 {
                    println!(
                        "  {} transfers decided across nodes ({} of them aborted)",
                        r.across_nodes.0, r.across_nodes.1
                    );
                }
                let kinds: Vec<String> = r
                    .failure_kinds
                    .iter()
                    .map(|(kind, n)| format!("{n} {kind}"))
                    .collect();
                if !kinds.is_empty() {
                    println!("  failed transfers by error: {}", kinds.join(", "));
                }
                for sample in &r.failure_samples {
                    println!("    {sample}");
                }
                print_strikes(&r.strikes);
                print_split_voters(&r.split_voters);
                for line in r
                    .bad_reads
                    .iter()
                    .chain(&r.balance_mismatches)
                    .chain(&r.phantom_errors)
                    .take(20)
                {
                    println!("  {line}");
                }
                failed |= !r.ok();
            }
            Err(e) => {
                eprintln!("error: the bank workload could not run: {e}");
                return ExitCode::from(2);
            }
        }
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// The voters of each split group at the end of a cluster run.
fn print_split_voters(groups: &[Vec<u64>]) {
    if groups.is_empty() {
        return;
    }
    let groups: Vec<String> = groups
        .iter()
        .map(|voters| {
            let voters: Vec<String> = voters.iter().map(u64::to_string).collect();
            format!("[{}]", voters.join(","))
        })
        .collect();
    println!(
        "  {} split groups at the end, by voters: {}",
        groups.len(),
        groups.join(" ")
    );
}

/// How long writes stopped after the strikes, if any were timed, and the
/// writes a partition's minority acknowledged.
fn print_strikes(strikes: &Strikes) {
    for line in strikes.minority_acks.iter().take(20) {
        println!("  {line}");
    }
    let resumes = &strikes.resumes;
    let Some(max) = resumes.last() else {
        return;
    };
    let slowest: Vec<String> = resumes
        .iter()
        .rev()
        .take(5)
        .map(|r| format!("{:.2} s ({})", r.after.as_secs_f64(), r.strike))
        .collect();
    println!(
        "  writes resumed after each of {} timed strikes within {:.2} s (median {:.2} s; slowest {})",
        resumes.len(),
        max.after.as_secs_f64(),
        resumes[resumes.len() / 2].after.as_secs_f64(),
        slowest.join(", ")
    );
}

async fn run_kill(a: KillArgs) -> ExitCode {
    if !binary_exists(&a.common.binary) {
        return ExitCode::from(2);
    }
    let mut config = kill::Config::new(&a.common.binary, a.cycles);
    config.clients = a.clients.max(1);
    config.seed = a.common.seed;
    config.work_dir = a.common.work_dir;
    config.backfill_rows = a.backfill_rows;
    config.verbose = !a.common.quiet;
    match kill::run(&config).await {
        Ok(report) => {
            println!("{}", report.summary());
            finish(report.violations(), &report.error_samples)
        }
        Err(e) => {
            eprintln!("error: the kill check could not run: {e}");
            ExitCode::from(2)
        }
    }
}

async fn run_soak(a: SoakArgs) -> ExitCode {
    if !binary_exists(&a.common.binary) {
        return ExitCode::from(2);
    }
    let secs = a.seconds.unwrap_or(a.minutes * 60.0);
    if !(secs.is_finite() && secs > 0.0 && a.interval.is_finite() && a.interval > 0.0) {
        eprintln!("error: the duration and the interval must be positive");
        return ExitCode::from(2);
    }
    let mut config = soak::Config::new(
        &a.common.binary,
        a.sessions.max(1),
        Duration::from_secs_f64(secs),
    );
    config.interval = Duration::from_secs_f64(a.interval);
    config.server_args = a.server_args.clone();
    if let Some(mix) = &a.mix {
        match soak::Op::parse_mix(mix) {
            Ok(weights) => config.mix = weights,
            Err(e) => {
                eprintln!("error: --mix: {e}");
                return ExitCode::from(2);
            }
        }
    }
    config.seed = a.common.seed;
    config.work_dir = a.common.work_dir;
    config.verbose = !a.common.quiet;
    match soak::run(&config).await {
        Ok(report) => {
            println!("{}", report.table());
            let json = serde_json::to_string_pretty(&report.to_json()).unwrap_or_default();
            if let Err(e) = std::fs::write(&a.json, json) {
                eprintln!("error: cannot write {}: {e}", a.json.display());
                return ExitCode::from(2);
            }
            println!("JSON report: {}", a.json.display());
            if let Some(svg) = &a.svg {
                if let Err(e) = std::fs::write(svg, report.svg()) {
                    eprintln!("error: cannot write {}: {e}", svg.display());
                    return ExitCode::from(2);
                }
                println!("chart: {}", svg.display());
            }
            finish(report.violations(), &report.error_samples)
        }
        Err(e) => {
            eprintln!("error: the soak check could not run: {e}");
            ExitCode::from(2)
        }
    }
}

fn finish(violations: Vec<String>, errors: &[String]) -> ExitCode {
    for e in errors {
        eprintln!("  error: {e}");
    }
    if violations.is_empty() {
        println!("PASS");
        ExitCode::SUCCESS
    } else {
        for v in &violations {
            println!("VIOLATION: {v}");
        }
        ExitCode::from(1)
    }
}
