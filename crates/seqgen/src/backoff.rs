//! The pause between attempts of an aborted transaction.
//!
//! Exponential with jitter, as Spanner's client libraries do: each pause is
//! drawn at random within `±randomization` of its window, and each window
//! is `multiplier` times the previous one, up to `max`, so transactions
//! aborted together do not retry in lockstep. Two policies are provided:
//!
//! * [`RetryPolicy::FAST`], the library's default: windows of 1 ms, 2 ms,
//!   4 ms ... up to 32 ms. An aborted transaction is back in the queue
//!   within a few transaction times.
//! * [`RetryPolicy::JAVA_CLIENT`]: the policy of the Java client library
//!   the sequence-generation article measured with (as of 2019-2020, when
//!   the server sends no retry delay): windows of 1 s growing 1.5x up to
//!   32 s, ±50%, retried on the same session so that it keeps its
//!   wound-wait priority (Spanner gives a transaction retried that way a
//!   higher priority). `rowtree bench sequences --abort-backoff java`.

use std::time::Duration;

use rand::Rng;

use crate::error::{Error, Result};
use crate::store::MAX_ATTEMPTS;

/// How long to pause between attempts of an aborted transaction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    /// The first window.
    pub first: Duration,
    /// How much each window grows over the previous one.
    pub multiplier: f64,
    /// The largest window.
    pub max: Duration,
    /// A pause is drawn uniformly within `window * (1 ± randomization)`.
    pub randomization: f64,
    /// Whether a retried attempt keeps the first attempt's wound-wait
    /// priority (so it ages and wins its conflicts), as Spanner does for a
    /// transaction retried on the same session. The embedded store honours
    /// it; over the gRPC API the server decides.
    pub keep_priority: bool,
}

impl RetryPolicy {
    /// 1 ms doubling to 32 ms, ±50%, each attempt a fresh transaction (as
    /// the remote store's client retries on any pooled session).
    pub const FAST: RetryPolicy = RetryPolicy {
        first: Duration::from_millis(1),
        multiplier: 2.0,
        max: Duration::from_millis(32),
        randomization: 0.5,
        keep_priority: false,
    };

    /// 1 s growing 1.5x to 32 s, ±50%: the Java client's abort backoff,
    /// retrying on the same session, whose transaction keeps its priority.
    pub const JAVA_CLIENT: RetryPolicy = RetryPolicy {
        first: Duration::from_secs(1),
        multiplier: 1.5,
        max: Duration::from_secs(32),
        randomization: 0.5,
        keep_priority: true,
    };
}

impl Default for RetryPolicy {
    fn default() -> RetryPolicy {
        RetryPolicy::FAST
    }
}

/// The pauses of one transaction's retries.
#[derive(Debug, Clone)]
pub struct Backoff {
    policy: RetryPolicy,
    window: Duration,
}

impl Default for Backoff {
    fn default() -> Backoff {
        Backoff::new(RetryPolicy::FAST)
    }
}

impl Backoff {
    /// The pauses of a transaction retried under `policy`.
    pub fn new(policy: RetryPolicy) -> Backoff {
        Backoff {
            policy,
            window: policy.first,
        }
    }

    /// The pause before the next attempt (and grows the window).
    pub fn next_pause(&mut self) -> Duration {
        let window = self.window;
        self.window = window.mul_f64(self.policy.multiplier).min(self.policy.max);
        let r = self.policy.randomization.clamp(0.0, 1.0);
        window.mul_f64(1.0 + rand::thread_rng().gen_range(-r..=r))
    }

    /// Sleeps for [`Backoff::next_pause`].
    pub fn wait(&mut self) {
        std::thread::sleep(self.next_pause());
    }
}

/// Runs `attempt` until it returns anything but ABORTED, pausing under
/// `policy` between attempts; after [`MAX_ATTEMPTS`] aborted attempts it
/// gives up with [`Error::TooManyAborts`]. Every [`Store`](crate::Store)
/// retries its transactions through this.
pub(crate) fn retry_aborted<T>(
    policy: RetryPolicy,
    mut attempt: impl FnMut() -> Result<T>,
) -> Result<T> {
    let mut backoff = Backoff::new(policy);
    let mut attempts = 0;
    loop {
        attempts += 1;
        match attempt() {
            Err(e) if e.is_aborted() => {
                if attempts >= MAX_ATTEMPTS {
                    return Err(Error::TooManyAborts {
                        attempts,
                        last: e.to_string(),
                    });
                }
                backoff.wait();
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn windows(policy: RetryPolicy, expected_ms: &[f64]) {
        let mut b = Backoff::new(policy);
        for w in expected_ms {
            let p = b.next_pause().as_secs_f64() * 1000.0;
            assert!(
                p >= w * 0.5 - 1e-6 && p <= w * 1.5 + 1e-6,
                "{p} ms outside 50% of {w} ms"
            );
        }
    }

    #[test]
    fn pauses_grow_to_the_cap_and_stay_in_their_window() {
        windows(
            RetryPolicy::FAST,
            &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 32.0, 32.0],
        );
        windows(
            RetryPolicy::JAVA_CLIENT,
            &[
                1000.0,
                1500.0,
                2250.0,
                3375.0,
                5062.5,
                7593.75,
                11390.625,
                17085.9375,
                25628.90625,
                32000.0,
            ],
        );
    }
}
