//! The soak check: many sessions, mixed work, minutes on end.
//!
//! Hundreds of concurrent sessions each loop over a mix of what
//! applications do ([`Op`]): point reads, small queries, read-write
//! transfers between accounts (DML, a mutation, a commit), streaming
//! queries, read-only transactions, and transactions rolled back. Every
//! interval (10 s by default) the check records the server's resident set
//! size, the throughput and the latency percentiles, and at the end it
//! checks that
//!
//! * no operation hung: each finishes within the operation timeout;
//! * no operation failed except with ABORTED (wound-wait's retry signal);
//! * money is conserved: every `SUM(Balance)` a strong query saw equals the
//!   total the accounts started with (a commit applied in part, or a
//!   rolled-back transfer leaking through, would change it);
//! * no session leaked: `ListSessions` shows exactly the sessions the
//!   check holds, and none once it has deleted them;
//!
//! and reports how the RSS grew from the first minute to the last, and over
//! the second half of the run. The second figure is the one that says
//! whether memory is flat: the write buffers (memtables) and the block
//! cache fill up first, by design, to their configured limits
//! (`rowtree serve --memtable-mib`, `--cache-mib`), so a run that writes
//! grows until they are full.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;

use crate::client::{Client, Selector, Statement, TxnMode};
use crate::error::{Error, Result};
use crate::latency::{self, Recorder, Summary};
use crate::server::{self, Server, WorkDir};
use crate::wire::{insert, KeySet, Value};

/// The schema: accounts with an index on their names, and their transfers
/// interleaved under them.
pub const SCHEMA: &[&str] = &[
    "CREATE TABLE Accounts (Id INT64 NOT NULL, Balance INT64 NOT NULL, Name STRING(64)) PRIMARY KEY (Id)",
    "CREATE INDEX AccountsByName ON Accounts(Name)",
    "CREATE TABLE Transfers (Id INT64 NOT NULL, Seq INT64 NOT NULL, Amount INT64, Other INT64) \
     PRIMARY KEY (Id, Seq), INTERLEAVE IN PARENT Accounts ON DELETE CASCADE",
];

/// Each account's starting balance.
const START_BALANCE: i64 = 1_000;

/// What the check runs.
#[derive(Debug, Clone)]
pub struct Config {
    /// The `rowtree` binary.
    pub binary: PathBuf,
    /// More `rowtree serve` flags (e.g. `--memtable-mib 8`).
    pub server_args: Vec<String>,
    /// Concurrent sessions, each driven by its own task.
    pub sessions: usize,
    /// How long the load runs.
    pub duration: Duration,
    /// Sampling interval.
    pub interval: Duration,
    /// An operation taking longer than this is stuck.
    pub op_timeout: Duration,
    /// Accounts loaded before the load starts.
    pub accounts: i64,
    /// Seeds the workload.
    pub seed: u64,
    /// Where the data directory and the server log go; a fresh temporary
    /// directory when `None` (removed after a passing run).
    pub work_dir: Option<PathBuf>,
    /// Weights of the operations, in [`Op::MIX`] order.
    pub mix: [u32; 6],
    /// Print each interval on standard error as it ends.
    pub verbose: bool,
}

impl Config {
    /// Defaults: 10 s intervals, 30 s operation timeout, 10,000 accounts.
    pub fn new(binary: impl Into<PathBuf>, sessions: usize, duration: Duration) -> Config {
        Config {
            binary: binary.into(),
            server_args: Vec::new(),
            sessions,
            duration,
            interval: Duration::from_secs(10),
            op_timeout: Duration::from_secs(30),
            accounts: 10_000,
            seed: 1,
            work_dir: None,
            mix: Op::MIX.map(|(_, w)| w),
            verbose: true,
        }
    }
}

/// The operations in the mix, with their weights (percent).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// Read one account by key (Read, single-use strong).
    PointRead,
    /// A small range query (ExecuteSql).
    SmallQuery,
    /// A transfer: two UPDATEs (inline begin), a mutation, Commit.
    Transfer,
    /// A streaming query: the sum of all balances, checked; or names
    /// through the index.
    StreamingQuery,
    /// A read-only transaction: two reads at one timestamp.
    ReadOnlyTxn,
    /// A transfer begun and rolled back.
    Rollback,
}

impl Op {
    /// Every operation with its weight in the mix.
    pub const MIX: [(Op, u32); 6] = [
        (Op::PointRead, 30),
        (Op::SmallQuery, 20),
        (Op::Transfer, 30),
        (Op::StreamingQuery, 8),
        (Op::ReadOnlyTxn, 7),
        (Op::Rollback, 5),
    ];

    /// The operation's name in reports and in `--mix`.
    pub fn name(self) -> &'static str {
        match self {
            Op::PointRead => "point_read",
            Op::SmallQuery => "small_query",
            Op::Transfer => "transfer",
            Op::StreamingQuery => "streaming_query",
            Op::ReadOnlyTxn => "read_only_txn",
            Op::Rollback => "rollback",
        }
    }

    /// Weights from `name=weight,...`; operations not named get 0.
    pub fn parse_mix(text: &str) -> std::result::Result<[u32; 6], String> {
        let mut weights = [0; 6];
        for part in text.split(',').filter(|p| !p.trim().is_empty()) {
            let (name, w) = part
                .split_once('=')
                .ok_or_else(|| format!("`{part}`: expected name=weight"))?;
            let k = Op::MIX
                .iter()
                .position(|(op, _)| op.name() == name.trim())
                .ok_or_else(|| format!("unknown operation `{}`", name.trim()))?;
            weights[k] = w
                .trim()
                .parse()
                .map_err(|_| format!("`{w}`: not a weight"))?;
        }
        if weights.iter().all(|w| *w == 0) {
            return Err("every weight is 0".into());
        }
        Ok(weights)
    }

    fn pick(weights: &[u32; 6], rng: &mut StdRng) -> usize {
        let total: u32 = weights.iter().sum();
        let mut x = rng.gen_range(0..total.max(1));
        for (k, w) in weights.iter().enumerate() {
            if x < *w {
                return k;
            }
            x -= w;
        }
        0
    }
}

/// One sampling interval.
#[derive(Debug, Clone, Serialize)]
pub struct Interval {
    /// Seconds since the load started, at the interval's end.
    pub t_s: f64,
    /// Operations finished in the interval.
    pub ops: u64,
    /// Operations per second.
    pub ops_per_s: f64,
    /// Latency percentiles of the interval's operations.
    pub latency: Summary,
    /// Transactions aborted in the interval.
    pub aborted: u64,
    /// Other errors in the interval.
    pub errors: u64,
    /// The server's RSS at the interval's end, KiB.
    pub rss_kib: u64,
}

/// Per-operation totals.
#[derive(Debug, Clone, Serialize)]
pub struct OpTotals {
    /// The operation.
    pub op: Op,
    /// How many finished (successfully or aborted).
    pub count: u64,
    /// Of those, aborted.
    pub aborted: u64,
    /// Latency over the whole run.
    pub latency: Summary,
}

/// The outcome of a run; [`Report::violations`] says whether it passed.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Sessions driven.
    pub sessions: usize,
    /// Seconds of load.
    pub duration_s: f64,
    /// The intervals.
    pub intervals: Vec<Interval>,
    /// Per-operation totals.
    pub ops: Vec<OpTotals>,
    /// All operations.
    pub total_ops: u64,
    /// Latency over the whole run.
    pub latency: Summary,
    /// Operations that did not finish within the timeout (must be 0).
    pub stuck: u64,
    /// Aborted transactions (expected under contention).
    pub aborted: u64,
    /// Errors other than ABORTED (must be 0).
    pub errors: u64,
    /// The first few errors.
    pub error_samples: Vec<String>,
    /// Balance sums that differed from the starting total (must be 0).
    pub sum_violations: u64,
    /// Balance sums checked.
    pub sums_checked: u64,
    /// Sessions the check held before cleaning up.
    pub sessions_held: usize,
    /// Sessions `ListSessions` showed then (must equal `sessions_held`).
    pub sessions_listed: usize,
    /// Sessions `ListSessions` showed after the check deleted its own (must be 0).
    pub sessions_after_delete: usize,
    /// Mean RSS over the first minute (or first third of a shorter run), KiB.
    pub rss_first_kib: u64,
    /// Mean RSS over the last minute (or last third), KiB.
    pub rss_last_kib: u64,
    /// RSS right after loading, before the sessions started, KiB.
    pub rss_loaded_kib: u64,
    /// RSS at the sample nearest the middle of the run, KiB: growth from
    /// here to the end is what is left once the write buffers and the
    /// block cache have filled (they grow by design until their limits).
    pub rss_mid_kib: u64,
    /// RSS at the last sample, KiB.
    pub rss_end_kib: u64,
    /// Seconds between the middle sample and the last.
    pub second_half_s: f64,
    /// Whether the server stopped cleanly on SIGTERM at the end.
    pub clean_stop: bool,
    /// Where the data and the log are (kept after a failure).
    pub work_dir: PathBuf,
}

impl Report {
    /// Every broken promise, in words; empty when the run passed.
    pub fn violations(&self) -> Vec<String> {
        let mut v = Vec::new();
        if self.stuck > 0 {
            v.push(format!("{} operations stuck past the timeout", self.stuck));
        }
        if self.errors > 0 {
            v.push(format!("{} operations failed (not ABORTED)", self.errors));
        }
        if self.sum_violations > 0 {
            v.push(format!(
                "{} balance sums differed from the total",
                self.sum_violations
            ));
        }
        if self.sessions_listed != self.sessions_held {
            v.push(format!(
                "ListSessions showed {} sessions while the check held {}",
                self.sessions_listed, self.sessions_held
            ));
        }
        if self.sessions_after_delete != 0 {
            v.push(format!(
                "{} sessions left after deleting them all",
                self.sessions_after_delete
            ));
        }
        if !self.clean_stop {
            v.push("the server did not stop cleanly on SIGTERM".into());
        }
        v
    }

    /// RSS growth from the first to the last minute, percent.
    pub fn rss_growth_pct(&self) -> f64 {
        if self.rss_first_kib == 0 {
            return 0.0;
        }
        (self.rss_last_kib as f64 / self.rss_first_kib as f64 - 1.0) * 100.0
    }

    /// RSS growth over the second half of the run, percent.
    pub fn rss_second_half_pct(&self) -> f64 {
        if self.rss_mid_kib == 0 {
            return 0.0;
        }
        (self.rss_end_kib as f64 / self.rss_mid_kib as f64 - 1.0) * 100.0
    }

    /// RSS growth over the second half of the run, MiB per minute.
    pub fn rss_second_half_mib_per_min(&self) -> f64 {
        if self.second_half_s <= 0.0 {
            return 0.0;
        }
        (self.rss_end_kib as f64 - self.rss_mid_kib as f64) / 1024.0 / (self.second_half_s / 60.0)
    }

    /// The intervals as a table, then the totals.
    pub fn table(&self) -> String {
        let mut s = String::new();
        s.push_str(
            "   t(s)      ops    ops/s   p50 ms   p99 ms   max ms  aborted  errors  RSS MiB\n",
        );
        for i in &self.intervals {
            s.push_str(&format!(
                "{:7.0} {:8} {:8.0} {:8.2} {:8.2} {:8.1} {:8} {:7} {:8.1}\n",
                i.t_s,
                i.ops,
                i.ops_per_s,
                i.latency.p50_ms,
                i.latency.p99_ms,
                i.latency.max_ms,
                i.aborted,
                i.errors,
                i.rss_kib as f64 / 1024.0
            ));
        }
        s.push_str("\n  operation          count  aborted   p50 ms   p99 ms   max ms\n");
        for o in &self.ops {
            s.push_str(&format!(
                "  {:<16} {:8} {:8} {:8.2} {:8.2} {:8.1}\n",
                o.op.name(),
                o.count,
                o.aborted,
                o.latency.p50_ms,
                o.latency.p99_ms,
                o.latency.max_ms
            ));
        }
        s.push_str(&format!(
            "\nsoak: {} sessions for {:.0} s: {} operations ({:.0}/s), p50 {:.2} ms, p99 {:.2} ms, max {:.1} ms\n\
             stuck: {}; errors: {}; aborted: {}; balance sums checked: {} (wrong: {})\n\
             sessions: held {}, listed {}, after delete {} (leaked: {})\n\
             RSS: loaded {:.1} MiB; first minute {:.1} MiB, last minute {:.1} MiB ({:+.1} %); \
             second half {:.1} -> {:.1} MiB ({:+.1} %, {:+.2} MiB/min); clean SIGTERM stop: {}",
            self.sessions,
            self.duration_s,
            self.total_ops,
            self.total_ops as f64 / self.duration_s.max(1e-9),
            self.latency.p50_ms,
            self.latency.p99_ms,
            self.latency.max_ms,
            self.stuck,
            self.errors,
            self.aborted,
            self.sums_checked,
            self.sum_violations,
            self.sessions_held,
            self.sessions_listed,
            self.sessions_after_delete,
            self.sessions_after_delete,
            self.rss_loaded_kib as f64 / 1024.0,
            self.rss_first_kib as f64 / 1024.0,
            self.rss_last_kib as f64 / 1024.0,
            self.rss_growth_pct(),
            self.rss_mid_kib as f64 / 1024.0,
            self.rss_end_kib as f64 / 1024.0,
            self.rss_second_half_pct(),
            self.rss_second_half_mib_per_min(),
            if self.clean_stop { "yes" } else { "NO" },
        ));
        s
    }

    /// The report as JSON, with the violations.
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self).unwrap_or_default();
        if let Some(o) = v.as_object_mut() {
            o.insert("violations".into(), serde_json::json!(self.violations()));
            o.insert(
                "rss_growth_pct".into(),
                serde_json::json!(self.rss_growth_pct()),
            );
            o.insert(
                "rss_second_half_pct".into(),
                serde_json::json!(self.rss_second_half_pct()),
            );
            o.insert(
                "rss_second_half_mib_per_min".into(),
                serde_json::json!(self.rss_second_half_mib_per_min()),
            );
        }
        v
    }

    /// RSS and throughput over time as a small SVG chart.
    pub fn svg(&self) -> String {
        let (w, h, pad) = (720.0, 320.0, 50.0);
        let t_max = self.intervals.last().map_or(1.0, |i| i.t_s).max(1.0);
        let rss_max = self
            .intervals
            .iter()
            .map(|i| i.rss_kib as f64 / 1024.0)
            .fold(1.0, f64::max);
        let ops_max = self
            .intervals
            .iter()
            .map(|i| i.ops_per_s)
            .fold(1.0, f64::max);
        let line = |f: &dyn Fn(&Interval) -> f64, max: f64| -> String {
            self.intervals
                .iter()
                .map(|i| {
                    format!(
                        "{:.1},{:.1}",
                        pad + i.t_s / t_max * (w - 2.0 * pad),
                        h - pad - f(i) / max * (h - 2.0 * pad)
                    )
                })
                .collect::<Vec<_>>()
                .join(" ")
        };
        format!(
            r##"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">
<rect width="100%" height="100%" fill="white"/>
<line x1="{pad}" y1="{b}" x2="{r}" y2="{b}" stroke="black"/>
<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{b}" stroke="black"/>
<text x="{pad}" y="20">soak: {sessions} sessions; RSS (blue, max {rss_max:.0} MiB) and ops/s (orange, max {ops_max:.0}) over {t_max:.0} s</text>
<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="{rss}"/>
<polyline fill="none" stroke="#ff7f0e" stroke-width="2" points="{ops}"/>
<text x="{r}" y="{tb}" text-anchor="end">t (s)</text>
</svg>
"##,
            b = h - pad,
            r = w - pad,
            tb = h - pad + 20.0,
            sessions = self.sessions,
            rss = line(&|i| i.rss_kib as f64 / 1024.0, rss_max),
            ops = line(&|i| i.ops_per_s, ops_max),
        )
    }
}

/// Counters the session tasks share.
#[derive(Default)]
struct Shared {
    latency: Recorder,
    per_op: [Recorder; 6],
    per_op_count: [AtomicU64; 6],
    per_op_aborted: [AtomicU64; 6],
    ops: AtomicU64,
    aborted: AtomicU64,
    errors: AtomicU64,
    stuck: AtomicU64,
    sums_checked: AtomicU64,
    sum_violations: AtomicU64,
    error_samples: std::sync::Mutex<Vec<String>>,
}

impl Shared {
    fn error(&self, what: String) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        let mut s = self.error_samples.lock().unwrap_or_else(|e| e.into_inner());
        if s.len() < 20 {
            s.push(what);
        }
    }
}

/// Runs the check. An `Err` means the check itself could not run;
/// violations are in the report.
pub async fn run(config: &Config) -> Result<Report> {
    let work = WorkDir::new(config.work_dir.as_deref(), "rowtree-soak-")?;
    let result = run_in(config, work.path().to_path_buf()).await;
    work.finish(matches!(&result, Ok(r) if r.violations().is_empty()));
    result
}

async fn run_in(config: &Config, work_dir: PathBuf) -> Result<Report> {
    let options = server::Options::new(&config.binary, work_dir.join("data"))
        .args(config.server_args.iter().cloned());
    let mut server = Server::start(options).await?;
    let outcome = drive(config, &server, work_dir).await;
    let clean_stop = server.stop().await.is_ok();
    let mut report = outcome?;
    report.clean_stop = clean_stop;
    Ok(report)
}

async fn drive(config: &Config, server: &Server, work_dir: PathBuf) -> Result<Report> {
    let admin = server.client().await?;
    let instance = admin.create_instance("check").await?;
    let database = admin.create_database(&instance, "soak", SCHEMA).await?;
    load(&admin, &database, config.accounts).await?;
    let rss_loaded_kib = server.rss_kib().unwrap_or(0);

    // One channel per 16 sessions, as a pool of client processes would have.
    let channels = config.sessions.div_ceil(16).max(1);
    let mut clients = Vec::new();
    for _ in 0..channels {
        clients.push(server.client().await?);
    }
    let sessions = admin.create_sessions(&database, config.sessions).await?;
    let shared = Arc::new(Shared::default());
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    for (i, session) in sessions.iter().enumerate() {
        let worker = Worker {
            client: clients[i % channels].clone(),
            session: session.clone(),
            accounts: config.accounts,
            total: config.accounts * START_BALANCE,
            rng: StdRng::seed_from_u64(config.seed.wrapping_mul(0x9E37_79B9) ^ i as u64),
            shared: shared.clone(),
            stop: stop.clone(),
            timeout: config.op_timeout,
            mix: config.mix,
            seq: (i as i64) << 32,
        };
        tasks.push(tokio::spawn(worker.run()));
    }

    let begun = Instant::now();
    let mut intervals = Vec::new();
    let mut last = (0u64, 0u64, 0u64);
    let mut next = begun;
    while begun.elapsed() < config.duration {
        next += config.interval.min(config.duration);
        tokio::time::sleep_until(next.into()).await;
        let (latency, _) = shared.latency.take();
        let ops = shared.ops.load(Ordering::Relaxed);
        let aborted = shared.aborted.load(Ordering::Relaxed);
        let errors = shared.errors.load(Ordering::Relaxed);
        let secs = config.interval.as_secs_f64();
        let interval = Interval {
            t_s: begun.elapsed().as_secs_f64(),
            ops: ops - last.0,
            ops_per_s: (ops - last.0) as f64 / secs,
            latency,
            aborted: aborted - last.1,
            errors: errors - last.2,
            rss_kib: server.rss_kib().unwrap_or(0),
        };
        if config.verbose {
            eprintln!(
                "soak {:5.0} s: {:7.0} ops/s, p50 {:6.2} ms, p99 {:7.2} ms, aborted {}, errors {}, RSS {:.1} MiB",
                interval.t_s,
                interval.ops_per_s,
                interval.latency.p50_ms,
                interval.latency.p99_ms,
                interval.aborted,
                interval.errors,
                interval.rss_kib as f64 / 1024.0
            );
        }
        last = (ops, aborted, errors);
        intervals.push(interval);
    }
    stop.store(true, Ordering::Relaxed);
    for t in tasks {
        t.await
            .map_err(|e| Error::Protocol(format!("a session task failed: {e}")))?;
    }
    let duration_s = begun.elapsed().as_secs_f64();

    // Sessions: those the check holds (its workers' and none other), then none.
    let sessions_held = sessions.len();
    let sessions_listed = admin.list_sessions(&database).await?.len();
    for s in &sessions {
        admin.delete_session(s).await?;
    }
    let sessions_after_delete = admin.list_sessions(&database).await?.len();

    // A final sum, with every transfer finished.
    let session = admin.create_session(&database).await?;
    let sum = balance_sum(&admin, &session).await?;
    admin.delete_session(&session).await?;
    shared.sums_checked.fetch_add(1, Ordering::Relaxed);
    if sum != config.accounts * START_BALANCE {
        shared.sum_violations.fetch_add(1, Ordering::Relaxed);
        shared.error(format!(
            "final balance sum {sum}, expected {}",
            config.accounts * START_BALANCE
        ));
    }

    let window = Duration::from_secs(60).min(config.duration / 3);
    let mean = |xs: Vec<u64>| -> u64 {
        if xs.is_empty() {
            0
        } else {
            xs.iter().sum::<u64>() / xs.len() as u64
        }
    };
    let rss_first_kib = mean(
        intervals
            .iter()
            .filter(|i| i.t_s <= window.as_secs_f64() + 0.5)
            .map(|i| i.rss_kib)
            .collect(),
    );
    let end = intervals.last().map_or(0.0, |i| i.t_s);
    let rss_last_kib = mean(
        intervals
            .iter()
            .filter(|i| i.t_s >= end - window.as_secs_f64() - 0.5)
            .map(|i| i.rss_kib)
            .collect(),
    );
    let (rss_mid_kib, mid_t) = intervals
        .iter()
        .min_by(|a, b| {
            (a.t_s - end / 2.0)
                .abs()
                .total_cmp(&(b.t_s - end / 2.0).abs())
        })
        .map_or((0, 0.0), |i| (i.rss_kib, i.t_s));
    let rss_end_kib = intervals.last().map_or(0, |i| i.rss_kib);
    let second_half_s = end - mid_t;
    let mut all = Vec::new();
    let mut ops = Vec::new();
    for (k, (op, _)) in Op::MIX.iter().enumerate() {
        let (summary, samples) = shared.per_op[k].take();
        all.extend(samples);
        ops.push(OpTotals {
            op: *op,
            count: shared.per_op_count[k].load(Ordering::Relaxed),
            aborted: shared.per_op_aborted[k].load(Ordering::Relaxed),
            latency: summary,
        });
    }
    all.sort_unstable();
    let error_samples = shared
        .error_samples
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    Ok(Report {
        sessions: config.sessions,
        duration_s,
        intervals,
        ops,
        total_ops: shared.ops.load(Ordering::Relaxed),
        latency: latency::summarize_sorted(&all),
        stuck: shared.stuck.load(Ordering::Relaxed),
        aborted: shared.aborted.load(Ordering::Relaxed),
        errors: shared.errors.load(Ordering::Relaxed),
        error_samples,
        sum_violations: shared.sum_violations.load(Ordering::Relaxed),
        sums_checked: shared.sums_checked.load(Ordering::Relaxed),
        sessions_held,
        sessions_listed,
        sessions_after_delete,
        rss_first_kib,
        rss_last_kib,
        rss_loaded_kib,
        rss_mid_kib,
        rss_end_kib,
        second_half_s,
        clean_stop: false,
        work_dir,
    })
}

/// Loads the accounts, 1,000 a commit.
async fn load(client: &Client, database: &str, accounts: i64) -> Result<()> {
    let session = client.create_session(database).await?;
    let mut start = 0;
    while start < accounts {
        let rows = (start..(start + 1000).min(accounts))
            .map(|id| vec![id.into(), START_BALANCE.into(), name(id).into()])
            .collect();
        client
            .commit(
                &session,
                Selector::SingleUse(TxnMode::ReadWrite),
                vec![insert("Accounts", &["Id", "Balance", "Name"], rows)],
            )
            .await?;
        start += 1000;
    }
    client.delete_session(&session).await
}

fn name(id: i64) -> String {
    // Names sort differently from ids, so the index has work to do.
    format!("n{:05}-{id}", id.wrapping_mul(7919) % 100_000)
}

async fn balance_sum(client: &Client, session: &str) -> Result<i64> {
    client
        .execute_streaming_sql(
            session,
            &Statement::new("SELECT SUM(Balance) FROM Accounts"),
            Selector::strong(),
        )
        .await?
        .single_int()
}

/// One session's loop.
struct Worker {
    client: Client,
    session: String,
    accounts: i64,
    total: i64,
    rng: StdRng,
    shared: Arc<Shared>,
    stop: Arc<AtomicBool>,
    timeout: Duration,
    mix: [u32; 6],
    /// Transfer row keys: this worker's own range.
    seq: i64,
}

impl Worker {
    async fn run(mut self) {
        while !self.stop.load(Ordering::Relaxed) {
            let k = Op::pick(&self.mix, &mut self.rng);
            let op = Op::MIX[k].0;
            let begun = Instant::now();
            let result = tokio::time::timeout(self.timeout, self.op(op)).await;
            let took = begun.elapsed();
            self.shared.ops.fetch_add(1, Ordering::Relaxed);
            self.shared.per_op_count[k].fetch_add(1, Ordering::Relaxed);
            self.shared.latency.record(took);
            self.shared.per_op[k].record(took);
            match result {
                Ok(Ok(())) => {}
                Ok(Err(e)) if e.is_aborted() => {
                    self.shared.aborted.fetch_add(1, Ordering::Relaxed);
                    self.shared.per_op_aborted[k].fetch_add(1, Ordering::Relaxed);
                }
                Ok(Err(e)) => self.shared.error(format!("{op:?}: {e}")),
                Err(_) => {
                    self.shared.stuck.fetch_add(1, Ordering::Relaxed);
                    self.shared.error(format!(
                        "{op:?}: no answer within {:?} (stuck)",
                        self.timeout
                    ));
                }
            }
        }
    }

    fn account(&mut self) -> i64 {
        self.rng.gen_range(0..self.accounts)
    }

    async fn op(&mut self, op: Op) -> Result<()> {
        let c = self.client.clone();
        let s = self.session.clone();
        match op {
            Op::PointRead => {
                let id = self.account();
                let r = c
                    .read(
                        &s,
                        "Accounts",
                        None,
                        &["Id", "Balance", "Name"],
                        &KeySet::key(vec![id.into()]),
                        Selector::strong(),
                    )
                    .await?;
                if r.rows.len() != 1 {
                    return Err(Error::Protocol(format!(
                        "account {id}: {} rows",
                        r.rows.len()
                    )));
                }
            }
            Op::SmallQuery => {
                let a = self.account();
                let st = Statement::new(
                    "SELECT Id, Balance FROM Accounts WHERE Id >= @a AND Id < @b ORDER BY Id",
                )
                .param("a", a)
                .param("b", a + 10);
                c.execute_sql(&s, &st, Selector::strong()).await?;
            }
            Op::Transfer | Op::Rollback => {
                let from = self.account();
                let mut to = self.account();
                if to == from {
                    to = (from + 1) % self.accounts;
                }
                let amount = self.rng.gen_range(1..50i64);
                let debit =
                    Statement::new("UPDATE Accounts SET Balance = Balance - @x WHERE Id = @id")
                        .param("x", amount)
                        .param("id", from);
                let r = c
                    .execute_sql_seq(&s, &debit, Selector::Begin(TxnMode::ReadWrite), 1)
                    .await?;
                let txn = r
                    .transaction_id
                    .ok_or_else(|| Error::Protocol("inline begin returned no id".into()))?;
                let credit =
                    Statement::new("UPDATE Accounts SET Balance = Balance + @x WHERE Id = @id")
                        .param("x", amount)
                        .param("id", to);
                let done = c
                    .execute_sql_seq(&s, &credit, Selector::Id(txn.clone()), 2)
                    .await;
                if let Err(e) = done {
                    // Give the locks back before reporting.
                    let _ = c.rollback(&s, &txn).await;
                    return Err(e);
                }
                if op == Op::Rollback {
                    return c.rollback(&s, &txn).await;
                }
                self.seq += 1;
                let record = insert(
                    "Transfers",
                    &["Id", "Seq", "Amount", "Other"],
                    vec![vec![
                        from.into(),
                        self.seq.into(),
                        (-amount).into(),
                        to.into(),
                    ]],
                );
                c.commit(&s, Selector::Id(txn), vec![record]).await?;
            }
            Op::StreamingQuery => {
                if self.rng.gen_bool(0.5) {
                    let sum = balance_sum(&c, &s).await?;
                    self.shared.sums_checked.fetch_add(1, Ordering::Relaxed);
                    if sum != self.total {
                        self.shared.sum_violations.fetch_add(1, Ordering::Relaxed);
                        return Err(Error::Protocol(format!(
                            "SUM(Balance) = {sum}, expected {}",
                            self.total
                        )));
                    }
                } else {
                    let st = Statement::new(
                        "SELECT Id, Name FROM Accounts@{FORCE_INDEX=AccountsByName} \
                         WHERE Name >= @n ORDER BY Name LIMIT 100",
                    )
                    .param("n", name(self.account()));
                    c.execute_streaming_sql(&s, &st, Selector::strong()).await?;
                }
            }
            Op::ReadOnlyTxn => {
                let txn = c.begin(&s, TxnMode::ReadOnlyStrong).await?;
                for _ in 0..2 {
                    let id = self.account();
                    c.read(
                        &s,
                        "Accounts",
                        None,
                        &["Balance"],
                        &KeySet::key(vec![Value::Int64(id)]),
                        Selector::Id(txn.clone()),
                    )
                    .await?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixes_parse_by_name() {
        assert_eq!(
            Op::parse_mix("point_read=50, transfer=5").unwrap(),
            [50, 0, 5, 0, 0, 0]
        );
        assert!(Op::parse_mix("point_read=0").is_err());
        assert!(Op::parse_mix("teleport=1").is_err());
        assert!(Op::parse_mix("transfer").is_err());
        let mut rng = StdRng::seed_from_u64(7);
        assert!((0..100).all(|_| Op::pick(&[0, 0, 1, 0, 0, 0], &mut rng) == 2));
    }
}
