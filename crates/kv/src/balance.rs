//! [`Balancer`]: moves splits from busy nodes to idle ones.
//!
//! Every [`BalancerConfig::interval`] the balancer looks at each node's load
//! (the sum of its splits' CPU rates). A node above `mean * (1 + tolerance)`
//! starts a timer; once it has stayed above for `move_after` (TiKV's PD waits
//! 3 minutes, so a short burst moves nothing), each run moves one split from
//! it to the least loaded node: the split whose move most lowers the larger
//! of the two nodes' loads, provided the move lowers it. A split whose load
//! alone exceeds a whole node is never moved: it would only make another
//! node hot (it has to be split first). Loads are per split, so they follow
//! a moved split at once and the next run sees the effect of the last.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::split::{NodeId, SplitId};

/// A node's capacity in CPU-seconds per second (loads are measured in the
/// same unit).
const NODE_CAPACITY: f64 = 1.0;

/// When and how eagerly to balance.
#[derive(Debug, Clone, PartialEq)]
pub struct BalancerConfig {
    /// How often the balancer runs; default 10 s.
    pub interval: Duration,
    /// How long a node must stay overloaded before splits move; default 180 s.
    pub move_after: Duration,
    /// Overloaded means above `mean * (1 + tolerance)`; default 0.2.
    pub tolerance: f64,
}

impl Default for BalancerConfig {
    fn default() -> Self {
        BalancerConfig {
            interval: Duration::from_secs(10),
            move_after: Duration::from_secs(180),
            tolerance: 0.2,
        }
    }
}

/// One planned move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Move {
    /// The split to move.
    pub split: SplitId,
    /// Its node now.
    pub from: NodeId,
    /// Where it goes.
    pub to: NodeId,
}

/// The balancer's memory: since when each node has been overloaded.
#[derive(Debug, Clone, Default)]
pub struct Balancer {
    config: BalancerConfig,
    over_since: BTreeMap<NodeId, u64>,
    last_run: Option<u64>,
}

impl Balancer {
    /// A balancer with `config`.
    pub fn new(config: BalancerConfig) -> Balancer {
        Balancer {
            config,
            over_since: BTreeMap::new(),
            last_run: None,
        }
    }

    /// Its configuration.
    pub fn config(&self) -> &BalancerConfig {
        &self.config
    }

    /// Whether a run is due at `now`.
    pub fn due(&self, now: u64) -> bool {
        self.last_run
            .is_none_or(|last| now.saturating_sub(last) >= self.config.interval.as_nanos() as u64)
    }

    /// Plans the moves at `now` for `splits` (`(id, node, load)`, load in
    /// CPU-seconds per second) over `nodes` nodes (ids `0..nodes`; a split on
    /// a higher id extends the range). At most one move per overloaded node.
    pub fn plan(&mut self, now: u64, splits: &[(SplitId, NodeId, f64)], nodes: u32) -> Vec<Move> {
        self.last_run = Some(now);
        let count = splits
            .iter()
            .map(|(_, n, _)| n.0 + 1)
            .max()
            .unwrap_or(0)
            .max(nodes)
            .max(1) as usize;
        let mut loads = vec![0.0f64; count];
        let mut placed: Vec<(SplitId, NodeId, f64)> = splits.to_vec();
        for (_, n, l) in &placed {
            loads[n.0 as usize] += l;
        }
        let mean = loads.iter().sum::<f64>() / count as f64;
        let target = mean * (1.0 + self.config.tolerance);
        let move_after = self.config.move_after.as_nanos() as u64;
        let mut moves = Vec::new();
        if mean <= 0.0 {
            self.over_since.clear();
            return moves;
        }
        for node in 0..count {
            let id = NodeId(node as u32);
            if loads[node] <= target {
                self.over_since.remove(&id);
                continue;
            }
            let since = *self.over_since.entry(id).or_insert(now);
            if now.saturating_sub(since) < move_after {
                continue;
            }
            // The least loaded node.
            let (to, to_load) = loads
                .iter()
                .enumerate()
                .min_by(|a, b| a.1.total_cmp(b.1).then(a.0.cmp(&b.0)))
                .map(|(i, l)| (i, *l))
                .expect("at least one node");
            if to == node {
                continue;
            }
            let from_load = loads[node];
            let mut best: Option<(usize, f64)> = None;
            for (i, (_, n, l)) in placed.iter().enumerate() {
                if n.0 as usize != node || *l <= 0.0 || *l > NODE_CAPACITY {
                    continue;
                }
                let peak = (from_load - l).max(to_load + l);
                if peak < from_load && best.is_none_or(|(_, p)| peak < p) {
                    best = Some((i, peak));
                }
            }
            if let Some((i, _)) = best {
                let (split, _, l) = placed[i];
                placed[i].1 = NodeId(to as u32);
                loads[node] -= l;
                loads[to] += l;
                moves.push(Move {
                    split,
                    from: id,
                    to: NodeId(to as u32),
                });
            }
        }
        moves
    }
}
