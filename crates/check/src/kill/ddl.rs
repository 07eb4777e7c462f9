//! The DDL cycles: table `C`, filled once, the index `CByV` built over it
//! (the backfill the kill aims at), a writer changing `C` meanwhile, and
//! what must hold after the restart: the index whole or absent, and
//! buildable again.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::Rng;

use super::Run;
use crate::client::{Client, ResultSet, Selector, Statement, TxnMode};
use crate::error::{Error, Result};
use crate::wire::{insert, insert_or_update, KeySet, Value};

/// The index the DDL cycles build, kill, and build again.
pub(super) const BACKFILL_DDL: &str = "CREATE INDEX CByV ON C(V)";

impl Run {
    /// Fills `C` for the backfills: batches of 1,000 rows, 4 at a time.
    pub(super) async fn populate_c(&mut self) -> Result<()> {
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
    pub(super) async fn measure_backfill(&mut self) -> Result<Duration> {
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

    /// After a kill during `CREATE INDEX CByV`: the index is either whole
    /// or absent; an absent one must build on retry. Either way it is
    /// dropped again for the next DDL cycle.
    pub(super) async fn after_ddl_kill(&mut self) -> Result<String> {
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
    let set = |rs: &ResultSet| -> BTreeSet<(Option<i64>, Option<i64>)> {
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

/// The DDL cycles' writer into `C`: changes `V` of random rows and adds
/// rows while the index backfills.
pub(super) struct CWriter {
    pub(super) client: Client,
    pub(super) session: String,
    pub(super) rows: i64,
    pub(super) next_id: i64,
    pub(super) rng: StdRng,
    pub(super) stop: Arc<AtomicBool>,
}

impl CWriter {
    pub(super) async fn run(mut self) {
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
