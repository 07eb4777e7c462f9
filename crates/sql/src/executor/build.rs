//! From plan nodes to running operators, and back out as rows.
//!
//! [`build`] turns each [`Node`] into its [`Operator`] (children first);
//! [`RowIter`] pulls the root's rows for the caller. A subquery is a plan
//! run from inside an expression: the expression evaluator calls back
//! through [`EvalContext::subquery`], which builds and runs its tree here
//! (once, for an uncorrelated one).

use std::collections::{HashMap, HashSet, VecDeque};
use std::rc::Rc;
use std::sync::Arc;

use rowtree_expr::{EvalContext, InSet, SetId, SubqueryKind};
use rowtree_parser::ast::JoinKind;
use rowtree_types::{Code, Timestamp, Value};

use crate::error::{Error, Result};
use crate::limits::MemoryPool;
use crate::plan::{JoinMethod, Node, NodeKind, Plan};

use super::aggregate::Aggregate;
use super::context::ExecContext;
use super::join::{Join, MergeJoin};
use super::memory::{Memory, Reservation};
use super::operator::{Failed, Operator};
use super::scan::{Rows, Scan, SystemRows, Values};
use super::set_op::SetOp;
use super::sort::Sort;
use super::source::DataSource;
use super::stream::{Distinct, Filter, Limit, Project, Unnest};
use super::tree_join::TreeMergeJoin;
use super::window::Window;

impl ExecContext<'_> {
    /// Runs subquery `id` for `row` (whose correlated slots it reads).
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
            kept: self.kept.clone(),
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
                Code::NotFound => rowtree_expr::Error::not_found(e.message),
                Code::ResourceExhausted => rowtree_expr::Error::ResourceExhausted {
                    message: e.message,
                    span: e.span,
                },
                Code::InvalidArgument => rowtree_expr::Error::invalid(e.message),
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
                Code::NotFound => rowtree_expr::Error::not_found(e.message),
                Code::ResourceExhausted => rowtree_expr::Error::ResourceExhausted {
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
    fn in_set(&self, id: SetId) -> Option<Rc<InSet>> {
        self.kept.borrow().sets.get(&id).cloned()
    }
    fn keeps_in_sets(&self) -> bool {
        true
    }
    fn keep_in_set(&mut self, id: SetId, set: Rc<InSet>) -> rowtree_expr::Result<()> {
        let mut kept = self.kept.borrow_mut();
        kept.held
            .hold_bytes(set.bytes())
            .map_err(|e| rowtree_expr::Error::ResourceExhausted {
                message: e.message,
                span: e.span,
            })?;
        kept.sets.insert(id, set);
        Ok(())
    }
    fn subquery(&mut self, id: usize, row: &[Value]) -> rowtree_expr::Result<Value> {
        self.run_subquery(id, row).map_err(|e| match e.code {
            Code::OutOfRange => rowtree_expr::Error::out_of_range(e.message),
            Code::NotFound => rowtree_expr::Error::not_found(e.message),
            Code::ResourceExhausted => rowtree_expr::Error::ResourceExhausted {
                message: e.message,
                span: e.span,
            },
            Code::InvalidArgument => rowtree_expr::Error::InvalidArgument {
                message: e.message,
                span: e.span,
            },
            // ABORTED (a wounded transaction), CANCELLED, DEADLINE_EXCEEDED,
            // ...: the statement failed for a reason of its context, which
            // the client acts on by its code.
            code => rowtree_expr::Error::Context {
                code,
                message: e.message,
            },
        })
    }
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

    pub(crate) fn new(
        plan: &'a Plan,
        source: &'a mut dyn DataSource,
        pool: &Arc<MemoryPool>,
    ) -> RowIter<'a> {
        RowIter {
            root: build(&plan.root),
            cx: ExecContext::new(source, plan, pool),
            done: false,
        }
    }

    /// The rows of `plan` run as part of a statement whose buffers share
    /// `memory` (see [`ExecContext::with_memory`]).
    pub(crate) fn with_memory(
        plan: &'a Plan,
        source: &'a mut dyn DataSource,
        memory: &Rc<Memory>,
    ) -> RowIter<'a> {
        RowIter {
            root: build(&plan.root),
            cx: ExecContext::with_memory(source, plan, memory),
            done: false,
        }
    }

    /// The context the plan runs in, for evaluating expressions over its
    /// rows as they come (DML computes the values it writes this way, in
    /// the same transaction and against the same memory).
    pub(crate) fn context(&mut self) -> &mut ExecContext<'a> {
        &mut self.cx
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

pub(super) fn build_node(node: &Node) -> Box<dyn Operator + '_> {
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
