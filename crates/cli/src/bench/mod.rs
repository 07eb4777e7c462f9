//! `rowtree bench`: benchmarks that reproduce published measurements, or
//! compare Rowtree with its peers, on this machine.
//!
//! `rowtree bench sequences`: the application-side sequence generators
//! (and a built-in bit-reversed sequence) measured as the article "Sequence
//! generation in Spanner" measures them. The work is done by
//! `rowtree_seqgen::bench`; this module parses options, picks the store
//! (an embedded database, or a Spanner-API endpoint), shows progress and
//! prints the results.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Subcommand, ValueEnum};
use rowtree_seqgen::bench::{self, Config, Mode};
use rowtree_seqgen::embedded::Embedded;
use rowtree_seqgen::remote::Remote;
use rowtree_seqgen::{RetryPolicy, Store};

mod ycsb;

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Measure the sequence generators: THREADS workers run ITERATIONS
    /// requests, each a read-write transaction that obtains one value and
    /// spends --txn-latency-ms of simulated application work inside it.
    ///
    /// Modes: sync (the value is read and incremented inside the request's
    /// transaction: ordered and gapless, one value per transaction time),
    /// async (a small transaction of its own before the request's), batch
    /// (--batch-size values reserved at a time), async-batch (the next batch
    /// fetched in the background below --low-water values left), and
    /// bit-reversed (GET_NEXT_SEQUENCE_VALUE of a built-in bit-reversed
    /// sequence inside the transaction). Prints the article tool's output:
    ///
    ///   2000 iterations (10 parallel threads) in N milliseconds: X values/s
    ///   Latency: 50%ile N ms   (and 75, 90, 99)
    ///
    /// --matrix runs every mode at 10 and 50 threads, then the built-in
    /// sequence with no application work over 100,000 values, and prints
    /// the results beside the article's published table.
    ///
    /// By default the data lives in a fresh on-disk database in a temporary
    /// directory (durable commits, as Spanner's), removed afterwards;
    /// --replicas N replicates that database on N nodes in this process
    /// (a Raft group over loopback, as `rowtree serve --cluster` runs it):
    /// each commit waits for a majority and for commit wait, holding its
    /// locks, as Spanner's do. --endpoint runs against `rowtree serve`,
    /// Google's emulator or any Spanner-API endpoint reached without
    /// credentials.
    Sequences(SequencesArgs),
    /// YCSB's core workloads against Rowtree (embedded and over gRPC),
    /// PostgreSQL and SQLite on this machine, in one run.
    ///
    /// Every system holds the same records (YCSB's usertable: a key and ten
    /// 100-byte fields), commits durably (synced before acknowledged), and
    /// is driven by the same client threads. Workloads: a (50% read, 50%
    /// update), b (95/5), c (read only), d (read latest, 5% insert), e
    /// (short scans, 5% insert), f (read-modify-write), insert-monotonic and
    /// insert-random. Each cell (workload x client count x system) runs
    /// --warmup then --seconds; systems run innermost, so they alternate
    /// and share the machine's noise: compare within a row.
    ///
    /// PostgreSQL comes from Debian's package (apt-get install postgresql):
    /// the tool starts a throwaway cluster on 127.0.0.1 with
    /// synchronous_commit=on and stops it at the end. SQLite is built in
    /// (WAL, synchronous=FULL). Leave a system out with --systems.
    ///
    /// With --out DIR it writes results.md (the tables), results.json and
    /// the plots throughput.svg and p99.svg.
    Ycsb(ycsb::YcsbArgs),
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum AbortBackoff {
    /// The library's default: 1 ms doubling to 32 ms, ±50%.
    Fast,
    /// The Java client library the article measured with: pauses of 1 s
    /// growing 1.5x to 32 s, ±50%.
    Java,
}

impl AbortBackoff {
    fn policy(self) -> RetryPolicy {
        match self {
            AbortBackoff::Java => RetryPolicy::JAVA_CLIENT,
            AbortBackoff::Fast => RetryPolicy::FAST,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum OutputFormat {
    Text,
    Json,
}

#[derive(Debug, Args)]
pub struct SequencesArgs {
    /// How each request obtains its value.
    #[arg(long, default_value = "sync", value_parser = parse_mode)]
    mode: Mode,
    /// Requests in all.
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    iterations: u64,
    /// Worker threads (a fixed pool).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=1000))]
    threads: u64,
    /// Simulated application work inside each request's transaction, in
    /// milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(0..=60_000))]
    txn_latency_ms: u64,
    /// Values reserved per batch (batch, async-batch).
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(i64).range(1..=1_000_000_000))]
    batch_size: i64,
    /// async-batch fetches the next batch when fewer than this many values
    /// remain (below --batch-size).
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(i64).range(0..=1_000_000_000))]
    low_water: i64,
    /// Run every mode at 10 and 50 threads (with --iterations each) and the
    /// built-in sequence unthrottled, and compare with the article's table.
    #[arg(long)]
    matrix: bool,
    /// A Spanner-API endpoint (HOST:PORT, plain gRPC, as for the emulator)
    /// instead of an embedded database.
    #[arg(long, value_name = "HOST:PORT")]
    endpoint: Option<String>,
    /// The database on --endpoint, created with its instance if missing.
    #[arg(
        long,
        value_name = "NAME",
        requires = "endpoint",
        default_value = "projects/rowtree-bench/instances/bench-instance/databases/sequences"
    )]
    database: String,
    /// Keep the embedded database in this directory instead of a temporary one.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["endpoint", "in_memory"])]
    data_dir: Option<PathBuf>,
    /// Use an in-memory embedded database (commits skip the disk).
    #[arg(long, conflicts_with = "endpoint")]
    in_memory: bool,
    /// Replicate the embedded database on this many nodes started in this
    /// process (each its own storage and Raft log, talking over loopback
    /// TCP), and run against the leader: every commit is replicated to a
    /// majority and held through commit wait before its locks go.
    #[arg(long, value_name = "N", conflicts_with_all = ["endpoint", "in_memory"],
          value_parser = clap::value_parser!(u64).range(1..=rowtree_cluster::local::MAX_REPLICAS as u64))]
    replicas: Option<u64>,
    /// With --replicas: the maximum clock offset between the nodes the
    /// commits allow for (commit wait waits it out), in milliseconds; the
    /// default is `rowtree serve --cluster`'s.
    #[arg(long, value_name = "MS", requires = "replicas", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(0..=1_000))]
    max_clock_offset: u64,
    /// The pause before retrying an aborted transaction: `fast` (the
    /// library's default) or `java` (the abort backoff of the Java client
    /// the article measured with, when the server suggests no delay).
    #[arg(long, value_enum, default_value = "fast")]
    abort_backoff: AbortBackoff,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: OutputFormat,
    /// With --matrix: also write the values/s of every run beside the
    /// article's as a bar chart (a self-contained SVG file).
    #[arg(long, value_name = "FILE", requires = "matrix")]
    plot: Option<PathBuf>,
}

fn parse_mode(s: &str) -> Result<Mode, String> {
    s.parse()
}

pub fn run(command: BenchCommand) -> ExitCode {
    match command {
        BenchCommand::Sequences(args) => sequences(args),
        BenchCommand::Ycsb(args) => ycsb::run(args),
    }
}

fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("rowtree bench sequences: {message}");
    ExitCode::FAILURE
}

fn sequences(args: SequencesArgs) -> ExitCode {
    // The low-water mark matters to async-batch only (and so to --matrix).
    if (args.matrix || args.mode == Mode::AsyncBatch) && args.low_water >= args.batch_size {
        return fail(format!(
            "--low-water ({}) must be below --batch-size ({})",
            args.low_water, args.batch_size
        ));
    }
    let config = Config {
        mode: args.mode,
        iterations: args.iterations as usize,
        threads: args.threads as usize,
        txn_latency: Duration::from_millis(args.txn_latency_ms),
        batch_size: args.batch_size,
        low_water: args.low_water,
        sequence: "bench_sequence".into(),
    };
    if let Some(endpoint) = &args.endpoint {
        let remote = match Remote::connect_creating(endpoint, &args.database) {
            Ok(r) => Arc::new(r.with_retry(args.abort_backoff.policy())),
            Err(e) => return fail(format!("cannot use {} on {endpoint}: {e}", args.database)),
        };
        return measure(remote, &config, &args);
    }
    if args.in_memory {
        let db = rowtree_db::Database::in_memory();
        let store = Embedded::new(db, args.abort_backoff.policy());
        return measure(Arc::new(store), &config, &args);
    }
    let temp;
    let dir = match &args.data_dir {
        Some(dir) => dir.clone(),
        None => {
            temp = match tempfile::Builder::new().prefix("rowtree-bench-").tempdir() {
                Ok(t) => t,
                Err(e) => return fail(format!("cannot create a temporary directory: {e}")),
            };
            temp.path().to_path_buf()
        }
    };
    if let Some(replicas) = args.replicas {
        return replicated(&dir, replicas as usize, &config, &args);
    }
    match rowtree_db::Database::open(&dir) {
        Ok(db) => measure(
            Arc::new(Embedded::new(db, args.abort_backoff.policy())),
            &config,
            &args,
        ),
        Err(e) => fail(format!("cannot open {}: {e}", dir.display())),
    }
}

/// Runs against the leader of a database replicated on `replicas` nodes in
/// this process, under `dir`.
fn replicated(
    dir: &std::path::Path,
    replicas: usize,
    config: &Config,
    args: &SequencesArgs,
) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("rowtree-node")
        .build()
    {
        Ok(r) => r,
        Err(e) => return fail(format!("cannot start the nodes' runtime: {e}")),
    };
    eprintln!(
        "starting {replicas} nodes in this process under {}",
        dir.display()
    );
    let cluster = match rowtree_cluster::local::LocalCluster::start(
        runtime.handle().clone(),
        dir,
        replicas,
        Duration::from_millis(args.max_clock_offset),
        rowtree_db::Options::default(),
    ) {
        Ok(c) => c,
        Err(e) => return fail(format!("cannot start {replicas} nodes: {e}")),
    };
    let store = Embedded::new(cluster.leader().clone(), args.abort_backoff.policy());
    let code = measure(Arc::new(store), config, args);
    cluster.shutdown();
    code
}

/// A progress bar on standard error: redrawn in place on a terminal, a
/// line every quarter otherwise.
fn progress(label: &str, done: usize, total: usize) {
    let width = 30;
    let filled = (done * width).checked_div(total).unwrap_or(width);
    if std::io::stderr().is_terminal() {
        eprint!(
            "\r{label:<40} [{}{}] {done}/{total}",
            "#".repeat(filled),
            ".".repeat(width - filled)
        );
        if done == total {
            eprintln!();
        }
    } else if done == total || (done > 0 && (done * 4 / total) != ((done - 1) * 4 / total)) {
        eprintln!("{label}: {done}/{total}");
    }
}

fn measure<S: Store>(store: Arc<S>, config: &Config, args: &SequencesArgs) -> ExitCode {
    if args.matrix {
        let matrix = match bench::matrix(store, config, &progress) {
            Ok(m) => m,
            Err(e) => return fail(e),
        };
        if let Some(path) = &args.plot {
            if let Err(e) = std::fs::write(path, rowtree_seqgen::plot::svg(&matrix)) {
                return fail(format!("cannot write {}: {e}", path.display()));
            }
            eprintln!(
                "rowtree bench sequences: wrote the plot to {}",
                path.display()
            );
        }
        match args.format {
            OutputFormat::Text => print!("{}", matrix.text()),
            OutputFormat::Json => println!(
                "{}",
                serde_json::json!({
                    "runs": matrix.runs,
                    "unthrottled": matrix.unthrottled,
                    "commit_ms": matrix.commit_ms,
                    "seed": matrix.seed,
                    "targets": matrix.targets(),
                })
            ),
        }
        return ExitCode::SUCCESS;
    }
    let label = format!("{} at {} threads", config.mode, config.threads);
    let report = match bench::run(store, config, &|d, t| progress(&label, d, t)) {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    match args.format {
        OutputFormat::Text => print!("{}", report.text()),
        OutputFormat::Json => println!(
            "{}",
            serde_json::to_string(&report).expect("a report serializes")
        ),
    }
    ExitCode::SUCCESS
}
