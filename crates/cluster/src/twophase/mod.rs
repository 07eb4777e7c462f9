//! Two-phase commit as a split group's log records it.
//!
//! A read-write transaction whose writes land in several splits commits
//! in two phases (design §6). Each participant other than the coordinator
//! *prepares*: its leaseholder proposes a [`Prepare`] entry holding the
//! transaction's writes on that split, its locks there and a prepare
//! timestamp. The coordinator then *decides*: a `Decide` entry in its own
//! group, which commits the coordinator's own writes at the commit
//! timestamp `s` (above every prepare timestamp) or aborts. Each
//! participant is finally *resolved*: a `Resolve` entry writes the prepared
//! writes at `s`, or drops them.
//!
//! This module is what a replica keeps of that, and the rules it checks
//! when applying the three entries, so that every replica of a group ends
//! in the same state whatever order retries and recoveries put the entries
//! in:
//!
//! * **The first outcome is final.** A replica records the outcome of
//!   every transaction it decided or resolved (its *outcome table*). A
//!   `Decide` for a transaction with an outcome is a no-op, so the first
//!   one in the coordinator's log wins; a `Resolve` after an outcome is a
//!   no-op, unless the transaction is still prepared here (its
//!   coordinator was merged into this split, whose outcome table the merge
//!   gave the decision): the recorded outcome then finishes the prepared
//!   half; a `Prepare` after an outcome (a retried prepare that lost the
//!   race with a recovery's abort) is a no-op too, so nothing stays
//!   prepared for a transaction that is over.
//! * **Prepared writes are invisible** until resolved: they sit in the
//!   replica's *prepared table*, not among the row versions.
//! * **Timestamps.** A prepare timestamp is above the closed timestamp,
//!   and while a transaction is prepared no closed timestamp may reach its
//!   prepare timestamp (design invariant 5): the commit timestamp, not
//!   known yet, will be at or above it, so a follower read at or below the
//!   closed timestamp can never miss it. A commit timestamp is at or above
//!   the prepare timestamp, and its writes pass the same checks as any
//!   commit's (inside the split, above the closed timestamp, above every
//!   stored version of their keys).
//! * **Placeholders.** Writes may take the commit timestamp
//!   (`PENDING_COMMIT_TIMESTAMP()`), unknown when they are prepared. Such a
//!   prepare is marked [`Prepare::pending`], and each of its values is a
//!   [`template`]: the columns to set, and the row. The commit stamps them
//!   ([`stamp`]) unless it comes with finished writes, which replace the
//!   prepared ones.
//!
//! The tables live in the replica's engine, in the metadata space under
//! the replica's own prefix (`raft/<split>/prepared/<txn>`,
//! `raft/<split>/outcome/<txn>`), written in the same batch as the entry
//! that changes them, and travel in snapshot images. Outcomes are kept
//! [`OUTCOME_RETENTION`] (ten minutes) past their timestamp, for lookups by
//! participants and gateways that lost track, and purged when the closed
//! timestamp passes that: a replica purges exactly when every other does,
//! since the closed timestamp is part of the log.
//!
//! The types and tables are here; the rules a replica applies the entries
//! by are in `apply`.
//!
//! What is not here yet: the messages that carry prepares and decisions
//! between nodes, the gateway's driver of the protocol and recovery (design
//! §6, milestone 9). A leaseholder will rebuild a prepared transaction's
//! locks from [`crate::Replica::prepared`] before using a new lease.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rowtree_kv::replication::Write;
use rowtree_kv::SplitId;
use rowtree_txn::lock::{KeyRange, LockMode, LockTarget};

use crate::error::{DecodeError, Result};
use crate::wire::{put_bytes, put_u8, put_varint, put_writes, read_writes, Reader};

mod apply;

pub(crate) use apply::outside;

/// The format version of the records the tables hold.
const RECORD_FORMAT: u8 = 1;

/// How long past its timestamp a transaction's outcome is kept: lookups
/// come from participants whose prepare is older than a few seconds and
/// from gateways retrying within a request's deadline, both far shorter.
pub const OUTCOME_RETENTION: u64 = 10 * 60 * 1_000_000_000;

/// A distributed transaction's id, unique in the cluster (the gateway
/// makes it from its node id and a counter, or at random).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GlobalTxnId(pub u128);

impl fmt::Display for GlobalTxnId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "txn {:032x}", self.0)
    }
}

impl GlobalTxnId {
    pub(crate) fn encode_into(self, out: &mut Vec<u8>) {
        put_varint(out, (self.0 >> 64) as u64);
        put_varint(out, self.0 as u64);
    }

    pub(crate) fn decode_from(r: &mut Reader<'_>) -> std::result::Result<GlobalTxnId, DecodeError> {
        let high = r.varint()?;
        let low = r.varint()?;
        Ok(GlobalTxnId((u128::from(high) << 64) | u128::from(low)))
    }
}

/// How a transaction ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Committed at `ts`.
    Commit { ts: u64 },
    /// Aborted; `at` is a timestamp from the deciding node's clock, which
    /// only says how long the outcome is kept.
    Abort { at: u64 },
}

impl Outcome {
    /// The outcome's timestamp: the commit timestamp, or when it aborted.
    pub fn ts(self) -> u64 {
        match self {
            Outcome::Commit { ts } => ts,
            Outcome::Abort { at } => at,
        }
    }

    pub(crate) fn encode_into(self, out: &mut Vec<u8>) {
        match self {
            Outcome::Commit { ts } => {
                put_u8(out, 1);
                put_varint(out, ts);
            }
            Outcome::Abort { at } => {
                put_u8(out, 0);
                put_varint(out, at);
            }
        }
    }

    pub(crate) fn decode_from(r: &mut Reader<'_>) -> std::result::Result<Outcome, DecodeError> {
        match r.u8()? {
            1 => Ok(Outcome::Commit { ts: r.varint()? }),
            0 => Ok(Outcome::Abort { at: r.varint()? }),
            other => Err(r.error(format!("outcome kind {other}"))),
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Commit { ts } => write!(f, "commit at {ts}"),
            Outcome::Abort { at } => write!(f, "abort at {at}"),
        }
    }
}

/// A participant's half of a transaction, prepared: everything its new
/// leaseholder needs to finish it, or to hold its locks until it is
/// finished, after the old one is gone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepare {
    pub txn: GlobalTxnId,
    /// The prepare timestamp: above every read the split served before,
    /// and at or below the commit timestamp.
    pub ts: u64,
    /// The split whose group decides.
    pub coordinator: SplitId,
    /// Every split the transaction writes, the coordinator included.
    pub participants: Vec<SplitId>,
    /// The transaction's writes on this split.
    pub writes: Vec<Write>,
    /// Whether the values of `writes` wait for the commit timestamp: each
    /// is then a [`template`], which the commit stamps ([`stamp`]) unless
    /// it carries the finished writes.
    pub pending: bool,
    /// The locks the transaction holds on this split.
    pub locks: Vec<(LockTarget, LockMode)>,
}

const LOCK_KEY: u8 = 0;
const LOCK_RANGE: u8 = 1;

/// The most columns a [`template`] may name (Spanner's limit on a table's
/// columns).
pub const MAX_TEMPLATE_COLUMNS: usize = 1024;

/// A prepared value that waits for the commit timestamp
/// ([`Prepare::pending`]): the ids of the row's columns that take it, then
/// the stored row itself, whose values of those columns stand in for it.
/// The node running the transaction makes it, for a row of a split another
/// node leads that writes `PENDING_COMMIT_TIMESTAMP()`; the participant's
/// replica turns it into the row at the commit ([`stamp`]), without the
/// schema, so that a participant finishes the write even when the node
/// that ran the transaction is gone.
pub fn template(columns: &[u32], row: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + 4 * columns.len() + row.len());
    out.extend_from_slice(&(columns.len() as u32).to_be_bytes());
    for c in columns {
        out.extend_from_slice(&c.to_be_bytes());
    }
    out.extend_from_slice(row);
    out
}

/// A [`template`]'s columns and row; an error says what is malformed.
pub fn parse_template(bytes: &[u8]) -> std::result::Result<(Vec<u32>, &[u8]), String> {
    let word = |at: usize| -> Option<u32> {
        bytes
            .get(at..at + 4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    };
    let n = word(0).ok_or("a value template shorter than its column count")? as usize;
    if n > MAX_TEMPLATE_COLUMNS {
        return Err(format!(
            "a value template names {n} columns, above {MAX_TEMPLATE_COLUMNS}"
        ));
    }
    let columns = (0..n)
        .map(|i| word(4 + 4 * i).ok_or("a value template cut short in its columns"))
        .collect::<std::result::Result<Vec<u32>, _>>()?;
    Ok((columns, &bytes[4 + 4 * n..]))
}

/// The row a [`template`] stands for once the transaction committed at
/// `ts`: its columns set to `ts`. An error if the template or its row is
/// malformed (a participant checks every template before it prepares, so
/// that its commit cannot fail here).
pub fn stamp(template: &[u8], ts: u64) -> std::result::Result<Vec<u8>, String> {
    let (columns, row) = parse_template(template)?;
    rowtree_db::stamp_row(row, &columns, ts).map_err(|e| format!("a value template's row: {e}"))
}

impl Prepare {
    pub(crate) fn encode_into(&self, out: &mut Vec<u8>) {
        self.txn.encode_into(out);
        put_varint(out, self.ts);
        put_varint(out, self.coordinator.0);
        put_varint(out, self.participants.len() as u64);
        for p in &self.participants {
            put_varint(out, p.0);
        }
        put_writes(out, &self.writes);
        put_u8(out, u8::from(self.pending));
        put_varint(out, self.locks.len() as u64);
        for (target, mode) in &self.locks {
            match target {
                LockTarget::Key(key) => {
                    put_u8(out, LOCK_KEY);
                    put_bytes(out, key);
                }
                LockTarget::Range(range) => {
                    put_u8(out, LOCK_RANGE);
                    put_bytes(out, &range.start);
                    put_optional_bytes(out, range.end.as_deref());
                }
            }
            put_u8(out, u8::from(*mode == LockMode::Exclusive));
        }
    }

    pub(crate) fn decode_from(r: &mut Reader<'_>) -> std::result::Result<Prepare, DecodeError> {
        let txn = GlobalTxnId::decode_from(r)?;
        let ts = r.varint()?;
        let coordinator = SplitId(r.varint()?);
        let n = r.count(1)?;
        let mut participants = Vec::with_capacity(n);
        for _ in 0..n {
            participants.push(SplitId(r.varint()?));
        }
        let writes = read_writes(r)?;
        let pending = read_flag(r, "pending flag")?;
        // A lock is at least three bytes (kind, key length, mode).
        let n = r.count(3)?;
        let mut locks = Vec::with_capacity(n);
        for _ in 0..n {
            let target = match r.u8()? {
                LOCK_KEY => LockTarget::Key(r.bytes()?.to_vec()),
                LOCK_RANGE => {
                    let start = r.bytes()?.to_vec();
                    let end = read_optional_bytes(r)?;
                    LockTarget::Range(KeyRange::new(start, end))
                }
                other => return Err(r.error(format!("lock kind {other}"))),
            };
            let mode = if read_flag(r, "lock mode")? {
                LockMode::Exclusive
            } else {
                LockMode::Shared
            };
            locks.push((target, mode));
        }
        Ok(Prepare {
            txn,
            ts,
            coordinator,
            participants,
            writes,
            pending,
            locks,
        })
    }

    /// The record's binary form in the prepared table.
    pub(crate) fn record(&self) -> Vec<u8> {
        let mut out = Vec::new();
        put_u8(&mut out, RECORD_FORMAT);
        self.encode_into(&mut out);
        out
    }

    fn from_record(bytes: &[u8]) -> std::result::Result<Prepare, DecodeError> {
        let mut r = Reader::new(bytes, "prepared transaction");
        r.version(RECORD_FORMAT)?;
        let prepare = Prepare::decode_from(&mut r)?;
        r.finish()?;
        Ok(prepare)
    }
}

fn put_optional_bytes(out: &mut Vec<u8>, bytes: Option<&[u8]>) {
    match bytes {
        None => put_u8(out, 0),
        Some(b) => {
            put_u8(out, 1);
            put_bytes(out, b);
        }
    }
}

fn read_optional_bytes(r: &mut Reader<'_>) -> std::result::Result<Option<Vec<u8>>, DecodeError> {
    match r.u8()? {
        0 => Ok(None),
        1 => Ok(Some(r.bytes()?.to_vec())),
        other => Err(r.error(format!("presence flag {other}"))),
    }
}

fn read_flag(r: &mut Reader<'_>, what: &str) -> std::result::Result<bool, DecodeError> {
    match r.u8()? {
        0 => Ok(false),
        1 => Ok(true),
        other => Err(r.error(format!("{what} {other}"))),
    }
}

/// A prepared transaction in brief: its id, prepare timestamp and
/// coordinator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PreparedSummary {
    pub txn: GlobalTxnId,
    pub ts: u64,
    pub coordinator: SplitId,
}

/// A replica's prepared transactions as other threads see them
/// ([`crate::Replica::prepared_view`]): the lowest prepare timestamp (`u64::MAX`
/// when there is none), which a read at or above may have to wait for,
/// and each transaction in brief, for whoever resolves them.
#[derive(Debug, Clone)]
pub struct PreparedView {
    floor: Arc<AtomicU64>,
    list: Arc<parking_lot::Mutex<Vec<PreparedSummary>>>,
}

impl Default for PreparedView {
    fn default() -> Self {
        PreparedView {
            floor: Arc::new(AtomicU64::new(u64::MAX)),
            list: Arc::default(),
        }
    }
}

impl PreparedView {
    /// The lowest prepare timestamp, `u64::MAX` when nothing is prepared.
    pub fn floor(&self) -> u64 {
        self.floor.load(Ordering::Acquire)
    }

    /// The transactions prepared, in brief.
    pub fn list(&self) -> Vec<PreparedSummary> {
        self.list.lock().clone()
    }

    fn set(&self, prepared: &BTreeMap<GlobalTxnId, Prepare>) {
        let list: Vec<PreparedSummary> = prepared
            .values()
            .map(|p| PreparedSummary {
                txn: p.txn,
                ts: p.ts,
                coordinator: p.coordinator,
            })
            .collect();
        let floor = list.iter().map(|p| p.ts).min().unwrap_or(u64::MAX);
        *self.list.lock() = list;
        self.floor.store(floor, Ordering::Release);
    }
}

/// A replica's prepared transactions, as its engine holds them.
#[derive(Debug, Default)]
pub(crate) struct PreparedTable {
    by_txn: BTreeMap<GlobalTxnId, Prepare>,
    view: PreparedView,
}

impl PreparedTable {
    /// The prepared transactions `router`'s engine holds for `split`.
    pub(crate) fn load(router: &rowtree_kv::Router, split: SplitId) -> Result<PreparedTable> {
        let mut table = PreparedTable::default();
        for item in router.meta_scan(&table_prefix(split, PREPARED)) {
            let (_, value) = item?;
            let prepare = Prepare::from_record(&value)?;
            table.by_txn.insert(prepare.txn, prepare);
        }
        table.publish();
        Ok(table)
    }

    pub(crate) fn view(&self) -> PreparedView {
        self.view.clone()
    }

    pub(crate) fn get(&self, txn: GlobalTxnId) -> Option<&Prepare> {
        self.by_txn.get(&txn)
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &Prepare> {
        self.by_txn.values()
    }

    fn publish(&self) {
        self.view.set(&self.by_txn);
    }

    /// Adopts what an applied entry did (after its batch is written).
    pub(crate) fn adopt(&mut self, change: TableChange) {
        match change {
            TableChange::None => return,
            TableChange::Insert(p) => {
                self.by_txn.insert(p.txn, *p);
            }
            TableChange::Remove(txn) => {
                self.by_txn.remove(&txn);
            }
            TableChange::RemoveAll(txns) => {
                for txn in txns {
                    self.by_txn.remove(&txn);
                }
            }
        }
        self.publish();
    }

    /// Replaces the whole table (an installed image).
    pub(crate) fn replace(&mut self, prepared: Vec<Prepare>) {
        self.by_txn = prepared.into_iter().map(|p| (p.txn, p)).collect();
        self.publish();
    }
}

/// What applying an entry does to the prepared table, adopted once the
/// entry's batch is written.
#[derive(Debug)]
pub(crate) enum TableChange {
    None,
    Insert(Box<Prepare>),
    Remove(GlobalTxnId),
    RemoveAll(Vec<GlobalTxnId>),
}

pub(crate) const PREPARED: &str = "prepared";
const OUTCOME: &str = "outcome";
const EXPIRY: &str = "expiry";
/// A split's frozen mark (see [`crate::merge`]): one key, the table's
/// prefix itself.
pub(crate) const FROZEN: &str = "frozen";
/// The tables whose records a merge moves to the surviving split.
pub(crate) const OUTCOME_TABLES: [&str; 2] = [OUTCOME, EXPIRY];

/// The prefix of a split's own metadata keys besides its applied state:
/// `raft/<split>/`.
pub(crate) fn side_prefix(split: SplitId) -> Vec<u8> {
    format!("raft/{:016x}/", split.0).into_bytes()
}

/// Whether `key` is one of `split`'s prepared, outcome or expiry keys, or
/// its frozen mark.
pub(crate) fn is_side_key(split: SplitId, key: &[u8]) -> bool {
    let prefix = side_prefix(split);
    [PREPARED, OUTCOME, EXPIRY, FROZEN].iter().any(|table| {
        key.strip_prefix(prefix.as_slice())
            .and_then(|rest| rest.strip_prefix(table.as_bytes()))
            .is_some_and(|rest| rest.first() == Some(&b'/'))
    })
}

pub(crate) fn table_prefix(split: SplitId, table: &str) -> Vec<u8> {
    let mut key = side_prefix(split);
    key.extend_from_slice(table.as_bytes());
    key.push(b'/');
    key
}

pub(crate) fn txn_key(split: SplitId, table: &str, txn: GlobalTxnId) -> Vec<u8> {
    let mut key = table_prefix(split, table);
    key.extend_from_slice(format!("{:032x}", txn.0).as_bytes());
    key
}

/// The expiry index: outcomes by timestamp, so that purging reads only
/// what it purges.
fn expiry_key(split: SplitId, ts: u64, txn: GlobalTxnId) -> Vec<u8> {
    let mut key = table_prefix(split, EXPIRY);
    key.extend_from_slice(format!("{ts:016x}{:032x}", txn.0).as_bytes());
    key
}

/// The outcome of `txn` recorded by the replica of `split` that
/// `router`'s engine holds (see [`crate::Replica::outcome`]).
pub fn read_outcome(
    router: &rowtree_kv::Router,
    split: SplitId,
    txn: GlobalTxnId,
) -> Result<Option<Outcome>> {
    let Some(bytes) = router.meta_get(&txn_key(split, OUTCOME, txn))? else {
        return Ok(None);
    };
    let mut r = Reader::new(&bytes, "transaction outcome");
    let outcome = Outcome::decode_from(&mut r)?;
    r.finish()?;
    Ok(Some(outcome))
}

/// The key of a split's frozen mark.
pub(crate) fn frozen_key(split: SplitId) -> Vec<u8> {
    table_prefix(split, FROZEN)
}

/// The split a replica of `split` on `router`'s engine is frozen into, if
/// it is frozen.
pub(crate) fn stored_frozen(
    router: &rowtree_kv::Router,
    split: SplitId,
) -> Result<Option<SplitId>> {
    match router.meta_get(&frozen_key(split))? {
        None => Ok(None),
        Some(bytes) => {
            let bytes: [u8; 8] =
                bytes
                    .as_slice()
                    .try_into()
                    .map_err(|_| crate::Error::Replica {
                        split,
                        message: format!("a malformed frozen mark {}", crate::wire::hex(&bytes)),
                    })?;
            Ok(Some(SplitId(u64::from_be_bytes(bytes))))
        }
    }
}
