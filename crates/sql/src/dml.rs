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
//! EXPLAIN of DML (`explain`) stops after planning (`Mode::Plan`), or,
//! for EXPLAIN ANALYZE, runs the statement and keeps its plan and counters
//! (`Mode::Analyze`) in a transaction the session then rolls back.

use std::sync::Arc;

use rowtree_db::{KeySet, Mutation, ReadWriteTransaction, WriteKind};
use rowtree_expr::BoundExpr;
use rowtree_parser::ast::{self, Expr, Hint, Ident, SelectItem, Span, StatementKind, TableExpr};
use rowtree_schema::{Catalog, Table};
use rowtree_types::{Type, Value};

use crate::binder::{Binder, ExprScope};
use crate::error::{Error, Result};
use crate::executor::{ExecContext, RowIter};
use crate::limits::MemoryPool;
use crate::plan::{Node, NodeKind, Plan};
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
    run(txn, kind, params, pool, Mode::Run, &mut None)
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
    run(txn, kind, params, pool, mode, &mut out)?;
    out.ok_or_else(|| Error::internal("DML statement produced no plan"))
}

fn run(
    txn: &mut ReadWriteTransaction,
    kind: &StatementKind,
    params: &Params,
    pool: &Arc<MemoryPool>,
    mode: Mode,
    out: &mut Option<Explained>,
) -> Result<ExecuteResult> {
    let catalog = txn.catalog();
    match kind {
        StatementKind::Insert(ins) => insert(txn, &catalog, ins, params, pool, mode, out),
        StatementKind::Update(up) => update(txn, &catalog, up, params, pool, mode, out),
        StatementKind::Delete(del) => delete(txn, &catalog, del, params, pool, mode, out),
        _ => Err(Error::internal("not a DML statement")),
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
    Ok(b.bind_in(e, es)?
        .coerce_literal_for_assignment(&column.ty)?)
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
    exprs: &[BoundExpr],
    columns: Vec<(String, Type)>,
    rows: &[Vec<Value>],
) -> Result<QueryResult> {
    let mut out = Vec::new();
    for r in rows {
        out.push(
            exprs
                .iter()
                .map(|e| cx.eval(e, r))
                .collect::<Result<Vec<_>>>()?,
        );
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
    let mut rows = Vec::new();
    if is_query {
        let src = RowIter::new(&plan, txn, pool).collect::<Result<Vec<_>>>()?;
        for r in src {
            rows.push(
                r.into_iter()
                    .zip(&positions)
                    .map(|(v, &p)| coerce(v, &t.columns[p], ins.span))
                    .collect::<Result<Vec<_>>>()?,
            );
        }
    } else {
        let mut cx = ExecContext::new(txn, &plan, pool);
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
    let written = txn.apply_dml(vec![mutation])?;
    let new_rows: Vec<Vec<Value>> = written
        .into_iter()
        .filter(|w| w.table.eq_ignore_ascii_case(&t.name))
        .filter_map(|w| w.new)
        .collect();
    let row_count = new_rows.len() as u64;
    let returning = match returning {
        Some((exprs, columns)) => {
            let mut cx = ExecContext::new(txn, &plan, pool);
            Some(returning_result(&mut cx, &exprs, columns, &new_rows)?)
        }
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
    catalog: &Catalog,
    up: &ast::Update,
    params: &Params,
    pool: &Arc<MemoryPool>,
    mode: Mode,
    out: &mut Option<Explained>,
) -> Result<ExecuteResult> {
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
    let plan = finish_plan(&b, catalog, node)?;
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
    let old_rows = RowIter::new(&plan, txn, pool).collect::<Result<Vec<_>>>()?;
    let keys = t.key_column_positions();
    let mut rows = Vec::new();
    {
        let mut cx = ExecContext::new(txn, &plan, pool);
        cx.pending_commit_timestamp = true;
        for old in &old_rows {
            let mut r: Vec<Value> = keys.iter().map(|&k| old[k].clone()).collect();
            for (pos, e, span) in &assigned {
                let col = &t.columns[*pos];
                let v = match e {
                    Some(e) => cx.eval(e, old)?,
                    None => match &col.default {
                        Some(d) => cx.eval(&d.expr, old)?,
                        None => Value::Null,
                    },
                };
                r.push(coerce(v, col, *span)?);
            }
            rows.push(r);
        }
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
    let written = txn.apply_dml(vec![Mutation::Write {
        kind: WriteKind::Update,
        table: t.name.clone(),
        columns,
        rows,
    }])?;
    let returning = match returning {
        Some((exprs, columns)) => {
            let new_rows: Vec<Vec<Value>> = written
                .into_iter()
                .filter(|w| w.table.eq_ignore_ascii_case(&t.name))
                .filter_map(|w| w.new)
                .collect();
            let mut cx = ExecContext::new(txn, &plan, pool);
            Some(returning_result(&mut cx, &exprs, columns, &new_rows)?)
        }
        None => None,
    };
    finish(mode, out, head, Some(plan), row_count, returning)
}

fn delete(
    txn: &mut ReadWriteTransaction,
    catalog: &Catalog,
    del: &ast::Delete,
    params: &Params,
    pool: &Arc<MemoryPool>,
    mode: Mode,
    out: &mut Option<Explained>,
) -> Result<ExecuteResult> {
    let t = table(catalog, &del.table)?;
    let b = binder(catalog, params);
    let (node, scope) = matching_rows(&b, t, &del.table, del.alias.as_ref(), &del.where_clause)?;
    let returning = bind_returning(&b, &scope, del.returning.as_ref())?;
    let plan = finish_plan(&b, catalog, node)?;
    let mut head = format!("Delete {}", t.name);
    if returning.is_some() {
        head.push_str(THEN_RETURN);
    }
    if mode == Mode::Plan {
        return finish(mode, out, head, Some(plan), 0, None);
    }
    let old_rows = RowIter::new(&plan, txn, pool).collect::<Result<Vec<_>>>()?;
    let keys = t.key_column_positions();
    let key_set = KeySet::keys(
        old_rows
            .iter()
            .map(|r| keys.iter().map(|&k| r[k].clone()).collect()),
    );
    let row_count = old_rows.len() as u64;
    if row_count > 0 {
        txn.apply_dml(vec![Mutation::Delete {
            table: t.name.clone(),
            key_set,
        }])?;
    }
    let returning = match returning {
        Some((exprs, columns)) => {
            let mut cx = ExecContext::new(txn, &plan, pool);
            Some(returning_result(&mut cx, &exprs, columns, &old_rows)?)
        }
        None => None,
    };
    finish(mode, out, head, Some(plan), row_count, returning)
}
