//! The resolver: one transaction's mutations, applied to its overlay under
//! locks, then turned into the commit's writes.
//!
//! A [`Resolver`] lives for one [`apply`](Resolver::apply) (a DML statement)
//! or one commit. This file holds what every job of the resolver shares:
//! locking a key or a range once per transaction, loading a row's committed
//! state into the overlay the first time it is touched ([`Resolver::current`]),
//! scanning a range merged with the overlay, and [`Resolver::finish`], the
//! end of a commit's resolution: FOREIGN KEY checks, then a row write and
//! index writes for every changed row, within Spanner's size limit.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use rowtree_schema::{Catalog, Table};
use rowtree_txn::{LockMode, LockTarget, TxnHandle};
use rowtree_types::{Timestamp, Value};

use super::prepared::{prepare, PreparedWrite};
use super::{WrittenRow, MAX_COMMIT_BYTES};
use crate::database::Inner;
use crate::error::{Error, Result};
use crate::eval::CommitEval;
use crate::keys::{self, Object};
use crate::overlay::{RowChange, TxnWrites};
use crate::row::{materialize, stored_columns};
use crate::target::table_target;

/// What a resolved commit writes.
pub(crate) struct Resolved {
    pub writes: Vec<PreparedWrite>,
    pub mutation_count: usize,
}

/// Resolves one transaction's mutations.
pub(crate) struct Resolver<'a> {
    pub(super) inner: &'a Inner,
    pub(super) catalog: &'a Catalog,
    pub(super) txn: &'a Arc<TxnHandle>,
    pub(super) state: &'a mut TxnWrites,
    /// Row keys the mutations applied by this resolver wrote directly (not
    /// through cascades), in order: what a DML statement reports.
    pub(super) direct: Vec<Vec<u8>>,
    pub(super) now: Timestamp,
    /// Fail with [`Error::DeadlineExceeded`] instead of waiting for a lock
    /// (see [`Resolver::without_waiting`]).
    no_wait: bool,
}

impl<'a> Resolver<'a> {
    pub fn new(
        inner: &'a Inner,
        catalog: &'a Catalog,
        txn: &'a Arc<TxnHandle>,
        state: &'a mut TxnWrites,
        now: Timestamp,
    ) -> Self {
        Resolver {
            inner,
            catalog,
            txn,
            state,
            direct: Vec::new(),
            now,
            no_wait: false,
        }
    }

    /// A resolver that never waits for a lock: where it would, it fails with
    /// [`Error::DeadlineExceeded`] (having wounded any younger holder, as a
    /// waiting resolver would have). A commit resolved in an asynchronous
    /// task tries this first and, if it fails so, starts over on a thread
    /// that may wait.
    pub fn without_waiting(mut self) -> Self {
        self.no_wait = true;
        self
    }

    /// How long a lock may be waited for: not at all without waiting.
    fn lock_deadline(&self) -> Option<std::time::Instant> {
        self.no_wait.then(std::time::Instant::now)
    }

    /// The evaluation context of this commit's expressions.
    pub(super) fn eval_context(&self) -> CommitEval<'a> {
        CommitEval {
            sequences: &self.inner.sequences,
            catalog: self.catalog,
            now: self.now,
        }
    }

    pub(super) fn lock(&mut self, key: &[u8], mode: LockMode) -> Result<()> {
        if self.state.locked.contains(key) {
            return Ok(());
        }
        crate::elsewhere::lock(
            self.inner,
            self.txn,
            LockTarget::key(key.to_vec()),
            mode,
            self.lock_deadline(),
        )?;
        if mode == LockMode::Exclusive {
            self.state.locked.insert(key.to_vec());
        }
        Ok(())
    }

    pub(super) fn lock_range(
        &mut self,
        start: &[u8],
        end: Option<&[u8]>,
        mode: LockMode,
    ) -> Result<()> {
        crate::elsewhere::lock(
            self.inner,
            self.txn,
            LockTarget::range(start.to_vec(), end.map(|e| e.to_vec())),
            mode,
            self.lock_deadline(),
        )?;
        Ok(())
    }

    /// The current state of a table row, locking it in `mode` first.
    pub(super) fn current(
        &mut self,
        table: &Table,
        key_bytes: &[u8],
        key: &[Value],
        mode: LockMode,
    ) -> Result<Option<Vec<Value>>> {
        self.lock(key_bytes, mode)?;
        if let Some(change) = self.state.rows.get(key_bytes) {
            return Ok(change.new.clone());
        }
        let stored = self.inner.router.get(key_bytes, u64::MAX)?;
        let row = match stored {
            None => None,
            Some(bytes) => {
                let target = table_target(self.catalog, table);
                Some(materialize(&target, key.to_vec(), &bytes)?)
            }
        };
        self.state.rows.insert(
            key_bytes.to_vec(),
            RowChange {
                table: table.id,
                key: key.to_vec(),
                old: row.clone(),
                new: row.clone(),
            },
        );
        Ok(row)
    }

    pub(super) fn set(&mut self, key_bytes: Vec<u8>, new: Option<Vec<Value>>) {
        if let Some(c) = self.state.rows.get_mut(&key_bytes) {
            c.new = new;
        }
    }

    /// The rows the applied mutations wrote directly, before and after:
    /// `before` is the transaction's state before them.
    pub fn written(&self, before: &TxnWrites) -> Vec<WrittenRow> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for kb in &self.direct {
            if !seen.insert(kb) {
                continue;
            }
            let Some(change) = self.state.rows.get(kb) else {
                continue;
            };
            let old = match before.rows.get(kb) {
                Some(c) => c.new.clone(),
                None => change.old.clone(),
            };
            if old.is_none() && change.new.is_none() {
                continue;
            }
            let table = self
                .catalog
                .table_by_id(change.table)
                .map(|t| t.name.clone())
                .unwrap_or_default();
            out.push(WrittenRow {
                table,
                old,
                new: change.new.clone(),
            });
        }
        out
    }

    /// Checks foreign keys over everything written and derives the
    /// key/value writes of the commit, index entries included.
    pub fn finish(mut self) -> Result<Resolved> {
        let mutation_count = self.state.mutation_count;
        self.check_foreign_keys()?;
        let mut writes = Vec::new();
        let mut bytes = 0usize;
        let changes: Vec<RowChange> = self.state.rows.values().cloned().collect();
        for change in &changes {
            if change.old == change.new {
                continue;
            }
            let table = self
                .catalog
                .table_by_id(change.table)
                .ok_or_else(|| Error::internal("table vanished"))?;
            let levels = keys::table_levels(self.catalog, table);
            let value = change.new.as_ref().map(|row| stored_columns(table, row));
            bytes += value
                .as_ref()
                .map_or(0, |v| v.iter().map(|(_, v)| v.approx_size()).sum());
            writes.push(prepare(levels, change.key.clone(), value)?);
            self.index_writes(table, change, &mut writes)?;
        }
        if bytes > MAX_COMMIT_BYTES {
            return Err(Error::InvalidArgument {
                message: format!("The transaction is too large: {bytes} bytes, the limit is {MAX_COMMIT_BYTES} bytes"),
            });
        }
        Ok(Resolved {
            writes,
            mutation_count,
        })
    }

    pub(super) fn table(&self, name: &str) -> Result<&'a Table> {
        self.catalog
            .table(name)
            .ok_or_else(|| Error::not_found(format!("Table not found: {name}")))
    }

    /// The live table rows in `[start, end)`: committed rows merged with this
    /// transaction's changes, loaded into the overlay.
    pub(super) fn scan_merged(
        &mut self,
        start: &[u8],
        end: Option<&[u8]>,
    ) -> Result<Vec<keys::DecodedKey>> {
        let mut found: BTreeMap<Vec<u8>, (Object, Vec<Value>)> = BTreeMap::new();
        let stored: Vec<(Vec<u8>, Vec<u8>)> = self
            .inner
            .router
            .scan(start, end, u64::MAX, false)
            .collect::<std::result::Result<_, _>>()?;
        for (kb, value) in stored {
            let Some((obj, key)) = keys::decode_key(self.catalog, &kb)? else {
                continue;
            };
            let Object::Table(tid) = obj else { continue };
            if !self.state.rows.contains_key(&kb) {
                let table = self
                    .catalog
                    .table_by_id(tid)
                    .ok_or_else(|| Error::internal("table vanished"))?;
                let row = materialize(&table_target(self.catalog, table), key.clone(), &value)?;
                self.state.rows.insert(
                    kb.clone(),
                    RowChange {
                        table: tid,
                        key: key.clone(),
                        old: Some(row.clone()),
                        new: Some(row),
                    },
                );
            }
            found.insert(kb, (obj, key));
        }
        // This transaction's own rows in the range (inserted ones included).
        let upper = end.map(|e| e.to_vec());
        for (kb, change) in self.state.rows.range(start.to_vec()..) {
            if upper.as_ref().is_some_and(|e| kb >= e) {
                break;
            }
            if change.new.is_some() {
                found.insert(
                    kb.clone(),
                    (Object::Table(change.table), change.key.clone()),
                );
            } else {
                found.remove(kb);
            }
        }
        Ok(found.into_iter().map(|(k, (o, v))| (k, o, v)).collect())
    }
}
