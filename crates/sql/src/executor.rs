//! Pull-based execution.
//!
//! Each plan [`Node`] becomes an [`Operator`] whose `next` returns one row at
//! a time, pulling from its inputs only as far as it must: a `LIMIT` stops
//! pulling once it has its rows, so the scan below stops reading (a
//! [`RowStream`] reads its ranges in chunks). Operators that need all their
//! input (sort, aggregate, the build side of a hash join, set operations)
//! hold it in memory; everything else streams.
//!
//! Operators do not own the transaction: every `next` receives the
//! [`ExecContext`] that does (through [`DataSource`]), together with the
//! query parameters, the subquery plans and, inside a correlated subquery,
//! the outer row's values. Those are appended after each row before an
//! expression is evaluated, which is where the binder put their slots.

use std::cell::{Cell, RefCell};
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet, VecDeque};
use std::rc::Rc;
use std::sync::atomic::Ordering as AtomicOrdering;
use std::sync::Arc;

use rowtree_db::{
    KeySet, ReadOnlyTransaction, ReadWriteTransaction, RowStream, ScanRequest, ScanStats,
    TreeScanRequest, TreeStream,
};
use rowtree_expr::aggregate::{accumulator, Accumulator, AggregateModifiers, GroupKey};
use rowtree_expr::{BoundExpr, EvalContext, SubqueryKind};
use rowtree_parser::ast::{JoinKind, SetOperator};
use rowtree_schema::Catalog;
use rowtree_types::{Timestamp, Value};

use crate::error::{Error, Result};
use crate::plan::{Counters, JoinMethod, Node, NodeKind, Plan, ScanNode, SortKey, TreeScan};

/// Where a plan reads rows: a transaction.
pub trait DataSource {
    /// The schema the statement runs against.
    fn catalog(&self) -> Arc<Catalog>;
    /// Opens a scan (see [`ScanRequest`]).
    fn scan(&mut self, request: &ScanRequest) -> rowtree_db::Result<RowStream>;
    /// Opens a scan of whole row trees (see [`TreeScanRequest`]).
    fn scan_tree(&mut self, request: &TreeScanRequest) -> rowtree_db::Result<TreeStream>;
    /// The statement's `CURRENT_TIMESTAMP()`.
    fn now(&self) -> Timestamp;
    /// `GET_NEXT_SEQUENCE_VALUE`: only read-write transactions may.
    fn next_sequence_value(&mut self, sequence: &str) -> Result<i64> {
        let _ = sequence;
        Err(Error::new(
            "FAILED_PRECONDITION",
            "GET_NEXT_SEQUENCE_VALUE is not allowed in read-only transactions",
        ))
    }
    /// `GET_INTERNAL_SEQUENCE_STATE`: the last counter handed out, or NULL.
    fn sequence_state(&mut self, sequence: &str) -> Result<Option<i64>>;
    /// The database, for the SPANNER_SYS tables (its split state); `None`
    /// when the source has no database behind it (the tables then fail).
    fn database(&self) -> Option<&rowtree_db::Database> {
        None
    }
}

fn wall_clock() -> Timestamp {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i128)
        .unwrap_or(0);
    Timestamp::from_nanos(nanos / 1000 * 1000)
        .unwrap_or_else(|| Timestamp::from_nanos(0).expect("epoch"))
}

impl DataSource for ReadOnlyTransaction {
    fn catalog(&self) -> Arc<Catalog> {
        ReadOnlyTransaction::catalog(self)
    }
    fn scan(&mut self, request: &ScanRequest) -> rowtree_db::Result<RowStream> {
        ReadOnlyTransaction::scan(self, request)
    }
    fn scan_tree(&mut self, request: &TreeScanRequest) -> rowtree_db::Result<TreeStream> {
        ReadOnlyTransaction::scan_tree(self, request)
    }
    fn now(&self) -> Timestamp {
        wall_clock()
    }
    fn sequence_state(&mut self, sequence: &str) -> Result<Option<i64>> {
        Ok(ReadOnlyTransaction::sequence_state(self, sequence)?)
    }
    fn database(&self) -> Option<&rowtree_db::Database> {
        Some(ReadOnlyTransaction::database(self))
    }
}

impl DataSource for ReadWriteTransaction {
    fn catalog(&self) -> Arc<Catalog> {
        ReadWriteTransaction::catalog(self)
    }
    fn scan(&mut self, request: &ScanRequest) -> rowtree_db::Result<RowStream> {
        ReadWriteTransaction::scan(self, request)
    }
    fn scan_tree(&mut self, request: &TreeScanRequest) -> rowtree_db::Result<TreeStream> {
        ReadWriteTransaction::scan_tree(self, request)
    }
    fn now(&self) -> Timestamp {
        wall_clock()
    }
    fn next_sequence_value(&mut self, sequence: &str) -> Result<i64> {
        Ok(ReadWriteTransaction::next_sequence_value(self, sequence)?)
    }
    fn sequence_state(&mut self, sequence: &str) -> Result<Option<i64>> {
        Ok(ReadWriteTransaction::sequence_state(self, sequence)?)
    }
    fn database(&self) -> Option<&rowtree_db::Database> {
        Some(ReadWriteTransaction::database(self))
    }
}

/// A row.
pub(crate) type Row = Vec<Value>;

/// The memory one query holds in its buffers (sorted rows, groups, a hash
/// join's build side, ...), against the limit it started with
/// ([`crate::limits::query_memory`]). Every buffering operator holds a
/// [`Reservation`] and grows it row by row; a row that would cross the limit
/// fails the query with RESOURCE_EXHAUSTED, so a query can be refused but
/// can never exhaust the process's memory.
pub(crate) struct Memory {
    used: Cell<usize>,
    limit: usize,
}

impl Memory {
    fn new() -> Rc<Memory> {
        Rc::new(Memory {
            used: Cell::new(0),
            limit: crate::limits::query_memory(),
        })
    }
}

/// Bytes one buffer holds against its query's [`Memory`], given back when
/// the buffer (the reservation) is dropped.
pub(crate) struct Reservation {
    memory: Rc<Memory>,
    bytes: usize,
    /// What the buffer is for, in the error message: "a sort".
    what: &'static str,
}

impl Reservation {
    /// Accounts for `row` being buffered.
    pub(crate) fn hold(&mut self, row: &[Value]) -> Result<()> {
        self.hold_bytes(row_bytes(row))
    }

    fn hold_bytes(&mut self, bytes: usize) -> Result<()> {
        let used = self.memory.used.get().saturating_add(bytes);
        if used > self.memory.limit {
            return Err(Error::resource_exhausted(format!(
                "The query needs more than its memory limit of {} MiB to buffer rows for {}; \
                 add a LIMIT, filter more rows out, or stream the result instead",
                self.memory.limit >> 20,
                self.what
            )));
        }
        self.memory.used.set(used);
        self.bytes += bytes;
        Ok(())
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.memory.used.set(self.memory.used.get() - self.bytes);
    }
}

/// Approximately the bytes `row` occupies: its values and what they own.
fn row_bytes(row: &[Value]) -> usize {
    let mut bytes = std::mem::size_of_val(row);
    let mut stack: Vec<&Value> = row.iter().collect();
    while let Some(v) = stack.pop() {
        bytes += match v {
            Value::String(s) => s.len(),
            Value::Bytes(b) => b.len(),
            Value::Array(items) | Value::Struct(items) => {
                stack.extend(items.iter());
                std::mem::size_of_val(items.as_slice())
            }
            Value::Json(j) => json_bytes(j),
            _ => 0,
        };
    }
    bytes
}

/// Approximately the bytes a JSON value owns (without printing it).
fn json_bytes(j: &serde_json::Value) -> usize {
    let mut bytes = 0;
    let mut stack = vec![j];
    while let Some(v) = stack.pop() {
        bytes += std::mem::size_of::<serde_json::Value>();
        match v {
            serde_json::Value::String(s) => bytes += s.len(),
            serde_json::Value::Array(items) => stack.extend(items.iter()),
            serde_json::Value::Object(members) => {
                for (k, v) in members {
                    bytes += k.len();
                    stack.push(v);
                }
            }
            _ => {}
        }
    }
    bytes
}

/// What operators need besides their inputs.
pub(crate) struct ExecContext<'a> {
    pub source: &'a mut dyn DataSource,
    pub plan: &'a Plan,
    /// Values of the enclosing row's correlated slots (inside a subquery).
    pub outer: Vec<Value>,
    /// Results of uncorrelated subqueries, computed once.
    pub cache: Rc<RefCell<HashMap<usize, Value>>>,
    pub now: Timestamp,
    /// Allow `PENDING_COMMIT_TIMESTAMP()` (DML values).
    pub pending_commit_timestamp: bool,
    /// The query's buffers, shared with its subqueries.
    pub memory: Rc<Memory>,
}

impl<'a> ExecContext<'a> {
    pub fn new(source: &'a mut dyn DataSource, plan: &'a Plan) -> ExecContext<'a> {
        let now = source.now();
        ExecContext {
            source,
            plan,
            outer: Vec::new(),
            cache: Rc::new(RefCell::new(HashMap::new())),
            now,
            pending_commit_timestamp: false,
            memory: Memory::new(),
        }
    }

    /// An empty reservation against the query's memory, for a buffer used
    /// for `what` ("a sort").
    pub(crate) fn reserve(&self, what: &'static str) -> Reservation {
        Reservation {
            memory: self.memory.clone(),
            bytes: 0,
            what,
        }
    }

    /// Evaluates `e` on `row` (followed by the outer values, if any).
    pub fn eval(&mut self, e: &BoundExpr, row: &[Value]) -> Result<Value> {
        if self.outer.is_empty() {
            Ok(e.eval(row, self)?)
        } else {
            let mut ext = Vec::with_capacity(row.len() + self.outer.len());
            ext.extend_from_slice(row);
            ext.extend(self.outer.iter().cloned());
            Ok(e.eval(&ext, self)?)
        }
    }

    fn test(&mut self, e: &BoundExpr, row: &[Value]) -> Result<bool> {
        Ok(matches!(self.eval(e, row)?, Value::Bool(true)))
    }

    fn run_subquery(&mut self, id: usize, row: &[Value]) -> Result<Value> {
        let plan = self.plan;
        let sub = plan
            .subqueries
            .get(id)
            .ok_or_else(|| Error::internal(format!("no subquery {id}")))?;
        if sub.correlations.is_empty() {
            if let Some(v) = self.cache.borrow().get(&id) {
                return Ok(v.clone());
            }
        }
        let outer: Vec<Value> = sub
            .correlations
            .iter()
            .map(|&s| row.get(s).cloned().unwrap_or(Value::Null))
            .collect();
        let mut cx = ExecContext {
            source: &mut *self.source,
            plan,
            outer,
            cache: self.cache.clone(),
            now: self.now,
            pending_commit_timestamp: false,
            memory: self.memory.clone(),
        };
        let mut op = build(&sub.root);
        let value = match sub.kind {
            SubqueryKind::Scalar => match op.next(&mut cx)? {
                None => Value::Null,
                Some(mut first) => {
                    if op.next(&mut cx)?.is_some() {
                        return Err(Error::out_of_range(
                            "A scalar subquery returned more than one row",
                        ));
                    }
                    first.swap_remove(0)
                }
            },
            SubqueryKind::Exists => Value::Bool(op.next(&mut cx)?.is_some()),
            SubqueryKind::Array | SubqueryKind::In => {
                let mut items = Vec::new();
                let mut held = cx.reserve("an ARRAY or IN subquery");
                while let Some(mut r) = op.next(&mut cx)? {
                    held.hold(&r)?;
                    items.push(r.swap_remove(0));
                }
                Value::Array(items)
            }
        };
        if sub.correlations.is_empty() {
            self.cache.borrow_mut().insert(id, value.clone());
        }
        Ok(value)
    }
}

impl EvalContext for ExecContext<'_> {
    fn now(&self) -> Timestamp {
        self.now
    }
    fn next_sequence_value(&mut self, sequence: &str) -> rowtree_expr::Result<i64> {
        self.source
            .next_sequence_value(sequence)
            .map_err(|e| match e.code {
                "NOT_FOUND" => rowtree_expr::Error::not_found(e.message),
                "RESOURCE_EXHAUSTED" => rowtree_expr::Error::ResourceExhausted {
                    message: e.message,
                    span: e.span,
                },
                "INVALID_ARGUMENT" => rowtree_expr::Error::invalid(e.message),
                _ => rowtree_expr::Error::FailedPrecondition {
                    message: e.message,
                    span: None,
                },
            })
    }
    fn sequence_state(&mut self, sequence: &str) -> rowtree_expr::Result<Option<i64>> {
        self.source
            .sequence_state(sequence)
            .map_err(|e| match e.code {
                "NOT_FOUND" => rowtree_expr::Error::not_found(e.message),
                "RESOURCE_EXHAUSTED" => rowtree_expr::Error::ResourceExhausted {
                    message: e.message,
                    span: e.span,
                },
                _ => rowtree_expr::Error::invalid(e.message),
            })
    }
    fn pending_commit_timestamp(&mut self) -> rowtree_expr::Result<Value> {
        if self.pending_commit_timestamp {
            Ok(Value::Timestamp(rowtree_db::PENDING_COMMIT_TIMESTAMP))
        } else {
            Err(rowtree_expr::Error::invalid("PENDING_COMMIT_TIMESTAMP() is only allowed as a value written to a commit timestamp column"))
        }
    }
    fn param(&self, name: &str) -> Option<Value> {
        crate::binder::lookup_param(&self.plan.params, name)
    }
    fn subquery(&mut self, id: usize, row: &[Value]) -> rowtree_expr::Result<Value> {
        self.run_subquery(id, row).map_err(|e| match e.code {
            "OUT_OF_RANGE" => rowtree_expr::Error::out_of_range(e.message),
            "NOT_FOUND" => rowtree_expr::Error::not_found(e.message),
            "RESOURCE_EXHAUSTED" => rowtree_expr::Error::ResourceExhausted {
                message: e.message,
                span: e.span,
            },
            _ => rowtree_expr::Error::InvalidArgument {
                message: e.message,
                span: e.span,
            },
        })
    }
}

/// A running operator.
pub(crate) trait Operator {
    fn next(&mut self, cx: &mut ExecContext<'_>) -> Result<Option<Row>>;
}

/// The rows of an executing plan.
pub struct RowIter<'a> {
    root: Box<dyn Operator + 'a>,
    cx: ExecContext<'a>,
    done: bool,
}

impl<'a> RowIter<'a> {
    /// A reservation against this query's memory, for a caller that keeps
    /// its rows (an unstreamed result).
    pub(crate) fn reserve(&self, what: &'static str) -> Reservation {
        self.cx.reserve(what)
    }

    pub(crate) fn new(plan: &'a Plan, source: &'a mut dyn DataSource) -> RowIter<'a> {
        RowIter {
            root: build(&plan.root),
            cx: ExecContext::new(source, plan),
            done: false,
        }
    }
}

impl Iterator for RowIter<'_> {
    type Item = Result<Vec<Value>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.root.next(&mut self.cx) {
            Ok(Some(row)) => Some(Ok(row)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

/// Builds the operator tree of `node`.
pub(crate) fn build(node: &Node) -> Box<dyn Operator + '_> {
    rowtree_types::stack::guarded(|| build_node(node))
}

fn build_node(node: &Node) -> Box<dyn Operator + '_> {
    let counters = &node.counters;
    match &node.kind {
        NodeKind::Scan(scan) => Box::new(Scan {
            node: scan,
            counters,
            stream: None,
            done: false,
        }),
        NodeKind::Values { rows } => Box::new(Values {
            rows,
            next: 0,
            counters,
        }),
        NodeKind::Rows { rows, .. } => Box::new(Rows {
            rows,
            next: 0,
            counters,
        }),
        NodeKind::SystemTable { table, .. } => Box::new(SystemRows {
            table: *table,
            rows: None,
            counters,
        }),
        NodeKind::Filter {
            input, predicate, ..
        } => Box::new(Filter {
            input: build(input),
            predicate,
            counters,
        }),
        NodeKind::Project { input, exprs, .. } => Box::new(Project {
            input: build(input),
            exprs,
            counters,
        }),
        NodeKind::Aggregate {
            input,
            groups,
            aggregates,
            ..
        } => Box::new(Aggregate {
            input: Some(build(input)),
            groups,
            calls: aggregates,
            output: VecDeque::new(),
            held: None,
            counters,
        }),
        NodeKind::Window { input, calls } => Box::new(Window {
            input: Some(build(input)),
            calls,
            output: VecDeque::new(),
            held: None,
            counters,
        }),
        NodeKind::Sort { input, keys } => Box::new(Sort {
            input: Some(build(input)),
            keys,
            output: VecDeque::new(),
            held: None,
            counters,
        }),
        NodeKind::Limit {
            input,
            limit,
            offset,
        } => Box::new(Limit {
            input: build(input),
            limit: *limit,
            offset: *offset,
            seen: 0,
            counters,
        }),
        NodeKind::Distinct { input } => Box::new(Distinct {
            input: build(input),
            seen: HashSet::new(),
            held: None,
            counters,
        }),
        NodeKind::Join {
            left,
            right,
            kind,
            method,
            condition,
            ..
        } => match method {
            JoinMethod::InterleavedMerge {
                left_keys,
                right_keys,
                tree: Some(tree),
                ..
            } => match (&left.kind, &right.kind) {
                (NodeKind::Scan(parent), NodeKind::Scan(child)) => Box::new(TreeMergeJoin {
                    parent,
                    child,
                    left_keys,
                    right_keys,
                    tree,
                    outer: *kind == JoinKind::Left,
                    condition: condition.as_ref(),
                    right_width: right.width,
                    stream: None,
                    current: None,
                    done: false,
                    pending: VecDeque::new(),
                    counters,
                }),
                _ => Box::new(Failed(
                    "an interleaved tree-scan join needs two table scans",
                )),
            },
            JoinMethod::InterleavedMerge {
                left_keys,
                right_keys,
                desc,
                tree: None,
            } => Box::new(MergeJoin {
                left: build(left),
                right: build(right),
                left_keys,
                right_keys,
                desc,
                outer: *kind == JoinKind::Left,
                condition: condition.as_ref(),
                right_width: right.width,
                child: None,
                right_done: false,
                pending: VecDeque::new(),
                counters,
            }),
            _ => Box::new(Join {
                left: build(left),
                right: Some(build(right)),
                kind: *kind,
                method,
                condition: condition.as_ref(),
                left_width: left.width,
                right_width: right.width,
                built: None,
                left_done: false,
                unmatched_next: 0,
                pending: VecDeque::new(),
                held: None,
                counters,
            }),
        },
        NodeKind::SetOp {
            left,
            right,
            op,
            all,
        } => Box::new(SetOp {
            left: build(left),
            right: Some(build(right)),
            op: *op,
            all: *all,
            counts: HashMap::new(),
            seen: HashSet::new(),
            left_done: false,
            held: None,
            counters,
        }),
        NodeKind::Unnest {
            input,
            array,
            with_offset,
            outer,
            ..
        } => Box::new(Unnest {
            input: build(input),
            array,
            with_offset: *with_offset,
            outer: *outer,
            pending: VecDeque::new(),
            counters,
        }),
    }
}

fn emit(counters: &Counters, row: Row) -> Result<Option<Row>> {
    counters.add_rows(1);
    Ok(Some(row))
}

// ----- scans ---------------------------------------------------------------

struct Scan<'p> {
    node: &'p ScanNode,
    counters: &'p Counters,
    stream: Option<RowStream>,
    done: bool,
}

impl Scan<'_> {
    fn record(&mut self) {
        if let Some(s) = self.stream.take() {
            record_stats(self.counters, s.stats());
        }
    }
}

impl Drop for Scan<'_> {
    fn drop(&mut self) {
        self.record();
    }
}

impl Operator for Scan<'_> {
    fn next(&mut self, cx: &mut ExecContext<'_>) -> Result<Option<Row>> {
        if self.done {
            return Ok(None);
        }
        let access = &self.node.access;
        if self.stream.is_none() {
            let request = ScanRequest {
                table: self.node.table.clone(),
                index: access.index.clone(),
                key_set: access.key_set.clone(),
                reverse: access.reverse,
                limit: access.limit,
            };
            self.stream = Some(cx.source.scan(&request)?);
        }
        loop {
            let Some(stream) = self.stream.as_mut() else {
                return Ok(None);
            };
            let Some(row) = stream.next() else {
                self.done = true;
                self.record();
                return Ok(None);
            };
            let mut row = row?;
            if access.back_join {
                row = match self.base_row(cx, &row)? {
                    Some(r) => r,
                    None => continue,
                };
            }
            let mut pass = true;
            for &i in &access.residual {
                if !cx.test(&self.node.conjuncts[i].expr, &row)? {
                    pass = false;
                    break;
                }
            }
            if pass {
                return emit(self.counters, row);
            }
        }
    }
}

impl Scan<'_> {
    /// The base table row of an index entry (a point lookup by primary key).
    fn base_row(&self, cx: &mut ExecContext<'_>, entry: &[Value]) -> Result<Option<Row>> {
        let catalog = cx.source.catalog();
        let table = catalog
            .table(&self.node.table)
            .ok_or_else(|| Error::not_found(format!("Table not found: {}", self.node.table)))?;
        let key: Vec<Value> = table
            .primary_key
            .iter()
            .map(|k| entry[k.column].clone())
            .collect();
        let request = ScanRequest {
            table: self.node.table.clone(),
            index: None,
            key_set: KeySet::key(key),
            reverse: false,
            limit: 1,
        };
        let mut stream = cx.source.scan(&request)?;
        let row = stream.next().transpose()?;
        let stats = stream.stats();
        self.counters
            .scanned
            .fetch_add(stats.rows_scanned, AtomicOrdering::Relaxed);
        Ok(row)
    }
}

struct Values<'p> {
    rows: &'p [Vec<BoundExpr>],
    next: usize,
    counters: &'p Counters,
}

impl Operator for Values<'_> {
    fn next(&mut self, cx: &mut ExecContext<'_>) -> Result<Option<Row>> {
        let Some(exprs) = self.rows.get(self.next) else {
            return Ok(None);
        };
        self.next += 1;
        let row = exprs
            .iter()
            .map(|e| cx.eval(e, &[]))
            .collect::<Result<Row>>()?;
        emit(self.counters, row)
    }
}

struct Rows<'p> {
    rows: &'p [Vec<Value>],
    next: usize,
    counters: &'p Counters,
}

impl Operator for Rows<'_> {
    fn next(&mut self, _cx: &mut ExecContext<'_>) -> Result<Option<Row>> {
        let Some(row) = self.rows.get(self.next) else {
            return Ok(None);
        };
        self.next += 1;
        emit(self.counters, row.clone())
    }
}

/// A SPANNER_SYS table: its rows are computed from the database when the
/// first row is asked for.
struct SystemRows<'p> {
    table: crate::spanner_sys::SysTable,
    rows: Option<std::vec::IntoIter<Vec<Value>>>,
    counters: &'p Counters,
}

impl Operator for SystemRows<'_> {
    fn next(&mut self, cx: &mut ExecContext<'_>) -> Result<Option<Row>> {
        if self.rows.is_none() {
            let db = cx.source.database().ok_or_else(|| {
                Error::new(
                    "FAILED_PRECONDITION",
                    format!(
                        "SPANNER_SYS.{} is not available here: no database",
                        self.table.name()
                    ),
                )
            })?;
            self.rows = Some(self.table.rows(db).into_iter());
        }
        match self.rows.as_mut().and_then(Iterator::next) {
            Some(row) => emit(self.counters, row),
            None => Ok(None),
        }
    }
}

// ----- row-at-a-time operators ---------------------------------------------

struct Filter<'p> {
    input: Box<dyn Operator + 'p>,
    predicate: &'p BoundExpr,
    counters: &'p Counters,
}

impl Operator for Filter<'_> {
    fn next(&mut self, cx: &mut ExecContext<'_>) -> Result<Option<Row>> {
        while let Some(row) = self.input.next(cx)? {
            if cx.test(self.predicate, &row)? {
                return emit(self.counters, row);
            }
        }
        Ok(None)
    }
}

struct Project<'p> {
    input: Box<dyn Operator + 'p>,
    exprs: &'p [BoundExpr],
    counters: &'p Counters,
}

impl Operator for Project<'_> {
    fn next(&mut self, cx: &mut ExecContext<'_>) -> Result<Option<Row>> {
        let Some(row) = self.input.next(cx)? else {
            return Ok(None);
        };
        let out = self
            .exprs
            .iter()
            .map(|e| cx.eval(e, &row))
            .collect::<Result<Row>>()?;
        emit(self.counters, out)
    }
}

struct Limit<'p> {
    input: Box<dyn Operator + 'p>,
    limit: Option<u64>,
    offset: u64,
    seen: u64,
    counters: &'p Counters,
}

impl Operator for Limit<'_> {
    fn next(&mut self, cx: &mut ExecContext<'_>) -> Result<Option<Row>> {
        loop {
            if let Some(l) = self.limit {
                // Stop pulling: the input (and its scan) read no further.
                if self.seen >= self.offset + l {
                    return Ok(None);
                }
            }
            let Some(row) = self.input.next(cx)? else {
                return Ok(None);
            };
            self.seen += 1;
            if self.seen > self.offset {
                return emit(self.counters, row);
            }
        }
    }
}

struct Distinct<'p> {
    input: Box<dyn Operator + 'p>,
    seen: HashSet<GroupKey>,
    held: Option<Reservation>,
    counters: &'p Counters,
}

impl Operator for Distinct<'_> {
    fn next(&mut self, cx: &mut ExecContext<'_>) -> Result<Option<Row>> {
        let held = self
            .held
            .get_or_insert_with(|| cx.reserve("SELECT DISTINCT"));
        while let Some(row) = self.input.next(cx)? {
            if self.seen.insert(GroupKey::from_values(row.clone())) {
                held.hold(&row)?;
                return emit(self.counters, row);
            }
        }
        Ok(None)
    }
}

struct Unnest<'p> {
    input: Box<dyn Operator + 'p>,
    array: &'p BoundExpr,
    with_offset: bool,
    outer: bool,
    pending: VecDeque<Row>,
    counters: &'p Counters,
}

impl Operator for Unnest<'_> {
    fn next(&mut self, cx: &mut ExecContext<'_>) -> Result<Option<Row>> {
        loop {
            if let Some(r) = self.pending.pop_front() {
                return emit(self.counters, r);
            }
            let Some(row) = self.input.next(cx)? else {
                return Ok(None);
            };
            let items = match cx.eval(self.array, &row)? {
                Value::Array(items) => items,
                _ => Vec::new(),
            };
            if items.is_empty() && self.outer {
                let mut r = row.clone();
                r.push(Value::Null);
                if self.with_offset {
                    r.push(Value::Null);
                }
                self.pending.push_back(r);
            }
            for (i, item) in items.into_iter().enumerate() {
                let mut r = row.clone();
                r.push(item);
                if self.with_offset {
                    r.push(Value::Int64(i as i64));
                }
                self.pending.push_back(r);
            }
        }
    }
}

// ----- blocking operators --------------------------------------------------

/// ORDER BY's comparison of two rows by `keys`.
pub(crate) fn compare_rows(a: &[Value], b: &[Value], keys: &[SortKey]) -> Ordering {
    for k in keys {
        let o = compare_sort_values(&a[k.slot], &b[k.slot], k.desc, k.nulls_first);
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

/// One sort key's comparison of two values: NULLs first or last whatever
/// the direction, other values reversed when `desc`.
fn compare_sort_values(x: &Value, y: &Value, desc: bool, nulls_first: bool) -> Ordering {
    match (x.is_null(), y.is_null()) {
        (true, true) => Ordering::Equal,
        (true, false) if nulls_first => Ordering::Less,
        (true, false) => Ordering::Greater,
        (false, true) if nulls_first => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => {
            let o = rowtree_expr::compare(x, y).unwrap_or(Ordering::Equal);
            if desc {
                o.reverse()
            } else {
                o
            }
        }
    }
}

struct Sort<'p> {
    input: Option<Box<dyn Operator + 'p>>,
    keys: &'p [SortKey],
    output: VecDeque<Row>,
    held: Option<Reservation>,
    counters: &'p Counters,
}

impl Operator for Sort<'_> {
    fn next(&mut self, cx: &mut ExecContext<'_>) -> Result<Option<Row>> {
        if let Some(mut input) = self.input.take() {
            let mut rows = Vec::new();
            let held = self.held.insert(cx.reserve("a sort (ORDER BY)"));
            while let Some(r) = input.next(cx)? {
                held.hold(&r)?;
                rows.push(r);
            }
            rows.sort_by(|a, b| compare_rows(a, b, self.keys));
            self.output = rows.into();
        }
        match self.output.pop_front() {
            Some(r) => emit(self.counters, r),
            None => Ok(None),
        }
    }
}

struct Window<'p> {
    input: Option<Box<dyn Operator + 'p>>,
    calls: &'p [crate::plan::WindowCall],
    output: VecDeque<Row>,
    held: Option<Reservation>,
    counters: &'p Counters,
}

/// Compares key tuples: each key `(desc, nulls_first)`.
fn compare_keys(a: &[Value], b: &[Value], dirs: &[(bool, bool)]) -> Ordering {
    for ((x, y), &(desc, nulls_first)) in a.iter().zip(b).zip(dirs) {
        let o = compare_sort_values(x, y, desc, nulls_first);
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

impl Window<'_> {
    /// The value of `call` for every row of `rows`, in row order.
    fn compute(
        &self,
        call: &crate::plan::WindowCall,
        rows: &[Row],
        cx: &mut ExecContext<'_>,
    ) -> Result<Vec<Value>> {
        let mut keyed = Vec::with_capacity(rows.len());
        for (i, row) in rows.iter().enumerate() {
            let part: Vec<Value> = call
                .partition_by
                .iter()
                .map(|e| cx.eval(e, row))
                .collect::<Result<_>>()?;
            let ord: Vec<Value> = call
                .order_by
                .iter()
                .map(|(e, _, _)| cx.eval(e, row))
                .collect::<Result<_>>()?;
            keyed.push((part, ord, i));
        }
        let pdirs = vec![(false, true); call.partition_by.len()];
        let odirs: Vec<(bool, bool)> = call.order_by.iter().map(|(_, d, n)| (*d, *n)).collect();
        // A stable sort keeps input order among peers.
        keyed.sort_by(|a, b| {
            compare_keys(&a.0, &b.0, &pdirs).then_with(|| compare_keys(&a.1, &b.1, &odirs))
        });
        let mut out = vec![Value::Null; rows.len()];
        let mut start = 0;
        while start < keyed.len() {
            let mut end = start + 1;
            while end < keyed.len()
                && compare_keys(&keyed[start].0, &keyed[end].0, &pdirs) == Ordering::Equal
            {
                end += 1;
            }
            for (pos, (_, _, i)) in keyed[start..end].iter().enumerate() {
                out[*i] = match call.func {
                    crate::plan::WindowFunc::IsFirst => {
                        let k = cx.eval(&call.args[0], &rows[*i])?;
                        match k {
                            Value::Int64(k) if k > 0 => Value::Bool((pos as i64) < k),
                            Value::Int64(k) => {
                                return Err(Error::out_of_range(format!(
                                    "IS_FIRST requires a positive argument; got {k}"
                                )))
                            }
                            _ => {
                                return Err(Error::out_of_range(
                                    "IS_FIRST requires a positive argument; got NULL",
                                ))
                            }
                        }
                    }
                };
            }
            start = end;
        }
        Ok(out)
    }
}

impl Operator for Window<'_> {
    fn next(&mut self, cx: &mut ExecContext<'_>) -> Result<Option<Row>> {
        if let Some(mut input) = self.input.take() {
            let mut rows = Vec::new();
            let held = self.held.insert(cx.reserve("a window function"));
            while let Some(r) = input.next(cx)? {
                held.hold(&r)?;
                rows.push(r);
            }
            let mut values = Vec::with_capacity(self.calls.len());
            for call in self.calls {
                values.push(self.compute(call, &rows, cx)?);
            }
            for (i, mut row) in rows.into_iter().enumerate() {
                row.extend(values.iter().map(|v| v[i].clone()));
                self.output.push_back(row);
            }
        }
        match self.output.pop_front() {
            Some(r) => emit(self.counters, r),
            None => Ok(None),
        }
    }
}

struct Aggregate<'p> {
    input: Option<Box<dyn Operator + 'p>>,
    groups: &'p [BoundExpr],
    calls: &'p [crate::plan::AggregateCall],
    output: VecDeque<Row>,
    held: Option<Reservation>,
    counters: &'p Counters,
}

/// Whether an aggregate keeps every input (DISTINCT, ORDER BY, or
/// functions that collect: ARRAY_AGG, STRING_AGG, ARRAY_CONCAT_AGG), so its
/// state grows with its arguments.
fn collects(call: &crate::plan::AggregateCall) -> bool {
    call.distinct
        || !call.order_by.is_empty()
        || ["ARRAY_AGG", "STRING_AGG", "ARRAY_CONCAT_AGG"]
            .iter()
            .any(|f| call.name.eq_ignore_ascii_case(f))
}

impl Aggregate<'_> {
    fn accumulators(&self) -> Result<Vec<Box<dyn Accumulator>>> {
        self.calls
            .iter()
            .map(|c| {
                let types: Vec<_> = c.args.iter().map(|a| a.ty().clone()).collect();
                let modifiers = AggregateModifiers {
                    ignore_nulls: c.ignore_nulls.unwrap_or(false),
                    order_by: c.order_by.iter().map(|(_, d, n)| (*d, Some(*n))).collect(),
                    limit: c.limit.map(|l| l as usize),
                };
                let m = (modifiers != AggregateModifiers::default()).then_some(&modifiers);
                Ok(accumulator(&c.name, &types, c.distinct, m)?)
            })
            .collect()
    }
}

impl Operator for Aggregate<'_> {
    fn next(&mut self, cx: &mut ExecContext<'_>) -> Result<Option<Row>> {
        if let Some(mut input) = self.input.take() {
            let mut index: HashMap<GroupKey, usize> = HashMap::new();
            let mut groups: Vec<(Row, Vec<Box<dyn Accumulator>>)> = Vec::new();
            let mut held = cx.reserve("an aggregation (GROUP BY)");
            while let Some(row) = input.next(cx)? {
                let key: Row = self
                    .groups
                    .iter()
                    .map(|g| cx.eval(g, &row))
                    .collect::<Result<_>>()?;
                let gk = GroupKey::from_values(key.clone());
                let i = match index.get(&gk) {
                    Some(&i) => i,
                    None => {
                        // The key is kept twice: in the index and the group.
                        held.hold(&key)?;
                        held.hold(&key)?;
                        groups.push((key, self.accumulators()?));
                        index.insert(gk, groups.len() - 1);
                        groups.len() - 1
                    }
                };
                for (call, acc) in self.calls.iter().zip(groups[i].1.iter_mut()) {
                    let mut args: Row = call
                        .args
                        .iter()
                        .map(|a| cx.eval(a, &row))
                        .collect::<Result<_>>()?;
                    for (o, _, _) in &call.order_by {
                        args.push(cx.eval(o, &row)?);
                    }
                    if collects(call) {
                        held.hold(&args)?;
                    }
                    acc.update(&args)?;
                }
            }
            self.held = Some(held);
            // No GROUP BY: one row even over no input.
            if groups.is_empty() && self.groups.is_empty() {
                groups.push((Vec::new(), self.accumulators()?));
            }
            for (key, mut accs) in groups {
                let mut row = key;
                for a in accs.iter_mut() {
                    row.push(a.finish()?);
                }
                self.output.push_back(row);
            }
        }
        match self.output.pop_front() {
            Some(r) => emit(self.counters, r),
            None => Ok(None),
        }
    }
}

/// The right input of a hash or nested-loop join, held in memory.
struct Built {
    rows: Vec<Row>,
    map: HashMap<GroupKey, Vec<usize>>,
    matched: Vec<bool>,
}

struct Join<'p> {
    left: Box<dyn Operator + 'p>,
    right: Option<Box<dyn Operator + 'p>>,
    kind: JoinKind,
    method: &'p JoinMethod,
    condition: Option<&'p BoundExpr>,
    left_width: usize,
    right_width: usize,
    built: Option<Built>,
    held: Option<Reservation>,
    left_done: bool,
    unmatched_next: usize,
    pending: VecDeque<Row>,
    counters: &'p Counters,
}

fn key_of(
    cx: &mut ExecContext<'_>,
    exprs: &[BoundExpr],
    row: &[Value],
) -> Result<Option<GroupKey>> {
    let mut values = Vec::with_capacity(exprs.len());
    for e in exprs {
        let v = cx.eval(e, row)?;
        if v.is_null() {
            // NULL = anything is not true: such a row matches nothing.
            return Ok(None);
        }
        values.push(v);
    }
    Ok(Some(GroupKey::from_values(values)))
}

impl Operator for Join<'_> {
    fn next(&mut self, cx: &mut ExecContext<'_>) -> Result<Option<Row>> {
        if let Some(mut right) = self.right.take() {
            let mut built = Built {
                rows: Vec::new(),
                map: HashMap::new(),
                matched: Vec::new(),
            };
            let held = self.held.insert(cx.reserve("the build side of a join"));
            while let Some(r) = right.next(cx)? {
                held.hold(&r)?;
                if let JoinMethod::Hash { right_keys, .. } = self.method {
                    if let Some(k) = key_of(cx, right_keys, &r)? {
                        built.map.entry(k).or_default().push(built.rows.len());
                    }
                }
                built.rows.push(r);
            }
            built.matched = vec![false; built.rows.len()];
            self.built = Some(built);
        }
        loop {
            if let Some(r) = self.pending.pop_front() {
                return emit(self.counters, r);
            }
            let Some(built) = self.built.as_mut() else {
                return Ok(None);
            };
            if self.left_done {
                if matches!(self.kind, JoinKind::Right | JoinKind::Full) {
                    while self.unmatched_next < built.rows.len() {
                        let i = self.unmatched_next;
                        self.unmatched_next += 1;
                        if !built.matched[i] {
                            let mut row = vec![Value::Null; self.left_width];
                            row.extend(built.rows[i].iter().cloned());
                            return emit(self.counters, row);
                        }
                    }
                }
                return Ok(None);
            }
            let Some(l) = self.left.next(cx)? else {
                self.left_done = true;
                continue;
            };
            let candidates: Vec<usize> = match self.method {
                JoinMethod::Hash { left_keys, .. } => match key_of(cx, left_keys, &l)? {
                    Some(k) => built.map.get(&k).cloned().unwrap_or_default(),
                    None => Vec::new(),
                },
                _ => (0..built.rows.len()).collect(),
            };
            let mut any = false;
            for i in candidates {
                let mut row = l.clone();
                row.extend(built.rows[i].iter().cloned());
                let ok = match self.condition {
                    Some(c) => cx.test(c, &row)?,
                    None => true,
                };
                if ok {
                    any = true;
                    built.matched[i] = true;
                    self.pending.push_back(row);
                }
            }
            if !any && matches!(self.kind, JoinKind::Left | JoinKind::Full) {
                let mut row = l;
                row.extend(std::iter::repeat_n(Value::Null, self.right_width));
                self.pending.push_back(row);
            }
        }
    }
}

/// Parent rows and their interleaved children, both in key order.
struct MergeJoin<'p> {
    left: Box<dyn Operator + 'p>,
    right: Box<dyn Operator + 'p>,
    left_keys: &'p [usize],
    right_keys: &'p [usize],
    desc: &'p [bool],
    outer: bool,
    condition: Option<&'p BoundExpr>,
    right_width: usize,
    /// The next child row not yet matched (read ahead by one).
    child: Option<Row>,
    right_done: bool,
    pending: VecDeque<Row>,
    counters: &'p Counters,
}

impl MergeJoin<'_> {
    fn compare(&self, child: &[Value], parent: &[Value]) -> Ordering {
        for ((&c, &p), &d) in self.right_keys.iter().zip(self.left_keys).zip(self.desc) {
            let o = rowtree_expr::compare(&child[c], &parent[p]).unwrap_or(Ordering::Equal);
            let o = if d { o.reverse() } else { o };
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    }
}

impl Operator for MergeJoin<'_> {
    fn next(&mut self, cx: &mut ExecContext<'_>) -> Result<Option<Row>> {
        loop {
            if let Some(r) = self.pending.pop_front() {
                return emit(self.counters, r);
            }
            let Some(parent) = self.left.next(cx)? else {
                return Ok(None);
            };
            let null_key = self.left_keys.iter().any(|&k| parent[k].is_null());
            let mut matched = false;
            loop {
                if self.child.is_none() && !self.right_done {
                    self.child = self.right.next(cx)?;
                    self.right_done = self.child.is_none();
                }
                let Some(child) = self.child.as_ref() else {
                    break;
                };
                match self.compare(child, &parent) {
                    Ordering::Less => self.child = None,
                    Ordering::Greater => break,
                    Ordering::Equal => {
                        let child = self.child.take().unwrap_or_default();
                        if null_key {
                            continue;
                        }
                        let mut row = parent.clone();
                        row.extend(child);
                        let ok = match self.condition {
                            Some(c) => cx.test(c, &row)?,
                            None => true,
                        };
                        if ok {
                            matched = true;
                            self.pending.push_back(row);
                        }
                    }
                }
            }
            if !matched && self.outer {
                let mut row = parent;
                row.extend(std::iter::repeat_n(Value::Null, self.right_width));
                self.pending.push_back(row);
            }
        }
    }
}

/// An operator that fails when run (a plan the builder cannot execute).
struct Failed(&'static str);

impl Operator for Failed {
    fn next(&mut self, _cx: &mut ExecContext<'_>) -> Result<Option<Row>> {
        Err(Error::internal(self.0))
    }
}

/// The parent row a tree-scan join is on.
struct TreeParent {
    row: Row,
    /// A NULL parent key equals nothing.
    null_key: bool,
    matched: bool,
}

/// A parent and its interleaved child joined over one tree scan: each
/// parent row arrives followed by the child rows of its row tree, so the
/// join holds one parent row and reads each key once.
struct TreeMergeJoin<'p> {
    parent: &'p ScanNode,
    child: &'p ScanNode,
    left_keys: &'p [usize],
    right_keys: &'p [usize],
    tree: &'p TreeScan,
    outer: bool,
    condition: Option<&'p BoundExpr>,
    right_width: usize,
    stream: Option<TreeStream>,
    /// The parent row whose row tree is being read (None before the first,
    /// after the parent's residual filter rejected it, or past its tree).
    current: Option<TreeParent>,
    done: bool,
    pending: VecDeque<Row>,
    counters: &'p Counters,
}

impl TreeMergeJoin<'_> {
    fn record(&mut self) {
        if let Some(s) = self.stream.take() {
            record_stats(&self.tree.counters, s.stats());
        }
    }

    /// Ends the current parent's row tree: an unmatched parent of a LEFT
    /// join comes out with NULLs.
    fn finish_parent(&mut self) {
        if let Some(p) = self.current.take() {
            if self.outer && !p.matched {
                let mut row = p.row;
                row.extend(std::iter::repeat_n(Value::Null, self.right_width));
                self.pending.push_back(row);
            }
        }
    }

    fn passes(
        cx: &mut ExecContext<'_>,
        scan: &ScanNode,
        conjuncts: impl Iterator<Item = usize>,
        row: &[Value],
    ) -> Result<bool> {
        for i in conjuncts {
            if !cx.test(&scan.conjuncts[i].expr, row)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn on_parent(&mut self, cx: &mut ExecContext<'_>, row: Row) -> Result<()> {
        self.finish_parent();
        // The key set answers the parent's other conjuncts exactly.
        let residual = self.tree.parent_filter.iter().copied();
        if Self::passes(cx, self.parent, residual, &row)? {
            self.tree.counters.add_rows(1);
            let null_key = self.left_keys.iter().any(|&k| row[k].is_null());
            self.current = Some(TreeParent {
                row,
                null_key,
                matched: false,
            });
        }
        Ok(())
    }

    fn on_child(&mut self, cx: &mut ExecContext<'_>, row: Row) -> Result<()> {
        let Some(parent) = self.current.as_ref() else {
            // Its parent row was filtered out (or does not exist: INTERLEAVE IN).
            return Ok(());
        };
        let same_tree = self.left_keys.iter().zip(self.right_keys).all(|(&p, &c)| {
            rowtree_expr::compare(&parent.row[p], &row[c]) == Some(Ordering::Equal)
        });
        if !same_tree {
            // A child row without a parent row, past the current row tree.
            self.finish_parent();
            return Ok(());
        }
        if parent.null_key {
            return Ok(());
        }
        // The child scan's key set is not applied to the tree: check its
        // conjuncts the parent's key set does not imply.
        let filter = self.tree.child_filter.iter().copied();
        if !Self::passes(cx, self.child, filter, &row)? {
            return Ok(());
        }
        self.tree.counters.add_rows(1);
        let mut joined = parent.row.clone();
        joined.extend(row);
        let ok = match self.condition {
            Some(c) => cx.test(c, &joined)?,
            None => true,
        };
        if ok {
            if let Some(p) = self.current.as_mut() {
                p.matched = true;
            }
            self.pending.push_back(joined);
        }
        Ok(())
    }
}

impl Drop for TreeMergeJoin<'_> {
    fn drop(&mut self) {
        self.record();
    }
}

impl Operator for TreeMergeJoin<'_> {
    fn next(&mut self, cx: &mut ExecContext<'_>) -> Result<Option<Row>> {
        loop {
            if let Some(r) = self.pending.pop_front() {
                return emit(self.counters, r);
            }
            if self.done {
                return Ok(None);
            }
            if self.stream.is_none() {
                let request = TreeScanRequest {
                    table: self.parent.table.clone(),
                    include: vec![self.child.table.clone()],
                    key_set: self.tree.key_set.clone(),
                    reverse: false,
                    limit: 0,
                };
                self.stream = Some(cx.source.scan_tree(&request)?);
            }
            let next = self.stream.as_mut().and_then(|s| s.next());
            match next {
                None => {
                    self.done = true;
                    self.record();
                    self.finish_parent();
                }
                Some(tagged) => {
                    let tagged = tagged?;
                    if tagged.source == 0 {
                        self.on_parent(cx, tagged.row)?;
                    } else {
                        self.on_child(cx, tagged.row)?;
                    }
                }
            }
        }
    }
}

fn record_stats(counters: &Counters, stats: ScanStats) {
    counters
        .scanned
        .fetch_add(stats.rows_scanned, AtomicOrdering::Relaxed);
    counters
        .splits
        .fetch_add(stats.splits_touched as u64, AtomicOrdering::Relaxed);
}

struct SetOp<'p> {
    left: Box<dyn Operator + 'p>,
    right: Option<Box<dyn Operator + 'p>>,
    op: SetOperator,
    all: bool,
    /// INTERSECT / EXCEPT: how many times each right row occurs.
    counts: HashMap<GroupKey, usize>,
    /// DISTINCT: rows already returned.
    seen: HashSet<GroupKey>,
    held: Option<Reservation>,
    left_done: bool,
    counters: &'p Counters,
}

impl Operator for SetOp<'_> {
    fn next(&mut self, cx: &mut ExecContext<'_>) -> Result<Option<Row>> {
        let held = self
            .held
            .get_or_insert_with(|| cx.reserve("a set operation (UNION, INTERSECT, EXCEPT)"));
        if self.op != SetOperator::Union {
            if let Some(mut right) = self.right.take() {
                while let Some(r) = right.next(cx)? {
                    held.hold(&r)?;
                    *self.counts.entry(GroupKey::from_values(r)).or_default() += 1;
                }
            }
        }
        loop {
            let row = if !self.left_done {
                match self.left.next(cx)? {
                    Some(r) => r,
                    None => {
                        self.left_done = true;
                        continue;
                    }
                }
            } else if self.op == SetOperator::Union {
                match self.right.as_mut() {
                    Some(r) => match r.next(cx)? {
                        Some(row) => row,
                        None => return Ok(None),
                    },
                    None => return Ok(None),
                }
            } else {
                return Ok(None);
            };
            let key = GroupKey::from_values(row.clone());
            let keep = match self.op {
                SetOperator::Union => true,
                SetOperator::Intersect => match self.counts.get_mut(&key) {
                    Some(n) if *n > 0 => {
                        if self.all {
                            *n -= 1;
                        }
                        true
                    }
                    _ => false,
                },
                SetOperator::Except => match self.counts.get_mut(&key) {
                    Some(n) if *n > 0 => {
                        if self.all {
                            *n -= 1;
                        }
                        false
                    }
                    _ => true,
                },
            };
            if !keep {
                continue;
            }
            if !self.all {
                if !self.seen.insert(key) {
                    continue;
                }
                held.hold(&row)?;
            }
            return emit(self.counters, row);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(slot: usize, desc: bool, nulls_first: bool) -> SortKey {
        SortKey {
            slot,
            desc,
            nulls_first,
            origin: None,
            text: String::new(),
        }
    }

    #[test]
    fn sort_order_follows_googlesql_null_rules() {
        let mut rows = vec![
            vec![Value::Int64(2)],
            vec![Value::Null],
            vec![Value::Int64(1)],
        ];
        rows.sort_by(|a, b| compare_rows(a, b, &[key(0, false, true)]));
        assert_eq!(
            rows,
            vec![
                vec![Value::Null],
                vec![Value::Int64(1)],
                vec![Value::Int64(2)]
            ]
        );
        rows.sort_by(|a, b| compare_rows(a, b, &[key(0, true, false)]));
        assert_eq!(
            rows,
            vec![
                vec![Value::Int64(2)],
                vec![Value::Int64(1)],
                vec![Value::Null]
            ]
        );
        rows.sort_by(|a, b| compare_rows(a, b, &[key(0, true, true)]));
        assert_eq!(rows[0], vec![Value::Null]);
    }
}
