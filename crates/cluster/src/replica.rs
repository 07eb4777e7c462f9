//! The replica state machine: one node's copy of one split.
//!
//! A replica's data is the split's key range in its node's storage engine,
//! stored exactly as a single process stores it (MVCC versions written
//! through the router). Next to it, in the engine's metadata space, sits
//! the replica's *applied state*: the id of the last log entry applied, the
//! closed timestamp, and the split's descriptor (id, range, epoch).
//!
//! [`Replica::apply`] turns one log entry into one engine batch holding
//! both the entry's row versions and the new applied state, written with
//! buffered durability: the Raft log is the durable copy. After a crash the
//! engine holds some prefix of the applied entries, each whole, and the
//! applied id says which; replaying the log skips what is already there, so
//! a replica that crashed ends exactly where one that never crashed does
//! (design invariant 16).
//!
//! Before writing, an entry is checked against what the replica knows, and
//! refused whole (nothing written) if it breaks a rule no correct leader
//! breaks: a gap in the log, a key outside the split (invariant 2), a
//! version at or below a stored version of its key (invariant 4), a commit
//! at or below the closed timestamp. A refusal means a bug or corruption
//! upstream; the caller stops serving the group.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use rowtree_kv::{Router, SplitId};
use rowtree_storage::mvcc::{split_version_key, version_key};
use rowtree_storage::{Durability, WriteBatch};

use crate::command::{Command, LogId, FORMAT};
use crate::error::{DecodeError, Error, Result};
use crate::wire::{put_bytes, put_u8, put_varint, Reader};

/// A split as its group knows it: id, key range `[start, limit)` (no
/// `limit`: to the end of the key space) and epoch, raised by every change
/// of the range or the replica set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Descriptor {
    pub split: SplitId,
    pub start: Vec<u8>,
    pub limit: Option<Vec<u8>>,
    pub epoch: u64,
}

impl Descriptor {
    /// Whether the split owns `key`.
    pub fn contains(&self, key: &[u8]) -> bool {
        key >= self.start.as_slice() && self.limit.as_deref().is_none_or(|l| key < l)
    }
}

impl fmt::Display for Descriptor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}, ", hex(&self.start))?;
        match &self.limit {
            Some(l) => write!(f, "{})", hex(l)),
            None => write!(f, "end)"),
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "''".into();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What [`Replica::apply`] did with an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    /// The entry was applied.
    Applied,
    /// The entry was applied before (a replay after a restart): nothing
    /// was written.
    AlreadyApplied,
}

/// One node's replica of one split, applying the split's log.
pub struct Replica {
    router: Arc<Router>,
    descriptor: Descriptor,
    applied: LogId,
    closed_ts: u64,
}

/// The metadata key of a split's applied state.
fn state_key(split: SplitId) -> Vec<u8> {
    format!("raft/{:016x}/state", split.0).into_bytes()
}

impl Replica {
    /// Creates the replica of a new split on `router`'s engine: nothing
    /// applied, closed timestamp 0. Refused if the engine already holds a
    /// replica of that split.
    pub fn create(router: Arc<Router>, descriptor: Descriptor) -> Result<Replica> {
        let split = descriptor.split;
        if router.meta_get(&state_key(split))?.is_some() {
            return Err(Error::Replica {
                split,
                message: "a replica of this split already exists on this engine".into(),
            });
        }
        let replica = Replica {
            router,
            descriptor,
            applied: LogId::default(),
            closed_ts: 0,
        };
        let mut batch = WriteBatch::new();
        replica.stage_state(&mut batch, replica.applied, replica.closed_ts);
        replica.router.write(batch, Durability::Buffered)?;
        Ok(replica)
    }

    /// Opens the replica of `split` that `router`'s engine holds (after a
    /// restart), with the applied state stored there.
    pub fn open(router: Arc<Router>, split: SplitId) -> Result<Replica> {
        let Some(bytes) = router.meta_get(&state_key(split))? else {
            return Err(Error::Replica {
                split,
                message: "no replica of this split on this engine".into(),
            });
        };
        let (descriptor, applied, closed_ts) = decode_state(split, &bytes)?;
        Ok(Replica {
            router,
            descriptor,
            applied,
            closed_ts,
        })
    }

    /// The split this replica holds.
    pub fn descriptor(&self) -> &Descriptor {
        &self.descriptor
    }

    /// The last entry applied (index 0: none).
    pub fn applied(&self) -> LogId {
        self.applied
    }

    /// The closed timestamp: no entry after the one that set it writes at
    /// or below it.
    pub fn closed_ts(&self) -> u64 {
        self.closed_ts
    }

    /// Decodes and applies the entry `bytes` at `id` (see [`Replica::apply`]).
    pub fn apply_bytes(&mut self, id: LogId, bytes: &[u8]) -> Result<Applied> {
        if id.index <= self.applied.index {
            return Ok(Applied::AlreadyApplied);
        }
        let command = Command::decode(bytes)?;
        self.apply(id, &command)
    }

    /// Applies the entry `command` at log position `id`: its row versions
    /// and the new applied state in one engine batch. An entry at or below
    /// the applied index was applied before and is skipped; the entry must
    /// otherwise be the next one. Refused whole, with nothing written, if
    /// it breaks one of the rules in the module docs.
    pub fn apply(&mut self, id: LogId, command: &Command) -> Result<Applied> {
        let split = self.descriptor.split;
        if id.index <= self.applied.index {
            return Ok(Applied::AlreadyApplied);
        }
        if id.index != self.applied.index + 1 {
            return Err(Error::LogGap {
                split,
                index: id.index,
                applied: self.applied.index,
            });
        }
        let mut batch = WriteBatch::new();
        let closed_ts = match command {
            Command::Write { commits, closed_ts } => {
                self.check_writes(id, commits)?;
                for commit in commits {
                    self.router.stage_writes(
                        &mut batch,
                        commit.ts,
                        commit
                            .writes
                            .iter()
                            .map(|(k, v)| (k.as_slice(), v.as_deref())),
                    );
                }
                closed_ts.map_or(self.closed_ts, |ts| ts.max(self.closed_ts))
            }
            Command::ClosedTs(ts) => (*ts).max(self.closed_ts),
        };
        self.stage_state(&mut batch, id, closed_ts);
        self.router.write(batch, Durability::Buffered)?;
        self.applied = id;
        self.closed_ts = closed_ts;
        Ok(Applied::Applied)
    }

    /// The checks of a `Write` entry: every key in the range, every
    /// version above the closed timestamp and above every version of its
    /// key stored or written earlier in the entry.
    fn check_writes(&self, id: LogId, commits: &[crate::command::Commit]) -> Result<()> {
        let split = self.descriptor.split;
        let mut newest: HashMap<&[u8], u64> = HashMap::new();
        for commit in commits {
            for (key, _) in &commit.writes {
                if !self.descriptor.contains(key) {
                    return Err(Error::OutOfRange {
                        split,
                        index: id.index,
                        key: hex(key),
                        range: self.descriptor.to_string(),
                    });
                }
                if commit.ts <= self.closed_ts {
                    return Err(Error::TimestampOrder {
                        split,
                        index: id.index,
                        key: hex(key),
                        ts: commit.ts,
                        bound: self.closed_ts,
                        why: "the closed timestamp",
                    });
                }
                let (before, why) = match newest.get(key.as_slice()) {
                    Some(&ts) if ts == commit.ts => {
                        (Some(ts), "the key written twice by one commit")
                    }
                    Some(&ts) => (
                        Some(ts),
                        "a version written by an earlier commit of the entry",
                    ),
                    None => (
                        self.newest_stored(key)?,
                        "a version of the key already stored",
                    ),
                };
                if let Some(bound) = before {
                    if commit.ts <= bound {
                        return Err(Error::TimestampOrder {
                            split,
                            index: id.index,
                            key: hex(key),
                            ts: commit.ts,
                            bound,
                            why,
                        });
                    }
                }
                newest.insert(key, commit.ts);
            }
        }
        Ok(())
    }

    /// The timestamp of the newest stored version of `key`, if any.
    fn newest_stored(&self, key: &[u8]) -> Result<Option<u64>> {
        // Versions of a key sort newest first, from version_key(key, MAX)
        // to version_key(key, 0).
        let start = version_key(key, u64::MAX);
        let mut limit = version_key(key, 0);
        limit.push(0);
        for item in self.router.scan_stored(&start, Some(&limit)) {
            let (stored, _) = item?;
            let (user, ts) = split_version_key(&stored)?;
            if user == key {
                return Ok(Some(ts));
            }
        }
        Ok(None)
    }

    fn stage_state(&self, batch: &mut WriteBatch, applied: LogId, closed_ts: u64) {
        let d = &self.descriptor;
        let mut out = Vec::new();
        put_u8(&mut out, FORMAT);
        put_varint(&mut out, applied.term);
        put_varint(&mut out, applied.index);
        put_varint(&mut out, closed_ts);
        put_varint(&mut out, d.epoch);
        put_bytes(&mut out, &d.start);
        match &d.limit {
            None => put_u8(&mut out, 0),
            Some(l) => {
                put_u8(&mut out, 1);
                put_bytes(&mut out, l);
            }
        }
        self.router.stage_meta(batch, state_key(d.split), Some(out));
    }
}

fn decode_state(
    split: SplitId,
    bytes: &[u8],
) -> std::result::Result<(Descriptor, LogId, u64), DecodeError> {
    let mut r = Reader::new(bytes, "applied state");
    r.version(FORMAT)?;
    let applied = LogId::new(r.varint()?, r.varint()?);
    let closed_ts = r.varint()?;
    let epoch = r.varint()?;
    let start = r.bytes()?.to_vec();
    let limit = match r.u8()? {
        0 => None,
        1 => Some(r.bytes()?.to_vec()),
        other => return Err(r.error(format!("limit flag {other}"))),
    };
    r.finish()?;
    Ok((
        Descriptor {
            split,
            start,
            limit,
            epoch,
        },
        applied,
        closed_ts,
    ))
}

impl fmt::Debug for Replica {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Replica")
            .field("descriptor", &self.descriptor)
            .field("applied", &self.applied)
            .field("closed_ts", &self.closed_ts)
            .finish()
    }
}
