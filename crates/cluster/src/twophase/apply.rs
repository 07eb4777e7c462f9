//! The rules a replica applies two-phase commit's entries by (see the
//! parent module): staging each entry's writes and table changes into the
//! entry's batch, or refusing it.

use rowtree_storage::WriteBatch;
use rowtree_txn::lock::LockTarget;

use super::{
    expiry_key, read_outcome, table_prefix, txn_key, GlobalTxnId, Outcome, Prepare, PreparedView,
    TableChange, EXPIRY, OUTCOME, OUTCOME_RETENTION, PREPARED,
};
use crate::command::{Commit, LogId, Write};
use crate::error::{Error, Result};
use crate::replica::{hex, Descriptor, Replica};

/// The first key of `prepare`'s writes or locks outside `descriptor`.
pub(crate) fn outside(descriptor: &Descriptor, prepare: &Prepare) -> Option<Vec<u8>> {
    let writes = prepare.writes.iter().map(|(k, _)| k);
    if let Some(key) = writes.into_iter().find(|k| !descriptor.contains(k)) {
        return Some(key.clone());
    }
    for (target, _) in &prepare.locks {
        match target {
            LockTarget::Key(key) if !descriptor.contains(key) => return Some(key.clone()),
            LockTarget::Range(range) => {
                if !descriptor.contains(&range.start) {
                    return Some(range.start.clone());
                }
                let end_inside = match (&range.end, &descriptor.limit) {
                    (_, None) => true,
                    (None, Some(_)) => false,
                    (Some(end), Some(limit)) => end <= limit,
                };
                if !end_inside {
                    return Some(range.end.clone().unwrap_or_default());
                }
            }
            LockTarget::Key(_) => {}
        }
    }
    None
}

impl Replica {
    /// Checks a prepared record read from an image: well-formed, and its
    /// writes and locks inside `descriptor`.
    pub(crate) fn check_image_record(
        descriptor: &Descriptor,
        key: &[u8],
        value: &[u8],
    ) -> Result<Option<Prepare>> {
        let split = descriptor.split;
        if !key.starts_with(&table_prefix(split, PREPARED)) {
            return Ok(None);
        }
        let prepare = Prepare::from_record(value)?;
        if key != txn_key(split, PREPARED, prepare.txn).as_slice() {
            return Err(Error::Replica {
                split,
                message: format!(
                    "the snapshot image holds {} under the key {}",
                    prepare.txn,
                    hex(key)
                ),
            });
        }
        if let Some(key) = outside(descriptor, &prepare) {
            return Err(Error::OutOfRange {
                split,
                index: 0,
                key: hex(&key),
                range: descriptor.to_string(),
            });
        }
        Ok(Some(prepare))
    }

    /// The transactions prepared on this replica, by id.
    pub fn prepared(&self) -> impl Iterator<Item = &Prepare> {
        self.prepared.iter()
    }

    /// The prepared half of `txn`, if it is prepared here.
    pub fn prepared_txn(&self, txn: GlobalTxnId) -> Option<&Prepare> {
        self.prepared.get(txn)
    }

    /// A view of the lowest prepare timestamp that follows this replica as
    /// it applies entries: a strong read at or above it may have to wait
    /// for a prepared transaction's outcome.
    pub fn prepared_view(&self) -> PreparedView {
        self.prepared.view()
    }

    /// The recorded outcome of `txn` on this replica: decided here (the
    /// coordinator) or resolved here (a participant), if it is still kept
    /// (see [`OUTCOME_RETENTION`]).
    pub fn outcome(&self, txn: GlobalTxnId) -> Result<Option<Outcome>> {
        read_outcome(&self.router, self.descriptor().split, txn)
    }

    /// Stages the record of `txn`'s outcome.
    fn stage_outcome(&self, batch: &mut WriteBatch, txn: GlobalTxnId, outcome: Outcome) {
        let split = self.descriptor().split;
        let mut value = Vec::new();
        outcome.encode_into(&mut value);
        self.router
            .stage_meta(batch, txn_key(split, OUTCOME, txn), Some(value));
        self.router.stage_meta(
            batch,
            expiry_key(split, outcome.ts(), txn),
            Some(Vec::new()),
        );
    }

    /// Stages the deletion of every outcome kept past its retention once
    /// the closed timestamp is `closed`.
    pub(crate) fn stage_outcome_purge(&self, batch: &mut WriteBatch, closed: u64) -> Result<()> {
        let Some(cutoff) = closed.checked_sub(OUTCOME_RETENTION) else {
            return Ok(());
        };
        let split = self.descriptor().split;
        let prefix = table_prefix(split, EXPIRY);
        for item in self.router.meta_scan(&prefix) {
            let (key, _) = item?;
            let rest = &key[prefix.len()..];
            let parsed = std::str::from_utf8(rest).ok().and_then(|s| {
                let ts = u64::from_str_radix(s.get(..16)?, 16).ok()?;
                let txn = u128::from_str_radix(s.get(16..)?, 16).ok()?;
                Some((ts, GlobalTxnId(txn)))
            });
            let Some((ts, txn)) = parsed else {
                return Err(Error::Replica {
                    split,
                    message: format!("a malformed outcome expiry key {}", hex(&key)),
                });
            };
            if ts >= cutoff {
                break;
            }
            self.router.stage_meta(batch, key, None);
            self.router
                .stage_meta(batch, txn_key(split, OUTCOME, txn), None);
        }
        Ok(())
    }

    /// The refusal of entry `id` about `txn`.
    fn refuse_txn(&self, id: LogId, txn: GlobalTxnId, why: String) -> Error {
        Error::Transaction {
            split: self.descriptor().split,
            index: id.index,
            txn: txn.to_string(),
            why,
        }
    }

    /// Stages a `Prepare` entry: the record in the prepared table, nothing
    /// visible. A no-op for a transaction already prepared or already over.
    pub(crate) fn stage_prepare(
        &self,
        id: LogId,
        prepare: &Prepare,
        batch: &mut WriteBatch,
    ) -> Result<TableChange> {
        let txn = prepare.txn;
        if self.prepared.get(txn).is_some() || self.outcome(txn)?.is_some() {
            return Ok(TableChange::None);
        }
        let closed = self.closed_ts();
        if prepare.ts <= closed {
            return Err(self.refuse_txn(
                id,
                txn,
                format!(
                    "its prepare timestamp {} is not above the closed timestamp {closed}",
                    prepare.ts
                ),
            ));
        }
        if let Some(key) = outside(self.descriptor(), prepare) {
            return Err(Error::OutOfRange {
                split: self.descriptor().split,
                index: id.index,
                key: hex(&key),
                range: self.descriptor().to_string(),
            });
        }
        if !prepare.participants.contains(&self.descriptor().split) {
            return Err(self.refuse_txn(
                id,
                txn,
                "it does not name this split among the participants".into(),
            ));
        }
        let split = self.descriptor().split;
        self.router
            .stage_meta(batch, txn_key(split, PREPARED, txn), Some(prepare.record()));
        Ok(TableChange::Insert(Box::new(prepare.clone())))
    }

    /// Stages a `Decide` entry on the coordinator: with `Commit`, the
    /// coordinator's own writes at the commit timestamp; either way the
    /// outcome. Returns the commit timestamp written, if any; a no-op
    /// (`None`) for a transaction already decided.
    pub(crate) fn stage_decide(
        &self,
        id: LogId,
        txn: GlobalTxnId,
        outcome: Outcome,
        writes: &[Write],
        batch: &mut WriteBatch,
    ) -> Result<Option<u64>> {
        if self.outcome(txn)?.is_some() {
            return Ok(None);
        }
        let written = match outcome {
            Outcome::Commit { ts } => {
                self.stage_commit(id, ts, writes, batch)?;
                Some(ts)
            }
            Outcome::Abort { .. } => {
                if !writes.is_empty() {
                    return Err(self.refuse_txn(id, txn, "an abort carries writes".into()));
                }
                None
            }
        };
        self.stage_outcome(batch, txn, outcome);
        Ok(written)
    }

    /// Stages a `Resolve` entry on a participant: with `Commit`, the
    /// prepared writes (or `finished`, which replace them) at the commit
    /// timestamp; either way the prepared record goes and the outcome is
    /// kept. A no-op for a transaction already over and not prepared here;
    /// one over and still prepared here (its coordinator was merged into
    /// this split, bringing the decision, before this split was told) is
    /// finished by the outcome recorded; for one never prepared here, only
    /// the outcome is recorded (so that a prepare arriving later changes
    /// nothing).
    pub(crate) fn stage_resolve(
        &self,
        id: LogId,
        txn: GlobalTxnId,
        outcome: Outcome,
        finished: Option<&[Write]>,
        batch: &mut WriteBatch,
    ) -> Result<(TableChange, Option<u64>)> {
        let (outcome, finished) = match self.outcome(txn)? {
            // Over, and nothing of it prepared here: a repeat.
            Some(_) if self.prepared.get(txn).is_none() => return Ok((TableChange::None, None)),
            // Over, yet its half here is still prepared: its coordinator
            // was merged into this split before this split was told, and
            // the merge brought the decision into this split's outcome
            // table. The recorded outcome is the transaction's (the first
            // is final): the prepared half is finished by it, with the
            // finished writes only if they are for that outcome.
            Some(recorded) => (recorded, finished.filter(|_| recorded == outcome)),
            None => (outcome, finished),
        };
        let Some(prepare) = self.prepared.get(txn) else {
            if finished.is_some_and(|w| !w.is_empty()) {
                return Err(self.refuse_txn(
                    id,
                    txn,
                    "it resolves with writes a transaction not prepared here".into(),
                ));
            }
            self.stage_outcome(batch, txn, outcome);
            return Ok((TableChange::None, None));
        };
        let written = match outcome {
            Outcome::Commit { ts } => {
                if ts < prepare.ts {
                    return Err(self.refuse_txn(
                        id,
                        txn,
                        format!(
                            "it commits at {ts}, below its prepare timestamp {}",
                            prepare.ts
                        ),
                    ));
                }
                let stamped;
                let writes = match (finished, prepare.pending) {
                    (Some(w), _) => w,
                    (None, false) => prepare.writes.as_slice(),
                    (None, true) => {
                        // Values waiting for the commit timestamp: stamped
                        // here (templates, checked when prepared).
                        let mut out = Vec::with_capacity(prepare.writes.len());
                        for (key, value) in &prepare.writes {
                            let value = match value {
                                Some(t) => Some(
                                    super::stamp(t, ts).map_err(|e| self.refuse_txn(id, txn, e))?,
                                ),
                                None => None,
                            };
                            out.push((key.clone(), value));
                        }
                        stamped = out;
                        stamped.as_slice()
                    }
                };
                self.stage_commit(id, ts, writes, batch)?;
                Some(ts)
            }
            Outcome::Abort { .. } => {
                if finished.is_some() {
                    return Err(self.refuse_txn(id, txn, "an abort carries writes".into()));
                }
                None
            }
        };
        let split = self.descriptor().split;
        self.router
            .stage_meta(batch, txn_key(split, PREPARED, txn), None);
        self.stage_outcome(batch, txn, outcome);
        Ok((TableChange::Remove(txn), written))
    }

    /// Stages `writes` as one commit at `ts`, checked as a `Write` entry's
    /// commits are.
    fn stage_commit(
        &self,
        id: LogId,
        ts: u64,
        writes: &[Write],
        batch: &mut WriteBatch,
    ) -> Result<()> {
        let commit = [Commit {
            ts,
            writes: writes.to_vec(),
        }];
        self.check_writes(id, &commit)?;
        self.router.stage_writes(
            batch,
            ts,
            writes.iter().map(|(k, v)| (k.as_slice(), v.as_deref())),
        );
        Ok(())
    }

    /// Refuses a closed timestamp at or above a prepared transaction's
    /// prepare timestamp (design invariant 5).
    pub(crate) fn check_close(&self, id: LogId, closed: u64) -> Result<()> {
        if let Some(p) = self.prepared.iter().find(|p| p.ts <= closed) {
            return Err(self.refuse_txn(
                id,
                p.txn,
                format!(
                    "it closes timestamp {closed}, at or above the prepare timestamp {} of a transaction still prepared",
                    p.ts
                ),
            ));
        }
        Ok(())
    }
}
