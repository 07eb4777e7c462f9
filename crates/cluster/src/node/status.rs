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
/// cut's new group is being made) takes them from another report, with
/// the database's name and the range. Only a leader reports a group's
/// load: the kept report takes the load of the report of the highest term
/// that has one (a follower's report is as fresh when it applied as far).
pub fn merge_groups(reports: impl IntoIterator<Item = GroupStatus>) -> Vec<GroupStatus> {
    let mut best: std::collections::BTreeMap<u64, GroupStatus> = Default::default();
    let mut named: std::collections::BTreeMap<u64, GroupStatus> = Default::default();
    let mut loads: std::collections::BTreeMap<u64, (u64, f64)> = Default::default();
    let rank = |g: &GroupStatus| (g.term, g.leader.is_some(), g.applied_index);
    for g in reports {
        if g.database.is_some() && g.split.is_some() {
            named.entry(g.group).or_insert_with(|| g.clone());
        }
        if let Some(load) = g.load {
            let known = loads.entry(g.group).or_insert((g.term, load));
            if g.term > known.0 {
                *known = (g.term, load);
            }
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
                if let Some(other) = named.remove(&g.group) {
                    g.database = other.database;
                    g.split = other.split;
                    g.database_name = g.database_name.or(other.database_name);
                    g.range = g.range.or(other.range);
                }
            }
            if g.load.is_none() {
                g.load = loads.remove(&g.group).map(|(_, load)| load);
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
    /// The index of the last entry this node's log no longer holds (its
    /// replica's snapshot covers it): a replica behind it is sent the
    /// snapshot instead of entries. Absent while the log is whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purged_index: Option<u64>,
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
    /// The name of the database it serves a split of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database_name: Option<String>,
    /// Its key range in human terms, as the database's schema reads it
    /// (`Users(601) .. UsersByLastAccess(<begin>)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<String>,
    /// Its recent load, a share of its leader's node, as the leader
    /// measures it (`node::leases`); absent from a report by a node that
    /// does not lead it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<f64>,
}

/// One node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeStatus {
    /// The nodes that do not hear it lately: the answering node, if its
    /// clock heartbeats go unanswered, and each node whose latest clock
    /// heartbeat answer (within 5 s) lists it as silent. A node cut off
    /// from everyone is unheard by all; one behind a failed link, by the
    /// node at its other end only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unheard_by: Vec<u64>,
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
        let rows: Vec<[String; 9]> = self
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
                    if n.unheard_by.is_empty() {
                        "-".to_string()
                    } else {
                        n.unheard_by
                            .iter()
                            .map(u64::to_string)
                            .collect::<Vec<_>>()
                            .join(",")
                    },
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
            "unheard by",
        ];
        out.push_str(&columns(&header, &rows));
        for n in &self.nodes {
            if let Some(addr) = &n.client_addr {
                out.push_str(&format!("node {} serves Spanner's API on {addr}\n", n.id));
            }
        }
        // The groups by database (their first split's group), each
        // database's in key order; groups whose database no report named
        // come last.
        let mut by_database: std::collections::BTreeMap<Option<u64>, Vec<&GroupStatus>> =
            Default::default();
        for g in &self.groups {
            by_database.entry(g.database).or_default().push(g);
        }
        for (database, groups) in by_database.iter_mut() {
            let Some(database) = database else {
                continue;
            };
            // In key order: the split's start, in hex in its description
            // (`split-7 [0a0b, 0c)`), sorts as the key does.
            groups.sort_by_key(|g| {
                let start = g
                    .split
                    .as_deref()
                    .and_then(|s| s.split_once('['))
                    .and_then(|(_, r)| r.split_once(','))
                    .map(|(start, _)| start.to_string());
                (start, g.group)
            });
            let name = groups
                .iter()
                .find_map(|g| g.database_name.clone())
                .unwrap_or_else(|| format!("of group {database}"));
            let mut led: std::collections::BTreeMap<u64, usize> = Default::default();
            for g in groups.iter() {
                if let Some(l) = g.leader {
                    *led.entry(l).or_default() += 1;
                }
            }
            let led: Vec<String> = led.iter().map(|(n, k)| format!("{n}:{k}")).collect();
            out.push_str(&format!(
                "\ndatabase {name}: {} split{}, led by node {}\n",
                groups.len(),
                if groups.len() == 1 { "" } else { "s" },
                if led.is_empty() {
                    "none".to_string()
                } else {
                    led.join(" ")
                }
            ));
            let rows: Vec<[String; 7]> = groups
                .iter()
                .map(|g| {
                    let split = g
                        .split
                        .as_deref()
                        .and_then(|s| s.split_whitespace().next())
                        .unwrap_or("?");
                    let range = g.range.clone().unwrap_or_else(|| {
                        // Without the schema: the raw range after the id.
                        g.split
                            .as_deref()
                            .and_then(|s| s.split_once(' '))
                            .map_or_else(String::new, |(_, r)| r.to_string())
                    });
                    let frozen = g
                        .frozen_into
                        .as_ref()
                        .map_or_else(String::new, |into| format!(" (frozen into {into})"));
                    [
                        g.group.to_string(),
                        format!("{split}{frozen}"),
                        g.leader
                            .map_or_else(|| "none".to_string(), |l| format!("node {l}")),
                        g.members
                            .iter()
                            .map(u64::to_string)
                            .collect::<Vec<_>>()
                            .join(","),
                        g.load
                            .map_or_else(|| "-".to_string(), |l| format!("{:.0}%", l * 100.0)),
                        g.term.to_string(),
                        range,
                    ]
                })
                .collect();
            out.push_str(&columns(
                &[
                    "group", "split", "leader", "replicas", "load", "term", "range",
                ],
                &rows,
            ));
        }
        if let Some(groups) = by_database.get(&None) {
            out.push('\n');
            for g in groups {
                let leader = g
                    .leader
                    .map_or_else(|| "none".to_string(), |l| format!("node {l}"));
                let members: Vec<String> = g.members.iter().map(u64::to_string).collect();
                out.push_str(&format!(
                    "group {} (no database named yet): leader {leader}, term {}, replicas on nodes {}\n",
                    g.group,
                    g.term,
                    members.join(", ")
                ));
            }
        }
        out
    }
}

/// `rows` under `header`, each column as wide as its widest cell, two
/// spaces apart.
fn columns<const N: usize>(header: &[&str; N], rows: &[[String; N]]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut s = String::new();
        for (i, (cell, w)) in cells.zip(&widths).enumerate() {
            if i > 0 {
                s.push_str("  ");
            }
            s.push_str(&format!("{cell:<w$}"));
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(&mut header.iter().copied());
    for row in rows {
        out.push_str(&line(&mut row.iter().map(String::as_str)));
    }
    out
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
            purged_index: None,
            database: None,
            split: None,
            frozen_into: None,
            database_name: None,
            range: None,
            load: None,
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
        named.database_name = Some("projects/p/instances/i/databases/d".into());
        named.range = Some("T(10) .. <end>".into());
        named.load = Some(0.5);
        let merged = merge_groups([group(7, Some(2), 2, 5), named]);
        assert_eq!(merged.len(), 1);
        assert_eq!(merged[0].leader, Some(2), "the freshest report is kept");
        assert_eq!(merged[0].split.as_deref(), Some("split-9 [0a, end)"));
        assert_eq!(merged[0].database, Some(1));
        assert_eq!(
            merged[0].database_name.as_deref(),
            Some("projects/p/instances/i/databases/d")
        );
        assert_eq!(merged[0].range.as_deref(), Some("T(10) .. <end>"));
        assert_eq!(merged[0].load, Some(0.5), "the only load reported");
        // The leader's report need not be the one kept (a follower applied
        // as far); its load is. A load of an older term loses.
        let mut led = group(8, Some(1), 3, 9);
        led.load = Some(0.25);
        let mut stale = group(8, Some(2), 2, 9);
        stale.load = Some(0.75);
        let merged = merge_groups([group(8, Some(1), 3, 9), stale, led]);
        assert_eq!(merged[0].load, Some(0.25));
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
                    unheard_by: Vec::new(),
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
                    unheard_by: vec![1, 3],
                },
            ],
            groups: vec![
                GroupStatus {
                    group: 3,
                    leader: Some(2),
                    term: 4,
                    members: vec![1, 2],
                    applied_index: Some(7),
                    purged_index: None,
                    database: Some(3),
                    split: Some("split-1 [, 0a)".into()),
                    frozen_into: None,
                    database_name: Some("projects/p/instances/i/databases/d".into()),
                    range: Some("<begin> .. T(10)".into()),
                    load: Some(0.25),
                },
                GroupStatus {
                    group: 1 << 32,
                    leader: Some(2),
                    term: 1,
                    members: vec![1, 2],
                    applied_index: Some(2),
                    purged_index: None,
                    database: Some(3),
                    split: Some("split-4294967296 [0a, end)".into()),
                    frozen_into: Some("split-1".into()),
                    database_name: None,
                    range: None,
                    load: None,
                },
                GroupStatus {
                    database: None,
                    split: None,
                    ..group(9, None, 1, 0)
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
        assert!(row("1 ").ends_with(" 62%   -"), "{table}");
        assert!(row("2 ").ends_with(" -     1,3"), "{table}");
        assert!(
            table.contains("node 1 serves Spanner's API on 127.0.0.1:9010"),
            "{table}"
        );
        // Each database's groups under its name, in key order.
        assert!(
            table.contains(
                "database projects/p/instances/i/databases/d: 2 splits, led by node 2:2\n"
            ),
            "{table}"
        );
        let words = |first: &str| -> Vec<String> {
            let line = table
                .lines()
                .find(|line| line.starts_with(first))
                .unwrap_or_default();
            line.split_whitespace().map(str::to_string).collect()
        };
        assert_eq!(
            words("group "),
            ["group", "split", "leader", "replicas", "load", "term", "range"],
            "{table}"
        );
        assert_eq!(
            words("3 "),
            ["3", "split-1", "node", "2", "1,2", "25%", "4", "<begin>", "..", "T(10)"],
            "{table}"
        );
        // Without the schema's range, the raw one; no load from a follower.
        assert_eq!(
            words("4294967296 "),
            [
                "4294967296",
                "split-4294967296",
                "(frozen",
                "into",
                "split-1)",
                "node",
                "2",
                "1,2",
                "-",
                "1",
                "[0a,",
                "end)"
            ],
            "{table}"
        );
        assert!(
            table.contains(
                "group 9 (no database named yet): leader none, term 1, replicas on nodes 1, 2, 3"
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
