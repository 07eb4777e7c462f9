//! DML: INSERT, UPDATE and DELETE as mutations applied into the transaction.
//!
//! Each statement is turned into [`Mutation`]s and applied at once with
//! [`ReadWriteTransaction::apply_dml`], so the transaction's later reads
//! (and later DML) see it, and the row count is exact:
//!
//! * **INSERT** evaluates its VALUES rows (DEFAULT takes the column default)
//!   or runs its query, coerces each value to its column's type, and writes
//!   with `Insert` / `InsertOrUpdate` / `InsertOrIgnore`.
//! * **UPDATE** and **DELETE** find their rows with an ordinary plan — a
//!   scan of the base table, WHERE pushed into key ranges — then write the
//!   new values of the assigned columns (computed from the old row) by key,
//!   or delete the keys.
//! * **THEN RETURN** evaluates its items over the rows written (the old rows
//!   for DELETE).
//!
//! What a statement collects before it writes — the rows of INSERT, the new
//! values of UPDATE, the keys of DELETE, the rows THEN RETURN returns — is
//! held in memory, so it is counted like an operator's buffer: against the
//! query's memory limit and the server's pool ([`crate::limits`]), failing
//! with RESOURCE_EXHAUSTED that names the statement, and given back when
//! the statement ends. The rows are read and computed one at a time
//! (nothing holds the rows read as well as those to write), and each
//! collected row is also counted against the per-commit mutation limit
//! ([`MAX_MUTATIONS`], with what the transaction's earlier DML applied): a
//! statement that would cross it fails at the row that does, not after
//! reading everything it matches.
//!
//! Partitioned DML ([`crate::partitioned`]) runs UPDATE and DELETE a
//! `Partition` at a time: the scan starts after the last key the previous
//! partition took, and stops collecting while the partition is still well
//! within both limits.
//!
//! EXPLAIN of DML (`explain`) stops after planning (`Mode::Plan`), or,
//! for EXPLAIN ANALYZE, runs the statement and keeps its plan and counters
//! (`Mode::Analyze`) in a transaction the session then rolls back.

use std::rc::Rc;
use std::sync::Arc;

use rowtree_db::write::MAX_MUTATIONS;
use rowtree_db::{Key, KeySet, Mutation, ReadWriteTransaction, Savepoint, WriteKind};
use rowtree_expr::BoundExpr;
use rowtree_parser::ast::{self, Expr, Hint, Ident, SelectItem, Span, StatementKind, TableExpr};
use rowtree_schema::{Catalog, Table};
use rowtree_types::{Type, Value};

use crate::binder::{Binder, ExprScope};
use crate::error::{Error, Result};
use crate::executor::{ExecContext, Memory, Reservation, RowIter};
use crate::limits::MemoryPool;
use crate::plan::{Node, NodeKind, Plan, ScanNode};
use crate::result::{ExecuteResult, QueryResult, QueryStats};
use crate::scope::RowScope;
use crate::Params;

/// Runs one DML statement in `txn`; what its plans buffer draws from `pool`.
pub(crate) fn execute(
    txn: &mut ReadWriteTransaction,
    kind: &StatementKind,
    params: &Params,
    pool: &Arc<MemoryPool>,
) -> Result<ExecuteResult> {
    run(txn, kind, params, pool, Mode::Run, &mut None, None)
}

/// One partition of a partitioned UPDATE or DELETE: where it starts, how
/// much it may take, and where the next one starts.
#[derive(Debug, Clone)]
pub(crate) struct Partition {
    /// Start after this primary key (`None`: at the start of the table).
    pub after: Option<Key>,
    /// Take no row that would bring the statement's mutations past this.
    pub max_mutations: usize,
    /// Take no row once the rows taken hold this many bytes.
    pub max_bytes: usize,
    /// Set when the partition stopped before the end of the table: the key
    /// of the last row it took, after which the next partition starts.
    pub next: Option<Key>,
}

/// Runs one partition of an UPDATE or DELETE in `txn` (see [`Partition`]);
/// returns the rows it changed.
pub(crate) fn execute_partition(
    txn: &mut ReadWriteTransaction,
    kind: &StatementKind,
    params: &Params,
    pool: &Arc<MemoryPool>,
    partition: &mut Partition,
) -> Result<u64> {
    partition.next = None;
    match run(
        txn,
        kind,
        params,
        pool,
        Mode::Run,
        &mut None,
        Some(partition),
    )? {
        ExecuteResult::Dml { row_count, .. } => Ok(row_count),
        _ => Err(Error::internal("DML statement returned no row count")),
    }
}

/// How far to take a DML statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Execute it.
    Run,
    /// Bind and plan it only (plain EXPLAIN): nothing is read or written.
    Plan,
    /// Execute it and keep its plan and counters (EXPLAIN ANALYZE; the
    /// caller rolls the transaction back).
    Analyze,
}

/// What EXPLAIN shows of a DML statement.
pub(crate) struct Explained {
    /// The DML operator, e.g. `Update T: set Name`.
    pub head: String,
    /// The plan of the rows it reads (none for INSERT ... VALUES).
    pub plan: Option<Plan>,
    /// Rows inserted, updated or deleted (EXPLAIN ANALYZE).
    pub affected: u64,
}

/// Plans (and with [`Mode::Analyze`] executes) one DML statement for
/// EXPLAIN. With [`Mode::Plan`] it neither reads nor writes `txn`.
pub(crate) fn explain(
    txn: &mut ReadWriteTransaction,
    kind: &StatementKind,
    params: &Params,
    pool: &Arc<MemoryPool>,
    mode: Mode,
) -> Result<Explained> {
    let mut out = None;
    run(txn, kind, params, pool, mode, &mut out, None)?;
    out.ok_or_else(|| Error::internal("DML statement produced no plan"))
}

fn run(
    txn: &mut ReadWriteTransaction,
    kind: &StatementKind,
    params: &Params,
    pool: &Arc<MemoryPool>,
    mode: Mode,
    out: &mut Option<Explained>,
    partition: Option<&mut Partition>,
) -> Result<ExecuteResult> {
    let catalog = txn.catalog();
    match (kind, partition) {
        (StatementKind::Insert(ins), None) => insert(txn, &catalog, ins, params, pool, mode, out),
        (StatementKind::Update(up), part) => update(txn, up, params, pool, mode, out, part),
        (StatementKind::Delete(del), part) => delete(txn, del, params, pool, mode, out, part),
        (StatementKind::Insert(_), Some(_)) => Err(Error::invalid(
            "Partitioned DML runs UPDATE and DELETE statements only",
        )),
        _ => Err(Error::internal("not a DML statement")),
    }
}

/// What a DML statement collects to write (and to return), counted as it
/// grows: its bytes against the query's memory, its mutations against the
/// per-commit limit together with those the transaction already holds.
struct Collector {
    held: Reservation,
    /// Mutations the transaction's earlier DML applied.
    before: usize,
    /// Mutations of the rows collected so far.
    mutations: usize,
    /// Mutations one collected row counts as (as [`Mutation::count`]
    /// counts them: one per column written, one per key deleted).
    per_row: usize,
    rows: u64,
}

impl Collector {
    fn new(
        txn: &ReadWriteTransaction,
        memory: &Rc<Memory>,
        what: &'static str,
        per_row: usize,
    ) -> Collector {
        Collector {
            held: memory.reserve(what),
            before: txn.mutation_count(),
            mutations: 0,
            per_row: per_row.max(1),
            rows: 0,
        }
    }

    /// Whether `partition` has taken all it may: one more row would pass
    /// its share of the mutation limit, or its rows hold its share of
    /// memory. A partition always takes at least one row.
    fn full(&self, partition: Option<&Partition>) -> bool {
        partition.is_some_and(|p| {
            self.rows > 0
                && (self.mutations + self.per_row > p.max_mutations
                    || self.held.bytes() >= p.max_bytes)
        })
    }

    /// Counts one more row to write, of which `held` stays in memory: fails
    /// if the transaction would pass the mutation limit, or the memory its
    /// budget.
    fn take(&mut self, held: &[Value]) -> Result<()> {
        self.mutations += self.per_row;
        let total = self.before + self.mutations;
        if total > MAX_MUTATIONS {
            return Err(Error::invalid(format!(
                "The transaction contains too many mutations: {total} with the {} rows this \
                 statement has found so far, the limit is {MAX_MUTATIONS}; the statement \
                 stopped reading there. Write fewer rows per transaction (partitioned DML \
                 splits an UPDATE or DELETE into transactions of its own)",
                self.rows + 1
            )));
        }
        self.held.hold(held)?;
        self.rows += 1;
        Ok(())
    }

    /// Counts a row that stays in memory without being written (an old row
    /// kept for THEN RETURN).
    fn hold(&mut self, row: &[Value]) -> Result<()> {
        self.held.hold(row)
    }
}

/// The base-table scan a DML plan reads its rows from, when the plan is
/// that scan under filters and projections only (so its rows come in key
/// order, which a partition's resumption needs).
fn base_scan(node: &mut Node) -> Option<&mut ScanNode> {
    match &mut node.kind {
        NodeKind::Scan(scan) if scan.access.index.is_none() && !scan.access.reverse => {
            Some(&mut **scan)
        }
        NodeKind::Filter { input, .. } | NodeKind::Project { input, .. } => base_scan(input),
        _ => None,
    }
}

/// Makes `plan` read the rows of `partition` only: from after its start
/// key. A plan whose rows might not come in key order is read whole, as
/// one partition.
fn restrict_to<'p>(
    plan: &mut Plan,
    partition: Option<&'p mut Partition>,
) -> Option<&'p mut Partition> {
    let partition = partition?;
    match base_scan(&mut plan.root) {
        Some(scan) => {
            scan.access.after = partition.after.clone();
            Some(partition)
        }
        None if partition.after.is_none() => {
            partition.max_mutations = usize::MAX;
            partition.max_bytes = usize::MAX;
            Some(partition)
        }
        None => None,
    }
}

/// Records what EXPLAIN shows (outside [`Mode::Run`]) and returns the
/// statement's result.
fn finish(
    mode: Mode,
    out: &mut Option<Explained>,
    head: String,
    plan: Option<Plan>,
    row_count: u64,
    returning: Option<QueryResult>,
) -> Result<ExecuteResult> {
    if mode != Mode::Run {
        *out = Some(Explained {
            head,
            plan,
            affected: row_count,
        });
    }
    Ok(ExecuteResult::Dml {
        row_count,
        returning,
    })
}

const THEN_RETURN: &str = " (then return)";

fn table<'c>(catalog: &'c Catalog, name: &Ident) -> Result<&'c Table> {
    catalog
        .table(&name.value)
        .ok_or_else(|| Error::invalid_at(name.span, format!("Table not found: {}", name.value)))
}

fn binder<'c>(catalog: &'c Catalog, params: &Params) -> Binder<'c> {
    let mut b = Binder::new(catalog, params);
    b.options.allow_pending_commit_timestamp = true;
    b
}

/// The scope of a table's full row under `alias`.
fn table_scope(t: &Table, alias: &str) -> RowScope {
    RowScope::single(
        alias,
        t.columns
            .iter()
            .map(|c| (c.name.clone(), c.ty.clone(), !c.hidden, None))
            .collect(),
    )
}

/// Bound THEN RETURN items and their output columns.
type Returning = (Vec<BoundExpr>, Vec<(String, Type)>);

/// THEN RETURN items (if the statement has them) bound over the table row.
fn bind_returning(
    b: &Binder<'_>,
    scope: &RowScope,
    items: Option<&ast::Returning>,
) -> Result<Option<Returning>> {
    let Some(items) = items else {
        return Ok(None);
    };
    let es = ExprScope::new(b, scope, None, "THEN RETURN");
    let mut exprs = Vec::new();
    let mut columns = Vec::new();
    for item in items {
        match item {
            SelectItem::Expr { expr, alias } => {
                let e = b.bind_in(expr, &es)?;
                let name = match (alias, expr) {
                    (Some(a), _) => a.value.clone(),
                    (None, Expr::Column { path, .. }) => {
                        path.last().map(|i| i.value.clone()).unwrap_or_default()
                    }
                    _ => String::new(),
                };
                columns.push((name, e.ty().clone()));
                exprs.push(e);
            }
            SelectItem::Star { span, .. } | SelectItem::QualifiedStar { span, .. } => {
                for &slot in &scope.star {
                    let c = &scope.columns[slot];
                    let path = vec![Ident {
                        value: c.name.clone(),
                        span: *span,
                    }];
                    exprs.push(b.bind_in(&Expr::Column { path, span: *span }, &es)?);
                    columns.push((c.name.clone(), c.ty.clone()));
                }
            }
        }
    }
    Ok(Some((exprs, columns)))
}

fn finish_plan(b: &Binder<'_>, catalog: &Catalog, root: Node) -> Result<Plan> {
    let mut plan = Plan {
        root,
        columns: Vec::new(),
        subqueries: b.take_subqueries(),
        params: b.param_values.clone(),
    };
    let used = b.used.borrow();
    crate::planner::optimize(
        &mut plan,
        &crate::planner::Context {
            catalog,
            used: &used,
        },
    )?;
    Ok(plan)
}

/// An INSERT VALUES item or UPDATE SET value bound for `column`: a FLOAT64
/// literal going into a NUMERIC column is a NUMERIC literal (GoogleSQL's
/// literal coercion); everything else is coerced when written ([`coerce`]).
fn assigned_value(
    b: &Binder<'_>,
    e: &Expr,
    es: &ExprScope<'_, '_>,
    column: &rowtree_schema::Column,
) -> Result<BoundExpr> {
    Ok(b.bind_in(e, es)?.coerce_literal_for_assignment_with(
        &column.ty,
        b.options.protos.as_deref(),
        b.options.exact_numeric,
    )?)
}

/// A written value in its column's type. Besides GoogleSQL's implicit
/// coercions, a FLOAT64 value goes into a FLOAT32 column when it fits (a
/// FLOAT64 literal or parameter coerces to FLOAT32 in GoogleSQL; clients send
/// every float parameter as FLOAT64).
fn coerce(value: Value, column: &rowtree_schema::Column, span: Span) -> Result<Value> {
    if let (Value::Float64(f), Type::Float32) = (&value, &column.ty) {
        let narrowed = *f as f32;
        if f.is_finite() && narrowed.is_infinite() {
            return Err(Error::out_of_range(format!(
                "Value {f} is out of range for column {}, which has type FLOAT32",
                column.name
            ))
            .at(span));
        }
        return Ok(Value::Float32(narrowed));
    }
    let from = value.scalar_type();
    rowtree_expr::coerce_value(value, &column.ty).map_err(|e| {
        // A string where a DATE, TIMESTAMP or UUID goes is parsed: say why
        // the text does not parse rather than that the types differ.
        if from == Some(Type::String)
            && matches!(column.ty, Type::Date | Type::Timestamp | Type::Uuid)
        {
            return Error::invalid_at(
                span,
                format!(
                    "Invalid value for column {}, which has type {}: {}",
                    column.name,
                    column.ty,
                    e.message()
                ),
            );
        }
        Error::invalid_at(
            span,
            format!(
                "Value has type {} which cannot be inserted into column {}, which has type {}",
                from.map(|t| t.to_string())
                    .unwrap_or_else(|| "ARRAY".into()),
                column.name,
                column.ty
            ),
        )
    })
}

fn returning_result(
    cx: &mut ExecContext<'_>,
    (exprs, columns): Returning,
    rows: &[Vec<Value>],
) -> Result<QueryResult> {
    let mut out = Vec::new();
    let mut held = cx.reserve("THEN RETURN");
    for r in rows {
        let row = exprs
            .iter()
            .map(|e| cx.eval(e, r))
            .collect::<Result<Vec<_>>>()?;
        held.hold(&row)?;
        out.push(row);
    }
    Ok(QueryResult {
        columns,
        stats: QueryStats {
            rows_returned: out.len() as u64,
            ..QueryStats::default()
        },
        rows: out,
    })
}

fn insert(
    txn: &mut ReadWriteTransaction,
    catalog: &Catalog,
    ins: &ast::Insert,
    params: &Params,
    pool: &Arc<MemoryPool>,
    mode: Mode,
    out: &mut Option<Explained>,
) -> Result<ExecuteResult> {
    let t = table(catalog, &ins.table)?;
    let b = binder(catalog, params);
    let mut positions = Vec::new();
    for c in &ins.columns {
        let (pos, col) = t.column(&c.value).ok_or_else(|| {
            Error::invalid_at(
                c.span,
                format!("Column {} is not present in table {}", c.value, t.name),
            )
        })?;
        if positions.contains(&pos) {
            return Err(Error::invalid_at(
                c.span,
                format!("INSERT has columns with duplicate name: {}", col.name),
            ));
        }
        if col.is_generated() {
            return Err(Error::invalid_at(
                c.span,
                format!("Cannot INSERT value on non-writable column: {}", col.name),
            ));
        }
        positions.push(pos);
    }
    let empty = RowScope::default();
    let mut value_rows: Vec<Vec<(Option<BoundExpr>, Span)>> = Vec::new();
    let root = match &ins.source {
        ast::InsertSource::Values(rows) => {
            let es = ExprScope::new(&b, &empty, None, "INSERT VALUES");
            for row in rows {
                if row.len() != positions.len() {
                    let span = row.first().map(|e| e.span()).unwrap_or(ins.span);
                    return Err(Error::invalid_at(
                        span,
                        format!(
                            "Inserted row has wrong column count; Has {}, expected {}",
                            row.len(),
                            positions.len()
                        ),
                    ));
                }
                let mut bound = Vec::new();
                for (e, &p) in row.iter().zip(&positions) {
                    bound.push(match e {
                        Expr::Default { span } => (None, *span),
                        e => (Some(assigned_value(&b, e, &es, &t.columns[p])?), e.span()),
                    });
                }
                value_rows.push(bound);
            }
            Node::new(NodeKind::Values { rows: vec![] }, 0)
        }
        ast::InsertSource::Query(q) => {
            let out = b.query(q, None)?;
            if out.columns.len() != positions.len() {
                return Err(Error::invalid_at(
                    q.span,
                    format!(
                        "Inserted row has wrong column count; Has {}, expected {}",
                        out.columns.len(),
                        positions.len()
                    ),
                ));
            }
            out.node
        }
    };
    let scope = table_scope(t, &t.name);
    let returning = bind_returning(&b, &scope, ins.returning.as_ref())?;
    let is_query = matches!(ins.source, ast::InsertSource::Query(_));
    let plan = finish_plan(&b, catalog, root)?;
    let verb = match ins.mode {
        ast::InsertMode::Plain => "Insert",
        ast::InsertMode::OrUpdate => "InsertOrUpdate",
        ast::InsertMode::OrIgnore => "InsertOrIgnore",
    };
    let names: Vec<&str> = positions
        .iter()
        .map(|&p| t.columns[p].name.as_str())
        .collect();
    let mut head = format!("{verb} {} ({})", t.name, names.join(", "));
    if !is_query {
        let n = value_rows.len();
        head.push_str(&format!(": {n} row{}", if n == 1 { "" } else { "s" }));
    }
    if returning.is_some() {
        head.push_str(THEN_RETURN);
    }
    if mode == Mode::Plan {
        return finish(mode, out, head, is_query.then_some(plan), 0, None);
    }
    let memory = Memory::new(pool);
    let mut collected = Collector::new(txn, &memory, "an INSERT", positions.len());
    let mut rows = Vec::new();
    if is_query {
        for r in RowIter::with_memory(&plan, txn, &memory) {
            let row = r?
                .into_iter()
                .zip(&positions)
                .map(|(v, &p)| coerce(v, &t.columns[p], ins.span))
                .collect::<Result<Vec<_>>>()?;
            collected.take(&row)?;
            rows.push(row);
        }
    } else {
        let mut cx = ExecContext::with_memory(txn, &plan, &memory);
        cx.pending_commit_timestamp = true;
        let nulls = vec![Value::Null; t.columns.len()];
        for row in &value_rows {
            let mut values = Vec::new();
            for ((e, span), &p) in row.iter().zip(&positions) {
                let col = &t.columns[p];
                let v = match e {
                    Some(e) => cx.eval(e, &[])?,
                    None => match &col.default {
                        Some(d) => cx.eval(&d.expr, &nulls)?,
                        None => Value::Null,
                    },
                };
                values.push(coerce(v, col, *span)?);
            }
            collected.take(&values)?;
            rows.push(values);
        }
    }
    let kind = match ins.mode {
        ast::InsertMode::Plain => WriteKind::Insert,
        ast::InsertMode::OrUpdate => WriteKind::InsertOrUpdate,
        ast::InsertMode::OrIgnore => WriteKind::InsertOrIgnore,
    };
    if rows.is_empty() {
        return finish(mode, out, head, is_query.then_some(plan), 0, None);
    }
    let mutation = Mutation::Write {
        kind,
        table: t.name.clone(),
        columns: positions
            .iter()
            .map(|&p| t.columns[p].name.clone())
            .collect(),
        rows,
    };
    let saved = returning.is_some().then(|| txn.savepoint());
    let written = txn.apply_dml(vec![mutation])?;
    // INSERT OR IGNORE writes no row for a key that exists.
    let row_count = written
        .iter()
        .filter(|w| w.table.eq_ignore_ascii_case(&t.name) && w.new.is_some())
        .count() as u64;
    let returning = match returning {
        Some(returning) => Some(undo_on_error(txn, saved, |txn| {
            let new_rows = written_rows(written, &t.name, &mut collected)?;
            let mut cx = ExecContext::with_memory(txn, &plan, &memory);
            returning_result(&mut cx, returning, &new_rows)
        })?),
        None => None,
    };
    finish(
        mode,
        out,
        head,
        is_query.then_some(plan),
        row_count,
        returning,
    )
}

/// The rows of `t` matching `where_clause`, as a plan over the base table.
fn matching_rows<'c>(
    b: &Binder<'c>,
    t: &Table,
    name: &Ident,
    alias: Option<&Ident>,
    where_clause: &Expr,
) -> Result<(Node, RowScope)> {
    let te = TableExpr::Table {
        path: vec![name.clone()],
        alias: alias.cloned(),
        hints: vec![Hint {
            name: Ident {
                value: "FORCE_INDEX".into(),
                span: name.span,
            },
            value: Expr::Column {
                path: vec![Ident {
                    value: "_BASE_TABLE".into(),
                    span: name.span,
                }],
                span: name.span,
            },
        }],
        span: name.span,
    };
    let (node, scope) = b.from(&te, None)?;
    let _ = t;
    let node = b.apply_where(where_clause, &scope, node, None)?;
    Ok((node, scope))
}

fn update(
    txn: &mut ReadWriteTransaction,
    up: &ast::Update,
    params: &Params,
    pool: &Arc<MemoryPool>,
    mode: Mode,
    out: &mut Option<Explained>,
    partition: Option<&mut Partition>,
) -> Result<ExecuteResult> {
    let catalog = &*txn.catalog();
    let t = table(catalog, &up.table)?;
    let b = binder(catalog, params);
    let (node, scope) = matching_rows(&b, t, &up.table, up.alias.as_ref(), &up.where_clause)?;
    let es = ExprScope::new(&b, &scope, None, "UPDATE SET");
    let mut assigned: Vec<(usize, Option<BoundExpr>, Span)> = Vec::new();
    for (path, value) in &up.assignments {
        let Some(last) = path.last() else { continue };
        if path.len() == 2
            && !up
                .alias
                .as_ref()
                .map(|a| a.matches(&path[0].value))
                .unwrap_or(false)
            && !up.table.matches(&path[0].value)
        {
            return Err(Error::invalid_at(
                path[0].span,
                format!("Unrecognized name: {}", path[0].value),
            ));
        }
        let (pos, col) = t.column(&last.value).ok_or_else(|| {
            Error::invalid_at(last.span, format!("Unrecognized name: {}", last.value))
        })?;
        if t.is_key_column(pos) || col.is_generated() {
            return Err(Error::invalid_at(
                last.span,
                format!("Cannot UPDATE value on non-writable column: {}", col.name),
            ));
        }
        if assigned.iter().any(|(p, _, _)| *p == pos) {
            return Err(Error::invalid_at(
                last.span,
                format!("Update item {} assigned more than once", col.name),
            ));
        }
        let e = match value {
            Expr::Default { .. } => None,
            e => Some(assigned_value(&b, e, &es, col)?),
        };
        assigned.push((pos, e, value.span()));
    }
    let returning = bind_returning(&b, &scope, up.returning.as_ref())?;
    let mut plan = finish_plan(&b, catalog, node)?;
    let partition = restrict_to(&mut plan, partition);
    let set: Vec<&str> = assigned
        .iter()
        .map(|(p, _, _)| t.columns[*p].name.as_str())
        .collect();
    let mut head = format!("Update {}: set {}", t.name, set.join(", "));
    if returning.is_some() {
        head.push_str(THEN_RETURN);
    }
    if mode == Mode::Plan {
        return finish(mode, out, head, Some(plan), 0, None);
    }
    let keys = t.key_column_positions();
    let memory = Memory::new(pool);
    let mut collected = Collector::new(txn, &memory, "an UPDATE", keys.len() + assigned.len());
    let mut rows = Vec::new();
    let mut stopped = false;
    {
        let mut iter = RowIter::with_memory(&plan, txn, &memory);
        while let Some(old) = iter.next() {
            let old = old?;
            if collected.full(partition.as_deref()) {
                stopped = true;
                break;
            }
            let cx = iter.context();
            cx.pending_commit_timestamp = true;
            let mut r: Vec<Value> = keys.iter().map(|&k| old[k].clone()).collect();
            for (pos, e, span) in &assigned {
                let col = &t.columns[*pos];
                let v = match e {
                    Some(e) => cx.eval(e, &old)?,
                    None => match &col.default {
                        Some(d) => cx.eval(&d.expr, &old)?,
                        None => Value::Null,
                    },
                };
                r.push(coerce(v, col, *span)?);
            }
            cx.pending_commit_timestamp = false;
            collected.take(&r)?;
            rows.push(r);
        }
    }
    if let Some(p) = partition.filter(|_| stopped) {
        p.next = rows.last().map(|r| r[..keys.len()].to_vec());
    }
    if rows.is_empty() {
        let returning = returning.map(|(_, columns)| QueryResult {
            columns,
            rows: vec![],
            stats: QueryStats::default(),
        });
        return finish(mode, out, head, Some(plan), 0, returning);
    }
    let columns = keys
        .iter()
        .chain(assigned.iter().map(|(p, _, _)| p))
        .map(|&p| t.columns[p].name.clone())
        .collect();
    let row_count = rows.len() as u64;
    let saved = returning.is_some().then(|| txn.savepoint());
    let written = txn.apply_dml(vec![Mutation::Write {
        kind: WriteKind::Update,
        table: t.name.clone(),
        columns,
        rows,
    }])?;
    let returning = match returning {
        Some(returning) => Some(undo_on_error(txn, saved, |txn| {
            let new_rows = written_rows(written, &t.name, &mut collected)?;
            let mut cx = ExecContext::with_memory(txn, &plan, &memory);
            returning_result(&mut cx, returning, &new_rows)
        })?),
        None => None,
    };
    finish(mode, out, head, Some(plan), row_count, returning)
}

fn delete(
    txn: &mut ReadWriteTransaction,
    del: &ast::Delete,
    params: &Params,
    pool: &Arc<MemoryPool>,
    mode: Mode,
    out: &mut Option<Explained>,
    partition: Option<&mut Partition>,
) -> Result<ExecuteResult> {
    let catalog = &*txn.catalog();
    let t = table(catalog, &del.table)?;
    let b = binder(catalog, params);
    let (node, scope) = matching_rows(&b, t, &del.table, del.alias.as_ref(), &del.where_clause)?;
    let returning = bind_returning(&b, &scope, del.returning.as_ref())?;
    let mut plan = finish_plan(&b, catalog, node)?;
    let partition = restrict_to(&mut plan, partition);
    let mut head = format!("Delete {}", t.name);
    if returning.is_some() {
        head.push_str(THEN_RETURN);
    }
    if mode == Mode::Plan {
        return finish(mode, out, head, Some(plan), 0, None);
    }
    let keys = t.key_column_positions();
    let memory = Memory::new(pool);
    let mut collected = Collector::new(txn, &memory, "a DELETE", 1);
    let mut deleted: Vec<Key> = Vec::new();
    // THEN RETURN reads the old rows, so they are kept too.
    let mut old_rows = Vec::new();
    let mut stopped = false;
    for old in RowIter::with_memory(&plan, txn, &memory) {
        let old = old?;
        if collected.full(partition.as_deref()) {
            stopped = true;
            break;
        }
        let key: Key = keys.iter().map(|&k| old[k].clone()).collect();
        collected.take(&key)?;
        deleted.push(key);
        if returning.is_some() {
            collected.hold(&old)?;
            old_rows.push(old);
        }
    }
    if let Some(p) = partition.filter(|_| stopped) {
        p.next = deleted.last().cloned();
    }
    let row_count = deleted.len() as u64;
    let saved = returning.is_some().then(|| txn.savepoint());
    if row_count > 0 {
        txn.apply_dml(vec![Mutation::Delete {
            table: t.name.clone(),
            key_set: KeySet::keys(deleted),
        }])?;
    }
    let returning = match returning {
        Some(returning) => Some(undo_on_error(txn, saved, |txn| {
            let mut cx = ExecContext::with_memory(txn, &plan, &memory);
            returning_result(&mut cx, returning, &old_rows)
        })?),
        None => None,
    };
    finish(mode, out, head, Some(plan), row_count, returning)
}

/// The new rows of `table` among `written`, counted in `held` as they stay
/// in memory (THEN RETURN reads them).
fn written_rows(
    written: Vec<rowtree_db::WrittenRow>,
    table: &str,
    held: &mut Collector,
) -> Result<Vec<Vec<Value>>> {
    let mut rows = Vec::new();
    for row in written
        .into_iter()
        .filter(|w| w.table.eq_ignore_ascii_case(table))
        .filter_map(|w| w.new)
    {
        held.hold(&row)?;
        rows.push(row);
    }
    Ok(rows)
}

/// Runs `f` (THEN RETURN, after the statement's writes were applied); if
/// it fails — an item's error, or its rows over the memory budget — the
/// writes are undone back to `saved`, so a failed statement leaves nothing
/// in the transaction, even one the caller goes on with.
fn undo_on_error<T>(
    txn: &mut ReadWriteTransaction,
    saved: Option<Savepoint>,
    f: impl FnOnce(&mut ReadWriteTransaction) -> Result<T>,
) -> Result<T> {
    let result = f(txn);
    if result.is_err() {
        if let Some(saved) = saved {
            txn.restore(saved);
        }
    }
    result
}
