//! `rowtree bench ycsb`: YCSB's core workloads against Rowtree (embedded
//! and over gRPC), PostgreSQL and SQLite on this machine, in one run. The
//! work is done by `rowtree_bench::ycsb`; this module parses options, shows
//! progress and writes the results.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use clap::Args;
use rowtree_bench::ycsb::workload::Workload;
use rowtree_bench::ycsb::{self, plot, report, Config, Progress, SystemKind, Timing};

#[derive(Debug, Args)]
pub struct YcsbArgs {
    /// Records loaded into every system (about 1 KB each).
    #[arg(long, default_value_t = 1_000_000)]
    records: u64,
    /// Workloads, comma-separated: a, b, c, d, e, f, insert-monotonic,
    /// insert-random.
    #[arg(long, value_delimiter = ',', default_value = "a,b,c,d,e,f,insert-monotonic,insert-random", value_parser = parse_workload)]
    workloads: Vec<Workload>,
    /// Client counts, comma-separated: each is a column of the matrix.
    #[arg(long, value_delimiter = ',', default_value = "1,8,32,128")]
    clients: Vec<usize>,
    /// Systems, comma-separated: embedded, grpc, pgwire (rowtree serve's PostgreSQL port), postgres, sqlite; and grpc-sql (the gRPC API reading with ExecuteSql instead of Read), which the default matrix leaves out.
    #[arg(long, value_delimiter = ',', default_value = "embedded,grpc,pgwire,postgres,sqlite", value_parser = parse_system)]
    systems: Vec<SystemKind>,
    /// Seconds each cell is measured.
    #[arg(long, default_value_t = 5.0)]
    seconds: f64,
    /// Seconds of warm-up before each cell's measurement (clients are
    /// connected and their statements prepared before it starts).
    #[arg(long, default_value_t = 0.5)]
    warmup: f64,
    /// Write results.md, results.json, throughput.svg and p99.svg here.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Seed of the operation streams.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// The in-process `rowtree serve`'s event loops (its --event-loops;
    /// default one per core; 0 serves connections on its worker pool).
    #[arg(long, value_name = "N", default_value_t = rowtree_server::default_event_loops())]
    event_loops: usize,
    /// Block cache of Rowtree's database, in MiB. The default, 128, is what
    /// PostgreSQL gets in the same run (its default shared_buffers), rather
    /// than `rowtree serve`'s own default of 16 MiB.
    #[arg(long, value_name = "MIB", default_value_t = ycsb::DEFAULT_CACHE_BYTES >> 20)]
    cache_mib: u64,
}

fn parse_workload(s: &str) -> Result<Workload, String> {
    Workload::parse(s).ok_or_else(|| {
        format!("unknown workload {s:?} (a, b, c, d, e, f, insert-monotonic, insert-random)")
    })
}

fn parse_system(s: &str) -> Result<SystemKind, String> {
    SystemKind::parse(s).ok_or_else(|| {
        format!("unknown system {s:?} (embedded, grpc, grpc-sql, pgwire, postgres, sqlite)")
    })
}

fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("rowtree bench ycsb: {message}");
    ExitCode::FAILURE
}

/// Progress on standard error: a bar for loading, a bar over the cells (in
/// a terminal; elsewhere a line as each cell starts).
struct Bars {
    started: Instant,
    label: Mutex<String>,
    loaded: AtomicU64,
    to_load: AtomicU64,
}

impl Progress for Bars {
    fn loading(&self, system: &str, records: u64) {
        *self.label.lock().expect("label") = format!("loading {system}");
        self.loaded.store(0, Ordering::Relaxed);
        self.to_load.store(records, Ordering::Relaxed);
        super::progress(&format!("loading {system}"), 0, records as usize);
    }

    fn loaded(&self, n: u64) {
        let done = self.loaded.fetch_add(n, Ordering::Relaxed) + n;
        let total = self.to_load.load(Ordering::Relaxed);
        // Redraw about 200 times per load.
        let step = (total / 200).max(1);
        if done / step != (done - n) / step || done == total {
            let label = self.label.lock().expect("label").clone();
            super::progress(&label, done as usize, total as usize);
        }
    }

    fn cell(&self, index: usize, total: usize, label: &str) {
        if std::io::stderr().is_terminal() {
            super::progress(label, index - 1, total);
        } else {
            // In a log, one line as each cell starts, with the time since
            // the run began: what a profiler attached to one cell waits
            // for, and how a slow cell shows where its time went.
            eprintln!(
                "cell {index}/{total} at {:.1} s: {label}",
                self.started.elapsed().as_secs_f64()
            );
        }
    }
}

pub fn run(args: YcsbArgs) -> ExitCode {
    if args.clients.is_empty() || args.clients.contains(&0) {
        return fail("--clients needs positive counts");
    }
    if args.records == 0 {
        return fail("--records must be positive");
    }
    if !(args.seconds > 0.0 && args.warmup >= 0.0) {
        return fail("--seconds must be positive and --warmup not negative");
    }
    let mut systems = args.systems.clone();
    systems.dedup();
    if systems.len() != args.systems.len()
        || systems
            .iter()
            .enumerate()
            .any(|(i, s)| systems[..i].contains(s))
    {
        return fail("--systems names a system twice");
    }
    let config = Config {
        records: args.records,
        timing: Timing {
            warmup: Duration::from_secs_f64(args.warmup),
            measure: Duration::from_secs_f64(args.seconds),
        },
        clients: args.clients,
        workloads: args.workloads,
        systems,
        seed: args.seed,
        event_loops: args.event_loops,
        cache_bytes: args.cache_mib << 20,
    };
    let cells = config.workloads.len() * config.clients.len() * config.systems.len();
    eprintln!(
        "rowtree bench ycsb: {} records, {} cells of {} s (+{} s warm-up): about {:.0} minutes after loading",
        config.records,
        cells,
        args.seconds,
        args.warmup,
        cells as f64 * (args.seconds + args.warmup + 0.3) / 60.0
    );
    let bars = Bars {
        started: Instant::now(),
        label: Mutex::new(String::new()),
        loaded: AtomicU64::new(0),
        to_load: AtomicU64::new(0),
    };
    let matrix = match ycsb::run(&config, &bars) {
        Ok(m) => m,
        Err(e) => return fail(e),
    };
    super::progress("done", cells, cells);
    let text = report::markdown(&matrix);
    println!("{text}");
    if let Some(dir) = &args.out {
        let written = (|| -> Result<(), String> {
            std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
            let json = serde_json::to_string_pretty(&matrix).map_err(|e| e.to_string())?;
            std::fs::write(dir.join("results.json"), json).map_err(|e| e.to_string())?;
            std::fs::write(dir.join("results.md"), &text).map_err(|e| e.to_string())?;
            for (name, metric) in [
                ("throughput.svg", plot::Metric::Throughput),
                ("p99.svg", plot::Metric::P99),
            ] {
                let svg = plot::svg(&matrix, metric).map_err(|e| e.to_string())?;
                std::fs::write(dir.join(name), svg).map_err(|e| e.to_string())?;
            }
            Ok(())
        })();
        if let Err(e) = written {
            return fail(format!("cannot write to {}: {e}", dir.display()));
        }
        eprintln!(
            "rowtree bench ycsb: wrote results.md, results.json, throughput.svg and p99.svg to {}",
            dir.display()
        );
    }
    ExitCode::SUCCESS
}
