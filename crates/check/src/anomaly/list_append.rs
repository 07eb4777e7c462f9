//! The list-append workload: transactions over a few lists, checked by
//! [`super::history::check`].
//!
//! Table `Lists (K INT64, Vals ARRAY<INT64>)` holds [`KEYS`] lists, all
//! empty at first. Each client runs transactions of one to four operations
//! on random keys, few enough keys that transactions conflict all the time:
//!
//! - read-write (70%): reads (`SELECT Vals ... WHERE K = @k`) and appends
//!   (`UPDATE Lists SET Vals = ARRAY_CONCAT(Vals, [@e])`) of elements that
//!   are unique in the run, then a commit; its commit timestamp is kept;
//! - strong read-only (20%) and stale read-only (10%, 0 to 3 s in the
//!   past, [`super::STALEST`]): reads in a read-only transaction whose read
//!   timestamp is kept. On a cluster, the stale reads older than a
//!   replica's safe time are served by that replica's node when the client
//!   talks to one that holds a replica without leading (follower reads,
//!   counted in [`Report::follower_reads`]), the others by the leader.
//!
//! After the run, with the clients stopped, every list is read once more:
//! the final state that must hold every acknowledged append.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::history::{self, Elem, Key, Op, Outcome, Txn};
use super::{bounded, nemesis, since, stale, Options, SessionSlot, Strikes, Target, STALEST};
use crate::client::{timestamp_nanos, Client, ResultSet, Selector, Statement, TxnMode};
use crate::error::{Error, Result};
use crate::wire::{insert, Value};

/// How many lists the clients share.
pub const KEYS: i64 = 6;

/// What a run did and what the checker found.
#[derive(Debug)]
pub struct Report {
    /// The checker's verdict and counts.
    pub check: history::Report,
    /// What the nemesis did, and what it saw.
    pub strikes: Strikes,
    /// Elements in the final lists.
    pub final_elements: usize,
    /// Reads of read-only transactions that a cluster node's replica
    /// served without the leader (follower reads).
    pub follower_reads: usize,
    /// How long the clients ran.
    pub elapsed: Duration,
    /// The voters of each of the database's split groups at the end, on a
    /// cluster (see [`Options::split_replicas`]).
    pub split_voters: Vec<Vec<u64>>,
    /// The transactions the anomalies name (the first 40), as recorded.
    pub involved: Vec<String>,
}

impl Report {
    /// The history checked clean, and no partition's minority acknowledged
    /// a write.
    pub fn ok(&self) -> bool {
        self.check.ok() && self.strikes.ok()
    }
}

/// Runs the workload with `options` and checks its history.
pub async fn run(options: &Options) -> Result<Report> {
    let target = Target::start(
        options,
        &["CREATE TABLE Lists (K INT64 NOT NULL, Vals ARRAY<INT64>) PRIMARY KEY (K)"],
    )
    .await?;
    {
        let client = target.first_client().await;
        let session = client.create_session(&target.database).await?;
        let rows = (0..KEYS)
            .map(|k| vec![Value::Int64(k), Value::Array(Vec::new())])
            .collect();
        client
            .commit(
                &session,
                Selector::SingleUse(TxnMode::ReadWrite),
                vec![insert("Lists", &["K", "Vals"], rows)],
            )
            .await?;
    }
    target.cut("Lists", KEYS, options.splits).await?;
    target.wait_for_groups(options.splits.max(1)).await;
    // Stale reads go up to 3 s into the past: start once that past holds
    // the initial rows.
    tokio::time::sleep(STALEST + Duration::from_millis(100)).await;
    let epoch = Instant::now();
    let until = epoch + options.duration;
    let next_elem = Arc::new(AtomicI64::new(0));
    let history = Arc::new(std::sync::Mutex::new(Vec::new()));
    let follower_reads = Arc::new(AtomicUsize::new(0));
    let nemesis = tokio::spawn(nemesis(
        target.clone(),
        options.kill_every,
        until,
        options.seed,
    ));
    let workers: Vec<_> = (0..options.clients)
        .map(|i| {
            let (target, next_elem, history) = (target.clone(), next_elem.clone(), history.clone());
            let follower_reads = follower_reads.clone();
            let seed = options.seed.wrapping_mul(1_000_003).wrapping_add(i as u64);
            tokio::spawn(async move {
                let shared = Shared {
                    next_elem: &next_elem,
                    history: &history,
                    follower_reads: &follower_reads,
                };
                worker(&target, seed, epoch, until, shared).await;
            })
        })
        .collect();
    for w in workers {
        w.await
            .map_err(|e| Error::Protocol(format!("a client task failed: {e}")))?;
    }
    nemesis
        .await
        .map_err(|e| Error::Protocol(format!("the nemesis failed: {e}")))??;
    let elapsed = epoch.elapsed();
    let finals = final_reads(&target).await?;
    let split_voters = target.split_voters().await;
    target.stop().await?;
    let txns = std::mem::take(&mut *history.lock().expect("history"));
    let check = history::check(&txns, &finals);
    let mut named: Vec<usize> = check.anomalies.iter().flat_map(|a| a.txns()).collect();
    named.sort_unstable();
    named.dedup();
    let involved = named
        .into_iter()
        .take(40)
        .filter_map(|i| txns.get(i).map(|t| format!("txn {i}: {}", t.brief())))
        .collect();
    Ok(Report {
        check,
        strikes: target.strikes(),
        final_elements: finals.values().map(Vec::len).sum(),
        follower_reads: follower_reads.load(Ordering::Relaxed),
        elapsed,
        split_voters,
        involved,
    })
}

/// What the clients share: the next element to append, the history, and
/// the count of follower reads.
struct Shared<'a> {
    next_elem: &'a AtomicI64,
    history: &'a std::sync::Mutex<Vec<Txn>>,
    follower_reads: &'a AtomicUsize,
}

/// One client: transactions until `until`, each recorded in `history`.
async fn worker(target: &Target, seed: u64, epoch: Instant, until: Instant, shared: Shared<'_>) {
    let Shared {
        next_elem,
        history,
        follower_reads,
    } = shared;
    let mut rng = StdRng::seed_from_u64(seed);
    let mut slot = SessionSlot::new();
    while Instant::now() < until {
        let Some((client, session)) = slot.next(target).await else {
            continue;
        };
        let kind = rng.gen_range(0..10);
        let mode = match kind {
            0..=6 => TxnMode::ReadWrite,
            7 | 8 => TxnMode::ReadOnlyStrong,
            _ => TxnMode::ReadOnlyStale(stale(&mut rng)),
        };
        let mut ops: Vec<Op> = (0..rng.gen_range(1..=4))
            .map(|_| {
                let k = rng.gen_range(0..KEYS);
                if mode == TxnMode::ReadWrite && rng.gen_bool(0.5) {
                    Op::Append(k, next_elem.fetch_add(1, Ordering::Relaxed))
                } else {
                    Op::Read(k, None)
                }
            })
            .collect();
        let invoked = since(epoch);
        let began = Instant::now();
        let result = match &mode {
            TxnMode::ReadWrite => read_write(&client, &session, &mut ops).await,
            ro => read_only(&client, &session, ro, &mut ops, follower_reads).await,
        };
        let completed = since(epoch);
        let (outcome, timestamp) = match result {
            Ok(ts) => {
                // Only a transaction that appended is a write. One that
                // only read commits with nothing to replicate: its leader
                // answers it alone, rightly, for as long as its lease
                // lasts, which reaches a little way into a partition.
                let wrote = ops.iter().any(|op| matches!(op, Op::Append(..)));
                if mode == TxnMode::ReadWrite && wrote {
                    target.acknowledged(&client, began);
                }
                (Outcome::Committed, ts)
            }
            Err(Failure::Before(e)) => {
                trace_failure(target, seed, began, "before its commit", &e);
                slot.reset_after(&e);
                (Outcome::Failed, None)
            }
            Err(Failure::Commit(e)) => {
                trace_failure(target, seed, began, "at its commit", &e);
                slot.reset_after(&e);
                let unknown = e.is_unavailable() || matches!(e, Error::Timeout(_));
                let outcome = if unknown {
                    Outcome::Unknown
                } else {
                    Outcome::Failed
                };
                (outcome, None)
            }
        };
        history.lock().expect("history").push(Txn {
            ops,
            outcome,
            invoked,
            completed,
            timestamp,
            stale: matches!(mode, TxnMode::ReadOnlyStale(_)),
        });
    }
}

/// Says a failed transaction on stderr, if the run traces failures
/// ([`super::Options::trace_failures`]).
fn trace_failure(target: &Target, client: u64, began: Instant, when: &str, error: &Error) {
    if target.trace_failures {
        eprintln!(
            "{} client {client}: a transaction failed {when} after {:.3} s: {error}",
            super::utc_time_of_day(),
            began.elapsed().as_secs_f64()
        );
    }
}

/// Why a transaction did not commit: before its commit was sent (no
/// effect), or at the commit (no effect, or unknown if no answer came).
enum Failure {
    Before(Error),
    Commit(Error),
}

/// Runs `ops` in a read-write transaction; the commit timestamp.
async fn read_write(
    client: &Client,
    session: &str,
    ops: &mut [Op],
) -> std::result::Result<Option<i128>, Failure> {
    let id = bounded("begin", client.begin(session, TxnMode::ReadWrite))
        .await
        .map_err(Failure::Before)?;
    let selector = Selector::Id(id.clone());
    for (seqno, op) in ops.iter_mut().enumerate() {
        let result = match op {
            Op::Read(k, result) => {
                let statement = Statement::new("SELECT Vals FROM Lists WHERE K = @k")
                    .param("k", Value::Int64(*k));
                bounded(
                    "read",
                    client.execute_sql_seq(session, &statement, selector.clone(), seqno as i64 + 1),
                )
                .await
                .and_then(|rs| list_of(&rs))
                .map(|list| *result = Some(list))
            }
            Op::Append(k, e) => {
                let statement =
                    Statement::new("UPDATE Lists SET Vals = ARRAY_CONCAT(Vals, [@e]) WHERE K = @k")
                        .param("k", Value::Int64(*k))
                        .param("e", Value::Int64(*e));
                bounded(
                    "append",
                    client.execute_sql_seq(session, &statement, selector.clone(), seqno as i64 + 1),
                )
                .await
                .and_then(|rs| match rs.row_count {
                    Some(1) => Ok(()),
                    n => Err(Error::Protocol(format!("an append updated {n:?} rows"))),
                })
            }
        };
        if let Err(e) = result {
            let _ =
                tokio::time::timeout(Duration::from_secs(2), client.rollback(session, &id)).await;
            return Err(Failure::Before(e));
        }
    }
    let ts = bounded("commit", client.commit(session, selector, Vec::new()))
        .await
        .map_err(Failure::Commit)?;
    Ok(Some(timestamp_nanos(&ts)))
}

/// Runs `ops` (reads) in a read-only transaction; its read timestamp.
async fn read_only(
    client: &Client,
    session: &str,
    mode: &TxnMode,
    ops: &mut [Op],
    follower_reads: &AtomicUsize,
) -> std::result::Result<Option<i128>, Failure> {
    let txn = bounded(
        "begin read-only",
        client.begin_transaction(session, mode.to_pb()),
    )
    .await
    .map_err(Failure::Before)?;
    let selector = Selector::Id(txn.id);
    for op in ops.iter_mut() {
        if let Op::Read(k, result) = op {
            let statement =
                Statement::new("SELECT Vals FROM Lists WHERE K = @k").param("k", Value::Int64(*k));
            let list = bounded(
                "read",
                client.execute_sql(session, &statement, selector.clone()),
            )
            .await
            .and_then(|rs| {
                if rs.follower_read.is_some() {
                    follower_reads.fetch_add(1, Ordering::Relaxed);
                }
                list_of(&rs)
            })
            .map_err(Failure::Before)?;
            *result = Some(list);
        }
    }
    Ok(txn.read_timestamp.as_ref().map(timestamp_nanos))
}

/// The list in a one-row `SELECT Vals` result.
fn list_of(rs: &ResultSet) -> Result<Vec<Elem>> {
    match rs.rows.as_slice() {
        [row] => match row.first() {
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| {
                    v.as_i64()
                        .ok_or_else(|| Error::Protocol(format!("not an INT64 element: {v:?}")))
                })
                .collect(),
            other => Err(Error::Protocol(format!("not a list: {other:?}"))),
        },
        rows => Err(Error::Protocol(format!("{} rows for one key", rows.len()))),
    }
}

/// Every list, read strongly once the clients have stopped (retrying
/// while the server finishes a restart).
async fn final_reads(target: &Target) -> Result<HashMap<Key, Vec<Elem>>> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let attempt = async {
            let client = target.client().await;
            let session = client.create_session(&target.database).await?;
            let rs = client
                .execute_sql(
                    &session,
                    &Statement::new("SELECT K, Vals FROM Lists ORDER BY K"),
                    Selector::strong(),
                )
                .await?;
            rs.rows
                .iter()
                .map(|row| {
                    let k = row.first().and_then(Value::as_i64);
                    let list = list_of(&ResultSet {
                        rows: vec![row[1..].to_vec()],
                        ..Default::default()
                    })?;
                    k.map(|k| (k, list))
                        .ok_or_else(|| Error::Protocol(format!("a row without a key: {row:?}")))
                })
                .collect::<Result<HashMap<_, _>>>()
        };
        match bounded("final read", attempt).await {
            Ok(finals) => return Ok(finals),
            Err(e) if Instant::now() < deadline => {
                let _ = e;
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(e) => return Err(e),
        }
    }
}
