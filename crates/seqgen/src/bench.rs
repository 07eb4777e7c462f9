//! The sequence benchmark: the article's performance tool, on Rowtree.
//!
//! THREADS workers (a fixed pool) run ITERATIONS requests between them.
//! Each request obtains one value and runs a read-write transaction that
//! spends `txn_latency` of simulated application work inside it, in the
//! article's shapes:
//!
//! * `sync`: the value is taken inside the request's transaction
//!   ([`Sync`]), before the work;
//! * `async`, `batch`, `async-batch`: the value comes from the generator
//!   first, then the transaction runs the work;
//! * `bit-reversed`: `GET_NEXT_SEQUENCE_VALUE` of a built-in bit-reversed
//!   sequence inside the transaction, before the work.
//!
//! Each request times its own wall-clock latency; values/s is iterations
//! over the whole run's wall time, and the percentile `p` is the latency at
//! index `floor(iterations * p)` of the sorted list, as the article's tool
//! computes them, so the figures are comparable with its table
//! ([`SEED_RESULTS`]). Every value handed out is also checked for
//! uniqueness.

use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::generators::{Async, AsyncBatch, Batch, Generator, Sync};
use crate::store::{create_sequence, Store};

/// How a request obtains its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    Sync,
    Async,
    Batch,
    AsyncBatch,
    BitReversed,
}

impl Mode {
    /// Every mode, in the order of the article's table (bit-reversed last).
    pub const ALL: [Mode; 5] = [
        Mode::Sync,
        Mode::Async,
        Mode::Batch,
        Mode::AsyncBatch,
        Mode::BitReversed,
    ];

    /// The name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Sync => "sync",
            Mode::Async => "async",
            Mode::Batch => "batch",
            Mode::AsyncBatch => "async-batch",
            Mode::BitReversed => "bit-reversed",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Mode, String> {
        Mode::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown mode {s:?}: expected sync, async, batch, async-batch or bit-reversed"
                )
            })
    }
}

/// One benchmark run's parameters.
#[derive(Debug, Clone)]
pub struct Config {
    pub mode: Mode,
    pub iterations: usize,
    pub threads: usize,
    /// Simulated application work inside each request's transaction.
    pub txn_latency: Duration,
    /// Values reserved per batch (batch and async-batch).
    pub batch_size: i64,
    /// Remaining values below which async-batch fetches the next batch.
    pub low_water: i64,
    /// The table sequence's name (a row of `sequences`), and the built-in
    /// sequence's name for bit-reversed.
    pub sequence: String,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            mode: Mode::Sync,
            iterations: 2000,
            threads: 10,
            txn_latency: Duration::from_millis(10),
            batch_size: 200,
            low_water: 50,
            sequence: "my_sequence".into(),
        }
    }
}

/// One run's results.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub mode: Mode,
    pub threads: usize,
    pub iterations: usize,
    pub txn_latency_ms: f64,
    pub elapsed_ms: f64,
    pub values_per_sec: f64,
    pub p50_ms: f64,
    pub p75_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    /// The smallest and largest value handed out.
    pub min_value: i64,
    pub max_value: i64,
    /// For bit-reversed: how many values fell in each of 16 buckets of the
    /// positive INT64 range (bits 62..59, the top four below the sign bit,
    /// which is always 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spread: Option<[u64; 16]>,
    /// For async-batch: how many requests found the batch empty and waited
    /// for the background fetch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waited_for_batch: Option<u64>,
}

impl Report {
    /// The fullest bucket of [`Report::spread`] over the mean bucket.
    pub fn spread_max_over_mean(&self) -> Option<f64> {
        let spread = self.spread?;
        let total: u64 = spread.iter().sum();
        let max = *spread.iter().max()?;
        (total > 0).then(|| max as f64 / (total as f64 / 16.0))
    }

    /// The article tool's text output.
    pub fn text(&self) -> String {
        let mut out = format!(
            "{} iterations ({} parallel threads) in {} milliseconds: {:.6} values/s\n",
            self.iterations, self.threads, self.elapsed_ms as u64, self.values_per_sec
        );
        for (p, v) in [
            (50, self.p50_ms),
            (75, self.p75_ms),
            (90, self.p90_ms),
            (99, self.p99_ms),
        ] {
            out.push_str(&format!("Latency: {p}%ile {} ms\n", v as u64));
        }
        if let Some(waited) = self.waited_for_batch {
            out.push_str(&format!("Requests that waited for a batch: {waited}\n"));
        }
        if let (Some(spread), Some(ratio)) = (self.spread, self.spread_max_over_mean()) {
            out.push_str(&format!(
                "Spread over 16 buckets of the key space: {spread:?} (fullest bucket {ratio:.2}x the mean)\n"
            ));
        }
        out
    }
}

/// What a run reports while it goes: requests done and the total.
pub type Progress<'a> = &'a (dyn Fn(usize, usize) + std::marker::Sync);

/// Prepares the sequence the mode uses: a row of `sequences` for the
/// table modes, a built-in bit-reversed sequence for bit-reversed.
pub fn prepare<S: Store>(store: &S, config: &Config) -> Result<()> {
    match config.mode {
        Mode::BitReversed => store.apply_ddl(&[&format!(
            "CREATE SEQUENCE IF NOT EXISTS {} OPTIONS (sequence_kind = 'bit_reversed_positive')",
            config.sequence
        )]),
        _ => create_sequence(store, &config.sequence, 1).map(|_| ()),
    }
}

/// Runs one benchmark (after [`prepare`]).
pub fn run<S: Store>(store: Arc<S>, config: &Config, progress: Progress<'_>) -> Result<Report> {
    if config.threads == 0 || config.iterations == 0 {
        return Err(Error::Config(
            "threads and iterations must be at least 1".into(),
        ));
    }
    prepare(&*store, config)?;
    let async_batch = match config.mode {
        Mode::AsyncBatch => Some(Arc::new(AsyncBatch::new(
            store.clone(),
            &config.sequence,
            config.batch_size,
            config.low_water,
        )?)),
        _ => None,
    };
    let generator: Option<Arc<dyn Generator>> = match config.mode {
        Mode::Async => Some(Arc::new(Async::new(store.clone(), &config.sequence))),
        Mode::Batch => Some(Arc::new(Batch::new(
            store.clone(),
            &config.sequence,
            config.batch_size,
        )?)),
        Mode::AsyncBatch => async_batch.clone().map(|g| g as Arc<dyn Generator>),
        Mode::Sync | Mode::BitReversed => None,
    };
    let sync = Sync::new(&config.sequence);
    let work = config.txn_latency;
    let request = |store: &S| -> Result<i64> {
        match config.mode {
            Mode::Sync => Ok(store
                .run(&mut |t| {
                    let v = sync.next_value(t)?;
                    pause(work);
                    Ok(v)
                })?
                .value),
            Mode::BitReversed => Ok(store
                .run(&mut |t| {
                    let v = t.next_bit_reversed_value(&config.sequence)?;
                    pause(work);
                    Ok(v)
                })?
                .value),
            _ => {
                let v = generator.as_ref().expect("a generator").next_value()?;
                store.run(&mut |_| {
                    pause(work);
                    Ok(())
                })?;
                Ok(v)
            }
        }
    };

    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let started = Instant::now();
    type Outcome = Result<(Vec<(usize, Duration, i64)>, Instant)>;
    let outcomes: Vec<Outcome> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..config.threads)
            .map(|_| {
                let (next, done, store, request) = (&next, &done, &*store, &request);
                scope.spawn(move || {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= config.iterations {
                            // The run ends when the last worker does (not
                            // when the progress loop below notices).
                            return Ok((mine, Instant::now()));
                        }
                        let t0 = Instant::now();
                        let value = match request(store) {
                            Ok(v) => v,
                            Err(e) => {
                                // Stop the others too: the run is void.
                                next.store(config.iterations, Ordering::Relaxed);
                                return Err(e);
                            }
                        };
                        mine.push((i, t0.elapsed(), value));
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        while !workers.iter().all(|w| w.is_finished()) {
            progress(done.load(Ordering::Relaxed), config.iterations);
            std::thread::sleep(Duration::from_millis(100));
        }
        workers
            .into_iter()
            .map(|w| w.join().expect("a benchmark worker panicked"))
            .collect()
    });
    progress(done.load(Ordering::Relaxed), config.iterations);
    let mut latencies = vec![Duration::ZERO; config.iterations];
    let mut values = Vec::with_capacity(config.iterations);
    let mut finished = started;
    for outcome in outcomes {
        let (mine, end) = outcome?;
        finished = finished.max(end);
        for (i, latency, value) in mine {
            latencies[i] = latency;
            values.push(value);
        }
    }
    let elapsed = finished - started;
    let mut report = summarize(config, elapsed, latencies, values)?;
    report.waited_for_batch = async_batch.map(|g| g.waits());
    Ok(report)
}

/// Simulated application work: a sleep, as the article's tool does.
fn pause(work: Duration) {
    if !work.is_zero() {
        std::thread::sleep(work);
    }
}

fn summarize(
    config: &Config,
    elapsed: Duration,
    mut latencies: Vec<Duration>,
    mut values: Vec<i64>,
) -> Result<Report> {
    latencies.sort_unstable();
    let n = latencies.len();
    let pct = |p: f64| {
        let i = ((n as f64 * p) as usize).min(n - 1);
        latencies[i].as_secs_f64() * 1000.0
    };
    let spread = (config.mode == Mode::BitReversed).then(|| {
        let mut buckets = [0u64; 16];
        for v in &values {
            buckets[((*v as u64) >> 59) as usize & 15] += 1;
        }
        buckets
    });
    values.sort_unstable();
    if let Some(w) = values.windows(2).find(|w| w[0] == w[1]) {
        return Err(Error::Database {
            code: rowtree_types::Code::Internal,
            message: format!("value {} was handed out twice", w[0]),
        });
    }
    let elapsed_ms = elapsed.as_secs_f64() * 1000.0;
    Ok(Report {
        mode: config.mode,
        threads: config.threads,
        iterations: n,
        txn_latency_ms: config.txn_latency.as_secs_f64() * 1000.0,
        elapsed_ms,
        values_per_sec: n as f64 * 1000.0 / elapsed_ms,
        p50_ms: pct(0.50),
        p75_ms: pct(0.75),
        p90_ms: pct(0.90),
        p99_ms: pct(0.99),
        min_value: values.first().copied().unwrap_or_default(),
        max_value: values.last().copied().unwrap_or_default(),
        spread,
        waited_for_batch: None,
    })
}

/// The median time of one request with no application work (begin, the
/// value, commit), measured over `samples` sequential requests: the
/// "commit time" of the throughput ceiling `threads / (work + commit)`.
pub fn commit_time<S: Store>(store: Arc<S>, mode: Mode, samples: usize) -> Result<Duration> {
    let config = Config {
        mode,
        iterations: samples.max(1),
        threads: 1,
        txn_latency: Duration::ZERO,
        ..Config::default()
    };
    let report = run(store, &config, &|_, _| {})?;
    Ok(Duration::from_secs_f64(report.p50_ms / 1000.0))
}

/// One row of the article's published results (a one-node Spanner
/// instance, a 4-vCPU client VM, 10 ms of work per transaction, batch size
/// 200, low-water mark 50).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct SeedResult {
    pub mode: Mode,
    pub threads: usize,
    pub values_per_sec: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
}

/// The article's table, to print beside this machine's.
pub const SEED_RESULTS: [SeedResult; 8] = [
    seed(Mode::Sync, 10, 34.0, 27.0, 1189.0, 2703.0),
    seed(Mode::Sync, 50, 30.6, 1191.0, 3513.0, 5982.0),
    seed(Mode::Async, 10, 66.5, 28.0, 611.0, 1460.0),
    seed(Mode::Async, 50, 78.1, 29.0, 1695.0, 3442.0),
    seed(Mode::Batch, 10, 494.0, 18.0, 20.0, 38.0),
    seed(Mode::Batch, 50, 1195.0, 27.0, 55.0, 168.0),
    seed(Mode::AsyncBatch, 10, 512.0, 18.0, 20.0, 30.0),
    seed(Mode::AsyncBatch, 50, 1622.0, 24.0, 28.0, 30.0),
];

const fn seed(
    mode: Mode,
    threads: usize,
    values_per_sec: f64,
    p50_ms: f64,
    p90_ms: f64,
    p99_ms: f64,
) -> SeedResult {
    SeedResult {
        mode,
        threads,
        values_per_sec,
        p50_ms,
        p90_ms,
        p99_ms,
    }
}

/// The published result for a mode and thread count, if the article has one.
pub fn seed_result(mode: Mode, threads: usize) -> Option<SeedResult> {
    SEED_RESULTS
        .iter()
        .copied()
        .find(|r| r.mode == mode && r.threads == threads)
}

/// The thread counts of the matrix, as in the article's table.
pub const MATRIX_THREADS: [usize; 2] = [10, 50];

/// Values drawn for the spread of the built-in sequence.
pub const SPREAD_VALUES: usize = 100_000;

/// The matrix: every mode at 10 and 50 threads, then the built-in sequence
/// with no application work (its raw rate and its spread over
/// [`SPREAD_VALUES`] values), with the throughput ceiling of the
/// bit-reversed runs.
#[derive(Debug, Clone, Serialize)]
pub struct Matrix {
    pub runs: Vec<Report>,
    /// The bit-reversed run with no application work, [`SPREAD_VALUES`]
    /// iterations at the largest thread count.
    pub unthrottled: Report,
    /// The median time of one bit-reversed request with no work, one thread.
    pub commit_ms: f64,
    pub seed: Vec<SeedResult>,
}

impl Matrix {
    /// The run of a mode at a thread count.
    pub fn run(&self, mode: Mode, threads: usize) -> Option<&Report> {
        self.runs
            .iter()
            .find(|r| r.mode == mode && r.threads == threads)
    }

    /// The most values/s `threads` workers can reach when each request takes
    /// the application's work plus the measured commit time.
    pub fn ceiling(&self, threads: usize, txn_latency_ms: f64) -> f64 {
        threads as f64 * 1000.0 / (txn_latency_ms + self.commit_ms)
    }

    /// The table beside the article's, and the targets, as text.
    pub fn text(&self) -> String {
        let mut out = String::new();
        out.push_str(
            "                          |            this machine              |   the article (Spanner, 1 node)\n",
        );
        out.push_str(
            "mode          threads     |  values/s   p50 ms  p90 ms   p99 ms  |  values/s  p50 ms  p90 ms  p99 ms\n",
        );
        for r in &self.runs {
            let seed = seed_result(r.mode, r.threads)
                .map(|s| {
                    format!(
                        "{:>9.1} {:>7.0} {:>7.0} {:>7.0}",
                        s.values_per_sec, s.p50_ms, s.p90_ms, s.p99_ms
                    )
                })
                .unwrap_or_else(|| format!("{:>9} {:>7} {:>7} {:>7}", "-", "-", "-", "-"));
            out.push_str(&format!(
                "{:<13} {:>7}     | {:>9.1} {:>8.1} {:>7.1} {:>8.1}  | {seed}\n",
                r.mode.name(),
                r.threads,
                r.values_per_sec,
                r.p50_ms,
                r.p90_ms,
                r.p99_ms
            ));
        }
        let u = &self.unthrottled;
        out.push_str(&format!(
            "\nbit-reversed, no application work: {} values at {} threads: {:.0} values/s (p50 {:.1} µs, p99 {:.1} µs)\n",
            u.iterations, u.threads, u.values_per_sec, u.p50_ms * 1000.0, u.p99_ms * 1000.0
        ));
        if let (Some(spread), Some(ratio)) = (u.spread, u.spread_max_over_mean()) {
            out.push_str(&format!(
                "spread over 16 buckets of the positive INT64 range: {spread:?}\nfullest bucket: {ratio:.3}x the mean\n"
            ));
        }
        out.push_str(&format!(
            "one bit-reversed request with no work (begin, value, commit), median: {:.1} µs\n",
            self.commit_ms * 1000.0
        ));
        out.push_str("\ntargets:\n");
        for t in self.targets() {
            out.push_str(&format!(
                "  [{}] {}\n",
                if t.met { "met" } else { "NOT met" },
                t.text
            ));
        }
        out
    }

    /// The targets, evaluated on this run.
    pub fn targets(&self) -> Vec<Target> {
        let mut targets = Vec::new();
        let (lo, hi) = (MATRIX_THREADS[0], MATRIX_THREADS[1]);
        let get = |m, t| self.run(m, t);
        if let (Some(s10), Some(s50)) = (get(Mode::Sync, lo), get(Mode::Sync, hi)) {
            targets.push(Target {
                met: s50.values_per_sec <= s10.values_per_sec * 1.1,
                text: format!(
                    "sync values/s falls or stays flat from {lo} to {hi} threads: {:.1} -> {:.1}",
                    s10.values_per_sec, s50.values_per_sec
                ),
            });
            for s in [s10, s50] {
                targets.push(Target {
                    met: s.p90_ms >= 3.0 * s.p50_ms,
                    text: format!(
                        "sync p90 far above p50 at {} threads: p50 {:.1} ms, p90 {:.1} ms",
                        s.threads, s.p50_ms, s.p90_ms
                    ),
                });
            }
        }
        for t in MATRIX_THREADS {
            if let (Some(a), Some(s)) = (get(Mode::Async, t), get(Mode::Sync, t)) {
                targets.push(Target {
                    met: a.values_per_sec > s.values_per_sec,
                    text: format!(
                        "async above sync at {t} threads: {:.1} vs {:.1} values/s",
                        a.values_per_sec, s.values_per_sec
                    ),
                });
            }
        }
        if let Some(s) = get(Mode::Sync, lo) {
            for m in [Mode::Batch, Mode::AsyncBatch] {
                if let Some(b) = get(m, lo) {
                    targets.push(Target {
                        met: b.values_per_sec >= 10.0 * s.values_per_sec,
                        text: format!(
                            "{m} at least 10x sync at {lo} threads: {:.1} vs {:.1} values/s ({:.1}x)",
                            b.values_per_sec,
                            s.values_per_sec,
                            b.values_per_sec / s.values_per_sec
                        ),
                    });
                }
            }
        }
        if let Some(a) = get(Mode::AsyncBatch, hi) {
            targets.push(Target {
                met: a.p99_ms <= 2.0 * a.p50_ms,
                text: format!(
                    "async-batch p99 at most 2x its p50 at {hi} threads: p50 {:.2} ms, p99 {:.2} ms",
                    a.p50_ms, a.p99_ms
                ),
            });
        }
        if let Some(b) = get(Mode::BitReversed, hi) {
            let ceiling = self.ceiling(hi, b.txn_latency_ms);
            targets.push(Target {
                met: b.values_per_sec >= 0.9 * ceiling,
                text: format!(
                    "bit-reversed at {hi} threads reaches 90% of its ceiling {hi} / ({:.1} ms + {:.3} ms) = {ceiling:.0} values/s: {:.0} ({:.1}%)",
                    b.txn_latency_ms,
                    self.commit_ms,
                    b.values_per_sec,
                    100.0 * b.values_per_sec / ceiling
                ),
            });
        }
        let u = &self.unthrottled;
        targets.push(Target {
            met: u.values_per_sec >= 50_000.0,
            text: format!(
                "bit-reversed with no application work hands out at least 50,000 values/s: {:.0}",
                u.values_per_sec
            ),
        });
        if let Some(ratio) = u.spread_max_over_mean() {
            targets.push(Target {
                met: ratio <= 1.5,
                text: format!(
                    "bit-reversed values spread: no bucket of 16 above 1.5x the mean after {} values: {ratio:.3}x",
                    u.iterations
                ),
            });
        }
        targets
    }
}

/// One target of the matrix and whether this run met it.
#[derive(Debug, Clone, Serialize)]
pub struct Target {
    pub met: bool,
    pub text: String,
}

/// Runs the matrix. `template` gives the iterations, application work,
/// batch size and low-water mark; `progress` hears each run's label and
/// its progress.
pub fn matrix<S: Store>(
    store: Arc<S>,
    template: &Config,
    progress: &(dyn Fn(&str, usize, usize) + std::marker::Sync),
) -> Result<Matrix> {
    let mut runs = Vec::new();
    for mode in Mode::ALL {
        for threads in MATRIX_THREADS {
            let config = Config {
                mode,
                threads,
                ..template.clone()
            };
            let label = format!("{mode} at {threads} threads");
            runs.push(run(store.clone(), &config, &|d, t| progress(&label, d, t))?);
        }
    }
    let commit = commit_time(store.clone(), Mode::BitReversed, 200)?;
    let config = Config {
        mode: Mode::BitReversed,
        threads: MATRIX_THREADS[1],
        iterations: SPREAD_VALUES,
        txn_latency: Duration::ZERO,
        ..template.clone()
    };
    let label = format!("bit-reversed, no work, {} values", SPREAD_VALUES);
    let unthrottled = run(store, &config, &|d, t| progress(&label, d, t))?;
    Ok(Matrix {
        runs,
        unthrottled,
        commit_ms: commit.as_secs_f64() * 1000.0,
        seed: SEED_RESULTS.to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quick(mode: Mode) -> Report {
        let db = Arc::new(rowtree_db::Database::in_memory());
        let config = Config {
            mode,
            iterations: 60,
            threads: 4,
            txn_latency: Duration::from_millis(1),
            batch_size: 10,
            low_water: 3,
            ..Config::default()
        };
        run(db, &config, &|_, _| {}).unwrap()
    }

    #[test]
    fn every_mode_runs_and_reports_in_the_article_format() {
        for mode in Mode::ALL {
            let report = quick(mode);
            assert_eq!(report.iterations, 60);
            assert!(
                report.p50_ms >= 1.0,
                "{mode}: each request does 1 ms of work"
            );
            assert!(report.p50_ms <= report.p75_ms && report.p75_ms <= report.p90_ms);
            assert!(report.p90_ms <= report.p99_ms);
            let text = report.text();
            let first = text.lines().next().unwrap();
            assert!(
                first.starts_with("60 iterations (4 parallel threads) in ")
                    && first.ends_with(" values/s"),
                "{first}"
            );
            for p in [50, 75, 90, 99] {
                assert!(text.contains(&format!("Latency: {p}%ile ")), "{text}");
            }
            let json = serde_json::to_value(&report).unwrap();
            for key in [
                "mode",
                "threads",
                "iterations",
                "values_per_sec",
                "p50_ms",
                "p75_ms",
                "p90_ms",
                "p99_ms",
            ] {
                assert!(json.get(key).is_some(), "{key} missing from {json}");
            }
            assert_eq!(json["mode"], mode.name());
        }
    }

    #[test]
    fn table_modes_hand_out_consecutive_values_when_nothing_else_takes_any() {
        // Sync and async take one value per request from a fresh sequence.
        for mode in [Mode::Sync, Mode::Async] {
            let r = quick(mode);
            assert_eq!((r.min_value, r.max_value), (1, 60), "{mode}");
        }
        let r = quick(Mode::BitReversed);
        assert!(r.spread.is_some() && r.min_value > 0);
    }

    #[test]
    fn percentiles_are_taken_as_the_article_takes_them() {
        let config = Config {
            iterations: 10,
            ..Config::default()
        };
        let latencies = (1..=10).map(Duration::from_millis).rev().collect();
        let r = summarize(
            &config,
            Duration::from_secs(1),
            latencies,
            (0..10).collect(),
        )
        .unwrap();
        // Index floor(10 * p) of the sorted 1..=10 ms.
        assert_eq!(
            (r.p50_ms, r.p75_ms, r.p90_ms, r.p99_ms),
            (6.0, 8.0, 10.0, 10.0)
        );
        assert_eq!(r.values_per_sec, 10.0);
        let dup = summarize(
            &config,
            Duration::from_secs(1),
            vec![Duration::ZERO; 2],
            vec![5, 5],
        );
        assert!(dup.is_err(), "a duplicate value must void the run");
    }

    #[test]
    fn modes_parse_from_their_names() {
        for mode in Mode::ALL {
            assert_eq!(mode.name().parse::<Mode>().unwrap(), mode);
        }
        assert!("fast".parse::<Mode>().is_err());
    }
}
