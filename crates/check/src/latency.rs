//! Latency samples and their percentiles.
//!
//! A [`Recorder`] collects one sample per operation (microseconds) from
//! many tasks; [`Recorder::take`] empties it at the end of an interval and
//! returns the interval's [`Summary`]. Samples are kept whole and sorted
//! rather than bucketed: an interval holds at most a few hundred thousand,
//! and exact percentiles are easier to trust.

use std::time::Duration;

use std::sync::Mutex;

/// Collects operation latencies.
#[derive(Debug, Default)]
pub struct Recorder {
    samples: Mutex<Vec<u32>>,
}

/// Percentiles of a set of samples.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct Summary {
    /// Samples.
    pub count: u64,
    /// Median, milliseconds.
    pub p50_ms: f64,
    /// 99th percentile, milliseconds.
    pub p99_ms: f64,
    /// Slowest, milliseconds.
    pub max_ms: f64,
}

impl Recorder {
    /// The samples; a task that panicked while holding the lock left
    /// plain numbers behind, so poisoning is ignored.
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<u32>> {
        self.samples.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records one operation.
    pub fn record(&self, d: Duration) {
        let micros = d.as_micros().min(u128::from(u32::MAX)) as u32;
        self.lock().push(micros);
    }

    /// The samples since the last call, summarised; the recorder is empty
    /// afterwards.
    pub fn take(&self) -> (Summary, Vec<u32>) {
        let mut samples = std::mem::take(&mut *self.lock());
        samples.sort_unstable();
        (summarize_sorted(&samples), samples)
    }
}

/// Percentiles of sorted samples (microseconds).
pub fn summarize_sorted(sorted: &[u32]) -> Summary {
    if sorted.is_empty() {
        return Summary::default();
    }
    let at = |q: f64| {
        // Nearest rank: the smallest sample with at least q of them at or below.
        let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
        f64::from(sorted[rank - 1]) / 1000.0
    };
    Summary {
        count: sorted.len() as u64,
        p50_ms: at(0.50),
        p99_ms: at(0.99),
        max_ms: f64::from(sorted[sorted.len() - 1]) / 1000.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let samples: Vec<u32> = (1..=100).map(|i| i * 1000).collect();
        let s = summarize_sorted(&samples);
        assert_eq!(
            (s.count, s.p50_ms, s.p99_ms, s.max_ms),
            (100, 50.0, 99.0, 100.0)
        );
        assert_eq!(summarize_sorted(&[]), Summary::default());
        let r = Recorder::default();
        r.record(Duration::from_millis(3));
        assert_eq!(r.take().0.p50_ms, 3.0);
        assert_eq!(r.take().0.count, 0);
    }
}
