//! The timestamp oracle: where commit timestamps come from.
//!
//! A commit timestamp is a `u64` count of nanoseconds since the Unix epoch, with microsecond
//! granularity (always a multiple of 1,000), like Spanner's. The oracle hands them out
//! strictly increasing, even when the wall clock stalls or steps backwards:
//!
//! ```text
//! next = max(floor_to_micros(clock.now_nanos()), last + 1_000)
//!
//! clock:   10.000ms   10.000ms   9.998ms (stepped back)   12.345ms
//! issued:  10.000ms   10.001ms   10.002ms                 12.345ms
//! ```
//!
//! so a timestamp is close to real time when the clock behaves and never repeats when it
//! does not. The clock is injected ([`Clock`]) so tests drive time by hand ([`ManualClock`]).
//!
//! In a cluster the oracle is also a hybrid logical clock: a node that learns of a
//! timestamp another node assigned (a commit timestamp in a log entry it applies, a read
//! timestamp in a request) passes it to [`TimestampOracle::observe`], and every timestamp
//! it issues afterwards is greater, whatever its own clock reads.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// Nanoseconds per microsecond: the granularity of commit timestamps.
pub const TIMESTAMP_GRANULARITY_NANOS: u64 = 1_000;

/// A source of wall-clock time in nanoseconds since the Unix epoch.
pub trait Clock: Send + Sync {
    /// The current time, in nanoseconds since the Unix epoch.
    fn now_nanos(&self) -> u64;
}

/// The operating system's real-time clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_nanos(&self) -> u64 {
        // A clock before 1970 reads as the epoch; one past 2554 saturates. Both are caught
        // by the oracle's `last + 1000` rule, so timestamps stay increasing.
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
            .unwrap_or(0)
    }
}

/// A clock that only moves when told to, for deterministic tests.
#[derive(Debug, Default)]
pub struct ManualClock {
    nanos: AtomicU64,
}

impl ManualClock {
    /// A clock reading `nanos`.
    pub fn new(nanos: u64) -> Self {
        ManualClock {
            nanos: AtomicU64::new(nanos),
        }
    }

    /// Sets the time (it may go backwards, to test that the oracle copes).
    pub fn set(&self, nanos: u64) {
        self.nanos.store(nanos, Ordering::SeqCst);
    }

    /// Moves the time forward by `nanos`.
    pub fn advance(&self, nanos: u64) {
        self.nanos.fetch_add(nanos, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_nanos(&self) -> u64 {
        self.nanos.load(Ordering::SeqCst)
    }
}

/// Rounds `nanos` down to a whole microsecond.
fn floor_micros(nanos: u64) -> u64 {
    nanos - nanos % TIMESTAMP_GRANULARITY_NANOS
}

/// Hands out strictly increasing commit timestamps. Cheap to call from many threads (one
/// compare-and-swap loop, no lock).
pub struct TimestampOracle {
    clock: Arc<dyn Clock>,
    /// The last timestamp issued (or the floor given at construction). Invariant: every
    /// timestamp issued later is greater.
    last: AtomicU64,
}

impl TimestampOracle {
    /// An oracle reading `clock`, with no timestamps issued yet.
    pub fn new(clock: Arc<dyn Clock>) -> Self {
        Self::resume(clock, 0)
    }

    /// An oracle that will only issue timestamps greater than `last`: use the highest
    /// commit timestamp found in storage after a restart, so that a clock that went
    /// backwards across the restart cannot reuse a timestamp.
    pub fn resume(clock: Arc<dyn Clock>, last: u64) -> Self {
        TimestampOracle {
            clock,
            last: AtomicU64::new(last),
        }
    }

    /// The next commit timestamp: a multiple of 1,000 greater than every one issued before.
    pub fn next(&self) -> u64 {
        let now = floor_micros(self.clock.now_nanos());
        let mut last = self.last.load(Ordering::Acquire);
        loop {
            // `floor_micros(last) + 1000` rather than `last + 1000` keeps the result on the
            // microsecond grid even if `resume` was given an off-grid floor.
            let after_last = floor_micros(last).saturating_add(TIMESTAMP_GRANULARITY_NANOS);
            let next = now.max(after_last);
            match self
                .last
                .compare_exchange_weak(last, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return next,
                Err(current) => last = current,
            }
        }
    }

    /// Makes every timestamp issued from now on greater than `ts`, a timestamp learnt from
    /// elsewhere (the hybrid logical clock's receive rule). Does nothing if one at or above
    /// it was issued or observed already.
    pub fn observe(&self, ts: u64) {
        self.last.fetch_max(ts, Ordering::AcqRel);
    }

    /// The last timestamp issued or observed (or the floor given to
    /// [`TimestampOracle::resume`]).
    pub fn last(&self) -> u64 {
        self.last.load(Ordering::Acquire)
    }

    /// The clock's current time rounded down to a microsecond; issues nothing.
    pub fn now(&self) -> u64 {
        floor_micros(self.clock.now_nanos())
    }
}

impl std::fmt::Debug for TimestampOracle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TimestampOracle")
            .field("last", &self.last())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_the_clock_at_microsecond_granularity() {
        let clock = Arc::new(ManualClock::new(5_000_123));
        let oracle = TimestampOracle::new(clock.clone());
        assert_eq!(oracle.next(), 5_000_000);
        clock.set(9_999_999);
        assert_eq!(oracle.next(), 9_999_000);
    }

    #[test]
    fn stalled_or_backward_clock_still_increases() {
        let clock = Arc::new(ManualClock::new(10_000_000));
        let oracle = TimestampOracle::new(clock.clone());
        assert_eq!(oracle.next(), 10_000_000);
        assert_eq!(oracle.next(), 10_001_000);
        clock.set(9_998_000);
        assert_eq!(oracle.next(), 10_002_000);
        clock.set(12_345_678);
        assert_eq!(oracle.next(), 12_345_000);
    }

    #[test]
    fn resume_stays_above_the_floor_and_on_the_grid() {
        let clock = Arc::new(ManualClock::new(1_000));
        let oracle = TimestampOracle::resume(clock, 7_500);
        assert_eq!(oracle.last(), 7_500);
        assert_eq!(oracle.next(), 8_000);
        assert_eq!(oracle.next(), 9_000);
    }

    #[test]
    fn an_observed_timestamp_moves_the_next_one_above_it() {
        let clock = Arc::new(ManualClock::new(10_000_000));
        let oracle = TimestampOracle::new(clock.clone());
        assert_eq!(oracle.next(), 10_000_000);
        // Another node's clock is 5 ms ahead.
        oracle.observe(15_000_000);
        assert_eq!(oracle.next(), 15_001_000);
        // An older timestamp changes nothing.
        oracle.observe(12_000_000);
        assert_eq!(oracle.next(), 15_002_000);
        // Once the clock passes it, timestamps follow the clock again.
        clock.set(20_000_000);
        assert_eq!(oracle.next(), 20_000_000);
    }

    #[test]
    fn system_clock_is_after_2020() {
        assert!(SystemClock.now_nanos() > 1_577_836_800_000_000_000);
    }
}
