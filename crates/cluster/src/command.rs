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
//!            closed:(0 | 1 ts)
//! ClosedTs = tag 2  ts
//! Lease    = tag 3  seq  holder  start  expiry
//! kind     = 0 (delete) | 1 (put, a value follows)
//! ```
//!
//! Decoding refuses anything else with the offset where it stopped: an
//! unknown version or tag, a truncated body, trailing bytes, a length or
//! count larger than the bytes left.

use crate::error::DecodeError;
use crate::lease::Lease;
use crate::wire::{put_bytes, put_u8, put_varint, Reader};

/// The format version this build writes and reads.
pub const FORMAT: u8 = 1;

const TAG_WRITE: u8 = 1;
const TAG_CLOSED_TS: u8 = 2;
const TAG_LEASE: u8 = 3;
const KIND_DELETE: u8 = 0;
const KIND_PUT: u8 = 1;

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

/// One key written by a commit: the encoded row key (or index entry key)
/// and its new value, `None` for a delete.
pub type Write = (Vec<u8>, Option<Vec<u8>>);

/// The row versions of one committed transaction on one split, all at its
/// commit timestamp.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    pub ts: u64,
    pub writes: Vec<Write>,
}

/// What a split group's log entry carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// The row versions of one or more commits (a group commit carries
    /// many), in commit order, and optionally a new closed timestamp: the
    /// leaseholder promises that no later entry writes at or below it.
    Write {
        commits: Vec<Commit>,
        closed_ts: Option<u64>,
    },
    /// Raises the closed timestamp of a split that has no writes to carry
    /// it.
    ClosedTs(u64),
    /// A new lease on the split (see [`crate::lease`]), replacing the
    /// lease numbered one less; ignored when applied if that is no longer
    /// the current lease.
    Lease(Lease),
}

impl Command {
    /// The binary form of the command.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        put_u8(&mut out, FORMAT);
        match self {
            Command::Write { commits, closed_ts } => {
                put_u8(&mut out, TAG_WRITE);
                put_varint(&mut out, commits.len() as u64);
                for commit in commits {
                    put_varint(&mut out, commit.ts);
                    put_varint(&mut out, commit.writes.len() as u64);
                    for (key, value) in &commit.writes {
                        put_bytes(&mut out, key);
                        match value {
                            None => put_u8(&mut out, KIND_DELETE),
                            Some(v) => {
                                put_u8(&mut out, KIND_PUT);
                                put_bytes(&mut out, v);
                            }
                        }
                    }
                }
                match closed_ts {
                    None => put_u8(&mut out, 0),
                    Some(ts) => {
                        put_u8(&mut out, 1);
                        put_varint(&mut out, *ts);
                    }
                }
            }
            Command::ClosedTs(ts) => {
                put_u8(&mut out, TAG_CLOSED_TS);
                put_varint(&mut out, *ts);
            }
            Command::Lease(lease) => {
                put_u8(&mut out, TAG_LEASE);
                lease.encode_into(&mut out);
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
                    let m = r.count(2)?;
                    let mut writes = Vec::with_capacity(m);
                    for _ in 0..m {
                        let key = r.bytes()?.to_vec();
                        let value = match r.u8()? {
                            KIND_DELETE => None,
                            KIND_PUT => Some(r.bytes()?.to_vec()),
                            other => return Err(r.error(format!("write kind {other}"))),
                        };
                        writes.push((key, value));
                    }
                    commits.push(Commit { ts, writes });
                }
                let closed_ts = match r.u8()? {
                    0 => None,
                    1 => Some(r.varint()?),
                    other => return Err(r.error(format!("closed timestamp flag {other}"))),
                };
                Command::Write { commits, closed_ts }
            }
            TAG_CLOSED_TS => Command::ClosedTs(r.varint()?),
            TAG_LEASE => Command::Lease(Lease::decode_from(&mut r)?),
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
            Command::Write { commits, closed_ts } => {
                let writes: usize = commits.iter().map(|c| c.writes.len()).sum();
                write!(f, "write of {} commits, {writes} keys", commits.len())?;
                if let Some(ts) = closed_ts {
                    write!(f, ", closed at {ts}")?;
                }
                Ok(())
            }
            Command::ClosedTs(ts) => write!(f, "closed timestamp {ts}"),
            Command::Lease(lease) => write!(f, "{lease}"),
        }
    }
}
