//! One kill cycle end to end: start the clients, wait for the first
//! acknowledgement, pick the moment, SIGKILL, restart, verify, and log a
//! line.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::ddl::{CWriter, BACKFILL_DDL};
use super::report::gc_log;
use super::workload::Writer;
use super::{CycleKind, Run, GC_FLAGS, SPLIT_FLAGS};
use crate::client::{Selector, Statement};
use crate::error::{Error, Result};

/// How long before the kill the split cycles read the split boundaries.
const SPLITS_QUERY_GAP: Duration = Duration::from_millis(300);

/// The shortest time a gc cycle runs before its kill: the server's version
/// retention in gc cycles is one second, and a version becomes collectable
/// only once a newer one is older than that too.
const GC_MIN_RUN: Duration = Duration::from_millis(2500);

impl Run {
    pub(super) async fn all_cycles(&mut self) -> Result<()> {
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
        // A gc cycle must outlive the retention period (one second) by enough
        // for a version written after the restart to shadow an older one and
        // itself fall behind the horizon; before that no pass has anything
        // to remove, and a short cycle would test nothing.
        let delay = if kind == CycleKind::Gc {
            delay.max(GC_MIN_RUN)
        } else {
            delay
        };
        // The split boundaries shortly before the kill: the server stores
        // its split map when it changes (and syncs it), so each of them
        // must be there after the restart. The query comes a moment before
        // the kill, so a boundary it shows has been stored by then (the
        // change and its fsync happen in one tick, well within the gap);
        // boundaries made after it may be there too. No merge can remove
        // one: neighbours merge after 300 cold seconds of one server's
        // life, and a cycle's server lives far less.
        let before_kill = if kind == CycleKind::Splits {
            tokio::time::sleep(delay.saturating_sub(SPLITS_QUERY_GAP)).await;
            let starts = self.split_starts().await?;
            tokio::time::sleep(SPLITS_QUERY_GAP).await;
            Some(starts)
        } else {
            tokio::time::sleep(delay).await;
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
        let after = self.split_starts().await?;
        let splits = after.len() as i64;
        self.report.splits_after_restart = splits;
        let mut split_note = String::new();
        if let Some(before) = before_kill {
            let live = before.len() as i64;
            self.report.max_splits_live = self.report.max_splits_live.max(live);
            self.report.split_cycles_checked += 1;
            let lost: Vec<&String> = before.difference(&after).collect();
            if lost.is_empty() {
                self.report.split_cycles_kept += 1;
            } else {
                self.report.split_boundaries_lost += lost.len() as u64;
                if self.report.error_samples.len() < 10 {
                    self.report.error_samples.push(format!(
                        "cycle {cycle}: split boundaries lost across the restart: {lost:?}"
                    ));
                }
            }
            split_note = format!(
                ", {live} splits before the kill ({} boundaries lost)",
                lost.len()
            );
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

    /// Where each split starts (`SPANNER_SYS.SPLITS.SPLIT_START`, the
    /// boundary in words).
    async fn split_starts(&self) -> Result<BTreeSet<String>> {
        let session = self.client.create_session(&self.database).await?;
        let rows = self
            .client
            .execute_sql(
                &session,
                &Statement::new("SELECT SPLIT_START FROM SPANNER_SYS.SPLITS"),
                Selector::strong(),
            )
            .await?
            .rows;
        self.client.delete_session(&session).await?;
        rows.iter()
            .map(|row| match row.first().and_then(|v| v.as_str()) {
                Some(start) => Ok(start.to_string()),
                None => Err(Error::Protocol(format!(
                    "SPLIT_START is not a STRING: {row:?}"
                ))),
            })
            .collect()
    }
}
