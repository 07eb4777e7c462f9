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

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::client::{pb, Client, Selector, Statement, TxnMode};
use crate::error::{Error, Result};
use crate::server::{self, Server, WorkDir};
use crate::wire::{insert, insert_or_update, KeySet, Value};

/// The schema the check writes to.
pub const SCHEMA: &[&str] = &[
    "CREATE TABLE A (Id INT64 NOT NULL, Writer INT64, Payload STRING(MAX)) PRIMARY KEY (Id)",
    "CREATE TABLE B (Id INT64 NOT NULL, Payload STRING(MAX)) PRIMARY KEY (Id)",
    "CREATE INDEX AByWriter ON A(Writer)",
    "CREATE TABLE C (Id INT64 NOT NULL, V INT64, Pad STRING(MAX)) PRIMARY KEY (Id)",
];

/// The index the DDL cycles build, kill, and build again.
const BACKFILL_DDL: &str = "CREATE INDEX CByV ON C(V)";

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

/// What a cycle does before the kill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CycleKind {
    /// Small commits through every commit path.
    Commits,
    /// Commits while an index backfills; the kill lands in the backfill.
    Ddl,
    /// Big commits that rewrite earlier rows, with fast load splitting.
    Splits,
    /// The split cycles' workload on a server collecting garbage every
    /// 200 ms with a one-second retention ([`GC_FLAGS`]).
    Gc,
}

impl CycleKind {
    /// The kind of cycle `i`: the four kinds in turn.
    pub fn of(i: usize) -> CycleKind {
        match i % 4 {
            0 => CycleKind::Commits,
            1 => CycleKind::Ddl,
            2 => CycleKind::Splits,
            _ => CycleKind::Gc,
        }
    }

    /// Whether its clients make big commits at scattered keys that rewrite
    /// earlier rows (leaving old versions behind).
    fn rewrites(self) -> bool {
        matches!(self, CycleKind::Splits | CycleKind::Gc)
    }

    fn name(self) -> &'static str {
        match self {
            CycleKind::Commits => "commits",
            CycleKind::Ddl => "ddl",
            CycleKind::Splits => "splits",
            CycleKind::Gc => "gc",
        }
    }
}

/// What the DDL cycles saw.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DdlOutcomes {
    /// Kills while the backfill was still running (its operation not done).
    pub killed_mid_backfill: usize,
    /// After the restart the index existed (and was checked against `C`).
    pub index_present: usize,
    /// After the restart the index did not exist (and was created again).
    pub index_absent: usize,
    /// Retries of the DDL that failed (a violation).
    pub retry_failures: usize,
    /// Index entries of `CByV` that disagree with `C` (a violation).
    pub index_mismatches: u64,
}

/// What the garbage-collection cycles saw, from the server's log.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GcOutcomes {
    /// Passes that started before the kills.
    pub passes_started: u64,
    /// Passes that removed versions before the kills.
    pub passes_removing: u64,
    /// Versions those passes removed.
    pub versions_removed: u64,
    /// Kills that came while a pass was running (its start logged, its end
    /// not).
    pub killed_mid_pass: usize,
}

/// The outcome of a run; [`Report::violations`] says whether it passed.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Cycles run (and per kind).
    pub cycles: usize,
    /// Cycles per kind: commits, ddl, splits, gc.
    pub cycles_by_kind: [usize; 4],
    /// Commits the server acknowledged.
    pub acknowledged: u64,
    /// Acknowledged commits found whole after the restart that followed them.
    pub verified: u64,
    /// Commits whose answer the kill took (present or not: both fine).
    pub in_doubt: u64,
    /// Of those, the ones that turned out to have happened.
    pub in_doubt_applied: u64,
    /// Acknowledged commits missing after a restart, counted once (must be 0).
    pub lost: u64,
    /// Commits found partly applied, plus rows whose `A` and `B` copies
    /// disagree (must be 0).
    pub half_applied: u64,
    /// Rows of `A` and entries of `AByWriter` that differ, summed over the
    /// checks (must be 0).
    pub index_mismatches: u64,
    /// Rows no commit wrote (must be 0).
    pub phantoms: u64,
    /// Transactions the server aborted (retried with new ids; not a fault).
    pub aborted: u64,
    /// Aborted commits whose rows exist anyway (must be 0).
    pub aborted_applied: u64,
    /// Errors other than aborts before the kill (must be 0).
    pub unexpected_errors: u64,
    /// The first few of them.
    pub error_samples: Vec<String>,
    /// The DDL cycles.
    pub ddl: DdlOutcomes,
    /// The garbage-collection cycles.
    pub gc: GcOutcomes,
    /// Rows in `A` at the end.
    pub rows: u64,
    /// Splits in `SPANNER_SYS.SPLITS` after a restart (split boundaries
    /// live in memory: a restart starts again from one split per table
    /// and index).
    pub splits_after_restart: i64,
    /// Most splits seen just before a kill, in the split cycles.
    pub max_splits_live: i64,
    /// Split cycles that had more splits than after a restart when killed.
    pub split_cycles_split: usize,
    /// How long restarts took: mean and max.
    pub restart_mean: Duration,
    /// Longest restart (SIGKILL to serving).
    pub restart_max: Duration,
    /// Seconds the backfill of `C` took when measured at setup.
    pub backfill: Duration,
    /// Whether the server stopped cleanly on SIGTERM at the end.
    pub clean_stop: bool,
    /// The whole run.
    pub elapsed: Duration,
    /// Where the data and the log are (kept after a failure).
    pub work_dir: PathBuf,
}

impl Report {
    /// Every broken promise, in words; empty when the run passed.
    pub fn violations(&self) -> Vec<String> {
        let mut v = Vec::new();
        let mut check = |n: u64, what: &str| {
            if n > 0 {
                v.push(format!("{n} {what}"));
            }
        };
        check(self.lost, "acknowledged commits lost");
        check(self.half_applied, "half-applied commits or rows");
        check(self.index_mismatches, "index entries disagreeing with A");
        check(self.phantoms, "rows no commit wrote");
        check(self.aborted_applied, "aborted commits applied anyway");
        check(self.unexpected_errors, "unexpected errors before a kill");
        check(self.ddl.retry_failures as u64, "failed DDL retries");
        check(self.ddl.index_mismatches, "CByV entries disagreeing with C");
        if self.verified != self.acknowledged {
            v.push(format!(
                "{} acknowledged commits but {} verified",
                self.acknowledged, self.verified
            ));
        }
        if !self.clean_stop {
            v.push("the server did not stop cleanly on SIGTERM".into());
        }
        v
    }

    /// The summary, one figure a line.
    pub fn summary(&self) -> String {
        let [c, d, s, g] = self.cycles_by_kind;
        format!(
            "kill check: {cycles} cycles ({c} commits, {d} ddl, {s} splits, {g} gc) in {elapsed:.1} s\n\
             commits acknowledged: {ack}\n\
             verified:             {verified}\n\
             lost:                 {lost}\n\
             half-applied:         {half}\n\
             index mismatches:     {idx}\n\
             phantom rows:         {phantoms}\n\
             in doubt at the kill: {doubt} ({applied} applied, {rolled} not)\n\
             aborted (retried):    {aborted} ({aborted_applied} applied anyway)\n\
             unexpected errors:    {errors}\n\
             ddl: backfill of C takes {backfill:.2} s; killed mid-backfill {mid}/{d}; \
             after restart index present {present}, absent {absent} (recreated); \
             retry failures {rf}; CByV mismatches {cm}\n\
             splits: {base} after a restart; more at the kill in {split_cycles}/{s} split cycles \
             (most: {live_splits})\n\
             gc: killed mid-pass in {gc_mid}/{g} gc cycles; {gc_started} passes started, \
             {gc_passes} finished removing {gc_versions} versions before the kills\n\
             rows in A: {rows}\n\
             restart (SIGKILL to serving): mean {rmean:.2} s, max {rmax:.2} s; \
             clean SIGTERM stop at the end: {clean}",
            cycles = self.cycles,
            elapsed = self.elapsed.as_secs_f64(),
            ack = self.acknowledged,
            verified = self.verified,
            lost = self.lost,
            half = self.half_applied,
            idx = self.index_mismatches,
            phantoms = self.phantoms,
            doubt = self.in_doubt,
            applied = self.in_doubt_applied,
            rolled = self.in_doubt - self.in_doubt_applied,
            aborted = self.aborted,
            aborted_applied = self.aborted_applied,
            errors = self.unexpected_errors,
            backfill = self.backfill.as_secs_f64(),
            mid = self.ddl.killed_mid_backfill,
            present = self.ddl.index_present,
            absent = self.ddl.index_absent,
            rf = self.ddl.retry_failures,
            cm = self.ddl.index_mismatches,
            rows = self.rows,
            base = self.splits_after_restart,
            split_cycles = self.split_cycles_split,
            live_splits = self.max_splits_live,
            gc_mid = self.gc.killed_mid_pass,
            gc_started = self.gc.passes_started,
            gc_passes = self.gc.passes_removing,
            gc_versions = self.gc.versions_removed,
            rmean = self.restart_mean.as_secs_f64(),
            rmax = self.restart_max.as_secs_f64(),
            clean = if self.clean_stop { "yes" } else { "NO" },
        )
    }
}

/// One commit a client sent: the ids it inserted, and whether the server
/// acknowledged it.
#[derive(Debug, Clone)]
struct CommitRecord {
    ids: Vec<i64>,
    acked: bool,
    /// The server answered ABORTED: it must not have happened.
    aborted: bool,
    /// The cycle it was sent in (an in-doubt commit is judged once, after
    /// that cycle's restart).
    cycle: usize,
}

/// What one client did in a cycle.
#[derive(Debug, Default)]
struct ClientOutcome {
    records: Vec<CommitRecord>,
    aborted: u64,
    errors: Vec<String>,
}

/// The rows read back after a restart.
struct Snapshot {
    /// `A`: id → (writer, payload).
    a: BTreeMap<i64, (Option<i64>, Option<String>)>,
    /// `B`: id → payload.
    b: BTreeMap<i64, Option<String>>,
    /// Index mismatches between `A` and `AByWriter` (SQL and Read paths).
    index_mismatches: u64,
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

impl Run {
    async fn all_cycles(&mut self) -> Result<()> {
        self.populate_c().await?;
        self.report.backfill = self.measure_backfill().await?;
        if self.config.verbose {
            eprintln!(
                "kill: C has {} rows; its index backfills in {:.2} s",
                self.config.backfill_rows,
                self.report.backfill.as_secs_f64()
            );
        }
        for cycle in 0..self.config.cycles {
            self.cycle(cycle).await?;
        }
        Ok(())
    }

    /// Fills `C` for the backfills: batches of 1,000 rows, 4 at a time.
    async fn populate_c(&mut self) -> Result<()> {
        let rows = self.config.backfill_rows as i64;
        let mut tasks = Vec::new();
        for t in 0..4i64 {
            let client = self.client.clone();
            let database = self.database.clone();
            tasks.push(tokio::spawn(async move {
                let session = client.create_session(&database).await?;
                let mut start = t * 1000;
                while start < rows {
                    let batch = (start..(start + 1000).min(rows))
                        .map(|id| {
                            vec![
                                Value::Int64(id),
                                Value::Int64(id.wrapping_mul(7919) % 100_003),
                                Value::String(format!("pad-{id:08}-{}", "c".repeat(40))),
                            ]
                        })
                        .collect();
                    client
                        .commit(
                            &session,
                            Selector::SingleUse(TxnMode::ReadWrite),
                            vec![insert("C", &["Id", "V", "Pad"], batch)],
                        )
                        .await?;
                    start += 4000;
                }
                client.delete_session(&session).await
            }));
        }
        for t in tasks {
            t.await
                .map_err(|e| Error::Protocol(format!("a loader task failed: {e}")))??;
        }
        Ok(())
    }

    /// Builds the index once, checks it, drops it: the time the DDL cycles
    /// aim their kills within.
    async fn measure_backfill(&mut self) -> Result<Duration> {
        let begun = Instant::now();
        self.client
            .update_ddl(&self.database, &[BACKFILL_DDL], Duration::from_secs(600))
            .await?;
        let took = begun.elapsed();
        let session = self.client.create_session(&self.database).await?;
        let mismatches = c_index_mismatches(&self.client, &session).await?;
        self.client.delete_session(&session).await?;
        if mismatches > 0 {
            self.report.ddl.index_mismatches += mismatches;
        }
        self.drop_c_index().await?;
        Ok(took)
    }

    /// Drops the DDL cycles' index, so the next DDL cycle creates it anew.
    async fn drop_c_index(&self) -> Result<()> {
        self.client
            .update_ddl(
                &self.database,
                &["DROP INDEX CByV"],
                Duration::from_secs(60),
            )
            .await
    }

    async fn cycle(&mut self, cycle: usize) -> Result<()> {
        let kind = CycleKind::of(cycle);
        self.use_gc_flags(kind == CycleKind::Gc).await?;
        self.report.cycles += 1;
        self.report.cycles_by_kind[kind as usize] += 1;
        let stop = Arc::new(AtomicBool::new(false));
        let acked = Arc::new(AtomicU64::new(0));
        let clients = self.config.clients;
        // Ids: cycle c's clients take (c+1)·10⁹ + n·clients + k (scattered
        // over [0, 2^29) in split cycles).
        let base = (cycle as i64 + 1) * 1_000_000_000;
        let mut tasks = Vec::new();
        for k in 0..clients {
            let client = self.server.client().await?;
            let session = client.create_session(&self.database).await?;
            let writer = Writer {
                client,
                session,
                k: k as i64,
                clients: clients as i64,
                base,
                cycle,
                kind,
                rng: StdRng::seed_from_u64(self.config.seed ^ ((cycle as u64) << 20) ^ k as u64),
                stop: stop.clone(),
                acked: acked.clone(),
            };
            tasks.push(tokio::spawn(writer.run()));
        }
        let c_writer = if kind == CycleKind::Ddl {
            let client = self.server.client().await?;
            let session = client.create_session(&self.database).await?;
            let writer = CWriter {
                client,
                session,
                rows: self.config.backfill_rows as i64,
                next_id: self.next_c_id,
                rng: StdRng::seed_from_u64(self.config.seed ^ 0xC0FFEE ^ cycle as u64),
                stop: stop.clone(),
            };
            self.next_c_id += 1_000_000;
            Some(tokio::spawn(writer.run()))
        } else {
            None
        };

        // Wait for the first acknowledgement, then pick the moment.
        let waiting = Instant::now();
        while acked.load(Ordering::Relaxed) == 0 {
            if waiting.elapsed() > Duration::from_secs(30) {
                stop.store(true, Ordering::Relaxed);
                return Err(Error::Timeout(format!(
                    "cycle {cycle}: no commit acknowledged within 30 s; log: {}",
                    self.server.log_tail()
                )));
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let ddl_done = Arc::new(AtomicBool::new(false));
        let ddl_task = if kind == CycleKind::Ddl {
            let client = self.client.clone();
            let database = self.database.clone();
            let done = ddl_done.clone();
            Some(tokio::spawn(async move {
                let r = client
                    .update_ddl(&database, &[BACKFILL_DDL], Duration::from_secs(600))
                    .await;
                if r.is_ok() {
                    done.store(true, Ordering::Relaxed);
                }
                r
            }))
        } else {
            None
        };
        let delay = if kind == CycleKind::Ddl {
            // Within the backfill: 10-90 % of the time it took at setup.
            self.report
                .backfill
                .mul_f64(self.rng.gen_range(0.1..0.9))
                .max(Duration::from_millis(50))
        } else {
            let (lo, hi) = self.config.kill_window;
            // Load splitting needs a split hot for a second, then a tick:
            // split cycles run twice as long.
            let stretch = if kind.rewrites() { 2.0 } else { 1.0 };
            Duration::from_secs_f64(
                self.rng.gen_range(lo.as_secs_f64()..hi.as_secs_f64()) * stretch,
            )
        };
        tokio::time::sleep(delay).await;
        // The split count right before the kill (the query takes a moment,
        // and the kill follows it).
        let live_splits = if kind == CycleKind::Splits {
            Some(self.split_count().await?)
        } else {
            None
        };

        // The crash: SIGKILL first, so commits are in flight, then tell the
        // clients to stop.
        let mid_backfill = !ddl_done.load(Ordering::Relaxed);
        let killed_at = Instant::now();
        self.server.kill()?;
        stop.store(true, Ordering::Relaxed);
        let mut gc_note = String::new();
        if kind == CycleKind::Gc {
            let log = std::fs::read_to_string(self.server.log_path()).unwrap_or_default();
            let seen = gc_log(&log);
            self.report.gc.passes_started += seen.passes_started;
            self.report.gc.passes_removing += seen.passes_removing;
            self.report.gc.versions_removed += seen.versions_removed;
            self.report.gc.killed_mid_pass += seen.killed_mid_pass;
            gc_note = format!(
                ", {} gc passes started, {} removed {} versions{}",
                seen.passes_started,
                seen.passes_removing,
                seen.versions_removed,
                if seen.killed_mid_pass > 0 {
                    ", killed mid-pass"
                } else {
                    ""
                }
            );
        }
        let mut outcomes = Vec::new();
        for t in tasks {
            outcomes.push(
                t.await
                    .map_err(|e| Error::Protocol(format!("a client task failed: {e}")))?,
            );
        }
        if let Some(t) = c_writer {
            let _ = t.await;
        }
        if let Some(t) = ddl_task {
            // Its answer is lost with the server; the schema tells.
            let _ = t.await;
        }
        let acked_now: u64 = outcomes
            .iter()
            .map(|o| o.records.iter().filter(|r| r.acked).count() as u64)
            .sum();
        for o in outcomes {
            self.report.aborted += o.aborted;
            self.report.unexpected_errors += o.errors.len() as u64;
            for e in o.errors {
                if self.report.error_samples.len() < 10 {
                    self.report
                        .error_samples
                        .push(format!("cycle {cycle}: {e}"));
                }
            }
            self.records.extend(o.records);
        }
        self.report.acknowledged += acked_now;

        if kind == CycleKind::Gc {
            // Verify on a server with the usual retention: the check's own
            // snapshot reads take longer than the one second GC_FLAGS keep.
            self.server
                .set_args(SPLIT_FLAGS.iter().map(|s| s.to_string()).collect());
            self.gc_flags_on = false;
        }
        self.server.restart().await?;
        self.restarts.push(killed_at.elapsed());
        self.client = self.server.client().await?;

        let cycle_lost_before = self.report.lost;
        let cycle_half_before = self.report.half_applied;
        let cycle_idx_before = self.report.index_mismatches;
        self.verify(cycle).await?;
        let mut ddl_note = String::new();
        if kind == CycleKind::Ddl {
            if mid_backfill {
                self.report.ddl.killed_mid_backfill += 1;
            }
            ddl_note = self.after_ddl_kill().await?;
            ddl_note = format!(
                ", backfill {}: {ddl_note}",
                if mid_backfill { "running" } else { "done" }
            );
        }
        let splits = self.split_count().await?;
        self.report.splits_after_restart = splits;
        let mut split_note = String::new();
        if let Some(live) = live_splits {
            self.report.max_splits_live = self.report.max_splits_live.max(live);
            if live > splits {
                self.report.split_cycles_split += 1;
            }
            split_note = format!(", {live} splits at the kill");
        }
        if self.config.verbose {
            eprintln!(
                "cycle {}/{} [{}]: {acked_now} acked, killed at {:.2} s{split_note}{ddl_note}{gc_note}, \
                 restart {:.2} s, {} rows, {splits} splits; lost {} half {} index {}",
                cycle + 1,
                self.config.cycles,
                kind.name(),
                delay.as_secs_f64(),
                self.restarts.last().map_or(0.0, Duration::as_secs_f64),
                self.report.rows,
                self.report.lost - cycle_lost_before,
                self.report.half_applied - cycle_half_before,
                self.report.index_mismatches - cycle_idx_before,
            );
        }
        Ok(())
    }

    /// Restarts the server (cleanly) with or without [`GC_FLAGS`] when that
    /// changes.
    async fn use_gc_flags(&mut self, on: bool) -> Result<()> {
        if on == self.gc_flags_on {
            return Ok(());
        }
        let mut args: Vec<String> = SPLIT_FLAGS.iter().map(|s| s.to_string()).collect();
        if on {
            args.extend(GC_FLAGS.iter().map(|s| s.to_string()));
        }
        self.server.stop().await?;
        self.server.set_args(args);
        self.server.restart().await?;
        self.client = self.server.client().await?;
        self.gc_flags_on = on;
        Ok(())
    }

    /// Reads everything back and judges every commit sent so far.
    async fn verify(&mut self, cycle: usize) -> Result<()> {
        let session = self.client.create_session(&self.database).await?;
        let snap = snapshot(&self.client, &session).await?;
        self.client.delete_session(&session).await?;
        self.report.rows = snap.a.len() as u64;
        self.report.index_mismatches += snap.index_mismatches;

        let mut written = BTreeSet::new();
        for (i, r) in self.records.iter().enumerate() {
            let in_a = r.ids.iter().filter(|id| snap.a.contains_key(id)).count();
            let in_b = r.ids.iter().filter(|id| snap.b.contains_key(id)).count();
            let whole = in_a == r.ids.len() && in_b == r.ids.len();
            let none = in_a == 0 && in_b == 0;
            written.extend(r.ids.iter().copied());
            if r.cycle == cycle {
                if !whole && !none {
                    self.report.half_applied += 1;
                }
                if r.acked {
                    if whole {
                        self.report.verified += 1;
                    }
                } else if r.aborted {
                    if !none {
                        self.report.aborted_applied += 1;
                    }
                } else {
                    self.report.in_doubt += 1;
                    if whole {
                        self.report.in_doubt_applied += 1;
                    }
                }
            }
            if r.acked && !whole && self.lost.insert(i) {
                self.report.lost += 1;
            }
        }
        // Rows whose two copies disagree: an update applied to one table only.
        for (id, (_, payload)) in &snap.a {
            if snap.b.get(id).is_some_and(|p| p != payload) {
                self.report.half_applied += 1;
            }
        }
        let phantoms = snap
            .a
            .keys()
            .chain(snap.b.keys())
            .filter(|id| !written.contains(id))
            .collect::<BTreeSet<_>>()
            .len();
        // Counted fresh each cycle: report the latest count.
        self.report.phantoms = phantoms as u64;
        Ok(())
    }

    /// After a kill during `CREATE INDEX CByV`: the index is either whole
    /// or absent; an absent one must build on retry. Either way it is
    /// dropped again for the next DDL cycle.
    async fn after_ddl_kill(&mut self) -> Result<String> {
        let ddl = self.client.get_ddl(&self.database).await?;
        let present = ddl.iter().any(|s| s.contains("CByV"));
        let session = self.client.create_session(&self.database).await?;
        let note;
        if present {
            self.report.ddl.index_present += 1;
            let m = c_index_mismatches(&self.client, &session).await?;
            self.report.ddl.index_mismatches += m;
            note = format!("index present, {m} mismatches");
        } else {
            self.report.ddl.index_absent += 1;
            match self
                .client
                .update_ddl(&self.database, &[BACKFILL_DDL], Duration::from_secs(600))
                .await
            {
                Ok(()) => {
                    let m = c_index_mismatches(&self.client, &session).await?;
                    self.report.ddl.index_mismatches += m;
                    note = format!("index absent, recreated, {m} mismatches");
                }
                Err(e) => {
                    self.report.ddl.retry_failures += 1;
                    if self.report.error_samples.len() < 10 {
                        self.report.error_samples.push(format!("DDL retry: {e}"));
                    }
                    note = format!("index absent, retry FAILED: {e}");
                }
            }
        }
        self.client.delete_session(&session).await?;
        if self
            .client
            .get_ddl(&self.database)
            .await?
            .iter()
            .any(|s| s.contains("CByV"))
        {
            self.drop_c_index().await?;
        }
        Ok(note)
    }

    async fn split_count(&self) -> Result<i64> {
        let session = self.client.create_session(&self.database).await?;
        let n = self
            .client
            .execute_sql(
                &session,
                &Statement::new("SELECT COUNT(*) FROM SPANNER_SYS.SPLITS"),
                Selector::strong(),
            )
            .await?
            .single_int()?;
        self.client.delete_session(&session).await?;
        Ok(n)
    }
}

/// `A`, `B`, and `A` through its index, in one read-only snapshot.
async fn snapshot(client: &Client, session: &str) -> Result<Snapshot> {
    let txn = client.begin(session, TxnMode::ReadOnlyStrong).await?;
    let at = || Selector::Id(txn.clone());
    let a_rows = client
        .streaming_read(
            session,
            "A",
            None,
            &["Id", "Writer", "Payload"],
            &KeySet::All,
            at(),
        )
        .await?;
    let b_rows = client
        .streaming_read(session, "B", None, &["Id", "Payload"], &KeySet::All, at())
        .await?;
    let by_sql = client
        .execute_streaming_sql(
            session,
            &Statement::new("SELECT Id, Writer FROM A@{FORCE_INDEX=AByWriter}"),
            at(),
        )
        .await?;
    let by_read = client
        .streaming_read(
            session,
            "A",
            Some("AByWriter"),
            &["Id", "Writer"],
            &KeySet::All,
            at(),
        )
        .await?;
    let text = |v: &Value| v.as_str().map(str::to_string);
    let mut a = BTreeMap::new();
    for r in &a_rows.rows {
        if let Some(id) = r[0].as_i64() {
            a.insert(id, (r[1].as_i64(), text(&r[2])));
        }
    }
    let mut b = BTreeMap::new();
    for r in &b_rows.rows {
        if let Some(id) = r[0].as_i64() {
            b.insert(id, text(&r[1]));
        }
    }
    let table: BTreeSet<(i64, Option<i64>)> = a.iter().map(|(id, (w, _))| (*id, *w)).collect();
    let pairs = |rs: &crate::client::ResultSet| -> BTreeSet<(i64, Option<i64>)> {
        rs.rows
            .iter()
            .filter_map(|r| Some((r[0].as_i64()?, r[1].as_i64())))
            .collect()
    };
    let index_mismatches = [pairs(&by_sql), pairs(&by_read)]
        .iter()
        .map(|idx| table.symmetric_difference(idx).count() as u64)
        .sum::<u64>()
        // Duplicated entries would vanish in a set: compare counts too.
        + by_sql.rows.len().abs_diff(a.len()) as u64
        + by_read.rows.len().abs_diff(a.len()) as u64;
    Ok(Snapshot {
        a,
        b,
        index_mismatches,
    })
}

/// Rows of `C` and entries of `CByV` that differ.
async fn c_index_mismatches(client: &Client, session: &str) -> Result<u64> {
    let txn = client.begin(session, TxnMode::ReadOnlyStrong).await?;
    let table = client
        .streaming_read(
            session,
            "C",
            None,
            &["Id", "V"],
            &KeySet::All,
            Selector::Id(txn.clone()),
        )
        .await?;
    let index = client
        .execute_streaming_sql(
            session,
            &Statement::new("SELECT Id, V FROM C@{FORCE_INDEX=CByV}"),
            Selector::Id(txn),
        )
        .await?;
    let set = |rs: &crate::client::ResultSet| -> BTreeSet<(Option<i64>, Option<i64>)> {
        rs.rows
            .iter()
            .map(|r| (r[0].as_i64(), r[1].as_i64()))
            .collect()
    };
    Ok(
        set(&table).symmetric_difference(&set(&index)).count() as u64
            + table.rows.len().abs_diff(index.rows.len()) as u64,
    )
}

/// A committing client (see the module docs).
struct Writer {
    client: Client,
    session: String,
    k: i64,
    clients: i64,
    base: i64,
    cycle: usize,
    kind: CycleKind,
    rng: StdRng,
    stop: Arc<AtomicBool>,
    acked: Arc<AtomicU64>,
}

/// Rows inserted per commit in split cycles.
const BIG_COMMIT: usize = 25;
/// Earlier rows rewritten per commit in split cycles.
const REWRITES: usize = 5;

impl Writer {
    async fn run(mut self) -> ClientOutcome {
        let mut out = ClientOutcome::default();
        let mut n: i64 = 0;
        // This client's acknowledged ids, for rewrites.
        let mut mine: Vec<i64> = Vec::new();
        let mut attempt: u64 = 0;
        while !self.stop.load(Ordering::Relaxed) {
            let count = if self.kind.rewrites() { BIG_COMMIT } else { 1 };
            let ids: Vec<i64> = (0..count as i64)
                .map(|i| {
                    let seq = (n + i) * self.clients + self.k;
                    if self.kind.rewrites() {
                        self.base + scatter(seq)
                    } else {
                        self.base + seq
                    }
                })
                .collect();
            n += count as i64;
            let rewrites: Vec<i64> = if self.kind.rewrites() && !mine.is_empty() {
                (0..REWRITES)
                    .map(|_| mine[self.rng.gen_range(0..mine.len())])
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect()
            } else {
                Vec::new()
            };
            out.records.push(CommitRecord {
                ids: ids.clone(),
                acked: false,
                aborted: false,
                cycle: self.cycle,
            });
            attempt += 1;
            let call = self.commit(&ids, &rewrites, attempt);
            let result = match tokio::time::timeout(Duration::from_secs(30), call).await {
                Ok(r) => r,
                Err(_) => Err(Error::Timeout("a commit took over 30 s".into())),
            };
            match result {
                Ok(()) => {
                    if let Some(r) = out.records.last_mut() {
                        r.acked = true;
                    }
                    mine.extend(&ids);
                    self.acked.fetch_add(1, Ordering::Relaxed);
                }
                Err(e) if e.is_aborted() => {
                    out.aborted += 1;
                    if let Some(r) = out.records.last_mut() {
                        r.aborted = true;
                    }
                }
                // After the kill every call fails; those are expected.
                Err(_) if self.stop.load(Ordering::Relaxed) => break,
                Err(e) if e.is_unavailable() => {
                    // The kill came before the stop flag: expected too.
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(e) => {
                    out.errors.push(e.to_string());
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
        }
        out
    }

    fn payload(&self, id: i64) -> String {
        format!("p-{id}-{}", "x".repeat((id % 50) as usize))
    }

    /// One commit through the path `attempt` selects.
    async fn commit(&mut self, ids: &[i64], rewrites: &[i64], attempt: u64) -> Result<()> {
        let c = &self.client;
        let s = self.session.as_str();
        let rows_a: Vec<Vec<Value>> = ids
            .iter()
            .map(|&id| vec![id.into(), self.k.into(), self.payload(id).into()])
            .collect();
        let rows_b: Vec<Vec<Value>> = ids
            .iter()
            .map(|&id| vec![id.into(), self.payload(id).into()])
            .collect();
        let ins_a = || insert("A", &["Id", "Writer", "Payload"], rows_a.clone());
        let ins_b = || insert("B", &["Id", "Payload"], rows_b.clone());
        if self.kind.rewrites() {
            // Rewrites move index entries: Writer becomes k + 1000·attempt%3.
            let writer = self.k + 1000 * (attempt % 3) as i64;
            let text = |id: i64| format!("u{attempt}-{id}");
            if attempt % 2 == 0 {
                let mut m = vec![ins_a(), ins_b()];
                if !rewrites.is_empty() {
                    m.push(insert_or_update(
                        "A",
                        &["Id", "Writer", "Payload"],
                        rewrites
                            .iter()
                            .map(|&id| vec![id.into(), writer.into(), text(id).into()])
                            .collect(),
                    ));
                    m.push(insert_or_update(
                        "B",
                        &["Id", "Payload"],
                        rewrites
                            .iter()
                            .map(|&id| vec![id.into(), text(id).into()])
                            .collect(),
                    ));
                }
                c.commit(s, Selector::SingleUse(TxnMode::ReadWrite), m)
                    .await?;
            } else {
                let txn = c.begin(s, TxnMode::ReadWrite).await?;
                let mut seq = 0;
                for &id in rewrites {
                    for sql in [
                        "UPDATE A SET Writer = @w, Payload = @p WHERE Id = @id",
                        "UPDATE B SET Payload = @p WHERE Id = @id",
                    ] {
                        seq += 1;
                        let st = Statement::new(sql)
                            .param("id", id)
                            .param("w", writer)
                            .param("p", text(id));
                        c.execute_sql_seq(s, &st, Selector::Id(txn.clone()), seq)
                            .await?;
                    }
                }
                c.commit(s, Selector::Id(txn), vec![ins_a(), ins_b()])
                    .await?;
            }
            return Ok(());
        }
        let id = ids[0];
        let insert_a = Statement::new("INSERT INTO A (Id, Writer, Payload) VALUES (@id, @w, @p)")
            .param("id", id)
            .param("w", self.k)
            .param("p", self.payload(id));
        let insert_b = Statement::new("INSERT INTO B (Id, Payload) VALUES (@id, @p)")
            .param("id", id)
            .param("p", self.payload(id));
        match attempt % 4 {
            // Mutations in a single-use transaction.
            0 => {
                c.commit(
                    s,
                    Selector::SingleUse(TxnMode::ReadWrite),
                    vec![ins_a(), ins_b()],
                )
                .await?;
            }
            // BeginTransaction, then Commit with mutations.
            1 => {
                let txn = c.begin(s, TxnMode::ReadWrite).await?;
                c.commit(s, Selector::Id(txn), vec![ins_a(), ins_b()])
                    .await?;
            }
            // BeginTransaction, DML for A, mutation for B.
            2 => {
                let txn = c.begin(s, TxnMode::ReadWrite).await?;
                let r = c
                    .execute_sql_seq(s, &insert_a, Selector::Id(txn.clone()), 1)
                    .await?;
                expect_one(&r)?;
                c.commit(s, Selector::Id(txn), vec![ins_b()]).await?;
            }
            // Inline begin with DML for B, DML for A, Commit alone.
            _ => {
                let r = c
                    .execute_sql_seq(s, &insert_b, Selector::Begin(TxnMode::ReadWrite), 1)
                    .await?;
                expect_one(&r)?;
                let txn = r
                    .transaction_id
                    .ok_or_else(|| Error::Protocol("inline begin returned no id".into()))?;
                let r = c
                    .execute_sql_seq(s, &insert_a, Selector::Id(txn.clone()), 2)
                    .await?;
                expect_one(&r)?;
                c.commit(s, Selector::Id(txn), Vec::<pb::Mutation>::new())
                    .await?;
            }
        }
        Ok(())
    }
}

/// The garbage-collection passes of the last server process in `log` (the
/// lines after its last start marker): passes that removed versions, how
/// many, and whether the last pass had started without ending (the kill
/// came in the middle of it).
fn gc_log(log: &str) -> GcOutcomes {
    let last_start = log.rfind("=== rowtree-check: start").unwrap_or(0);
    let mut out = GcOutcomes::default();
    let mut open = false;
    for line in log[last_start..].lines() {
        if line.contains("gc pass started") {
            open = true;
            out.passes_started += 1;
        } else if line.contains("gc pass ended") {
            open = false;
            let removed = line
                .split_whitespace()
                .find_map(|w| w.strip_prefix("removed="))
                .and_then(|n| n.parse::<u64>().ok());
            if let Some(n) = removed {
                out.passes_removing += 1;
                out.versions_removed += n;
            }
        }
    }
    out.killed_mid_pass = usize::from(open);
    out
}

/// A bijection of `[0, 2^29)` onto itself that spreads consecutive numbers
/// over the range (multiplication by an odd constant, then an xor-shift,
/// both invertible modulo 2^29). Split cycles insert at scattered keys so
/// the load has a key that divides it (sequential keys are a moving hot
/// spot, which the split policy rightly refuses to split); the ids stay
/// disjoint because `seq` is.
fn scatter(seq: i64) -> i64 {
    const MASK: u64 = (1 << 29) - 1;
    let x = (seq as u64).wrapping_mul(0x9E37_79B1) & MASK;
    ((x ^ (x >> 13)) & MASK) as i64
}

fn expect_one(r: &crate::client::ResultSet) -> Result<()> {
    match r.row_count {
        Some(1) => Ok(()),
        other => Err(Error::Protocol(format!(
            "an INSERT of one row reported {other:?}"
        ))),
    }
}

/// The DDL cycles' writer into `C`: changes `V` of random rows and adds
/// rows while the index backfills.
struct CWriter {
    client: Client,
    session: String,
    rows: i64,
    next_id: i64,
    rng: StdRng,
    stop: Arc<AtomicBool>,
}

impl CWriter {
    async fn run(mut self) {
        while !self.stop.load(Ordering::Relaxed) {
            let mut rows = Vec::new();
            for _ in 0..5 {
                let id = self.rng.gen_range(0..self.rows);
                rows.push(vec![
                    Value::Int64(id),
                    Value::Int64(self.rng.gen_range(0..100_003)),
                ]);
            }
            rows.push(vec![
                Value::Int64(self.next_id),
                Value::Int64(self.rng.gen_range(0..100_003)),
            ]);
            self.next_id += 1;
            let m = vec![insert_or_update("C", &["Id", "V"], rows)];
            let call =
                self.client
                    .commit(&self.session, Selector::SingleUse(TxnMode::ReadWrite), m);
            if tokio::time::timeout(Duration::from_secs(30), call)
                .await
                .map_or(true, |r| r.is_err())
            {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scatter_is_a_bijection_that_spreads() {
        let out: BTreeSet<i64> = (0..100_000).map(scatter).collect();
        assert_eq!(out.len(), 100_000);
        assert!(out.iter().all(|x| (0..1 << 29).contains(x)));
        // Consecutive numbers land far apart.
        assert!((scatter(1) - scatter(0)).abs() > 1 << 20);
    }

    #[test]
    fn kinds_rotate() {
        let kinds: Vec<_> = (0..5).map(CycleKind::of).collect();
        assert_eq!(
            kinds,
            [
                CycleKind::Commits,
                CycleKind::Ddl,
                CycleKind::Splits,
                CycleKind::Gc,
                CycleKind::Commits
            ]
        );
    }

    #[test]
    fn gc_log_reads_the_last_process_only() {
        let log = "\
=== rowtree-check: start 1 on 127.0.0.1:1 ===
x DEBUG rowtree_db::gc: gc pass started horizon=1
x  INFO rowtree_db::gc: gc pass ended removed=99 examined=200 ms=1.0
=== rowtree-check: start 2 on 127.0.0.1:1 ===
x DEBUG rowtree_db::gc: gc pass started horizon=2
x  INFO rowtree_db::gc: gc pass ended removed=7 examined=20 ms=1.0
x DEBUG rowtree_db::gc: gc pass started horizon=3
x DEBUG rowtree_db::gc: gc pass ended examined=20 ms=1.0
x DEBUG rowtree_db::gc: gc pass started horizon=4
";
        let seen = gc_log(log);
        assert_eq!(
            seen,
            GcOutcomes {
                passes_started: 3,
                passes_removing: 1,
                versions_removed: 7,
                killed_mid_pass: 1
            }
        );
        let ended = gc_log(&log[..log.rfind("x DEBUG").unwrap()]);
        assert_eq!(ended.killed_mid_pass, 0);
    }
}
