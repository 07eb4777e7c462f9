//! The committing clients: each writes rows with fresh ids into `A` and `B`
//! through a rotating commit path, and records every commit it sent and
//! whether the server acknowledged it.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::Rng;

use super::CycleKind;
use crate::client::{pb, Client, ResultSet, Selector, Statement, TxnMode};
use crate::error::{Error, Result};
use crate::wire::{insert, insert_or_update, Value};

/// One commit a client sent: the ids it inserted, and whether the server
/// acknowledged it.
#[derive(Debug, Clone)]
pub(super) struct CommitRecord {
    pub(super) ids: Vec<i64>,
    pub(super) acked: bool,
    /// The server answered ABORTED: it must not have happened.
    pub(super) aborted: bool,
    /// The cycle it was sent in (an in-doubt commit is judged once, after
    /// that cycle's restart).
    pub(super) cycle: usize,
}

/// What one client did in a cycle.
#[derive(Debug, Default)]
pub(super) struct ClientOutcome {
    pub(super) records: Vec<CommitRecord>,
    pub(super) aborted: u64,
    pub(super) errors: Vec<String>,
}

/// A committing client (see the module docs).
pub(super) struct Writer {
    pub(super) client: Client,
    pub(super) session: String,
    pub(super) k: i64,
    pub(super) clients: i64,
    pub(super) base: i64,
    pub(super) cycle: usize,
    pub(super) kind: CycleKind,
    pub(super) rng: StdRng,
    pub(super) stop: Arc<AtomicBool>,
    pub(super) acked: Arc<AtomicU64>,
}

/// Rows inserted per commit in split cycles.
const BIG_COMMIT: usize = 25;
/// Earlier rows rewritten per commit in split cycles.
const REWRITES: usize = 5;

impl Writer {
    pub(super) async fn run(mut self) -> ClientOutcome {
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

fn expect_one(r: &ResultSet) -> Result<()> {
    match r.row_count {
        Some(1) => Ok(()),
        other => Err(Error::Protocol(format!(
            "an INSERT of one row reported {other:?}"
        ))),
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
}
