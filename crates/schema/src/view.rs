//! Views, and the query analysis they need from the SQL layer.
//!
//! # Layering
//!
//! A view is a named query. Binding a query (names, types, the output
//! columns) is the SQL crate's job, and the SQL crate depends on this one,
//! so the catalog cannot bind a view itself. The split is:
//!
//! * This crate keeps the view's definition: name, `SQL SECURITY`, the query
//!   text and its parsed form, and the tables and views the query reads
//!   ([`View::dependencies`], found by walking the query's FROM clauses).
//!   [`Catalog::apply`](crate::Catalog::apply) validates what it can see
//!   without binding: the name, the shared namespace with tables, that every
//!   table or view the query names exists, no reference cycles, and the
//!   dependency rules (a table or view that a view reads cannot be dropped).
//! * Full validation of the query goes through a
//!   [`ViewAnalyzer`](crate::ViewAnalyzer) passed to
//!   [`Catalog::apply_with`](crate::Catalog::apply_with) (the trait sits
//!   beside the catalog it is handed): the SQL crate implements it by binding
//!   the query against the catalog being built, and the db crate passes the
//!   one its database was opened with (`rowtree_db::Options::view_analyzer`).
//!   The analyzer is also asked again for the views that depend on a table or
//!   view that ALTER TABLE or CREATE OR REPLACE VIEW changes.
//! * A view's output columns (names and types) are derived, never stored:
//!   the SQL crate binds the view's query when a statement reads the view
//!   and when INFORMATION_SCHEMA lists its columns. So the catalog and the
//!   DDL log hold nothing that could disagree with the tables the view reads,
//!   and replaying the DDL log needs no SQL layer.

use rowtree_parser::ast::{self, Expr, Query, SelectItem, SetExpr, SqlSecurity, TableExpr};

/// A view of the catalog.
#[derive(Debug, Clone, PartialEq)]
pub struct View {
    pub name: String,
    pub security: SqlSecurity,
    /// The query as written after `AS`.
    pub query_text: String,
    /// The parsed query; spans are offsets into [`View::query_text`]'s
    /// original statement and are not meaningful after replay.
    pub query: Query,
    /// Names of the tables and views the query reads, as the catalog spells
    /// them, without duplicates, in order of first mention.
    pub dependencies: Vec<String>,
}

impl View {
    /// Whether the query reads the table or view `name` (case-insensitive).
    pub fn depends_on(&self, name: &str) -> bool {
        self.dependencies
            .iter()
            .any(|d| d.eq_ignore_ascii_case(name))
    }
}

/// The single-name table references of `query` that are not CTEs in scope,
/// in order of first mention (duplicates removed, case-insensitively), with
/// the span of the first mention. `INFORMATION_SCHEMA.X` paths and paths
/// into earlier FROM items (`t.arr`) are not table references.
pub(crate) fn referenced_tables(query: &Query) -> Vec<(String, ast::Span)> {
    let mut out = Vec::new();
    let mut ctes = Vec::new();
    walk_query(query, &mut ctes, &mut out);
    out
}

fn add(out: &mut Vec<(String, ast::Span)>, name: &str, span: ast::Span) {
    if !out.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)) {
        out.push((name.to_string(), span));
    }
}

fn walk_query(q: &Query, ctes: &mut Vec<String>, out: &mut Vec<(String, ast::Span)>) {
    let depth = ctes.len();
    for cte in &q.with {
        walk_query(&cte.query, ctes, out);
        ctes.push(cte.name.value.clone());
    }
    walk_set(&q.body, ctes, out);
    for item in &q.order_by {
        walk_expr(&item.expr, ctes, out);
    }
    ctes.truncate(depth);
}

fn walk_set(s: &SetExpr, ctes: &mut Vec<String>, out: &mut Vec<(String, ast::Span)>) {
    match s {
        SetExpr::Select(select) => {
            if let Some(from) = &select.from {
                walk_from(from, ctes, out);
            }
            for item in &select.items {
                match item {
                    SelectItem::Expr { expr, .. } => walk_expr(expr, ctes, out),
                    SelectItem::Star { replace, .. } => {
                        for (e, _) in replace {
                            walk_expr(e, ctes, out);
                        }
                    }
                    SelectItem::QualifiedStar { .. } => {}
                }
            }
            for e in select
                .where_clause
                .iter()
                .chain(select.group_by.iter())
                .chain(select.having.iter())
            {
                walk_expr(e, ctes, out);
            }
        }
        SetExpr::Query(q) => walk_query(q, ctes, out),
        SetExpr::SetOperation { left, right, .. } => {
            walk_set(left, ctes, out);
            walk_set(right, ctes, out);
        }
    }
}

fn walk_from(t: &TableExpr, ctes: &mut Vec<String>, out: &mut Vec<(String, ast::Span)>) {
    match t {
        TableExpr::Table { path, span, .. } => {
            if let [name] = path.as_slice() {
                if !ctes.iter().any(|c| c.eq_ignore_ascii_case(&name.value)) {
                    add(out, &name.value, *span);
                }
            }
        }
        TableExpr::Subquery { query, .. } => walk_query(query, ctes, out),
        TableExpr::Unnest { array, .. } => walk_expr(array, ctes, out),
        TableExpr::Join {
            left,
            right,
            condition,
            ..
        } => {
            walk_from(left, ctes, out);
            walk_from(right, ctes, out);
            if let ast::JoinCondition::On(e) = condition {
                walk_expr(e, ctes, out);
            }
        }
    }
}

fn walk_expr(e: &Expr, ctes: &mut Vec<String>, out: &mut Vec<(String, ast::Span)>) {
    let mut go = |x: &Expr| walk_expr(x, ctes, out);
    match e {
        Expr::Literal { .. }
        | Expr::Column { .. }
        | Expr::Parameter { .. }
        | Expr::Star { .. }
        | Expr::Default { .. }
        | Expr::Sequence { .. } => {}
        Expr::Unary { expr, .. }
        | Expr::Cast { expr, .. }
        | Expr::Is { expr, .. }
        | Expr::Field { expr, .. } => go(expr),
        Expr::Interval { value, .. } => go(value),
        Expr::Binary { left, right, .. } => {
            go(left);
            go(right);
        }
        Expr::Function {
            args, modifiers, ..
        } => {
            for a in args {
                go(a);
            }
            if let Some(m) = modifiers {
                for o in &m.order_by {
                    go(&o.expr);
                }
                if let Some(l) = &m.limit {
                    go(l);
                }
                if let Some(w) = &m.over {
                    for p in &w.partition_by {
                        go(p);
                    }
                    for o in &w.order_by {
                        go(&o.expr);
                    }
                }
            }
        }
        Expr::Subquery { query, .. }
        | Expr::Exists { query, .. }
        | Expr::ArraySubquery { query, .. } => walk_query(query, ctes, out),
        Expr::InSubquery { expr, query, .. } => {
            walk_expr(expr, ctes, out);
            walk_query(query, ctes, out);
        }
        Expr::InUnnest { expr, array, .. } => {
            go(expr);
            go(array);
        }
        Expr::Extract {
            expr, time_zone, ..
        } => {
            go(expr);
            if let Some(tz) = time_zone {
                go(tz);
            }
        }
        Expr::InList { expr, list, .. } => {
            go(expr);
            for x in list {
                go(x);
            }
        }
        Expr::Between {
            expr, low, high, ..
        } => {
            go(expr);
            go(low);
            go(high);
        }
        Expr::Like { expr, pattern, .. } => {
            go(expr);
            go(pattern);
        }
        Expr::Case {
            operand,
            branches,
            else_expr,
            ..
        } => {
            if let Some(o) = operand {
                go(o);
            }
            for (w, t) in branches {
                go(w);
                go(t);
            }
            if let Some(x) = else_expr {
                go(x);
            }
        }
        Expr::Array { items, .. } => {
            for x in items {
                go(x);
            }
        }
        Expr::Struct { fields, .. } => {
            for (_, x) in fields {
                go(x);
            }
        }
        Expr::Subscript { expr, index, .. } => {
            go(expr);
            go(index);
        }
    }
}
