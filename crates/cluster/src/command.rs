//! What a split group's log entry carries, and its binary form.
//!
//! A [`Command`] is everything a replica needs to apply an entry: applying
//! reads nothing but the entry and the replica's own stored state, so
//! every replica that applies the same entries writes the same bytes.
//!
//! The binary form starts with a format version byte ([`FORMAT`]), then a
//! tag for the kind of command. Numbers are LEB128 varints, byte strings
//! are length-prefixed:
//!
//! ```text
//! entry    = FORMAT:u8  tag:u8  body
//! Write    = tag 1  count(commits) { ts  count(writes) { key  kind [value] } }
//!            closed:(0 | 1 ts)  count(meta) { key  kind [value] }
//! ClosedTs = tag 2  ts
//! Lease    = tag 3  seq  holder  start  expiry
//! Prepare  = tag 4  txn  ts  coordinator  count(participants) { split }
//!            writes  pending:(0 | 1)  count(locks) { lock }
//! Decide   = tag 5  txn  outcome  writes
//! Resolve  = tag 6  txn  outcome  (0 | 1 writes)
//! SplitAt  = tag 7  at:bytes  right:varint
//! Freeze   = tag 8  into:varint
//! Merge    = tag 9  split:varint  start:bytes  (0 | 1 limit:bytes)  epoch
//!            applied:(term index)
//! txn      = high:varint  low:varint  (a 128-bit id)
//! outcome  = 0 at (abort) | 1 ts (commit)
//! lock     = (0 key | 1 start (0 | 1 end))  exclusive:(0 | 1)
//! writes   = count(writes) { key  kind [value] }
//! kind     = 0 (delete) | 1 (put, a value follows)
//! ```
//!
//! Decoding refuses anything else with the offset where it stopped: an
//! unknown version or tag, a truncated body, trailing bytes, a length or
//! count larger than the bytes left.

use crate::error::DecodeError;
use crate::lease::Lease;
use crate::twophase::{GlobalTxnId, Outcome, Prepare};
use crate::wire::{hex, put_bytes, put_u8, put_varint, put_writes, read_writes, Reader};
use rowtree_kv::SplitId;

/// The format version this build writes and reads.
pub const FORMAT: u8 = 1;

const TAG_WRITE: u8 = 1;
const TAG_CLOSED_TS: u8 = 2;
const TAG_LEASE: u8 = 3;
const TAG_PREPARE: u8 = 4;
const TAG_DECIDE: u8 = 5;
const TAG_RESOLVE: u8 = 6;
const TAG_SPLIT_AT: u8 = 7;
const TAG_FREEZE: u8 = 8;
const TAG_MERGE: u8 = 9;

/// The position of an entry in a group's log: the leader's term and the
/// entry's index (indexes start at 0 and increase by one per entry).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct LogId {
    pub term: u64,
    pub index: u64,
}

impl LogId {
    pub fn new(term: u64, index: u64) -> LogId {
        LogId { term, index }
    }
}

pub use rowtree_kv::replication::{Commit, Write};

/// What a split group's log entry carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// The row versions of one or more commits (a group commit carries
    /// many), in commit order, and optionally a new closed timestamp: the
    /// leaseholder promises that no later entry writes at or below it.
    ///
    /// `meta` holds the database metadata written atomically with the
    /// commits (a schema change's DDL log entry, sequence reservations, the
    /// newest commit timestamp), applied unversioned; only the group of the
    /// first split (the whole key space, while a database has one group)
    /// carries metadata (see
    /// [`crate::replica`]).
    Write {
        commits: Vec<Commit>,
        closed_ts: Option<u64>,
        meta: Vec<Write>,
    },
    /// Raises the closed timestamp of a split that has no writes to carry
    /// it.
    ClosedTs(u64),
    /// A new lease on the split (see [`crate::lease`]), replacing the
    /// lease numbered one less; ignored when applied if that is no longer
    /// the current lease.
    Lease(Lease),
    /// A participant's half of a distributed transaction, prepared: held
    /// aside, invisible, until resolved (see [`crate::twophase`]).
    Prepare(Prepare),
    /// The coordinator's decision on a distributed transaction, with its
    /// own writes when it commits; the first decision applied for a
    /// transaction is final, a later one a no-op.
    Decide {
        txn: GlobalTxnId,
        outcome: Outcome,
        writes: Vec<Write>,
    },
    /// A participant told the outcome: its prepared writes written at the
    /// commit timestamp (or `writes`, the prepared ones finished, when they
    /// waited for it), or dropped.
    Resolve {
        txn: GlobalTxnId,
        outcome: Outcome,
        writes: Option<Vec<Write>>,
    },
    /// Cuts the split in two at key `at`: this group keeps the keys below
    /// it, and a new group, split `right`, takes the rest, on the same
    /// replicas (see [`crate::split`]).
    SplitAt { at: Vec<u8>, right: SplitId },
    /// The first step of merging this split into its left neighbour,
    /// split `into`: from this entry on the split takes no writes (see
    /// [`crate::merge`]).
    Freeze { into: SplitId },
    /// The second step, in the left neighbour's group: this split takes
    /// over the range `[start, limit)` of split `right` (whose descriptor
    /// has epoch `epoch`), once the replica of `right` on the same engine
    /// has applied its log up to `right_applied`, its `Freeze` (see
    /// [`crate::merge`]).
    Merge {
        right: SplitId,
        start: Vec<u8>,
        limit: Option<Vec<u8>>,
        epoch: u64,
        right_applied: LogId,
    },
}

impl Command {
    /// The binary form of the command.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        put_u8(&mut out, FORMAT);
        match self {
            Command::Write {
                commits,
                closed_ts,
                meta,
            } => {
                put_u8(&mut out, TAG_WRITE);
                put_varint(&mut out, commits.len() as u64);
                for commit in commits {
                    put_varint(&mut out, commit.ts);
                    put_writes(&mut out, &commit.writes);
                }
                match closed_ts {
                    None => put_u8(&mut out, 0),
                    Some(ts) => {
                        put_u8(&mut out, 1);
                        put_varint(&mut out, *ts);
                    }
                }
                put_writes(&mut out, meta);
            }
            Command::ClosedTs(ts) => {
                put_u8(&mut out, TAG_CLOSED_TS);
                put_varint(&mut out, *ts);
            }
            Command::Lease(lease) => {
                put_u8(&mut out, TAG_LEASE);
                lease.encode_into(&mut out);
            }
            Command::Prepare(prepare) => {
                put_u8(&mut out, TAG_PREPARE);
                prepare.encode_into(&mut out);
            }
            Command::Decide {
                txn,
                outcome,
                writes,
            } => {
                put_u8(&mut out, TAG_DECIDE);
                txn.encode_into(&mut out);
                outcome.encode_into(&mut out);
                put_writes(&mut out, writes);
            }
            Command::Resolve {
                txn,
                outcome,
                writes,
            } => {
                put_u8(&mut out, TAG_RESOLVE);
                txn.encode_into(&mut out);
                outcome.encode_into(&mut out);
                match writes {
                    None => put_u8(&mut out, 0),
                    Some(w) => {
                        put_u8(&mut out, 1);
                        put_writes(&mut out, w);
                    }
                }
            }
            Command::SplitAt { at, right } => {
                put_u8(&mut out, TAG_SPLIT_AT);
                put_bytes(&mut out, at);
                put_varint(&mut out, right.0);
            }
            Command::Freeze { into } => {
                put_u8(&mut out, TAG_FREEZE);
                put_varint(&mut out, into.0);
            }
            Command::Merge {
                right,
                start,
                limit,
                epoch,
                right_applied,
            } => {
                put_u8(&mut out, TAG_MERGE);
                put_varint(&mut out, right.0);
                put_bytes(&mut out, start);
                match limit {
                    None => put_u8(&mut out, 0),
                    Some(limit) => {
                        put_u8(&mut out, 1);
                        put_bytes(&mut out, limit);
                    }
                }
                put_varint(&mut out, *epoch);
                put_varint(&mut out, right_applied.term);
                put_varint(&mut out, right_applied.index);
            }
        }
        out
    }

    /// Reads a command back from its binary form.
    pub fn decode(bytes: &[u8]) -> Result<Command, DecodeError> {
        let mut r = Reader::new(bytes, "log entry");
        r.version(FORMAT)?;
        let command = match r.u8()? {
            TAG_WRITE => {
                // A commit is at least two bytes (ts, count), a write two
                // (key length, kind).
                let n = r.count(2)?;
                let mut commits = Vec::with_capacity(n);
                for _ in 0..n {
                    let ts = r.varint()?;
                    let writes = read_writes(&mut r)?;
                    commits.push(Commit { ts, writes });
                }
                let closed_ts = match r.u8()? {
                    0 => None,
                    1 => Some(r.varint()?),
                    other => return Err(r.error(format!("closed timestamp flag {other}"))),
                };
                let meta = read_writes(&mut r)?;
                Command::Write {
                    commits,
                    closed_ts,
                    meta,
                }
            }
            TAG_CLOSED_TS => Command::ClosedTs(r.varint()?),
            TAG_LEASE => Command::Lease(Lease::decode_from(&mut r)?),
            TAG_PREPARE => Command::Prepare(Prepare::decode_from(&mut r)?),
            TAG_DECIDE => Command::Decide {
                txn: GlobalTxnId::decode_from(&mut r)?,
                outcome: Outcome::decode_from(&mut r)?,
                writes: read_writes(&mut r)?,
            },
            TAG_RESOLVE => Command::Resolve {
                txn: GlobalTxnId::decode_from(&mut r)?,
                outcome: Outcome::decode_from(&mut r)?,
                writes: match r.u8()? {
                    0 => None,
                    1 => Some(read_writes(&mut r)?),
                    other => return Err(r.error(format!("finished writes flag {other}"))),
                },
            },
            TAG_SPLIT_AT => Command::SplitAt {
                at: r.bytes()?.to_vec(),
                right: SplitId(r.varint()?),
            },
            TAG_FREEZE => Command::Freeze {
                into: SplitId(r.varint()?),
            },
            TAG_MERGE => Command::Merge {
                right: SplitId(r.varint()?),
                start: r.bytes()?.to_vec(),
                limit: match r.u8()? {
                    0 => None,
                    1 => Some(r.bytes()?.to_vec()),
                    other => return Err(r.error(format!("limit flag {other}"))),
                },
                epoch: r.varint()?,
                right_applied: LogId::new(r.varint()?, r.varint()?),
            },
            other => return Err(r.error(format!("command tag {other}"))),
        };
        r.finish()?;
        Ok(command)
    }
}

impl std::fmt::Display for Command {
    /// A one-line summary for logs: the kind, and what it holds by count.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Command::Write {
                commits,
                closed_ts,
                meta,
            } => {
                let writes: usize = commits.iter().map(|c| c.writes.len()).sum();
                write!(f, "write of {} commits, {writes} keys", commits.len())?;
                if !meta.is_empty() {
                    write!(f, ", {} metadata keys", meta.len())?;
                }
                if let Some(ts) = closed_ts {
                    write!(f, ", closed at {ts}")?;
                }
                Ok(())
            }
            Command::ClosedTs(ts) => write!(f, "closed timestamp {ts}"),
            Command::Lease(lease) => write!(f, "{lease}"),
            Command::Prepare(p) => write!(
                f,
                "prepare of {} at {}, {} keys, {} locks",
                p.txn,
                p.ts,
                p.writes.len(),
                p.locks.len()
            ),
            Command::Decide {
                txn,
                outcome,
                writes,
            } => write!(f, "decision on {txn}: {outcome}, {} keys", writes.len()),
            Command::Resolve { txn, outcome, .. } => write!(f, "resolution of {txn}: {outcome}"),
            Command::SplitAt { at, right } => {
                write!(f, "split at {} into {right}", hex(at))
            }
            Command::Freeze { into } => write!(f, "freeze for a merge into {into}"),
            Command::Merge {
                right,
                start,
                limit,
                right_applied,
                ..
            } => write!(
                f,
                "merge of {right} [{}, {}) once applied to {}",
                hex(start),
                limit.as_deref().map_or_else(|| "end".to_string(), hex),
                right_applied.index
            ),
        }
    }
}
