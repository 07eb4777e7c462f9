//! Sessions: one client's statements, in order, with an optional open
//! transaction.
//!
//! Outside `BEGIN`, each query reads a strong snapshot and each DML
//! statement runs in a read-write transaction of its own, committed at once
//! and retried while it is aborted (wound-wait). After `BEGIN`, statements
//! share one read-write transaction: queries see its earlier DML, and
//! `COMMIT` / `ROLLBACK` end it. DDL runs outside transactions.
//!
//! What a session's queries buffer draws from a memory pool shared with
//! the other sessions: the server's ([`crate::limits::server_memory_pool`])
//! unless the session was given its own ([`Session::with_memory_pool`]).
//! [`execute_in`], the gRPC API's entry point, always uses the server's.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rowtree_db::{Database, ReadWriteTransaction, TimestampBound};
use rowtree_parser::ast::{Span, Statement, StatementKind};
use rowtree_types::{Type, Value};

use crate::cache::{Prepared, StatementCache};
use crate::error::{Error, Result, SqlError};
use crate::executor::DataSource;
use crate::explain::PlanTree;
use crate::limits::MemoryPool;
use crate::result::{ExecuteResult, QueryResult, QueryStats};
use crate::Params;

/// Receives a streamed query's rows, each with the result's columns, and
/// answers whether to go on: `false` stops the query (its reader went away
/// or its deadline passed); the statement then ends as if the rows ran out.
pub type RowSink<'a> = dyn FnMut(&[(String, Type)], Vec<Value>) -> bool + 'a;

/// A statement from the statement cache, with the cache (whose plan
/// template the statement's query may use, see [`crate::template`]).
pub(crate) type Cached<'a> = Option<(&'a Arc<Prepared>, &'a StatementCache)>;

/// A client session.
pub struct Session {
    db: Database,
    txn: Option<ReadWriteTransaction>,
    /// What the session's queries buffer draws from.
    memory_pool: Arc<MemoryPool>,
}

impl Session {
    /// A session on `db` whose queries draw from the server's memory pool.
    /// Open `db` with [`crate::database_options`] so that CREATE VIEW binds
    /// the view's query.
    pub fn new(db: Database) -> Session {
        Session::with_memory_pool(db, crate::limits::server_memory_pool().clone())
    }

    /// A session on `db` whose queries draw from `pool` instead of the
    /// server's (sessions sharing `pool` share its budget).
    pub fn with_memory_pool(db: Database, pool: Arc<MemoryPool>) -> Session {
        Session {
            db,
            txn: None,
            memory_pool: pool,
        }
    }

    /// The pool this session's queries draw from.
    pub fn memory_pool(&self) -> &Arc<MemoryPool> {
        &self.memory_pool
    }

    /// The database this session runs against.
    pub fn database(&self) -> &Database {
        &self.db
    }

    /// Whether a `BEGIN` transaction is open.
    pub fn in_transaction(&self) -> bool {
        self.txn.is_some()
    }

    /// Runs one statement: a query, DML, DDL, `EXPLAIN [ANALYZE]`, or
    /// BEGIN / COMMIT / ROLLBACK.
    pub fn execute(
        &mut self,
        sql: &str,
        params: &Params,
    ) -> std::result::Result<ExecuteResult, SqlError> {
        self.execute_inner(sql, params, None)
    }

    /// Like [`Session::execute`], but a query's rows go to `sink` as the
    /// executor produces them (with the result's columns), so a query over
    /// millions of rows runs in bounded memory; the returned
    /// [`QueryResult`] then has its columns and statistics and no rows.
    pub fn execute_streaming(
        &mut self,
        sql: &str,
        params: &Params,
        sink: &mut RowSink<'_>,
    ) -> std::result::Result<ExecuteResult, SqlError> {
        self.execute_inner(sql, params, Some(sink))
    }

    fn execute_inner(
        &mut self,
        sql: &str,
        params: &Params,
        sink: Option<&mut RowSink<'_>>,
    ) -> std::result::Result<ExecuteResult, SqlError> {
        crate::limits::check_statement(sql, params).map_err(|e| e.render(sql))?;
        let words: Vec<String> = sql
            .trim()
            .trim_end_matches(';')
            .split_whitespace()
            .map(|w| w.to_ascii_uppercase())
            .collect();
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        match words.as_slice() {
            ["BEGIN"] | ["BEGIN", "TRANSACTION"] | ["START", "TRANSACTION"] => {
                return self.begin().map_err(|e| e.render(sql))
            }
            ["COMMIT"] | ["COMMIT", "TRANSACTION"] => {
                return self.commit().map_err(|e| e.render(sql))
            }
            ["ROLLBACK"] | ["ROLLBACK", "TRANSACTION"] => {
                return match self.txn.take() {
                    Some(t) => {
                        t.rollback();
                        Ok(ExecuteResult::Transaction("ROLLBACK"))
                    }
                    None => Err(Error::failed_precondition("No transaction is open").render(sql)),
                }
            }
            _ => {}
        }
        // A PostgreSQL-dialect database's statements go through its own
        // parser, which builds the same AST; the statement cache keeps it.
        let version = match &self.txn {
            Some(txn) => txn.catalog().version(),
            None => self.db.catalog().version(),
        };
        let cache = crate::cache::statement_cache(&self.db);
        let prepared = cache
            .prepare(self.db.dialect(), version, sql, params)
            .map_err(|e| Error::from(e).render(sql))?;
        self.statement(&prepared.stmt, sql, params, sink, Some((&prepared, &cache)))
            .map_err(|e| e.render(sql))
    }

    fn begin(&mut self) -> Result<ExecuteResult> {
        if self.txn.is_some() {
            return Err(Error::failed_precondition("A transaction is already open"));
        }
        self.txn = Some(self.db.begin());
        Ok(ExecuteResult::Transaction("BEGIN"))
    }

    fn commit(&mut self) -> Result<ExecuteResult> {
        let txn = self
            .txn
            .take()
            .ok_or_else(|| Error::failed_precondition("No transaction is open"))?;
        txn.commit()?;
        Ok(ExecuteResult::Transaction("COMMIT"))
    }

    fn statement(
        &mut self,
        stmt: &Statement,
        sql: &str,
        params: &Params,
        sink: Option<&mut RowSink<'_>>,
        cached: Cached<'_>,
    ) -> Result<ExecuteResult> {
        let pool = self.memory_pool.clone();
        match &stmt.kind {
            StatementKind::Query(q) => self.read(|source, catalog| {
                run_query(source, catalog, q, params, &pool, sink, cached).map(ExecuteResult::Query)
            }),
            StatementKind::Explain { analyze, statement } => {
                let analyze = *analyze;
                match &statement.kind {
                    StatementKind::Query(q) => self.read(|source, catalog| {
                        explain_query(source, catalog, q, params, &pool, analyze)
                    }),
                    StatementKind::Insert(_)
                    | StatementKind::Update(_)
                    | StatementKind::Delete(_) => {
                        self.explain_dml(&statement.kind, params, analyze)
                    }
                    _ => Err(Error::unimplemented(
                        "EXPLAIN supports queries, INSERT, UPDATE and DELETE only",
                    )
                    .at(statement.span)),
                }
            }
            StatementKind::Insert(_) | StatementKind::Update(_) | StatementKind::Delete(_) => {
                self.write(|txn| crate::dml::execute(txn, &stmt.kind, params, &pool))
            }
            _ => {
                if self.txn.is_some() {
                    return Err(Error::failed_precondition(
                        "DDL statements cannot be executed inside a transaction",
                    ));
                }
                self.db.apply_ddl_statement(sql).map_err(|e| {
                    let err: Error = e.error.into();
                    match e.offset {
                        Some(o) => err.at(Span { start: o, end: o }),
                        None => err,
                    }
                })?;
                Ok(ExecuteResult::Ddl)
            }
        }
    }

    /// EXPLAIN [ANALYZE] of INSERT, UPDATE or DELETE. Plain EXPLAIN only
    /// plans the statement (nothing is read or written). EXPLAIN ANALYZE
    /// executes it in a read-write transaction of its own that is rolled
    /// back, so it changes nothing; inside `BEGIN` it is refused, since the
    /// open transaction cannot be rolled back in part.
    fn explain_dml(
        &mut self,
        kind: &StatementKind,
        params: &Params,
        analyze: bool,
    ) -> Result<ExecuteResult> {
        use crate::dml::Mode;
        let start = Instant::now();
        let pool = self.memory_pool.clone();
        let explained = if !analyze {
            match self.txn.as_mut() {
                Some(txn) => crate::dml::explain(txn, kind, params, &pool, Mode::Plan)?,
                None => {
                    let mut txn = self.db.begin();
                    let r = crate::dml::explain(&mut txn, kind, params, &pool, Mode::Plan);
                    txn.rollback();
                    r?
                }
            }
        } else {
            if self.txn.is_some() {
                return Err(Error::failed_precondition(
                    "EXPLAIN ANALYZE of DML cannot run inside a transaction: it executes the \
                     statement in a transaction of its own and rolls it back",
                ));
            }
            self.retry_in_own_txn(|mut txn| {
                let r = crate::dml::explain(&mut txn, kind, params, &pool, Mode::Analyze);
                txn.rollback();
                r
            })?
        };
        let tree = crate::explain::describe_dml(&explained, analyze);
        let totals = tree.scan_totals();
        let lines = crate::explain::explain_dml(&tree, analyze);
        let returned = lines.len() as u64;
        Ok(explain_result(lines, returned, totals, start))
    }

    /// Runs a read in the open transaction, or in a strong snapshot.
    fn read(
        &mut self,
        f: impl FnOnce(&mut dyn DataSource, &Arc<rowtree_schema::Catalog>) -> Result<ExecuteResult>,
    ) -> Result<ExecuteResult> {
        match self.txn.as_mut() {
            Some(txn) => {
                let catalog = txn.catalog();
                let result = f(txn, &catalog);
                if matches!(&result, Err(e) if e.is_retryable()) {
                    self.txn = None;
                }
                result
            }
            None => {
                let mut ro = self.db.read_only(TimestampBound::Strong)?;
                let catalog = DataSource::catalog(&ro);
                f(&mut ro, &catalog)
            }
        }
    }

    /// Runs DML in the open transaction, or in its own (retried while aborted).
    fn write(
        &mut self,
        mut f: impl FnMut(&mut ReadWriteTransaction) -> Result<ExecuteResult>,
    ) -> Result<ExecuteResult> {
        if let Some(txn) = self.txn.as_mut() {
            let result = f(txn);
            if matches!(&result, Err(e) if e.is_retryable()) {
                self.txn = None;
            }
            return result;
        }
        self.retry_in_own_txn(|mut txn| {
            let r = f(&mut txn)?;
            txn.commit()?;
            Ok(r)
        })
    }

    /// Runs `attempt` in a read-write transaction of its own, which
    /// `attempt` commits or rolls back; while it fails with a retryable
    /// error (aborted by wound-wait), retries after a growing backoff in a
    /// new transaction that keeps the first one's priority.
    fn retry_in_own_txn<T>(
        &self,
        mut attempt: impl FnMut(ReadWriteTransaction) -> Result<T>,
    ) -> Result<T> {
        let mut priority = None;
        let mut backoff = Duration::from_micros(200);
        loop {
            let txn = match priority {
                None => self.db.begin(),
                Some(p) => self.db.begin_with_priority(p),
            };
            priority = Some(txn.priority());
            match attempt(txn) {
                Err(e) if e.is_retryable() => {
                    std::thread::sleep(backoff);
                    backoff = (backoff * 2).min(Duration::from_millis(50));
                }
                other => return other,
            }
        }
    }
}

/// Plans a query, through the cached statement's template when there is one.
fn plan(
    catalog: &Arc<rowtree_schema::Catalog>,
    q: &rowtree_parser::ast::Query,
    params: &Params,
    cached: Cached<'_>,
) -> Result<crate::Plan> {
    match cached {
        // A template bound against this catalog that holds for these values
        // skips parsing (done by the cache) and binding.
        Some((prepared, cache)) => {
            let template = prepared.template();
            if let Some(planned) = template.as_ref().and_then(|t| t.plan(catalog, params)) {
                cache.count_plan_hit();
                return planned;
            }
            // Otherwise bind, and keep the binding as the template when the
            // statement is reused (its second execution, at the earliest)
            // and has none for this catalog yet.
            let record = prepared.reused() && template.is_none_or(|t| !t.is_for(catalog));
            let (mut plan, used, made) = crate::template::bind(catalog, q, params, record)?;
            if let Some((template, bytes)) = made {
                prepared.set_template(template);
                cache.charge(prepared, bytes);
            }
            crate::optimize(catalog, &mut plan, &used)?;
            Ok(plan)
        }
        None => crate::plan_query(catalog, q, params),
    }
}

fn run_query(
    source: &mut dyn DataSource,
    catalog: &Arc<rowtree_schema::Catalog>,
    q: &rowtree_parser::ast::Query,
    params: &Params,
    pool: &Arc<MemoryPool>,
    sink: Option<&mut RowSink<'_>>,
    cached: Cached<'_>,
) -> Result<QueryResult> {
    let start = Instant::now();
    let plan = plan(catalog, q, params, cached)?;
    let mut rows = Vec::new();
    let mut returned = 0u64;
    {
        let columns = plan.columns();
        let mut sink = sink;
        let mut iter = plan.execute(source, pool)?;
        let mut held = iter.reserve("the result (not streamed)");
        for row in iter.by_ref() {
            let row = row?;
            returned += 1;
            match sink.as_mut() {
                Some(f) => {
                    if !f(columns, row) {
                        break;
                    }
                }
                None => {
                    held.hold(&row)?;
                    rows.push(row);
                }
            }
        }
    }
    let (scanned, splits) = plan.describe(true).scan_totals();
    Ok(QueryResult {
        columns: plan.columns().to_vec(),
        stats: QueryStats {
            rows_scanned: scanned,
            rows_returned: returned,
            splits_touched: splits,
            elapsed: start.elapsed(),
        },
        rows,
    })
}

fn explain_query(
    source: &mut dyn DataSource,
    catalog: &rowtree_schema::Catalog,
    q: &rowtree_parser::ast::Query,
    params: &Params,
    pool: &Arc<MemoryPool>,
    analyze: bool,
) -> Result<ExecuteResult> {
    let start = Instant::now();
    let plan = crate::plan_query(catalog, q, params)?;
    let mut returned = 0;
    if analyze {
        for r in plan.execute(source, pool)? {
            r?;
            returned += 1;
        }
    }
    let tree = plan.describe(analyze);
    let (scanned, splits) = tree.scan_totals();
    let mut lines: Vec<String> = tree.text().lines().map(str::to_string).collect();
    if analyze {
        lines.push(format!(
            "rows returned: {returned}, rows scanned: {scanned}, splits touched: {splits}"
        ));
    }
    Ok(explain_result(lines, returned, (scanned, splits), start))
}

/// An EXPLAIN result: `lines` as the rows of one STRING column `plan`, with
/// the statement's counters (`totals` as rows scanned, splits touched) and
/// the time since `start`.
fn explain_result(
    lines: Vec<String>,
    rows_returned: u64,
    (rows_scanned, splits_touched): (u64, u64),
    start: Instant,
) -> ExecuteResult {
    let rows: Vec<Vec<Value>> = lines.into_iter().map(|l| vec![Value::String(l)]).collect();
    ExecuteResult::Query(QueryResult {
        columns: vec![("plan".into(), Type::String)],
        stats: QueryStats {
            rows_scanned,
            rows_returned,
            splits_touched,
            elapsed: start.elapsed(),
        },
        rows,
    })
}

/// A transaction the caller holds: the gRPC API keeps transactions by id
/// across requests and runs each statement in the one the request names.
pub enum TxnRef<'a> {
    ReadOnly(&'a mut rowtree_db::ReadOnlyTransaction),
    ReadWrite(&'a mut ReadWriteTransaction),
}

/// How [`execute_in`] runs a statement (Spanner's `QueryMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QueryMode {
    /// Run it and return its rows.
    #[default]
    Normal,
    /// Plan it only: nothing is read or written; the result has the
    /// columns, no rows, and the plan.
    Plan,
    /// Run it and also return the plan with the rows each operator produced.
    Profile,
}

/// What [`execute_in`] returns: the statement's result and, in the `Plan`
/// and `Profile` modes, its described plan (with the execution's counters
/// in `Profile` mode).
#[derive(Debug, Clone, PartialEq)]
pub struct Executed {
    pub result: ExecuteResult,
    pub plan: Option<PlanTree>,
}

/// Runs one query or DML statement in a transaction the caller holds.
///
/// DML needs a read-write transaction; DDL and BEGIN/COMMIT/ROLLBACK are
/// refused (the API has requests of their own for those). A query's rows go
/// to `sink` when one is given, as in [`Session::execute_streaming`]. What
/// it buffers draws from the server's memory pool
/// ([`crate::limits::server_memory_pool`]).
pub fn execute_in(
    txn: TxnRef<'_>,
    sql: &str,
    params: &Params,
    mode: QueryMode,
    sink: Option<&mut RowSink<'_>>,
) -> std::result::Result<Executed, SqlError> {
    crate::limits::check_statement(sql, params).map_err(|e| e.render(sql))?;
    let (db, version) = match &txn {
        TxnRef::ReadOnly(t) => (t.database(), t.catalog().version()),
        TxnRef::ReadWrite(t) => (t.database(), t.catalog().version()),
    };
    let cache = crate::cache::statement_cache(db);
    let prepared = cache
        .prepare(db.dialect(), version, sql, params)
        .map_err(|e| Error::from(e).render_with_snippet(sql))?;
    let pool = crate::limits::server_memory_pool();
    execute_parsed(
        txn,
        &prepared.stmt,
        params,
        mode,
        sink,
        pool,
        Some((&prepared, &cache)),
    )
    .map_err(|e| e.render_with_snippet(sql))
}

pub(crate) fn execute_parsed(
    txn: TxnRef<'_>,
    stmt: &Statement,
    params: &Params,
    mode: QueryMode,
    sink: Option<&mut RowSink<'_>>,
    pool: &Arc<MemoryPool>,
    cached: Cached<'_>,
) -> Result<Executed> {
    match (&stmt.kind, txn) {
        (StatementKind::Query(q), txn) => {
            let source: &mut dyn DataSource = match txn {
                TxnRef::ReadOnly(t) => t,
                TxnRef::ReadWrite(t) => t,
            };
            let catalog = source.catalog();
            match mode {
                QueryMode::Plan => {
                    let plan = crate::plan_query(&catalog, q, params)?;
                    Ok(Executed {
                        result: ExecuteResult::Query(QueryResult {
                            columns: plan.columns().to_vec(),
                            rows: Vec::new(),
                            stats: QueryStats::default(),
                        }),
                        plan: Some(plan.describe(false)),
                    })
                }
                QueryMode::Normal | QueryMode::Profile => {
                    let start = Instant::now();
                    let plan = plan(&catalog, q, params, cached)?;
                    let mut rows = Vec::new();
                    let mut returned = 0u64;
                    {
                        let columns = plan.columns();
                        let mut sink = sink;
                        let mut iter = plan.execute(source, pool)?;
                        let mut held = iter.reserve("the result (not streamed)");
                        for row in iter.by_ref() {
                            let row = row?;
                            returned += 1;
                            match sink.as_mut() {
                                Some(f) => {
                                    if !f(columns, row) {
                                        break;
                                    }
                                }
                                None => {
                                    held.hold(&row)?;
                                    rows.push(row);
                                }
                            }
                        }
                    }
                    let tree = plan.describe(true);
                    let (scanned, splits) = tree.scan_totals();
                    Ok(Executed {
                        result: ExecuteResult::Query(QueryResult {
                            columns: plan.columns().to_vec(),
                            stats: QueryStats {
                                rows_scanned: scanned,
                                rows_returned: returned,
                                splits_touched: splits,
                                elapsed: start.elapsed(),
                            },
                            rows,
                        }),
                        plan: (mode == QueryMode::Profile).then_some(tree),
                    })
                }
            }
        }
        (
            kind @ (StatementKind::Insert(_) | StatementKind::Update(_) | StatementKind::Delete(_)),
            TxnRef::ReadWrite(txn),
        ) => match mode {
            QueryMode::Plan => {
                let explained =
                    crate::dml::explain(txn, kind, params, pool, crate::dml::Mode::Plan)?;
                Ok(Executed {
                    result: ExecuteResult::Dml {
                        row_count: 0,
                        returning: None,
                    },
                    plan: Some(crate::explain::describe_dml(&explained, false)),
                })
            }
            QueryMode::Normal | QueryMode::Profile => {
                let result = crate::dml::execute(txn, kind, params, pool)?;
                Ok(Executed { result, plan: None })
            }
        },
        (StatementKind::Insert(_) | StatementKind::Update(_) | StatementKind::Delete(_), _) => {
            Err(Error::invalid(
                "DML statements can only be performed in a read-write or partitioned-dml \
                 transaction",
            )
            .at(stmt.span))
        }
        (StatementKind::Explain { .. }, _) => Err(Error::invalid(
            "EXPLAIN is not supported here; use the query mode PLAN or PROFILE",
        )
        .at(stmt.span)),
        _ => Err(
            Error::invalid("DDL statements are not supported here; use UpdateDatabaseDdl")
                .at(stmt.span),
        ),
    }
}
