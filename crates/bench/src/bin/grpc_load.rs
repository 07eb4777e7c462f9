//! `grpc-load`: a load generator for `rowtree serve`, over Spanner's gRPC API.
//!
//! It talks to the server the way a Spanner client library does: it creates
//! an instance and a database with the admin APIs, preloads a `Users` table
//! with `Commit` mutations, creates one session per worker
//! (`BatchCreateSessions`), and then runs each workload with N concurrent
//! sessions for a fixed time after a short warm-up:
//!
//! - `read`: a point read of one random key with `Read`, in a single-use
//!   strong read-only transaction;
//! - `sql`: the same read as `SELECT ... WHERE UserId = @id` with
//!   `ExecuteSql` and an INT64 parameter;
//! - `commit`: a single-use read-write `Commit` with one `InsertOrUpdate`
//!   mutation of a 1 KB row at a random key (what client libraries send for a
//!   blind write); each commit is durable when it returns.
//!
//! For each workload it reports throughput, p50/p90/p99/max latency (measured
//! by the client, per request) and errors, as a table and optionally as JSON.
//!
//! ```sh
//! # start a server in this process, on a fresh temporary data directory:
//! cargo run --release -p rowtree-bench --bin grpc-load -- --spawn --sessions 32 --duration 20
//! # or drive a running `rowtree serve`:
//! cargo run --release -p rowtree-bench --bin grpc-load -- --addr 127.0.0.1:9010
//! ```

/// The server `--spawn` starts allocates as `rowtree serve` does.
#[cfg(all(unix, not(target_env = "musl")))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};
use rand::{Rng, SeedableRng};
use tonic::transport::{Channel, Endpoint};

use googleapis_tonic_google_spanner_admin_database_v1::google::spanner::admin::database::v1 as dpb;
use googleapis_tonic_google_spanner_admin_instance_v1::google::spanner::admin::instance::v1 as ipb;
use googleapis_tonic_google_spanner_v1::google::spanner::v1 as pb;

use dpb::database_admin_client::DatabaseAdminClient;
use ipb::instance_admin_client::InstanceAdminClient;
use pb::spanner_client::SpannerClient;

const TABLE: &str = "Users";
const PROJECT: &str = "projects/grpc-load";
const INSTANCE_ID: &str = "load";

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Workload {
    /// Point reads with `Read`.
    Read,
    /// Point reads with `ExecuteSql` and a parameter.
    Sql,
    /// Single-row blind-write commits.
    Commit,
    /// `read`, then `commit`.
    Both,
    /// `read`, `sql`, then `commit`.
    All,
}

/// Drives `rowtree serve` over gRPC with N concurrent sessions: point reads
/// and single-row commits of 1 KB rows.
#[derive(Debug, Parser)]
#[command(name = "grpc-load")]
struct Args {
    /// Address of a running `rowtree serve`.
    #[arg(long, default_value = "127.0.0.1:9010", conflicts_with = "spawn")]
    addr: SocketAddr,
    /// Start a server in this process (on a fresh temporary data directory,
    /// or --data-dir) instead of connecting to --addr. It shares the machine's
    /// cores with the load generator, as a server process would.
    #[arg(long)]
    spawn: bool,
    /// With --spawn: the data directory (default: a fresh temporary one,
    /// removed at the end).
    #[arg(long, value_name = "DIR", requires = "spawn")]
    data_dir: Option<PathBuf>,
    /// With --spawn: block cache per database in MiB (`rowtree serve`'s default).
    #[arg(long, value_name = "MIB", default_value_t = 16)]
    cache_mib: u64,
    /// With --spawn: worker threads of the server's runtime (default: one per core).
    #[arg(long)]
    server_threads: Option<usize>,
    /// Worker threads of the load generator's runtime (default: one per core).
    #[arg(long)]
    client_threads: Option<usize>,
    /// Concurrent sessions, one request in flight each.
    #[arg(long, default_value_t = 32)]
    sessions: usize,
    /// gRPC channels (HTTP/2 connections) the sessions are spread over.
    #[arg(long, default_value_t = 4)]
    channels: usize,
    /// Seconds each workload is measured.
    #[arg(long, default_value_t = 20.0)]
    duration: f64,
    /// Seconds each workload runs before measuring.
    #[arg(long, default_value_t = 2.0)]
    warmup: f64,
    /// Rows preloaded into the table (keys 0..rows).
    #[arg(long, default_value_t = 100_000)]
    rows: u64,
    /// Bytes of each row's payload.
    #[arg(long, default_value_t = 1000)]
    row_bytes: usize,
    /// Rows per preload commit.
    #[arg(long, default_value_t = 500)]
    batch: usize,
    /// What to run.
    #[arg(long, value_enum, default_value = "both")]
    workload: Workload,
    /// Also print the results as one JSON object on the last line.
    #[arg(long)]
    json: bool,
    /// Keep the database at the end (it is dropped by default).
    #[arg(long)]
    keep: bool,
    /// Read with an exact staleness of this many milliseconds instead of a
    /// strong read (0: strong, the default), to isolate a strong read's wait.
    #[arg(long, value_name = "MS", default_value_t = 0)]
    stale_ms: u64,
    /// Seed of the random keys.
    #[arg(long, default_value_t = 42)]
    seed: u64,
}

type Error = Box<dyn std::error::Error + Send + Sync>;

fn main() -> Result<(), Error> {
    let args = Args::parse();
    if args.sessions == 0 || args.channels == 0 || args.rows == 0 {
        return Err("--sessions, --channels and --rows must be positive".into());
    }

    // The in-process server gets its own runtime, as it would in its own
    // process, so the two schedulers do not share worker threads.
    let mut spawned = None;
    let addr = if args.spawn {
        let (dir, temp) = match &args.data_dir {
            Some(d) => (d.clone(), None),
            None => {
                let t = tempfile::Builder::new().prefix("grpc-load-").tempdir()?;
                (t.path().to_path_buf(), Some(t))
            }
        };
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.enable_all().thread_name("server");
        if let Some(n) = args.server_threads {
            b.worker_threads(n);
        }
        let rt = b.build()?;
        let config = rowtree_server::Config {
            data_dir: Some(dir.clone()),
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            cache_bytes: args.cache_mib << 20,
            ..Default::default()
        };
        let server = rt.block_on(rowtree_server::Server::start(config))?;
        let addr = server.local_addr;
        eprintln!("spawned a server on {addr}, data dir {}", dir.display());
        spawned = Some((rt, server, temp));
        addr
    } else {
        args.addr
    };

    let mut b = tokio::runtime::Builder::new_multi_thread();
    b.enable_all().thread_name("client");
    if let Some(n) = args.client_threads {
        b.worker_threads(n);
    }
    let rt = b.build()?;
    let result = rt.block_on(run(&args, addr));
    drop(rt);

    if let Some((srt, server, temp)) = spawned {
        srt.block_on(server.shutdown())?;
        drop(srt);
        drop(temp);
    }
    result
}

/// One workload's measurements.
struct Report {
    name: &'static str,
    ops: u64,
    errors: BTreeMap<String, u64>,
    seconds: f64,
    /// Latencies of the successful requests, in nanoseconds, sorted.
    latencies: Vec<u64>,
}

impl Report {
    fn throughput(&self) -> f64 {
        self.ops as f64 / self.seconds
    }
    fn percentile_us(&self, p: f64) -> f64 {
        if self.latencies.is_empty() {
            return f64::NAN;
        }
        let i = ((p / 100.0) * self.latencies.len() as f64).ceil() as usize;
        let i = i.clamp(1, self.latencies.len()) - 1;
        self.latencies[i] as f64 / 1000.0
    }
    fn mean_us(&self) -> f64 {
        if self.latencies.is_empty() {
            return f64::NAN;
        }
        self.latencies.iter().sum::<u64>() as f64 / self.latencies.len() as f64 / 1000.0
    }
    fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }
}

async fn run(args: &Args, addr: SocketAddr) -> Result<(), Error> {
    let endpoint = Endpoint::from_shared(format!("http://{addr}"))?
        .tcp_nodelay(true)
        .connect_timeout(Duration::from_secs(5));
    let mut channels = Vec::with_capacity(args.channels);
    for _ in 0..args.channels {
        channels.push(endpoint.connect().await?);
    }
    let admin_channel = channels[0].clone();

    // Instance (kept between runs against one server) and a fresh database.
    let mut instances = InstanceAdminClient::new(admin_channel.clone());
    let instance = format!("{PROJECT}/instances/{INSTANCE_ID}");
    match instances
        .create_instance(ipb::CreateInstanceRequest {
            parent: PROJECT.into(),
            instance_id: INSTANCE_ID.into(),
            instance: Some(ipb::Instance {
                name: instance.clone(),
                config: format!("{PROJECT}/instanceConfigs/emulator-config"),
                display_name: "grpc-load".into(),
                node_count: 1,
                ..Default::default()
            }),
        })
        .await
    {
        Ok(op) => wait_instance(&mut instances, op.into_inner().done, &instance).await?,
        Err(s) if s.code() == tonic::Code::AlreadyExists => {}
        Err(s) => return Err(format!("CreateInstance: {s}").into()),
    }
    let mut admin = DatabaseAdminClient::new(admin_channel.clone());
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_millis();
    let db_id = format!("load{}", stamp % 1_000_000_000_000);
    let database = format!("{instance}/databases/{db_id}");
    let op = admin
        .create_database(dpb::CreateDatabaseRequest {
            parent: instance.clone(),
            create_statement: format!("CREATE DATABASE `{db_id}`"),
            extra_statements: vec![format!(
                "CREATE TABLE {TABLE} (UserId INT64 NOT NULL, Payload STRING(MAX)) PRIMARY KEY (UserId)"
            )],
            ..Default::default()
        })
        .await
        .map_err(|s| format!("CreateDatabase: {s}"))?
        .into_inner();
    wait_database(&mut admin, op.done, &database).await?;
    eprintln!("database {database}");

    // Sessions, one per worker; BatchCreateSessions may return fewer than asked.
    let mut sessions = Vec::with_capacity(args.sessions);
    let mut client = SpannerClient::new(admin_channel.clone());
    while sessions.len() < args.sessions {
        let r = client
            .batch_create_sessions(pb::BatchCreateSessionsRequest {
                database: database.clone(),
                session_template: None,
                session_count: (args.sessions - sessions.len()) as i32,
            })
            .await
            .map_err(|s| format!("BatchCreateSessions: {s}"))?
            .into_inner();
        if r.session.is_empty() {
            return Err("BatchCreateSessions returned no session".into());
        }
        sessions.extend(r.session.into_iter().map(|s| s.name));
    }

    let payload_len = args.row_bytes;
    preload(args, &channels, &sessions).await?;

    let workloads: &[Workload] = match args.workload {
        Workload::Both => &[Workload::Read, Workload::Commit],
        Workload::All => &[Workload::Read, Workload::Sql, Workload::Commit],
        Workload::Read => &[Workload::Read],
        Workload::Sql => &[Workload::Sql],
        Workload::Commit => &[Workload::Commit],
    };
    let mut reports = Vec::new();
    for (i, &w) in workloads.iter().enumerate() {
        let r = run_workload(
            w,
            args,
            &channels,
            &sessions,
            payload_len,
            args.seed.wrapping_add(i as u64 * 1_000_003),
        )
        .await?;
        eprintln!(
            "{}: {:.0} ops/s, p50 {:.0} µs, p99 {:.0} µs, {} errors",
            r.name,
            r.throughput(),
            r.percentile_us(50.0),
            r.percentile_us(99.0),
            r.error_count()
        );
        reports.push(r);
    }

    for s in &sessions {
        let _ = client
            .delete_session(pb::DeleteSessionRequest { name: s.clone() })
            .await;
    }
    if !args.keep {
        let _ = admin
            .drop_database(dpb::DropDatabaseRequest {
                database: database.clone(),
            })
            .await;
    }

    print_table(args, &reports);
    if args.json {
        println!("{}", json(args, &reports));
    }
    Ok(())
}

async fn wait_instance(
    admin: &mut InstanceAdminClient<Channel>,
    done: bool,
    name: &str,
) -> Result<(), Error> {
    // Rowtree finishes the operation before answering; a server that does not
    // is polled until the instance is READY.
    if done {
        return Ok(());
    }
    for _ in 0..600 {
        let i = admin
            .get_instance(ipb::GetInstanceRequest {
                name: name.into(),
                field_mask: None,
            })
            .await?
            .into_inner();
        if i.state == ipb::instance::State::Ready as i32 {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(format!("instance {name} did not become ready").into())
}

async fn wait_database(
    admin: &mut DatabaseAdminClient<Channel>,
    done: bool,
    name: &str,
) -> Result<(), Error> {
    if done {
        return Ok(());
    }
    for _ in 0..600 {
        let d = admin
            .get_database(dpb::GetDatabaseRequest { name: name.into() })
            .await?
            .into_inner();
        if d.state == dpb::database::State::Ready as i32 {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(format!("database {name} did not become ready").into())
}

fn string_value(s: String) -> prost_types::Value {
    prost_types::Value {
        kind: Some(prost_types::value::Kind::StringValue(s)),
    }
}

/// A payload of `len` ASCII bytes that differs per key and per write.
fn payload(key: u64, version: u64, len: usize) -> String {
    let mut s = format!("k{key}v{version}:");
    let fill = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut i = (key as usize) % fill.len();
    while s.len() < len {
        s.push(fill[i % fill.len()] as char);
        i += 1;
    }
    s.truncate(len);
    s
}

fn write_mutation(rows: impl Iterator<Item = (u64, String)>) -> pb::Mutation {
    pb::Mutation {
        operation: Some(pb::mutation::Operation::InsertOrUpdate(
            pb::mutation::Write {
                table: TABLE.into(),
                columns: vec!["UserId".into(), "Payload".into()],
                values: rows
                    .map(|(k, p)| prost_types::ListValue {
                        values: vec![string_value(k.to_string()), string_value(p)],
                    })
                    .collect(),
            },
        )),
    }
}

fn single_use_read_write() -> pb::commit_request::Transaction {
    pb::commit_request::Transaction::SingleUseTransaction(pb::TransactionOptions {
        mode: Some(pb::transaction_options::Mode::ReadWrite(Default::default())),
        ..Default::default()
    })
}

fn single_use_read_only(stale_ms: u64) -> pb::TransactionSelector {
    use pb::transaction_options::read_only::TimestampBound;
    let bound = if stale_ms == 0 {
        TimestampBound::Strong(true)
    } else {
        TimestampBound::ExactStaleness(prost_types::Duration {
            seconds: (stale_ms / 1000) as i64,
            nanos: ((stale_ms % 1000) * 1_000_000) as i32,
        })
    };
    pb::TransactionSelector {
        selector: Some(pb::transaction_selector::Selector::SingleUse(
            pb::TransactionOptions {
                mode: Some(pb::transaction_options::Mode::ReadOnly(
                    pb::transaction_options::ReadOnly {
                        return_read_timestamp: false,
                        timestamp_bound: Some(bound),
                    },
                )),
                ..Default::default()
            },
        )),
    }
}

/// Loads keys `0..rows` with `InsertOrUpdate` commits of `--batch` rows, a
/// few commits in flight at once.
async fn preload(args: &Args, channels: &[Channel], sessions: &[String]) -> Result<(), Error> {
    let started = Instant::now();
    let batches: Vec<(u64, u64)> = (0..args.rows)
        .step_by(args.batch)
        .map(|lo| (lo, (lo + args.batch as u64).min(args.rows)))
        .collect();
    let queue = Arc::new(std::sync::Mutex::new(batches));
    let loaders = sessions.len().min(8);
    let mut tasks = Vec::new();
    for i in 0..loaders {
        let queue = queue.clone();
        let mut client = SpannerClient::new(channels[i % channels.len()].clone())
            .max_decoding_message_size(64 << 20)
            .max_encoding_message_size(64 << 20);
        let session = sessions[i].clone();
        let len = args.row_bytes;
        tasks.push(tokio::spawn(async move {
            loop {
                let next = queue.lock().unwrap().pop();
                let Some((lo, hi)) = next else {
                    return Ok::<(), Error>(());
                };
                client
                    .commit(pb::CommitRequest {
                        session: session.clone(),
                        mutations: vec![write_mutation((lo..hi).map(|k| (k, payload(k, 0, len))))],
                        transaction: Some(single_use_read_write()),
                        ..Default::default()
                    })
                    .await
                    .map_err(|s| format!("preload commit [{lo}, {hi}): {s}"))?;
            }
        }));
    }
    for t in tasks {
        t.await??;
    }
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "preloaded {} rows of {} bytes in {:.1} s ({:.0} rows/s)",
        args.rows,
        args.row_bytes,
        secs,
        args.rows as f64 / secs
    );
    Ok(())
}

/// What a worker returns: successes' latencies, and errors by code.
struct WorkerResult {
    latencies: Vec<u64>,
    errors: BTreeMap<String, u64>,
}

async fn run_workload(
    workload: Workload,
    args: &Args,
    channels: &[Channel],
    sessions: &[String],
    payload_len: usize,
    seed: u64,
) -> Result<Report, Error> {
    let name = match workload {
        Workload::Read => "read",
        Workload::Sql => "sql",
        Workload::Commit => "commit",
        _ => unreachable!(),
    };
    let now = Instant::now();
    let measure_from = now + Duration::from_secs_f64(args.warmup);
    let measure_until = measure_from + Duration::from_secs_f64(args.duration);
    let mut tasks = Vec::with_capacity(sessions.len());
    for (i, session) in sessions.iter().enumerate() {
        let mut client = SpannerClient::new(channels[i % channels.len()].clone());
        let session = session.clone();
        let rows = args.rows;
        let stale_ms = args.stale_ms;
        let mut rng = rand::rngs::StdRng::seed_from_u64(
            seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        );
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::with_capacity(1 << 16);
            let mut errors: BTreeMap<String, u64> = BTreeMap::new();
            let mut version = 1u64;
            loop {
                let key = rng.gen_range(0..rows);
                let start = Instant::now();
                if start >= measure_until {
                    break;
                }
                let outcome: Result<(), String> = match workload {
                    Workload::Read => client
                        .read(pb::ReadRequest {
                            session: session.clone(),
                            transaction: Some(single_use_read_only(stale_ms)),
                            table: TABLE.into(),
                            columns: vec!["UserId".into(), "Payload".into()],
                            key_set: Some(pb::KeySet {
                                keys: vec![prost_types::ListValue {
                                    values: vec![string_value(key.to_string())],
                                }],
                                ..Default::default()
                            }),
                            ..Default::default()
                        })
                        .await
                        .map_err(|s| format!("{:?}", s.code()))
                        .and_then(|r| check_one_row(&r.into_inner(), key, payload_len)),
                    Workload::Sql => client
                        .execute_sql(pb::ExecuteSqlRequest {
                            session: session.clone(),
                            transaction: Some(single_use_read_only(stale_ms)),
                            sql: format!("SELECT UserId, Payload FROM {TABLE} WHERE UserId = @id"),
                            params: Some(prost_types::Struct {
                                fields: [("id".to_string(), string_value(key.to_string()))]
                                    .into_iter()
                                    .collect(),
                            }),
                            param_types: [(
                                "id".to_string(),
                                pb::Type {
                                    code: pb::TypeCode::Int64 as i32,
                                    ..Default::default()
                                },
                            )]
                            .into_iter()
                            .collect(),
                            ..Default::default()
                        })
                        .await
                        .map_err(|s| format!("{:?}", s.code()))
                        .and_then(|r| check_one_row(&r.into_inner(), key, payload_len)),
                    Workload::Commit => {
                        version += 1;
                        client
                            .commit(pb::CommitRequest {
                                session: session.clone(),
                                mutations: vec![write_mutation(std::iter::once((
                                    key,
                                    payload(key, version, payload_len),
                                )))],
                                transaction: Some(single_use_read_write()),
                                ..Default::default()
                            })
                            .await
                            .map_err(|s| format!("{:?}", s.code()))
                            .and_then(|r| match r.into_inner().commit_timestamp {
                                Some(_) => Ok(()),
                                None => Err("no commit timestamp".into()),
                            })
                    }
                    _ => unreachable!(),
                };
                let end = Instant::now();
                if start >= measure_from && end <= measure_until {
                    match outcome {
                        Ok(()) => latencies.push((end - start).as_nanos() as u64),
                        Err(e) => *errors.entry(e).or_default() += 1,
                    }
                }
            }
            WorkerResult { latencies, errors }
        }));
    }
    let mut latencies = Vec::new();
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    for t in tasks {
        let w = t.await?;
        latencies.extend(w.latencies);
        for (k, v) in w.errors {
            *errors.entry(k).or_default() += v;
        }
    }
    latencies.sort_unstable();
    Ok(Report {
        name,
        ops: latencies.len() as u64,
        errors,
        seconds: args.duration,
        latencies,
    })
}

/// A point read must return exactly the row asked for, with its payload.
fn check_one_row(r: &pb::ResultSet, key: u64, payload_len: usize) -> Result<(), String> {
    if r.rows.len() != 1 {
        return Err(format!("{} rows", r.rows.len()));
    }
    let row = &r.rows[0].values;
    let ok = row.len() == 2
        && matches!(&row[0].kind, Some(prost_types::value::Kind::StringValue(k)) if *k == key.to_string())
        && matches!(&row[1].kind, Some(prost_types::value::Kind::StringValue(p)) if p.len() == payload_len);
    if ok {
        Ok(())
    } else {
        Err("wrong row".into())
    }
}

fn print_table(args: &Args, reports: &[Report]) {
    println!();
    println!(
        "{} sessions over {} channels, {} s measured after {} s warm-up, {} rows of {} bytes{}",
        args.sessions,
        args.channels,
        args.duration,
        args.warmup,
        args.rows,
        args.row_bytes,
        if args.spawn {
            ", in-process server"
        } else {
            ""
        }
    );
    println!("| workload | ops/s | p50 µs | p90 µs | p99 µs | max µs | mean µs | ops | errors |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for r in reports {
        let errors = if r.errors.is_empty() {
            "0".to_string()
        } else {
            r.errors
                .iter()
                .map(|(k, v)| format!("{v} {k}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        println!(
            "| {} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {} | {} |",
            r.name,
            r.throughput(),
            r.percentile_us(50.0),
            r.percentile_us(90.0),
            r.percentile_us(99.0),
            r.percentile_us(100.0),
            r.mean_us(),
            r.ops,
            errors
        );
    }
}

fn json(args: &Args, reports: &[Report]) -> serde_json::Value {
    let workloads: Vec<serde_json::Value> = reports
        .iter()
        .map(|r| {
            serde_json::json!({
                "workload": r.name,
                "ops_per_sec": r.throughput(),
                "ops": r.ops,
                "errors": r.error_count(),
                "errors_by_code": r.errors,
                "p50_us": r.percentile_us(50.0),
                "p90_us": r.percentile_us(90.0),
                "p99_us": r.percentile_us(99.0),
                "max_us": r.percentile_us(100.0),
                "mean_us": r.mean_us(),
            })
        })
        .collect();
    serde_json::json!({
        "sessions": args.sessions,
        "channels": args.channels,
        "duration_s": args.duration,
        "warmup_s": args.warmup,
        "rows": args.rows,
        "row_bytes": args.row_bytes,
        "spawn": args.spawn,
        "results": workloads,
    })
}
