//! The pause between attempts of an aborted transaction.
//!
//! Exponential with jitter, as Spanner's client libraries do: the first
//! retry waits about 1 ms, each later one up to twice as long, capped at
//! 32 ms, and every pause is drawn at random from the upper half of its
//! window so that transactions aborted together do not retry in lockstep.

use std::time::Duration;

use rand::Rng;

const FIRST: Duration = Duration::from_millis(1);
const CAP: Duration = Duration::from_millis(32);

/// The pauses of one transaction's retries.
#[derive(Debug, Clone)]
pub struct Backoff {
    next: Duration,
}

impl Default for Backoff {
    fn default() -> Backoff {
        Backoff { next: FIRST }
    }
}

impl Backoff {
    /// The pause before the next attempt (and doubles the one after).
    pub fn next_pause(&mut self) -> Duration {
        let window = self.next;
        self.next = (self.next * 2).min(CAP);
        let half = window / 2;
        half + rand::thread_rng().gen_range(Duration::ZERO..=half)
    }

    /// Sleeps for [`Backoff::next_pause`].
    pub fn wait(&mut self) {
        std::thread::sleep(self.next_pause());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_grow_to_the_cap_and_stay_in_their_window() {
        let mut b = Backoff::default();
        let windows = [1u64, 2, 4, 8, 16, 32, 32, 32];
        for w in windows {
            let p = b.next_pause();
            let w = Duration::from_millis(w);
            assert!(p >= w / 2 && p <= w, "{p:?} outside [{:?}, {w:?}]", w / 2);
        }
    }
}
