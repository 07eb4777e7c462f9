//! What the placement group stores: the cluster's membership.
//!
//! The placement group (design §3) is one Raft group per cluster, group
//! [`PLACEMENT_GROUP`], whose voters are the first three nodes (five once
//! the cluster has seven) and whose learners are all the others, so that
//! every node holds a current copy of it. It is an ordinary replica
//! ([`crate::Replica`]) over an engine of its own (`D/placement`): its
//! state is rows, written by [`crate::Command::Write`] entries like a
//! split's. Only the group's leader writes, one change at a time, each
//! evaluated against the state it has read after a linearizable read (so
//! every entry an earlier leader committed is applied before it looks):
//! a change such as "add node 4 unless node 4 is there with another
//! address" is decided on the current state, then proposed as plain row
//! writes, which every replica applies identically.
//!
//! The rows:
//!
//! | key | value |
//! |---|---|
//! | `node/` + id (8 bytes, big-endian) | a [`NodeRecord`] |
//! | `clock` | the timestamp of the last write (8 bytes, big-endian) |
//! | `client/` + id (8 bytes, big-endian) | where node id serves Spanner's API (`host:port`) |
//! | `registry` | the instances and databases the nodes serve: a version (8 bytes, big-endian), then the document ([`Registry`]) |
//!
//! Every write also rewrites `clock`, so a new leader whose clock is
//! behind its predecessor's still writes above every stored version (the
//! replica refuses a version at or below one it holds).
//!
//! The registry's document is the server's to read and write (its
//! instances and databases, each database with the Raft group that holds
//! it); here it is bytes with a version, replaced only by a writer that
//! names the version it read (compare and set), so two gateways changing
//! it at once cannot lose either change: the second one reads again.
//!
//! Later milestones add split descriptors, load reports and split points
//! as further row families.

use crate::error::DecodeError;
use crate::wire::{put_bytes, put_u8, put_varint, Reader};
use crate::Descriptor;

/// The placement group's id on every node (split groups use other ids).
pub const PLACEMENT_GROUP: u64 = 0;

/// The key prefix of membership rows.
const NODE_PREFIX: &[u8] = b"node/";
/// The key of the last write's timestamp.
pub const CLOCK_KEY: &[u8] = b"clock";

/// The key prefix of the nodes' Spanner API addresses.
const CLIENT_PREFIX: &[u8] = b"client/";

/// The row key of the address where node `id` serves Spanner's API.
pub fn client_key(id: u64) -> Vec<u8> {
    let mut key = CLIENT_PREFIX.to_vec();
    key.extend_from_slice(&id.to_be_bytes());
    key
}

/// The key of the registry's document.
pub const REGISTRY_KEY: &[u8] = b"registry";

/// The largest registry document the placement group stores.
pub const MAX_REGISTRY_BYTES: usize = 16 << 20;

/// The binary form's version byte.
const FORMAT: u8 = 1;

/// The registry's document as the placement group stores it: bytes the
/// server reads and writes, and the version each replacement raises by one
/// (0 before the first).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Registry {
    pub version: u64,
    pub document: Vec<u8>,
}

impl Registry {
    /// The row's value.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = self.version.to_be_bytes().to_vec();
        out.extend_from_slice(&self.document);
        out
    }

    /// The document from the row's value.
    pub fn decode(bytes: &[u8]) -> Result<Registry, DecodeError> {
        let (version, document) = bytes
            .split_first_chunk::<8>()
            .ok_or_else(|| Reader::new(bytes, "registry").error("shorter than its version"))?;
        Ok(Registry {
            version: u64::from_be_bytes(*version),
            document: document.to_vec(),
        })
    }
}

/// The placement replica's split: the whole key space of its own engine.
pub fn descriptor() -> Descriptor {
    Descriptor {
        split: rowtree_kv::SplitId(1),
        start: Vec::new(),
        limit: None,
        epoch: 1,
    }
}

/// Where a node stands in the cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeState {
    /// Accepted by the placement leader, not yet a replica of the
    /// placement group.
    Joining,
    /// A member: it holds a replica of the placement group.
    Live,
    /// Taken out of the cluster (`rowtree cluster remove`): no longer a
    /// member, and its id is never used again.
    Removed,
}

impl NodeState {
    /// The state as `rowtree cluster status` prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            NodeState::Joining => "joining",
            NodeState::Live => "live",
            NodeState::Removed => "removed",
        }
    }

    fn code(self) -> u8 {
        match self {
            NodeState::Joining => 0,
            NodeState::Live => 1,
            NodeState::Removed => 2,
        }
    }
}

/// One node as the placement group records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeRecord {
    /// 1..=[`MAX_NODE_ID`], never reused.
    pub id: u64,
    /// The address of its peer port (`host:port`), which other nodes dial.
    pub peer_addr: String,
    pub state: NodeState,
}

/// The largest node id (design §2: ids are 1..=999, a bound the
/// transaction priorities of later milestones rely on).
pub const MAX_NODE_ID: u64 = 999;

/// The longest peer address accepted in a record.
pub const MAX_ADDR_LEN: usize = 255;

impl NodeRecord {
    /// The row key of node `id`.
    pub fn key(id: u64) -> Vec<u8> {
        let mut key = NODE_PREFIX.to_vec();
        key.extend_from_slice(&id.to_be_bytes());
        key
    }

    /// The key range `[start, end)` holding every node's row.
    pub fn key_range() -> (Vec<u8>, Vec<u8>) {
        let start = NODE_PREFIX.to_vec();
        let mut end = NODE_PREFIX.to_vec();
        *end.last_mut().expect("non-empty prefix") += 1;
        (start, end)
    }

    /// The record in its binary form.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        put_u8(&mut out, FORMAT);
        put_varint(&mut out, self.id);
        put_bytes(&mut out, self.peer_addr.as_bytes());
        put_u8(&mut out, self.state.code());
        out
    }

    /// A record from its binary form; malformed bytes are an error.
    pub fn decode(bytes: &[u8]) -> Result<NodeRecord, DecodeError> {
        let mut r = Reader::new(bytes, "node record");
        r.version(FORMAT)?;
        let id = r.varint()?;
        let addr = r.bytes()?;
        if addr.len() > MAX_ADDR_LEN {
            return Err(r.error(format!("peer address of {} bytes", addr.len())));
        }
        let peer_addr = std::str::from_utf8(addr)
            .map_err(|_| r.error("peer address is not UTF-8"))?
            .to_string();
        let state = match r.u8()? {
            0 => NodeState::Joining,
            1 => NodeState::Live,
            2 => NodeState::Removed,
            other => return Err(r.error(format!("node state {other}"))),
        };
        r.finish()?;
        Ok(NodeRecord {
            id,
            peer_addr,
            state,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_sort_by_id() {
        let a = NodeRecord {
            id: 2,
            peer_addr: "127.0.0.1:7002".into(),
            state: NodeState::Joining,
        };
        assert_eq!(NodeRecord::decode(&a.encode()).unwrap(), a);
        let b = NodeRecord {
            id: 300,
            state: NodeState::Live,
            ..a.clone()
        };
        assert_eq!(NodeRecord::decode(&b.encode()).unwrap(), b);
        let c = NodeRecord {
            state: NodeState::Removed,
            ..b.clone()
        };
        assert_eq!(NodeRecord::decode(&c.encode()).unwrap(), c);
        assert!(NodeRecord::key(2) < NodeRecord::key(300));
        let (start, end) = NodeRecord::key_range();
        for id in [1, 2, 999, u64::MAX] {
            let key = NodeRecord::key(id);
            assert!(key >= start && key < end);
        }
        assert!(CLOCK_KEY < start.as_slice() || CLOCK_KEY >= end.as_slice());
    }

    #[test]
    fn the_registry_round_trips_with_its_version() {
        let r = Registry {
            version: 7,
            document: b"{}".to_vec(),
        };
        assert_eq!(Registry::decode(&r.encode()).unwrap(), r);
        assert!(Registry::decode(&r.encode()[..7]).is_err());
        let (start, end) = NodeRecord::key_range();
        assert!(REGISTRY_KEY < start.as_slice() || REGISTRY_KEY >= end.as_slice());
    }

    #[test]
    fn malformed_records_are_errors() {
        let good = NodeRecord {
            id: 7,
            peer_addr: "h:1".into(),
            state: NodeState::Live,
        }
        .encode();
        for cut in 0..good.len() {
            assert!(NodeRecord::decode(&good[..cut]).is_err(), "cut at {cut}");
        }
        let mut bad_state = good.clone();
        *bad_state.last_mut().unwrap() = 9;
        assert!(NodeRecord::decode(&bad_state).is_err());
        let mut trailing = good;
        trailing.push(0);
        assert!(NodeRecord::decode(&trailing).is_err());
    }
}
