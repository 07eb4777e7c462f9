//! `hotspots-real`: the simulator's seed scenario (`rowtree demo hotspots`)
//! run for real against `rowtree serve --nodes N`, over Spanner's gRPC API.
//!
//! For each design it creates a database with the design's seed schema
//! (`examples/seeds/<design>.sql`, compiled in), offers a fixed load of
//! `--load` x N x C operations per second (C: one node's throughput for the
//! design's operation, from `--node-capacity`, which must be the server's)
//! from `--sessions` concurrent sessions with single-use `Commit`s of one
//! `InsertOrUpdate` mutation, and reports the writes/s achieved over the last
//! third of the run, the splits at the end (`SPANNER_SYS.SPLITS`), every
//! unsplittable reason seen while polling it, and the rows of
//! `SPANNER_SYS.SPLIT_STATS_TOP_MINUTE`.
//!
//! The workload mirrors `rowtree_sim::demo`: user ids uniform over
//! 1..1,000,000, `LastAccess` the time of the operation; the four
//! `UserAccessLogs` designs insert a row, the two index designs set
//! `Users.LastAccess` of a user (the first time a user is touched this
//! inserts the row and its index entry; the simulator assumes every user
//! exists with a value from the day before, so its updates also delete an
//! old entry).
//!
//! Offered load: operation k is due at `start + k / rate`; a session takes
//! the next due operation, waits for its time, and runs it. An operation
//! that no session could start within `--timeout` of its due time is counted
//! as shed (the simulator's queue timeout), so the offered rate stays fixed
//! whatever the server does.
//!
//! ```sh
//! rowtree serve --in-memory --nodes 4 --node-capacity 700 --split-threshold 0.054 \
//!     --split-hot-for 10 --split-cooldown 5 --balance-after 15 &
//! cargo run --release -p rowtree-bench --bin hotspots-real -- --node-capacity 700 --minutes 4
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use rand::{Rng, SeedableRng};
use tonic::transport::{Channel, Endpoint};

use googleapis_tonic_google_spanner_admin_database_v1::google::spanner::admin::database::v1 as dpb;
use googleapis_tonic_google_spanner_admin_instance_v1::google::spanner::admin::instance::v1 as ipb;
use googleapis_tonic_google_spanner_v1::google::spanner::v1 as pb;

use dpb::database_admin_client::DatabaseAdminClient;
use ipb::instance_admin_client::InstanceAdminClient;
use pb::spanner_client::SpannerClient;

const PROJECT: &str = "projects/hotspots";
const INSTANCE_ID: &str = "hotspots";
/// A read's and a written row's cost in node-seconds (`rowtree_kv::nodes`).
const READS_PER_ROW_WRITE: f64 = 22_500.0 / 3_500.0;
const USERS: u64 = 1_000_000;

/// One design of the seed scenario (as `rowtree_sim::demo::DESIGNS`).
struct Design {
    name: &'static str,
    schema: &'static str,
    /// Inserts into UserAccessLogs (true) or sets Users.LastAccess (false).
    inserts: bool,
}

const DESIGNS: [Design; 6] = [
    Design {
        name: "timestamp-first",
        schema: include_str!("../../../../examples/seeds/timestamp-first.sql"),
        inserts: true,
    },
    Design {
        name: "uuid",
        schema: include_str!("../../../../examples/seeds/uuid.sql"),
        inserts: true,
    },
    Design {
        name: "swapped-key",
        schema: include_str!("../../../../examples/seeds/swapped-key.sql"),
        inserts: true,
    },
    Design {
        name: "hash-sharded",
        schema: include_str!("../../../../examples/seeds/hash-sharded.sql"),
        inserts: true,
    },
    Design {
        name: "index-non-interleaved",
        schema: include_str!("../../../../examples/seeds/index-non-interleaved.sql"),
        inserts: false,
    },
    Design {
        name: "index-interleaved",
        schema: include_str!("../../../../examples/seeds/index-interleaved.sql"),
        inserts: false,
    },
];

/// Runs the seed scenario's six designs against a running `rowtree serve`.
#[derive(Debug, Parser)]
#[command(name = "hotspots-real")]
struct Args {
    /// Address of a running `rowtree serve`.
    #[arg(long, default_value = "127.0.0.1:9010")]
    addr: SocketAddr,
    /// The server's nodes (`rowtree serve --nodes`).
    #[arg(long, default_value_t = 4)]
    nodes: u32,
    /// The server's `--node-capacity` (reads/s per node): a node writes
    /// capacity x 3,500 / 22,500 rows per second.
    #[arg(long)]
    node_capacity: f64,
    /// Offered load per node, in C (1: N x C on N nodes, as the simulator's demo).
    #[arg(long, default_value_t = 1.0)]
    load: f64,
    /// Minutes each design runs.
    #[arg(long, default_value_t = 3.0)]
    minutes: f64,
    /// Concurrent sessions (most operations in flight).
    #[arg(long, default_value_t = 64)]
    sessions: usize,
    /// gRPC channels the sessions are spread over.
    #[arg(long, default_value_t = 4)]
    channels: usize,
    /// Seconds after its due time an operation no session has started is shed.
    #[arg(long, default_value_t = 1.0)]
    timeout: f64,
    /// Only these designs (comma-separated names; default: all six).
    #[arg(long, value_delimiter = ',')]
    designs: Vec<String>,
    /// Seconds between polls of SPANNER_SYS.SPLITS for unsplittable reasons.
    #[arg(long, default_value_t = 10.0)]
    poll: f64,
    /// Seed of the random user ids.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Also print the results as one JSON object on the last line.
    #[arg(long)]
    json: bool,
}

type Error = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main]
async fn main() -> Result<(), Error> {
    let args = Args::parse();
    if args.sessions == 0 || args.channels == 0 || args.node_capacity <= 0.0 {
        return Err("--sessions, --channels and --node-capacity must be positive".into());
    }
    let designs: Vec<&Design> = if args.designs.is_empty() {
        DESIGNS.iter().collect()
    } else {
        let mut v = Vec::new();
        for name in &args.designs {
            match DESIGNS.iter().find(|d| d.name == name) {
                Some(d) => v.push(d),
                None => return Err(format!("unknown design {name}").into()),
            }
        }
        v
    };
    let endpoint = Endpoint::from_shared(format!("http://{}", args.addr))?
        .tcp_nodelay(true)
        .connect_timeout(Duration::from_secs(5));
    let mut channels = Vec::new();
    for _ in 0..args.channels {
        channels.push(endpoint.connect().await?);
    }
    let instance = ensure_instance(&channels[0]).await?;
    let mut results = Vec::new();
    for d in designs {
        let r = run_design(&args, d, &channels, &instance).await?;
        eprintln!(
            "{}: {:.1} ops/s settled ({:.2} C), {} splits",
            r.name, r.settled_ops, r.settled_c, r.splits
        );
        results.push(r);
    }
    print_table(&args, &results);
    if args.json {
        let designs: Vec<serde_json::Value> = results.iter().map(DesignResult::json).collect();
        println!(
            "{}",
            serde_json::json!({"nodes": args.nodes, "node_capacity": args.node_capacity,
                "load": args.load, "minutes": args.minutes, "designs": designs})
        );
    }
    Ok(())
}

struct DesignResult {
    name: &'static str,
    /// One node's operations per second for this design (C).
    c: f64,
    offered: f64,
    settled_ops: f64,
    settled_writes: f64,
    settled_c: f64,
    shed: u64,
    errors: BTreeMap<String, u64>,
    p50_ms: f64,
    p99_ms: f64,
    /// Splits at the end, and how many hold the loaded table or index.
    splits: usize,
    loaded_splits: usize,
    /// Rows written per second per node at the end (SPANNER_SYS.SPLITS).
    node_writes: BTreeMap<i64, f64>,
    reasons: BTreeSet<String>,
    top_minute: Vec<String>,
    /// Completed operations per 10 s window.
    timeline: Vec<u64>,
}

impl DesignResult {
    fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "name": self.name, "c_ops_per_sec": self.c, "offered_ops_per_sec": self.offered,
            "settled_ops_per_sec": self.settled_ops, "settled_writes_per_sec": self.settled_writes,
            "throughput_per_node_capacity": self.settled_c, "shed": self.shed,
            "errors": self.errors, "p50_ms": self.p50_ms, "p99_ms": self.p99_ms,
            "splits": self.splits, "loaded_splits": self.loaded_splits,
            "node_writes_per_sec": self.node_writes.iter().map(|(k, v)| (k.to_string(), *v)).collect::<BTreeMap<_, _>>(),
            "unsplittable_reasons": self.reasons, "split_stats_top_minute": self.top_minute,
            "ops_per_10s": self.timeline,
        })
    }
}

async fn ensure_instance(channel: &Channel) -> Result<String, Error> {
    let mut instances = InstanceAdminClient::new(channel.clone());
    let instance = format!("{PROJECT}/instances/{INSTANCE_ID}");
    match instances
        .create_instance(ipb::CreateInstanceRequest {
            parent: PROJECT.into(),
            instance_id: INSTANCE_ID.into(),
            instance: Some(ipb::Instance {
                name: instance.clone(),
                config: format!("{PROJECT}/instanceConfigs/emulator-config"),
                display_name: "hotspots".into(),
                node_count: 1,
                ..Default::default()
            }),
        })
        .await
    {
        Ok(_) => {}
        Err(s) if s.code() == tonic::Code::AlreadyExists => {}
        Err(s) => return Err(format!("CreateInstance: {s}").into()),
    }
    Ok(instance)
}

/// The statements of a seed file: comments dropped, split at `;`.
fn statements(sql: &str) -> Vec<String> {
    let text: String = sql
        .lines()
        .map(|l| match l.find("--") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    text.split(';')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

fn string_value(s: String) -> prost_types::Value {
    prost_types::Value {
        kind: Some(prost_types::value::Kind::StringValue(s)),
    }
}

fn uuid_v4(rng: &mut impl Rng) -> String {
    let mut b: [u8; 16] = rng.gen();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// The design's operation: one mutation.
fn mutation(design: &Design, rng: &mut impl Rng) -> pb::Mutation {
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Nanos, true);
    let user = rng.gen_range(1..=USERS).to_string();
    let (table, columns, values) = match design.name {
        "uuid" => (
            "UserAccessLogs",
            vec!["LogEntryId", "LastAccess", "UserId"],
            vec![uuid_v4(rng), now, user],
        ),
        // hash-sharded: ShardId is a stored generated column.
        _ if design.inserts => (
            "UserAccessLogs",
            vec!["LastAccess", "UserId"],
            vec![now, user],
        ),
        _ => ("Users", vec!["UserId", "LastAccess"], vec![user, now]),
    };
    pb::Mutation {
        operation: Some(pb::mutation::Operation::InsertOrUpdate(
            pb::mutation::Write {
                table: table.into(),
                columns: columns.into_iter().map(String::from).collect(),
                values: vec![prost_types::ListValue {
                    values: values.into_iter().map(string_value).collect(),
                }],
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

fn strong() -> pb::TransactionSelector {
    pb::TransactionSelector {
        selector: Some(pb::transaction_selector::Selector::SingleUse(
            pb::TransactionOptions {
                mode: Some(pb::transaction_options::Mode::ReadOnly(
                    pb::transaction_options::ReadOnly {
                        return_read_timestamp: false,
                        timestamp_bound: Some(
                            pb::transaction_options::read_only::TimestampBound::Strong(true),
                        ),
                    },
                )),
                ..Default::default()
            },
        )),
    }
}

/// A value as text (arrays joined with `,`).
fn text(v: &prost_types::Value) -> String {
    use prost_types::value::Kind;
    match &v.kind {
        Some(Kind::StringValue(s)) => s.clone(),
        Some(Kind::NumberValue(n)) => format!("{n}"),
        Some(Kind::BoolValue(b)) => b.to_string(),
        Some(Kind::ListValue(l)) => l.values.iter().map(text).collect::<Vec<_>>().join(","),
        Some(Kind::NullValue(_)) | None => String::new(),
        Some(Kind::StructValue(_)) => "{..}".into(),
    }
}

async fn query(
    client: &mut SpannerClient<Channel>,
    session: &str,
    sql: &str,
) -> Result<Vec<Vec<String>>, Error> {
    let r = client
        .execute_sql(pb::ExecuteSqlRequest {
            session: session.into(),
            transaction: Some(strong()),
            sql: sql.into(),
            ..Default::default()
        })
        .await
        .map_err(|s| format!("{sql}: {s}"))?
        .into_inner();
    Ok(r.rows
        .iter()
        .map(|row| row.values.iter().map(text).collect())
        .collect())
}

const SPLITS_SQL: &str = "SELECT SPLIT_ID, NODE, SPLIT_START, SPLIT_LIMIT, AFFECTED_TABLES, \
     WRITES_PER_SECOND, UNSPLITTABLE_REASON FROM SPANNER_SYS.SPLITS";

async fn run_design(
    args: &Args,
    design: &Design,
    channels: &[Channel],
    instance: &str,
) -> Result<DesignResult, Error> {
    let mut admin = DatabaseAdminClient::new(channels[0].clone());
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_millis();
    // Database ids have at most 30 characters.
    let short: String = design
        .name
        .split('-')
        .map(|w| &w[..w.len().min(5)])
        .collect::<Vec<_>>()
        .join("-");
    let db_id = format!("{short}-{}", stamp % 100_000_000);
    let database = format!("{instance}/databases/{db_id}");
    admin
        .create_database(dpb::CreateDatabaseRequest {
            parent: instance.into(),
            create_statement: format!("CREATE DATABASE `{db_id}`"),
            extra_statements: statements(design.schema),
            ..Default::default()
        })
        .await
        .map_err(|s| format!("CreateDatabase {db_id}: {s}"))?;
    eprintln!("{}: database {database}", design.name);

    let mut client = SpannerClient::new(channels[0].clone());
    let mut sessions = Vec::new();
    while sessions.len() < args.sessions + 1 {
        let r = client
            .batch_create_sessions(pb::BatchCreateSessionsRequest {
                database: database.clone(),
                session_template: None,
                session_count: (args.sessions + 1 - sessions.len()) as i32,
            })
            .await
            .map_err(|s| format!("BatchCreateSessions: {s}"))?
            .into_inner();
        if r.session.is_empty() {
            return Err("BatchCreateSessions returned no session".into());
        }
        sessions.extend(r.session.into_iter().map(|s| s.name));
    }
    let sys_session = sessions.pop().expect("sessions + 1 created");

    // C: one node's operations per second for the design's operation (a
    // log row, or a Users row and its index entry).
    let rows_per_op = if design.inserts { 1.0 } else { 2.0 };
    let c = args.node_capacity / READS_PER_ROW_WRITE / rows_per_op;
    let rate = c * args.nodes as f64 * args.load;
    let duration = Duration::from_secs_f64(args.minutes * 60.0);
    let windows = (duration.as_secs() as usize).div_ceil(10).max(1);
    let timeline: Arc<Vec<AtomicU64>> = Arc::new((0..windows).map(|_| AtomicU64::new(0)).collect());
    let next = Arc::new(AtomicU64::new(0));
    let shed = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let end = start + duration;
    let timeout = Duration::from_secs_f64(args.timeout);

    let mut tasks = Vec::new();
    for (i, session) in sessions.iter().enumerate() {
        let mut client = SpannerClient::new(channels[i % channels.len()].clone());
        let session = session.clone();
        let (timeline, next, shed) = (timeline.clone(), next.clone(), shed.clone());
        let mut rng = rand::rngs::StdRng::seed_from_u64(
            args.seed ^ (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        );
        let design_index = DESIGNS.iter().position(|d| d.name == design.name).unwrap();
        tasks.push(tokio::spawn(async move {
            let design = &DESIGNS[design_index];
            let mut latencies = Vec::new();
            let mut errors: BTreeMap<String, u64> = BTreeMap::new();
            loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let due = start + Duration::from_secs_f64(k as f64 / rate);
                if due >= end {
                    break;
                }
                let now = Instant::now();
                if due > now {
                    tokio::time::sleep_until(due.into()).await;
                } else if now - due > timeout {
                    shed.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
                let began = Instant::now();
                let r = client
                    .commit(pb::CommitRequest {
                        session: session.clone(),
                        mutations: vec![mutation(design, &mut rng)],
                        transaction: Some(single_use_read_write()),
                        ..Default::default()
                    })
                    .await;
                let done = Instant::now();
                match r {
                    Ok(_) => {
                        latencies.push((done - began).as_secs_f64());
                        let w = ((done - start).as_secs() / 10) as usize;
                        if let Some(c) = timeline.get(w) {
                            c.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    Err(s) => *errors.entry(format!("{:?}", s.code())).or_default() += 1,
                }
            }
            (latencies, errors)
        }));
    }

    // Poll SPANNER_SYS.SPLITS for unsplittable reasons while the load runs.
    let mut reasons = BTreeSet::new();
    let poll = Duration::from_secs_f64(args.poll.max(1.0));
    while Instant::now() + poll < end {
        tokio::time::sleep(poll).await;
        match query(&mut client, &sys_session, SPLITS_SQL).await {
            Ok(rows) => {
                let loaded: Vec<&Vec<String>> = rows
                    .iter()
                    .filter(|r| r[5].parse::<f64>().unwrap_or(0.0) > 0.5)
                    .collect();
                let nodes: BTreeSet<&str> = loaded.iter().map(|r| r[1].as_str()).collect();
                for r in &rows {
                    if !r[6].is_empty() {
                        reasons.insert(r[6].clone());
                    }
                }
                eprintln!(
                    "{}: t={:.0}s completed {} splits {} (loaded {} on nodes {:?}) reasons {:?}",
                    design.name,
                    start.elapsed().as_secs_f64(),
                    timeline
                        .iter()
                        .map(|c| c.load(Ordering::Relaxed))
                        .sum::<u64>(),
                    rows.len(),
                    loaded.len(),
                    nodes,
                    reasons
                );
            }
            Err(e) => eprintln!("{}: polling SPLITS: {e}", design.name),
        }
    }
    let mut latencies = Vec::new();
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    for t in tasks {
        let (l, e) = t.await?;
        latencies.extend(l);
        for (k, v) in e {
            *errors.entry(k).or_default() += v;
        }
    }
    latencies.sort_by(f64::total_cmp);
    let pct = |p: f64| -> f64 {
        if latencies.is_empty() {
            return f64::NAN;
        }
        let i = ((p / 100.0) * latencies.len() as f64).ceil() as usize;
        latencies[i.clamp(1, latencies.len()) - 1] * 1000.0
    };
    let timeline: Vec<u64> = timeline.iter().map(|c| c.load(Ordering::Relaxed)).collect();
    // The last third, in whole 10 s windows.
    let from = timeline.len() - (timeline.len() / 3).max(1);
    let settled_ops =
        timeline[from..].iter().sum::<u64>() as f64 / ((timeline.len() - from) as f64 * 10.0);

    let rows = query(&mut client, &sys_session, SPLITS_SQL).await?;
    let mut node_writes: BTreeMap<i64, f64> = BTreeMap::new();
    let mut loaded_splits = 0;
    for r in &rows {
        if !r[6].is_empty() {
            reasons.insert(r[6].clone());
        }
        let w = r[5].parse::<f64>().unwrap_or(0.0);
        if w > 0.5 {
            loaded_splits += 1;
            *node_writes.entry(r[1].parse().unwrap_or(-1)).or_default() += w;
        }
        println!(
            "{}: split {} node {} [{}, {}) {} writes/s {:.0} {}",
            design.name, r[0], r[1], r[2], r[3], r[4], w, r[6]
        );
    }
    let top = query(
        &mut client,
        &sys_session,
        "SELECT INTERVAL_END, SPLIT_START, SPLIT_LIMIT, CPU_USAGE_SCORE, UNSPLITTABLE_REASONS \
         FROM SPANNER_SYS.SPLIT_STATS_TOP_MINUTE ORDER BY INTERVAL_END DESC, CPU_USAGE_SCORE DESC",
    )
    .await?;
    let top_minute: Vec<String> = top.iter().map(|r| r.join(" | ")).collect();
    for t in &top_minute {
        println!("{}: SPLIT_STATS_TOP_MINUTE {t}", design.name);
        if let Some(reason) = t.rsplit(" | ").next() {
            for r in reason.split(',').filter(|r| !r.is_empty()) {
                reasons.insert(r.to_string());
            }
        }
    }
    let _ = client
        .delete_session(pb::DeleteSessionRequest { name: sys_session })
        .await;
    for s in sessions {
        let _ = client
            .delete_session(pb::DeleteSessionRequest { name: s })
            .await;
    }
    let _ = admin
        .drop_database(dpb::DropDatabaseRequest { database })
        .await;
    Ok(DesignResult {
        name: design.name,
        c,
        offered: rate,
        settled_ops,
        settled_writes: settled_ops * rows_per_op,
        settled_c: settled_ops / c,
        shed: shed.load(Ordering::Relaxed),
        errors,
        p50_ms: pct(50.0),
        p99_ms: pct(99.0),
        splits: rows.len(),
        loaded_splits,
        node_writes,
        reasons,
        top_minute,
        timeline,
    })
}

fn print_table(args: &Args, results: &[DesignResult]) {
    println!();
    println!(
        "{} nodes of {} reads/s, offered {} x {} x C for {} min per design, {} sessions; settled = last third",
        args.nodes, args.node_capacity, args.nodes, args.load, args.minutes, args.sessions
    );
    println!("| design | C ops/s | offered ops/s | settled ops/s | settled rows/s | x C | p50 ms | p99 ms | shed | splits (loaded) | rows/s per node at the end | unsplittable reasons |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|");
    for r in results {
        let nodes = r
            .node_writes
            .iter()
            .map(|(n, w)| format!("{n}: {w:.0}"))
            .collect::<Vec<_>>()
            .join(", ");
        let reasons = r.reasons.iter().cloned().collect::<Vec<_>>().join(", ");
        let errors: u64 = r.errors.values().sum();
        println!(
            "| {} | {:.0} | {:.0} | {:.0} | {:.0} | {:.2} | {:.0} | {:.0} | {}{} | {} ({}) | {} | {} |",
            r.name,
            r.c,
            r.offered,
            r.settled_ops,
            r.settled_writes,
            r.settled_c,
            r.p50_ms,
            r.p99_ms,
            r.shed,
            if errors > 0 { format!(" + {errors} errors") } else { String::new() },
            r.splits,
            r.loaded_splits,
            nodes,
            reasons
        );
    }
    for r in results {
        println!("{} completed ops per 10 s: {:?}", r.name, r.timeline);
    }
}
