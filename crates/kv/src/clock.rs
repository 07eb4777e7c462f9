//! The clock the [`Router`](crate::Router) and the [`NodeGate`](crate::NodeGate)
//! stamp accesses with.
//!
//! Time is injected, never read from the wall inside the splitting logic:
//! the database passes its own clock, the simulator a virtual one, and
//! [`system_clock`] is the default for everything else. It sits in its own
//! module because both the router and the node gate read it, and the
//! router in turn waits on the gate.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// The router's source of time: nanoseconds since the epoch.
pub type RouterClock = Arc<dyn Fn() -> u64 + Send + Sync>;

/// The operating system's clock as a [`RouterClock`].
pub fn system_clock() -> RouterClock {
    Arc::new(|| {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
            .unwrap_or(0)
    })
}
