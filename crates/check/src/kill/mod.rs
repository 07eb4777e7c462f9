//! The kill check: acknowledged commits survive SIGKILL, whole.
//!
//! The server-level version of `crates/db/tests/crash.rs`. Every cycle
//! starts clients that commit over gRPC, SIGKILLs the `rowtree serve`
//! process at a random moment while commits are in flight, starts it again
//! over the same data directory, and reads everything back:
//!
//! ```text
//!   clients ──commit──▶ rowtree serve ──▶ data dir
//!      │  (ack recorded)      ▲ SIGKILL at 0.3..2 s
//!      ▼                      │ restart
//!   verify: every acknowledged commit present in A and B,
//!           every commit all-or-nothing (A and B agree row by row),
//!           A@{FORCE_INDEX=AByWriter} == A
//! ```
//!
//! Each commit writes rows with fresh ids (from per-client sequences that
//! never overlap) into table `A` and table `B` (different tables, so
//! different splits) and so an entry of index `AByWriter` on `A`. Commits
//! go through every path a client library uses: single-use commits of
//! mutations, BeginTransaction then Commit, DML in a transaction (begun
//! explicitly or inline) then Commit. A commit whose answer was lost to the
//! kill may or may not have happened, but only entirely.
//!
//! Cycles rotate through four kinds ([`CycleKind`]):
//!
//! * **commits**: the plain workload above;
//! * **ddl**: the kill lands during `CREATE INDEX CByV ON C(V)`, a backfill
//!   over table `C` (sized so it takes a while) while a writer changes
//!   `C`. After the restart the index must either exist and equal its
//!   table or not exist, and creating it again must work;
//! * **splits**: bigger commits that also rewrite earlier rows (moving
//!   their index entries), on a server whose split flags make load splits
//!   happen within seconds;
//! * **gc**: the splits workload on a server restarted with [`GC_FLAGS`]:
//!   a garbage-collection pass every 200 ms that keeps old versions one
//!   second, whatever the database's `version_retention_period` (`1h`)
//!   says. The rewrites leave old versions behind, every pass removes
//!   some, and the server's log (each pass logs its start and end) tells
//!   whether the kill came in the middle of one. A pass that removed a
//!   version some read still needs shows up as a lost or half-applied
//!   commit or an index mismatch. The restart after the kill goes back to
//!   the usual retention, since the check's own verifying reads take longer
//!   than one second.
//!
//! The code, by job:
//!
//! * this module: the [`Config`], the schema and server flags, and [`run`],
//!   which owns the server and the state carried between cycles;
//! * `kind`: the four [`CycleKind`]s and their rotation;
//! * `cycle`: one cycle end to end (start the clients, pick the moment,
//!   kill, restart, verify, log a line);
//! * `workload`: the committing clients and what they record;
//! * `ddl`: the DDL cycles' table `C`, its backfill, and its judgment after
//!   the kill;
//! * `verify`: reading everything back and judging every commit;
//! * `report`: the [`Report`], its violations and summary, and what the
//!   server's log says about garbage collection.

mod cycle;
mod ddl;
mod kind;
mod report;
mod verify;
mod workload;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::SeedableRng;

use crate::client::Client;
use crate::error::Result;
use crate::server::{self, Server, WorkDir};

pub use kind::CycleKind;
pub use report::{DdlOutcomes, GcOutcomes, Report};
use workload::CommitRecord;

/// The schema the check writes to.
pub const SCHEMA: &[&str] = &[
    "CREATE TABLE A (Id INT64 NOT NULL, Writer INT64, Payload STRING(MAX)) PRIMARY KEY (Id)",
    "CREATE TABLE B (Id INT64 NOT NULL, Payload STRING(MAX)) PRIMARY KEY (Id)",
    "CREATE INDEX AByWriter ON A(Writer)",
    "CREATE TABLE C (Id INT64 NOT NULL, V INT64, Pad STRING(MAX)) PRIMARY KEY (Id)",
];

/// `rowtree serve` flags that make load splitting react within seconds
/// (defaults: hot for 120 s, 60 s cooldown, score 50).
pub const SPLIT_FLAGS: &[&str] = &[
    "--split-hot-for",
    "1",
    "--split-cooldown",
    "1",
    "--split-threshold",
    "0.5",
];

/// `rowtree serve` flags for the garbage-collection cycles: a pass every
/// 200 ms, and old versions kept one second (whatever the database's
/// `version_retention_period` says), so every pass removes the versions
/// the rewrites leave behind and a kill often lands inside one.
pub const GC_FLAGS: &[&str] = &["--gc-every", "0.2", "--max-version-retention", "1"];

/// What the check runs.
#[derive(Debug, Clone)]
pub struct Config {
    /// The `rowtree` binary.
    pub binary: PathBuf,
    /// Kill cycles.
    pub cycles: usize,
    /// Concurrent committing clients.
    pub clients: usize,
    /// Seeds the kill moments and the workload.
    pub seed: u64,
    /// Where the data directory and the server log go; a fresh temporary
    /// directory when `None` (removed after a passing run, kept otherwise).
    pub work_dir: Option<PathBuf>,
    /// Rows in table `C`, which the DDL cycles index.
    pub backfill_rows: usize,
    /// The kill comes this long after the first acknowledged commit, drawn
    /// uniformly (DDL cycles draw within the measured backfill time).
    pub kill_window: (Duration, Duration),
    /// Print a line per cycle on standard error.
    pub verbose: bool,
}

impl Config {
    /// Defaults: 8 clients, a 0.3-2 s kill window, 200,000 rows to backfill.
    pub fn new(binary: impl Into<PathBuf>, cycles: usize) -> Config {
        Config {
            binary: binary.into(),
            cycles,
            clients: 8,
            seed: 1,
            work_dir: None,
            backfill_rows: 200_000,
            kill_window: (Duration::from_millis(300), Duration::from_millis(2000)),
            verbose: true,
        }
    }
}

/// The state of a run between cycles.
struct Run {
    config: Config,
    server: Server,
    client: Client,
    database: String,
    rng: StdRng,
    records: Vec<CommitRecord>,
    /// Acknowledged commits already counted as lost (counted once).
    lost: BTreeSet<usize>,
    report: Report,
    restarts: Vec<Duration>,
    /// Next free id in `C` for the DDL cycles' writer.
    next_c_id: i64,
    /// Whether the server runs with [`GC_FLAGS`] now.
    gc_flags_on: bool,
}

/// Runs the check. An `Err` means the check itself could not run (the
/// server would not start, a request failed outside a kill); violations
/// are in the report.
pub async fn run(config: &Config) -> Result<Report> {
    let work = WorkDir::new(config.work_dir.as_deref(), "rowtree-kill-")?;
    let result = run_in(config, work.path().to_path_buf()).await;
    work.finish(matches!(&result, Ok(r) if r.violations().is_empty()));
    result
}

async fn run_in(config: &Config, work_dir: PathBuf) -> Result<Report> {
    let started = Instant::now();
    let options = server::Options::new(&config.binary, work_dir.join("data"))
        .args(SPLIT_FLAGS.iter().copied());
    let server = Server::start(options).await?;
    let client = server.client().await?;
    let instance = client.create_instance("check").await?;
    let database = client.create_database(&instance, "kill", SCHEMA).await?;
    client
        .update_ddl(
            &database,
            &["ALTER DATABASE `kill` SET OPTIONS (version_retention_period = '1h')"],
            Duration::from_secs(60),
        )
        .await?;
    let mut run = Run {
        config: config.clone(),
        server,
        client,
        database,
        rng: StdRng::seed_from_u64(config.seed),
        records: Vec::new(),
        lost: BTreeSet::new(),
        report: Report {
            work_dir,
            ..Report::default()
        },
        restarts: Vec::new(),
        next_c_id: config.backfill_rows as i64,
        gc_flags_on: false,
    };
    let outcome = run.all_cycles().await;
    // Stop the server whatever happened; Drop kills it if this fails.
    run.report.clean_stop = run.server.stop().await.is_ok();
    outcome?;
    let mut report = run.report;
    report.elapsed = started.elapsed();
    if !run.restarts.is_empty() {
        report.restart_mean = run.restarts.iter().sum::<Duration>() / run.restarts.len() as u32;
        report.restart_max = run.restarts.iter().copied().max().unwrap_or_default();
    }
    Ok(report)
}
