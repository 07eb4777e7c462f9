//! What every operator's `next` receives: the [`ExecContext`].
//!
//! It holds the data source, the plan (for its parameters and subqueries),
//! the outer row's values inside a correlated subquery (appended after each
//! row before an expression is evaluated, which is where the binder put
//! their slots), the cache of uncorrelated subquery results, the sets of
//! row-independent `IN`s and the key lists of key-set reads (each built
//! once per statement), and the query's memory (drawn from the pool its
//! caller gives).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use rowtree_db::KeySet;
use rowtree_expr::{BoundExpr, InSet, SetId};
use rowtree_types::{Timestamp, Value};

use crate::error::Result;
use crate::limits::MemoryPool;
use crate::plan::Plan;

use super::memory::{Memory, Reservation};
use super::source::DataSource;

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
    /// What the statement builds once and keeps (shared with subqueries).
    pub kept: Rc<RefCell<Kept>>,
}

/// What a statement builds once and keeps until it ends: the candidate sets
/// of row-independent `IN`s ([`rowtree_expr::InSet`]) and the key lists
/// of key-set reads (by scan, see `executor::scan`), with the memory they
/// hold.
pub(crate) struct Kept {
    pub sets: HashMap<SetId, Rc<InSet>>,
    pub key_sets: HashMap<usize, Rc<KeySet>>,
    pub held: Reservation,
}

impl<'a> ExecContext<'a> {
    /// The context of a query over `source` whose buffers draw from `pool`.
    pub fn new(
        source: &'a mut dyn DataSource,
        plan: &'a Plan,
        pool: &Arc<MemoryPool>,
    ) -> ExecContext<'a> {
        ExecContext::with_memory(source, plan, &Memory::new(pool))
    }

    /// The context of a plan run as part of a statement whose buffers
    /// share `memory` (DML: the rows it reads, the rows it writes and what
    /// it returns count against one budget).
    pub fn with_memory(
        source: &'a mut dyn DataSource,
        plan: &'a Plan,
        memory: &Rc<Memory>,
    ) -> ExecContext<'a> {
        let now = source.now();
        let kept = Kept {
            sets: HashMap::new(),
            key_sets: HashMap::new(),
            held: memory.reserve("the values of IN UNNEST and IN lists"),
        };
        ExecContext {
            source,
            plan,
            outer: Vec::new(),
            cache: Rc::new(RefCell::new(HashMap::new())),
            now,
            pending_commit_timestamp: false,
            memory: memory.clone(),
            kept: Rc::new(RefCell::new(kept)),
        }
    }

    /// An empty reservation against the query's memory, for a buffer used
    /// for `what` ("a sort").
    pub(crate) fn reserve(&self, what: &'static str) -> Reservation {
        self.memory.reserve(what)
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

    pub(super) fn test(&mut self, e: &BoundExpr, row: &[Value]) -> Result<bool> {
        Ok(matches!(self.eval(e, row)?, Value::Bool(true)))
    }
}
