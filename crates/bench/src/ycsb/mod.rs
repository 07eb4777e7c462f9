//! `rowtree bench ycsb`: YCSB's core workloads against Rowtree and the
//! databases its users would otherwise pick, on this machine, in one run.
//!
//! # What is compared
//!
//! Every system holds the same data (YCSB's `usertable`, see
//! [`workload`]), commits durably (every commit synced to disk before it is
//! acknowledged), and is driven by the same client threads issuing the same
//! operation mix:
//!
//! - **embedded**: Rowtree's `Database` API in this process;
//! - **grpc**: `rowtree serve` (started in this process on its own runtime,
//!   serving the very database the embedded system uses) through Spanner's
//!   gRPC API, one HTTP/2 connection and one session per client;
//! - **grpc-sql** (only when asked for): the same server and database, but
//!   reads and scans as `ExecuteSql` queries with a parameter, as
//!   applications that speak SQL send them, where `grpc` uses `Read`;
//!   writes are the same mutations;
//! - **pgwire**: `rowtree serve`'s PostgreSQL port (the same server), over
//!   a second database in the PostgreSQL dialect, through the same driver
//!   and prepared statements as the postgres system;
//! - **postgres**: PostgreSQL (Debian's package), started by the tool in a
//!   throwaway cluster on loopback with `synchronous_commit=on`, through
//!   prepared statements of the `postgres` driver, one connection per
//!   client;
//! - **sqlite**: SQLite in WAL mode with `synchronous=FULL`, one connection
//!   per client (writers queue on SQLite's single write lock).
//!
//! # How a run is measured
//!
//! A *cell* is one system running one workload with N clients: each client
//! thread issues operations back to back for a warm-up, then for the
//! measured duration; each operation's latency is timed by its client, and
//! throughput is the number of operations completed in the measured window
//! divided by its length. The matrix loops over workloads, then client
//! counts, and runs every system *innermost*, so systems alternate within
//! minutes of each other and see the same noise on a shared machine: read
//! the ratios within a row, not absolute figures across runs.
//!
//! Before the cells, every system is loaded with the same records, all of
//! them at once (one thread per system), so the set-up takes about as long as
//! the slowest load; each load's time is reported, measured beside the
//! others.
//!
//! Answers are checked as they arrive (a read returns the record's ten
//! fields, a scan at least one row), so no system is timed returning
//! nothing; an operation that fails is counted as an error (an aborted
//! transaction that its client retried is not an error, it is latency).

pub mod plot;
pub mod postgres;
pub mod report;
pub mod rowtree;
pub mod sqlite;
pub mod workload;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rand::SeedableRng;

use workload::{Keyspace, Op, Workload};

/// What can go wrong setting up or running a system.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A system could not be started or loaded.
    #[error("{system}: {message}")]
    Setup {
        system: &'static str,
        message: String,
    },
    /// An operation failed (counted, not fatal, while measuring).
    #[error("{0}")]
    Op(String),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// The result type of this module.
pub type Result<T> = std::result::Result<T, Error>;

/// A database under test.
pub trait System: Send + Sync {
    /// Its name in reports.
    fn name(&self) -> &'static str;
    /// Loads records `0..records` (hashed keys), reporting progress in
    /// records. A system that shares its data with another (the Rowtree
    /// systems over one database) does nothing: the shared data is loaded
    /// once. Loads of different systems run at the same time.
    fn load(&self, records: u64, progress: &(dyn Fn(u64) + Sync)) -> Result<()>;
    /// A new client: a connection or session of its own.
    fn client(&self) -> Result<Box<dyn Client>>;
}

/// One client's connection to a system.
pub trait Client: Send {
    /// Performs `op`; `version` makes written values differ between writes.
    fn run(&mut self, op: &Op, version: u64) -> Result<()>;
}

/// One system, one workload, one client count.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Cell {
    pub system: String,
    pub workload: String,
    pub clients: usize,
    /// Operations completed in the measured window.
    pub ops: u64,
    /// Operations that failed in the measured window.
    pub errors: u64,
    /// The first error seen, if any.
    pub first_error: Option<String>,
    /// Length of the measured window, seconds.
    pub seconds: f64,
    /// Operations per second.
    pub throughput: f64,
    /// Latency percentiles, microseconds.
    pub p50_us: f64,
    pub p99_us: f64,
}

/// How long each cell runs.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    pub warmup: Duration,
    pub measure: Duration,
}

/// Runs one cell: `clients` threads of `system` issuing `workload`.
pub fn run_cell(
    system: &dyn System,
    keyspace: &Keyspace,
    workload: Workload,
    clients: usize,
    timing: Timing,
    seed: u64,
) -> Result<Cell> {
    // Connections are made before the clock starts.
    let mut conns = Vec::with_capacity(clients);
    for _ in 0..clients {
        conns.push(system.client()?);
    }
    let stop = AtomicBool::new(false);
    let start = Instant::now();
    let measure_from = start + timing.warmup;
    let measure_to = measure_from + timing.measure;
    struct Outcome {
        latencies_ns: Vec<u64>,
        errors: u64,
        first_error: Option<String>,
    }
    let outcomes: Vec<Outcome> = std::thread::scope(|scope| {
        let handles: Vec<_> = conns
            .into_iter()
            .enumerate()
            .map(|(i, mut conn)| {
                let stop = &stop;
                scope.spawn(move || {
                    let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ (i as u64) << 32);
                    let mut out = Outcome {
                        latencies_ns: Vec::new(),
                        errors: 0,
                        first_error: None,
                    };
                    let mut version = (i as u64) << 40;
                    while !stop.load(Ordering::Relaxed) {
                        let op = keyspace.next_op(workload, &mut rng);
                        version += 1;
                        let t0 = Instant::now();
                        let result = conn.run(&op, version);
                        let t1 = Instant::now();
                        if let Op::Insert { number, .. } = op {
                            keyspace.finished(number);
                        }
                        if t1 >= measure_to {
                            break;
                        }
                        if t0 < measure_from {
                            continue;
                        }
                        match result {
                            Ok(()) => out.latencies_ns.push((t1 - t0).as_nanos() as u64),
                            Err(e) => {
                                out.errors += 1;
                                if out.first_error.is_none() {
                                    out.first_error = Some(e.to_string());
                                }
                            }
                        }
                    }
                    out
                })
            })
            .collect();
        // The timer: every client stops at the end of the window.
        let now = Instant::now();
        if measure_to > now {
            std::thread::sleep(measure_to - now);
        }
        stop.store(true, Ordering::Relaxed);
        handles
            .into_iter()
            .map(|h| h.join().expect("a client thread panicked"))
            .collect()
    });
    let mut latencies: Vec<u64> = outcomes
        .iter()
        .flat_map(|o| o.latencies_ns.iter().copied())
        .collect();
    latencies.sort_unstable();
    let errors = outcomes.iter().map(|o| o.errors).sum();
    let first_error = outcomes.iter().find_map(|o| o.first_error.clone());
    let seconds = timing.measure.as_secs_f64();
    let pct = |p: f64| -> f64 {
        if latencies.is_empty() {
            return f64::NAN;
        }
        let i = ((latencies.len() as f64 * p) as usize).min(latencies.len() - 1);
        latencies[i] as f64 / 1000.0
    };
    Ok(Cell {
        system: system.name().to_string(),
        workload: workload.name().to_string(),
        clients,
        ops: latencies.len() as u64,
        errors,
        first_error,
        seconds,
        throughput: latencies.len() as f64 / seconds,
        p50_us: pct(0.50),
        p99_us: pct(0.99),
    })
}

/// A system a run can compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SystemKind {
    Embedded,
    Grpc,
    /// The gRPC API with SQL reads (`ExecuteSql`); not in the default matrix.
    GrpcSql,
    Pgwire,
    Postgres,
    Sqlite,
}

impl SystemKind {
    /// Every system, in the order each cell runs them.
    pub const ALL: [SystemKind; 6] = [
        SystemKind::Embedded,
        SystemKind::Grpc,
        SystemKind::GrpcSql,
        SystemKind::Pgwire,
        SystemKind::Postgres,
        SystemKind::Sqlite,
    ];

    /// The name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            SystemKind::Embedded => "embedded",
            SystemKind::Grpc => "grpc",
            SystemKind::GrpcSql => "grpc-sql",
            SystemKind::Pgwire => "pgwire",
            SystemKind::Postgres => "postgres",
            SystemKind::Sqlite => "sqlite",
        }
    }

    /// Parses [`SystemKind::name`].
    pub fn parse(s: &str) -> Option<SystemKind> {
        SystemKind::ALL
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(s))
    }
}

/// What a matrix run covers.
#[derive(Debug, Clone)]
pub struct Config {
    /// Records loaded into every system before the run.
    pub records: u64,
    pub timing: Timing,
    /// Client counts, each a column of the matrix.
    pub clients: Vec<usize>,
    pub workloads: Vec<Workload>,
    pub systems: Vec<SystemKind>,
    /// Seeds every client's operation stream.
    pub seed: u64,
    /// The in-process server's event loops (`rowtree_server::Config::event_loops`).
    pub event_loops: usize,
    /// Block cache of Rowtree's database, in bytes ([`DEFAULT_CACHE_BYTES`]
    /// unless told otherwise).
    pub cache_bytes: u64,
}

/// The block cache Rowtree's database gets by default: 128 MiB, the memory
/// PostgreSQL gets for its shared buffers in the same run (its default
/// `shared_buffers`), so neither serves reads from a larger cache of its own.
/// `rowtree serve`'s own default (16 MiB) is sized for many small databases
/// on one server, not for one database of about 1 GB under test.
pub const DEFAULT_CACHE_BYTES: u64 = 128 << 20;

/// What a running matrix reports as it goes.
pub trait Progress: Sync {
    /// `system` starts loading `records` records.
    fn loading(&self, system: &str, records: u64);
    /// `n` more records loaded.
    fn loaded(&self, n: u64);
    /// A cell starts (`index` of `total`).
    fn cell(&self, index: usize, total: usize, label: &str);
}

/// How long loading one system's data took.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Load {
    pub system: String,
    pub records: u64,
    pub seconds: f64,
}

/// A whole run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Matrix {
    pub records: u64,
    pub warmup_seconds: f64,
    pub measure_seconds: f64,
    pub clients: Vec<usize>,
    pub workloads: Vec<String>,
    pub systems: Vec<String>,
    pub loads: Vec<Load>,
    pub cells: Vec<Cell>,
}

impl Matrix {
    /// The cell of `system`, `workload`, `clients`, if it ran.
    pub fn cell(&self, system: &str, workload: &str, clients: usize) -> Option<&Cell> {
        self.cells
            .iter()
            .find(|c| c.system == system && c.workload == workload && c.clients == clients)
    }
}

/// Starts the systems, loads them, and runs every cell.
pub fn run(config: &Config, progress: &dyn Progress) -> Result<Matrix> {
    let max_clients = config.clients.iter().copied().max().unwrap_or(1);
    let wants = |k: SystemKind| config.systems.contains(&k);

    // Start every system first, so a missing one fails before hours of work.
    let host = if wants(SystemKind::Embedded)
        || wants(SystemKind::Grpc)
        || wants(SystemKind::GrpcSql)
        || wants(SystemKind::Pgwire)
    {
        Some(rowtree::Host::start(
            None,
            config.event_loops,
            config.cache_bytes,
            wants(SystemKind::Pgwire),
        )?)
    } else {
        None
    };
    let pg = if wants(SystemKind::Postgres) {
        Some(postgres::Postgres::start(max_clients)?)
    } else {
        None
    };
    let lite = if wants(SystemKind::Sqlite) {
        Some(sqlite::Sqlite::create()?)
    } else {
        None
    };

    let mut systems: Vec<Box<dyn System>> = Vec::new();
    for &kind in &config.systems {
        match kind {
            SystemKind::Embedded => systems.push(Box::new(host.as_ref().expect("host").embedded())),
            SystemKind::Grpc => systems.push(Box::new(host.as_ref().expect("host").grpc())),
            SystemKind::GrpcSql => systems.push(Box::new(host.as_ref().expect("host").grpc_sql())),
            SystemKind::Pgwire => systems.push(Box::new(
                host.as_ref()
                    .and_then(|h| h.pgwire())
                    .expect("the host runs the PostgreSQL port"),
            )),
            SystemKind::Postgres => systems.push(Box::new(PgRef(pg.as_ref().expect("postgres")))),
            SystemKind::Sqlite => systems.push(Box::new(LiteRef(lite.as_ref().expect("sqlite")))),
        }
    }

    // Load: the two Rowtree systems share one database, loaded once. The
    // systems load side by side, one thread each: much of a load is waiting
    // (on syncs, on another process), so together they take less than the
    // sum of their times alone (281 s against 392 s on 2026-12-02). Each
    // load's time is measured on its own thread, beside the others.
    let mut loaders: Vec<(&'static str, &dyn System)> = Vec::new();
    let shared_load = host.as_ref().map(|h| h.embedded());
    if let Some(shared_load) = &shared_load {
        let over_grpc = wants(SystemKind::Grpc) || wants(SystemKind::GrpcSql);
        let name = match (wants(SystemKind::Embedded), over_grpc) {
            (true, true) => Some("embedded+grpc"),
            (true, false) => Some("embedded"),
            (false, true) => Some("grpc"),
            (false, false) => None,
        };
        if let Some(name) = name {
            loaders.push((name, shared_load));
        }
    }
    for s in &systems {
        if matches!(s.name(), "pgwire" | "postgres" | "sqlite") {
            loaders.push((s.name(), s.as_ref()));
        }
    }
    let loads = load_all(&loaders, config.records, progress)?;

    let keyspaces: Vec<Keyspace> = (0..systems.len())
        .map(|i| Keyspace::new(config.records, i))
        .collect();
    let total = config.workloads.len() * config.clients.len() * systems.len();
    let mut cells = Vec::with_capacity(total);
    let mut index = 0;
    for &workload in &config.workloads {
        for &clients in &config.clients {
            for (system, keyspace) in systems.iter().zip(&keyspaces) {
                index += 1;
                progress.cell(
                    index,
                    total,
                    &format!(
                        "{} · {} clients · {}",
                        workload.name(),
                        clients,
                        system.name()
                    ),
                );
                let seed = config.seed ^ (index as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                cells.push(run_cell(
                    system.as_ref(),
                    keyspace,
                    workload,
                    clients,
                    config.timing,
                    seed,
                )?);
            }
        }
    }
    drop(systems);
    Ok(Matrix {
        records: config.records,
        warmup_seconds: config.timing.warmup.as_secs_f64(),
        measure_seconds: config.timing.measure.as_secs_f64(),
        clients: config.clients.clone(),
        workloads: config
            .workloads
            .iter()
            .map(|w| w.name().to_string())
            .collect(),
        systems: config
            .systems
            .iter()
            .map(|s| s.name().to_string())
            .collect(),
        loads,
        cells,
    })
}

/// Loads every system in `loaders` at once, one thread each, and returns
/// how long each took. Progress counts the records of all of them together.
/// A failed load does not stop the others; once all have ended, the error
/// of the first failed one (in the order of `loaders`) is returned.
fn load_all(
    loaders: &[(&'static str, &dyn System)],
    records: u64,
    progress: &dyn Progress,
) -> Result<Vec<Load>> {
    if loaders.is_empty() {
        return Ok(Vec::new());
    }
    let names: Vec<&str> = loaders.iter().map(|(name, _)| *name).collect();
    progress.loading(&names.join(", "), records * loaders.len() as u64);
    std::thread::scope(|scope| {
        let handles: Vec<_> = loaders
            .iter()
            .map(|&(name, system)| {
                scope.spawn(move || -> Result<Load> {
                    let t = Instant::now();
                    system.load(records, &|n| progress.loaded(n))?;
                    Ok(Load {
                        system: name.to_string(),
                        records,
                        seconds: t.elapsed().as_secs_f64(),
                    })
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a loader panicked"))
            .collect()
    })
}

/// A borrowed system (the matrix owns the servers and files).
struct PgRef<'a>(&'a postgres::Postgres);
struct LiteRef<'a>(&'a sqlite::Sqlite);

impl System for PgRef<'_> {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn load(&self, records: u64, progress: &(dyn Fn(u64) + Sync)) -> Result<()> {
        self.0.load(records, progress)
    }
    fn client(&self) -> Result<Box<dyn Client>> {
        self.0.client()
    }
}

impl System for LiteRef<'_> {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn load(&self, records: u64, progress: &(dyn Fn(u64) + Sync)) -> Result<()> {
        self.0.load(records, progress)
    }
    fn client(&self) -> Result<Box<dyn Client>> {
        self.0.client()
    }
}
