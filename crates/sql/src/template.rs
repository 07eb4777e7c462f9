//! Plan templates: a query bound once, planned again for each request's
//! parameter values.
//!
//! Binding reads parameter values in two places only, where the plan must
//! know a constant before it runs (see `binder::constant`): the bounds of
//! key predicates (`UserId = @id` becomes a key range) and LIMIT / OFFSET
//! counts. Everything else a parameter feeds (filters, projections, DML
//! values, `IN UNNEST(@ids)` keys) is a [`BoundExpr`](rowtree_expr::BoundExpr)
//! evaluated when the plan runs, against the plan's parameter values.
//!
//! So the bound plan of a query whose LIMIT and OFFSET do not read
//! parameters is the same for every value of its parameters but for the
//! key predicates computed from them. The binder records each of those
//! (a [`KeyCall`]: the conjunct, the scope it was read in, and the shape of
//! what it gave, which is all binding decided from it: whether there is a
//! predicate, its kind, whether an `=` bound is NULL), and marks the
//! conjunct that holds it (`key_site`). A [`Template`] keeps the bound
//! plan before the planner's passes. Instantiating it for other values
//! computes each recorded key predicate again with them; if every one has
//! the shape it had, binding would have gone the same way, so the template
//! with the new predicates and parameter values *is* the bound plan for
//! those values, and the planner's passes run over it as they would after
//! binding (key ranges, index choice, limits: all follow the new values).
//! If a shape differs (`@id` was NULL and is not), the statement is bound
//! afresh. Parsing and binding are what a hit saves; planning runs every
//! time, and errors come out as without a template (binding errors are
//! never templated, planning errors are raised again).
//!
//! A template is used only with the catalog it was bound against (the
//! same `Arc`), and lives in the statement cache ([`crate::cache`]).

use std::cell::Cell;
use std::sync::Arc;

use rowtree_parser::ast::Query;
use rowtree_schema::Catalog;

use crate::binder::{Binder, KeyCall, KeyShape};
use crate::error::Result;
use crate::keyrange::KeyPredicate;
use crate::plan::{Node, NodeKind, Plan};
use crate::scope::UsedColumns;
use crate::Params;

/// A bound, not yet planned, query with the key predicates that depend on
/// parameter values marked (see the module docs).
#[derive(Debug)]
pub(crate) struct Template {
    catalog: Arc<Catalog>,
    plan: Plan,
    /// The columns each scan reads ([`UsedColumns`], as plain flags).
    used: Vec<Vec<bool>>,
    key_calls: Vec<KeyCall>,
}

impl Template {
    /// Whether the template was bound against `catalog` (the same `Arc`):
    /// only then may it stand for a fresh binding.
    pub(crate) fn is_for(&self, catalog: &Arc<Catalog>) -> bool {
        Arc::ptr_eq(&self.catalog, catalog)
    }

    /// The planned query for `params`, or `None` when the template does not
    /// hold for them (another catalog, or a key predicate of another shape):
    /// then the statement must be bound afresh.
    pub(crate) fn plan(&self, catalog: &Arc<Catalog>, params: &Params) -> Option<Result<Plan>> {
        if !self.is_for(catalog) {
            return None;
        }
        let (mut plan, used) = self.instantiate(catalog, params)?;
        Some(crate::optimize(catalog, &mut plan, &used).map(|()| plan))
    }

    /// The bound plan for `params`, if the template holds for them.
    fn instantiate(&self, catalog: &Catalog, params: &Params) -> Option<(Plan, UsedColumns)> {
        let binder = Binder::new(catalog, params);
        let mut keys = Vec::with_capacity(self.key_calls.len());
        for call in &self.key_calls {
            let key = binder.key_predicate_of(&call.conjunct, &call.scope);
            if KeyShape::of(&key) != call.shape {
                return None;
            }
            keys.push(key);
        }
        let mut plan = self.plan.clone();
        plan.params = binder.param_values;
        if !keys.is_empty() {
            substitute(&mut plan.root, &keys);
            for sub in plan.subqueries.iter_mut() {
                substitute(&mut sub.root, &keys);
            }
        }
        let used = UsedColumns {
            scans: self
                .used
                .iter()
                .map(|scan| scan.iter().map(|&u| Cell::new(u)).collect())
                .collect(),
        };
        Some((plan, used))
    }
}

/// Gives each conjunct with a `key_site` the predicate computed for it.
fn substitute(node: &mut Node, keys: &[Option<KeyPredicate>]) {
    if let NodeKind::Scan(scan) = &mut node.kind {
        for c in scan.conjuncts.iter_mut() {
            if let Some(site) = c.key_site {
                c.key = keys[site].clone();
            }
        }
    }
    for child in node.children_mut() {
        substitute(child, keys);
    }
}

/// What [`bind`] gives: the bound plan, the columns its scans use, and
/// the template made of it (with its estimated size in bytes), if asked for
/// and possible.
pub(crate) type Bound = (Plan, UsedColumns, Option<(Template, usize)>);

/// Binds `query` for `params` (not yet planned: run [`crate::optimize`] on
/// the result); with `record`, also makes the bound plan a template when it
/// may be one, returned with its estimated size in bytes.
pub(crate) fn bind(
    catalog: &Arc<Catalog>,
    query: &Query,
    params: &Params,
    record: bool,
) -> Result<Bound> {
    let (plan, used, binder_state) = crate::bind_query_recorded(catalog, query, params, record)?;
    let template = binder_state.map(|key_calls| {
        let bytes = estimated_size(&plan, &key_calls);
        let template = Template {
            catalog: catalog.clone(),
            plan: plan.clone(),
            used: used
                .scans
                .iter()
                .map(|scan| scan.iter().map(Cell::get).collect())
                .collect(),
            key_calls,
        };
        (template, bytes)
    });
    Ok((plan, used, template))
}

/// A generous estimate of a template's size in bytes: per operator, per
/// scan conjunct, per column of the scopes its key calls keep.
fn estimated_size(plan: &Plan, key_calls: &[KeyCall]) -> usize {
    fn walk(node: &Node, total: &mut usize) {
        *total += 1024;
        if let NodeKind::Scan(scan) = &node.kind {
            *total += 512 * scan.conjuncts.len();
        }
        for child in node.children() {
            walk(child, total);
        }
    }
    let mut total = 256 * plan.columns.len();
    walk(&plan.root, &mut total);
    for sub in &plan.subqueries {
        walk(&sub.root, &mut total);
    }
    for call in key_calls {
        total += 512 + 128 * call.scope.columns.len();
    }
    total
}
