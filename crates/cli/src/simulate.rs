//! `rowtree simulate` and `rowtree demo hotspots`.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand, ValueEnum};

/// How the simulator prints its report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// Tables and ASCII heatmaps for humans.
    Text,
    /// One JSON document.
    Json,
}

#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// The schema: a file of DDL statements separated by `;`.
    #[arg(long, value_name = "FILE")]
    schema: PathBuf,
    /// The workload (TOML): per table, rates and column generators. See docs/simulator.md.
    #[arg(long, value_name = "FILE")]
    workload: PathBuf,
    /// Number of simulated nodes (each serves one CPU-second per second).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=1024))]
    nodes: u32,
    /// Simulated duration (e.g. 30m, 90s, 1h); overrides the workload file's `duration`.
    #[arg(long, value_name = "DURATION")]
    duration: Option<String>,
    /// Random seed; overrides the workload file's `seed`.
    #[arg(long)]
    seed: Option<u64>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    format: ReportFormat,
    /// Write the key visualizer (one self-contained HTML page) here, and the
    /// heatmap data as JSON next to it (FILE with a .json extension).
    #[arg(long, value_name = "FILE")]
    keyviz: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum DemoCommand {
    /// The hotspot scenario of the seed schemas (examples/seeds/*.sql) on the
    /// simulator: UserAccessLogs keyed timestamp-first, by a UUID v4, with the
    /// key swapped (UserId, LastAccess) and hash-sharded; Users with a
    /// non-interleaved vs an interleaved index on LastAccess. Offered load:
    /// N x C on N nodes (C = one node's throughput for the design's op mix).
    ///
    /// With --cluster, the same six designs run on N real node processes
    /// started on 127.0.0.1 (each capped at --node-capacity reads per
    /// second, every database on every node and each of its splits on
    /// three of them), one after the other for --duration each: splits are
    /// cut by load, their leases and replicas moved by the nodes'
    /// balancer, and commits sent to the node leading their key. Progress every 10 s; the report says which designs met
    /// their targets (good ones at least 3.2 x C on four nodes, bad ones at
    /// most 1.2 x C with a split found to be a MOVING_HOT_SPOT).
    Hotspots(HotspotsArgs),
}

#[derive(Debug, Args)]
pub struct HotspotsArgs {
    /// Number of simulated nodes.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=1024))]
    nodes: u32,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    format: ReportFormat,
    /// Duration of each design: simulated (default 30m), or with --cluster
    /// real time (default 3m).
    #[arg(long, value_name = "DURATION")]
    duration: Option<String>,
    /// Each simulated operation stands for this many (rates divided, costs
    /// multiplied): same CPU picture, faster run.
    #[arg(long, default_value_t = 1.0)]
    scale: f64,
    /// Designs simulated in parallel (default: the number of CPUs).
    #[arg(long)]
    threads: Option<usize>,
    /// Run the designs on real node processes instead of the simulator.
    #[arg(long)]
    cluster: bool,
    /// With --cluster: each node's capacity in reads per second (a written
    /// row costs as much as 22,500/3,500 reads). Small, so that N saturated
    /// nodes fit on a laptop.
    #[arg(
        long,
        default_value_t = 300.0,
        value_name = "OPS",
        requires = "cluster"
    )]
    node_capacity: f64,
    /// With --cluster: offered load per node, in units of C.
    #[arg(long, default_value_t = 1.0, value_name = "X", requires = "cluster")]
    load: f64,
    /// With --cluster: only these designs (comma-separated names:
    /// timestamp-first, uuid, swapped-key, hash-sharded,
    /// index-non-interleaved, index-interleaved).
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "NAMES",
        requires = "cluster"
    )]
    designs: Vec<String>,
    /// With --cluster: the cluster's directory, kept afterwards (its node
    /// logs, `rowtree cluster status --dir DIR` while it runs). Default: a
    /// temporary directory, removed after.
    #[arg(long, value_name = "DIR", requires = "cluster")]
    dir: Option<PathBuf>,
    /// With --cluster: more `rowtree serve` flags for every node, after
    /// `--`, for experiments (e.g. `-- --split-threshold 25`); they come
    /// after the demo's own, so they override them.
    #[arg(last = true, value_name = "SERVE FLAGS", requires = "cluster")]
    serve_flags: Vec<String>,
}

fn fail(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::FAILURE
}

fn read(path: &Path, what: &str) -> Result<String, String> {
    std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the {what} {}: {e}", path.display()))
}

fn progress_line(label: &str, m: u64, total: u64) {
    let tty = std::io::stderr().is_terminal();
    if tty {
        eprint!("\r{label}: simulated {m}/{total} min   ");
        if m == total {
            eprintln!();
        }
    } else if m == total || m.is_multiple_of(5) {
        eprintln!("{label}: simulated {m}/{total} min");
    }
}

pub fn simulate(args: SimulateArgs) -> ExitCode {
    let schema = match read(&args.schema, "schema") {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    let text = match read(&args.workload, "workload") {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    let catalog = match rowtree_sim::catalog_from_sql(&schema) {
        Ok(c) => c,
        Err(e) => return fail(format!("{}: {e}", args.schema.display())),
    };
    let mut workload = match rowtree_sim::Workload::parse(&text, &catalog) {
        Ok(w) => w,
        Err(e) => return fail(format!("{}: {e}", args.workload.display())),
    };
    if let Some(d) = &args.duration {
        match rowtree_sim::parse_duration(d) {
            Ok(d) => workload.duration = d,
            Err(e) => return fail(format!("--duration: {e}")),
        }
    }
    if let Some(seed) = args.seed {
        workload.seed = seed;
    }
    let config = rowtree_sim::SimConfig::new(args.nodes);
    let started = std::time::Instant::now();
    let (report, history) =
        match rowtree_sim::simulate_with_history(&catalog, &workload, &config, &mut |m, t| {
            progress_line("simulate", m, t)
        }) {
            Ok(r) => r,
            Err(e) => return fail(e),
        };
    eprintln!(
        "simulate: done in {:.1} s of wall time",
        started.elapsed().as_secs_f64()
    );
    if let Some(path) = &args.keyviz {
        // The schema's name (its file name without extension), never a
        // path: workloads and schemas often live in temporary directories.
        let name = args
            .schema
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "schema".into());
        let title = format!("Key Visualizer: {name} (simulated, {} nodes)", args.nodes);
        let html = rowtree_sim::keyviz_html(&catalog, &history, &title);
        if let Err(e) = std::fs::write(path, html) {
            return fail(format!("cannot write {}: {e}", path.display()));
        }
        let json_path = path.with_extension("json");
        let data = serde_json::to_string_pretty(&report.heatmap).expect("serializable");
        if let Err(e) = std::fs::write(&json_path, data) {
            return fail(format!("cannot write {}: {e}", json_path.display()));
        }
        eprintln!(
            "keyviz: {} (heatmap data: {})",
            path.display(),
            json_path.display()
        );
    }
    match args.format {
        ReportFormat::Text => print!("{}", rowtree_sim::render_text(&report)),
        ReportFormat::Json => println!(
            "{}",
            serde_json::to_string_pretty(&report).expect("serializable")
        ),
    }
    ExitCode::SUCCESS
}

pub fn demo(cmd: DemoCommand) -> ExitCode {
    let DemoCommand::Hotspots(args) = cmd;
    if args.cluster {
        return demo_cluster(args);
    }
    let mut config = rowtree_sim::DemoConfig::new(args.nodes);
    match rowtree_sim::parse_duration(args.duration.as_deref().unwrap_or("30m")) {
        Ok(d) => config.duration = d,
        Err(e) => return fail(format!("--duration: {e}")),
    }
    if !(args.scale >= 1.0 && args.scale.is_finite()) {
        return fail("--scale must be at least 1");
    }
    config.scale = args.scale;
    let threads = args.threads.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let started = std::time::Instant::now();
    let report = match rowtree_sim::run_demo(&config, threads, &|name, m, total| {
        if m == total || m.is_multiple_of(5) {
            eprintln!("demo hotspots: {name}: simulated {m}/{total} min");
        }
    }) {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    eprintln!(
        "demo hotspots: done in {:.1} s of wall time",
        started.elapsed().as_secs_f64()
    );
    match args.format {
        ReportFormat::Text => print!("{}", rowtree_sim::demo::render_demo_text(&report)),
        ReportFormat::Json => {
            let designs: Vec<serde_json::Value> = report
                .designs
                .iter()
                .map(|d| {
                    serde_json::json!({
                        "name": d.name,
                        "throughput_per_node_capacity": d.throughput_per_node_capacity,
                        "max_node_utilization": d.max_node_utilization,
                        "hot_splits": d.hot_splits,
                        "unsplittable_reasons": d.unsplittable_reasons,
                        "capacity_per_node": d.report.capacity_per_node,
                        "offered_ops_per_sec": d.report.offered_ops_per_sec,
                        "settled_ops_per_sec": d.report.settled_ops_per_sec,
                        "latency_ms": d.report.latency_ms,
                        "splits": d.report.splits,
                    })
                })
                .collect();
            let doc = serde_json::json!({"nodes": report.nodes, "designs": designs});
            println!(
                "{}",
                serde_json::to_string_pretty(&doc).expect("serializable")
            );
        }
    }
    ExitCode::SUCCESS
}

/// `rowtree demo hotspots --cluster` (see `demo_cluster.rs`).
fn demo_cluster(args: HotspotsArgs) -> ExitCode {
    let duration = match rowtree_sim::parse_duration(args.duration.as_deref().unwrap_or("3m")) {
        Ok(d) => std::time::Duration::from_nanos(d),
        Err(e) => return fail(format!("--duration: {e}")),
    };
    if duration < std::time::Duration::from_secs(15) {
        return fail("--duration: at least 15s with --cluster");
    }
    if !(args.node_capacity >= 10.0 && args.node_capacity.is_finite()) {
        return fail("--node-capacity must be at least 10");
    }
    if !(args.load > 0.0 && args.load <= 10.0) {
        return fail("--load must be above 0 and at most 10");
    }
    if !(2..=9).contains(&args.nodes) {
        return fail("--nodes must be 2 to 9 with --cluster");
    }
    let demo = crate::demo_cluster::ClusterDemo {
        nodes: u64::from(args.nodes),
        capacity: args.node_capacity,
        duration,
        load_per_node: args.load,
        designs: args.designs,
        dir: args.dir,
        serve_flags: args.serve_flags,
    };
    let runtime = match crate::cluster::runtime() {
        Ok(r) => r,
        Err(code) => return code,
    };
    let report = match runtime.block_on(crate::demo_cluster::run(&demo)) {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    match args.format {
        ReportFormat::Text => print!("{}", crate::demo_cluster::render_text(&report)),
        ReportFormat::Json => println!(
            "{}",
            serde_json::to_string_pretty(&report).expect("serializable")
        ),
    }
    ExitCode::SUCCESS
}
