//! Schema changes: validate, do the data work, persist, publish.
//!
//! A statement is validated by the catalog ([`Catalog::apply`]), which also
//! says what the data must undergo ([`Effect`]): backfilling a new index,
//! checking existing rows against a new constraint, deleting a dropped
//! table's rows. The statement takes the schema gate exclusively, so no
//! commit runs while it checks or backfills. Its data work and its entry in
//! the DDL log (the statement text, in the metadata space) then commit as
//! *one* commit through the commit pipeline, like a transaction's (so the
//! versions get a proper timestamp): a crash, a failed fsync or a failing
//! check leaves the statement wholly applied or not at all, never its data
//! without its schema (whose object ids the next statement would reuse).
//! Only then is the new catalog published. Opening a database replays the
//! log into the catalog.
//!
//! The effects of one statement never read each other's writes (checks
//! read the rows as they were, and no statement both rewrites rows and
//! checks something a rewrite could change), which is what lets them commit
//! together at the end.
//!
//! A batch of statements is applied in order and stops at the first failure,
//! as Spanner's `UpdateDatabaseDdl` does: the statements before it stay
//! applied.
//!
//! View queries are bound by the SQL layer, which sits above this crate: the
//! database is opened with its [`ViewAnalyzer`] in
//! [`Options::view_analyzer`](crate::Options::view_analyzer)
//! (`rowtree_sql::database_options()` gives options that carry it), and new
//! DDL is validated with it (CREATE VIEW, and the views that depend on an
//! altered table or a replaced view). Without one, views are validated
//! structurally only (see `rowtree_schema::view`). Replaying the DDL log never
//! binds: a statement accepted once is replayed as it was.

use std::collections::HashSet;
use std::sync::Arc;

use rowtree_schema::{Catalog, Effect, SchemaError, ViewAnalyzer};
use rowtree_types::{Code, ProtoBundle, Value};

use crate::database::{CommitWrites, Database, META_DDL_PREFIX, META_PROTOS_PREFIX};
use crate::error::{Error, Result};
use crate::eval::{DdlEval, NoSideEffects};
use crate::keys::{self, Object};
use crate::row::{index_entry, materialize, stored_columns};
use crate::sequences::SequenceChange;
use crate::target::table_target;

/// What one statement's effects write, committed at once with its DDL log
/// entry.
#[derive(Default)]
struct StatementWrites {
    /// Row and index writes (`None` deletes).
    data: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    /// Sequence state changes.
    sequences: Vec<SequenceChange>,
}

/// A DDL failure: which statement failed and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{error}")]
pub struct DdlError {
    /// Index of the failed statement in the batch (0-based).
    pub statement: usize,
    /// Byte offset of the error inside that statement's text, when known.
    pub offset: Option<usize>,
    pub error: Error,
}

impl DdlError {
    /// The status code of the failed statement's error.
    pub fn code(&self) -> Code {
        self.error.code()
    }
}

impl From<SchemaError> for Error {
    fn from(e: SchemaError) -> Error {
        let message = e.to_string();
        match e {
            SchemaError::NotFound { .. } => Error::NotFound { message },
            SchemaError::AlreadyExists { .. } => Error::AlreadyExists { message },
            SchemaError::FailedPrecondition { .. } => Error::FailedPrecondition { message },
            SchemaError::InvalidArgument { .. } | SchemaError::Unimplemented { .. } => {
                Error::InvalidArgument { message }
            }
        }
    }
}

/// Decodes proto descriptors given with a batch of DDL; an invalid set is
/// the batch's error (statement 0).
fn decode_protos(protos: Option<&[u8]>) -> std::result::Result<Option<Arc<ProtoBundle>>, DdlError> {
    protos
        .map(|bytes| {
            ProtoBundle::decode(bytes)
                .map(Arc::new)
                .map_err(|e| DdlError {
                    statement: 0,
                    offset: None,
                    error: Error::invalid(format!("Invalid proto descriptors: {e}")),
                })
        })
        .transpose()
}

impl Database {
    /// Tells the schema observer, if any, of a change from `before` to the
    /// schema now (nothing if the batch changed nothing).
    fn observe_schema_change(&self, before: &Arc<rowtree_schema::Catalog>) {
        if let Some(observer) = &self.inner.options.schema_observer {
            let after = self.catalog();
            // A statement with nothing to do (`IF NOT EXISTS`) may still
            // count as applied: compare what the schema says.
            if after.version() != before.version() && after.ddl() != before.ddl() {
                observer.schema_changed(before, &after);
            }
        }
    }

    /// The analyzer DDL binds view queries with, from
    /// [`Options::view_analyzer`](crate::Options::view_analyzer).
    fn view_analyzer(&self) -> Option<&dyn ViewAnalyzer> {
        self.inner.options.view_analyzer.as_deref()
    }

    /// Applies one DDL statement.
    pub fn apply_ddl_statement(&self, text: &str) -> std::result::Result<(), DdlError> {
        self.apply_ddl(&[text]).map(|_| ())
    }

    /// Applies DDL statements in order, stopping at the first failure (the
    /// statements before it stay applied). Returns how many were applied.
    pub fn apply_ddl(&self, statements: &[&str]) -> std::result::Result<usize, DdlError> {
        self.apply_ddl_with_protos(statements, None)
    }

    /// [`Database::apply_ddl`] with new proto descriptors (a serialized
    /// `FileDescriptorSet`, as UpdateDatabaseDdl's `proto_descriptors`):
    /// they take effect with the first statement and are recorded with it,
    /// so a batch that fails at its first statement leaves them unchanged.
    pub fn apply_ddl_with_protos(
        &self,
        statements: &[&str],
        protos: Option<&[u8]>,
    ) -> std::result::Result<usize, DdlError> {
        let before = self.catalog();
        let result = self.apply_ddl_serially(statements, protos);
        self.observe_schema_change(&before);
        result
    }

    fn apply_ddl_serially(
        &self,
        statements: &[&str],
        protos: Option<&[u8]>,
    ) -> std::result::Result<usize, DdlError> {
        let _serial = self.inner.ddl_lock.lock();
        self.catch_up_schema()?;
        let mut protos = decode_protos(protos)?;
        for (i, text) in statements.iter().enumerate() {
            protos = self
                .apply_one(text, protos.take())
                .map_err(|(error, offset)| DdlError {
                    statement: i,
                    offset,
                    error,
                })?;
        }
        Ok(statements.len())
    }

    /// In a cluster, where another node may have changed the schema: makes
    /// sure this node may commit now (it holds the split's lease, so it has
    /// applied every earlier entry, schema changes included) and reloads
    /// the schema from the DDL log, so that statements are checked against
    /// the schema they will follow. Alone, nothing to do. Called with the
    /// DDL lock held.
    fn catch_up_schema(&self) -> std::result::Result<(), DdlError> {
        if !self.inner.router.replicated() {
            return Ok(());
        }
        let failed = |error: Error| DdlError {
            statement: 0,
            offset: None,
            error,
        };
        self.inner
            .router
            .ready_to_commit()
            .map_err(|e| failed(e.into()))?;
        if self.reload_catalog().map_err(failed)? {
            self.refresh_split_points();
        }
        Ok(())
    }

    /// Validates every statement first and applies them only if all are
    /// valid (CreateDatabase with extra statements is all-or-nothing). On an
    /// empty database nothing can fail after validation.
    pub fn apply_ddl_all_or_nothing(
        &self,
        statements: &[&str],
    ) -> std::result::Result<usize, DdlError> {
        self.apply_ddl_all_or_nothing_with_protos(statements, None)
    }

    /// [`Database::apply_ddl_all_or_nothing`] with proto descriptors
    /// (CreateDatabase's `proto_descriptors`), as in
    /// [`Database::apply_ddl_with_protos`].
    pub fn apply_ddl_all_or_nothing_with_protos(
        &self,
        statements: &[&str],
        protos: Option<&[u8]>,
    ) -> std::result::Result<usize, DdlError> {
        let before = self.catalog();
        let result = self.apply_all_or_nothing_serially(statements, protos);
        self.observe_schema_change(&before);
        result
    }

    fn apply_all_or_nothing_serially(
        &self,
        statements: &[&str],
        protos: Option<&[u8]>,
    ) -> std::result::Result<usize, DdlError> {
        let _serial = self.inner.ddl_lock.lock();
        self.catch_up_schema()?;
        let mut protos = decode_protos(protos)?;
        let mut catalog = (*self.catalog()).clone();
        if let Some(p) = &protos {
            catalog = catalog
                .with_proto_descriptors(p.clone())
                .map_err(|e| DdlError {
                    statement: 0,
                    offset: None,
                    error: e.into(),
                })?;
        }
        for (i, text) in statements.iter().enumerate() {
            let stmt =
                rowtree_parser::parse_statement_in(self.dialect(), text).map_err(|e| DdlError {
                    statement: i,
                    offset: Some(e.offset),
                    error: Error::invalid(e.message.clone()),
                })?;
            let (next, _) = catalog
                .apply_with(&stmt, self.view_analyzer())
                .map_err(|e| DdlError {
                    statement: i,
                    offset: e.span().map(|s| s.start),
                    error: e.into(),
                })?;
            catalog = next;
        }
        for (i, text) in statements.iter().enumerate() {
            protos = self
                .apply_one(text, protos.take())
                .map_err(|(error, offset)| DdlError {
                    statement: i,
                    offset,
                    error,
                })?;
        }
        Ok(statements.len())
    }

    /// Applies one statement; `protos`, new proto descriptors, take effect
    /// first and are logged with it. A statement with nothing to do (`IF
    /// NOT EXISTS`) logs nothing and hands the descriptors back, for the
    /// next statement.
    fn apply_one(
        &self,
        text: &str,
        protos: Option<Arc<ProtoBundle>>,
    ) -> std::result::Result<Option<Arc<ProtoBundle>>, (Error, Option<usize>)> {
        let stmt = rowtree_parser::parse_statement_in(self.dialect(), text)
            .map_err(|e| (Error::invalid(e.message.clone()), Some(e.offset)))?;
        let _gate = self.inner.schema_gate.exclusive();
        let mut current = self.catalog();
        if let Some(p) = &protos {
            current = Arc::new(
                current
                    .with_proto_descriptors(p.clone())
                    .map_err(|e| (Error::from(e), None))?,
            );
        }
        let (next, effects) = current
            .apply_with(&stmt, self.view_analyzer())
            .map_err(|e| (e.span().map(|s| s.start), e))
            .map_err(|(off, e)| (Error::from(e), off))?;
        if next.version() == current.version() {
            // IF NOT EXISTS / IF EXISTS with nothing to do.
            return Ok(protos);
        }
        let next = Arc::new(next);
        let mut writes = StatementWrites::default();
        self.run_effects(&current, &next, &effects, &mut writes)
            .map_err(|e| (e, None))?;
        #[cfg(feature = "failpoints")]
        fail::fail_point!("db::ddl::before_log", |_| Err((
            Error::internal("injected failure before the DDL log write (db::ddl::before_log)"),
            None
        )));
        // The statement's log entry and its data, durable together...
        let mut key = META_DDL_PREFIX.to_vec();
        key.extend_from_slice(&next.version().to_be_bytes());
        let entry = (
            key,
            Some(text.trim().trim_end_matches(';').as_bytes().to_vec()),
        );
        let mut entries = vec![entry];
        if let Some(p) = &protos {
            // The descriptors the statement was applied with, under its
            // version, so replaying the log installs them before it.
            let mut key = META_PROTOS_PREFIX.to_vec();
            key.extend_from_slice(&next.version().to_be_bytes());
            entries.push((key, Some(p.bytes().to_vec())));
        }
        self.commit_statement(writes, entries)
            .map_err(|e| (e, None))?;
        // A crash here leaves the statement in the log: the reopened
        // database has the new schema.
        #[cfg(feature = "failpoints")]
        fail::fail_point!("db::ddl::after_log");
        // ... then the new schema is published.
        *self.inner.catalog.write() = next;
        self.refresh_split_points();
        Ok(None)
    }

    /// Commits a statement's writes with its DDL log `entries` (the
    /// statement, and the proto descriptors it brings), in one batch.
    fn commit_statement(
        &self,
        writes: StatementWrites,
        entries: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    ) -> Result<()> {
        let StatementWrites { data, sequences } = writes;
        if !data.is_empty() {
            self.inner.router.charge_writes(&data);
        }
        let commit = |mut meta: Vec<(Vec<u8>, Option<Vec<u8>>)>| -> Result<()> {
            meta.extend(entries);
            self.inner
                .pipeline
                .commit(rowtree_txn::CommitRequest::new(move |ts| {
                    Ok(CommitWrites {
                        ts,
                        data,
                        meta,
                        elsewhere: None,
                    })
                }))?;
            Ok(())
        };
        if sequences.is_empty() {
            commit(Vec::new())
        } else {
            self.inner.sequences.change(&sequences, commit)
        }
    }

    fn run_effects(
        &self,
        old: &Catalog,
        new: &Catalog,
        effects: &[Effect],
        writes: &mut StatementWrites,
    ) -> Result<()> {
        for effect in effects {
            match effect {
                Effect::BackfillIndex(id) => writes.data.extend(self.backfill_index(new, *id)?),
                Effect::DropIndexData(id) => writes
                    .data
                    .extend(self.drop_object_rows(old, Object::Index(*id))?),
                Effect::DropTableData(id) => writes
                    .data
                    .extend(self.drop_object_rows(old, Object::Table(*id))?),
                Effect::ValidateNotNull { table, column } => {
                    self.validate_rows(new, *table, |t, row| {
                        if row[*column].is_null() {
                            Some(format!(
                                "Adding a NOT NULL constraint on a column {}.{} that has NULL values",
                                t.name, t.columns[*column].name
                            ))
                        } else {
                            None
                        }
                    })?
                }
                Effect::ValidateColumnLength { table, column } => {
                    self.validate_rows(new, *table, |t, row| {
                        let col = &t.columns[*column];
                        let limit = match &col.data_type {
                            rowtree_parser::ast::DataType::String(rowtree_parser::ast::Length::Limit(n))
                            | rowtree_parser::ast::DataType::Bytes(rowtree_parser::ast::Length::Limit(n)) => *n as usize,
                            _ => return None,
                        };
                        let len = match &row[*column] {
                            Value::String(s) => s.chars().count(),
                            Value::Bytes(b) => b.len(),
                            _ => 0,
                        };
                        (len > limit).then(|| {
                            format!("Cannot reduce the length of column {}.{}: a value has length {len}", t.name, col.name)
                        })
                    })?
                }
                Effect::ValidateCheck { table, check } => {
                    let t = new.table_by_id(*table).ok_or_else(|| Error::internal("table vanished"))?;
                    let Some(c) = t.checks.iter().find(|c| &c.name == check) else { continue };
                    let now = rowtree_types::Timestamp::now();
                    self.validate_rows(new, *table, |t, row| {
                        let mut ctx = NoSideEffects { now };
                        match c.expr.expr.eval(row, &mut ctx) {
                            Ok(Value::Bool(false)) => Some(format!(
                                "Check constraint `{}`.`{}` is violated by an existing row",
                                t.name, c.name
                            )),
                            Err(e) => Some(e.to_string()),
                            _ => None,
                        }
                    })?
                }
                Effect::ValidateForeignKey { table, foreign_key } => {
                    self.validate_foreign_key(new, *table, foreign_key)?
                }
                Effect::ResetSequence { sequence, counter } => {
                    let start = match counter {
                        Some(c) => *c,
                        None => new
                            .sequences()
                            .find(|s| s.id == *sequence)
                            .map(|s| s.start_with_counter)
                            .unwrap_or(1),
                    };
                    writes.sequences.push(SequenceChange::Reset {
                        id: *sequence,
                        counter: start.max(1) as u64,
                    });
                }
                Effect::DropSequence(id) => writes.sequences.push(SequenceChange::Drop(*id)),
                Effect::BackfillColumn { table, column } => writes
                    .data
                    .extend(self.backfill_column(new, *table, *column)?),
                Effect::ConvertColumn { table, column } => writes
                    .data
                    .extend(self.convert_column(new, *table, *column)?),
            }
        }
        Ok(())
    }

    /// Every live row of a table at the latest timestamp, as full rows.
    fn table_rows(&self, catalog: &Catalog, table: u32) -> Result<Vec<(Vec<u8>, Vec<Value>)>> {
        let t = catalog
            .table_by_id(table)
            .ok_or_else(|| Error::internal("table vanished"))?;
        let root = catalog.root_of(table);
        let (start, end) = keys::object_range(root.id);
        let target = table_target(catalog, t);
        let mut rows = Vec::new();
        for item in self
            .inner
            .router
            .scan(&start, end.as_deref(), u64::MAX, false)
        {
            let (kb, value) = item?;
            let Some((Object::Table(id), key)) = keys::decode_key(catalog, &kb)? else {
                continue;
            };
            if id != table {
                continue;
            }
            rows.push((kb, materialize(&target, key, &value)?));
        }
        Ok(rows)
    }

    fn validate_rows(
        &self,
        catalog: &Catalog,
        table: u32,
        check: impl Fn(&rowtree_schema::Table, &[Value]) -> Option<String>,
    ) -> Result<()> {
        let t = catalog
            .table_by_id(table)
            .ok_or_else(|| Error::internal("table vanished"))?;
        for (_, row) in self.table_rows(catalog, table)? {
            if let Some(message) = check(t, &row) {
                return Err(Error::FailedPrecondition { message });
            }
        }
        Ok(())
    }

    fn validate_foreign_key(&self, catalog: &Catalog, table: u32, name: &str) -> Result<()> {
        let t = catalog
            .table_by_id(table)
            .ok_or_else(|| Error::internal("table vanished"))?;
        let Some(fk) = t.foreign_keys.iter().find(|f| f.name == name) else {
            return Ok(());
        };
        let referenced: HashSet<Vec<KeyValue>> = self
            .table_rows(catalog, fk.referenced_table)?
            .into_iter()
            .map(|(_, row)| {
                fk.referenced_columns
                    .iter()
                    .map(|&p| KeyValue(row[p].clone()))
                    .collect()
            })
            .collect();
        for (_, row) in self.table_rows(catalog, table)? {
            let vals: Vec<KeyValue> = fk
                .columns
                .iter()
                .map(|&p| KeyValue(row[p].clone()))
                .collect();
            if vals.iter().any(|v| v.0.is_null()) {
                continue;
            }
            if !referenced.contains(&vals) {
                return Err(Error::FailedPrecondition {
                    message: format!(
                        "Foreign key constraint `{}` is violated on table `{}`: a row references values that do not exist",
                        fk.name, t.name
                    ),
                });
            }
        }
        Ok(())
    }

    /// Fills a column added with a DEFAULT, an identity or a stored
    /// generated expression into every existing row (each row evaluates the
    /// expression anew, so `GENERATE_UUID()` differs from row to row).
    fn backfill_column(&self, catalog: &Catalog, table: u32, column: usize) -> Result<RawWrites> {
        let t = catalog
            .table_by_id(table)
            .ok_or_else(|| Error::internal("table vanished"))?;
        let col = &t.columns[column];
        let Some(expr) = col.generated.as_ref().or(col.default.as_ref()) else {
            return Ok(Vec::new());
        };
        let now = rowtree_types::Timestamp::now();
        self.rewrite_column(catalog, table, column, "fill", |row| {
            let mut ctx = DdlEval {
                sequences: &self.inner.sequences,
                catalog,
                now,
            };
            let v = expr.expr.eval(row, &mut ctx)?;
            rowtree_expr::coerce_value(v, &col.ty)
        })
    }

    /// Rewrites a column's values after ALTER COLUMN changed STRING <-> BYTES.
    fn convert_column(&self, catalog: &Catalog, table: u32, column: usize) -> Result<RawWrites> {
        let t = catalog
            .table_by_id(table)
            .ok_or_else(|| Error::internal("table vanished"))?;
        let ty = t.columns[column].ty.clone();
        self.rewrite_column(catalog, table, column, "convert", |row| {
            rowtree_expr::cast(row[column].clone(), &ty)
        })
    }

    /// The rewritten rows that set `column` of every row of `table` to
    /// `value(row)`; a failure names the column and the `action`.
    fn rewrite_column(
        &self,
        catalog: &Catalog,
        table: u32,
        column: usize,
        action: &str,
        mut value: impl FnMut(&[Value]) -> rowtree_expr::Result<Value>,
    ) -> Result<RawWrites> {
        let t = catalog
            .table_by_id(table)
            .ok_or_else(|| Error::internal("table vanished"))?;
        let mut writes = Vec::new();
        for (kb, mut row) in self.table_rows(catalog, table)? {
            row[column] = value(&row).map_err(|e| Error::FailedPrecondition {
                message: format!(
                    "Cannot {action} column {}.{}: {e}",
                    t.name, t.columns[column].name
                ),
            })?;
            let cols = stored_columns(t, &row);
            let bytes = rowtree_encoding::encode_row(cols.iter().map(|(id, v)| (*id, v)))?;
            writes.push((kb, Some(bytes)));
        }
        Ok(writes)
    }

    /// The entries of a new index for every existing row, checking UNIQUE on
    /// the way.
    fn backfill_index(&self, catalog: &Catalog, id: u32) -> Result<RawWrites> {
        let ix = catalog
            .index_by_id(id)
            .ok_or_else(|| Error::internal("index vanished"))?;
        let t = catalog
            .table_by_id(ix.table)
            .ok_or_else(|| Error::internal("table vanished"))?;
        let mut writes = Vec::new();
        let mut seen: HashSet<Vec<KeyValue>> = HashSet::new();
        for (_, row) in self.table_rows(catalog, t.id)? {
            let Some(entry) = index_entry(catalog, t, ix, &row)? else {
                continue;
            };
            if ix.unique {
                let declared: Vec<KeyValue> = entry.key[..entry.declared]
                    .iter()
                    .cloned()
                    .map(KeyValue)
                    .collect();
                if !seen.insert(declared) {
                    return Err(Error::FailedPrecondition {
                        message: format!(
                            "Found uniqueness violation on index {}, duplicate key: {}",
                            ix.name,
                            entry.key[..entry.declared]
                                .iter()
                                .map(|v| v.to_string())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    });
                }
            }
            let key = keys::encode_full(&entry.levels, &entry.key)?;
            let value = rowtree_encoding::encode_row(entry.stored.iter().map(|(id, v)| (*id, v)))?;
            writes.push((key, Some(value)));
        }
        Ok(writes)
    }

    /// The deletes (tombstones, so stale reads still see the rows) of every
    /// row of a dropped table or index.
    fn drop_object_rows(&self, old: &Catalog, object: Object) -> Result<RawWrites> {
        let root_id = match object {
            Object::Table(id) => old.root_of(id).id,
            Object::Index(id) => {
                let ix = old
                    .index_by_id(id)
                    .ok_or_else(|| Error::internal("index vanished"))?;
                match ix.interleave_in {
                    Some(p) => old.root_of(p).id,
                    None => id,
                }
            }
        };
        let (start, end) = keys::object_range(root_id);
        let mut writes = Vec::new();
        for item in self
            .inner
            .router
            .scan(&start, end.as_deref(), u64::MAX, false)
        {
            let (kb, _) = item?;
            match keys::decode_key(old, &kb)? {
                Some((o, _)) if o == object => writes.push((kb, None)),
                _ => {}
            }
        }
        Ok(writes)
    }
}

/// Row or index writes of a schema change (`None` deletes).
type RawWrites = Vec<(Vec<u8>, Option<Vec<u8>>)>;

/// A value usable as a hash key (floats by their bits).
#[derive(Debug, Clone)]
struct KeyValue(Value);

impl PartialEq for KeyValue {
    fn eq(&self, other: &Self) -> bool {
        let mut a = Vec::new();
        let mut b = Vec::new();
        let ea =
            rowtree_encoding::encode_key_value(&mut a, &self.0, rowtree_encoding::Direction::Asc);
        let eb =
            rowtree_encoding::encode_key_value(&mut b, &other.0, rowtree_encoding::Direction::Asc);
        match (ea, eb) {
            (Ok(()), Ok(())) => a == b,
            _ => self.0 == other.0,
        }
    }
}
impl Eq for KeyValue {}
impl std::hash::Hash for KeyValue {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let mut a = Vec::new();
        if rowtree_encoding::encode_key_value(&mut a, &self.0, rowtree_encoding::Direction::Asc)
            .is_ok()
        {
            a.hash(state);
        }
    }
}
