//! The plan: a tree of operators with bound expressions.
//!
//! The [`crate::binder`] builds the tree from the AST (names resolved,
//! expressions typed, predicates pushed to the scans they constrain); the
//! [`crate::planner`] then picks each scan's access path (key ranges, index,
//! direction, early limit) and drops sorts the key order already gives;
//! [`crate::executor`] runs it; [`crate::explain`] prints it.
//!
//! Rows are `Vec<Value>`s of a width fixed per node. A scan's row is
//! table-shaped (slot `i` is `Table::columns[i]`); a join's row is the left
//! row followed by the right row; a projection's row is its expressions.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use rowtree_db::KeySet;
use rowtree_expr::{BoundExpr, SubqueryKind};
use rowtree_parser::ast::{JoinKind, SetOperator};
use rowtree_schema::KeyColumn;
use rowtree_types::{Type, Value};

/// A planned query, ready to execute (see [`Plan::execute`](crate::Plan::execute)).
#[derive(Debug, Clone)]
pub struct Plan {
    pub(crate) root: Node,
    /// Output column names (empty for anonymous) and types.
    pub(crate) columns: Vec<(String, Type)>,
    /// Subqueries used by expressions, indexed by the id the binder handed out.
    pub(crate) subqueries: Vec<SubqueryPlan>,
    /// Query parameter values, by name.
    pub(crate) params: HashMap<String, Value>,
}

impl Plan {
    /// The result columns: name (empty when anonymous) and type.
    pub fn columns(&self) -> &[(String, Type)] {
        &self.columns
    }
}

/// A subquery expression's plan.
#[derive(Debug, Clone)]
pub(crate) struct SubqueryPlan {
    pub root: Node,
    pub kind: SubqueryKind,
    /// Slots of the enclosing row whose values the subquery reads
    /// (correlation); empty for an uncorrelated subquery, which runs once.
    pub correlations: Vec<usize>,
    /// Wrap a multi-column row into a STRUCT (SELECT AS STRUCT in ARRAY()).
    pub text: String,
}

/// Rows and scan counters an operator saw (EXPLAIN ANALYZE).
///
/// A clone starts at zero: a plan is cloned to run again (a cached
/// template, [`crate::template`]), and each run counts its own rows.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub rows: AtomicU64,
    pub scanned: AtomicU64,
    pub splits: AtomicU64,
}

impl Clone for Counters {
    fn clone(&self) -> Counters {
        Counters::default()
    }
}

impl Counters {
    pub fn add_rows(&self, n: u64) {
        self.rows.fetch_add(n, Ordering::Relaxed);
    }
    pub fn get(&self) -> (u64, u64, u64) {
        (
            self.rows.load(Ordering::Relaxed),
            self.scanned.load(Ordering::Relaxed),
            self.splits.load(Ordering::Relaxed),
        )
    }
}

/// One operator of the plan with the width of the rows it produces.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub kind: NodeKind,
    pub width: usize,
    pub counters: Counters,
}

impl Node {
    pub fn new(kind: NodeKind, width: usize) -> Node {
        Node {
            kind,
            width,
            counters: Counters::default(),
        }
    }

    /// `input` filtered by `predicate` (`text` is how EXPLAIN shows it).
    pub(crate) fn filter(input: Node, predicate: BoundExpr, text: String) -> Node {
        let width = input.width;
        Node::new(
            NodeKind::Filter {
                input: Box::new(input),
                predicate,
                text,
            },
            width,
        )
    }

    /// `exprs` computed over each row of `input`, named `names`.
    pub(crate) fn project(input: Node, exprs: Vec<BoundExpr>, names: Vec<String>) -> Node {
        let width = exprs.len();
        Node::new(
            NodeKind::Project {
                input: Box::new(input),
                exprs,
                names,
            },
            width,
        )
    }

    /// The children, in display order.
    pub fn children(&self) -> Vec<&Node> {
        match &self.kind {
            NodeKind::Scan(_)
            | NodeKind::Values { .. }
            | NodeKind::Rows { .. }
            | NodeKind::SystemTable { .. } => vec![],
            NodeKind::Filter { input, .. }
            | NodeKind::Project { input, .. }
            | NodeKind::Aggregate { input, .. }
            | NodeKind::Sort { input, .. }
            | NodeKind::Limit { input, .. }
            | NodeKind::Distinct { input }
            | NodeKind::Unnest { input, .. }
            | NodeKind::Window { input, .. } => vec![input],
            NodeKind::Join { left, right, .. } | NodeKind::SetOp { left, right, .. } => {
                vec![left, right]
            }
        }
    }

    /// The children, mutably, in display order.
    pub(crate) fn children_mut(&mut self) -> Vec<&mut Node> {
        match &mut self.kind {
            NodeKind::Scan(_)
            | NodeKind::Values { .. }
            | NodeKind::Rows { .. }
            | NodeKind::SystemTable { .. } => vec![],
            NodeKind::Filter { input, .. }
            | NodeKind::Project { input, .. }
            | NodeKind::Aggregate { input, .. }
            | NodeKind::Sort { input, .. }
            | NodeKind::Limit { input, .. }
            | NodeKind::Distinct { input }
            | NodeKind::Unnest { input, .. }
            | NodeKind::Window { input, .. } => vec![input],
            NodeKind::Join { left, right, .. } | NodeKind::SetOp { left, right, .. } => {
                vec![left, right]
            }
        }
    }
}

/// The operators.
#[derive(Debug, Clone)]
pub(crate) enum NodeKind {
    /// Read a table (or through an index) by key ranges.
    Scan(Box<ScanNode>),
    /// Rows of expressions (`SELECT` without FROM is one empty row).
    Values {
        rows: Vec<Vec<BoundExpr>>,
    },
    /// Precomputed rows (INFORMATION_SCHEMA and other virtual tables).
    Rows {
        name: String,
        rows: Vec<Vec<Value>>,
    },
    /// A SPANNER_SYS table, read from the database when the plan runs.
    SystemTable {
        name: String,
        table: crate::spanner_sys::SysTable,
    },
    Filter {
        input: Box<Node>,
        predicate: BoundExpr,
        text: String,
    },
    Project {
        input: Box<Node>,
        exprs: Vec<BoundExpr>,
        names: Vec<String>,
    },
    /// Group by `groups`; the row is the group values then the aggregates.
    Aggregate {
        input: Box<Node>,
        groups: Vec<BoundExpr>,
        aggregates: Vec<AggregateCall>,
        texts: Vec<String>,
    },
    Sort {
        input: Box<Node>,
        keys: Vec<SortKey>,
    },
    /// `LIMIT` / `OFFSET`: stops pulling once `offset + limit` rows passed.
    Limit {
        input: Box<Node>,
        limit: Option<u64>,
        offset: u64,
    },
    Distinct {
        input: Box<Node>,
    },
    Join {
        left: Box<Node>,
        right: Box<Node>,
        kind: JoinKind,
        method: JoinMethod,
        /// Whether the planner may turn the method into an interleaved
        /// merge (no `JOIN_METHOD` hint, or `MERGE_JOIN`).
        merge_allowed: bool,
        /// The ON condition (over the joined row), after the equi-keys the method uses.
        condition: Option<BoundExpr>,
        text: String,
    },
    SetOp {
        left: Box<Node>,
        right: Box<Node>,
        op: SetOperator,
        all: bool,
    },
    /// Window (analytic) functions: buffers the input and emits each row in
    /// input order followed by one value per call.
    Window {
        input: Box<Node>,
        calls: Vec<WindowCall>,
    },
    /// For each input row, one row per array element: input ++ [element, (offset)].
    Unnest {
        input: Box<Node>,
        array: BoundExpr,
        with_offset: bool,
        outer: bool,
        text: String,
    },
}

/// The window functions [`NodeKind::Window`] computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WindowFunc {
    /// `IS_FIRST(k)`: whether the row is among the first `k` of its partition.
    IsFirst,
}

/// One window function call: its function, arguments (over the input row)
/// and window.
#[derive(Debug, Clone)]
pub(crate) struct WindowCall {
    pub func: WindowFunc,
    pub args: Vec<BoundExpr>,
    pub partition_by: Vec<BoundExpr>,
    /// (expr, desc, nulls_first).
    pub order_by: Vec<(BoundExpr, bool, bool)>,
    pub text: String,
}

/// One sort key over the input row.
#[derive(Debug, Clone)]
pub(crate) struct SortKey {
    pub slot: usize,
    pub desc: bool,
    pub nulls_first: bool,
    /// The table column the slot reads through plain projections, if any
    /// (lets the planner see that a scan already delivers this order).
    pub origin: Option<(usize, usize)>,
    pub text: String,
}

/// How a join finds matching rows.
#[derive(Debug, Clone)]
pub(crate) enum JoinMethod {
    /// Build a hash table over the right input's keys; probe with the left's.
    Hash {
        left_keys: Vec<BoundExpr>,
        right_keys: Vec<BoundExpr>,
    },
    /// Re-run the right input for every left row (also the apply join of
    /// correlated inputs).
    NestedLoop,
    /// Parent and interleaved child, both read in key order: merge on the
    /// parent key, holding one parent row at a time (no hash table).
    /// `left_keys`/`right_keys` are slots of the parent key in each row.
    InterleavedMerge {
        left_keys: Vec<usize>,
        right_keys: Vec<usize>,
        desc: Vec<bool>,
        /// Set by the planner when both inputs are plain table scans: the
        /// join then reads the parent's row trees once with one tree scan
        /// (the parent's key ranges, widened to whole row trees) instead of
        /// running the two scans.
        tree: Option<Box<TreeScan>>,
    },
}

/// The single scan of an interleaved merge join that reads each row tree
/// once (see [`JoinMethod::InterleavedMerge`]), in place of the parent and
/// child scans (whose conjuncts it checks). Its counters stand for both.
#[derive(Debug, Default, Clone)]
pub(crate) struct TreeScan {
    /// Parent keys whose row trees are read.
    pub key_set: KeySet,
    /// When an array gives the parent keys: the key set to build when the
    /// statement runs, in place of `key_set` (see [`Access::deferred`]).
    pub deferred: Option<crate::keyrange::DeferredKeys>,
    pub ranges_text: String,
    /// The parent conjuncts checked on parent rows (indexes into its
    /// conjuncts): those the key set does not answer.
    pub parent_filter: Vec<usize>,
    /// The child conjuncts checked on child rows: all but those the key set
    /// already implies.
    pub child_filter: Vec<usize>,
    pub counters: Counters,
}

/// An aggregate call computed by [`NodeKind::Aggregate`].
#[derive(Debug, Clone)]
pub(crate) struct AggregateCall {
    pub name: String,
    pub args: Vec<BoundExpr>,
    pub distinct: bool,
    pub ignore_nulls: Option<bool>,
    /// `ORDER BY` inside the call (ARRAY_AGG, STRING_AGG): (expr, desc, nulls_first).
    pub order_by: Vec<(BoundExpr, bool, bool)>,
    pub limit: Option<u64>,
    pub ty: Type,
    pub text: String,
}

/// Which index a FORCE_INDEX hint asks for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum IndexHint {
    None,
    BaseTable,
    Index(String),
}

/// A predicate pushed to a scan: bound over the table row, with its
/// key-range reading when it has one.
#[derive(Debug, Clone)]
pub(crate) struct Conjunct {
    pub expr: BoundExpr,
    pub key: Option<crate::keyrange::KeyPredicate>,
    pub text: String,
    /// When `key` was computed from parameter values: which of the
    /// binder's key calls computed it ([`crate::template`] computes it
    /// again for other values).
    pub key_site: Option<usize>,
}

/// A table read, with the access path the planner chose.
#[derive(Debug, Clone)]
pub(crate) struct ScanNode {
    pub scan_id: usize,
    pub table: String,
    pub hint: IndexHint,
    pub conjuncts: Vec<Conjunct>,
    /// Chosen by the planner.
    pub access: Access,
}

/// The access path of a scan.
#[derive(Debug, Clone)]
pub(crate) struct Access {
    pub index: Option<String>,
    /// The key columns of the path (index full key, or primary key).
    pub key_columns: Vec<KeyColumn>,
    pub key_set: KeySet,
    /// When `col IN UNNEST(array)` pins a key column: the key set, built
    /// from the array once the statement runs, in place of `key_set`.
    pub deferred: Option<crate::keyrange::DeferredKeys>,
    pub ranges_text: String,
    pub reverse: bool,
    /// Stop after this many rows (0 = no limit): only when nothing filters later.
    pub limit: usize,
    /// The index does not hold every column read: fetch the base row by key.
    pub back_join: bool,
    /// Conjuncts not answered by the key set (indexes into `conjuncts`).
    pub residual: Vec<usize>,
    /// Leading key columns pinned to one value (they do not affect order).
    pub fixed: usize,
    /// Whether the planner chose this path (a bound plan's scans have not
    /// been given one yet).
    pub chosen: bool,
    /// Read only the keys after this one (a partition of partitioned DML
    /// resumes where the previous one stopped); never set by the planner.
    pub after: Option<rowtree_db::Key>,
}

impl Default for Access {
    fn default() -> Self {
        Access {
            index: None,
            key_columns: Vec::new(),
            key_set: KeySet::all(),
            deferred: None,
            ranges_text: "full scan".into(),
            reverse: false,
            limit: 0,
            back_join: false,
            residual: Vec::new(),
            fixed: 0,
            chosen: false,
            after: None,
        }
    }
}
