//! The clock heartbeat and the offset guard (design §5, invariant 15).
//!
//! Timestamps in a cluster come from each node's own clock, so their order
//! across nodes is only as good as the agreement between the clocks. The
//! design bounds it with a maximum offset ε (`--max-clock-offset`), which is
//! enforced, not assumed: every second each node asks every other member
//! for its clock (`Clock`), and estimates the offset from the round trip,
//! as NTP does:
//!
//! ```text
//!   local t0 ── request ──>  remote clock r  ── reply ──> local t1
//!   offset ≈ r − (t0 + t1) / 2,  error ≤ (t1 − t0) / 2
//! ```
//!
//! The remote clock was read somewhere between `t0` and `t1`, so the true
//! offset lies within the error of the estimate. A node whose offset from
//! a majority of the live nodes (itself included, at offset 0) is
//! *provably* above 0.8 ε (the estimate's magnitude minus its error) must
//! not go on: it stops (`rowtree serve --cluster` exits, saying why). A
//! long round trip widens the error and so never trips the guard by itself;
//! only a measured skew does.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A node's wall clock: microseconds since the Unix epoch.
#[derive(Clone)]
pub struct WallClock(Arc<dyn Fn() -> u64 + Send + Sync>);

impl std::fmt::Debug for WallClock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "WallClock({} µs)", self.now())
    }
}

impl WallClock {
    /// The system clock.
    pub fn system() -> WallClock {
        WallClock(Arc::new(system_micros))
    }

    /// The system clock moved by `skew` microseconds (for tests of the
    /// guard: a node whose clock is wrong).
    pub fn skewed(skew: i64) -> WallClock {
        WallClock(Arc::new(move || {
            system_micros().saturating_add_signed(skew)
        }))
    }

    /// The time now.
    pub fn now(&self) -> u64 {
        (self.0)()
    }
}

fn system_micros() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

/// One measurement of a peer's clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// The peer's clock minus ours, in microseconds.
    pub offset_us: i64,
    /// Half the round trip: the true offset is within this of `offset_us`.
    pub error_us: u64,
    /// When it was taken (by this node's monotonic clock).
    pub at: Instant,
}

impl Sample {
    /// The sample of a round trip sent at `t0` and answered at `t1` (our
    /// clock) by a peer whose clock read `remote`.
    pub fn of(t0: u64, remote: u64, t1: u64, at: Instant) -> Sample {
        let (t0, t1) = (i128::from(t0), i128::from(t1.max(t0)));
        let midpoint = (t0 + t1) / 2;
        let offset = (i128::from(remote) - midpoint).clamp(i64::MIN.into(), i64::MAX.into());
        Sample {
            offset_us: offset as i64,
            error_us: ((t1 - t0) as u64).div_ceil(2),
            at,
        }
    }

    /// Whether the offset is certainly above `bound_us` in magnitude.
    pub fn provably_above(&self, bound_us: u64) -> bool {
        self.offset_us.unsigned_abs().saturating_sub(self.error_us) > bound_us
    }
}

/// The latest sample of each peer, when each last refused a heartbeat,
/// and which said in their latest answer that they are stopping.
#[derive(Debug, Default)]
pub struct Clocks {
    samples: BTreeMap<u64, Sample>,
    refusals: BTreeMap<u64, Instant>,
    /// The peers that said they are stopping, each with the start of the
    /// process that said so (0 if it did not say): only an answer from
    /// another process clears the mark, so that an answer the stopping
    /// process sent before it began to stop, arriving late, does not.
    stopping: BTreeMap<u64, u64>,
    /// When each peer's process started, as its latest answer said
    /// (microseconds of its wall clock).
    started: BTreeMap<u64, u64>,
    /// The peers whose latest answer said they settle commit outcomes
    /// ([`ClockReply::settles_outcomes`](super::api::ClockReply::settles_outcomes)).
    settles_outcomes: BTreeSet<u64>,
    /// Each peer's utilization as its latest answer said
    /// ([`ClockReply::utilization`](super::api::ClockReply::utilization)).
    utilization: BTreeMap<u64, f64>,
    /// What each peer's latest answer said of the members it does not
    /// hear ([`ClockReply::silent`](super::api::ClockReply::silent)).
    silences: BTreeMap<u64, Silences>,
}

/// What one peer's latest answer said of the members it does not hear.
#[derive(Debug, Clone)]
struct Silences {
    /// When the answer came (this node's monotonic clock).
    at: Instant,
    /// Each silent member with how long it had been silent then; `None`
    /// from a peer that does not report silences (an older version).
    reported: Option<BTreeMap<u64, Duration>>,
}

/// What a peer's latest answer said of another member
/// ([`Clocks::heard_of`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Heard {
    /// No answer within [`SAMPLE_FRESH_FOR`]: the peer is not heard itself.
    Unknown,
    /// The peer does not report silences (an older version).
    NotSaid,
    /// The peer hears the member.
    Answering,
    /// The member has been silent to the peer for this long (counted to
    /// now: what the answer said plus the time since).
    Silent(Duration),
}

/// The most silent members kept of one answer: more than any cluster has
/// members, so that a malformed answer cannot grow the table unbounded.
pub const MAX_SILENCES_KEPT: usize = 1_024;

/// How long a sample counts: a peer not measured for this long is not
/// live as far as the guard is concerned.
pub const SAMPLE_FRESH_FOR: Duration = Duration::from_secs(5);

impl Clocks {
    /// Records a sample of `peer` from an answer that did not say it is
    /// stopping, given by the process that started at `started` (0 if the
    /// answer did not say). A stopping mark stays if the same process set
    /// it: a process that began to stop never stops stopping, so such an
    /// answer was sent before the stop began and merely arrived after the
    /// mark. An answer of another process (restarted) clears it.
    pub fn record(&mut self, peer: u64, sample: Sample, started: u64) {
        self.samples.insert(peer, sample);
        if let Some(&marked) = self.stopping.get(&peer) {
            if marked == 0 || started == 0 || marked != started {
                self.stopping.remove(&peer);
            }
        }
        self.record_start(peer, started);
    }

    /// Records a sample of `peer` whose answer, from the process that
    /// started at `started`, said it is stopping on purpose: its clock
    /// still counts (for the offset guard), but until another process
    /// answers without saying so (restarted), it is
    /// [`stopping`](Self::stopping).
    pub fn record_stopping(&mut self, peer: u64, sample: Sample, started: u64) {
        self.samples.insert(peer, sample);
        self.stopping.insert(peer, started);
        self.record_start(peer, started);
    }

    /// Records that `peer`'s process that started at `started` said, in a
    /// heartbeat of its own, that it is stopping:
    /// [`stopping`](Self::stopping) until another process answers without
    /// saying so.
    pub fn mark_stopping(&mut self, peer: u64, started: u64) {
        self.stopping.insert(peer, started);
        self.record_start(peer, started);
    }

    /// Records when `peer`'s process started, as an answer or heartbeat
    /// said (0 from a node that does not say). The latest start is kept: a
    /// late answer of a process that has since restarted does not take it
    /// back.
    pub fn record_start(&mut self, peer: u64, micros: u64) {
        if micros > 0 {
            let known = self.started.entry(peer).or_insert(micros);
            *known = (*known).max(micros);
        }
    }

    /// Records whether `peer`'s latest answer said it settles commit
    /// outcomes.
    pub fn record_settles_outcomes(&mut self, peer: u64, settles: bool) {
        if settles {
            self.settles_outcomes.insert(peer);
        } else {
            self.settles_outcomes.remove(&peer);
        }
    }

    /// Records `peer`'s utilization from its latest answer.
    pub fn record_utilization(&mut self, peer: u64, utilization: f64) {
        if utilization.is_finite() && utilization >= 0.0 {
            self.utilization.insert(peer, utilization);
        }
    }

    /// Records what `peer`'s answer, come at `at`, said of the members it
    /// does not hear: `None` if it does not report them (an older
    /// version), else each silent member with how long (at most
    /// [`MAX_SILENCES_KEPT`] of them).
    pub fn record_silences(
        &mut self,
        peer: u64,
        at: Instant,
        reported: Option<impl IntoIterator<Item = (u64, Duration)>>,
    ) {
        let reported = reported.map(|r| r.into_iter().take(MAX_SILENCES_KEPT).collect());
        self.silences.insert(peer, Silences { at, reported });
    }

    /// What `peer`'s latest answer, if fresh, said of `member`.
    pub fn heard_of(&self, peer: u64, member: u64, now: Instant) -> Heard {
        let Some(s) = self.silences.get(&peer) else {
            return Heard::Unknown;
        };
        let age = now.saturating_duration_since(s.at);
        if age > SAMPLE_FRESH_FOR {
            return Heard::Unknown;
        }
        match &s.reported {
            None => Heard::NotSaid,
            Some(silent) => match silent.get(&member) {
                Some(d) => Heard::Silent(d.saturating_add(age)),
                None => Heard::Answering,
            },
        }
    }

    /// The peers among `peers` whose fresh answer says they do not hear
    /// `member` (each once, in order).
    pub fn unheard_by(
        &self,
        member: u64,
        peers: impl IntoIterator<Item = u64>,
        now: Instant,
    ) -> Vec<u64> {
        let by: BTreeSet<u64> = peers
            .into_iter()
            .filter(|p| *p != member)
            .filter(|p| matches!(self.heard_of(*p, member, now), Heard::Silent(_)))
            .collect();
        by.into_iter().collect()
    }

    /// Whether `member`, which this node (`me`) has not heard for longer
    /// than `dead_after`, is silent to a majority of the group whose
    /// members are `members`, not counting `member` itself: this node, and
    /// each other member whose fresh answer says the same of it (or does
    /// not report silences, deferring to this node). A member cut off from
    /// this node alone is heard by the others, and is not dead: a
    /// database's leader that replaced it would copy a replica for
    /// nothing.
    pub fn silent_to_majority(
        &self,
        me: u64,
        member: u64,
        members: &[u64],
        dead_after: Duration,
        now: Instant,
    ) -> bool {
        let mut judges: Vec<u64> = members.iter().copied().filter(|m| *m != member).collect();
        if !judges.contains(&me) {
            judges.push(me);
        }
        let agree = judges
            .iter()
            .filter(|judge| {
                **judge == me
                    || match self.heard_of(**judge, member, now) {
                        Heard::NotSaid => true,
                        Heard::Silent(d) => d > dead_after,
                        Heard::Unknown | Heard::Answering => false,
                    }
            })
            .count();
        2 * agree > judges.len()
    }

    /// The utilization of every peer measured within [`SAMPLE_FRESH_FOR`]
    /// that is not stopping, as its latest answer said.
    pub fn live_utilization(&self, now: Instant) -> BTreeMap<u64, f64> {
        self.utilization
            .iter()
            .filter(|(peer, _)| {
                !self.stopping.contains_key(peer)
                    && self
                        .samples
                        .get(peer)
                        .is_some_and(|s| now.duration_since(s.at) <= SAMPLE_FRESH_FOR)
            })
            .map(|(peer, u)| (*peer, *u))
            .collect()
    }

    /// Whether `peer`'s latest answer said it settles commit outcomes.
    pub fn settles_outcomes(&self, peer: u64) -> bool {
        self.settles_outcomes.contains(&peer)
    }

    /// When `peer`'s process started (its wall clock, microseconds), as
    /// its latest answer said.
    pub fn started(&self, peer: u64) -> Option<u64> {
        self.started.get(&peer).copied()
    }

    /// Whether `peer` said it is stopping, in its latest answer or in a
    /// heartbeat of its own since.
    pub fn stopping(&self, peer: u64) -> bool {
        self.stopping.contains_key(&peer)
    }

    /// Records that `peer` refused a heartbeat at `at`: the call failed
    /// outright (its connection refused or reset), which a process that
    /// runs does not do, as opposed to answering late, which a busy or
    /// paused one does.
    pub fn record_refusal(&mut self, peer: u64, at: Instant) {
        self.refusals.insert(peer, at);
    }

    /// Whether `peer`'s latest heartbeat was refused: it refused one after
    /// its latest sample (or never gave one). A refusal is known at the
    /// first heartbeat after a process dies, where a missing sample takes
    /// several heartbeats to tell from a slow one.
    pub fn refused(&self, peer: u64) -> bool {
        match (self.refusals.get(&peer), self.samples.get(&peer)) {
            (Some(refused), Some(sample)) => *refused > sample.at,
            (Some(_), None) => true,
            (None, _) => false,
        }
    }

    /// When `peer` last answered a heartbeat, however long ago.
    pub fn last_answer(&self, peer: u64) -> Option<Instant> {
        self.samples.get(&peer).map(|s| s.at)
    }

    /// The latest sample of `peer`, if fresh.
    pub fn get(&self, peer: u64, now: Instant) -> Option<Sample> {
        self.samples
            .get(&peer)
            .copied()
            .filter(|s| now.duration_since(s.at) <= SAMPLE_FRESH_FOR)
    }

    /// Why this node must stop, if it must: its offset from a majority of
    /// the live nodes (those with a fresh sample, and itself) is provably
    /// above `0.8 * max_offset`.
    pub fn verdict(&self, max_offset: Duration, now: Instant) -> Option<String> {
        let bound = u64::try_from(max_offset.as_micros() * 4 / 5).unwrap_or(u64::MAX);
        let fresh: Vec<(u64, Sample)> = self
            .samples
            .iter()
            .filter(|(_, s)| now.duration_since(s.at) <= SAMPLE_FRESH_FOR)
            .map(|(id, s)| (*id, *s))
            .collect();
        let live = fresh.len() + 1;
        let far: Vec<&(u64, Sample)> = fresh
            .iter()
            .filter(|(_, s)| s.provably_above(bound))
            .collect();
        if far.is_empty() || far.len() * 2 <= live {
            return None;
        }
        let list: Vec<String> = far
            .iter()
            .map(|(id, s)| {
                format!(
                    "node {id} {:+.1} ms (±{:.1})",
                    s.offset_us as f64 / 1000.0,
                    s.error_us as f64 / 1000.0
                )
            })
            .collect();
        Some(format!(
            "this node's clock is off from {} of the {live} live nodes by more than 0.8 x the \
             maximum clock offset of {} ms: {}; fix its time synchronisation (chrony, NTP)",
            far.len(),
            max_offset.as_secs_f64() * 1000.0,
            list.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_brackets_the_remote_reading() {
        let now = Instant::now();
        // Sent at 1000, answered at 1400; the peer read 1200: no offset.
        let s = Sample::of(1_000, 1_200, 1_400, now);
        assert_eq!((s.offset_us, s.error_us), (0, 200));
        // The peer is 50 ms ahead.
        let s = Sample::of(1_000, 51_200, 1_400, now);
        assert_eq!(s.offset_us, 50_000);
        assert!(s.provably_above(8_000));
        // A 60 ms round trip hides a 20 ms offset.
        let s = Sample::of(0, 50_000, 60_000, now);
        assert_eq!((s.offset_us, s.error_us), (20_000, 30_000));
        assert!(!s.provably_above(8_000));
        // A clock that went backwards between t0 and t1 counts as no time.
        let s = Sample::of(5_000, 5_000, 4_000, now);
        assert_eq!((s.offset_us, s.error_us), (0, 0));
    }

    #[test]
    fn a_member_is_dead_only_if_a_majority_of_the_others_find_it_silent() {
        let t = Instant::now();
        let secs = Duration::from_secs;
        let dead_after = secs(6);
        let silent = |d: u64| Some(vec![(3u64, secs(d))]);
        let hears_all: Option<Vec<(u64, Duration)>> = Some(vec![]);
        // Node 1 judges member 3 of {1, 2, 3}.
        let mut clocks = Clocks::default();
        assert!(
            !clocks.silent_to_majority(1, 3, &[1, 2, 3], dead_after, t),
            "nothing heard from node 2: it does not agree"
        );
        clocks.record_silences(2, t, hears_all.clone());
        assert_eq!(clocks.heard_of(2, 3, t), Heard::Answering);
        assert!(
            !clocks.silent_to_majority(1, 3, &[1, 2, 3], dead_after, t),
            "node 2 hears node 3: only the link from node 1 is cut"
        );
        clocks.record_silences(2, t, silent(4));
        assert!(
            !clocks.silent_to_majority(1, 3, &[1, 2, 3], dead_after, t),
            "silent to node 2 for 4 s only"
        );
        // A second later node 2's report counts as 5 s; then it says 7 s.
        assert_eq!(clocks.heard_of(2, 3, t + secs(1)), Heard::Silent(secs(5)));
        clocks.record_silences(2, t + secs(3), silent(7));
        assert!(clocks.silent_to_majority(1, 3, &[1, 2, 3], dead_after, t + secs(3)));
        // A report older than SAMPLE_FRESH_FOR no longer counts.
        let stale = t + secs(3) + SAMPLE_FRESH_FOR + secs(1);
        assert_eq!(clocks.heard_of(2, 3, stale), Heard::Unknown);
        assert!(!clocks.silent_to_majority(1, 3, &[1, 2, 3], dead_after, stale));
        // An older node that does not report silences defers to node 1.
        clocks.record_silences(2, t, None::<Vec<(u64, Duration)>>);
        assert_eq!(clocks.heard_of(2, 3, t), Heard::NotSaid);
        assert!(clocks.silent_to_majority(1, 3, &[1, 2, 3], dead_after, t));
        // Of five members, node 1 and two of the other three must agree.
        let mut clocks = Clocks::default();
        clocks.record_silences(2, t, silent(10));
        clocks.record_silences(4, t, hears_all.clone());
        clocks.record_silences(5, t, hears_all.clone());
        let five = [1, 2, 3, 4, 5];
        assert!(!clocks.silent_to_majority(1, 3, &five, dead_after, t));
        clocks.record_silences(4, t, silent(8));
        assert!(clocks.silent_to_majority(1, 3, &five, dead_after, t));
        assert_eq!(
            clocks.unheard_by(3, five, t),
            [2, 4],
            "as the status shows it"
        );
        assert!(clocks.unheard_by(3, five, t + secs(6)).is_empty(), "stale");
        // Of two members, the judge's view is enough.
        assert!(Clocks::default().silent_to_majority(1, 3, &[1, 3], dead_after, t));
        // A malformed answer keeps at most MAX_SILENCES_KEPT members.
        let mut clocks = Clocks::default();
        clocks.record_silences(2, t, Some((0..1_000_000u64).map(|n| (n, secs(1)))));
        let kept = clocks.silences[&2].reported.as_ref().unwrap().len();
        assert_eq!(kept, MAX_SILENCES_KEPT);
    }

    #[test]
    fn a_refusal_counts_until_the_next_sample() {
        let t = Instant::now();
        let later = |ms| t + Duration::from_millis(ms);
        let mut clocks = Clocks::default();
        assert!(!clocks.refused(2), "never heard of: not refused");
        clocks.record_refusal(2, later(0));
        assert!(clocks.refused(2), "refused and never answered");
        clocks.record(2, Sample::of(0, 50, 100, later(1_000)), 0);
        assert!(!clocks.refused(2), "answered after it refused");
        clocks.record_refusal(2, later(2_000));
        assert!(clocks.refused(2), "refused after its last answer");
        assert!(!clocks.refused(3), "another peer is untouched");
    }

    #[test]
    fn a_peer_that_says_it_is_stopping_counts_as_stopping_until_it_answers_otherwise() {
        let t = Instant::now();
        let later = |ms| t + Duration::from_millis(ms);
        let mut clocks = Clocks::default();
        clocks.record(2, Sample::of(0, 50, 100, later(0)), 5_000);
        assert!(!clocks.stopping(2));
        clocks.record_stopping(2, Sample::of(0, 70, 100, later(1_000)), 5_000);
        assert!(clocks.stopping(2), "said it is stopping");
        assert!(!clocks.refused(2), "it answered");
        assert_eq!(
            clocks.get(2, later(1_000)).map(|s| s.offset_us),
            Some(20),
            "its clock still counts"
        );
        assert!(!clocks.stopping(3), "another peer is untouched");
        // An answer the process sent before it began to stop, arriving
        // after the mark: still stopping.
        clocks.record(2, Sample::of(0, 50, 100, later(1_500)), 5_000);
        assert!(
            clocks.stopping(2),
            "a late answer of the stopping process does not clear the mark"
        );
        clocks.record(2, Sample::of(0, 50, 100, later(2_000)), 8_000);
        assert!(
            !clocks.stopping(2),
            "restarted: another process answers as a running node"
        );
        assert_eq!(clocks.started(2), Some(8_000), "and its start is known");
        clocks.mark_stopping(3, 6_000);
        assert!(clocks.stopping(3), "said so in a heartbeat of its own");
        assert_eq!(clocks.started(3), Some(6_000), "which says its start");
        clocks.record(3, Sample::of(0, 50, 100, later(2_500)), 6_000);
        assert!(clocks.stopping(3), "the same process is still stopping");
        clocks.record(3, Sample::of(0, 50, 100, later(3_000)), 7_000);
        assert!(!clocks.stopping(3), "then a new one answered as running");
        // A node that does not say its start: any answer clears the mark.
        clocks.mark_stopping(4, 0);
        clocks.record(4, Sample::of(0, 50, 100, later(3_000)), 0);
        assert!(!clocks.stopping(4));
    }

    #[test]
    fn the_latest_start_a_peer_reported_is_kept() {
        let mut clocks = Clocks::default();
        assert_eq!(clocks.started(2), None, "no start heard of");
        clocks.record_start(2, 0);
        assert_eq!(clocks.started(2), None, "0: a node that does not say");
        clocks.record_start(2, 5_000);
        clocks.record_start(2, 9_000);
        assert_eq!(
            clocks.started(2),
            Some(9_000),
            "restarted: the latest start"
        );
        clocks.record_start(2, 5_000);
        assert_eq!(
            clocks.started(2),
            Some(9_000),
            "a late answer of the earlier process does not take it back"
        );
        assert_eq!(clocks.started(3), None, "another peer is untouched");
    }

    #[test]
    fn a_peer_settles_outcomes_only_while_its_latest_answer_says_so() {
        let mut clocks = Clocks::default();
        assert!(!clocks.settles_outcomes(2), "nothing heard yet");
        clocks.record_settles_outcomes(2, true);
        assert!(clocks.settles_outcomes(2));
        assert!(!clocks.settles_outcomes(3), "another peer is untouched");
        // Restarted with a version that does not (its answer lacks the field).
        clocks.record_settles_outcomes(2, false);
        assert!(!clocks.settles_outcomes(2));
    }

    #[test]
    fn the_guard_needs_a_majority_of_the_live_nodes() {
        let now = Instant::now();
        let max = Duration::from_millis(10);
        let far = Sample::of(0, 20_000, 100, now);
        let near = Sample::of(0, 50, 100, now);
        let mut clocks = Clocks::default();
        assert_eq!(clocks.verdict(max, now), None);
        // One of three nodes far away: that peer's problem, not ours.
        clocks.record(2, far, 0);
        clocks.record(3, near, 0);
        assert_eq!(clocks.verdict(max, now), None);
        // Both peers far away: this node is the odd one out.
        clocks.record(3, far, 0);
        let why = clocks.verdict(max, now).expect("must stop");
        assert!(why.contains("2 of the 3 live nodes"), "{why}");
        // Of two nodes, one far peer is a majority of nothing: 1 of 2 is
        // not more than half.
        let mut two = Clocks::default();
        two.record(2, far, 0);
        assert_eq!(two.verdict(max, now), None);
        // Stale samples do not count.
        let later = now + SAMPLE_FRESH_FOR + Duration::from_secs(1);
        assert_eq!(clocks.verdict(max, later), None);
        assert_eq!(clocks.get(2, later), None);
    }
}
