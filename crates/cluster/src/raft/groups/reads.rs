//! Strong reads of splits this node follows: sent to their leader.
//!
//! A read at a timestamp may be served by any replica whose safe time (its
//! closed timestamp) has reached the read's timestamp. A stale read almost
//! always finds it so. A strong read does not: its timestamp is "now", and
//! a leader closes timestamps only some way behind its clock
//! ([`crate::raft::CLOSED_LAG`]), every `CLOSE_EVERY`, so a follower's
//! replica reaches a strong read's timestamp most of a second later. When
//! a database's splits are led by different nodes, the node running a
//! session follows most of them, and every strong read used to wait that
//! long for each.
//!
//! So a node that can reach other nodes routes such a part of a read to
//! the split's leader instead ([`SplitGroups::route_at`]), which serves it
//! at once under its lease (after the transactions prepared below the
//! timestamp are resolved, as for any read it serves), and later commits
//! there get timestamps above it. The decision is made in the same pass
//! that checks the parts read here, so a split whose leadership moves
//! meanwhile is either checked here or read there, never neither.
//!
//! The read there ([`SplitGroups::read_followed`]) goes to the leader this
//! node's replica knows. If there is none (an election), or the leader
//! refuses (it no longer leads), the part is read here after all, the way
//! a node not able to reach the others reads it: waiting for this
//! replica's safe time, [`super::FOLLOWER_READ_WAIT`] at most.
//!
//! A node serving another node's read never sends it on (no second hop):
//! under [`SplitGroups::locally`] it waits for its own replica.

use std::ops::Bound;
use std::sync::Arc;

use rowtree_kv::{KeySpan, RemoteBatch, RemoteRead, Replication};

use super::{SplitGroups, LOCALLY};
use crate::raft::GroupCommits;

/// The most bytes of rows one batch read here for another part of a read
/// returns (rows beyond it come in the next batch).
const MAX_BATCH_BYTES: usize = 4 << 20;

impl SplitGroups {
    /// Whether reads at a timestamp may be sent to other nodes: this node
    /// can call them, and is not serving another node's read.
    fn forwards_reads(&self) -> bool {
        self.elsewhere.get().is_some() && !LOCALLY.with(std::cell::Cell::get)
    }

    /// [`Replication::route_read`](rowtree_kv::Replication::route_read) of
    /// a read at timestamp `ts` (not under locks): checks the parts served
    /// here, and returns those another node serves: the keys held by no
    /// group here, and, if this node may send reads on, the splits whose
    /// replica here neither leads nor has reached `ts`.
    pub(super) fn route_at(
        &self,
        ts: u64,
        start: &[u8],
        end: Option<&[u8]>,
    ) -> rowtree_kv::Result<Vec<KeySpan>> {
        let forwards = self.forwards_reads();
        let mut spans = self.gaps(start, end);
        for group in self.overlapping(start, end) {
            if forwards && !group.serves() && !reached(&group, ts) {
                spans.push(clip(&group, start, end));
                continue;
            }
            self.check_group_read(&group, Some(ts))?;
        }
        spans.sort();
        Ok(spans)
    }

    /// [`Replication::read_elsewhere`](rowtree_kv::Replication::read_elsewhere)
    /// of a read at a timestamp: from the leader of the split this node
    /// follows that holds the read's first key (see the module docs), or,
    /// for a split held here by no group, from a node that holds it.
    pub(super) fn read_followed(&self, read: &RemoteRead) -> rowtree_kv::Result<RemoteBatch> {
        let (key, before) = read.first_key();
        let Some(group) = self.held_around(&key, before) else {
            return match self.elsewhere.get() {
                Some(elsewhere) => elsewhere.read(read),
                None => Err(rowtree_kv::Error::Replication(
                    "this node holds no replica of the keys read, and cannot ask the nodes \
                     that do"
                        .into(),
                )),
            };
        };
        let d = group.descriptor();
        let (clipped, edge) = read.clipped(&d.start, d.limit.as_deref());
        let leader = group
            .current_leader()
            .filter(|node| *node != group.node_id());
        if let (Some(node), Some(elsewhere), false) = (
            leader,
            self.elsewhere.get(),
            group.serves() || reached(&group, read.ts),
        ) {
            match elsewhere.read_at(node, &clipped) {
                Ok(mut batch) => {
                    tracing::debug!(
                        "read {} rows of {} at its leader, node {node}, at {}",
                        batch.rows.len(),
                        group.split_id(),
                        read.ts
                    );
                    if batch.resume.is_none() {
                        batch.resume = edge;
                    }
                    return Ok(batch);
                }
                Err(refusal) => tracing::debug!(
                    "{}'s leader, node {node}, did not serve a read at {}: {refusal}; \
                     reading this node's replica",
                    group.split_id(),
                    read.ts
                ),
            }
        }
        self.read_here(&clipped, edge)
    }

    /// One batch of `read` (within one group held here) from this node's
    /// replica, as if another node had asked for it: checked, and waited
    /// for, here only.
    fn read_here(
        &self,
        read: &RemoteRead,
        edge: Option<Bound<Vec<u8>>>,
    ) -> rowtree_kv::Result<RemoteBatch> {
        let router = self.router().map_err(rowtree_kv::Error::Replication)?;
        let max_rows = read.max_rows.max(1);
        Self::locally(|| {
            let mut rows = Vec::new();
            let mut bytes = 0;
            let scan = router.scan_bounds(
                read.start.as_ref().map(Vec::as_slice),
                read.end.as_ref().map(Vec::as_slice),
                read.ts,
                read.reverse,
            );
            for row in scan.take(max_rows) {
                let (key, value) = row?;
                bytes += key.len() + value.len();
                rows.push((key, value));
                if bytes >= MAX_BATCH_BYTES {
                    break;
                }
            }
            let more = rows.len() >= max_rows || bytes >= MAX_BATCH_BYTES;
            let resume = match (more, rows.last()) {
                (true, Some((last, _))) => Some(Bound::Excluded(last.clone())),
                _ => edge,
            };
            Ok(RemoteBatch { rows, resume })
        })
    }

    /// Whether this node leads (and serves, under its lease) every split
    /// of `[start, end)`: a read sent to a split's leader is served only
    /// there (`ReadRange`'s `led_only`).
    pub fn leads_all(&self, start: &[u8], end: Option<&[u8]>) -> bool {
        self.gaps(start, end).is_empty()
            && self
                .overlapping(start, end)
                .iter()
                .all(|group| group.serves())
    }

    /// The group held here whose split holds `key` (`before`: the keys
    /// just below it, as a reverse read starts).
    pub(super) fn held_around(&self, key: &[u8], before: bool) -> Option<Arc<GroupCommits>> {
        self.groups
            .read()
            .iter()
            .find(|g| {
                let d = g.descriptor();
                if before {
                    (key.is_empty() && d.limit.is_none())
                        || (d.start.as_slice() < key && d.limit.as_deref().is_none_or(|l| key <= l))
                } else {
                    d.contains(key)
                }
            })
            .cloned()
    }
}

/// Whether `group`'s replica here has reached `ts` (its safe time is at or
/// above it): any read at `ts` is served from it at once.
fn reached(group: &GroupCommits, ts: u64) -> bool {
    group.safe_ts().is_some_and(|safe| ts <= safe)
}

/// `group`'s split, clipped to `[start, end)`.
pub(super) fn clip(group: &GroupCommits, start: &[u8], end: Option<&[u8]>) -> KeySpan {
    let d = group.descriptor();
    let from = d.start.max(start.to_vec());
    let to = match (d.limit, end) {
        (Some(l), Some(e)) => Some(l.min(e.to_vec())),
        (l, e) => l.or(e.map(<[u8]>::to_vec)),
    };
    (from, to)
}
