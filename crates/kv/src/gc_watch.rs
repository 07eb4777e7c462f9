//! Where new garbage can be: which commit timestamps have written row
//! versions since the last complete garbage-collection pass.
//!
//! # Why
//!
//! A garbage-collection pass at horizon `h` ([`rowtree_storage::Mvcc::gc`])
//! reads every stored version of every row to delete the ones that no read
//! at or after `h` can see. On a database of a gigabyte that is a gigabyte
//! read through the block cache, every `gc_interval` (a minute by default),
//! evicting the blocks that serve reads. Most of those passes find
//! nothing: with Spanner's default version retention of one hour, the
//! horizon trails the clock by an hour, and a version becomes garbage only
//! once a *newer* version at or below the horizon shadows it.
//!
//! # The rule
//!
//! After a complete pass at `h1`, every row's versions older than its
//! newest version at or below `h1` are gone (and so is that version if it
//! is a tombstone). A later pass at `h2 > h1` can only find garbage in rows
//! whose newest version at or below `h2` is newer than `h1`: rows written
//! at a timestamp in `(h1, h2]`. Commits never take a timestamp at or below
//! a horizon a pass has used (the caller's promise to `Mvcc::gc`), so no
//! write can land behind `h1` later. A pass at `h2` is needed exactly when
//! some versioned write had a timestamp in `(h1, h2]`.
//!
//! # The record
//!
//! [`GcWatch`] keeps that fact coarsely: for each *bucket* of timestamps
//! (about 8.6 s, [`BUCKET_SHIFT`]) that received versioned writes, the
//! newest timestamp written in it; and the horizon `covered` of the last
//! complete pass. Marking a write is a short uncontended lock and a map
//! update, once per commit on the commit pipeline's thread. A pass is
//! needed if nothing is covered yet (a database just opened: what is on
//! disk is unknown) or a bucket that starts at or below the new horizon
//! holds a write newer than `covered`; a database created empty starts
//! covered at its first timestamp instead ([`GcWatch::starts_empty`]). A
//! complete pass forgets the buckets
//! whose newest write it covered. A bucket whose writes all lie above the
//! horizon but which starts below it asks for a pass that finds nothing;
//! the horizon moves past a bucket within one or two passes, so that costs
//! at most a pass or two per bucket, never a missed one.
//!
//! A pass may be split over several calls with a budget (each continues
//! where the last stopped); the key space is then covered at the smallest
//! of their horizons, which is what `covered` becomes.

use std::collections::BTreeMap;

use parking_lot::Mutex;

/// Timestamps (nanoseconds) are grouped in buckets of `2^33` ns (about
/// 8.6 s): a week of retention under constant writes keeps about 70,000
/// of them.
pub const BUCKET_SHIFT: u32 = 33;

/// Which timestamps wrote versions since the last complete pass. See the
/// [module docs](self).
#[derive(Debug, Default)]
pub struct GcWatch {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Bucket -> the newest timestamp written in it, for writes a complete
    /// pass has not covered yet.
    written: BTreeMap<u64, u64>,
    /// The horizon the whole key space was last collected at, if any.
    covered: Option<u64>,
    /// The smallest horizon of the calls of the pass under way (since the
    /// last complete one).
    pass_floor: Option<u64>,
}

impl GcWatch {
    /// A watch that knows nothing yet: the first pass is needed.
    pub fn new() -> GcWatch {
        GcWatch::default()
    }

    /// Records that the key space held no row version when its database was
    /// created, and that every version written from now on takes a
    /// timestamp above `ts`: the key space counts as collected at `ts`, so
    /// no pass is needed until a later write falls behind the horizon. (A
    /// database opened from existing files must not say this: what they
    /// hold is unknown.)
    pub fn starts_empty(&self, ts: u64) {
        let mut state = self.state.lock();
        if state.covered.is_none() {
            state.covered = Some(ts);
        }
    }

    /// Records that versions were written at `ts`.
    pub fn note_write(&self, ts: u64) {
        let mut state = self.state.lock();
        let newest = state.written.entry(ts >> BUCKET_SHIFT).or_insert(ts);
        *newest = (*newest).max(ts);
    }

    /// Whether a pass at `horizon` can find anything: nothing is covered
    /// yet, or a write may lie in `(covered, horizon]`.
    pub fn pass_needed(&self, horizon: u64) -> bool {
        let state = self.state.lock();
        match state.covered {
            None => true,
            Some(covered) if horizon <= covered => false,
            Some(covered) => state
                .written
                .range(..=(horizon >> BUCKET_SHIFT))
                .any(|(_, &newest)| newest > covered),
        }
    }

    /// Records a garbage-collection call at `horizon`; `complete` if it
    /// reached the end of the key space (ending a pass).
    pub fn passed(&self, horizon: u64, complete: bool) {
        let mut state = self.state.lock();
        let floor = state.pass_floor.map_or(horizon, |f| f.min(horizon));
        if !complete {
            state.pass_floor = Some(floor);
            return;
        }
        state.pass_floor = None;
        let covered = state.covered.map_or(floor, |c| c.max(floor));
        state.covered = Some(covered);
        state.written.retain(|_, newest| *newest > covered);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const B: u64 = 1 << BUCKET_SHIFT;

    #[test]
    fn a_new_watch_asks_for_a_pass() {
        assert!(GcWatch::new().pass_needed(0));
    }

    #[test]
    fn a_watch_that_starts_empty_waits_for_a_write_behind_the_horizon() {
        let w = GcWatch::new();
        w.starts_empty(10 * B);
        assert!(!w.pass_needed(5 * B));
        assert!(
            !w.pass_needed(100 * B),
            "nothing written, nothing to collect"
        );
        w.note_write(20 * B + 3);
        assert!(!w.pass_needed(15 * B));
        assert!(w.pass_needed(21 * B));
    }

    #[test]
    fn no_writes_since_a_complete_pass_means_no_pass() {
        let w = GcWatch::new();
        w.note_write(5 * B + 10);
        w.passed(10 * B, true);
        assert!(!w.pass_needed(11 * B));
        assert!(!w.pass_needed(100 * B));
    }

    #[test]
    fn a_write_is_pending_until_the_horizon_reaches_it() {
        let w = GcWatch::new();
        w.passed(10 * B, true);
        w.note_write(20 * B + 7);
        // Below the write's bucket: nothing new can be garbage yet.
        assert!(!w.pass_needed(19 * B));
        assert!(w.pass_needed(20 * B + 7));
        assert!(w.pass_needed(30 * B));
        // A complete pass past the bucket settles it.
        w.passed(30 * B, true);
        assert!(!w.pass_needed(40 * B));
    }

    #[test]
    fn a_bucket_stays_until_its_newest_write_is_covered() {
        let w = GcWatch::new();
        w.passed(0, true);
        w.note_write(20 * B + 5);
        w.note_write(20 * B + 9);
        // The pass covers the first write, not the second.
        w.passed(20 * B + 6, true);
        assert!(w.pass_needed(21 * B));
        w.passed(21 * B, true);
        assert!(!w.pass_needed(22 * B));
    }

    #[test]
    fn a_write_covered_by_a_horizon_inside_its_bucket_is_settled() {
        let w = GcWatch::new();
        w.note_write(20 * B + 5);
        w.passed(20 * B + 6, true);
        assert!(!w.pass_needed(25 * B));
    }

    #[test]
    fn a_pass_in_parts_covers_the_smallest_horizon() {
        let w = GcWatch::new();
        w.note_write(15 * B);
        w.passed(20 * B, false);
        assert!(w.pass_needed(25 * B), "an incomplete pass settles nothing");
        w.passed(25 * B, true);
        // Rows of the first part were collected at 20 B only.
        w.note_write(22 * B);
        assert!(w.pass_needed(23 * B));
    }

    #[test]
    fn a_write_after_a_pass_in_the_same_bucket_is_remembered() {
        let w = GcWatch::new();
        w.note_write(3 * B + 1);
        w.passed(3 * B + 2, true);
        w.note_write(3 * B + 7);
        assert!(w.pass_needed(3 * B + 7));
        w.passed(3 * B + 8, true);
        assert!(!w.pass_needed(4 * B));
    }
}
