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
                format!("unknown mode {s:?}: expected sync, async, batch, async-batch or bit-reversed")
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
    let generator: Option<Box<dyn Generator>> = match config.mode {
        Mode::Async => Some(Box::new(Async::new(store.clone(), &config.sequence))),
        Mode::Batch => Some(Box::new(Batch::new(
            store.clone(),
            &config.sequence,
            config.batch_size,
        )?)),
        Mode::AsyncBatch => Some(Box::new(AsyncBatch::new(
            store.clone(),
            &config.sequence,
            config.batch_size,
            config.low_water,
        )?)),
        Mode::Sync | Mode::BitReversed => None,
    };
    let sync = Sync::new(&config.sequence);
    let work = config.txn_latency;
    let request = |store: &S| -> Result<i64> {
        match config.mode {
            Mode::Sync => {
                Ok(store
                    .run(&mut |t| {
                        let v = sync.next_value(t)?;
                        pause(work);
                        Ok(v)
                    })?
                    .value)
            }
            Mode::BitReversed => {
                Ok(store
                    .run(&mut |t| {
                        let v = t.next_bit_reversed_value(&config.sequence)?;
                        pause(work);
                        Ok(v)
                    })?
                    .value)
            }
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
    let outcomes: Vec<Result<Vec<(usize, Duration, i64)>>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..config.threads)
            .map(|_| {
                let (next, done, store, request) = (&next, &done, &*store, &request);
                scope.spawn(move || {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= config.iterations {
                            return Ok(mine);
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
    let elapsed = started.elapsed();
    progress(done.load(Ordering::Relaxed), config.iterations);
    let mut latencies = vec![Duration::ZERO; config.iterations];
    let mut values = Vec::with_capacity(config.iterations);
    for outcome in outcomes {
        for (i, latency, value) in outcome? {
            latencies[i] = latency;
            values.push(value);
        }
    }
    summarize(config, elapsed, latencies, values)
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
