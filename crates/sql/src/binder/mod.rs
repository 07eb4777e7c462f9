//! Binding: from the AST of a query to a plan tree with typed expressions.
//!
//! A SELECT is bound clause by clause, in the order its names become
//! visible, one module per clause:
//!
//! 1. **FROM** (`from`, `join`, `unnest`) builds the row: tables
//!    (each scan's row is the table's row), derived tables, CTEs and views
//!    (inlined), UNNEST, joins. The result is a `Node` and a `RowScope`
//!    naming its slots.
//! 2. **WHERE** (`where_clause`) is split into conjuncts. A conjunct that
//!    reads one table only is *pushed* to that table's scan with the
//!    `KeyPredicate` it states (`key_predicate`), where the planner can
//!    turn it into key ranges ([`crate::keyrange`]); bounds pushed to one
//!    side of a join equality are copied to the other (`transfer`); the
//!    rest become a filter.
//! 3. **GROUP BY / aggregates / HAVING** (`aggregate`): when the query
//!    aggregates, select items, HAVING and ORDER BY are bound in the
//!    *post-aggregation* scope, whose row is the group keys followed by the
//!    aggregate values. An aggregate call met while binding (through the
//!    [`rowtree_expr::Scope`] hook, see `expr_scope`) has its arguments
//!    bound in the FROM scope and gets the next aggregate slot.
//! 4. **Window functions** (`window`) over the row after WHERE.
//! 5. **SELECT list** (`select`, with `*` expansion), then **ORDER BY**
//!    (aliases, ordinals, or any expression of the FROM scope, carried as
//!    extra hidden columns), **DISTINCT** and **AS STRUCT** (`order_by`).
//!
//! Around a block: `query` binds WITH and LIMIT/OFFSET, `set_op` the
//! set operations. Expressions the binder writes itself (casts, slot
//! references) are typed through `synthetic` scopes; constants known at
//! plan time are evaluated by `constant`.
//!
//! Subquery expressions (`subquery`) are planned when the expression
//! binder meets them. A name the subquery cannot resolve is looked up in
//! the enclosing scope: such a *correlated* reference gets the slot
//! `width + k`, where `k` indexes the subquery's correlation list; the
//! executor appends the outer values after each row before evaluating, so
//! the slot holds the outer row's value.
//!
//! The binder makes the choices that need names: which scan a conjunct
//! belongs to, what it says about a key column, which bounds transfer
//! across joins, and the join's keys. Choices over the bound tree (access
//! paths, interleaved merges, sorts and limits the key order answers) are
//! the planner's passes ([`crate::planner`]).

mod aggregate;
mod constant;
mod expr_scope;
mod from;
mod join;
mod key_predicate;
mod order_by;
mod query;
mod select;
mod set_op;
mod subquery;
mod synthetic;
#[cfg(test)]
mod tests;
mod transfer;
mod typing;
mod unnest;
mod where_clause;
mod window;

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};

use rowtree_expr::{BindOptions, BoundExpr};
use rowtree_parser::ast::{Expr, Query};
use rowtree_schema::Catalog;
use rowtree_types::{Type, Value};

use crate::error::{Error, Result};
use crate::plan::{Node, SubqueryPlan};
use crate::scope::{Origin, RowScope, UsedColumns};

pub(crate) use constant::lookup_param;
pub(crate) use expr_scope::ExprScope;
pub(crate) use typing::data_type;

/// A bound query block: its plan and its output columns.
#[derive(Debug)]
pub(crate) struct Output {
    pub node: Node,
    pub columns: Vec<(String, Type)>,
    /// For each output column, the table column it passes through unchanged.
    pub origins: Vec<Option<(usize, usize)>>,
}

/// Binds the statements of one request.
pub(crate) struct Binder<'c> {
    pub catalog: &'c Catalog,
    pub options: BindOptions,
    pub param_values: HashMap<String, Value>,
    pub subqueries: RefCell<Vec<Option<SubqueryPlan>>>,
    pub used: RefCell<UsedColumns>,
    ctes: RefCell<Vec<(String, Query)>>,
    /// Each scan's own scope (its table under its alias).
    scan_scopes: RefCell<HashMap<usize, RowScope>>,
    /// Scans on the NULL-supplying side of an outer join: WHERE may not be pushed there.
    nonpushable: RefCell<HashSet<usize>>,
    /// Predicate transfer through join equalities: `(from, to)` when a join's
    /// ON/USING equates column `from` with column `to` (same type) and a
    /// constant bound on `from` that holds for the query's rows (a WHERE
    /// conjunct pushed to its scan, or one transferred there) may also be
    /// applied to `to`'s scan. INNER joins record both directions; an outer
    /// join only from its preserved side to its NULL-supplying side (a row of
    /// that side failing the bound matches no surviving preserved row).
    transfers: RefCell<Vec<(Origin, Origin)>>,
    /// The views being expanded (or defined), outermost first.
    pub views: RefCell<Vec<String>>,
    /// How many parameter values binding has read (only constants at plan
    /// time read them: key bounds, LIMIT and OFFSET; everything else reads
    /// them when the plan runs).
    pub param_reads: Cell<usize>,
    /// Whether a parameter value was read other than by a key call
    /// (LIMIT and OFFSET counts): the plan then holds it, and is no
    /// template for other values.
    pub value_dependent: Cell<bool>,
    /// Whether to record `key_calls` (only when the bound plan is to
    /// become a template: recording clones each call's conjunct and scope).
    pub record_keys: Cell<bool>,
    /// The key predicates computed from parameter values (`key_site`s of
    /// [`crate::plan::Conjunct`] index them), each with what it gave.
    pub key_calls: RefCell<Vec<KeyCall>>,
}

/// A key predicate computed from parameter values: its conjunct and the
/// scope it was read in, so it can be computed again for other values,
/// and the shape of what it gave, which decided how binding went on.
#[derive(Debug, Clone)]
pub(crate) struct KeyCall {
    pub conjunct: Expr,
    pub scope: RowScope,
    pub shape: KeyShape,
}

/// What binding decides from a key predicate: whether there is one, its
/// kind, and for `=`, whether the value is NULL (an `IS NULL` bound is not
/// transferred across joins).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyShape {
    None,
    EqNull,
    Eq,
    In,
    InArray,
    Lower,
    Upper,
    Between,
    NotNull,
}

impl KeyShape {
    pub fn of(key: &Option<crate::keyrange::KeyPredicate>) -> KeyShape {
        use crate::keyrange::KeyPredicate as K;
        match key {
            None => KeyShape::None,
            Some(K::Eq(_, v)) if v.is_null() => KeyShape::EqNull,
            Some(K::Eq(..)) => KeyShape::Eq,
            Some(K::In(..)) => KeyShape::In,
            Some(K::InArray(..)) => KeyShape::InArray,
            Some(K::Lower(..)) => KeyShape::Lower,
            Some(K::Upper(..)) => KeyShape::Upper,
            Some(K::Between(..)) => KeyShape::Between,
            Some(K::NotNull(..)) => KeyShape::NotNull,
        }
    }
}

/// How deep views may refer to views (Spanner: a view that refers to
/// another view has nesting depth 1; the limit is 10).
pub const MAX_VIEW_NESTING: usize = 10;

/// The enclosing query of a subquery, for correlated names.
pub(crate) struct Outer<'a> {
    scope: &'a dyn rowtree_expr::Scope,
    correlations: RefCell<Vec<usize>>,
}

impl<'c> Binder<'c> {
    pub fn new(catalog: &'c Catalog, params: &crate::Params) -> Binder<'c> {
        let options = BindOptions {
            params: params
                .iter()
                .map(|(k, (t, _))| (k.clone(), t.clone()))
                .collect(),
            untyped_null_params: params.untyped_nulls().map(str::to_string).collect(),
            allow_sequence_functions: true,
            allow_pending_commit_timestamp: false,
            protos: catalog.proto_descriptors().cloned(),
            exact_numeric: catalog.dialect() == rowtree_types::Dialect::PostgreSql,
        };
        Binder {
            catalog,
            options,
            param_values: params
                .iter()
                .map(|(k, (_, v))| (k.clone(), v.clone()))
                .collect(),
            subqueries: RefCell::new(Vec::new()),
            used: RefCell::new(UsedColumns::default()),
            ctes: RefCell::new(Vec::new()),
            scan_scopes: RefCell::new(HashMap::new()),
            nonpushable: RefCell::new(HashSet::new()),
            views: RefCell::new(Vec::new()),
            transfers: RefCell::new(Vec::new()),
            param_reads: Cell::new(0),
            value_dependent: Cell::new(false),
            record_keys: Cell::new(false),
            key_calls: RefCell::new(Vec::new()),
        }
    }

    /// Binds `e` in `scope`, preferring the scope's own (more precise) error.
    pub fn bind_in(&self, e: &Expr, scope: &ExprScope<'_, '_>) -> Result<BoundExpr> {
        let result = rowtree_expr::bind(e, scope, &self.options);
        if let Some(err) = scope.error.borrow_mut().take() {
            return Err(err);
        }
        result.map_err(Error::from)
    }

    fn bind_bool(&self, e: &Expr, scope: &ExprScope<'_, '_>, clause: &str) -> Result<BoundExpr> {
        let b = self.bind_in(e, scope)?;
        if *b.ty() != Type::Bool {
            return Err(Error::invalid_at(
                e.span(),
                format!("{clause} should return type BOOL, but returns {}", b.ty()),
            ));
        }
        Ok(b)
    }

    /// Takes the subquery plans out (ids stay valid: they index this list).
    pub fn take_subqueries(&self) -> Vec<SubqueryPlan> {
        self.subqueries
            .borrow_mut()
            .drain(..)
            .map(|s| s.expect("subquery planned"))
            .collect()
    }
}
