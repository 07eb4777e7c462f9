//! The binary forms of what the log store keeps: entries, votes, log ids
//! and memberships. The same rules as [`crate::command`]: a format byte
//! first, LEB128 varints, length-prefixed byte strings, and decoding that
//! refuses anything malformed with the offset where it stopped (a log is
//! read back after crashes, and later sent between nodes).
//!
//! ```text
//! entry      = FORMAT:u8  term  index  payload
//! payload    = 0 (blank) | 1 command:bytes | 2 membership
//! membership = count(configs) { count(ids) { id } }  count(nodes) { id  addr:bytes }
//! vote       = FORMAT:u8  term  voted_for  committed:(0 | 1)
//! log id     = FORMAT:u8  term  index
//! ```
//!
//! A command is kept as [`Command::encode`] writes it.

use std::collections::{BTreeMap, BTreeSet};

use openraft::{BasicNode, EntryPayload};

use super::{Entry, Membership, RaftLogId, Vote};
use crate::command::{Command, LogId, FORMAT};
use crate::error::DecodeError;
use crate::wire::{put_bytes, put_u8, put_varint, Reader};

const BLANK: u8 = 0;
const NORMAL: u8 = 1;
const MEMBERSHIP: u8 = 2;

/// An entry's binary form (the layout above).
pub fn encode_entry(entry: &Entry) -> Vec<u8> {
    let mut out = Vec::new();
    put_u8(&mut out, FORMAT);
    put_varint(&mut out, entry.log_id.leader_id.term);
    put_varint(&mut out, entry.log_id.index);
    match &entry.payload {
        EntryPayload::Blank => put_u8(&mut out, BLANK),
        EntryPayload::Normal(command) => {
            put_u8(&mut out, NORMAL);
            put_bytes(&mut out, &command.encode());
        }
        EntryPayload::Membership(membership) => {
            put_u8(&mut out, MEMBERSHIP);
            put_membership(&mut out, membership);
        }
    }
    out
}

/// Decodes an entry, refusing malformed bytes (see the module docs).
pub fn decode_entry(bytes: &[u8]) -> Result<Entry, DecodeError> {
    let mut r = Reader::new(bytes, "raft log entry");
    r.version(FORMAT)?;
    let log_id = super::to_raft_log_id(LogId::new(r.varint()?, r.varint()?));
    let payload = match r.u8()? {
        BLANK => EntryPayload::Blank,
        NORMAL => EntryPayload::Normal(Command::decode(r.bytes()?)?),
        MEMBERSHIP => EntryPayload::Membership(read_membership(&mut r)?),
        other => return Err(r.error(format!("payload tag {other}"))),
    };
    r.finish()?;
    Ok(openraft::Entry { log_id, payload })
}

/// The log id of an encoded entry, without decoding its payload.
pub(crate) fn entry_log_id(bytes: &[u8]) -> Result<RaftLogId, DecodeError> {
    let mut r = Reader::new(bytes, "raft log entry");
    r.version(FORMAT)?;
    Ok(super::to_raft_log_id(LogId::new(r.varint()?, r.varint()?)))
}

/// A membership's binary form, with its format byte.
pub fn encode_membership(membership: &Membership) -> Vec<u8> {
    let mut out = Vec::new();
    put_u8(&mut out, FORMAT);
    put_membership(&mut out, membership);
    out
}

/// Decodes a membership from [`encode_membership`]'s form; a membership
/// openraft would not accept (a voter without a node) is refused too.
pub fn decode_membership(bytes: &[u8]) -> Result<Membership, DecodeError> {
    let mut r = Reader::new(bytes, "membership");
    r.version(FORMAT)?;
    let membership = read_membership(&mut r)?;
    r.finish()?;
    Ok(membership)
}

fn put_membership(out: &mut Vec<u8>, membership: &Membership) {
    let configs = membership.get_joint_config();
    put_varint(out, configs.len() as u64);
    for config in configs {
        put_varint(out, config.len() as u64);
        for id in config {
            put_varint(out, *id);
        }
    }
    let nodes: Vec<_> = membership.nodes().collect();
    put_varint(out, nodes.len() as u64);
    for (id, node) in nodes {
        put_varint(out, *id);
        put_bytes(out, node.addr.as_bytes());
    }
}

fn read_membership(r: &mut Reader<'_>) -> Result<Membership, DecodeError> {
    let n = r.count(1)?;
    let mut configs = Vec::with_capacity(n);
    for _ in 0..n {
        let m = r.count(1)?;
        let mut config = BTreeSet::new();
        for _ in 0..m {
            config.insert(r.varint()?);
        }
        configs.push(config);
    }
    let n = r.count(2)?;
    let mut nodes = BTreeMap::new();
    for _ in 0..n {
        let id = r.varint()?;
        let addr = std::str::from_utf8(r.bytes()?)
            .map_err(|_| r.error("a node address that is not UTF-8"))?;
        nodes.insert(
            id,
            BasicNode {
                addr: addr.to_string(),
            },
        );
    }
    Membership::new(configs, nodes).map_err(|e| r.error(format!("invalid membership: {e}")))
}

pub(crate) fn encode_vote(vote: &Vote) -> Vec<u8> {
    let mut out = Vec::new();
    put_u8(&mut out, FORMAT);
    put_varint(&mut out, vote.leader_id.term);
    put_varint(&mut out, vote.leader_id.voted_for);
    put_u8(&mut out, u8::from(vote.committed));
    out
}

pub(crate) fn decode_vote(bytes: &[u8]) -> Result<Vote, DecodeError> {
    let mut r = Reader::new(bytes, "vote");
    r.version(FORMAT)?;
    let term = r.varint()?;
    let voted_for = r.varint()?;
    let committed = match r.u8()? {
        0 => false,
        1 => true,
        other => return Err(r.error(format!("committed flag {other}"))),
    };
    r.finish()?;
    Ok(openraft::Vote {
        leader_id: openraft::impls::leader_id_std::LeaderId { term, voted_for },
        committed,
    })
}

pub(crate) fn encode_log_id(id: &RaftLogId) -> Vec<u8> {
    let mut out = Vec::new();
    put_u8(&mut out, FORMAT);
    put_varint(&mut out, id.leader_id.term);
    put_varint(&mut out, id.index);
    out
}

pub(crate) fn decode_log_id(bytes: &[u8]) -> Result<RaftLogId, DecodeError> {
    let mut r = Reader::new(bytes, "log id");
    r.version(FORMAT)?;
    let id = super::to_raft_log_id(LogId::new(r.varint()?, r.varint()?));
    r.finish()?;
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::Commit;

    fn entry(index: u64, payload: EntryPayload<Command, u64, BasicNode>) -> Entry {
        openraft::Entry {
            log_id: super::super::to_raft_log_id(LogId::new(3, index)),
            payload,
        }
    }

    fn joint() -> Membership {
        let nodes: BTreeMap<u64, BasicNode> = (1..=4)
            .map(|i| {
                (
                    i,
                    BasicNode {
                        addr: format!("127.0.0.1:{}", 7000 + i),
                    },
                )
            })
            .collect();
        Membership::new(
            vec![BTreeSet::from([1, 2, 3]), BTreeSet::from([2, 3, 4])],
            nodes,
        )
        .unwrap()
    }

    #[test]
    fn entries_of_every_kind_round_trip() {
        let command = Command::Write {
            commits: vec![Commit {
                ts: 9,
                writes: vec![
                    (b"k1".to_vec(), Some(b"v".to_vec())),
                    (b"k2".to_vec(), None),
                ],
            }],
            closed_ts: Some(4),
            meta: Vec::new(),
        };
        for e in [
            entry(0, EntryPayload::Blank),
            entry(1, EntryPayload::Normal(command)),
            entry(2, EntryPayload::Membership(joint())),
        ] {
            let bytes = encode_entry(&e);
            assert_eq!(decode_entry(&bytes).unwrap(), e);
            assert_eq!(entry_log_id(&bytes).unwrap(), e.log_id);
        }
    }

    #[test]
    fn votes_log_ids_and_memberships_round_trip() {
        for committed in [false, true] {
            let vote = openraft::Vote {
                leader_id: openraft::impls::leader_id_std::LeaderId {
                    term: 7,
                    voted_for: 2,
                },
                committed,
            };
            assert_eq!(decode_vote(&encode_vote(&vote)).unwrap(), vote);
        }
        let id = super::super::to_raft_log_id(LogId::new(u64::MAX, 1 << 40));
        assert_eq!(decode_log_id(&encode_log_id(&id)).unwrap(), id);
        assert_eq!(
            decode_membership(&encode_membership(&joint())).unwrap(),
            joint()
        );
    }

    #[test]
    fn malformed_bytes_are_refused_not_trusted() {
        let good = encode_entry(&entry(2, EntryPayload::Membership(joint())));
        // Every truncation is an error, never a panic.
        for cut in 0..good.len() {
            assert!(decode_entry(&good[..cut]).is_err(), "cut at {cut}");
        }
        let mut trailing = good.clone();
        trailing.push(0);
        assert!(decode_entry(&trailing).is_err());
        // A voter that is not among the nodes is not a membership.
        let mut bad = Vec::new();
        put_u8(&mut bad, FORMAT);
        put_varint(&mut bad, 1);
        put_varint(&mut bad, 1);
        put_varint(&mut bad, 9);
        put_varint(&mut bad, 0);
        let e = decode_membership(&bad).unwrap_err();
        assert!(e.reason.contains("invalid membership"), "{e}");
        // A huge count with nothing behind it allocates nothing.
        let mut huge = Vec::new();
        put_u8(&mut huge, FORMAT);
        put_varint(&mut huge, u64::MAX);
        assert!(decode_membership(&huge).is_err());
    }
}
