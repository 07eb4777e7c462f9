//! Commit-time resolution: buffered mutations become row and index writes.
//!
//! Mutations are applied in order to an overlay of the rows they touch, so a
//! later mutation sees an earlier one (a child inserted after its parent in
//! the same transaction finds the parent). Every row is locked exclusively
//! before it is read, and row trees are locked as ranges before they are
//! scanned for cascades, so the state seen here is the latest committed one
//! and stays so until the commit is durable.
//!
//! After all mutations, the resolver derives what else the commit must do:
//! secondary index entries (deleted, added, or rewritten when a STORING
//! column changes), UNIQUE checks, FOREIGN KEY checks. The result is a list
//! of key/value writes that the commit pipeline timestamps and makes durable.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use rowtree_encoding::{encode_row, prefix_end};
use rowtree_expr::EvalContext;
use rowtree_parser::ast::{InterleaveKind, Length, OnDelete};
use rowtree_schema::{Catalog, Column, Index, Table, TableId};
use rowtree_txn::{LockMode, LockTarget, TxnHandle};
use rowtree_types::{Timestamp, Value};

use crate::database::Inner;
use crate::error::{Error, Result};
use crate::keys::{self, Level, Object};
use crate::mutation::{Mutation, WriteKind};
use crate::read::{materialize, Span, Target};

/// The value that stands for "this transaction's commit timestamp" in a
/// column with `allow_commit_timestamp = true` (Spanner's
/// `spanner.commit_timestamp()` / `PENDING_COMMIT_TIMESTAMP()`). It is
/// replaced by the commit timestamp when the commit is made durable.
pub const PENDING_COMMIT_TIMESTAMP: Timestamp = Timestamp::PENDING_COMMIT;

/// Spanner's limit on mutations per commit.
pub const MAX_MUTATIONS: usize = 80_000;
/// Spanner's limit on the size of one commit.
pub const MAX_COMMIT_BYTES: usize = 100 << 20;
/// Spanner's limit on one cell.
pub const MAX_CELL_BYTES: usize = 10 << 20;

/// The state of one table row during resolution.
#[derive(Debug, Clone)]
pub(crate) struct RowChange {
    pub table: TableId,
    pub key: Vec<Value>,
    /// The row as committed before this transaction (loaded once).
    pub old: Option<Vec<Value>>,
    /// The row as this transaction leaves it.
    pub new: Option<Vec<Value>>,
}

/// What a read-write transaction has written so far (its DML, applied
/// statement by statement) and the keys it holds exclusively. Buffered
/// mutations join it at commit.
#[derive(Debug, Clone, Default)]
pub(crate) struct TxnWrites {
    /// Every row the transaction touched, by row key.
    pub rows: BTreeMap<Vec<u8>, RowChange>,
    /// Keys already locked exclusively.
    pub locked: HashSet<Vec<u8>>,
    /// Mutations applied so far, for the 80,000 limit.
    pub mutation_count: usize,
}

/// A row a DML statement wrote: its state before and after the statement.
#[derive(Debug, Clone, PartialEq)]
pub struct WrittenRow {
    pub table: String,
    pub old: Option<Vec<Value>>,
    pub new: Option<Vec<Value>>,
}

/// One key/value write, ready or waiting for the commit timestamp.
#[derive(Debug, Clone)]
pub(crate) enum PreparedWrite {
    Ready(Vec<u8>, Option<Vec<u8>>),
    /// Holds [`PENDING_COMMIT_TIMESTAMP`] in its key or value.
    Pending {
        levels: Vec<Level>,
        key: Vec<Value>,
        value: Option<Vec<(u32, Value)>>,
    },
}

impl PreparedWrite {
    /// The bytes to store once the commit timestamp is known.
    pub fn finish(self, ts: u64) -> Result<(Vec<u8>, Option<Vec<u8>>)> {
        match self {
            PreparedWrite::Ready(k, v) => Ok((k, v)),
            PreparedWrite::Pending { levels, key, value } => {
                let stamp = Timestamp::from_nanos(ts as i128)
                    .ok_or_else(|| Error::internal("commit timestamp out of range"))?;
                let fix = |v: Value| match v {
                    Value::Timestamp(t) if t == PENDING_COMMIT_TIMESTAMP => Value::Timestamp(stamp),
                    other => other,
                };
                let key: Vec<Value> = key.into_iter().map(fix).collect();
                let k = keys::encode_full(&levels, &key)?;
                let v = value
                    .map(|cols| {
                        let cols: Vec<(u32, Value)> =
                            cols.into_iter().map(|(id, v)| (id, fix(v))).collect();
                        encode_row(cols.iter().map(|(id, v)| (*id, v)))
                    })
                    .transpose()?;
                Ok((k, v))
            }
        }
    }

    /// The key and value for split accounting (a write whose key waits for
    /// the commit timestamp is charged where its prefix routes).
    pub fn for_accounting(&self) -> (&[u8], Option<&[u8]>) {
        match self {
            PreparedWrite::Ready(k, v) => (k, v.as_deref()),
            PreparedWrite::Pending { levels, .. } => (
                levels.first().map_or(&[][..], |l| l.prefix.as_slice()),
                None,
            ),
        }
    }
}

/// What a resolved commit writes.
pub(crate) struct Resolved {
    pub writes: Vec<PreparedWrite>,
    pub mutation_count: usize,
}

fn is_pending(v: &Value) -> bool {
    matches!(v, Value::Timestamp(t) if *t == PENDING_COMMIT_TIMESTAMP)
}

/// Evaluation context of DEFAULT and generated-column expressions at commit.
struct CommitEval<'a> {
    inner: &'a Inner,
    catalog: &'a Catalog,
    now: Timestamp,
}

impl EvalContext for CommitEval<'_> {
    fn now(&self) -> Timestamp {
        self.now
    }
    fn next_sequence_value(
        &mut self,
        sequence: &str,
    ) -> std::result::Result<i64, rowtree_expr::Error> {
        self.inner
            .sequences
            .next_value(self.catalog, sequence)
            .map_err(|e| rowtree_expr::Error::invalid(e.to_string()))
    }
    fn sequence_state(
        &mut self,
        sequence: &str,
    ) -> std::result::Result<Option<i64>, rowtree_expr::Error> {
        self.inner
            .sequences
            .state(self.catalog, sequence)
            .map_err(|e| rowtree_expr::Error::invalid(e.to_string()))
    }
    fn pending_commit_timestamp(&mut self) -> std::result::Result<Value, rowtree_expr::Error> {
        Ok(Value::Timestamp(PENDING_COMMIT_TIMESTAMP))
    }
}

/// Evaluation context of DDL backfills: sequences work, commit timestamps do not.
pub(crate) struct DdlEval<'a> {
    pub db: &'a crate::Database,
    pub catalog: &'a Catalog,
    pub now: Timestamp,
}

impl EvalContext for DdlEval<'_> {
    fn now(&self) -> Timestamp {
        self.now
    }
    fn next_sequence_value(
        &mut self,
        sequence: &str,
    ) -> std::result::Result<i64, rowtree_expr::Error> {
        self.db
            .inner
            .sequences
            .next_value(self.catalog, sequence)
            .map_err(|e| rowtree_expr::Error::invalid(e.to_string()))
    }
    fn sequence_state(
        &mut self,
        sequence: &str,
    ) -> std::result::Result<Option<i64>, rowtree_expr::Error> {
        self.db
            .inner
            .sequences
            .state(self.catalog, sequence)
            .map_err(|e| rowtree_expr::Error::invalid(e.to_string()))
    }
    fn pending_commit_timestamp(&mut self) -> std::result::Result<Value, rowtree_expr::Error> {
        Err(rowtree_expr::Error::invalid(
            "PENDING_COMMIT_TIMESTAMP() cannot fill existing rows",
        ))
    }
}

/// Resolves one transaction's mutations.
pub(crate) struct Resolver<'a> {
    inner: &'a Inner,
    catalog: &'a Catalog,
    txn: &'a Arc<TxnHandle>,
    state: &'a mut TxnWrites,
    /// Row keys the mutations applied by this resolver wrote directly (not
    /// through cascades), in order: what a DML statement reports.
    direct: Vec<Vec<u8>>,
    now: Timestamp,
}

fn key_string(key: &[Value]) -> String {
    let parts: Vec<String> = key.iter().map(|v| v.to_string()).collect();
    format!("[{}]", parts.join(","))
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
        }
    }

    fn lock(&mut self, key: &[u8], mode: LockMode) -> Result<()> {
        if self.state.locked.contains(key) {
            return Ok(());
        }
        self.inner
            .locks
            .lock(self.txn, LockTarget::key(key.to_vec()), mode, None)?;
        if mode == LockMode::Exclusive {
            self.state.locked.insert(key.to_vec());
        }
        Ok(())
    }

    fn lock_range(&mut self, start: &[u8], end: Option<&[u8]>, mode: LockMode) -> Result<()> {
        self.inner.locks.lock(
            self.txn,
            LockTarget::range(start.to_vec(), end.map(|e| e.to_vec())),
            mode,
            None,
        )?;
        Ok(())
    }

    /// The current state of a table row, locking it in `mode` first.
    fn current(
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

    fn set(&mut self, key_bytes: Vec<u8>, new: Option<Vec<Value>>) {
        if let Some(c) = self.state.rows.get_mut(&key_bytes) {
            c.new = new;
        }
    }

    /// Applies mutations in order to the transaction's writes.
    pub fn apply(&mut self, mutations: &[Mutation]) -> Result<()> {
        let mutation_count: usize =
            self.state.mutation_count + mutations.iter().map(Mutation::count).sum::<usize>();
        self.state.mutation_count = mutation_count;
        if mutation_count > MAX_MUTATIONS {
            return Err(Error::InvalidArgument {
                message: format!(
                    "The transaction contains too many mutations: {mutation_count}, the limit is {MAX_MUTATIONS}"
                ),
            });
        }
        for m in mutations {
            match m {
                Mutation::Write {
                    kind,
                    table,
                    columns,
                    rows,
                } => {
                    let t = self.table(table)?;
                    let positions = self.column_positions(t, *kind, columns)?;
                    for values in rows {
                        self.write_row(t, *kind, &positions, values)?;
                    }
                }
                Mutation::Delete { table, key_set } => {
                    let t = self.table(table)?;
                    let target = table_target(self.catalog, t);
                    for span in target.ranges(key_set)? {
                        match span {
                            Span::Point(kb) => {
                                let Some((_, key)) = keys::decode_key(self.catalog, &kb)? else {
                                    continue;
                                };
                                if self.current(t, &kb, &key, LockMode::Exclusive)?.is_some() {
                                    self.direct.push(kb.clone());
                                    self.delete_row(t, kb, key)?;
                                }
                            }
                            Span::Range((start, end)) => {
                                self.lock_range(&start, end.as_deref(), LockMode::Exclusive)?;
                                for (kb, obj, key) in self.scan_merged(&start, end.as_deref())? {
                                    if obj == Object::Table(t.id) {
                                        self.direct.push(kb.clone());
                                        self.delete_row(t, kb, key)?;
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        Ok(())
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

    fn table(&self, name: &str) -> Result<&'a Table> {
        self.catalog
            .table(name)
            .ok_or_else(|| Error::not_found(format!("Table not found: {name}")))
    }

    fn column_positions(
        &self,
        table: &Table,
        kind: WriteKind,
        columns: &[String],
    ) -> Result<Vec<usize>> {
        let mut seen = HashSet::new();
        let mut out = Vec::with_capacity(columns.len());
        for name in columns {
            let (pos, col) = table.column(name).ok_or_else(|| {
                Error::not_found(format!("Column not found in table {}: {name}", table.name))
            })?;
            if !seen.insert(pos) {
                return Err(Error::invalid(format!(
                    "Duplicate column in mutation: {name}"
                )));
            }
            if col.generated.is_some() {
                return Err(Error::invalid(format!(
                    "Cannot write into generated column `{}.{}`.",
                    table.name, col.name
                )));
            }
            out.push(pos);
        }
        for k in &table.primary_key {
            let col = &table.columns[k.column];
            // A key column may be left out only when it is computed: generated,
            // or filled by its DEFAULT when the row is inserted.
            let defaulted =
                col.default.is_some() && matches!(kind, WriteKind::Insert | WriteKind::Replace);
            if col.generated.is_none() && !defaulted && !out.contains(&k.column) {
                return Err(Error::invalid(format!(
                    "Mutation for table {} is missing key column {}",
                    table.name, col.name
                )));
            }
        }
        Ok(out)
    }

    fn eval_defaults_and_generated(
        &self,
        table: &Table,
        row: &mut [Value],
        provided: &[usize],
        fill_defaults: bool,
    ) -> Result<()> {
        let mut ctx = CommitEval {
            inner: self.inner,
            catalog: self.catalog,
            now: self.now,
        };
        if fill_defaults {
            for (pos, col) in table.columns.iter().enumerate() {
                if provided.contains(&pos) || col.generated.is_some() {
                    continue;
                }
                if let Some(d) = &col.default {
                    let v = d
                        .expr
                        .eval(row, &mut ctx)
                        .map_err(|e| expr_error(table, col, e))?;
                    row[pos] = rowtree_expr::coerce_value(v, &col.ty)
                        .map_err(|e| expr_error(table, col, e))?;
                }
            }
        }
        eval_generated(table, row, &mut ctx)
    }

    fn write_row(
        &mut self,
        table: &Table,
        kind: WriteKind,
        positions: &[usize],
        values: &[Value],
    ) -> Result<()> {
        if values.len() != positions.len() {
            return Err(Error::invalid(format!(
                "Mutation for table {} has {} columns but {} values",
                table.name,
                positions.len(),
                values.len()
            )));
        }
        let mut candidate = vec![Value::Null; table.columns.len()];
        for (&pos, v) in positions.iter().zip(values) {
            let col = &table.columns[pos];
            candidate[pos] = rowtree_expr::coerce_value(v.clone(), &col.ty).map_err(|e| {
                Error::invalid(format!(
                    "Invalid value for column {} in table {}: {e}",
                    col.name, table.name
                ))
            })?;
        }
        let inserting = matches!(
            kind,
            WriteKind::Insert | WriteKind::Replace | WriteKind::InsertOrIgnore
        );
        // Generated key columns are computed from the provided values.
        self.eval_defaults_and_generated(
            table,
            &mut candidate,
            positions,
            inserting || kind == WriteKind::InsertOrUpdate,
        )?;
        let key: Vec<Value> = table
            .primary_key
            .iter()
            .map(|k| candidate[k.column].clone())
            .collect();
        let levels = keys::table_levels(self.catalog, table);
        let kb = keys::encode_full(&levels, &key)?;
        let existing = self.current(table, &kb, &key, LockMode::Exclusive)?;
        let new_row = match (kind, existing) {
            (WriteKind::Insert, Some(_)) => {
                return Err(Error::AlreadyExists {
                    message: format!(
                        "Row {} in table {} already exists",
                        key_string(&key),
                        table.name
                    ),
                })
            }
            (WriteKind::Update, None) => {
                return Err(Error::not_found(format!(
                    "Row {} in table {} is missing. Update cannot be applied.",
                    key_string(&key),
                    table.name
                )))
            }
            // INSERT OR IGNORE leaves an existing row as it is.
            (WriteKind::InsertOrIgnore, Some(_)) => return Ok(()),
            (WriteKind::Insert, None)
            | (WriteKind::InsertOrUpdate, None)
            | (WriteKind::InsertOrIgnore, None) => candidate,
            (WriteKind::Replace, existing) => {
                if existing.is_some() {
                    self.delete_row(table, kb.clone(), key.clone())?;
                }
                candidate
            }
            (WriteKind::Update, Some(mut row)) | (WriteKind::InsertOrUpdate, Some(mut row)) => {
                for &pos in positions {
                    row[pos] = candidate[pos].clone();
                }
                self.eval_defaults_and_generated(table, &mut row, positions, false)?;
                row
            }
        };
        self.validate_row(table, &key, &new_row)?;
        if let Some(p) = table
            .parent
            .as_ref()
            .filter(|p| matches!(p.kind, InterleaveKind::InParent(_)))
        {
            let parent = self
                .catalog
                .table_by_id(p.table)
                .ok_or_else(|| Error::internal("parent vanished"))?;
            let pkey = &key[..parent.primary_key.len()];
            let plevels = keys::table_levels(self.catalog, parent);
            let pkb = keys::encode_full(&plevels, pkey)?;
            if self
                .current(parent, &pkb, pkey, LockMode::Shared)?
                .is_none()
            {
                return Err(Error::not_found(format!(
                    "Insert failed because key was not found in parent table:  Parent Table: {}  Child Table: {}  Key: {{{}}}",
                    parent.name,
                    table.name,
                    pkey.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", ")
                )));
            }
        }
        self.direct.push(kb.clone());
        self.set(kb, Some(new_row));
        Ok(())
    }

    fn validate_row(&self, table: &Table, key: &[Value], row: &[Value]) -> Result<()> {
        for (col, v) in table.columns.iter().zip(row) {
            if v.is_null() {
                if col.not_null {
                    return Err(Error::FailedPrecondition {
                        message: format!("{} must not be NULL in table {}.", col.name, table.name),
                    });
                }
                continue;
            }
            check_length(table, col, v)?;
            if let Value::Timestamp(t) = v {
                if *t == PENDING_COMMIT_TIMESTAMP && !col.allow_commit_timestamp {
                    return Err(Error::FailedPrecondition {
                        message: format!(
                            "Cannot write commit timestamp because the allow_commit_timestamp column option is not set to true for column {}.{}, or for all corresponding shared key columns in this table's interleaved table hierarchy.",
                            table.name, col.name
                        ),
                    });
                }
                if col.allow_commit_timestamp
                    && !is_pending(v)
                    && t.nanos() > self.inner.options.clock.now_nanos() as i128
                {
                    return Err(Error::FailedPrecondition {
                        message: format!(
                            "Cannot write timestamps in the future {} to a commit timestamp column {}.{}",
                            t.nanos(), table.name, col.name
                        ),
                    });
                }
            }
        }
        let mut ctx = CommitEval {
            inner: self.inner,
            catalog: self.catalog,
            now: self.now,
        };
        for check in &table.checks {
            match check.expr.expr.eval(row, &mut ctx) {
                Ok(Value::Bool(false)) => {
                    return Err(Error::OutOfRange {
                        message: format!(
                            "Check constraint `{}`.`{}` is violated for key {}",
                            table.name,
                            check.name,
                            key_string(key)
                        ),
                    })
                }
                Ok(_) => {}
                Err(e) => {
                    return Err(Error::OutOfRange {
                        message: e.to_string(),
                    })
                }
            }
        }
        Ok(())
    }

    /// Deletes a row and, as its children's ON DELETE says, its row tree.
    fn delete_row(&mut self, table: &Table, kb: Vec<u8>, key: Vec<Value>) -> Result<()> {
        // Make sure the row's old state is loaded and locked.
        self.current(table, &kb, &key, LockMode::Exclusive)?;
        self.set(kb.clone(), None);
        let children = self.catalog.children(table.id);
        if children.is_empty() {
            return Ok(());
        }
        let prefix = &kb[..kb.len() - 1];
        let end = prefix_end(prefix);
        self.lock_range(prefix, end.as_deref(), LockMode::Exclusive)?;
        let tree = self.scan_merged(prefix, end.as_deref())?;
        for child in children {
            let Some(parent) = &child.parent else {
                continue;
            };
            let InterleaveKind::InParent(on_delete) = parent.kind else {
                continue;
            };
            for (ckb, _, ckey) in tree
                .iter()
                .filter(|(_, o, _)| *o == Object::Table(child.id))
            {
                // A grandchild row may already be gone through an earlier cascade.
                if self.state.rows.get(ckb).is_some_and(|c| c.new.is_none()) {
                    continue;
                }
                match on_delete {
                    OnDelete::Cascade => self.delete_row(child, ckb.clone(), ckey.clone())?,
                    OnDelete::NoAction => {
                        return Err(Error::FailedPrecondition {
                            message: format!(
                                "Integrity constraint violation during DELETE/REPLACE. Found child row {} in table {}: delete of row {} in table {} would leave it without its parent (ON DELETE NO ACTION).",
                                key_string(ckey), child.name, key_string(&key), table.name
                            ),
                        })
                    }
                }
            }
        }
        Ok(())
    }

    /// The live table rows in `[start, end)`: committed rows merged with this
    /// transaction's changes, loaded into the overlay.
    fn scan_merged(&mut self, start: &[u8], end: Option<&[u8]>) -> Result<Vec<keys::DecodedKey>> {
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

    /// Index entries to delete and add for one changed row.
    fn index_writes(
        &mut self,
        table: &Table,
        change: &RowChange,
        writes: &mut Vec<PreparedWrite>,
    ) -> Result<()> {
        for index in self.catalog.indexes_of(table.id) {
            let old = change
                .old
                .as_ref()
                .and_then(|r| index_entry(self.catalog, table, index, r).transpose())
                .transpose()?;
            let new = change
                .new
                .as_ref()
                .and_then(|r| index_entry(self.catalog, table, index, r).transpose())
                .transpose()?;
            if old == new {
                continue;
            }
            if let Some(o) = &old {
                if new.as_ref().is_none_or(|n| n.key != o.key) {
                    let kb = keys::encode_full(&o.levels, &o.key)?;
                    self.lock(&kb, LockMode::Exclusive)?;
                    writes.push(prepare(o.levels.clone(), o.key.clone(), None)?);
                }
            }
            if let Some(n) = new {
                if index.unique {
                    self.check_unique(table, index, &n, change)?;
                }
                if !n.key.iter().any(is_pending) {
                    let kb = keys::encode_full(&n.levels, &n.key)?;
                    self.lock(&kb, LockMode::Exclusive)?;
                }
                writes.push(prepare(n.levels, n.key, Some(n.stored))?);
            }
        }
        Ok(())
    }

    fn check_unique(
        &mut self,
        table: &Table,
        index: &Index,
        entry: &IndexEntry,
        change: &RowChange,
    ) -> Result<()> {
        let declared = entry.declared;
        let prefix = keys::encode_prefix(&entry.levels, &entry.key[..declared])?;
        let end = prefix_end(&prefix);
        self.lock_range(&prefix, end.as_deref(), LockMode::Shared)?;
        let own_key = keys::encode_full(&entry.levels, &entry.key)?;
        // Committed entries with the same indexed values, other than this row's.
        for item in self
            .inner
            .router
            .scan(&prefix, end.as_deref(), u64::MAX, false)
        {
            let (kb, _) = item?;
            if kb == own_key {
                continue;
            }
            // The row behind that entry may be changed by this transaction.
            let Some((_, ikey)) = keys::decode_key(self.catalog, &kb)? else {
                continue;
            };
            let table_key = index_entry_table_key(table, index, &ikey);
            let tkb = keys::encode_full(&keys::table_levels(self.catalog, table), &table_key)?;
            let still = match self.state.rows.get(&tkb) {
                Some(c) => c.new.as_ref().is_some_and(|r| {
                    index_entry(self.catalog, table, index, r)
                        .ok()
                        .flatten()
                        .is_some_and(|e| e.key[..declared] == entry.key[..declared])
                }),
                None => true,
            };
            if still {
                return Err(unique_violation(index, &entry.key[..declared]));
            }
        }
        // Other rows of this transaction with the same indexed values.
        for other in self.state.rows.values() {
            if other.table != table.id || other.key == change.key {
                continue;
            }
            if let Some(r) = &other.new {
                if let Some(e) = index_entry(self.catalog, table, index, r)? {
                    if e.key[..declared] == entry.key[..declared] {
                        return Err(unique_violation(index, &entry.key[..declared]));
                    }
                }
            }
        }
        Ok(())
    }

    /// FOREIGN KEY checks over everything the transaction changed, with
    /// ON DELETE CASCADE foreign keys deleting referencing rows.
    fn check_foreign_keys(&mut self) -> Result<()> {
        let catalog = self.catalog;
        let has_fk = catalog
            .tables()
            .any(|t| t.foreign_keys.iter().any(|fk| fk.enforced));
        if !has_fk {
            return Ok(());
        }
        // Referenced rows removed or changed: look for rows still pointing at them.
        let mut round = 0;
        loop {
            round += 1;
            if round > 64 {
                return Err(Error::internal("foreign key cascades do not converge"));
            }
            let changes: Vec<RowChange> = self.state.rows.values().cloned().collect();
            let mut cascaded = false;
            for referencing in catalog.tables() {
                for fk in referencing.foreign_keys.iter().filter(|fk| fk.enforced) {
                    for c in changes.iter().filter(|c| c.table == fk.referenced_table) {
                        let Some(old) = &c.old else { continue };
                        let old_vals = values_at(old, &fk.referenced_columns);
                        if c.new
                            .as_ref()
                            .is_some_and(|new| values_at(new, &fk.referenced_columns) == old_vals)
                        {
                            continue;
                        }
                        // Is another row still providing the old values?
                        let referenced = catalog
                            .table_by_id(fk.referenced_table)
                            .ok_or_else(|| Error::internal("table vanished"))?;
                        if self
                            .find_row(referenced, &fk.referenced_columns, &old_vals)?
                            .is_some()
                        {
                            continue;
                        }
                        let dependents = self.find_rows(referencing, &fk.columns, &old_vals)?;
                        for (kb, key) in dependents {
                            if fk.on_delete == OnDelete::Cascade && c.new.is_none() {
                                self.delete_row(referencing, kb, key)?;
                                cascaded = true;
                            } else {
                                return Err(fk_violation(fk, referencing, referenced));
                            }
                        }
                    }
                }
            }
            if !cascaded {
                break;
            }
        }
        // New or changed referencing rows: their referenced row must exist.
        let changes: Vec<RowChange> = self.state.rows.values().cloned().collect();
        for c in &changes {
            let Some(new) = &c.new else { continue };
            let table = catalog
                .table_by_id(c.table)
                .ok_or_else(|| Error::internal("table vanished"))?;
            for fk in table.foreign_keys.iter().filter(|fk| fk.enforced) {
                let vals = values_at(new, &fk.columns);
                if vals.iter().any(Value::is_null) {
                    continue;
                }
                if c.old
                    .as_ref()
                    .is_some_and(|old| values_at(old, &fk.columns) == vals)
                {
                    continue;
                }
                let referenced = catalog
                    .table_by_id(fk.referenced_table)
                    .ok_or_else(|| Error::internal("table vanished"))?;
                if self
                    .find_row(referenced, &fk.referenced_columns, &vals)?
                    .is_none()
                {
                    return Err(fk_violation(fk, table, referenced));
                }
            }
        }
        Ok(())
    }

    /// One live row of `table` whose `columns` equal `values`.
    fn find_row(
        &mut self,
        table: &Table,
        columns: &[usize],
        values: &[Value],
    ) -> Result<Option<Vec<u8>>> {
        let pk: Vec<usize> = table.primary_key.iter().map(|k| k.column).collect();
        if columns == pk.as_slice() {
            let levels = keys::table_levels(self.catalog, table);
            let kb = keys::encode_full(&levels, values)?;
            return Ok(self
                .current(table, &kb, values, LockMode::Shared)?
                .map(|_| kb));
        }
        Ok(self
            .find_rows(table, columns, values)?
            .into_iter()
            .next()
            .map(|(k, _)| k))
    }

    /// Every live row of `table` whose `columns` equal `values` (a scan of
    /// the table; foreign keys on non-key columns pay this cost).
    fn find_rows(
        &mut self,
        table: &Table,
        columns: &[usize],
        values: &[Value],
    ) -> Result<Vec<(Vec<u8>, Vec<Value>)>> {
        let root = self.catalog.root_of(table.id);
        let (start, end) = keys::object_range(root.id);
        self.lock_range(&start, end.as_deref(), LockMode::Shared)?;
        let mut out = Vec::new();
        for (kb, obj, key) in self.scan_merged(&start, end.as_deref())? {
            if obj != Object::Table(table.id) {
                continue;
            }
            let Some(row) = self.state.rows.get(&kb).and_then(|c| c.new.clone()) else {
                continue;
            };
            if columns.iter().zip(values).all(|(&p, v)| &row[p] == v) {
                out.push((kb, key));
            }
        }
        Ok(out)
    }
}

/// Computes every generated column of `row` (in dependency order) with the
/// same expressions and coercions as a commit. Shared by commits and by
/// [`crate::keys::RowKeys`] (the simulator's key encoder).
pub(crate) fn eval_generated<C: EvalContext>(
    table: &Table,
    row: &mut [Value],
    ctx: &mut C,
) -> Result<()> {
    for &pos in table.generated_order() {
        let col = &table.columns[pos];
        if let Some(g) = &col.generated {
            let v = g
                .expr
                .eval(row, ctx)
                .map_err(|e| expr_error(table, col, e))?;
            row[pos] =
                rowtree_expr::coerce_value(v, &col.ty).map_err(|e| expr_error(table, col, e))?;
        }
    }
    Ok(())
}

/// One index entry: its key values (declared columns first, then the rest
/// of the table key) and its STORING values.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct IndexEntry {
    pub levels: Vec<Level>,
    pub key: Vec<Value>,
    /// How many leading key values are the index's declared columns.
    pub declared: usize,
    pub stored: Vec<(u32, Value)>,
}

/// The entry `row` has in `index`, or `None` when a NULL_FILTERED index
/// skips it.
pub(crate) fn index_entry(
    catalog: &Catalog,
    table: &Table,
    index: &Index,
    row: &[Value],
) -> Result<Option<IndexEntry>> {
    if index.null_filtered && index.keys.iter().any(|k| row[k.column].is_null()) {
        return Ok(None);
    }
    let cols = keys::index_key_columns(table, index);
    let key: Vec<Value> = cols.iter().map(|(p, _, _)| row[*p].clone()).collect();
    let stored = index
        .storing
        .iter()
        .filter(|&&p| !row[p].is_null())
        .map(|&p| (table.columns[p].id, row[p].clone()))
        .collect();
    Ok(Some(IndexEntry {
        levels: keys::index_levels(catalog, table, index),
        key,
        declared: index.keys.len(),
        stored,
    }))
}

/// The table key of the row behind an index entry's key values.
fn index_entry_table_key(table: &Table, index: &Index, entry_key: &[Value]) -> Vec<Value> {
    let cols = keys::index_key_columns(table, index);
    table
        .primary_key
        .iter()
        .map(|k| {
            cols.iter()
                .position(|(p, _, _)| *p == k.column)
                .map(|i| entry_key[i].clone())
                .unwrap_or(Value::Null)
        })
        .collect()
}

/// The values of `row` at `positions`, in that order.
fn values_at(row: &[Value], positions: &[usize]) -> Vec<Value> {
    positions.iter().map(|&p| row[p].clone()).collect()
}

fn fk_violation(fk: &rowtree_schema::ForeignKey, table: &Table, referenced: &Table) -> Error {
    let columns: Vec<&str> = fk
        .referenced_columns
        .iter()
        .map(|&p| referenced.columns[p].name.as_str())
        .collect();
    Error::FailedPrecondition {
        message: format!(
            "Foreign key constraint `{}` is violated on table `{}`. Cannot find referenced values in {}({}).",
            fk.name,
            table.name,
            referenced.name,
            columns.join(", ")
        ),
    }
}

fn unique_violation(index: &Index, values: &[Value]) -> Error {
    Error::AlreadyExists {
        message: format!(
            "Unique index violation on index {} at index key {}. It conflicts with another row.",
            index.name,
            key_string(values)
        ),
    }
}

/// The non-key, non-NULL columns of a row as the row codec stores them.
pub(crate) fn stored_columns(table: &Table, row: &[Value]) -> Vec<(u32, Value)> {
    table
        .columns
        .iter()
        .enumerate()
        .filter(|(pos, _)| !table.primary_key.iter().any(|k| k.column == *pos))
        .filter(|(pos, _)| !row[*pos].is_null())
        .map(|(pos, c)| (c.id, row[pos].clone()))
        .collect()
}

fn prepare(
    levels: Vec<Level>,
    key: Vec<Value>,
    value: Option<Vec<(u32, Value)>>,
) -> Result<PreparedWrite> {
    let pending = key.iter().any(is_pending)
        || value
            .as_ref()
            .is_some_and(|v| v.iter().any(|(_, v)| is_pending(v)));
    if pending {
        return Ok(PreparedWrite::Pending { levels, key, value });
    }
    let k = keys::encode_full(&levels, &key)?;
    let v = value
        .map(|cols| encode_row(cols.iter().map(|(id, v)| (*id, v))))
        .transpose()?;
    Ok(PreparedWrite::Ready(k, v))
}

pub(crate) fn table_target<'c>(catalog: &'c Catalog, table: &'c Table) -> Target<'c> {
    Target {
        table,
        index: None,
        levels: keys::table_levels(catalog, table),
        object: Object::Table(table.id),
        key_columns: table.primary_key.iter().map(|k| k.column).collect(),
    }
}

fn expr_error(table: &Table, col: &Column, e: rowtree_expr::Error) -> Error {
    Error::OutOfRange {
        message: format!("Error evaluating column {}.{}: {e}", table.name, col.name),
    }
}

fn check_length(table: &Table, col: &Column, v: &Value) -> Result<()> {
    use rowtree_parser::ast::DataType;
    // STRING(MAX) holds 2,621,440 characters (Spanner's limit); BYTES(MAX)
    // is bounded by the 10 MiB cell limit below.
    let limit = |dt: &DataType| match dt {
        DataType::String(Length::Limit(n)) | DataType::Bytes(Length::Limit(n)) => Some(*n as usize),
        DataType::String(Length::Max) => Some(2_621_440),
        _ => None,
    };
    let too_long = |dt: &DataType, v: &Value| -> Option<(usize, usize)> {
        let n = limit(dt)?;
        let len = match v {
            Value::String(s) => s.chars().count(),
            Value::Bytes(b) => b.len(),
            _ => return None,
        };
        (len > n).then_some((len, n))
    };
    let elem_type = match &col.data_type {
        DataType::Array(inner) => Some(inner.as_ref()),
        _ => None,
    };
    let bad = match (v, elem_type) {
        (Value::Array(items), Some(dt)) => items.iter().find_map(|i| too_long(dt, i)),
        (v, _) => too_long(&col.data_type, v),
    };
    if let Some((len, n)) = bad {
        return Err(Error::FailedPrecondition {
            message: format!(
                "New value exceeds the maximum size limit for this column: {}.{}, size: {len}, limit: {n}.",
                table.name, col.name
            ),
        });
    }
    if v.approx_size() > MAX_CELL_BYTES {
        return Err(Error::InvalidArgument {
            message: format!(
                "Value of column {}.{} exceeds the 10 MiB cell limit",
                table.name, col.name
            ),
        });
    }
    Ok(())
}
