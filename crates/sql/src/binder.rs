//! Binding: from the AST of a query to a plan tree with typed expressions.
//!
//! A SELECT is bound clause by clause, in the order its names become
//! visible:
//!
//! 1. **FROM** builds the row: tables (each scan's row is the table's row),
//!    derived tables and CTEs (inlined), UNNEST, joins. The result is a
//!    [`Node`] and a [`RowScope`] naming its slots.
//! 2. **WHERE** is split into conjuncts. A conjunct that reads one table
//!    only is *pushed* to that table's scan, where the planner can turn it
//!    into key ranges ([`crate::keyrange`]); the rest become a filter.
//! 3. **GROUP BY / aggregates**: when the query aggregates, select items,
//!    HAVING and ORDER BY are bound in the *post-aggregation* scope, whose
//!    row is the group keys followed by the aggregate values. An aggregate
//!    call met while binding (through the [`rowtree_expr::Scope`] hook) has
//!    its arguments bound in the FROM scope and gets the next aggregate slot.
//! 4. **SELECT list** (with `*` expansion), **ORDER BY** (aliases, ordinals,
//!    or any expression of the FROM scope, carried as extra hidden columns),
//!    **DISTINCT**.
//!
//! Subquery expressions are planned when the expression binder meets them
//! (the `bind_subquery` hook). A name the subquery cannot resolve is looked
//! up in the enclosing scope: such a *correlated* reference gets the slot
//! `width + k`, where `k` indexes the subquery's correlation list; the
//! executor appends the outer values after each row before evaluating, so
//! the slot holds the outer row's value.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

use rowtree_expr::{BindOptions, BoundExpr, EvalContext, SubqueryKind};
use rowtree_parser::ast::{
    self, BinaryOp, DataType, Expr, Ident, IsTest, JoinCondition, JoinKind, Literal, Query, Select,
    SelectItem, SetExpr, Span, TableExpr,
};
use rowtree_schema::Catalog;
use rowtree_types::{Timestamp, Type, Value};

use crate::error::{Error, Result};
use crate::expr_tree::{
    self, and_all, canonical, column_paths, conjuncts, has_aggregate, has_subquery, same,
    window_spec,
};
use crate::keyrange::{key_value, KeyPredicate};
use crate::plan::{
    Access, AggregateCall, Conjunct, IndexHint, JoinMethod, Node, NodeKind, ScanNode, SortKey,
    SubqueryPlan, WindowCall, WindowFunc,
};
use crate::scope::{path_span, Origin, Resolved, RowScope, ScopeColumn, UsedColumns};

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
}

/// How deep views may refer to views (Spanner: a view that refers to
/// another view has nesting depth 1; the limit is 10).
pub const MAX_VIEW_NESTING: usize = 10;

/// The enclosing query of a subquery, for correlated names.
pub(crate) struct Outer<'a> {
    scope: &'a dyn rowtree_expr::Scope,
    correlations: RefCell<Vec<usize>>,
}

/// State of an aggregating SELECT while its clauses are bound.
pub(crate) struct AggContext<'a> {
    from: &'a RowScope,
    groups: usize,
    calls: RefCell<Vec<AggregateCall>>,
    keys: RefCell<Vec<String>>,
}

/// The [`rowtree_expr::Scope`] the expression binder sees.
pub(crate) struct ExprScope<'a, 'c> {
    binder: &'a Binder<'c>,
    row: &'a RowScope,
    outer: Option<&'a Outer<'a>>,
    agg: Option<&'a AggContext<'a>>,
    clause: &'static str,
    error: RefCell<Option<Error>>,
}

impl<'a, 'c> ExprScope<'a, 'c> {
    pub fn new(
        binder: &'a Binder<'c>,
        row: &'a RowScope,
        outer: Option<&'a Outer<'a>>,
        clause: &'static str,
    ) -> Self {
        ExprScope {
            binder,
            row,
            outer,
            agg: None,
            clause,
            error: RefCell::new(None),
        }
    }

    fn fail(&self, e: Error) {
        let mut slot = self.error.borrow_mut();
        if slot.is_none() {
            *slot = Some(e);
        }
    }
}

fn to_expr_error(e: &Error) -> rowtree_expr::Error {
    rowtree_expr::Error::InvalidArgument {
        message: e.message.clone(),
        span: e.span,
    }
}

impl rowtree_expr::Scope for ExprScope<'_, '_> {
    fn resolve(&self, path: &[Ident]) -> Option<(usize, Type)> {
        match self.row.resolve(path) {
            Ok(Resolved::Slot(slot, ty)) => {
                self.binder
                    .used
                    .borrow()
                    .mark(self.row.columns[slot].origin);
                return Some((slot, ty));
            }
            Err(e) => {
                self.fail(e);
                return None;
            }
            Ok(Resolved::NotFound) => {}
        }
        if let Some(agg) = self.agg {
            if let Ok(Resolved::Slot(..)) = agg.from.resolve(path) {
                let name = path.last().map(|i| i.value.clone()).unwrap_or_default();
                self.fail(Error::invalid_at(
                    path_span(path),
                    format!("{} expression references column {name} which is neither grouped nor aggregated", self.clause),
                ));
                return None;
            }
        }
        let outer = self.outer?;
        let (slot, ty) = outer.scope.resolve(path)?;
        let mut corr = outer.correlations.borrow_mut();
        let k = match corr.iter().position(|&s| s == slot) {
            Some(k) => k,
            None => {
                corr.push(slot);
                corr.len() - 1
            }
        };
        Some((self.row.width() + k, ty))
    }

    fn sequence_exists(&self, name: &str) -> Option<bool> {
        Some(self.binder.catalog.sequence(name).is_some())
    }

    fn suggest(&self, name: &str) -> Option<String> {
        let names = self
            .row
            .columns
            .iter()
            .filter(|c| c.unqualified)
            .map(|c| c.name.as_str())
            .chain(self.row.tables.iter().map(|(alias, _)| alias.as_str()));
        rowtree_expr::closest_name(name, names)
            .map(str::to_string)
            .or_else(|| self.outer.and_then(|o| o.scope.suggest(name)))
    }

    fn bind_aggregate(&self, call: &Expr) -> Option<rowtree_expr::Result<(usize, Type)>> {
        let agg = self.agg?;
        Some(
            self.binder
                .bind_aggregate(agg, call, self.outer)
                .map_err(|e| {
                    let ee = to_expr_error(&e);
                    self.fail(e);
                    ee
                }),
        )
    }

    fn aggregate_context_name(&self) -> Option<&str> {
        Some(self.clause)
    }

    fn bind_subquery(
        &self,
        expr: &Expr,
        query: &Query,
        kind: SubqueryKind,
    ) -> Option<rowtree_expr::Result<(usize, Type)>> {
        Some(
            self.binder
                .bind_subquery(self, expr, query, kind)
                .map_err(|e| {
                    let ee = to_expr_error(&e);
                    self.fail(e);
                    ee
                }),
        )
    }
}

/// Evaluation context for constants at plan time (LIMIT, key bounds).
struct ConstContext<'a> {
    params: &'a HashMap<String, Value>,
}

impl EvalContext for ConstContext<'_> {
    fn now(&self) -> Timestamp {
        Timestamp::from_nanos(0).expect("epoch is in range")
    }
    fn next_sequence_value(&mut self, _sequence: &str) -> rowtree_expr::Result<i64> {
        Err(rowtree_expr::Error::invalid("not a constant"))
    }
    fn sequence_state(&mut self, _sequence: &str) -> rowtree_expr::Result<Option<i64>> {
        Err(rowtree_expr::Error::invalid("not a constant"))
    }
    fn pending_commit_timestamp(&mut self) -> rowtree_expr::Result<Value> {
        Err(rowtree_expr::Error::invalid("not a constant"))
    }
    fn param(&self, name: &str) -> Option<Value> {
        lookup_param(self.params, name)
    }
}

/// A parameter value by name: exact first, then ignoring case.
pub(crate) fn lookup_param(params: &HashMap<String, Value>, name: &str) -> Option<Value> {
    params.get(name).cloned().or_else(|| {
        params
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    })
}

/// A row scope of anonymous columns `$c0`, `$c1`, ... for expressions the
/// binder builds itself (casts for set operations, STRUCT for AS STRUCT).
pub(crate) fn synthetic_scope(types: &[Type]) -> RowScope {
    RowScope::single(
        "$synthetic",
        types
            .iter()
            .enumerate()
            .map(|(i, t)| (format!("$c{i}"), t.clone(), false, None))
            .collect(),
    )
}

pub(crate) fn synthetic_column(i: usize, span: Span) -> Expr {
    Expr::Column {
        path: vec![Ident {
            value: format!("$c{i}"),
            span,
        }],
        span,
    }
}

/// The column type as a declared type (for CAST), when it has one.
pub(crate) fn data_type(t: &Type) -> Option<DataType> {
    Some(match t {
        Type::Bool => DataType::Bool,
        Type::Int64 => DataType::Int64,
        Type::Float32 => DataType::Float32,
        Type::Float64 => DataType::Float64,
        Type::Numeric => DataType::Numeric,
        Type::String => DataType::String(ast::Length::Max),
        Type::Bytes => DataType::Bytes(ast::Length::Max),
        Type::Date => DataType::Date,
        Type::Timestamp => DataType::Timestamp,
        Type::Json => DataType::Json,
        Type::Array(e) => DataType::Array(Box::new(data_type(e)?)),
        Type::Struct(_) => return None,
    })
}

fn set_op_name(op: ast::SetOperator, all: bool) -> String {
    let op = match op {
        ast::SetOperator::Union => "UNION",
        ast::SetOperator::Intersect => "INTERSECT",
        ast::SetOperator::Except => "EXCEPT",
    };
    format!("{op} {}", if all { "ALL" } else { "DISTINCT" })
}

/// The common supertype of two column types of a set operation.
fn common_type(a: &Type, b: &Type) -> Option<Type> {
    use Type::*;
    Some(match (a, b) {
        _ if a == b => a.clone(),
        (Int64, Numeric) | (Numeric, Int64) => Numeric,
        (Int64 | Numeric | Float32 | Float64, Int64 | Numeric | Float32 | Float64) => Float64,
        _ => return None,
    })
}

impl<'c> Binder<'c> {
    pub fn new(catalog: &'c Catalog, params: &crate::Params) -> Binder<'c> {
        let options = BindOptions {
            params: params
                .iter()
                .map(|(k, (t, _))| (k.clone(), t.clone()))
                .collect(),
            allow_sequence_functions: true,
            allow_pending_commit_timestamp: false,
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

    /// The value of a constant expression (literals, parameters, functions of
    /// them); `None` when it reads columns or is not deterministic.
    pub fn constant(&self, e: &Expr) -> Option<Value> {
        let mut paths = Vec::new();
        column_paths(e, &mut paths);
        if !paths.is_empty() || has_subquery(e) || has_aggregate(e) {
            return None;
        }
        let bound = rowtree_expr::bind(e, &(), &self.options).ok()?;
        if !bound.is_deterministic() {
            return None;
        }
        bound
            .eval(
                &[],
                &mut ConstContext {
                    params: &self.param_values,
                },
            )
            .ok()
    }

    /// LIMIT / OFFSET: an INT64 literal or parameter, not negative.
    fn count(&self, e: &Expr, what: &str) -> Result<u64> {
        let ok = matches!(e, Expr::Literal { .. } | Expr::Parameter { .. })
            || matches!(e, Expr::Cast { expr, .. } if matches!(**expr, Expr::Literal{..} | Expr::Parameter{..}));
        let value = if ok { self.constant(e) } else { None };
        match value {
            Some(Value::Int64(n)) if n >= 0 => Ok(n as u64),
            Some(Value::Int64(_)) => Err(Error::invalid_at(
                e.span(),
                format!("{what} expects a non-negative integer literal or parameter"),
            )),
            Some(Value::Null) => Err(Error::invalid_at(
                e.span(),
                format!("{what} must not be null"),
            )),
            _ => Err(Error::invalid_at(
                e.span(),
                format!("{what} expects an integer literal or parameter"),
            )),
        }
    }

    // ----- queries -------------------------------------------------------

    /// Binds a whole query (WITH, body, ORDER BY, LIMIT).
    pub fn query(&self, q: &Query, outer: Option<&Outer<'_>>) -> Result<Output> {
        rowtree_types::stack::guarded(|| self.query_node(q, outer))
    }

    fn query_node(&self, q: &Query, outer: Option<&Outer<'_>>) -> Result<Output> {
        for (i, cte) in q.with.iter().enumerate() {
            if q.with[..i]
                .iter()
                .any(|c| c.name.value.eq_ignore_ascii_case(&cte.name.value))
            {
                return Err(Error::invalid_at(
                    cte.name.span,
                    format!("Duplicate alias {} for WITH subquery", cte.name.value),
                ));
            }
        }
        let pushed = q.with.len();
        for cte in &q.with {
            self.ctes
                .borrow_mut()
                .push((cte.name.value.clone(), (*cte.query).clone()));
        }
        let result = self.query_body(q, outer);
        let n = self.ctes.borrow().len();
        self.ctes.borrow_mut().truncate(n - pushed);
        result
    }

    fn query_body(&self, q: &Query, outer: Option<&Outer<'_>>) -> Result<Output> {
        let mut out = match &q.body {
            SetExpr::Select(s) => self.select(s, outer, &q.order_by)?,
            other => {
                let o = self.set_expr(other, outer)?;
                self.order_output(o, &q.order_by, outer)?
            }
        };
        if q.limit.is_some() || q.offset.is_some() {
            let limit = q
                .limit
                .as_ref()
                .map(|e| self.count(e, "LIMIT"))
                .transpose()?;
            let offset = q
                .offset
                .as_ref()
                .map(|e| self.count(e, "OFFSET"))
                .transpose()?
                .unwrap_or(0);
            let width = out.node.width;
            out.node = Node::new(
                NodeKind::Limit {
                    input: Box::new(out.node),
                    limit,
                    offset,
                },
                width,
            );
        }
        Ok(out)
    }

    fn set_expr(&self, e: &SetExpr, outer: Option<&Outer<'_>>) -> Result<Output> {
        rowtree_types::stack::guarded(|| self.set_expr_node(e, outer))
    }

    fn set_expr_node(&self, e: &SetExpr, outer: Option<&Outer<'_>>) -> Result<Output> {
        match e {
            SetExpr::Select(s) => self.select(s, outer, &[]),
            SetExpr::Query(q) => self.query(q, outer),
            SetExpr::SetOperation {
                op,
                all,
                left,
                right,
                span,
            } => {
                let l = self.set_expr(left, outer)?;
                let r = self.set_expr(right, outer)?;
                let name = set_op_name(*op, *all);
                if l.columns.len() != r.columns.len() {
                    return Err(Error::invalid_at(
                        *span,
                        format!(
                            "Queries in {name} have mismatched column count; query 1 has {} column{}, query 2 has {} column{}",
                            l.columns.len(),
                            if l.columns.len() == 1 { "" } else { "s" },
                            r.columns.len(),
                            if r.columns.len() == 1 { "" } else { "s" }
                        ),
                    ));
                }
                let mut types = Vec::new();
                // An untyped NULL column takes the other side's type.
                let nulls = |o: &Output| -> Vec<bool> {
                    (0..o.columns.len())
                        .map(|i| untyped_null_column(&o.node, i))
                        .collect()
                };
                let (lnull, rnull) = (nulls(&l), nulls(&r));
                for (i, ((_, a), (_, b))) in l.columns.iter().zip(&r.columns).enumerate() {
                    let common = if rnull[i] {
                        Some(a.clone())
                    } else if lnull[i] {
                        Some(b.clone())
                    } else {
                        common_type(a, b)
                    };
                    match common {
                        Some(t) => types.push(t),
                        None => {
                            return Err(Error::invalid_at(
                                *span,
                                format!(
                                    "Column {} in {name} has incompatible types: {a}, {b}",
                                    i + 1
                                ),
                            ))
                        }
                    }
                }
                let columns: Vec<(String, Type)> = l
                    .columns
                    .iter()
                    .zip(&types)
                    .map(|((n, _), t)| (n.clone(), t.clone()))
                    .collect();
                let left = self.coerce_output(l, &types, &lnull, *span)?;
                let right = self.coerce_output(r, &types, &rnull, *span)?;
                let width = columns.len();
                Ok(Output {
                    node: Node::new(
                        NodeKind::SetOp {
                            left: Box::new(left),
                            right: Box::new(right),
                            op: *op,
                            all: *all,
                        },
                        width,
                    ),
                    origins: vec![None; width],
                    columns,
                })
            }
        }
    }

    /// Casts an output's columns to `types` where they differ; a column that
    /// is an untyped NULL (`nulls`) becomes a NULL of its new type.
    fn coerce_output(&self, o: Output, types: &[Type], nulls: &[bool], span: Span) -> Result<Node> {
        if o.columns.iter().zip(types).all(|((_, a), b)| a == b) {
            return Ok(o.node);
        }
        let current: Vec<Type> = o.columns.iter().map(|(_, t)| t.clone()).collect();
        let scope = synthetic_scope(&current);
        let es = ExprScope::new(self, &scope, None, "SELECT list");
        let mut exprs = Vec::new();
        for (i, t) in types.iter().enumerate() {
            if current[i] != *t && nulls.get(i).copied().unwrap_or(false) {
                exprs.push(BoundExpr::null_of(t.clone(), span));
                continue;
            }
            let col = synthetic_column(i, span);
            let e = if current[i] == *t {
                col
            } else {
                Expr::Cast {
                    expr: Box::new(col),
                    to: data_type(t).ok_or_else(|| {
                        Error::invalid_at(span, "Cannot coerce set operation column")
                    })?,
                    safe: false,
                    span,
                }
            };
            exprs.push(self.bind_in(&e, &es)?);
        }
        Ok(project(
            o.node,
            exprs,
            o.columns.iter().map(|(n, _)| n.clone()).collect(),
        ))
    }

    /// ORDER BY over a set operation's (or parenthesised query's) output.
    fn order_output(
        &self,
        o: Output,
        order_by: &[ast::OrderByItem],
        outer: Option<&Outer<'_>>,
    ) -> Result<Output> {
        if order_by.is_empty() {
            return Ok(o);
        }
        let types: Vec<Type> = o.columns.iter().map(|(_, t)| t.clone()).collect();
        let scope = RowScope::single(
            "",
            o.columns
                .iter()
                .map(|(n, t)| (n.clone(), t.clone(), true, None))
                .collect(),
        );
        let mut scope = scope;
        scope.tables.clear();
        let es = ExprScope::new(self, &scope, outer, "ORDER BY clause");
        let width = types.len();
        let mut extras = Vec::new();
        let mut keys = Vec::new();
        for item in order_by {
            let slot = match self.ordinal(&item.expr, width)? {
                Some(i) => i,
                None => {
                    let b = self.bind_in(&item.expr, &es)?;
                    extras.push(b);
                    width + extras.len() - 1
                }
            };
            keys.push(sort_key(item, slot, None));
        }
        let Output {
            node,
            columns,
            origins,
        } = o;
        let names: Vec<String> = columns.iter().map(|(n, _)| n.clone()).collect();
        let node = sort_with_extras(self, node, &types, extras, keys, &names)?;
        Ok(Output {
            node,
            columns,
            origins,
        })
    }

    /// `ORDER BY 2`: the 0-based output slot.
    fn ordinal(&self, e: &Expr, width: usize) -> Result<Option<usize>> {
        if let Expr::Literal {
            value: Literal::Integer(text),
            span,
        } = e
        {
            let n: i64 = text.parse().unwrap_or(0);
            if n < 1 || n as usize > width {
                return Err(Error::invalid_at(*span, format!("ORDER BY column number exceeds the number of columns in the SELECT list: {n}")));
            }
            return Ok(Some(n as usize - 1));
        }
        Ok(None)
    }

    fn select(
        &self,
        s: &Select,
        outer: Option<&Outer<'_>>,
        order_by: &[ast::OrderByItem],
    ) -> Result<Output> {
        // 1. FROM.
        let (mut node, from) = match &s.from {
            None => (
                Node::new(NodeKind::Values { rows: vec![vec![]] }, 0),
                RowScope::default(),
            ),
            Some(te) => self.from(te, outer)?,
        };
        // 2. WHERE: push what a single scan can answer, filter the rest.
        if let Some(w) = &s.where_clause {
            if let Some(call) = first_window(w) {
                return Err(Error::invalid_at(
                    call.span(),
                    "Analytic function not allowed in WHERE clause",
                ));
            }
            if has_aggregate(w) {
                let es = ExprScope::new(self, &from, outer, "WHERE clause");
                self.bind_in(w, &es)?;
            }
            node = self.apply_where(w, &from, node, outer)?;
        }
        // 3. Aggregation.
        let aggregating = !s.group_by.is_empty()
            || s.having.is_some()
            || s.items.iter().any(|i| match i {
                SelectItem::Expr { expr, .. } => has_aggregate(expr),
                SelectItem::QualifiedStar {
                    expr: Some(expr), ..
                } => has_aggregate(expr),
                _ => false,
            })
            || order_by.iter().any(|o| has_aggregate(&o.expr));
        let mut window_calls = Vec::new();
        for item in &s.items {
            match item {
                SelectItem::Expr { expr, .. } => collect_windows(expr, &mut window_calls),
                SelectItem::QualifiedStar {
                    expr: Some(expr), ..
                } => collect_windows(expr, &mut window_calls),
                _ => {}
            }
        }
        for o in order_by {
            collect_windows(&o.expr, &mut window_calls);
        }
        if aggregating {
            if let Some(call) = window_calls.first() {
                return Err(Error::unimplemented(
                    "Analytic functions in a query with GROUP BY or aggregate functions are not supported",
                )
                .at(call.span()));
            }
            return self.aggregate_select(s, node, &from, outer, order_by);
        }
        // 3b. Window functions, over the FROM row after WHERE: a Window node
        // appends one hidden column per call, which the select list and ORDER
        // BY then read in place of the call.
        let windowed;
        let (s, from, order_by): (&Select, &RowScope, &[ast::OrderByItem]) =
            if window_calls.is_empty() {
                (s, &from, order_by)
            } else {
                let (n, sel, scope, order) =
                    self.windows(s, node, &from, outer, order_by, &window_calls)?;
                node = n;
                windowed = (sel, scope, order);
                (&windowed.0, &windowed.1, &windowed.2[..])
            };
        // 4. SELECT list.
        let es = ExprScope::new(self, from, outer, "SELECT list");
        let mut exprs = Vec::new();
        let mut columns = Vec::new();
        let mut origins = Vec::new();
        let mut asts: Vec<Option<Expr>> = Vec::new();
        for item in &s.items {
            let (slots, except, replace): (Vec<usize>, &[Ident], &[(Expr, Ident)]) = match item {
                SelectItem::Star {
                    except,
                    replace,
                    span,
                } => {
                    if from.star.is_empty() && s.from.is_none() {
                        return Err(Error::invalid_at(*span, "SELECT * must have a FROM clause"));
                    }
                    (from.star.clone(), except, replace)
                }
                SelectItem::QualifiedStar {
                    qualifier,
                    expr,
                    span,
                } => {
                    let name = qualifier
                        .iter()
                        .map(|i| i.value.as_str())
                        .collect::<Vec<_>>()
                        .join(".");
                    let table = match expr {
                        None => from.table_star(&name),
                        Some(_) => None,
                    };
                    if let Some(slots) = table {
                        (slots, &[], &[])
                    } else {
                        // `expr.*` on a STRUCT value: one column per field.
                        let target = dot_star_target(qualifier, expr.as_deref());
                        let b = self.bind_in(&target, &es)?;
                        for (name, field) in dot_star_fields(b, *span)? {
                            columns.push((name, field.ty().clone()));
                            exprs.push(field);
                            origins.push(None);
                            asts.push(None);
                        }
                        continue;
                    }
                }
                SelectItem::Expr { expr, alias } => {
                    let b = self.bind_in(expr, &es)?;
                    let mut name = item_name(expr, alias.as_ref());
                    if alias.is_none() && name.starts_with("$win") {
                        name.clear();
                    }
                    columns.push((name, b.ty().clone()));
                    origins.push(match expr {
                        Expr::Column { path, .. } => match from.resolve(path) {
                            Ok(Resolved::Slot(s, _)) => from.columns[s].origin,
                            _ => None,
                        },
                        _ => None,
                    });
                    exprs.push(b);
                    asts.push(Some(expr.clone()));
                    continue;
                }
            };
            // A star's columns, less its EXCEPT ones, with its REPLACE ones
            // bound anew.
            for slot in slots {
                let col = &from.columns[slot];
                if except.iter().any(|e| e.matches(&col.name)) {
                    continue;
                }
                if let Some((e, name)) = replace.iter().find(|(_, n)| n.matches(&col.name)) {
                    exprs.push(self.bind_in(e, &es)?);
                    columns.push((
                        name.value.clone(),
                        exprs
                            .last()
                            .map(|b: &BoundExpr| b.ty().clone())
                            .unwrap_or(Type::Int64),
                    ));
                    origins.push(None);
                    asts.push(Some(e.clone()));
                    continue;
                }
                self.used.borrow().mark(col.origin);
                exprs.push(self.slot_expr(from, slot)?);
                columns.push((col.name.clone(), col.ty.clone()));
                origins.push(col.origin);
                asts.push(None);
            }
        }
        let pre = PreProjection {
            scope: from,
            es: &es,
        };
        self.finish_select(s, node, exprs, columns, origins, asts, order_by, pre)
    }

    /// Binds the window function `calls` (distinct, in order of appearance)
    /// of a non-aggregating SELECT over the FROM row `from`: returns a Window
    /// node over `node`, and the SELECT, scope and ORDER BY in which each call
    /// is replaced by its hidden column `$win{i}`.
    fn windows(
        &self,
        s: &Select,
        node: Node,
        from: &RowScope,
        outer: Option<&Outer<'_>>,
        order_by: &[ast::OrderByItem],
        calls: &[Expr],
    ) -> Result<(Node, Select, RowScope, Vec<ast::OrderByItem>)> {
        if node.width != from.width() {
            return Err(Error::internal("window input width differs from its scope"));
        }
        let args_scope = ExprScope::new(self, from, outer, "analytic function argument");
        let over_scope = ExprScope::new(self, from, outer, "OVER clause");
        let mut bound = Vec::new();
        let mut scope = from.clone();
        for (i, call) in calls.iter().enumerate() {
            let Expr::Function {
                name,
                args,
                distinct,
                modifiers: Some(m),
                span,
                ..
            } = call
            else {
                return Err(Error::internal(
                    "window binding called on a non-window call",
                ));
            };
            let Some(w) = &m.over else {
                return Err(Error::internal(
                    "window binding called on a non-window call",
                ));
            };
            let upper = name.value.to_ascii_uppercase();
            let func = match upper.as_str() {
                "IS_FIRST" => WindowFunc::IsFirst,
                _ if rowtree_expr::is_aggregate_function(&name.value) => {
                    return Err(Error::invalid_at(
                        *span,
                        format!("Aggregate function {upper} cannot be used with an OVER clause"),
                    ))
                }
                _ => {
                    return Err(Error::invalid_at(
                        *span,
                        format!("Function {upper} cannot be used as an analytic function"),
                    ))
                }
            };
            if *distinct || m.ignore_nulls.is_some() || !m.order_by.is_empty() || m.limit.is_some()
            {
                return Err(Error::invalid_at(
                    *span,
                    format!(
                        "Analytic function {upper} does not support DISTINCT, IGNORE NULLS, ORDER BY or LIMIT"
                    ),
                ));
            }
            let mut bargs = Vec::new();
            for a in args {
                bargs.push(self.bind_in(a, &args_scope)?);
            }
            match func {
                WindowFunc::IsFirst => {
                    if bargs.len() != 1 || !matches!(bargs[0].ty(), Type::Int64) {
                        let types: Vec<String> = bargs.iter().map(|b| b.ty().to_string()).collect();
                        return Err(Error::invalid_at(
                            *span,
                            format!(
                                "No matching signature for analytic function IS_FIRST for argument types: {}. Supported signature: IS_FIRST(INT64)",
                                types.join(", ")
                            ),
                        ));
                    }
                }
            }
            let mut partition_by = Vec::new();
            for p in &w.partition_by {
                let b = self.bind_in(p, &over_scope)?;
                if !groupable(b.ty()) {
                    return Err(Error::invalid_at(
                        p.span(),
                        format!(
                            "Partitioning by expressions of type {} is not allowed",
                            b.ty()
                        ),
                    ));
                }
                partition_by.push(b);
            }
            let mut keys = Vec::new();
            for o in &w.order_by {
                let b = self.bind_in(&o.expr, &over_scope)?;
                if !b.ty().is_orderable() {
                    return Err(Error::invalid_at(
                        o.expr.span(),
                        format!("ORDER BY does not support expressions of type {}", b.ty()),
                    ));
                }
                keys.push((b, o.desc, o.nulls_first.unwrap_or(!o.desc)));
            }
            bound.push(WindowCall {
                func,
                args: bargs,
                partition_by,
                order_by: keys,
                text: expr_tree::text(call),
            });
            scope.columns.push(ScopeColumn {
                name: format!("$win{i}"),
                ty: Type::Bool,
                in_star: false,
                unqualified: true,
                origin: None,
            });
        }
        let keys: Vec<String> = calls.iter().map(canonical).collect();
        let replace = |e: &Expr| -> Expr {
            expr_tree::rewrite(e, &|x: &Expr| {
                window_spec(x)?;
                let i = keys.iter().position(|k| *k == canonical(x))?;
                Some(Expr::Column {
                    path: vec![Ident {
                        value: format!("$win{i}"),
                        span: x.span(),
                    }],
                    span: x.span(),
                })
            })
        };
        let mut select = s.clone();
        for item in select.items.iter_mut() {
            match item {
                SelectItem::Expr { expr, .. } => *expr = replace(expr),
                SelectItem::QualifiedStar {
                    expr: Some(expr), ..
                } => **expr = replace(expr),
                _ => {}
            }
        }
        let order: Vec<ast::OrderByItem> = order_by
            .iter()
            .map(|o| ast::OrderByItem {
                expr: replace(&o.expr),
                ..o.clone()
            })
            .collect();
        let width = node.width + bound.len();
        let node = Node::new(
            NodeKind::Window {
                input: Box::new(node),
                calls: bound,
            },
            width,
        );
        Ok((node, select, scope, order))
    }

    /// A plain reference to `slot` of `scope`, as a bound expression.
    fn slot_expr(&self, scope: &RowScope, slot: usize) -> Result<BoundExpr> {
        let types: Vec<Type> = scope.columns.iter().map(|c| c.ty.clone()).collect();
        let syn = synthetic_scope(&types);
        let es = ExprScope::new(self, &syn, None, "SELECT list");
        self.bind_in(&synthetic_column(slot, Span::default()), &es)
    }

    #[allow(clippy::too_many_arguments)]
    fn finish_select(
        &self,
        s: &Select,
        node: Node,
        mut exprs: Vec<BoundExpr>,
        mut columns: Vec<(String, Type)>,
        mut origins: Vec<Option<(usize, usize)>>,
        asts: Vec<Option<Expr>>,
        order_by: &[ast::OrderByItem],
        pre: PreProjection<'_, '_, '_>,
    ) -> Result<Output> {
        let n = exprs.len();
        // ORDER BY: ordinal, select alias, same expression as an item, or extra column.
        let mut keys = Vec::new();
        let mut extras = 0;
        for item in order_by {
            let slot = if let Some(i) = self.ordinal(&item.expr, n)? {
                i
            } else if let Some(i) = alias_slot(&item.expr, s) {
                i
            } else if let Some(i) = asts
                .iter()
                .position(|a| a.as_ref().is_some_and(|a| same(a, &item.expr)))
            {
                i
            } else {
                if s.distinct {
                    return Err(Error::invalid_at(
                        item.expr.span(),
                        "ORDER BY clause expression references a column that is not visible after SELECT DISTINCT",
                    ));
                }
                let e = pre.rewrite(&item.expr);
                let b = self.bind_in(&e, &pre.es.with_clause("ORDER BY clause"))?;
                let origin = match &item.expr {
                    Expr::Column { path, .. } => match pre.scope.resolve(path) {
                        Ok(Resolved::Slot(s, _)) => pre.scope.columns[s].origin,
                        _ => None,
                    },
                    _ => None,
                };
                columns.push((String::new(), b.ty().clone()));
                origins.push(origin);
                exprs.push(b);
                extras += 1;
                n + extras - 1
            };
            if !columns[slot].1.is_orderable() {
                return Err(Error::invalid_at(
                    item.expr.span(),
                    format!(
                        "ORDER BY does not support expressions of type {}",
                        columns[slot].1
                    ),
                ));
            }
            keys.push(sort_key(item, slot, origins[slot]));
        }
        let names: Vec<String> = columns.iter().map(|(n, _)| n.clone()).collect();
        let mut node = project(node, exprs, names);
        if s.distinct {
            if let Some((_, t)) = columns.iter().find(|(_, t)| !groupable(t)) {
                return Err(Error::invalid_at(
                    s.span,
                    format!("Column of type {t} cannot be used in SELECT DISTINCT"),
                ));
            }
            let width = node.width;
            node = Node::new(
                NodeKind::Distinct {
                    input: Box::new(node),
                },
                width,
            );
        }
        if !keys.is_empty() {
            let width = node.width;
            node = Node::new(
                NodeKind::Sort {
                    input: Box::new(node),
                    keys,
                },
                width,
            );
        }
        columns.truncate(n);
        origins.truncate(n);
        if extras > 0 {
            let types: Vec<Type> = columns.iter().map(|(_, t)| t.clone()).collect();
            node = trim(
                self,
                node,
                &types,
                columns.iter().map(|(n, _)| n.clone()).collect(),
            )?;
        }
        if s.as_struct {
            let types: Vec<Type> = columns.iter().map(|(_, t)| t.clone()).collect();
            let syn = synthetic_scope(&types);
            let es = ExprScope::new(self, &syn, None, "SELECT list");
            let fields = columns
                .iter()
                .enumerate()
                .map(|(i, (name, _))| {
                    let alias = (!name.is_empty()).then(|| Ident {
                        value: name.clone(),
                        span: s.span,
                    });
                    (alias, synthetic_column(i, s.span))
                })
                .collect();
            let b = self.bind_in(
                &Expr::Struct {
                    fields,
                    field_types: None,
                    span: s.span,
                },
                &es,
            )?;
            let ty = b.ty().clone();
            node = project(node, vec![b], vec![String::new()]);
            columns = vec![(String::new(), ty)];
            origins = vec![None];
        }
        Ok(Output {
            node,
            columns,
            origins,
        })
    }

    fn aggregate_select(
        &self,
        s: &Select,
        node: Node,
        from: &RowScope,
        outer: Option<&Outer<'_>>,
        order_by: &[ast::OrderByItem],
    ) -> Result<Output> {
        // Group keys: ordinals and select aliases name select items.
        let mut group_asts = Vec::new();
        for g in &s.group_by {
            let e = match g {
                Expr::Literal {
                    value: Literal::Integer(t),
                    span,
                } => {
                    let n: usize = t.parse().unwrap_or(0);
                    match s.items.get(n.wrapping_sub(1)) {
                        Some(SelectItem::Expr { expr, .. }) => expr.clone(),
                        _ => {
                            return Err(Error::invalid_at(
                                *span,
                                format!("GROUP BY is out of SELECT column number range: {n}"),
                            ))
                        }
                    }
                }
                Expr::Column { path, .. }
                    if path.len() == 1 && matches!(from.resolve(path), Ok(Resolved::NotFound)) =>
                {
                    match s.items.iter().find_map(|i| match i {
                        SelectItem::Expr {
                            expr,
                            alias: Some(a),
                        } if a.matches(&path[0].value) => Some(expr.clone()),
                        _ => None,
                    }) {
                        Some(e) => e,
                        None => g.clone(),
                    }
                }
                other => other.clone(),
            };
            if has_aggregate(&e) {
                return Err(Error::invalid_at(
                    e.span(),
                    "Aggregate function not allowed in GROUP BY",
                ));
            }
            group_asts.push(e);
        }
        let es = ExprScope::new(self, from, outer, "GROUP BY clause");
        let mut groups = Vec::new();
        let mut post = RowScope::default();
        let mut group_from_slot = Vec::new();
        for (i, g) in group_asts.iter().enumerate() {
            let b = self.bind_in(g, &es)?;
            if !groupable(b.ty()) {
                return Err(Error::invalid_at(
                    g.span(),
                    format!("Grouping by expressions of type {} is not allowed", b.ty()),
                ));
            }
            let from_slot = match g {
                Expr::Column { path, .. } => match from.resolve(path)? {
                    Resolved::Slot(s, _) => Some(s),
                    Resolved::NotFound => None,
                },
                _ => None,
            };
            group_from_slot.push(from_slot);
            let column = match from_slot {
                Some(s) => ScopeColumn {
                    origin: None,
                    ..from.columns[s].clone()
                },
                None => ScopeColumn {
                    name: format!("$group{i}"),
                    ty: b.ty().clone(),
                    in_star: false,
                    unqualified: true,
                    origin: None,
                },
            };
            post.columns.push(column);
            groups.push(b);
        }
        for (alias, slots) in &from.tables {
            let mine: Vec<usize> = group_from_slot
                .iter()
                .enumerate()
                .filter(|(_, fs)| fs.is_some_and(|f| slots.contains(&f)))
                .map(|(i, _)| i)
                .collect();
            post.tables.push((alias.clone(), mine));
        }
        let agg = AggContext {
            from,
            groups: groups.len(),
            calls: RefCell::new(Vec::new()),
            keys: RefCell::new(Vec::new()),
        };
        let group_count = groups.len();
        let non_column_groups: Vec<(usize, &Expr)> = group_asts
            .iter()
            .enumerate()
            .filter(|(i, _)| group_from_slot[*i].is_none())
            .collect();
        let rewrite = |e: &Expr| -> Expr {
            expr_tree::rewrite(e, &|x: &Expr| {
                if let Expr::Function { name, .. } = x {
                    if rowtree_expr::is_aggregate_function(&name.value) {
                        return Some(x.clone());
                    }
                }
                non_column_groups
                    .iter()
                    .find(|(_, g)| same(g, x))
                    .map(|(i, _)| Expr::Column {
                        path: vec![Ident {
                            value: format!("$group{i}"),
                            span: x.span(),
                        }],
                        span: x.span(),
                    })
            })
        };
        let mut es = ExprScope::new(self, &post, outer, "SELECT list");
        es.agg = Some(&agg);
        let mut exprs = Vec::new();
        let mut columns = Vec::new();
        let mut asts = Vec::new();
        for item in &s.items {
            match item {
                SelectItem::Expr { expr, alias } => {
                    let b = self.bind_in(&rewrite(expr), &es)?;
                    columns.push((item_name(expr, alias.as_ref()), b.ty().clone()));
                    exprs.push(b);
                    asts.push(Some(expr.clone()));
                }
                SelectItem::QualifiedStar {
                    qualifier,
                    expr,
                    span,
                } if expr.is_some()
                    || qualifier.len() != 1
                    || from.table_star(&qualifier[0].value).is_none() =>
                {
                    // `expr.*` on a STRUCT value: one column per field.
                    let target = dot_star_target(qualifier, expr.as_deref());
                    let b = self.bind_in(&rewrite(&target), &es)?;
                    for (name, field) in dot_star_fields(b, *span)? {
                        columns.push((name, field.ty().clone()));
                        exprs.push(field);
                        asts.push(None);
                    }
                }
                SelectItem::Star { span, .. } | SelectItem::QualifiedStar { span, .. } => {
                    // GoogleSQL: every column of * must be grouped.
                    let star_slots: Vec<usize> = match item {
                        SelectItem::QualifiedStar { qualifier, .. } => {
                            from.table_star(&qualifier[0].value).unwrap_or_default()
                        }
                        _ => from.star.clone(),
                    };
                    for slot in star_slots {
                        let Some(g) = group_from_slot.iter().position(|f| *f == Some(slot)) else {
                            return Err(Error::invalid_at(
                                *span,
                                format!(
                                    "SELECT list expression references column {} which is neither grouped nor aggregated",
                                    from.columns[slot].name
                                ),
                            ));
                        };
                        exprs.push(self.slot_expr(&post, g)?);
                        columns.push((
                            from.columns[slot].name.clone(),
                            from.columns[slot].ty.clone(),
                        ));
                        asts.push(None);
                    }
                }
            }
        }
        let having = match &s.having {
            Some(h) => {
                let hs = es.with_clause("HAVING clause");
                // HAVING sees the SELECT list's aliases (FROM names first).
                let with_aliases = expr_tree::rewrite(h, &|x: &Expr| match x {
                    Expr::Column { path, .. }
                        if path.len() == 1
                            && matches!(from.resolve(path), Ok(Resolved::NotFound)) =>
                    {
                        s.items.iter().find_map(|i| match i {
                            SelectItem::Expr {
                                expr,
                                alias: Some(a),
                            } if a.matches(&path[0].value) => Some(expr.clone()),
                            _ => None,
                        })
                    }
                    _ => None,
                });
                Some((
                    self.bind_bool(&rewrite(&with_aliases), &hs, "HAVING clause")?,
                    expr_tree::text(h),
                ))
            }
            None => None,
        };
        // ORDER BY may add aggregates too, so the Aggregate node is built after it.
        let pre = PreProjection {
            scope: &post,
            es: &es,
        };
        let rewrite_ref: &dyn Fn(&Expr) -> Expr = &rewrite;
        let pre = PreProjection { ..pre };
        let origins = vec![None; exprs.len()];
        // Bind ORDER BY extras now through finish_select with a placeholder input,
        // then splice the real aggregate input underneath.
        let placeholder = Node::new(NodeKind::Values { rows: vec![] }, post.width());
        let out = self.finish_select_with(
            s,
            placeholder,
            exprs,
            columns,
            origins,
            asts,
            order_by,
            pre,
            rewrite_ref,
        )?;
        let calls = agg.calls.into_inner();
        let mut texts: Vec<String> = group_asts.iter().map(expr_tree::text).collect();
        texts.extend(calls.iter().map(|c| c.text.clone()));
        let width = group_count + calls.len();
        let mut input = Node::new(
            NodeKind::Aggregate {
                input: Box::new(node),
                groups,
                aggregates: calls,
                texts,
            },
            width,
        );
        if let Some((predicate, text)) = having {
            input = filter(input, predicate, text);
        }
        let Output {
            mut node,
            columns,
            origins,
        } = out;
        splice(&mut node, input);
        Ok(Output {
            node,
            columns,
            origins,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn finish_select_with(
        &self,
        s: &Select,
        node: Node,
        exprs: Vec<BoundExpr>,
        columns: Vec<(String, Type)>,
        origins: Vec<Option<(usize, usize)>>,
        asts: Vec<Option<Expr>>,
        order_by: &[ast::OrderByItem],
        pre: PreProjection<'_, '_, '_>,
        rewrite: &dyn Fn(&Expr) -> Expr,
    ) -> Result<Output> {
        let pre = PreProjection {
            scope: pre.scope,
            es: pre.es,
        };
        // Rewrite ORDER BY expressions over group keys before binding.
        let order: Vec<ast::OrderByItem> = order_by
            .iter()
            .map(|o| ast::OrderByItem {
                expr: if matches!(o.expr, Expr::Literal { .. }) {
                    o.expr.clone()
                } else {
                    rewrite(&o.expr)
                },
                ..o.clone()
            })
            .collect();
        // Matching select items by AST must use the rewritten forms too.
        let asts: Vec<Option<Expr>> = asts.into_iter().map(|a| a.map(|e| rewrite(&e))).collect();
        self.finish_select(s, node, exprs, columns, origins, asts, &order, pre)
    }

    fn bind_aggregate(
        &self,
        agg: &AggContext<'_>,
        call: &Expr,
        outer: Option<&Outer<'_>>,
    ) -> Result<(usize, Type)> {
        let Expr::Function {
            name,
            args,
            distinct,
            modifiers,
            span,
            ..
        } = call
        else {
            return Err(Error::internal("aggregate hook called on a non-call"));
        };
        let key = canonical(call).to_ascii_lowercase();
        if let Some(j) = agg.keys.borrow().iter().position(|k| *k == key) {
            let ty = agg.calls.borrow()[j].ty.clone();
            return Ok((agg.groups + j, ty));
        }
        let es = ExprScope::new(self, agg.from, outer, "aggregate function argument");
        let mut bound = Vec::new();
        for a in args {
            if matches!(a, Expr::Star { .. }) {
                continue;
            }
            if has_aggregate(a) {
                return Err(Error::invalid_at(
                    a.span(),
                    "Aggregations of aggregations are not allowed",
                ));
            }
            bound.push(self.bind_in(a, &es)?);
        }
        let types: Vec<Type> = bound.iter().map(|b| b.ty().clone()).collect();
        let ty = rowtree_expr::aggregate::aggregate_signature(&name.value, &types, *distinct)
            .map_err(|e| Error::from(e).at(*span))?;
        let mut order_by = Vec::new();
        let mut limit = None;
        let mut ignore_nulls = None;
        if let Some(m) = modifiers {
            ignore_nulls = m.ignore_nulls;
            for o in &m.order_by {
                let b = self.bind_in(&o.expr, &es)?;
                order_by.push((b, o.desc, o.nulls_first.unwrap_or(!o.desc)));
            }
            if let Some(l) = &m.limit {
                limit = Some(self.count(l, "LIMIT")?);
            }
        }
        let mut calls = agg.calls.borrow_mut();
        calls.push(AggregateCall {
            name: name.value.to_ascii_uppercase(),
            args: bound,
            distinct: *distinct,
            ignore_nulls,
            order_by,
            limit,
            ty: ty.clone(),
            text: expr_tree::text(call),
        });
        agg.keys.borrow_mut().push(key);
        Ok((agg.groups + calls.len() - 1, ty))
    }

    fn bind_subquery(
        &self,
        scope: &ExprScope<'_, '_>,
        expr: &Expr,
        query: &Query,
        kind: SubqueryKind,
    ) -> Result<(usize, Type)> {
        let outer = Outer {
            scope,
            correlations: RefCell::new(Vec::new()),
        };
        let out = self.query(query, Some(&outer))?;
        let span = expr.span();
        let ty = match kind {
            SubqueryKind::Exists => Type::Bool,
            _ => {
                if out.columns.len() != 1 {
                    let what = match kind {
                        SubqueryKind::Scalar => "Scalar subquery cannot have more than one column unless using SELECT AS STRUCT to build STRUCT values",
                        SubqueryKind::Array => "ARRAY subquery cannot have more than one column unless using SELECT AS STRUCT to build STRUCT values",
                        _ => "Subquery of type IN must have only one output column",
                    };
                    return Err(Error::invalid_at(span, what));
                }
                let t = out.columns[0].1.clone();
                match kind {
                    SubqueryKind::Scalar => t,
                    _ => Type::Array(Box::new(t)),
                }
            }
        };
        let mut subs = self.subqueries.borrow_mut();
        subs.push(Some(SubqueryPlan {
            root: out.node,
            kind,
            correlations: outer.correlations.into_inner(),
            text: expr_tree::text(expr),
        }));
        Ok((subs.len() - 1, ty))
    }

    // ----- FROM ----------------------------------------------------------

    /// Starts expanding view `name`: refused if the chain of views being
    /// expanded would be deeper than [`MAX_VIEW_NESTING`] (which also ends
    /// any cycle the schema let through).
    fn enter_view(&self, name: &str, span: Span) -> Result<()> {
        let mut views = self.views.borrow_mut();
        if views.len() > MAX_VIEW_NESTING {
            return Err(Error::invalid_at(
                span,
                format!(
                    "Views nest too deeply: {} -> {name}; a view may refer to views at most \
                     {MAX_VIEW_NESTING} levels deep",
                    views.join(" -> ")
                ),
            ));
        }
        views.push(name.to_string());
        Ok(())
    }

    pub(crate) fn from(
        &self,
        te: &TableExpr,
        outer: Option<&Outer<'_>>,
    ) -> Result<(Node, RowScope)> {
        rowtree_types::stack::guarded(|| self.bind_from_item(te, outer))
    }

    fn bind_from_item(
        &self,
        te: &TableExpr,
        outer: Option<&Outer<'_>>,
    ) -> Result<(Node, RowScope)> {
        match te {
            TableExpr::Table {
                path,
                alias,
                hints,
                span,
            } => self.table(path, alias.as_ref(), hints, *span, outer),
            TableExpr::Subquery { query, alias, .. } => {
                let out = self.query(query, outer)?;
                let name = alias.as_ref().map(|a| a.value.clone()).unwrap_or_default();
                let mut scope = RowScope::single(
                    &name,
                    out.columns
                        .iter()
                        .map(|(n, t)| (n.clone(), t.clone(), true, None))
                        .collect(),
                );
                if alias.is_none() {
                    scope.tables.clear();
                }
                Ok((out.node, scope))
            }
            TableExpr::Unnest {
                array,
                alias,
                with_offset,
                span,
            } => {
                let input = Node::new(NodeKind::Values { rows: vec![vec![]] }, 0);
                self.unnest(
                    input,
                    RowScope::default(),
                    array,
                    alias.as_ref(),
                    with_offset,
                    false,
                    *span,
                    outer,
                )
            }
            TableExpr::Join {
                kind,
                left,
                right,
                condition,
                hints,
                span,
            } => self.join(*kind, left, right, condition, hints, *span, outer),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn unnest(
        &self,
        input: Node,
        left: RowScope,
        array: &Expr,
        alias: Option<&Ident>,
        with_offset: &Option<Option<Ident>>,
        outer_join: bool,
        span: Span,
        outer: Option<&Outer<'_>>,
    ) -> Result<(Node, RowScope)> {
        let es = ExprScope::new(self, &left, outer, "UNNEST");
        let b = self.bind_in(array, &es)?;
        let Type::Array(elem) = b.ty().clone() else {
            return Err(Error::invalid_at(
                array.span(),
                format!("Values referenced in UNNEST must be arrays. UNNEST contains expression of type {}", b.ty()),
            ));
        };
        let name = alias.map(|a| a.value.clone()).unwrap_or_default();
        let mut cols = vec![(name.clone(), *elem, true, None)];
        if let Some(off) = with_offset {
            cols.push((
                off.as_ref()
                    .map(|o| o.value.clone())
                    .unwrap_or_else(|| "offset".into()),
                Type::Int64,
                true,
                None,
            ));
        }
        let elem_ty = cols[0].1.clone();
        let mut right = RowScope::single(&name, cols);
        // The element is a value, not a range variable with fields
        // (`t.f` is a field access on the value `t`).
        right.tables.clear();
        let elem_slot = left.width();
        let scope = RowScope::concat(&left, &right);
        let width = scope.width();
        let text = expr_tree::text(array);
        let node = Node::new(
            NodeKind::Unnest {
                input: Box::new(input),
                array: b,
                with_offset: with_offset.is_some(),
                outer: outer_join,
                text,
            },
            width,
        );
        match elem_ty {
            Type::Struct(fields) if !fields.is_empty() => {
                self.struct_fields_as_columns(node, scope, elem_slot, &fields, span)
            }
            _ => Ok((node, scope)),
        }
    }

    /// UNNEST of an array of STRUCTs: each field is also a column (after
    /// the row's others), so `SELECT f FROM UNNEST(structs)` works and `*`
    /// expands to the fields. An anonymous or repeated field name has no
    /// column; `*` then keeps the whole STRUCT instead.
    fn struct_fields_as_columns(
        &self,
        node: Node,
        mut scope: RowScope,
        elem_slot: usize,
        fields: &[(String, Type)],
        span: Span,
    ) -> Result<(Node, RowScope)> {
        let width = node.width;
        let named = |n: &str| {
            !n.is_empty()
                && fields
                    .iter()
                    .filter(|(m, _)| m.eq_ignore_ascii_case(n))
                    .count()
                    == 1
        };
        let all_named = fields.iter().all(|(n, _)| named(n));
        let types: Vec<Type> = scope.columns.iter().map(|c| c.ty.clone()).collect();
        let syn = synthetic_scope(&types);
        let es = ExprScope::new(self, &syn, None, "UNNEST");
        let mut exprs = (0..width)
            .map(|i| self.bind_in(&synthetic_column(i, span), &es))
            .collect::<Result<Vec<_>>>()?;
        let mut names: Vec<String> = scope.columns.iter().map(|c| c.name.clone()).collect();
        let mut field_slots = Vec::new();
        for (field, _) in fields.iter().filter(|(n, _)| named(n)) {
            let access = Expr::Field {
                expr: Box::new(synthetic_column(elem_slot, span)),
                field: Ident {
                    value: field.clone(),
                    span,
                },
                span,
            };
            let b = self.bind_in(&access, &es)?;
            field_slots.push(scope.columns.len());
            scope.columns.push(ScopeColumn {
                name: field.clone(),
                ty: b.ty().clone(),
                in_star: all_named,
                unqualified: true,
                origin: None,
            });
            names.push(field.clone());
            exprs.push(b);
        }
        if all_named {
            scope.columns[elem_slot].in_star = false;
            match scope.star.iter().position(|&s| s == elem_slot) {
                Some(at) => {
                    scope.star.splice(at..at + 1, field_slots);
                }
                None => scope.star.extend(field_slots),
            }
        }
        Ok((project(node, exprs, names), scope))
    }

    fn table(
        &self,
        path: &[Ident],
        alias: Option<&Ident>,
        hints: &[ast::Hint],
        span: Span,
        outer: Option<&Outer<'_>>,
    ) -> Result<(Node, RowScope)> {
        let full: Vec<&str> = path.iter().map(|i| i.value.as_str()).collect();
        let full_name = full.join(".");
        // A CTE?
        if path.len() == 1 {
            let cte = self
                .ctes
                .borrow()
                .iter()
                .rev()
                .find(|(n, _)| n.eq_ignore_ascii_case(&path[0].value))
                .map(|(_, q)| q.clone());
            if let Some(q) = cte {
                // The CTE's own name is not visible inside it (no recursion).
                let saved = self.ctes.borrow().clone();
                let pos = saved
                    .iter()
                    .rposition(|(n, _)| n.eq_ignore_ascii_case(&path[0].value))
                    .unwrap_or(0);
                self.ctes.borrow_mut().truncate(pos);
                let out = self.query(&q, outer);
                *self.ctes.borrow_mut() = saved;
                let out = out?;
                let name = alias
                    .map(|a| a.value.clone())
                    .unwrap_or_else(|| path[0].value.clone());
                let scope = RowScope::single(
                    &name,
                    out.columns
                        .iter()
                        .map(|(n, t)| (n.clone(), t.clone(), true, None))
                        .collect(),
                );
                return Ok((out.node, scope));
            }
        }
        // A view: its query, bound on its own (no CTEs of the reading query
        // in scope, not correlated), named after the view.
        if let [name] = path {
            if let Some(view) = self.catalog.view(&name.value) {
                self.enter_view(&view.name, span)?;
                let saved = std::mem::take(&mut *self.ctes.borrow_mut());
                let out = self.query(&view.query, None);
                *self.ctes.borrow_mut() = saved;
                self.views.borrow_mut().pop();
                let out = out.map_err(|e| Error {
                    message: format!("Invalid view {}: {}", view.name, e.message),
                    span: Some(span),
                    ..e
                })?;
                let alias = alias
                    .map(|a| a.value.clone())
                    .unwrap_or_else(|| name.value.clone());
                let scope = RowScope::single(
                    &alias,
                    out.columns
                        .iter()
                        .map(|(n, t)| (n.clone(), t.clone(), true, None))
                        .collect(),
                );
                return Ok((out.node, scope));
            }
        }
        if let Some(table) = crate::spanner_sys::SysTable::lookup(&full) {
            let name = alias
                .map(|a| a.value.clone())
                .unwrap_or_else(|| path.last().map(|i| i.value.clone()).unwrap_or_default());
            let columns = table.columns();
            let width = columns.len();
            let scope = RowScope::single(
                &name,
                columns
                    .into_iter()
                    .map(|(n, t)| (n, t, true, None))
                    .collect(),
            );
            return Ok((
                Node::new(
                    NodeKind::SystemTable {
                        name: full_name,
                        table,
                    },
                    width,
                ),
                scope,
            ));
        }
        if let Some((columns, rows)) = crate::information_schema::virtual_table(self.catalog, &full)
        {
            let name = alias
                .map(|a| a.value.clone())
                .unwrap_or_else(|| path.last().map(|i| i.value.clone()).unwrap_or_default());
            let width = columns.len();
            let scope = RowScope::single(
                &name,
                columns
                    .into_iter()
                    .map(|(n, t)| (n, t, true, None))
                    .collect(),
            );
            return Ok((
                Node::new(
                    NodeKind::Rows {
                        name: full_name,
                        rows,
                    },
                    width,
                ),
                scope,
            ));
        }
        let table = match path {
            [name] => self.catalog.table(&name.value),
            _ => None,
        }
        .ok_or_else(|| Error::invalid_at(span, format!("Table not found: {full_name}")))?;
        let mut hint = IndexHint::None;
        for h in hints {
            if h.name.matches("FORCE_INDEX") {
                let value = match &h.value {
                    Expr::Column { path, .. } => path
                        .iter()
                        .map(|i| i.value.clone())
                        .collect::<Vec<_>>()
                        .join("."),
                    Expr::Literal {
                        value: Literal::String(s),
                        ..
                    } => s.clone(),
                    other => {
                        return Err(Error::invalid_at(
                            other.span(),
                            "FORCE_INDEX expects an index name",
                        ))
                    }
                };
                hint = if value.eq_ignore_ascii_case("_BASE_TABLE") {
                    IndexHint::BaseTable
                } else {
                    match self.catalog.index(&value) {
                        Some(ix) if ix.table == table.id => IndexHint::Index(ix.name.clone()),
                        _ => {
                            return Err(Error::invalid_at(
                                h.value.span(),
                                format!(
                                    "The table {} does not have a secondary index called {value}",
                                    table.name
                                ),
                            ))
                        }
                    }
                };
            }
        }
        let scan_id = self.used.borrow_mut().add_scan(table.columns.len());
        let name = alias
            .map(|a| a.value.clone())
            .unwrap_or_else(|| path[0].value.clone());
        let scope = RowScope::single(
            &name,
            table
                .columns
                .iter()
                .enumerate()
                .map(|(i, c)| (c.name.clone(), c.ty.clone(), !c.hidden, Some((scan_id, i))))
                .collect(),
        );
        self.scan_scopes.borrow_mut().insert(scan_id, scope.clone());
        let node = Node::new(
            NodeKind::Scan(Box::new(ScanNode {
                scan_id,
                table: table.name.clone(),
                hint,
                conjuncts: Vec::new(),
                access: Access::default(),
            })),
            table.columns.len(),
        );
        Ok((node, scope))
    }

    #[allow(clippy::too_many_arguments)]
    fn join(
        &self,
        kind: JoinKind,
        left: &TableExpr,
        right: &TableExpr,
        condition: &JoinCondition,
        hints: &[ast::Hint],
        span: Span,
        outer: Option<&Outer<'_>>,
    ) -> Result<(Node, RowScope)> {
        let (lnode, lscope) = self.from(left, outer)?;
        // UNNEST of the left side's arrays (a correlated join).
        let lateral = match right {
            TableExpr::Unnest {
                array,
                alias,
                with_offset,
                span,
            } => Some((array.clone(), alias.clone(), with_offset.clone(), *span)),
            TableExpr::Table {
                path, alias, span, ..
            } if path.len() >= 2
                && !matches!(lscope.resolve(&path[..1]), Ok(Resolved::NotFound))
                || (path.len() >= 2
                    && lscope
                        .tables
                        .iter()
                        .any(|(a, _)| a.eq_ignore_ascii_case(&path[0].value))) =>
            {
                let e = Expr::Column {
                    path: path.clone(),
                    span: *span,
                };
                let alias = alias.clone().or_else(|| path.last().cloned());
                Some((e, alias, None, *span))
            }
            _ => None,
        };
        if let Some((array, alias, with_offset, uspan)) = lateral {
            let outer_join = match kind {
                JoinKind::Left => true,
                JoinKind::Inner | JoinKind::Cross => false,
                _ => {
                    return Err(Error::unimplemented(
                        "RIGHT and FULL JOIN with UNNEST are not supported",
                    )
                    .at(span))
                }
            };
            let (node, scope) = self.unnest(
                lnode,
                lscope,
                &array,
                alias.as_ref(),
                &with_offset,
                outer_join,
                uspan,
                outer,
            )?;
            return match condition {
                JoinCondition::None => Ok((node, scope)),
                JoinCondition::On(e) if !outer_join => {
                    let es = ExprScope::new(self, &scope, outer, "ON clause");
                    let p = self.bind_bool(e, &es, "JOIN ON clause")?;
                    Ok((filter(node, p, expr_tree::text(e)), scope))
                }
                _ => Err(Error::unimplemented(
                    "LEFT JOIN UNNEST with a join condition is not supported",
                )
                .at(span)),
            };
        }
        let (rnode, rscope) = self.from(right, outer)?;
        if let Some((alias, _)) = rscope.tables.iter().find(|(a, _)| {
            !a.is_empty() && lscope.tables.iter().any(|(b, _)| b.eq_ignore_ascii_case(a))
        }) {
            return Err(Error::invalid_at(
                alias_span(right, alias).unwrap_or(span),
                format!("Duplicate table alias {alias} in the same FROM clause"),
            ));
        }
        let scans = |n: &Node| {
            let mut out = Vec::new();
            collect_scans(n, &mut out);
            out
        };
        match kind {
            JoinKind::Left => self.nonpushable.borrow_mut().extend(scans(&rnode)),
            JoinKind::Right => self.nonpushable.borrow_mut().extend(scans(&lnode)),
            JoinKind::Full => {
                self.nonpushable.borrow_mut().extend(scans(&rnode));
                self.nonpushable.borrow_mut().extend(scans(&lnode));
            }
            _ => {}
        }
        let mut scope = RowScope::concat(&lscope, &rscope);
        let shift = lscope.width();
        let join_width = scope.width();
        // FULL JOIN USING: (name, left slot, right slot) of each merged column.
        let mut full_using: Vec<(Ident, usize, usize)> = Vec::new();
        let les = ExprScope::new(self, &lscope, outer, "ON clause");
        let res = ExprScope::new(self, &rscope, outer, "ON clause");
        // (left key, right key, left slot, right slot) of each equality.
        let mut keys: Vec<(BoundExpr, BoundExpr, Option<usize>, Option<usize>)> = Vec::new();
        // (left column, right column) of each equality of two plain table
        // columns of the same type: the candidates for predicate transfer.
        let mut equal_columns: Vec<(Origin, Origin)> = Vec::new();
        let mut residual: Vec<Expr> = Vec::new();
        match condition {
            JoinCondition::None => {
                if kind != JoinKind::Cross && kind != JoinKind::Inner {
                    return Err(Error::invalid_at(
                        span,
                        "Join must have an ON or USING clause",
                    ));
                }
            }
            JoinCondition::On(e) => {
                for c in conjuncts(e) {
                    if let Expr::Binary {
                        op: BinaryOp::Eq,
                        left: a,
                        right: b,
                        ..
                    } = c
                    {
                        if !has_subquery(c) {
                            let sa = side(a, &lscope, &rscope);
                            let sb = side(b, &lscope, &rscope);
                            let pair = match (sa, sb) {
                                (Side::Left, Side::Right) => Some((&**a, &**b)),
                                (Side::Right, Side::Left) => Some((&**b, &**a)),
                                _ => None,
                            };
                            if let Some((l, r)) = pair {
                                let lb = self.bind_in(l, &les)?;
                                let rb = self.bind_in(r, &res)?;
                                if lb.ty() == rb.ty() && groupable(lb.ty()) {
                                    if let (Some(lo), Some(ro)) =
                                        (plain_origin(l, &lscope), plain_origin(r, &rscope))
                                    {
                                        equal_columns.push((lo, ro));
                                    }
                                    keys.push((
                                        lb,
                                        rb,
                                        plain_slot(l, &lscope),
                                        plain_slot(r, &rscope),
                                    ));
                                    residual.push(c.clone());
                                    continue;
                                }
                            }
                        }
                    }
                    residual.push(c.clone());
                }
            }
            JoinCondition::Using(names) => {
                let mut using_slots = Vec::new();
                for n in names {
                    let p = std::slice::from_ref(n);
                    let Ok(Resolved::Slot(ls, lt)) = lscope.resolve(p) else {
                        return Err(Error::invalid_at(
                            n.span,
                            format!(
                                "Column {} in USING clause not found on left side of join",
                                n.value
                            ),
                        ));
                    };
                    let Ok(Resolved::Slot(rs, rt)) = rscope.resolve(p) else {
                        return Err(Error::invalid_at(
                            n.span,
                            format!(
                                "Column {} in USING clause not found on right side of join",
                                n.value
                            ),
                        ));
                    };
                    if common_type(&lt, &rt).is_none() {
                        return Err(Error::invalid_at(n.span, format!("Column {} in USING has incompatible types on either side of the join: {lt} and {rt}", n.value)));
                    }
                    self.used.borrow().mark(lscope.columns[ls].origin);
                    self.used.borrow().mark(rscope.columns[rs].origin);
                    let lb = self.slot_expr(&lscope, ls)?;
                    let rb = self.slot_expr(&rscope, rs)?;
                    if kind == JoinKind::Full {
                        // Either side may be missing: the merged column is
                        // COALESCE(left, right), a new slot after the join's.
                        for hide in [ls, rs + shift] {
                            scope.columns[hide].unqualified = false;
                            scope.columns[hide].in_star = false;
                        }
                        using_slots.push(join_width + full_using.len());
                        full_using.push((n.clone(), ls, rs + shift));
                    } else {
                        let (hide, keep) = if kind == JoinKind::Right {
                            (ls, rs + shift)
                        } else {
                            (rs + shift, ls)
                        };
                        scope.columns[hide].unqualified = false;
                        scope.columns[hide].in_star = false;
                        using_slots.push(keep);
                    }
                    if lt == rt {
                        if let (Some(lo), Some(ro)) =
                            (lscope.columns[ls].origin, rscope.columns[rs].origin)
                        {
                            equal_columns.push((lo, ro));
                        }
                        keys.push((lb, rb, Some(ls), Some(rs)));
                    } else {
                        let eq = Expr::Binary {
                            op: BinaryOp::Eq,
                            left: Box::new(Expr::Column {
                                path: vec![Ident {
                                    value: format!("$c{ls}"),
                                    span: n.span,
                                }],
                                span: n.span,
                            }),
                            right: Box::new(Expr::Column {
                                path: vec![Ident {
                                    value: format!("$c{}", rs + shift),
                                    span: n.span,
                                }],
                                span: n.span,
                            }),
                            span: n.span,
                        };
                        residual.push(eq);
                    }
                }
                let rest: Vec<usize> = scope
                    .star
                    .iter()
                    .copied()
                    .filter(|s| scope.columns[*s].in_star && !using_slots.contains(s))
                    .collect();
                scope.star = using_slots.into_iter().chain(rest).collect();
            }
        }
        {
            let mut transfers = self.transfers.borrow_mut();
            for (lo, ro) in equal_columns {
                match kind {
                    JoinKind::Inner | JoinKind::Cross => {
                        transfers.push((lo, ro));
                        transfers.push((ro, lo));
                    }
                    JoinKind::Left => transfers.push((lo, ro)),
                    JoinKind::Right => transfers.push((ro, lo)),
                    JoinKind::Full => {}
                }
            }
        }
        // USING's synthetic comparisons bind against slot names.
        let residual_pred = and_all(residual);
        let condition = match &residual_pred {
            None => None,
            Some(p) => {
                let uses_synthetic = {
                    let mut paths = Vec::new();
                    column_paths(p, &mut paths);
                    paths
                        .iter()
                        .any(|p| p.len() == 1 && p[0].value.starts_with("$c"))
                };
                if uses_synthetic {
                    let types: Vec<Type> = scope.columns.iter().map(|c| c.ty.clone()).collect();
                    let syn = synthetic_scope(&types);
                    let es = ExprScope::new(self, &syn, outer, "ON clause");
                    Some(self.bind_bool(p, &es, "JOIN ON clause")?)
                } else {
                    let es = ExprScope::new(self, &scope, outer, "ON clause");
                    Some(self.bind_bool(p, &es, "JOIN ON clause")?)
                }
            }
        };
        let text = residual_pred
            .as_ref()
            .map(expr_tree::text)
            .unwrap_or_default();
        let hint = hints
            .iter()
            .find(|h| h.name.matches("JOIN_METHOD"))
            .and_then(|h| match &h.value {
                Expr::Column { path, .. } => path.last().map(|i| i.value.to_ascii_uppercase()),
                Expr::Literal {
                    value: Literal::String(s),
                    ..
                } => Some(s.to_ascii_uppercase()),
                _ => None,
            });
        let merge = if hint.is_none() || hint.as_deref() == Some("MERGE_JOIN") {
            self.interleaved_merge(kind, &lnode, &rnode, &keys)
        } else {
            None
        };
        let method = if let Some(m) = merge {
            m
        } else if keys.is_empty()
            || hint.as_deref() == Some("APPLY_JOIN")
            || hint.as_deref() == Some("LOOP_JOIN")
        {
            JoinMethod::NestedLoop
        } else {
            let (left_keys, right_keys) = keys.into_iter().map(|(l, r, _, _)| (l, r)).unzip();
            JoinMethod::Hash {
                left_keys,
                right_keys,
            }
        };
        let node = Node::new(
            NodeKind::Join {
                left: Box::new(lnode),
                right: Box::new(rnode),
                kind,
                method,
                condition,
                text,
            },
            join_width,
        );
        if full_using.is_empty() {
            return Ok((node, scope));
        }
        self.merge_full_using(node, scope, &full_using)
    }

    /// Appends the merged `COALESCE(left, right)` column of each FULL JOIN
    /// USING name to the join's row (the slots `using_slots` already points
    /// `*` at) and makes it what the unqualified name resolves to.
    fn merge_full_using(
        &self,
        node: Node,
        mut scope: RowScope,
        full_using: &[(Ident, usize, usize)],
    ) -> Result<(Node, RowScope)> {
        let width = node.width;
        let types: Vec<Type> = scope.columns.iter().map(|c| c.ty.clone()).collect();
        let syn = synthetic_scope(&types);
        let es = ExprScope::new(self, &syn, None, "USING clause");
        let mut exprs = (0..width)
            .map(|i| self.bind_in(&synthetic_column(i, Span::default()), &es))
            .collect::<Result<Vec<_>>>()?;
        let mut names: Vec<String> = scope.columns.iter().map(|c| c.name.clone()).collect();
        for (name, ls, rs) in full_using {
            let coalesce = Expr::Function {
                name: Ident {
                    value: "COALESCE".into(),
                    span: name.span,
                },
                args: vec![
                    synthetic_column(*ls, name.span),
                    synthetic_column(*rs, name.span),
                ],
                safe: false,
                distinct: false,
                modifiers: None,
                span: name.span,
            };
            let b = self.bind_in(&coalesce, &es)?;
            scope.columns.push(ScopeColumn {
                name: name.value.clone(),
                ty: b.ty().clone(),
                in_star: true,
                unqualified: true,
                origin: None,
            });
            names.push(name.value.clone());
            exprs.push(b);
        }
        Ok((project(node, exprs, names), scope))
    }

    /// A parent scan joined to a scan of a table interleaved in it (at any
    /// depth) on the whole parent key: merge both in key order.
    fn interleaved_merge(
        &self,
        kind: JoinKind,
        left: &Node,
        right: &Node,
        keys: &[(BoundExpr, BoundExpr, Option<usize>, Option<usize>)],
    ) -> Option<JoinMethod> {
        if !matches!(kind, JoinKind::Inner | JoinKind::Left) {
            return None;
        }
        let (NodeKind::Scan(l), NodeKind::Scan(r)) = (&left.kind, &right.kind) else {
            return None;
        };
        let parent = self.catalog.table(&l.table)?;
        let child = self.catalog.table(&r.table)?;
        if !self
            .catalog
            .ancestors(child.id)
            .iter()
            .any(|a| a.id == parent.id)
        {
            return None;
        }
        let mut left_keys = Vec::new();
        let mut right_keys = Vec::new();
        let mut desc = Vec::new();
        for (i, pk) in parent.primary_key.iter().enumerate() {
            let ck = child.primary_key.get(i)?;
            keys.iter()
                .find(|(_, _, ls, rs)| *ls == Some(pk.column) && *rs == Some(ck.column))?;
            left_keys.push(pk.column);
            right_keys.push(ck.column);
            desc.push(pk.desc);
        }
        Some(JoinMethod::InterleavedMerge {
            left_keys,
            right_keys,
            desc,
            tree: None,
        })
    }

    // ----- predicate pushdown --------------------------------------------

    /// `node` (over the FROM row `from`) filtered by the WHERE clause `w`:
    /// each conjunct a single scan can answer is pushed into it, the rest
    /// are ANDed into a filter above it.
    pub(crate) fn apply_where(
        &self,
        w: &Expr,
        from: &RowScope,
        mut node: Node,
        outer: Option<&Outer<'_>>,
    ) -> Result<Node> {
        let mut residual = Vec::new();
        for c in conjuncts(w) {
            if !self.push_conjunct(c, from, &mut node, outer)? {
                residual.push(c.clone());
            }
        }
        if let Some(pred) = and_all(residual) {
            let es = ExprScope::new(self, from, outer, "WHERE clause");
            let text = expr_tree::text(&pred);
            let predicate = self.bind_bool(&pred, &es, "WHERE clause")?;
            node = filter(node, predicate, text);
        }
        Ok(node)
    }

    /// Pushes a WHERE conjunct to the one scan it reads, if it reads one.
    pub(crate) fn push_conjunct(
        &self,
        c: &Expr,
        from: &RowScope,
        node: &mut Node,
        outer: Option<&Outer<'_>>,
    ) -> Result<bool> {
        if has_subquery(c) || has_aggregate(c) {
            return Ok(false);
        }
        let mut paths = Vec::new();
        column_paths(c, &mut paths);
        let mut target: Option<usize> = None;
        for p in &paths {
            match from.resolve(p)? {
                Resolved::Slot(s, _) => match from.columns[s].origin {
                    Some((scan, _)) if target.is_none() || target == Some(scan) => {
                        target = Some(scan)
                    }
                    _ => return Ok(false),
                },
                Resolved::NotFound => {}
            }
        }
        let Some(scan) = target else { return Ok(false) };
        if self.nonpushable.borrow().contains(&scan) {
            return Ok(false);
        }
        let scope = self
            .scan_scopes
            .borrow()
            .get(&scan)
            .cloned()
            .ok_or_else(|| Error::internal("scan scope missing"))?;
        // Mark the columns read in the full scope (same origins).
        for p in &paths {
            if let Ok(Resolved::Slot(s, _)) = from.resolve(p) {
                self.used.borrow().mark(from.columns[s].origin);
            }
        }
        let es = ExprScope::new(self, &scope, outer, "WHERE clause");
        let expr = self.bind_bool(c, &es, "WHERE clause")?;
        let key = self.key_predicate(c, &scope);
        let conj = Conjunct {
            expr,
            key: key.clone(),
            text: expr_tree::text(c),
        };
        // A constant bound already there (transferred from a joined column).
        if key.is_some() && has_conjunct(node, scan, &conj.text) {
            return Ok(true);
        }
        if !attach(node, scan, conj) {
            return Ok(false);
        }
        if let Some(k) = key {
            self.transfer(c, (scan, k.column()), &k, node, outer);
        }
        Ok(true)
    }

    /// Predicate transfer: a constant bound `c` on column `from` (described
    /// by `key`), pushed to `from`'s scan, also holds for every column the
    /// join equalities make equal to it (see `transfers`, followed
    /// transitively): each such scan gets `c` rewritten to its column, so its
    /// key range or index can use it. The original conjunct stays. Only
    /// `=`, `IN`, ranges and `BETWEEN` are copied (an `IS [NOT] NULL` says
    /// nothing useful about a column an equality matched).
    fn transfer(
        &self,
        c: &Expr,
        from: Origin,
        key: &KeyPredicate,
        node: &mut Node,
        outer: Option<&Outer<'_>>,
    ) {
        let copy = match key {
            KeyPredicate::Eq(_, v) => !v.is_null(),
            KeyPredicate::In(..)
            | KeyPredicate::Lower(..)
            | KeyPredicate::Upper(..)
            | KeyPredicate::Between(..) => true,
            KeyPredicate::NotNull(_) => false,
        };
        if !copy {
            return;
        }
        let edges: Vec<(Origin, Origin)> = self.transfers.borrow().clone();
        if edges.is_empty() {
            return;
        }
        let mut seen = vec![from];
        let mut queue = vec![from];
        while let Some(at) = queue.pop() {
            for &(a, b) in &edges {
                if a != at || seen.contains(&b) {
                    continue;
                }
                seen.push(b);
                if self.copy_bound(c, b, node, outer) {
                    queue.push(b);
                }
            }
        }
    }

    /// Adds conjunct `c` (a constant bound on one column) to the scan of
    /// column `to`, rewritten to read that column; whether `to`'s scan now
    /// has it.
    fn copy_bound(&self, c: &Expr, to: Origin, node: &mut Node, outer: Option<&Outer<'_>>) -> bool {
        let (oscan, ocol) = to;
        let Some(oscope) = self.scan_scopes.borrow().get(&oscan).cloned() else {
            return false;
        };
        let Some(colname) = oscope.columns.get(ocol).map(|c| c.name.clone()) else {
            return false;
        };
        let Some(alias) = oscope.tables.first().map(|(a, _)| a.clone()) else {
            return false;
        };
        // The bound's only column reference is the bounded column (the other
        // operands are constants).
        let rewritten = expr_tree::rewrite(c, &|x: &Expr| match x {
            Expr::Column { span, .. } => Some(Expr::Column {
                path: vec![
                    Ident {
                        value: alias.clone(),
                        span: *span,
                    },
                    Ident {
                        value: colname.clone(),
                        span: *span,
                    },
                ],
                span: *span,
            }),
            _ => None,
        });
        let text = expr_tree::text(&rewritten);
        if has_conjunct(node, oscan, &text) {
            return true;
        }
        let es = ExprScope::new(self, &oscope, outer, "WHERE clause");
        let Ok(expr) = self.bind_bool(&rewritten, &es, "WHERE clause") else {
            return false;
        };
        let key = self.key_predicate(&rewritten, &oscope);
        attach(node, oscan, Conjunct { expr, key, text })
    }

    /// What a conjunct says about one key-able column of a scan, if anything.
    pub fn key_predicate(&self, c: &Expr, scope: &RowScope) -> Option<KeyPredicate> {
        let column = |e: &Expr| -> Option<(usize, Type)> {
            let Expr::Column { path, .. } = e else {
                return None;
            };
            match scope.resolve(path).ok()? {
                Resolved::Slot(s, ty) => Some((scope.columns[s].origin?.1, ty)),
                Resolved::NotFound => None,
            }
        };
        let konst = |e: &Expr, ty: &Type| -> Option<Value> { key_value(self.constant(e)?, ty) };
        match c {
            Expr::Binary {
                op, left, right, ..
            } => {
                let (col, ty, other, flipped) = if let Some((c, t)) = column(left) {
                    (c, t, &**right, false)
                } else if let Some((c, t)) = column(right) {
                    (c, t, &**left, true)
                } else {
                    return None;
                };
                if !ty.is_key_type() {
                    return None;
                }
                let v = konst(other, &ty)?;
                if v.is_null() {
                    return None;
                }
                use BinaryOp::*;
                let op = match (op, flipped) {
                    (Eq, _) => Eq,
                    (Lt, false) | (Gt, true) => Lt,
                    (LtEq, false) | (GtEq, true) => LtEq,
                    (Gt, false) | (Lt, true) => Gt,
                    (GtEq, false) | (LtEq, true) => GtEq,
                    _ => return None,
                };
                Some(match op {
                    Eq => KeyPredicate::Eq(col, v),
                    Lt => KeyPredicate::Upper(col, v, false),
                    LtEq => KeyPredicate::Upper(col, v, true),
                    Gt => KeyPredicate::Lower(col, v, false),
                    _ => KeyPredicate::Lower(col, v, true),
                })
            }
            Expr::InList {
                expr,
                list,
                negated: false,
                ..
            } => {
                let (col, ty) = column(expr)?;
                if !ty.is_key_type() {
                    return None;
                }
                let mut values = Vec::new();
                for e in list {
                    let v = konst(e, &ty)?;
                    if !v.is_null() {
                        values.push(v);
                    }
                }
                Some(KeyPredicate::In(col, values))
            }
            Expr::Between {
                expr,
                low,
                high,
                negated: false,
                ..
            } => {
                let (col, ty) = column(expr)?;
                if !ty.is_key_type() {
                    return None;
                }
                let (lo, hi) = (konst(low, &ty)?, konst(high, &ty)?);
                if lo.is_null() || hi.is_null() {
                    return None;
                }
                Some(KeyPredicate::Between(col, lo, hi))
            }
            Expr::Is {
                expr,
                test: IsTest::Null,
                negated,
                ..
            } => {
                let (col, ty) = column(expr)?;
                if !ty.is_key_type() {
                    return None;
                }
                Some(if *negated {
                    KeyPredicate::NotNull(col)
                } else {
                    KeyPredicate::Eq(col, Value::Null)
                })
            }
            _ => None,
        }
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

impl<'a, 'c> ExprScope<'a, 'c> {
    fn with_clause(&self, clause: &'static str) -> ExprScope<'a, 'c> {
        ExprScope {
            binder: self.binder,
            row: self.row,
            outer: self.outer,
            agg: self.agg,
            clause,
            error: RefCell::new(None),
        }
    }
}

/// The scope ORDER BY extras are bound in: before the projection.
struct PreProjection<'x, 'a, 'c> {
    scope: &'x RowScope,
    es: &'x ExprScope<'a, 'c>,
}

impl PreProjection<'_, '_, '_> {
    fn rewrite(&self, e: &Expr) -> Expr {
        e.clone()
    }
}

/// Whether output column `i` of a query block's plan is an untyped `NULL`
/// literal (`SELECT NULL`), possibly under the block's own DISTINCT, ORDER
/// BY and LIMIT, or such a column on both sides of a set operation. A NULL
/// read from a derived table is typed (INT64) and does not count.
fn untyped_null_column(node: &Node, i: usize) -> bool {
    match &node.kind {
        NodeKind::Project { input, exprs, .. } => match exprs.get(i) {
            Some(e) if e.is_untyped_null() => true,
            // The projection that drops ORDER BY's extra columns.
            Some(e) => {
                matches!(input.kind, NodeKind::Sort { .. })
                    && e.as_column().is_some_and(|s| untyped_null_column(input, s))
            }
            None => false,
        },
        NodeKind::Sort { input, .. }
        | NodeKind::Limit { input, .. }
        | NodeKind::Distinct { input } => untyped_null_column(input, i),
        NodeKind::SetOp { left, right, .. } => {
            untyped_null_column(left, i) && untyped_null_column(right, i)
        }
        _ => false,
    }
}

/// Where the range variable `alias` is introduced in a FROM item.
fn alias_span(te: &TableExpr, alias: &str) -> Option<Span> {
    match te {
        TableExpr::Table {
            path,
            alias: a,
            span,
            ..
        } => {
            let name = a.as_ref().or(path.last())?;
            name.value
                .eq_ignore_ascii_case(alias)
                .then(|| a.as_ref().map_or(*span, |a| a.span))
        }
        TableExpr::Subquery { alias: a, .. } => a
            .as_ref()
            .filter(|a| a.value.eq_ignore_ascii_case(alias))
            .map(|a| a.span),
        TableExpr::Unnest { .. } => None,
        TableExpr::Join { left, right, .. } => {
            alias_span(right, alias).or_else(|| alias_span(left, alias))
        }
    }
}

enum Side {
    Left,
    Right,
    Neither,
    Both,
}

/// Which join input an expression reads.
fn side(e: &Expr, left: &RowScope, right: &RowScope) -> Side {
    let mut paths = Vec::new();
    column_paths(e, &mut paths);
    let (mut l, mut r) = (false, false);
    for p in paths {
        let in_l = matches!(left.resolve(p), Ok(Resolved::Slot(..)));
        let in_r = matches!(right.resolve(p), Ok(Resolved::Slot(..)));
        match (in_l, in_r) {
            (true, false) => l = true,
            (false, true) => r = true,
            (true, true) => return Side::Both,
            _ => {}
        }
    }
    match (l, r) {
        (true, false) => Side::Left,
        (false, true) => Side::Right,
        (false, false) => Side::Neither,
        _ => Side::Both,
    }
}

/// The table column (scan, column) a plain column reference reads.
fn plain_origin(e: &Expr, scope: &RowScope) -> Option<Origin> {
    match e {
        Expr::Column { path, .. } => match scope.resolve(path).ok()? {
            Resolved::Slot(s, _) => scope.columns[s].origin,
            Resolved::NotFound => None,
        },
        _ => None,
    }
}

/// The slot a plain column reference reads.
fn plain_slot(e: &Expr, scope: &RowScope) -> Option<usize> {
    match e {
        Expr::Column { path, .. } => match scope.resolve(path).ok()? {
            Resolved::Slot(s, _) => scope.columns[s].origin.map(|(_, c)| c).or(Some(s)),
            Resolved::NotFound => None,
        },
        _ => None,
    }
}

fn collect_scans(n: &Node, out: &mut Vec<usize>) {
    if let NodeKind::Scan(s) = &n.kind {
        out.push(s.scan_id);
    }
    for c in n.children() {
        collect_scans(c, out);
    }
}

/// Whether the scan `scan_id` under `node` has a conjunct reading `text`.
fn has_conjunct(node: &Node, scan_id: usize, text: &str) -> bool {
    match &node.kind {
        NodeKind::Scan(s) if s.scan_id == scan_id => s.conjuncts.iter().any(|c| c.text == text),
        _ => node
            .children()
            .into_iter()
            .any(|n| has_conjunct(n, scan_id, text)),
    }
}

/// Adds a conjunct to the scan `scan_id` under `node`.
fn attach(node: &mut Node, scan_id: usize, c: Conjunct) -> bool {
    let mut slot = Some(c);
    attach_inner(node, scan_id, &mut slot);
    slot.is_none()
}

fn attach_inner(node: &mut Node, scan_id: usize, c: &mut Option<Conjunct>) {
    if c.is_none() {
        return;
    }
    match &mut node.kind {
        NodeKind::Scan(s) if s.scan_id == scan_id => {
            if let Some(c) = c.take() {
                s.conjuncts.push(c);
            }
        }
        _ => {
            for child in node.children_mut() {
                attach_inner(child, scan_id, c);
            }
        }
    }
}

/// Replaces the placeholder leaf (an empty `Values`) under `node` with `input`.
fn splice(node: &mut Node, input: Node) {
    let mut slot = Some(input);
    splice_inner(node, &mut slot);
}

fn splice_inner(node: &mut Node, input: &mut Option<Node>) {
    if input.is_none() {
        return;
    }
    match &mut node.kind {
        NodeKind::Values { rows } if rows.is_empty() => {
            if let Some(i) = input.take() {
                *node = i;
            }
        }
        NodeKind::Filter { input: c, .. }
        | NodeKind::Project { input: c, .. }
        | NodeKind::Aggregate { input: c, .. }
        | NodeKind::Sort { input: c, .. }
        | NodeKind::Limit { input: c, .. }
        | NodeKind::Distinct { input: c }
        | NodeKind::Unnest { input: c, .. }
        | NodeKind::Window { input: c, .. } => splice_inner(c, input),
        _ => {}
    }
}

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

/// Keeps the first `types.len()` columns.
fn trim(binder: &Binder<'_>, node: Node, types: &[Type], names: Vec<String>) -> Result<Node> {
    let mut all = types.to_vec();
    all.resize(node.width, Type::Int64);
    let syn = synthetic_scope(&all);
    let es = ExprScope::new(binder, &syn, None, "SELECT list");
    let exprs = (0..types.len())
        .map(|i| binder.bind_in(&synthetic_column(i, Span::default()), &es))
        .collect::<Result<Vec<_>>>()?;
    Ok(project(node, exprs, names))
}

/// Sorts `node` (width `width`) by keys that may read `extras`, expressions
/// computed over its row: they are appended for the sort, then dropped.
fn sort_with_extras(
    binder: &Binder<'_>,
    node: Node,
    types: &[Type],
    extras: Vec<BoundExpr>,
    keys: Vec<SortKey>,
    names: &[String],
) -> Result<Node> {
    let width = types.len();
    if extras.is_empty() {
        return Ok(Node::new(
            NodeKind::Sort {
                input: Box::new(node),
                keys,
            },
            width,
        ));
    }
    let syn = synthetic_scope(types);
    let es = ExprScope::new(binder, &syn, None, "ORDER BY clause");
    let mut exprs = (0..width)
        .map(|i| binder.bind_in(&synthetic_column(i, Span::default()), &es))
        .collect::<Result<Vec<_>>>()?;
    let mut all_names = names.to_vec();
    all_names.extend(extras.iter().map(|_| String::new()));
    exprs.extend(extras);
    let all_types: Vec<Type> = exprs.iter().map(|e| e.ty().clone()).collect();
    let node = project(node, exprs, all_names);
    let node = Node::new(
        NodeKind::Sort {
            input: Box::new(node),
            keys,
        },
        all_types.len(),
    );
    trim(binder, node, types, names.to_vec())
}

fn sort_key(item: &ast::OrderByItem, slot: usize, origin: Option<(usize, usize)>) -> SortKey {
    SortKey {
        slot,
        desc: item.desc,
        nulls_first: item.nulls_first.unwrap_or(!item.desc),
        origin,
        text: format!(
            "{}{}",
            expr_tree::text(&item.expr),
            if item.desc { " DESC" } else { "" }
        ),
    }
}

/// The output name of a select item: its alias, or the last name of a path.
fn item_name(e: &Expr, alias: Option<&Ident>) -> String {
    if let Some(a) = alias {
        return a.value.clone();
    }
    match e {
        Expr::Column { path, .. } => path.last().map(|i| i.value.clone()).unwrap_or_default(),
        Expr::Field { field, .. } => field.value.clone(),
        _ => String::new(),
    }
}

/// `ORDER BY name` where `name` is a select-list alias.
fn alias_slot(e: &Expr, s: &Select) -> Option<usize> {
    let Expr::Column { path, .. } = e else {
        return None;
    };
    if path.len() != 1 {
        return None;
    }
    let mut i = 0;
    for item in &s.items {
        match item {
            SelectItem::Expr { alias: Some(a), .. } if a.matches(&path[0].value) => return Some(i),
            SelectItem::Expr { .. } => i += 1,
            // After a star the positions are not known from the items alone.
            _ => return None,
        }
    }
    None
}

/// Whether values of the type can be grouped and compared for equality.
pub(crate) fn groupable(t: &Type) -> bool {
    match t {
        Type::Json => false,
        Type::Array(e) => groupable(e),
        Type::Struct(fields) => fields.iter().all(|(_, t)| groupable(t)),
        _ => true,
    }
}

/// The first window function call in `e` (outside subqueries).
fn first_window(e: &Expr) -> Option<&Expr> {
    if window_spec(e).is_some() {
        return Some(e);
    }
    expr_tree::children(e).into_iter().find_map(first_window)
}

/// Appends the window function calls of `e` (outside subqueries) not already
/// in `out` (by canonical form); calls nested in a call's arguments or OVER
/// clause are left to the binder, which refuses them.
fn collect_windows(e: &Expr, out: &mut Vec<Expr>) {
    if window_spec(e).is_some() {
        let key = canonical(e);
        if !out.iter().any(|c| canonical(c) == key) {
            out.push(e.clone());
        }
        return;
    }
    for c in expr_tree::children(e) {
        collect_windows(c, out);
    }
}

/// The expression `expr.*` expands: `expr` itself, or the path `a.b` of
/// `a.b.*` when that names no table.
fn dot_star_target(qualifier: &[Ident], expr: Option<&Expr>) -> Expr {
    match expr {
        Some(e) => e.clone(),
        None => Expr::Column {
            path: qualifier.to_vec(),
            span: crate::scope::path_span(qualifier),
        },
    }
}

/// The columns of `expr.*`: one per STRUCT field, named by the field
/// (anonymous fields give unnamed columns). Other types are refused as
/// GoogleSQL does.
fn dot_star_fields(b: BoundExpr, span: Span) -> Result<Vec<(String, BoundExpr)>> {
    b.struct_fields().ok_or_else(|| {
        Error::invalid_at(
            span,
            format!("Dot-star is not supported for type {}", b.ty()),
        )
    })
}

#[cfg(test)]
mod tests {
    use rowtree_parser::ast::StatementKind;
    use rowtree_schema::Catalog;

    use crate::{plan_query, Params};

    fn catalog() -> Catalog {
        let mut c = Catalog::new();
        for ddl in [
            "CREATE TABLE A (Id INT64 NOT NULL, X INT64, S STRING(MAX)) PRIMARY KEY (Id)",
            "CREATE TABLE B (Id INT64 NOT NULL, X INT64) PRIMARY KEY (Id)",
        ] {
            c = c.apply_sql(ddl).expect("ddl").0;
        }
        c
    }

    fn plan(sql: &str) -> crate::Result<String> {
        let stmt = rowtree_parser::parse_statement(sql).expect("parses");
        let StatementKind::Query(q) = stmt.kind else {
            panic!("not a query")
        };
        plan_query(&catalog(), &q, &Params::new()).map(|p| p.explain())
    }

    fn error(sql: &str) -> String {
        let e = plan(sql).expect_err("should fail");
        e.render(sql).message
    }

    #[test]
    fn names_resolve_with_and_without_qualifiers() {
        assert!(plan("SELECT a.X, S FROM A a").is_ok());
        assert_eq!(
            error("SELECT Nope FROM A"),
            "Unrecognized name: Nope [at 1:8]"
        );
        assert_eq!(
            error("SELECT X FROM A, B"),
            "Column name X is ambiguous [at 1:8]"
        );
        assert_eq!(
            error("SELECT a.Nope FROM A a"),
            "Name Nope not found inside a [at 1:10]"
        );
        assert_eq!(
            error("SELECT 1 FROM Missing"),
            "Table not found: Missing [at 1:15]"
        );
    }

    #[test]
    fn window_functions_get_a_window_node() {
        let p = plan(
            "SELECT S, IS_FIRST(2) OVER (PARTITION BY S ORDER BY X DESC) FROM A WHERE Id > 0 ORDER BY S",
        )
        .unwrap();
        assert!(
            p.contains("Window: IS_FIRST(2) OVER (PARTITION BY S ORDER BY X DESC)"),
            "{p}"
        );
        let (window, sort) = (p.find("Window:").unwrap(), p.find("Sort:").unwrap());
        // Sort (ORDER BY) sits above the window, the scan below it.
        assert!(sort < window, "{p}");
        assert!(p.find("TableScan A").unwrap() > window, "{p}");
        assert_eq!(
            error("SELECT X FROM A WHERE IS_FIRST(1) OVER ()"),
            "Analytic function not allowed in WHERE clause [at 1:23]"
        );
    }

    #[test]
    fn aggregation_rules() {
        assert_eq!(
            error("SELECT X, COUNT(*) FROM A"),
            "SELECT list expression references column X which is neither grouped nor aggregated [at 1:8]"
        );
        assert!(plan("SELECT X, COUNT(*) FROM A GROUP BY X").is_ok());
        assert!(plan("SELECT X + 1 AS y, COUNT(*) FROM A GROUP BY y").is_ok());
        assert!(error("SELECT 1 FROM A WHERE COUNT(*) > 1").contains("WHERE clause"));
    }

    #[test]
    fn where_conjuncts_are_pushed_to_their_scan() {
        let p = plan("SELECT a.S FROM A a JOIN B b ON a.X = b.X WHERE a.Id = 1 AND b.X > 3 AND a.S = 'q' OR b.Id = 2").unwrap();
        // The OR spans both tables: it stays above the join.
        assert!(p.contains("Filter:"), "{p}");
        let p =
            plan("SELECT a.S FROM A a JOIN B b ON a.X = b.X WHERE a.Id = 1 AND b.X > 3").unwrap();
        assert!(p.contains("TableScan A: key (1)"), "{p}");
        assert!(p.contains("TableScan B: full scan, filter: b.X > 3"), "{p}");
        assert!(p.contains("HashJoin INNER"), "{p}");
    }

    #[test]
    fn set_operations_check_column_counts() {
        assert_eq!(
            error("SELECT 1 UNION ALL SELECT 1, 2"),
            "Queries in UNION ALL have mismatched column count; query 1 has 1 column, query 2 has 2 columns [at 1:1]"
        );
        assert!(plan("SELECT 1 UNION ALL SELECT 2.5").is_ok());
    }
}
