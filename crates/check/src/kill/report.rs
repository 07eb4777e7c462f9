//! The outcome of a run: counts, the violations they add up to, the
//! summary, and what the server's log tells about garbage collection.

use std::path::PathBuf;
use std::time::Duration;

/// What the DDL cycles saw.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DdlOutcomes {
    /// Kills while the backfill was still running (its operation not done).
    pub killed_mid_backfill: usize,
    /// After the restart the index existed (and was checked against `C`).
    pub index_present: usize,
    /// After the restart the index did not exist (and was created again).
    pub index_absent: usize,
    /// Retries of the DDL that failed (a violation).
    pub retry_failures: usize,
    /// Index entries of `CByV` that disagree with `C` (a violation).
    pub index_mismatches: u64,
}

/// What the garbage-collection cycles saw, from the server's log.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GcOutcomes {
    /// Passes that started before the kills.
    pub passes_started: u64,
    /// Passes that removed versions before the kills.
    pub passes_removing: u64,
    /// Versions those passes removed.
    pub versions_removed: u64,
    /// Kills that came while a pass was running (its start logged, its end
    /// not).
    pub killed_mid_pass: usize,
}

/// The outcome of a run; [`Report::violations`] says whether it passed.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Cycles run (and per kind).
    pub cycles: usize,
    /// Cycles per kind: commits, ddl, splits, gc.
    pub cycles_by_kind: [usize; 4],
    /// Commits the server acknowledged.
    pub acknowledged: u64,
    /// Acknowledged commits found whole after the restart that followed them.
    pub verified: u64,
    /// Commits whose answer the kill took (present or not: both fine).
    pub in_doubt: u64,
    /// Of those, the ones that turned out to have happened.
    pub in_doubt_applied: u64,
    /// Acknowledged commits missing after a restart, counted once (must be 0).
    pub lost: u64,
    /// Commits found partly applied, plus rows whose `A` and `B` copies
    /// disagree (must be 0).
    pub half_applied: u64,
    /// Rows of `A` and entries of `AByWriter` that differ, summed over the
    /// checks (must be 0).
    pub index_mismatches: u64,
    /// Rows no commit wrote (must be 0).
    pub phantoms: u64,
    /// Transactions the server aborted (retried with new ids; not a fault).
    pub aborted: u64,
    /// Aborted commits whose rows exist anyway (must be 0).
    pub aborted_applied: u64,
    /// Errors other than aborts before the kill (must be 0).
    pub unexpected_errors: u64,
    /// The first few of them.
    pub error_samples: Vec<String>,
    /// The DDL cycles.
    pub ddl: DdlOutcomes,
    /// The garbage-collection cycles.
    pub gc: GcOutcomes,
    /// Rows in `A` at the end.
    pub rows: u64,
    /// Splits in `SPANNER_SYS.SPLITS` after the last restart.
    pub splits_after_restart: i64,
    /// Most splits seen just before a kill, in the split cycles.
    pub max_splits_live: i64,
    /// Split cycles whose boundaries before the kill were compared with
    /// those after the restart.
    pub split_cycles_checked: usize,
    /// Of those, the cycles that kept every boundary (the server stores
    /// its split map, so all should).
    pub split_cycles_kept: usize,
    /// Boundaries seen shortly before a kill and missing after the restart
    /// (must be 0).
    pub split_boundaries_lost: u64,
    /// How long restarts took: mean and max.
    pub restart_mean: Duration,
    /// Longest restart (SIGKILL to serving).
    pub restart_max: Duration,
    /// Seconds the backfill of `C` took when measured at setup.
    pub backfill: Duration,
    /// Whether the server stopped cleanly on SIGTERM at the end.
    pub clean_stop: bool,
    /// The whole run.
    pub elapsed: Duration,
    /// Where the data and the log are (kept after a failure).
    pub work_dir: PathBuf,
}

impl Report {
    /// Every broken promise, in words; empty when the run passed.
    pub fn violations(&self) -> Vec<String> {
        let mut v = Vec::new();
        let mut check = |n: u64, what: &str| {
            if n > 0 {
                v.push(format!("{n} {what}"));
            }
        };
        check(self.lost, "acknowledged commits lost");
        check(self.half_applied, "half-applied commits or rows");
        check(self.index_mismatches, "index entries disagreeing with A");
        check(self.phantoms, "rows no commit wrote");
        check(self.aborted_applied, "aborted commits applied anyway");
        check(self.unexpected_errors, "unexpected errors before a kill");
        check(self.ddl.retry_failures as u64, "failed DDL retries");
        check(self.ddl.index_mismatches, "CByV entries disagreeing with C");
        check(
            self.split_boundaries_lost,
            "split boundaries lost across a restart",
        );
        if self.verified != self.acknowledged {
            v.push(format!(
                "{} acknowledged commits but {} verified",
                self.acknowledged, self.verified
            ));
        }
        if !self.clean_stop {
            v.push("the server did not stop cleanly on SIGTERM".into());
        }
        v
    }

    /// The summary, one figure a line.
    pub fn summary(&self) -> String {
        let [c, d, s, g] = self.cycles_by_kind;
        format!(
            "kill check: {cycles} cycles ({c} commits, {d} ddl, {s} splits, {g} gc) in {elapsed:.1} s\n\
             commits acknowledged: {ack}\n\
             verified:             {verified}\n\
             lost:                 {lost}\n\
             half-applied:         {half}\n\
             index mismatches:     {idx}\n\
             phantom rows:         {phantoms}\n\
             in doubt at the kill: {doubt} ({applied} applied, {rolled} not)\n\
             aborted (retried):    {aborted} ({aborted_applied} applied anyway)\n\
             unexpected errors:    {errors}\n\
             ddl: backfill of C takes {backfill:.2} s; killed mid-backfill {mid}/{d}; \
             after restart index present {present}, absent {absent} (recreated); \
             retry failures {rf}; CByV mismatches {cm}\n\
             splits: {base} after the last restart; every boundary kept in {kept}/{checked} \
             split cycles (lost: {lost_bounds}; most before a kill: {live_splits})\n\
             gc: killed mid-pass in {gc_mid}/{g} gc cycles; {gc_started} passes started, \
             {gc_passes} finished removing {gc_versions} versions before the kills\n\
             rows in A: {rows}\n\
             restart (SIGKILL to serving): mean {rmean:.2} s, max {rmax:.2} s; \
             clean SIGTERM stop at the end: {clean}",
            cycles = self.cycles,
            elapsed = self.elapsed.as_secs_f64(),
            ack = self.acknowledged,
            verified = self.verified,
            lost = self.lost,
            half = self.half_applied,
            idx = self.index_mismatches,
            phantoms = self.phantoms,
            doubt = self.in_doubt,
            applied = self.in_doubt_applied,
            rolled = self.in_doubt - self.in_doubt_applied,
            aborted = self.aborted,
            aborted_applied = self.aborted_applied,
            errors = self.unexpected_errors,
            backfill = self.backfill.as_secs_f64(),
            mid = self.ddl.killed_mid_backfill,
            present = self.ddl.index_present,
            absent = self.ddl.index_absent,
            rf = self.ddl.retry_failures,
            cm = self.ddl.index_mismatches,
            rows = self.rows,
            base = self.splits_after_restart,
            kept = self.split_cycles_kept,
            checked = self.split_cycles_checked,
            lost_bounds = self.split_boundaries_lost,
            live_splits = self.max_splits_live,
            gc_mid = self.gc.killed_mid_pass,
            gc_started = self.gc.passes_started,
            gc_passes = self.gc.passes_removing,
            gc_versions = self.gc.versions_removed,
            rmean = self.restart_mean.as_secs_f64(),
            rmax = self.restart_max.as_secs_f64(),
            clean = if self.clean_stop { "yes" } else { "NO" },
        )
    }
}

/// The garbage-collection passes of the last server process in `log` (the
/// lines after its last start marker): passes that removed versions, how
/// many, and whether the last pass had started without ending (the kill
/// came in the middle of it).
pub(super) fn gc_log(log: &str) -> GcOutcomes {
    let last_start = log.rfind("=== rowtree-check: start").unwrap_or(0);
    let mut out = GcOutcomes::default();
    let mut open = false;
    for line in log[last_start..].lines() {
        if line.contains("gc pass started") {
            open = true;
            out.passes_started += 1;
        } else if line.contains("gc pass ended") {
            open = false;
            let removed = line
                .split_whitespace()
                .find_map(|w| w.strip_prefix("removed="))
                .and_then(|n| n.parse::<u64>().ok());
            if let Some(n) = removed {
                out.passes_removing += 1;
                out.versions_removed += n;
            }
        }
    }
    out.killed_mid_pass = usize::from(open);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gc_log_reads_the_last_process_only() {
        let log = "\
=== rowtree-check: start 1 on 127.0.0.1:1 ===
x DEBUG rowtree_db::gc: gc pass started horizon=1
x  INFO rowtree_db::gc: gc pass ended removed=99 examined=200 ms=1.0
=== rowtree-check: start 2 on 127.0.0.1:1 ===
x DEBUG rowtree_db::gc: gc pass started horizon=2
x  INFO rowtree_db::gc: gc pass ended removed=7 examined=20 ms=1.0
x DEBUG rowtree_db::gc: gc pass started horizon=3
x DEBUG rowtree_db::gc: gc pass ended examined=20 ms=1.0
x DEBUG rowtree_db::gc: gc pass started horizon=4
";
        let seen = gc_log(log);
        assert_eq!(
            seen,
            GcOutcomes {
                passes_started: 3,
                passes_removing: 1,
                versions_removed: 7,
                killed_mid_pass: 1
            }
        );
        let ended = gc_log(&log[..log.rfind("x DEBUG").unwrap()]);
        assert_eq!(ended.killed_mid_pass, 0);
    }
}
