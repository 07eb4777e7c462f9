//! One connection's SQL session: statements in, results out, with
//! PostgreSQL's transaction rules.
//!
//! A [`Backend`] is what a PostgreSQL backend process is to its client, on
//! one PostgreSQL-dialect Rowtree database. It knows nothing of messages; the
//! connection (`crate::conn`) hands it statement texts with bound parameters
//! and turns its [`Outcome`]s into messages. It runs on a blocking thread:
//! the SQL layer is synchronous.
//!
//! Transactions follow PostgreSQL's model, mapped onto Rowtree's:
//!
//! - outside a transaction block every statement is its own transaction
//!   (autocommit): a query reads a strong snapshot, DML commits at once and
//!   is retried while wound-wait aborts it, DDL goes through the schema
//!   change path (`rowtree_sql::Session` does all three);
//! - `BEGIN` / `START TRANSACTION` opens a read-write transaction that
//!   `COMMIT` commits and `ROLLBACK` rolls back; `BEGIN READ ONLY` (or `SET
//!   TRANSACTION READ ONLY` before the first statement) opens a strong
//!   read-only snapshot instead;
//! - an error inside a block rolls the Rowtree transaction back at once and
//!   leaves the block *failed*: every statement but `COMMIT`/`ROLLBACK` is
//!   refused with `25P02`, and `COMMIT` answers `ROLLBACK`, as in PostgreSQL.
//!
//! The statements drivers and tools send beside SQL are answered here too:
//! `SET`/`SHOW`/`RESET` of session parameters (`crate::settings`),
//! `DISCARD`, `DEALLOCATE`, `VACUUM`/`ANALYZE` (accepted, nothing to do),
//! `TRUNCATE` (a delete of every row), `COPY ... FROM STDIN` (rows arrive
//! as CopyData and are written as batched insert mutations), and psql's
//! catalog queries (`crate::catalog`).

use std::collections::HashMap;

use rowtree_db::{
    Database, KeySet, Mutation, ReadOnlyTransaction, ReadWriteTransaction, TimestampBound,
};
use rowtree_sql::{ExecuteResult, Params, QueryMode, Session, TxnRef};
use rowtree_types::{Type, Value};

use crate::catalog;
use crate::copy::{CopyFormat, CopyIn};
use crate::errors::PgError;
pub use crate::outcome::Outcome;
use crate::settings::Settings;
use crate::values;

/// The transaction block state; see the module docs.
enum Txn {
    None,
    ReadWrite {
        txn: ReadWriteTransaction,
    },
    /// `BEGIN` was seen; nothing ran yet, so `SET TRANSACTION READ ONLY`
    /// may still turn the block read-only.
    Pending,
    ReadOnly(ReadOnlyTransaction),
    Failed,
}

/// The transaction status byte of ReadyForQuery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Idle,
    InBlock,
    Failed,
}

/// Inferred parameter types kept per statement text and value shapes, at
/// most this many.
const MAX_INFERRED: usize = 512;

/// What inferred parameter types are cached by: the statement text, the
/// types the client gave, and the value shapes (`crate::infer::shape`).
pub type InferKey = (String, Vec<Option<Type>>, Vec<u8>);

/// A connection's session on one database.
pub struct Backend {
    db: Database,
    autocommit: Session,
    txn: Txn,
    /// The session parameters (`SET`, `SHOW`).
    pub settings: Settings,
    copy: Option<CopyIn>,
    inferred: HashMap<InferKey, Vec<Type>>,
}

/// The first words of a statement, lower case, comments skipped.
pub(crate) fn leading_words(sql: &str, n: usize) -> Vec<String> {
    let mut s = sql.trim_start();
    loop {
        if let Some(rest) = s.strip_prefix("--") {
            s = rest.find('\n').map_or("", |i| &rest[i + 1..]).trim_start();
        } else if let Some(rest) = s.strip_prefix("/*") {
            s = rest.find("*/").map_or("", |i| &rest[i + 2..]).trim_start();
        } else {
            break;
        }
    }
    s.split(|c: char| c.is_whitespace() || c == ';' || c == '(')
        .filter(|w| !w.is_empty())
        .take(n)
        .map(|w| w.to_ascii_lowercase())
        .collect()
}

fn is_ddl(first: &str) -> bool {
    matches!(
        first,
        "create" | "alter" | "drop" | "grant" | "revoke" | "analyze"
    )
}

impl Backend {
    /// A session on `db` (a PostgreSQL-dialect database).
    pub fn new(db: Database, settings: Settings) -> Backend {
        Backend {
            autocommit: Session::new(db.clone()),
            db,
            txn: Txn::None,
            settings,
            copy: None,
            inferred: HashMap::new(),
        }
    }

    /// The ReadyForQuery status.
    pub fn status(&self) -> Status {
        match self.txn {
            Txn::None => Status::Idle,
            Txn::Failed => Status::Failed,
            _ => Status::InBlock,
        }
    }

    /// Opens the implicit transaction of a simple-query message holding
    /// several statements (see `crate::conn`), if no block is open.
    pub fn begin_implicit(&mut self) -> bool {
        if matches!(self.txn, Txn::None) {
            self.txn = Txn::Pending;
            true
        } else {
            false
        }
    }

    /// Ends the implicit transaction: commits it, or (after an error, or
    /// with `commit` false) rolls it back. Always leaves no block open.
    pub fn end_implicit(&mut self, commit: bool) -> Result<(), PgError> {
        let r = if commit && !matches!(self.txn, Txn::Failed) {
            self.commit().map(|_| ())
        } else {
            Ok(())
        };
        self.end_block();
        r
    }

    /// Marks an open block failed (an error outside the SQL layer, such as
    /// a bad parameter, inside a block).
    pub fn fail_block(&mut self) {
        if !matches!(self.txn, Txn::None) {
            self.end_block();
            self.txn = Txn::Failed;
        }
    }

    fn end_block(&mut self) {
        match std::mem::replace(&mut self.txn, Txn::None) {
            Txn::ReadWrite { txn } => txn.rollback(),
            Txn::ReadOnly(_) | Txn::Pending | Txn::Failed | Txn::None => {}
        }
    }

    /// Runs one statement. `offset` is its first character's place in the
    /// query string, for error positions. An error inside a block fails it.
    pub fn execute(
        &mut self,
        sql: &str,
        params: &Params,
        offset: usize,
    ) -> Result<Outcome, PgError> {
        let r = self.execute_inner(sql, params, offset);
        if r.is_err() && !matches!(self.txn, Txn::None | Txn::Failed) {
            self.end_block();
            self.txn = Txn::Failed;
        }
        r
    }

    fn execute_inner(
        &mut self,
        sql: &str,
        params: &Params,
        offset: usize,
    ) -> Result<Outcome, PgError> {
        let words = leading_words(sql, 6);
        let w: Vec<&str> = words.iter().map(String::as_str).collect();
        let Some(&first) = w.first() else {
            return Ok(Outcome::Empty);
        };
        // In a failed block only the end of the block is heard.
        if matches!(self.txn, Txn::Failed) {
            return match first {
                "commit" | "end" | "rollback" | "abort" => {
                    self.txn = Txn::None;
                    Ok(Outcome::Command("ROLLBACK".into()))
                }
                _ => Err(PgError::in_failed_transaction()),
            };
        }
        match first {
            "begin" | "start" => return self.begin(sql),
            "commit" | "end" => return self.commit(),
            "rollback" | "abort" => {
                if matches!(w.get(1), Some(&"to")) || w.contains(&"savepoint") {
                    return Err(PgError::new("0A000", "savepoints are not supported"));
                }
                self.end_block();
                return Ok(Outcome::Command("ROLLBACK".into()));
            }
            "savepoint" | "release" => {
                return Err(PgError::new("0A000", "savepoints are not supported"))
            }
            "set" => {
                if w.get(1) == Some(&"transaction")
                    || (w.get(1) == Some(&"session") && w.get(2) == Some(&"characteristics"))
                {
                    return self.set_transaction(sql);
                }
                return self.settings.set(sql).map(Outcome::Command);
            }
            "show" => return self.settings.show(sql),
            "reset" => return self.settings.reset(sql).map(Outcome::Command),
            "discard" => {
                self.settings.reset("RESET ALL")?;
                return Ok(Outcome::Command("DISCARD ALL".into()));
            }
            "deallocate" => return Ok(Outcome::Command("DEALLOCATE".into())),
            "vacuum" => return Ok(Outcome::Command("VACUUM".into())),
            "analyze" | "analyse" => return Ok(Outcome::Command("ANALYZE".into())),
            "checkpoint" => return Ok(Outcome::Command("CHECKPOINT".into())),
            "listen" | "unlisten" | "notify" => {
                return Err(PgError::new("0A000", "LISTEN/NOTIFY is not supported"))
            }
            "truncate" => return self.truncate(sql),
            "copy" => return self.copy_start(sql),
            _ => {}
        }
        if let Some(answer) = catalog::answer(&self.db, sql) {
            return answer;
        }
        let r = match &mut self.txn {
            Txn::None => self
                .autocommit
                .execute(sql, params)
                .map_err(|e| PgError::from_sql(e.code, &first_line(&e.message), sql, offset))?,
            Txn::Pending => {
                if is_ddl(first) {
                    return Err(ddl_in_block());
                }
                self.txn = Txn::ReadWrite {
                    txn: self.db.begin(),
                };
                return self.execute_inner(sql, params, offset);
            }
            Txn::ReadWrite { txn } => {
                if is_ddl(first) {
                    return Err(ddl_in_block());
                }
                rowtree_sql::execute_in(
                    TxnRef::ReadWrite(txn),
                    sql,
                    params,
                    QueryMode::Normal,
                    None,
                )
                .map_err(|e| PgError::from_sql(e.code, &first_line(&e.message), sql, offset))?
                .result
            }
            Txn::ReadOnly(ro) => {
                if is_ddl(first) {
                    return Err(ddl_in_block());
                }
                if matches!(first, "insert" | "update" | "delete") {
                    return Err(PgError::new(
                        "25006",
                        format!(
                            "cannot execute {} in a read-only transaction",
                            first.to_ascii_uppercase()
                        ),
                    ));
                }
                rowtree_sql::execute_in(TxnRef::ReadOnly(ro), sql, params, QueryMode::Normal, None)
                    .map_err(|e| PgError::from_sql(e.code, &first_line(&e.message), sql, offset))?
                    .result
            }
            Txn::Failed => unreachable!("handled above"),
        };
        Ok(outcome(r, &w))
    }

    fn begin(&mut self, sql: &str) -> Result<Outcome, PgError> {
        let read_only = transaction_mode(sql)?;
        if !matches!(self.txn, Txn::None) {
            // PostgreSQL warns and carries on in the open block.
            return Ok(Outcome::Command("BEGIN".into()));
        }
        self.txn = if read_only == Some(true) || self.settings.default_read_only() {
            Txn::ReadOnly(self.snapshot()?)
        } else {
            Txn::Pending
        };
        Ok(Outcome::Command("BEGIN".into()))
    }

    fn snapshot(&self) -> Result<ReadOnlyTransaction, PgError> {
        self.db.read_only(TimestampBound::Strong).map_err(|e| {
            PgError::new(
                crate::errors::sqlstate(e.code(), &e.to_string()),
                e.to_string(),
            )
        })
    }

    fn commit(&mut self) -> Result<Outcome, PgError> {
        match std::mem::replace(&mut self.txn, Txn::None) {
            Txn::ReadWrite { txn } => {
                txn.commit().map_err(|e| {
                    PgError::new(
                        crate::errors::sqlstate(e.code(), &e.to_string()),
                        e.to_string(),
                    )
                })?;
            }
            Txn::Failed => return Ok(Outcome::Command("ROLLBACK".into())),
            Txn::ReadOnly(_) | Txn::Pending | Txn::None => {}
        }
        Ok(Outcome::Command("COMMIT".into()))
    }

    fn set_transaction(&mut self, sql: &str) -> Result<Outcome, PgError> {
        let read_only = transaction_mode(sql)?;
        let session_level = sql.to_ascii_lowercase().contains("characteristics");
        if session_level {
            if let Some(ro) = read_only {
                self.settings.put(
                    "default_transaction_read_only",
                    if ro { "on" } else { "off" },
                );
            }
            return Ok(Outcome::Command("SET".into()));
        }
        match (&self.txn, read_only) {
            (Txn::Pending, Some(true)) => self.txn = Txn::ReadOnly(self.snapshot()?),
            (Txn::ReadOnly(_), Some(false)) => {
                return Err(PgError::new(
                    "25001",
                    "SET TRANSACTION READ WRITE must be called before any query",
                ))
            }
            (Txn::ReadWrite { .. }, Some(true)) => {
                return Err(PgError::new(
                    "25001",
                    "SET TRANSACTION READ ONLY must be called before any query",
                ))
            }
            (Txn::None, _) => {
                return Err(PgError::new(
                    "25P01",
                    "SET TRANSACTION can only be used in transaction blocks",
                ))
            }
            _ => {}
        }
        Ok(Outcome::Command("SET".into()))
    }

    /// `TRUNCATE [TABLE] [ONLY] t [, ...]`: deletes every row of each table,
    /// in the open block or in one transaction of its own.
    fn truncate(&mut self, sql: &str) -> Result<Outcome, PgError> {
        let body = sql.trim().trim_end_matches(';');
        let body = body[body.to_ascii_lowercase().find("truncate").unwrap_or(0) + 8..].trim();
        let mut tables = Vec::new();
        for part in body.split(',') {
            let mut words: Vec<&str> = part.split_whitespace().collect();
            words.retain(|w| {
                !matches!(
                    w.to_ascii_lowercase().as_str(),
                    "table" | "only" | "restart" | "continue" | "identity" | "cascade" | "restrict"
                )
            });
            match words.as_slice() {
                [name] => tables.push(catalog::fold_name(name)),
                _ => {
                    return Err(PgError::new(
                        "42601",
                        format!("syntax error in TRUNCATE: {}", part.trim()),
                    ))
                }
            }
        }
        let catalog_now = self.db.catalog();
        for t in &tables {
            if catalog_now.table(t).is_none() {
                return Err(PgError::new(
                    "42P01",
                    format!("relation \"{t}\" does not exist"),
                ));
            }
        }
        let mutations: Vec<Mutation> = tables
            .iter()
            .map(|t| Mutation::Delete {
                table: t.clone(),
                key_set: KeySet::all(),
            })
            .collect();
        self.bulk_write(mutations)?;
        Ok(Outcome::Command("TRUNCATE TABLE".into()))
    }

    /// A COPY batch or TRUNCATE: like [`Backend::write`], but committed on
    /// its own even in a block when the session set
    /// `rowtree.non_atomic_bulk`.
    fn bulk_write(&mut self, mutations: Vec<Mutation>) -> Result<(), PgError> {
        if self.settings.non_atomic_bulk() && !matches!(self.txn, Txn::ReadOnly(_)) {
            return self.db.write(mutations).map(|_| ()).map_err(|e| {
                PgError::new(
                    crate::errors::sqlstate(e.code(), &e.to_string()),
                    e.to_string(),
                )
            });
        }
        self.write(mutations)
    }

    /// Buffers `mutations` in the open read-write block, or commits them in
    /// a transaction of their own.
    fn write(&mut self, mutations: Vec<Mutation>) -> Result<(), PgError> {
        let db_err = |e: rowtree_db::Error| {
            PgError::new(
                crate::errors::sqlstate(e.code(), &e.to_string()),
                e.to_string(),
            )
        };
        if matches!(self.txn, Txn::Pending) {
            self.txn = Txn::ReadWrite {
                txn: self.db.begin(),
            };
        }
        match &mut self.txn {
            Txn::ReadWrite { txn } => txn.buffer_all(mutations).map_err(db_err),
            Txn::ReadOnly(_) => Err(PgError::new(
                "25006",
                "cannot write in a read-only transaction",
            )),
            _ => self.db.write(mutations).map(|_| ()).map_err(db_err),
        }
    }

    fn copy_start(&mut self, sql: &str) -> Result<Outcome, PgError> {
        let copy = CopyIn::parse(sql, &self.db.catalog())?;
        if matches!(self.txn, Txn::ReadOnly(_)) {
            return Err(PgError::new(
                "25006",
                "cannot execute COPY FROM in a read-only transaction",
            ));
        }
        let columns = copy.columns.len();
        self.copy = Some(copy);
        Ok(Outcome::CopyIn { columns })
    }

    /// The format of the COPY in progress.
    pub fn copy_format(&self) -> Option<CopyFormat> {
        self.copy.as_ref().map(|c| c.format)
    }

    /// A chunk of COPY data: complete rows are parsed and, when a batch is
    /// full, written.
    pub fn copy_data(&mut self, data: &[u8]) -> Result<(), PgError> {
        let Some(mut copy) = self.copy.take() else {
            return Ok(());
        };
        let r = copy.feed(data).and_then(|()| {
            while let Some(m) = copy.take_batch(false) {
                self.bulk_write(vec![m])?;
            }
            Ok(())
        });
        if r.is_ok() {
            self.copy = Some(copy);
        } else {
            self.fail_block();
        }
        r
    }

    /// The end of COPY data: the last rows are written; the tag counts them.
    pub fn copy_done(&mut self) -> Result<Outcome, PgError> {
        let Some(mut copy) = self.copy.take() else {
            return Ok(Outcome::Command("COPY 0".into()));
        };
        let r = copy.finish().and_then(|()| {
            while let Some(m) = copy.take_batch(true) {
                self.bulk_write(vec![m])?;
            }
            Ok(())
        });
        match r {
            Ok(()) => Ok(Outcome::Command(format!("COPY {}", copy.rows))),
            Err(e) => {
                self.fail_block();
                Err(e)
            }
        }
    }

    /// The client abandoned the COPY (CopyFail) or the connection failed.
    pub fn copy_fail(&mut self, message: &str) -> PgError {
        self.copy = None;
        self.fail_block();
        PgError::new("57014", format!("COPY from stdin failed: {message}"))
    }

    /// Whether a statement takes `params` (the parameter inference of
    /// `crate::infer` asks). A query is planned only. DML is planned, then
    /// executed (the planner does not check the values DML writes) in a
    /// probe transaction that is rolled back (`Database::begin_probe`): it
    /// never waits for a lock and never wounds anyone, and the open
    /// block's transaction is not touched. Running the probe inside the
    /// block instead kept the locks on the sample rows until the block
    /// ended, so two sessions inferring the same statement waited for each
    /// other or aborted one another. Only a type error (INVALID_ARGUMENT)
    /// refuses the parameters; a constraint the sample values break, or a
    /// row another transaction holds, does not.
    pub fn plans(&self, sql: &str, params: &Params) -> bool {
        let words = leading_words(sql, 1);
        let dml = matches!(
            words.first().map(String::as_str),
            Some("insert" | "update" | "delete")
        );
        if !dml {
            return match self.db.read_only(TimestampBound::Strong) {
                Ok(mut ro) => rowtree_sql::execute_in(
                    TxnRef::ReadOnly(&mut ro),
                    sql,
                    params,
                    QueryMode::Plan,
                    None,
                )
                .is_ok(),
                Err(_) => false,
            };
        }
        let accepts = |txn: &mut ReadWriteTransaction| {
            for mode in [QueryMode::Plan, QueryMode::Normal] {
                match rowtree_sql::execute_in(TxnRef::ReadWrite(txn), sql, params, mode, None) {
                    Ok(_) => {}
                    Err(e) if e.code == rowtree_types::Code::InvalidArgument => return false,
                    Err(_) => return mode == QueryMode::Normal,
                }
            }
            true
        };
        let mut probe = self.db.begin_probe();
        let ok = accepts(&mut probe);
        probe.rollback();
        ok
    }

    /// The columns a statement returns, found by planning it with
    /// `params` (untyped NULLs where values are not known yet); `None` when
    /// it returns no rows or does not plan.
    pub fn describe(&self, sql: &str, params: &Params) -> Option<Vec<(String, Type)>> {
        let words = leading_words(sql, 2);
        match words.first().map(String::as_str) {
            Some("select" | "with" | "values" | "table" | "(") => {}
            Some("show") => {
                let name = words.get(1).cloned().unwrap_or_default();
                return Some(vec![(name, Type::String)]);
            }
            _ => return None,
        }
        if let Some(Ok(Outcome::Rows { columns, .. })) = catalog::answer(&self.db, sql) {
            return Some(columns);
        }
        let mut ro = self.db.read_only(TimestampBound::Strong).ok()?;
        match rowtree_sql::execute_in(
            TxnRef::ReadOnly(&mut ro),
            sql,
            params,
            QueryMode::Plan,
            None,
        ) {
            Ok(e) => match e.result {
                ExecuteResult::Query(q) => Some(q.columns),
                _ => None,
            },
            Err(_) => None,
        }
    }

    /// The parameter types inferred earlier for this statement, given types
    /// and value shapes.
    pub fn inferred(&self, key: &InferKey) -> Option<&Vec<Type>> {
        self.inferred.get(key)
    }

    /// Remembers inferred parameter types (a bounded cache).
    pub fn remember(&mut self, key: InferKey, types: Vec<Type>) {
        if self.inferred.len() >= MAX_INFERRED {
            self.inferred.clear();
        }
        self.inferred.insert(key, types);
    }

    /// The database.
    pub fn database(&self) -> &Database {
        &self.db
    }
}

impl Drop for Backend {
    fn drop(&mut self) {
        self.end_block();
    }
}

fn ddl_in_block() -> PgError {
    PgError::new(
        "25001",
        "DDL statements cannot run inside a transaction block; run them outside BEGIN ... COMMIT",
    )
}

/// The first line of a message (the SQL layer may add a quoted snippet).
fn first_line(message: &str) -> String {
    message.lines().next().unwrap_or_default().to_string()
}

/// `READ ONLY` / `READ WRITE` in a BEGIN or SET TRANSACTION statement
/// (isolation levels are accepted: Rowtree's transactions are serializable).
fn transaction_mode(sql: &str) -> Result<Option<bool>, PgError> {
    let s = sql.to_ascii_lowercase();
    let words: Vec<&str> = s
        .split(|c: char| c.is_whitespace() || c == ',' || c == ';')
        .filter(|w| !w.is_empty())
        .collect();
    let mut mode = None;
    for pair in words.windows(2) {
        match pair {
            ["read", "only"] => mode = Some(true),
            ["read", "write"] => mode = Some(false),
            _ => {}
        }
    }
    Ok(mode)
}

/// The result of the SQL layer as an outcome, with PostgreSQL's command tag.
fn outcome(r: ExecuteResult, words: &[&str]) -> Outcome {
    match r {
        ExecuteResult::Query(q) => Outcome::Rows {
            tag: format!("SELECT {}", q.rows.len()),
            columns: q.columns,
            rows: q.rows,
        },
        ExecuteResult::Dml {
            row_count,
            returning,
        } => {
            let verb = words
                .iter()
                .copied()
                .find(|w| matches!(*w, "insert" | "update" | "delete"));
            let tag = match verb {
                Some("insert") => format!("INSERT 0 {row_count}"),
                Some(v) => format!("{} {row_count}", v.to_ascii_uppercase()),
                None => format!("UPDATE {row_count}"),
            };
            match returning {
                Some(q) => Outcome::Rows {
                    columns: q.columns,
                    rows: q.rows,
                    tag,
                },
                None => Outcome::Command(tag),
            }
        }
        ExecuteResult::Ddl => Outcome::Command(ddl_tag(words)),
        ExecuteResult::Transaction(word) => Outcome::Command(word.to_string()),
    }
}

/// `CREATE TABLE`, `DROP INDEX`, `ALTER TABLE`...: the verb and the kind of
/// object, skipping `UNIQUE`, `OR REPLACE` and the like.
fn ddl_tag(words: &[&str]) -> String {
    let verb = words.first().copied().unwrap_or("");
    let object = words
        .iter()
        .skip(1)
        .copied()
        .find(|w| !matches!(*w, "unique" | "or" | "replace" | "if" | "not" | "exists"))
        .unwrap_or("");
    format!("{} {}", verb, object).trim().to_ascii_uppercase()
}

/// A parameter of `sql` as bound: its type, or `None` for an untyped NULL.
pub fn bind_param(params: &mut Params, index: usize, value: Option<(Type, Value)>) {
    let name = format!("p{}", index + 1);
    match value {
        Some((ty, v)) => {
            params.insert(name, (ty, v));
        }
        None => params.insert_untyped_null(name),
    }
}

/// A parameter of `ty` from its text.
pub fn text_param(ty: &Type, text: &str) -> Result<Value, PgError> {
    values::from_text(ty, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_plan() {
        let db = rowtree_db::Database::in_memory_with(rowtree_db::Options {
            dialect: rowtree_types::Dialect::PostgreSql,
            ..rowtree_sql::database_options()
        });
        let mut b = Backend::new(db, Settings::new("u", &Default::default()));
        b.execute(
            "create table t (id bigint primary key, name varchar)",
            &Params::new(),
            0,
        )
        .unwrap();
        let mut p = Params::new();
        p.insert("p1".into(), (Type::String, Value::String("x".into())));
        let mut ro = b.db.read_only(TimestampBound::Strong).unwrap();
        let r = rowtree_sql::execute_in(
            TxnRef::ReadOnly(&mut ro),
            "select * from t where id >= $1",
            &p,
            QueryMode::Plan,
            None,
        );
        assert!(r.is_err(), "{r:?}");
        p.insert("p1".into(), (Type::Int64, Value::Int64(1)));
        let r = rowtree_sql::execute_in(
            TxnRef::ReadOnly(&mut ro),
            "select * from t where id >= $1",
            &p,
            QueryMode::Plan,
            None,
        );
        assert!(r.is_ok(), "{r:?}");
    }
}
