//! The binary forms of the Raft messages nodes send each other over the
//! peer port: openraft's requests and responses for appending entries,
//! voting, installing a snapshot and transferring the leadership. The rules of [`crate::command`] hold
//! here too (a format byte, LEB128 varints, length-prefixed byte strings),
//! and so does the reason for them: these bytes come from another process,
//! perhaps a broken or hostile one, so decoding refuses anything malformed
//! with the offset where it stopped, and every count and length is bounded
//! by the bytes actually present.
//!
//! ```text
//! append request   = FORMAT  vote  opt_log_id(prev)  count { entry:bytes }  opt_log_id(commit)
//! append response  = FORMAT  0 (success) | 1 opt_log_id (partial) | 2 (conflict) | 3 vote (higher)
//! vote request     = FORMAT  vote  opt_log_id(last)
//! vote response    = FORMAT  vote  granted:(0 | 1)  opt_log_id(last)
//! snapshot         = FORMAT  vote  opt_log_id(last)  opt_log_id(membership)  membership:bytes
//!                    image:bytes
//! snapshot response = FORMAT  vote
//! transfer request = FORMAT  vote(leader)  to:varint  opt_log_id(last)
//! transfer response = FORMAT  0 (accepted) | 1 vote(expected) vote(actual) (vote changed)
//!                    | 2 opt_log_id(expected) opt_log_id(actual) (log not flushed)
//! vote             = bytes (the log store's form)
//! opt_log_id       = 0 | 1 term index
//! ```
//!
//! An entry is kept in the log store's form ([`super::encode_entry`]), so a
//! follower could append what it received without re-encoding it.

use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, SnapshotResponse, TransferLeaderError,
    TransferLeaderRequest, TransferLeaderResponse, VoteRequest, VoteResponse,
};

use super::codec::{decode_vote, encode_vote};
use super::{
    decode_entry, decode_membership, encode_entry, encode_membership, to_log_id, to_raft_log_id,
    RaftLogId, StoredMembership, TypeConfig, Vote,
};
use crate::command::{LogId, FORMAT};
use crate::error::DecodeError;
use crate::replica::SnapshotImage;
use crate::wire::{put_bytes, put_u8, put_varint, Reader};

/// A snapshot as it travels: the sender's vote, openraft's metadata and the
/// replica's image.
pub type SnapshotOf = openraft::alias::SnapshotOf<TypeConfig, SnapshotImage>;

const SUCCESS: u8 = 0;
const PARTIAL: u8 = 1;
const CONFLICT: u8 = 2;
const HIGHER_VOTE: u8 = 3;

fn put_opt_log_id(out: &mut Vec<u8>, id: &Option<RaftLogId>) {
    match id {
        None => put_u8(out, 0),
        Some(id) => {
            let id = to_log_id(id);
            put_u8(out, 1);
            put_varint(out, id.term);
            put_varint(out, id.index);
        }
    }
}

fn read_opt_log_id(r: &mut Reader<'_>) -> Result<Option<RaftLogId>, DecodeError> {
    match r.u8()? {
        0 => Ok(None),
        1 => Ok(Some(to_raft_log_id(LogId::new(r.varint()?, r.varint()?)))),
        other => Err(r.error(format!("log id presence flag {other}"))),
    }
}

fn read_flag(r: &mut Reader<'_>, what: &str) -> Result<bool, DecodeError> {
    match r.u8()? {
        0 => Ok(false),
        1 => Ok(true),
        other => Err(r.error(format!("{what} flag {other}"))),
    }
}

fn read_vote(r: &mut Reader<'_>) -> Result<Vote, DecodeError> {
    decode_vote(r.bytes()?)
}

/// An append-entries request's binary form.
pub fn encode_append(rpc: &AppendEntriesRequest<TypeConfig>) -> Vec<u8> {
    let mut out = Vec::new();
    put_u8(&mut out, FORMAT);
    put_bytes(&mut out, &encode_vote(&rpc.vote));
    put_opt_log_id(&mut out, &rpc.prev_log_id);
    put_varint(&mut out, rpc.entries.len() as u64);
    for entry in &rpc.entries {
        put_bytes(&mut out, &encode_entry(entry));
    }
    put_opt_log_id(&mut out, &rpc.leader_commit);
    out
}

/// Decodes an append-entries request.
pub fn decode_append(bytes: &[u8]) -> Result<AppendEntriesRequest<TypeConfig>, DecodeError> {
    let mut r = Reader::new(bytes, "append-entries request");
    r.version(FORMAT)?;
    let vote = read_vote(&mut r)?;
    let prev_log_id = read_opt_log_id(&mut r)?;
    // Each entry takes at least its length byte.
    let n = r.count(1)?;
    let mut entries = Vec::with_capacity(n);
    for _ in 0..n {
        entries.push(decode_entry(r.bytes()?)?);
    }
    let leader_commit = read_opt_log_id(&mut r)?;
    r.finish()?;
    Ok(AppendEntriesRequest {
        vote,
        prev_log_id,
        entries,
        leader_commit,
    })
}

/// An append-entries response's binary form.
pub fn encode_append_response(response: &AppendEntriesResponse<TypeConfig>) -> Vec<u8> {
    let mut out = Vec::new();
    put_u8(&mut out, FORMAT);
    match response {
        AppendEntriesResponse::Success => put_u8(&mut out, SUCCESS),
        AppendEntriesResponse::PartialSuccess(id) => {
            put_u8(&mut out, PARTIAL);
            put_opt_log_id(&mut out, id);
        }
        AppendEntriesResponse::Conflict => put_u8(&mut out, CONFLICT),
        AppendEntriesResponse::HigherVote(vote) => {
            put_u8(&mut out, HIGHER_VOTE);
            put_bytes(&mut out, &encode_vote(vote));
        }
    }
    out
}

/// Decodes an append-entries response.
pub fn decode_append_response(
    bytes: &[u8],
) -> Result<AppendEntriesResponse<TypeConfig>, DecodeError> {
    let mut r = Reader::new(bytes, "append-entries response");
    r.version(FORMAT)?;
    let response = match r.u8()? {
        SUCCESS => AppendEntriesResponse::Success,
        PARTIAL => AppendEntriesResponse::PartialSuccess(read_opt_log_id(&mut r)?),
        CONFLICT => AppendEntriesResponse::Conflict,
        HIGHER_VOTE => AppendEntriesResponse::HigherVote(read_vote(&mut r)?),
        other => return Err(r.error(format!("response tag {other}"))),
    };
    r.finish()?;
    Ok(response)
}

/// A vote request's binary form.
pub fn encode_vote_request(rpc: &VoteRequest<TypeConfig>) -> Vec<u8> {
    let mut out = Vec::new();
    put_u8(&mut out, FORMAT);
    put_bytes(&mut out, &encode_vote(&rpc.vote));
    put_opt_log_id(&mut out, &rpc.last_log_id);
    out
}

/// Decodes a vote request.
pub fn decode_vote_request(bytes: &[u8]) -> Result<VoteRequest<TypeConfig>, DecodeError> {
    let mut r = Reader::new(bytes, "vote request");
    r.version(FORMAT)?;
    let vote = read_vote(&mut r)?;
    let last_log_id = read_opt_log_id(&mut r)?;
    r.finish()?;
    Ok(VoteRequest::new(vote, last_log_id))
}

/// A vote response's binary form.
pub fn encode_vote_response(response: &VoteResponse<TypeConfig>) -> Vec<u8> {
    let mut out = Vec::new();
    put_u8(&mut out, FORMAT);
    put_bytes(&mut out, &encode_vote(&response.vote));
    put_u8(&mut out, u8::from(response.vote_granted));
    put_opt_log_id(&mut out, &response.last_log_id);
    out
}

/// Decodes a vote response.
pub fn decode_vote_response(bytes: &[u8]) -> Result<VoteResponse<TypeConfig>, DecodeError> {
    let mut r = Reader::new(bytes, "vote response");
    r.version(FORMAT)?;
    let vote = read_vote(&mut r)?;
    let granted = read_flag(&mut r, "vote granted")?;
    let last_log_id = read_opt_log_id(&mut r)?;
    r.finish()?;
    Ok(VoteResponse::new(vote, last_log_id, granted))
}

/// A transfer-leader request's binary form: the leader hands its
/// leadership to another voter.
pub fn encode_transfer(rpc: &TransferLeaderRequest<TypeConfig>) -> Vec<u8> {
    let mut out = Vec::new();
    put_u8(&mut out, FORMAT);
    put_bytes(&mut out, &encode_vote(rpc.from_leader()));
    put_varint(&mut out, *rpc.to_node_id());
    put_opt_log_id(&mut out, &rpc.last_log_id().cloned());
    out
}

/// Decodes a transfer-leader request.
pub fn decode_transfer(bytes: &[u8]) -> Result<TransferLeaderRequest<TypeConfig>, DecodeError> {
    let mut r = Reader::new(bytes, "transfer-leader request");
    r.version(FORMAT)?;
    let vote = read_vote(&mut r)?;
    let to = r.varint()?;
    let last_log_id = read_opt_log_id(&mut r)?;
    r.finish()?;
    Ok(TransferLeaderRequest::new(vote, to, last_log_id))
}

/// A transfer-leader response's binary form.
pub fn encode_transfer_response(response: &TransferLeaderResponse<TypeConfig>) -> Vec<u8> {
    let mut out = Vec::new();
    put_u8(&mut out, FORMAT);
    match response {
        Ok(()) => put_u8(&mut out, 0),
        Err(TransferLeaderError::VoteChanged { expected, actual }) => {
            put_u8(&mut out, 1);
            put_bytes(&mut out, &encode_vote(expected));
            put_bytes(&mut out, &encode_vote(actual));
        }
        Err(TransferLeaderError::LogNotFlushed { expected, actual }) => {
            put_u8(&mut out, 2);
            put_opt_log_id(&mut out, expected);
            put_opt_log_id(&mut out, actual);
        }
    }
    out
}

/// Decodes a transfer-leader response.
pub fn decode_transfer_response(
    bytes: &[u8],
) -> Result<TransferLeaderResponse<TypeConfig>, DecodeError> {
    let mut r = Reader::new(bytes, "transfer-leader response");
    r.version(FORMAT)?;
    let response = match r.u8()? {
        0 => Ok(()),
        1 => Err(TransferLeaderError::VoteChanged {
            expected: read_vote(&mut r)?,
            actual: read_vote(&mut r)?,
        }),
        2 => Err(TransferLeaderError::LogNotFlushed {
            expected: read_opt_log_id(&mut r)?,
            actual: read_opt_log_id(&mut r)?,
        }),
        other => return Err(r.error(format!("transfer-leader outcome {other}"))),
    };
    r.finish()?;
    Ok(response)
}

/// A full snapshot's binary form, with the vote of the leader sending it.
pub fn encode_snapshot(vote: &Vote, snapshot: &SnapshotOf) -> Vec<u8> {
    let mut out = Vec::new();
    put_u8(&mut out, FORMAT);
    put_bytes(&mut out, &encode_vote(vote));
    put_opt_log_id(&mut out, &snapshot.meta.last_log_id);
    let membership = &snapshot.meta.last_membership;
    put_opt_log_id(&mut out, membership.log_id());
    put_bytes(&mut out, &encode_membership(membership.membership()));
    put_bytes(&mut out, snapshot.snapshot.bytes());
    out
}

/// Decodes a full snapshot and the sender's vote. The image itself is
/// checked only when it is installed (`Replica::install`).
pub fn decode_snapshot(bytes: &[u8]) -> Result<(Vote, SnapshotOf), DecodeError> {
    let mut r = Reader::new(bytes, "snapshot");
    r.version(FORMAT)?;
    let vote = read_vote(&mut r)?;
    let last_log_id = read_opt_log_id(&mut r)?;
    let membership_id = read_opt_log_id(&mut r)?;
    let membership = decode_membership(r.bytes()?)?;
    let image = SnapshotImage::from_bytes(r.bytes()?.to_vec());
    r.finish()?;
    let meta = openraft::SnapshotMeta {
        last_log_id,
        last_membership: StoredMembership::new(membership_id, membership),
    };
    Ok((
        vote,
        openraft::Snapshot {
            meta,
            snapshot: image,
        },
    ))
}

/// A snapshot response's binary form.
pub fn encode_snapshot_response(response: &SnapshotResponse<TypeConfig>) -> Vec<u8> {
    let mut out = Vec::new();
    put_u8(&mut out, FORMAT);
    put_bytes(&mut out, &encode_vote(&response.vote));
    out
}

/// Decodes a snapshot response.
pub fn decode_snapshot_response(bytes: &[u8]) -> Result<SnapshotResponse<TypeConfig>, DecodeError> {
    let mut r = Reader::new(bytes, "snapshot response");
    r.version(FORMAT)?;
    let vote = read_vote(&mut r)?;
    r.finish()?;
    Ok(SnapshotResponse::new(vote))
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use openraft::{BasicNode, EntryPayload};

    use super::*;
    use crate::command::{Command, Commit};
    use crate::raft::Membership;

    fn id(term: u64, index: u64) -> Option<RaftLogId> {
        Some(to_raft_log_id(LogId::new(term, index)))
    }

    fn vote() -> Vote {
        openraft::Vote {
            leader_id: openraft::impls::leader_id_std::LeaderId {
                term: 4,
                voted_for: 2,
            },
            committed: true,
        }
    }

    fn membership() -> Membership {
        let nodes: BTreeMap<u64, BasicNode> = (1..=3)
            .map(|i| {
                let addr = format!("127.0.0.1:{}", 9000 + i);
                (i, BasicNode { addr })
            })
            .collect();
        Membership::new(vec![BTreeSet::from([1, 2, 3])], nodes).unwrap()
    }

    #[test]
    fn every_message_survives_its_binary_form() {
        let entries = vec![
            openraft::Entry {
                log_id: id(4, 8).unwrap(),
                payload: EntryPayload::Blank,
            },
            openraft::Entry {
                log_id: id(4, 9).unwrap(),
                payload: EntryPayload::Normal(Command::Write {
                    commits: vec![Commit {
                        ts: 77,
                        writes: vec![
                            (b"k1".to_vec(), Some(b"v".to_vec())),
                            (b"k2".to_vec(), None),
                        ],
                    }],
                    closed_ts: Some(70),
                    meta: Vec::new(),
                }),
            },
            openraft::Entry {
                log_id: id(4, 10).unwrap(),
                payload: EntryPayload::Membership(membership()),
            },
        ];
        let append = AppendEntriesRequest {
            vote: vote(),
            prev_log_id: id(3, 7),
            entries,
            leader_commit: id(3, 6),
        };
        let back = decode_append(&encode_append(&append)).unwrap();
        assert_eq!(back.vote, append.vote);
        assert_eq!(back.prev_log_id, append.prev_log_id);
        assert_eq!(back.entries, append.entries);
        assert_eq!(back.leader_commit, append.leader_commit);

        for response in [
            AppendEntriesResponse::Success,
            AppendEntriesResponse::PartialSuccess(None),
            AppendEntriesResponse::PartialSuccess(id(4, 9)),
            AppendEntriesResponse::Conflict,
            AppendEntriesResponse::HigherVote(vote()),
        ] {
            let back = decode_append_response(&encode_append_response(&response)).unwrap();
            assert_eq!(back, response);
        }

        let request = VoteRequest::new(vote(), id(4, 10));
        assert_eq!(
            decode_vote_request(&encode_vote_request(&request)).unwrap(),
            request
        );
        for granted in [false, true] {
            let response = VoteResponse::new(vote(), None, granted);
            let back = decode_vote_response(&encode_vote_response(&response)).unwrap();
            assert_eq!(back, response);
        }

        let snapshot = openraft::Snapshot {
            meta: openraft::SnapshotMeta {
                last_log_id: id(4, 10),
                last_membership: StoredMembership::new(id(4, 10), membership()),
            },
            snapshot: SnapshotImage::from_bytes(b"image bytes".to_vec()),
        };
        let (v, back) = decode_snapshot(&encode_snapshot(&vote(), &snapshot)).unwrap();
        assert_eq!(v, vote());
        assert_eq!(back.meta, snapshot.meta);
        assert_eq!(back.snapshot.bytes(), snapshot.snapshot.bytes());

        let response = SnapshotResponse::new(vote());
        assert_eq!(
            decode_snapshot_response(&encode_snapshot_response(&response)).unwrap(),
            response
        );
    }

    #[test]
    fn transfer_messages_survive_their_binary_form() {
        let request = TransferLeaderRequest::new(vote(), 3, id(2, 9));
        let back = decode_transfer(&encode_transfer(&request)).unwrap();
        assert_eq!(
            (back.from_leader(), back.to_node_id(), back.last_log_id()),
            (
                request.from_leader(),
                request.to_node_id(),
                request.last_log_id()
            )
        );
        let responses: Vec<TransferLeaderResponse<TypeConfig>> = vec![
            Ok(()),
            Err(TransferLeaderError::VoteChanged {
                expected: vote(),
                actual: vote(),
            }),
            Err(TransferLeaderError::LogNotFlushed {
                expected: id(2, 9),
                actual: None,
            }),
        ];
        for response in responses {
            let bytes = encode_transfer_response(&response);
            assert_eq!(decode_transfer_response(&bytes).unwrap(), response);
            for cut in 0..bytes.len() {
                assert!(decode_transfer_response(&bytes[..cut]).is_err());
            }
        }
        assert!(decode_transfer_response(&[FORMAT, 3]).is_err());
    }

    #[test]
    fn truncated_or_padded_messages_are_refused() {
        let request = encode_vote_request(&VoteRequest::new(vote(), id(1, 1)));
        for cut in 0..request.len() {
            assert!(
                decode_vote_request(&request[..cut]).is_err(),
                "cut at {cut}"
            );
        }
        let mut padded = request.clone();
        padded.push(0);
        assert!(decode_vote_request(&padded).is_err());
        // A presence flag that is neither 0 nor 1.
        let mut flag = encode_vote_response(&VoteResponse::new(vote(), None, true));
        let last = flag.len() - 1;
        flag[last] = 2;
        let e = decode_vote_response(&flag).unwrap_err();
        assert!(e.to_string().contains("flag"), "{e}");
    }
}
