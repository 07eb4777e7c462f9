//! What `rowtree cluster status` shows: the cluster as one node sees it.
//!
//! Any node answers. A node that is not the placement leader forwards the
//! question to the leader, which alone knows when it last heard from each
//! node (openraft's leader keeps the time of each member's last
//! acknowledged heartbeat); if no leader can be reached, the node answers
//! from its own copy of the placement group and says so
//! ([`ClusterStatus::from_leader`] is false, and no node's contact time is
//! known).

use serde::{Deserialize, Serialize};

/// The cluster as one node sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterStatus {
    pub cluster_id: String,
    /// The node that composed this answer.
    pub answered_by: u64,
    /// Whether that node was the placement leader: if not, no leader could
    /// be reached, and what follows may be behind.
    pub from_leader: bool,
    /// The placement group's leader, as the answering node knows it.
    pub leader: Option<u64>,
    /// The placement group's Raft term.
    pub term: u64,
    /// The index of the last placement entry the answering node applied.
    pub applied_index: Option<u64>,
    /// Every node, by id.
    pub nodes: Vec<NodeStatus>,
    /// Every database group, by id. The placement leader asks each node
    /// for the groups it holds a replica of and keeps, per group, the
    /// freshest report ([`merge_groups`]); a node answering without a
    /// leader lists only its own.
    #[serde(default)]
    pub groups: Vec<GroupStatus>,
}

/// Per group, the freshest of several nodes' reports, by id: the highest
/// term, then one that names a leader, then the highest applied index
/// (the leader's own report is normally the one kept). A kept report
/// that names no database or split (its node had started the group's Raft
/// instance but not yet listed it with the database's splits, as while a
/// cut's new group is being made) takes them from another report.
pub fn merge_groups(reports: impl IntoIterator<Item = GroupStatus>) -> Vec<GroupStatus> {
    let mut best: std::collections::BTreeMap<u64, GroupStatus> = Default::default();
    let mut named: std::collections::BTreeMap<u64, (u64, String)> = Default::default();
    let rank = |g: &GroupStatus| (g.term, g.leader.is_some(), g.applied_index);
    for g in reports {
        if let (Some(database), Some(split)) = (g.database, &g.split) {
            named
                .entry(g.group)
                .or_insert_with(|| (database, split.clone()));
        }
        match best.get(&g.group) {
            Some(kept) if rank(kept) >= rank(&g) => {}
            _ => {
                best.insert(g.group, g);
            }
        }
    }
    best.into_values()
        .map(|mut g| {
            if g.split.is_none() {
                if let Some((database, split)) = named.remove(&g.group) {
                    g.database = Some(database);
                    g.split = Some(split);
                }
            }
            g
        })
        .collect()
}

/// One database group, as a node holding a replica of it sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupStatus {
    pub group: u64,
    /// Its leader (the node serving the database), if one is known.
    pub leader: Option<u64>,
    pub term: u64,
    /// Its voters.
    pub members: Vec<u64>,
    /// The index of the last entry this node applied.
    pub applied_index: Option<u64>,
    /// The registry group of the database it serves a split of (the id of
    /// the database's first split's group); absent from a node that
    /// reports none.
    #[serde(default)]
    pub database: Option<u64>,
    /// The split it holds: its id and key range.
    #[serde(default)]
    pub split: Option<String>,
    /// The split it is frozen into for a merge, while the merge waits
    /// (for a replica behind the freeze, say); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frozen_into: Option<String>,
}

/// One node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeStatus {
    pub id: u64,
    pub peer_addr: String,
    /// `joining` or `live` (the placement group's record).
    pub state: String,
    /// Its part in the placement group: `voter`, `learner` or `none`.
    pub placement: String,
    /// Milliseconds since the leader last heard from it (0 for the leader
    /// itself); `None` when the leader never has, or when the answer does
    /// not come from the leader.
    pub last_heard_ms: Option<u64>,
    /// Its clock minus the answering node's, in milliseconds, from the
    /// last clock heartbeat (0 for the answering node itself); `None`
    /// without a recent one.
    #[serde(default)]
    pub clock_offset_ms: Option<f64>,
    /// The error bound of that offset (half the heartbeat's round trip).
    #[serde(default)]
    pub clock_error_ms: Option<f64>,
    /// Where it serves Spanner's API, as it announced (`None` before).
    #[serde(default)]
    pub client_addr: Option<String>,
    /// Its utilization: the share of a node the splits it leads used over
    /// the last 10 s (from its latest clock heartbeat answer; the
    /// answering node's own, measured), which the lease balancer moves
    /// groups by. `None` without a recent answer.
    #[serde(default)]
    pub utilization: Option<f64>,
}

/// How long a node may stay silent before status calls it unreachable:
/// ten of the placement group's heartbeat intervals.
pub const UNREACHABLE_AFTER_MS: u64 = 10 * super::HEARTBEAT_MS;

impl NodeStatus {
    /// Whether the leader heard from the node recently (`None`: not known,
    /// because the answer does not come from the leader).
    pub fn reachable(&self, from_leader: bool) -> Option<bool> {
        if !from_leader {
            return None;
        }
        Some(
            self.last_heard_ms
                .is_some_and(|ms| ms <= UNREACHABLE_AFTER_MS),
        )
    }
}

impl ClusterStatus {
    /// The status as a table for a terminal.
    pub fn to_table(&self) -> String {
        let mut out = String::new();
        out.push_str(&format!("cluster {}\n", self.cluster_id));
        let leader = self
            .leader
            .map_or_else(|| "none".to_string(), |l| format!("node {l}"));
        out.push_str(&format!(
            "placement group: leader {leader}, term {}, applied index {}\n",
            self.term,
            self.applied_index
                .map_or_else(|| "none".to_string(), |i| i.to_string())
        ));
        if !self.from_leader {
            out.push_str(&format!(
                "(answered by node {} without a leader: membership may be behind, contact times unknown)\n",
                self.answered_by
            ));
        }
        let rows: Vec<[String; 8]> = self
            .nodes
            .iter()
            .map(|n| {
                [
                    n.id.to_string(),
                    n.peer_addr.clone(),
                    n.state.clone(),
                    n.placement.clone(),
                    match n.reachable(self.from_leader) {
                        Some(true) => "up".to_string(),
                        Some(false) => "unreachable".to_string(),
                        None => "?".to_string(),
                    },
                    n.last_heard_ms
                        .map_or_else(|| "-".to_string(), |ms| format!("{ms} ms")),
                    match (n.clock_offset_ms, n.clock_error_ms) {
                        (Some(o), Some(e)) => format!("{o:+.1} ms ±{e:.1}"),
                        (Some(o), None) => format!("{o:+.1} ms"),
                        _ => "-".to_string(),
                    },
                    n.utilization
                        .map_or_else(|| "-".to_string(), |u| format!("{:.0}%", u * 100.0)),
                ]
            })
            .collect();
        let header = [
            "node",
            "peer address",
            "state",
            "placement",
            "contact",
            "last heard",
            "clock",
            "load",
        ];
        let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
        for row in &rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.len());
            }
        }
        let line = |cells: Vec<&str>| {
            let mut s = String::new();
            for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
                if i > 0 {
                    s.push_str("  ");
                }
                s.push_str(&format!("{cell:<w$}"));
            }
            s.trim_end().to_string() + "\n"
        };
        out.push_str(&line(header.to_vec()));
        for row in &rows {
            out.push_str(&line(row.iter().map(String::as_str).collect()));
        }
        for n in &self.nodes {
            if let Some(addr) = &n.client_addr {
                out.push_str(&format!("node {} serves Spanner's API on {addr}\n", n.id));
            }
        }
        for g in &self.groups {
            let leader = g
                .leader
                .map_or_else(|| "none".to_string(), |l| format!("node {l}"));
            let members: Vec<String> = g.members.iter().map(u64::to_string).collect();
            let of = match (g.database, &g.split) {
                (Some(d), Some(split)) if d != g.group => {
                    format!(" (database group {d}, split {split})")
                }
                (_, Some(split)) => format!(" (split {split})"),
                _ => String::new(),
            };
            let frozen = g.frozen_into.as_ref().map_or_else(String::new, |into| {
                format!(", frozen for its merge into {into}")
            });
            out.push_str(&format!(
                "database group {}{of}: leader {leader}, term {}, replicas on nodes {}{frozen}\n",
                g.group,
                g.term,
                members.join(", ")
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(group: u64, leader: Option<u64>, term: u64, applied: u64) -> GroupStatus {
        GroupStatus {
            group,
            leader,
            term,
            members: vec![1, 2, 3],
            applied_index: Some(applied),
            database: None,
            split: None,
            frozen_into: None,
        }
    }

    #[test]
    fn merged_groups_keep_each_groups_freshest_report() {
        let merged = merge_groups([
            group(5, Some(1), 2, 10),
            group(4, None, 1, 3),
            group(5, Some(2), 3, 8),  // a later term wins
            group(5, Some(1), 2, 12), // an older term loses, however far applied
            group(4, Some(3), 1, 2),  // naming a leader beats a higher index
            group(4, None, 1, 4),
            group(6, Some(3), 1, 5),
            group(6, Some(3), 1, 7), // the same term and leader: the furthest applied
        ]);
        assert_eq!(
            merged,
            vec![
                group(4, Some(3), 1, 2),
                group(5, Some(2), 3, 8),
                group(6, Some(3), 1, 7)
            ]
        );
    }

    #[test]
    fn a_kept_report_without_its_split_takes_it_from_another() {
        let mut named = group(7, None, 1, 3);
        named.database = Some(1);
        named.split = Some("split-9 [0a, end)".into());
        let merged = merge_groups([group(7, Some(2), 2, 5), named]);
        assert_eq!(merged.len(), 1);
        assert_eq!(merged[0].leader, Some(2), "the freshest report is kept");
        assert_eq!(merged[0].split.as_deref(), Some("split-9 [0a, end)"));
        assert_eq!(merged[0].database, Some(1));
    }

    #[test]
    fn the_table_marks_silent_nodes_and_answers_without_a_leader() {
        let mut status = ClusterStatus {
            cluster_id: "abc".into(),
            answered_by: 1,
            from_leader: true,
            leader: Some(1),
            term: 2,
            applied_index: Some(9),
            nodes: vec![
                NodeStatus {
                    id: 1,
                    peer_addr: "127.0.0.1:7001".into(),
                    state: "live".into(),
                    placement: "voter".into(),
                    last_heard_ms: Some(0),
                    clock_offset_ms: Some(0.0),
                    clock_error_ms: Some(0.0),
                    client_addr: Some("127.0.0.1:9010".into()),
                    utilization: Some(0.625),
                },
                NodeStatus {
                    id: 2,
                    peer_addr: "127.0.0.1:7002".into(),
                    state: "live".into(),
                    placement: "voter".into(),
                    last_heard_ms: Some(UNREACHABLE_AFTER_MS + 1),
                    clock_offset_ms: Some(-12.25),
                    clock_error_ms: Some(0.5),
                    client_addr: None,
                    utilization: None,
                },
            ],
            groups: vec![
                GroupStatus {
                    group: 3,
                    leader: Some(2),
                    term: 4,
                    members: vec![1, 2],
                    applied_index: Some(7),
                    database: Some(3),
                    split: Some("split-1 [, 0a)".into()),
                    frozen_into: None,
                },
                GroupStatus {
                    group: 1 << 32,
                    leader: Some(2),
                    term: 1,
                    members: vec![1, 2],
                    applied_index: Some(2),
                    database: Some(3),
                    split: Some("split-4294967296 [0a, end)".into()),
                    frozen_into: Some("split-1".into()),
                },
            ],
        };
        let table = status.to_table();
        assert!(table.contains("leader node 1, term 2"), "{table}");
        let row = |node: &str| {
            table
                .lines()
                .find(|line| line.starts_with(node))
                .unwrap_or_default()
                .to_owned()
        };
        assert!(row("1 ").ends_with(" 62%"), "{table}");
        assert!(row("2 ").ends_with(" -"), "{table}");
        assert!(
            table.contains("node 1 serves Spanner's API on 127.0.0.1:9010"),
            "{table}"
        );
        assert!(
            table.contains(
                "database group 3 (split split-1 [, 0a)): leader node 2, term 4, replicas on nodes 1, 2"
            ),
            "{table}"
        );
        assert!(
            table.contains(
                "database group 4294967296 (database group 3, split split-4294967296 [0a, end)): \
                 leader node 2, term 1, replicas on nodes 1, 2, frozen for its merge into split-1"
            ),
            "{table}"
        );
        let lines: Vec<&str> = table.lines().collect();
        assert!(lines[3].contains(" up"), "{table}");
        assert!(lines[4].contains("unreachable"), "{table}");
        assert!(lines[4].contains("-12.2 ms ±0.5"), "{table}");
        status.from_leader = false;
        status.leader = None;
        let table = status.to_table();
        assert!(table.contains("without a leader"), "{table}");
        assert!(table.lines().nth(4).unwrap().contains(" ?"), "{table}");
        let json = serde_json::to_string(&status).unwrap();
        assert_eq!(
            serde_json::from_str::<ClusterStatus>(&json).unwrap(),
            status
        );
    }
}
