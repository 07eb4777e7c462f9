//! GoogleSQL queries and DML over Rowtree.
//!
//! A statement goes through these steps (each a module):
//!
//! 1. [`session`]: `Session::execute` parses the text (or finds it in the
//!    database's statement cache, [`cache`]) and dispatches: DDL
//!    to the database, BEGIN/COMMIT/ROLLBACK to the session's transaction,
//!    queries to a strong read-only transaction (or the open one), DML to a
//!    read-write transaction of its own (retried when aborted) or the open one.
//! 2. [`binder`] (with [`scope`]): names are resolved and expressions typed,
//!    clause by clause (one module each); the result is a tree of operators
//!    ([`plan`]), with WHERE conjuncts pushed to the scans they constrain
//!    and constant bounds copied across join equalities.
//! 3. [`planner`]: a list of named passes, each from plan to plan, runs in
//!    order: interleaved joins become merges, each scan gets its access
//!    path (key ranges from [`keyrange`], the primary key or an index), a
//!    merge reads each row tree once, sorts the key order gives are removed
//!    (or the scan runs backwards), a LIMIT becomes the scan's early stop.
//!    [`plan_query_steps`] shows the plan after each.
//! 4. [`executor`]: the tree runs as pull-based iterators over a
//!    [`DataSource`] (a transaction), streaming where it can.
//! 5. [`dml`]: INSERT/UPDATE/DELETE find their rows with the same machinery
//!    and apply mutations into the transaction, so later statements see them.
//! 6. [`explain`]: the tree described as a [`PlanTree`], from which EXPLAIN
//!    text (EXPLAIN ANALYZE with row counts) and the API's query plan are
//!    rendered.
//!
//! A query found in the statement cache skips step 2 too: its bound plan
//! is a template (`template`) that the request's parameter values
//! complete, and step 3 runs over it.
//!
//! What a statement returns is in [`result`].
//!
//! [`limits`] holds the query limits checked before any of this starts
//! (and the memory budgets checked while it runs, DML included);
//! [`params`] the query parameters a statement is bound with;
//! [`partitioned`] runs an UPDATE or DELETE as partitioned DML, one
//! transaction per partition of the table.
//!
//! [`views`] binds view queries: for DDL validation (a database opened with
//! [`database_options`] carries the analyzer) and when a query reads a view.

pub mod binder;
pub mod cache;
pub mod dml;
pub mod error;
pub mod executor;
pub mod explain;
mod expr_tree;
pub mod information_schema;
pub mod keyrange;
pub mod limits;
pub mod params;
pub mod partitioned;
pub mod plan;
pub mod planner;
pub mod result;
pub mod rowtree_sys;
pub mod scope;
pub mod session;
pub mod spanner_sys;
mod template;
pub mod views;

use std::sync::Arc;

use rowtree_parser::ast;
use rowtree_schema::Catalog;

pub use cache::{statement_cache, CacheLimits, CacheStats, StatementCache};
pub use error::{Error, Result, SqlError};
pub use executor::{DataSource, RowIter};
pub use explain::{NodeStats, PlanNode, PlanTree, ScanCounters};
pub use params::Params;
pub use partitioned::execute_partitioned_dml;
pub use plan::Plan;
pub use result::{ExecuteResult, QueryResult, QueryStats};
pub use session::{execute_in, Executed, QueryMode, RowSink, Session, TxnRef};
pub use views::{analyzer, database_options, view_columns};

/// Binds and plans a query against `catalog`.
pub fn plan_query(catalog: &Catalog, query: &ast::Query, params: &Params) -> Result<Plan> {
    let (mut plan, used) = bind_query(catalog, query, params)?;
    optimize(catalog, &mut plan, &used)?;
    Ok(plan)
}

/// Binds a query without running the planner's passes: the plan
/// [`plan_query_steps`] calls `bind`. It cannot run (its scans have no
/// access path yet); the benchmarks time binding with it.
pub fn bind_only(catalog: &Catalog, query: &ast::Query, params: &Params) -> Result<Plan> {
    bind_query(catalog, query, params).map(|(plan, _)| plan)
}

/// Runs the planner's passes over a bound plan.
fn optimize(catalog: &Catalog, plan: &mut Plan, used: &scope::UsedColumns) -> Result<()> {
    planner::optimize(plan, &planner::Context { catalog, used })
}

/// Binds a query and runs the planner's passes (`planner::OPTIMIZERS`)
/// one by one: the plan as EXPLAIN shows it after binding (named `bind`),
/// then after each pass, by the pass's name.
pub fn plan_query_steps(
    catalog: &Catalog,
    query: &ast::Query,
    params: &Params,
) -> Result<Vec<(&'static str, String)>> {
    let (mut plan, used) = bind_query(catalog, query, params)?;
    let ctx = planner::Context {
        catalog,
        used: &used,
    };
    let mut steps = vec![("bind", plan.explain())];
    for (name, pass) in planner::OPTIMIZERS {
        planner::run_pass(&mut plan, *pass, &ctx)?;
        steps.push((*name, plan.explain()));
    }
    Ok(steps)
}

/// The bound (not yet planned) query, and the columns it reads of each scan.
fn bind_query(
    catalog: &Catalog,
    query: &ast::Query,
    params: &Params,
) -> Result<(Plan, scope::UsedColumns)> {
    let (plan, used, _) = bind_query_recorded(catalog, query, params, false)?;
    Ok((plan, used))
}

/// Like [`bind_query`]; with `record`, also the key predicates computed
/// from parameter values, when the bound plan may serve as a template for
/// other values (see [`template`]).
fn bind_query_recorded(
    catalog: &Catalog,
    query: &ast::Query,
    params: &Params,
    record: bool,
) -> Result<(Plan, scope::UsedColumns, Option<Vec<binder::KeyCall>>)> {
    let binder = binder::Binder::new(catalog, params);
    binder.record_keys.set(record);
    let out = binder.query(query, None)?;
    let plan = Plan {
        root: out.node,
        columns: out.columns,
        subqueries: binder.take_subqueries(),
        params: binder.param_values.clone(),
    };
    let calls = (record && !binder.value_dependent.get()).then(|| binder.key_calls.take());
    Ok((plan, binder.used.into_inner(), calls))
}

impl Plan {
    /// Runs the plan over `source`, returning its rows as they are
    /// produced; what its operators buffer draws from `pool` (see
    /// [`limits`]).
    pub fn execute<'a>(
        &'a self,
        source: &'a mut dyn DataSource,
        pool: &Arc<limits::MemoryPool>,
    ) -> Result<RowIter<'a>> {
        Ok(RowIter::new(self, source, pool))
    }

    /// The operator tree, described (see [`explain`]); with `analyze`,
    /// with the counters of the execution that ran.
    pub fn describe(&self, analyze: bool) -> PlanTree {
        explain::describe(self, analyze)
    }

    /// The operator tree as text (see [`explain`]).
    pub fn explain(&self) -> String {
        self.describe(false).text()
    }

    /// The operator tree with the row counts of the execution that ran.
    pub fn explain_analyze(&self) -> String {
        self.describe(true).text()
    }
}
