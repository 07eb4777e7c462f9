//! The bank workload: money moves between accounts and is never created or
//! destroyed, whatever runs beside the transfers and however often the
//! server dies.
//!
//! `Accounts (Id, Balance, Audited)` starts with [`ACCOUNTS`] accounts of
//! [`INITIAL`] each. Clients run, at random:
//!
//! - transfers (70%): a read-write transaction reads two balances, moves
//!   an amount the source can afford with two UPDATEs, and logs the move
//!   in `Transfers (Id, FromId, ToId, Amount)` in the same transaction;
//! - strong reads (20%) and stale reads (10%, up to 3 s in the past; on a
//!   cluster, some served by followers: [`Report::follower_reads`]) of
//!   every balance in one read-only transaction: the total must always be
//!   `ACCOUNTS * INITIAL` and no balance negative (a snapshot that saw half
//!   a transfer would show another total);
//!
//! and one more client runs partitioned DML over every account now and then
//! (`UPDATE Accounts SET Audited = @n WHERE TRUE`), which takes the same row
//! locks the transfers need.
//!
//! At the end: every acknowledged transfer is in the log, no failed one is,
//! and each balance is its initial amount plus the logged transfers in
//! minus those out (a transfer is in the log exactly when it moved money).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::{bounded, nemesis, stale, Options, SessionSlot, Strikes, Target, STALEST};
use crate::client::{pb, Client, Selector, Statement, TxnMode};
use crate::error::{Error, Result};
use crate::wire::{insert, Value};

/// Accounts in the bank.
pub const ACCOUNTS: i64 = 8;

/// With [`Options::splits`], the transfer ids the `Transfers` table's
/// split points are spread over (a run of six minutes logs about 40,000).
const TRANSFER_IDS_CUT: i64 = 40_000;

/// How many failed transfers of each kind of error a report quotes.
pub const FAILURE_SAMPLES: usize = 3;

/// Each account's opening balance.
pub const INITIAL: i64 = 1_000;

/// What a run did and found.
#[derive(Debug, Default)]
pub struct Report {
    /// Transfers by outcome.
    pub acknowledged: usize,
    pub failed: usize,
    pub unknown: usize,
    /// Transfers that did not run because the source could not afford them.
    pub declined: usize,
    /// Snapshot reads checked (strong, stale) and those with a wrong total
    /// or a negative balance.
    pub strong_reads: usize,
    pub stale_reads: usize,
    pub bad_reads: Vec<String>,
    /// Stale snapshots a cluster node's replica served without the leader
    /// (follower reads).
    pub follower_reads: usize,
    /// Partitioned DML statements that completed.
    pub partitioned_dml: usize,
    /// Acknowledged transfers missing from the log, and failed ones in it.
    pub lost_transfers: Vec<i64>,
    pub phantom_transfers: Vec<i64>,
    /// What each phantom transfer's client was told.
    pub phantom_errors: Vec<String>,
    /// Failed transfers by kind of error (gRPC code, `Timeout`, `Other`).
    pub failure_kinds: Vec<(String, usize)>,
    /// The first [`FAILURE_SAMPLES`] failures of each kind, and its 10th,
    /// 100th, 1,000th and so on, with their errors.
    pub failure_samples: Vec<String>,
    /// Accounts whose final balance differs from what the log says.
    pub balance_mismatches: Vec<String>,
    /// The final total.
    pub final_total: i64,
    /// What the nemesis did, and what it saw.
    pub strikes: Strikes,
    /// The voters of each of the database's split groups at the end, on a
    /// cluster (see [`Options::split_replicas`]).
    pub split_voters: Vec<Vec<u64>>,
    /// Transfers decided across nodes (run by one node, with writes
    /// prepared at others), and how many of those aborted, as the nodes'
    /// logs say.
    pub across_nodes: (usize, usize),
}

impl Report {
    /// Every invariant held.
    pub fn ok(&self) -> bool {
        self.bad_reads.is_empty()
            && self.lost_transfers.is_empty()
            && self.phantom_transfers.is_empty()
            && self.balance_mismatches.is_empty()
            && self.final_total == ACCOUNTS * INITIAL
            && self.strikes.ok()
    }
}

#[derive(Default)]
struct Outcomes {
    acknowledged: HashSet<i64>,
    /// Failed transfers, with the error each got and where (before or
    /// at the commit).
    failed: HashMap<i64, String>,
    /// Failed transfers by the kind of error (its gRPC code, or what
    /// else went wrong).
    failure_kinds: std::collections::BTreeMap<String, usize>,
    /// The first few failures of each kind, as the client saw them.
    failure_samples: Vec<String>,
    unknown: HashSet<i64>,
    declined: usize,
    strong_reads: usize,
    stale_reads: usize,
    follower_reads: usize,
    bad_reads: Vec<String>,
    partitioned_dml: usize,
}

/// Runs the workload with `options` and checks its invariants.
pub async fn run(options: &Options) -> Result<Report> {
    let target = Target::start(
        options,
        &[
            "CREATE TABLE Accounts (Id INT64 NOT NULL, Balance INT64 NOT NULL, Audited INT64) PRIMARY KEY (Id)",
            "CREATE TABLE Transfers (Id INT64 NOT NULL, FromId INT64 NOT NULL, ToId INT64 NOT NULL, Amount INT64 NOT NULL) PRIMARY KEY (Id)",
        ],
    )
    .await?;
    {
        let client = target.first_client().await;
        let session = client.create_session(&target.database).await?;
        let rows = (0..ACCOUNTS)
            .map(|id| vec![Value::Int64(id), Value::Int64(INITIAL), Value::Int64(0)])
            .collect();
        client
            .commit(
                &session,
                Selector::SingleUse(TxnMode::ReadWrite),
                vec![insert("Accounts", &["Id", "Balance", "Audited"], rows)],
            )
            .await?;
    }
    target.cut("Accounts", ACCOUNTS, options.splits).await?;
    // Transfers are logged under ids counting up from 1: their table is
    // cut over the ids a run of some minutes reaches.
    target
        .cut("Transfers", TRANSFER_IDS_CUT, options.splits)
        .await?;
    target
        .wait_for_groups(1 + 2 * (options.splits.max(1) - 1))
        .await;
    // Stale reads go up to 3 s into the past: start once that past holds
    // the initial rows.
    tokio::time::sleep(STALEST + Duration::from_millis(100)).await;
    let until = Instant::now() + options.duration;
    let next_id = Arc::new(AtomicI64::new(1));
    let outcomes = Arc::new(Mutex::new(Outcomes::default()));
    let nemesis = tokio::spawn(nemesis(
        target.clone(),
        options.kill_every,
        until,
        options.seed,
    ));
    let mut tasks: Vec<_> = (0..options.clients)
        .map(|i| {
            let (target, next_id, outcomes) = (target.clone(), next_id.clone(), outcomes.clone());
            let seed = options.seed.wrapping_mul(7_919).wrapping_add(i as u64);
            tokio::spawn(
                async move { client_loop(&target, seed, until, &next_id, &outcomes).await },
            )
        })
        .collect();
    {
        let (target, outcomes) = (target.clone(), outcomes.clone());
        tasks.push(tokio::spawn(async move {
            auditor(&target, until, &outcomes).await
        }));
    }
    for t in tasks {
        t.await
            .map_err(|e| Error::Protocol(format!("a client task failed: {e}")))?;
    }
    nemesis
        .await
        .map_err(|e| Error::Protocol(format!("the nemesis failed: {e}")))??;
    let (balances, log) = final_state(&target).await?;
    let split_voters = target.split_voters().await;
    let across_nodes = target.decided_across_nodes();
    target.stop().await?;

    let o = std::mem::take(&mut *outcomes.lock().expect("outcomes"));
    let logged: HashMap<i64, (i64, i64, i64)> = log
        .into_iter()
        .map(|(id, f, t, a)| (id, (f, t, a)))
        .collect();
    let mut report = Report {
        acknowledged: o.acknowledged.len(),
        failed: o.failed.len(),
        unknown: o.unknown.len(),
        declined: o.declined,
        strong_reads: o.strong_reads,
        stale_reads: o.stale_reads,
        follower_reads: o.follower_reads,
        bad_reads: o.bad_reads,
        partitioned_dml: o.partitioned_dml,
        final_total: balances.values().sum(),
        strikes: target.strikes(),
        split_voters,
        across_nodes,
        ..Report::default()
    };
    report.lost_transfers = sorted(o.acknowledged.iter().filter(|id| !logged.contains_key(id)));
    report.failure_kinds = o.failure_kinds.into_iter().collect();
    report.failure_samples = o.failure_samples;
    report.phantom_transfers = sorted(o.failed.keys().filter(|id| logged.contains_key(id)));
    report.phantom_errors = report
        .phantom_transfers
        .iter()
        .map(|id| format!("transfer {id} is in the log, but failed: {}", o.failed[id]))
        .collect();
    let mut expected: HashMap<i64, i64> = (0..ACCOUNTS).map(|id| (id, INITIAL)).collect();
    for (from, to, amount) in logged.values() {
        *expected.entry(*from).or_default() -= amount;
        *expected.entry(*to).or_default() += amount;
    }
    for id in 0..ACCOUNTS {
        let (want, got) = (
            expected[&id],
            balances.get(&id).copied().unwrap_or(i64::MIN),
        );
        if want != got {
            report.balance_mismatches.push(format!(
                "account {id}: the log says {want}, the table {got}"
            ));
        }
    }
    Ok(report)
}

fn sorted<'a>(ids: impl Iterator<Item = &'a i64>) -> Vec<i64> {
    let mut v: Vec<i64> = ids.copied().collect();
    v.sort_unstable();
    v
}

/// One client: transfers and snapshot reads until `until`.
async fn client_loop(
    target: &Target,
    seed: u64,
    until: Instant,
    next_id: &AtomicI64,
    outcomes: &Mutex<Outcomes>,
) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut slot = SessionSlot::new();
    while Instant::now() < until {
        let Some((client, session)) = slot.next(target).await else {
            continue;
        };
        match rng.gen_range(0..10) {
            0..=6 => {
                let id = next_id.fetch_add(1, Ordering::Relaxed);
                let from = rng.gen_range(0..ACCOUNTS);
                let to = (from + rng.gen_range(1..ACCOUNTS)) % ACCOUNTS;
                let amount = rng.gen_range(1..=200);
                let began = Instant::now();
                let result = transfer(&client, &session, id, from, to, amount).await;
                let mut o = outcomes.lock().expect("outcomes");
                match result {
                    Ok(true) => {
                        target.acknowledged(&client, began);
                        o.acknowledged.insert(id);
                    }
                    Ok(false) => o.declined += 1,
                    Err((e, committing)) => {
                        slot.reset_after(&e);
                        let unknown =
                            committing && (e.is_unavailable() || matches!(e, Error::Timeout(_)));
                        if unknown {
                            o.unknown.insert(id);
                        } else {
                            let at = if committing {
                                "commit"
                            } else {
                                "before its commit"
                            };
                            let kind = match e.code() {
                                Some(code) => format!("{code:?}"),
                                None if matches!(e, Error::Timeout(_)) => "Timeout".into(),
                                None => "Other".into(),
                            };
                            let seen = o.failure_kinds.entry(kind.clone()).or_default();
                            *seen += 1;
                            if *seen <= FAILURE_SAMPLES
                                || matches!(*seen, 10 | 100 | 1_000 | 10_000 | 100_000)
                            {
                                o.failure_samples
                                    .push(format!("{kind}: {at} through {:?}: {e}", client.addr()));
                            }
                            o.failed
                                .insert(id, format!("{at} through {:?}: {e}", client.addr()));
                        }
                    }
                }
            }
            n => {
                let mode = if n < 9 {
                    TxnMode::ReadOnlyStrong
                } else {
                    TxnMode::ReadOnlyStale(stale(&mut rng))
                };
                match snapshot(&client, &session, &mode).await {
                    Ok((balances, follower)) => {
                        let total: i64 = balances.iter().sum();
                        let mut o = outcomes.lock().expect("outcomes");
                        if mode == TxnMode::ReadOnlyStrong {
                            o.strong_reads += 1;
                        } else {
                            o.stale_reads += 1;
                            o.follower_reads += usize::from(follower);
                        }
                        if total != ACCOUNTS * INITIAL
                            || balances.len() != ACCOUNTS as usize
                            || balances.iter().any(|b| *b < 0)
                        {
                            o.bad_reads
                                .push(format!("{mode:?} read {balances:?} (total {total})"));
                        }
                    }
                    Err(e) => slot.reset_after(&e),
                }
            }
        }
    }
}

/// Moves `amount` from `from` to `to` if `from` can afford it, logging it
/// as transfer `id`. `Ok(false)`: declined. An error comes with whether the
/// commit had been sent.
async fn transfer(
    client: &Client,
    session: &str,
    id: i64,
    from: i64,
    to: i64,
    amount: i64,
) -> std::result::Result<bool, (Error, bool)> {
    let txn = bounded("begin", client.begin(session, TxnMode::ReadWrite))
        .await
        .map_err(|e| (e, false))?;
    let selector = Selector::Id(txn.clone());
    let body = async {
        let balance = client
            .execute_sql_seq(
                session,
                &Statement::new("SELECT Balance FROM Accounts WHERE Id = @id")
                    .param("id", Value::Int64(from)),
                selector.clone(),
                1,
            )
            .await?
            .single_int()?;
        if balance < amount {
            return Ok(false);
        }
        let moves = [
            (
                "UPDATE Accounts SET Balance = Balance - @a WHERE Id = @id",
                from,
            ),
            (
                "UPDATE Accounts SET Balance = Balance + @a WHERE Id = @id",
                to,
            ),
        ];
        for (seqno, (sql, account)) in moves.into_iter().enumerate() {
            let statement = Statement::new(sql)
                .param("a", Value::Int64(amount))
                .param("id", Value::Int64(account));
            let rs = client
                .execute_sql_seq(session, &statement, selector.clone(), seqno as i64 + 2)
                .await?;
            if rs.row_count != Some(1) {
                return Err(Error::Protocol(format!(
                    "{sql} changed {:?} rows",
                    rs.row_count
                )));
            }
        }
        let statement = Statement::new(
            "INSERT INTO Transfers (Id, FromId, ToId, Amount) VALUES (@id, @f, @t, @a)",
        )
        .param("id", Value::Int64(id))
        .param("f", Value::Int64(from))
        .param("t", Value::Int64(to))
        .param("a", Value::Int64(amount));
        client
            .execute_sql_seq(session, &statement, selector.clone(), 4)
            .await?;
        Ok(true)
    };
    match bounded("transfer", body).await {
        Ok(true) => {}
        Ok(false) => {
            let _ =
                tokio::time::timeout(Duration::from_secs(2), client.rollback(session, &txn)).await;
            return Ok(false);
        }
        Err(e) => {
            let _ =
                tokio::time::timeout(Duration::from_secs(2), client.rollback(session, &txn)).await;
            return Err((e, false));
        }
    }
    bounded("commit", client.commit(session, selector, Vec::new()))
        .await
        .map(|_| true)
        .map_err(|e| (e, true))
}

/// Every balance, in one read-only transaction of `mode`.
/// The balances as of `mode`'s snapshot, and whether a follower read
/// served it.
async fn snapshot(client: &Client, session: &str, mode: &TxnMode) -> Result<(Vec<i64>, bool)> {
    let rs = bounded(
        "snapshot",
        client.execute_sql(
            session,
            &Statement::new("SELECT Balance FROM Accounts ORDER BY Id"),
            Selector::SingleUse(mode.clone()),
        ),
    )
    .await?;
    Ok((rs.ints(), rs.follower_read.is_some()))
}

/// Partitioned DML over every account, about once a second.
async fn auditor(target: &Target, until: Instant, outcomes: &Mutex<Outcomes>) {
    let mut slot = SessionSlot::new();
    let mut n = 0i64;
    while Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(700)).await;
        let Some((client, session)) = slot.next(target).await else {
            continue;
        };
        n += 1;
        let result = bounded("partitioned DML", async {
            let partitioned = pb::TransactionOptions {
                mode: Some(pb::transaction_options::Mode::PartitionedDml(
                    pb::transaction_options::PartitionedDml {},
                )),
                ..Default::default()
            };
            let txn = client.begin_transaction(&session, partitioned).await?;
            let statement = Statement::new("UPDATE Accounts SET Audited = @n WHERE TRUE")
                .param("n", Value::Int64(n));
            client
                .execute_sql_seq(&session, &statement, Selector::Id(txn.id), 1)
                .await
        })
        .await;
        match result {
            Ok(rs) if rs.row_count == Some(ACCOUNTS) => {
                outcomes.lock().expect("outcomes").partitioned_dml += 1;
            }
            Ok(rs) => outcomes
                .lock()
                .expect("outcomes")
                .bad_reads
                .push(format!("partitioned DML changed {:?} rows", rs.row_count)),
            Err(e) => slot.reset_after(&e),
        }
    }
}

/// The final balances and the transfer log, read strongly after the run
/// (retrying while the server finishes a restart).
#[allow(clippy::type_complexity)]
async fn final_state(target: &Target) -> Result<(HashMap<i64, i64>, Vec<(i64, i64, i64, i64)>)> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let attempt = async {
            let client = target.client().await;
            let session = client.create_session(&target.database).await?;
            let txn = client.begin(&session, TxnMode::ReadOnlyStrong).await?;
            let balances = client
                .execute_sql(
                    &session,
                    &Statement::new("SELECT Id, Balance FROM Accounts"),
                    Selector::Id(txn.clone()),
                )
                .await?;
            let log = client
                .execute_streaming_sql(
                    &session,
                    &Statement::new("SELECT Id, FromId, ToId, Amount FROM Transfers"),
                    Selector::Id(txn),
                )
                .await?;
            let int = |v: &Value| {
                v.as_i64()
                    .ok_or_else(|| Error::Protocol(format!("not an INT64: {v:?}")))
            };
            let balances = balances
                .rows
                .iter()
                .map(|r| Ok((int(&r[0])?, int(&r[1])?)))
                .collect::<Result<HashMap<_, _>>>()?;
            let log = log
                .rows
                .iter()
                .map(|r| Ok((int(&r[0])?, int(&r[1])?, int(&r[2])?, int(&r[3])?)))
                .collect::<Result<Vec<_>>>()?;
            Ok((balances, log))
        };
        match bounded("final read", attempt).await {
            Ok(state) => return Ok(state),
            Err(_) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(e) => return Err(e),
        }
    }
}
