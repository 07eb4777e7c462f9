//! [`NodeGate`]: per-node admission, so a node's capacity is real on one
//! machine.
//!
//! All splits live in one process, but each split is served by a node
//! ([`Split::node`](crate::Split::node)), and a node has a capacity of one
//! node-second of work per second. The gate keeps one token bucket per node,
//! refilled at the node's speed; the [`Router`](crate::Router) asks the gate
//! of the split's node before (or, for scans, as) it serves an access, and
//! waits until the node has paid for the work. Requests to splits on a
//! saturated node wait; requests to other nodes don't.
//!
//! Costs follow the simulator's model (Spanner's published per-node
//! throughput for 1 KB rows): a read costs [`READ_COST`] (1/22,500 of a
//! node-second) and each written row [`WRITE_ROW_COST`] (1/3,500). The
//! capacity is given in reads per second: a gate of capacity `c` runs each
//! node at `c / 22,500` node-seconds per second, so it serves `c` reads or
//! `c * 3,500 / 22,500` row writes per second.
//!
//! The bucket may go into debt: a request that finds too few tokens takes
//! them anyway and waits until the debt is repaid, so concurrent requests
//! queue in arrival order and the waiting time is a pure function of the
//! (injectable) clock: [`NodeGate::reserve`] is deterministic.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use crate::clock::{system_clock, RouterClock};
use crate::split::NodeId;

/// The cost of one read (a get, or a row of a scan), in node-seconds.
pub const READ_COST: f64 = 1.0 / 22_500.0;
/// The cost of writing one row, in node-seconds.
pub const WRITE_ROW_COST: f64 = 1.0 / 3_500.0;
/// A node's capacity at full speed, in reads per second.
pub const FULL_NODE_READS_PER_SECOND: f64 = 22_500.0;
/// How much unused capacity a node may bank for a burst: 10 ms of its work.
pub const DEFAULT_BURST: Duration = Duration::from_millis(10);

/// How the gate waits (injectable for tests).
pub type Sleeper = Arc<dyn Fn(Duration) + Send + Sync>;

#[derive(Debug, Clone, Copy)]
struct Bucket {
    /// Node-seconds available (negative: debt to wait out).
    tokens: f64,
    /// When the bucket was last refilled (nanoseconds).
    last: u64,
}

/// Per-node token buckets. See the module docs.
pub struct NodeGate {
    /// Node-seconds of work each node serves per second.
    speed: f64,
    /// The most node-seconds a bucket holds.
    burst: f64,
    buckets: Mutex<Vec<Option<Bucket>>>,
    clock: RouterClock,
    sleep: Sleeper,
    waited_nanos: Mutex<Vec<u64>>,
    admitted: AtomicU64,
    /// The work admitted, per second of the clock at which it is served
    /// (its reservation plus its wait), in shares of a node: a ring of
    /// [`USE_SECONDS`] seconds, each `(second, share)`.
    used: Mutex<Vec<(u64, f64)>>,
}

/// The seconds [`NodeGate::recent_use`] can look back over, and ahead
/// (work queued behind a saturated node is served later).
pub const USE_SECONDS: usize = 64;

impl std::fmt::Debug for NodeGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeGate")
            .field("reads_per_second", &self.reads_per_second())
            .field("burst", &self.burst)
            .finish_non_exhaustive()
    }
}

impl NodeGate {
    /// A gate whose nodes each serve `reads_per_second` reads per second,
    /// timed by the system clock and waiting with `std::thread::sleep`.
    pub fn new(reads_per_second: f64) -> NodeGate {
        NodeGate::with_time(
            reads_per_second,
            system_clock(),
            Arc::new(std::thread::sleep),
        )
    }

    /// A gate timed by `clock` (nanoseconds) that waits with `sleep`.
    pub fn with_time(reads_per_second: f64, clock: RouterClock, sleep: Sleeper) -> NodeGate {
        let speed = (reads_per_second / FULL_NODE_READS_PER_SECOND).max(1e-9);
        NodeGate {
            speed,
            burst: speed * DEFAULT_BURST.as_secs_f64(),
            buckets: Mutex::new(Vec::new()),
            clock,
            sleep,
            waited_nanos: Mutex::new(Vec::new()),
            admitted: AtomicU64::new(0),
            used: Mutex::new(vec![(u64::MAX, 0.0); USE_SECONDS]),
        }
    }

    /// The share of a node the work admitted (on all of this gate's
    /// nodes) used per second, over the last `secs` whole seconds before
    /// now (at most half of [`USE_SECONDS`]), counting each request in the
    /// second it is served: 1.0 is a node saturated throughout. A cluster
    /// node, whose gate has one node, reports this as its utilization
    /// (what its lease balancer compares); unlike the per-split load, it
    /// does not start again from nothing when a split is cut.
    pub fn recent_use(&self, secs: u64) -> f64 {
        let secs = secs.clamp(1, (USE_SECONDS / 2) as u64);
        let current = (self.clock)() / 1_000_000_000;
        let used = self.used.lock();
        // Folded from +0.0: an empty `sum` of floats is -0.0, which an
        // idle node's load would show as "-0%".
        let total = used
            .iter()
            .filter(|(second, _)| *second < current && current - second <= secs)
            .fold(0.0, |total, (_, share)| total + share);
        total / secs as f64
    }

    /// Records `share` of a node used in the second of `at` (nanoseconds).
    fn record_use(&self, at: u64, share: f64) {
        let second = at / 1_000_000_000;
        let mut used = self.used.lock();
        let slot = &mut used[(second % USE_SECONDS as u64) as usize];
        if slot.0 != second {
            *slot = (second, 0.0);
        }
        slot.1 += share;
    }

    /// How long a request of `cost` (full-speed node-seconds) occupies a
    /// node of this gate, in nanoseconds: the CPU time load tracking charges
    /// its split, so CPU scores are percentages of these nodes.
    pub fn node_nanos(&self, cost: f64) -> u64 {
        (cost.max(0.0) / self.speed * 1e9) as u64
    }

    /// The capacity of each node, in reads per second.
    pub fn reads_per_second(&self) -> f64 {
        self.speed * FULL_NODE_READS_PER_SECOND
    }

    /// Takes `cost` node-seconds from `node`'s bucket at `now` and returns
    /// how long the request must wait before it is served (zero if the node
    /// had the capacity). Deterministic: no clock is read, nothing sleeps.
    pub fn reserve(&self, node: NodeId, cost: f64, now: u64) -> Duration {
        let mut buckets = self.buckets.lock();
        let i = node.0 as usize;
        if buckets.len() <= i {
            buckets.resize(i + 1, None);
        }
        let bucket = buckets[i].get_or_insert(Bucket {
            tokens: self.burst,
            last: now,
        });
        if now > bucket.last {
            let elapsed = (now - bucket.last) as f64 / 1e9;
            bucket.tokens = (bucket.tokens + elapsed * self.speed).min(self.burst);
            bucket.last = now;
        }
        bucket.tokens -= cost.max(0.0);
        if bucket.tokens >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-bucket.tokens / self.speed)
        }
    }

    /// Admits a request of `cost` node-seconds on `node`: reserves it at
    /// the clock's time and waits (sleeps) as long as the node needs.
    /// Returns the time waited.
    pub fn admit(&self, node: NodeId, cost: f64) -> Duration {
        let now = (self.clock)();
        let wait = self.reserve(node, cost, now);
        self.record_use(
            now.saturating_add(u64::try_from(wait.as_nanos()).unwrap_or(u64::MAX)),
            cost.max(0.0) / self.speed,
        );
        self.admitted.fetch_add(1, Ordering::Relaxed);
        if !wait.is_zero() {
            {
                let mut waited = self.waited_nanos.lock();
                let i = node.0 as usize;
                if waited.len() <= i {
                    waited.resize(i + 1, 0);
                }
                waited[i] =
                    waited[i].saturating_add(u64::try_from(wait.as_nanos()).unwrap_or(u64::MAX));
            }
            (self.sleep)(wait);
        }
        wait
    }

    /// The total time requests waited for `node` so far.
    pub fn waited(&self, node: NodeId) -> Duration {
        let waited = self.waited_nanos.lock();
        Duration::from_nanos(waited.get(node.0 as usize).copied().unwrap_or(0))
    }

    /// Requests admitted so far (on all nodes).
    pub fn admitted(&self) -> u64 {
        self.admitted.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn gate(reads_per_second: f64) -> NodeGate {
        NodeGate::with_time(
            reads_per_second,
            Arc::new(|| 0),
            Arc::new(|_| panic!("reserve does not sleep")),
        )
    }

    #[test]
    fn a_node_within_capacity_does_not_wait() {
        // 1,000 reads/s, burst 10 ms = 10 reads.
        let g = gate(1_000.0);
        for _ in 0..10 {
            assert_eq!(g.reserve(NodeId(0), READ_COST, 0), Duration::ZERO);
        }
        // The 11th read waits one read's time: 1 ms.
        let w = g.reserve(NodeId(0), READ_COST, 0);
        assert!((w.as_secs_f64() - 0.001).abs() < 1e-6, "{w:?}");
        // Time repays the debt.
        assert_eq!(g.reserve(NodeId(0), 0.0, 2 * MS), Duration::ZERO);
    }

    #[test]
    fn recent_use_counts_work_in_the_second_it_is_served() {
        let now = Arc::new(AtomicU64::new(10 * 1_000 * MS));
        let clock = now.clone();
        // 1,000 reads/s: a read is a thousandth of the node.
        let g = NodeGate::with_time(
            1_000.0,
            Arc::new(move || clock.load(Ordering::Relaxed)),
            Arc::new(|_| {}),
        );
        // 1,500 reads offered in second 10: a saturated node serves 1,000
        // of them (and the 10 ms burst) that second, the rest in the next.
        for _ in 0..1_500 {
            g.admit(NodeId(0), READ_COST);
        }
        now.store(12 * 1_000 * MS, Ordering::Relaxed);
        let two = g.recent_use(2);
        assert!((two - 0.75).abs() < 1e-9, "{two}");
        let one = g.recent_use(1);
        assert!((one - 0.49).abs() < 0.02, "second 11: {one}");
        // Ten quiet seconds later nothing is left in view.
        now.store(23 * 1_000 * MS, Ordering::Relaxed);
        let idle = g.recent_use(10);
        assert_eq!(idle, 0.0);
        // Positive zero: shown as "0%", not "-0%".
        assert!(idle.is_sign_positive(), "{idle}");
        assert_eq!(format!("{:.0}%", idle * 100.0), "0%");
    }

    #[test]
    fn nodes_are_independent() {
        let g = gate(1_000.0);
        // Saturate node 0.
        let mut last = Duration::ZERO;
        for _ in 0..100 {
            last = g.reserve(NodeId(0), READ_COST, 0);
        }
        assert!(last >= Duration::from_millis(89), "{last:?}");
        // Node 1 is not affected.
        assert_eq!(g.reserve(NodeId(1), READ_COST, 0), Duration::ZERO);
    }

    #[test]
    fn writes_cost_more_than_reads() {
        // At 22,500 reads/s a node writes 3,500 rows/s: 100 rows take
        // 100/3500 s minus the 10 ms burst.
        let g = gate(FULL_NODE_READS_PER_SECOND);
        let w = g.reserve(NodeId(0), 100.0 * WRITE_ROW_COST, 0);
        let expected = 100.0 / 3500.0 - 0.010;
        assert!((w.as_secs_f64() - expected).abs() < 1e-6, "{w:?}");
    }
}
