//! Queries, and the `THEN RETURN` list of DML statements.
//!
//! At statement level a query prints as an indented tree: set operations show
//! their operands beneath them, each SELECT clause gets a line, and a FROM
//! clause prints its join tree with one node per line. Inside expressions
//! (subqueries) a query prints on one line in braces, with set operations and
//! joins fully parenthesised.

use std::fmt::Write as _;

use rowtree_parser::ast::*;

use super::{alias_str, dotted, expr_str, flag, idents, list, span_str};

fn pad(depth: usize) -> String {
    "  ".repeat(depth)
}

fn hints_str(hints: &[Hint]) -> String {
    if hints.is_empty() {
        return String::new();
    }
    format!(
        " @{{{}}}",
        hints
            .iter()
            .map(|h| format!("{}={}", h.name.value, expr_str(&h.value)))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

pub(super) fn order_by_str(items: &[OrderByItem]) -> String {
    items
        .iter()
        .map(|o| {
            format!(
                "{}{}{}",
                expr_str(&o.expr),
                flag(o.desc, " DESC"),
                match o.nulls_first {
                    Some(true) => " NULLS FIRST",
                    Some(false) => " NULLS LAST",
                    None => "",
                }
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn select_item_str(item: &SelectItem) -> String {
    match item {
        SelectItem::Expr { expr, alias } => format!("{}{}", expr_str(expr), alias_str(alias)),
        SelectItem::Star {
            except, replace, ..
        } => {
            let mut s = "*".to_string();
            if !except.is_empty() {
                let _ = write!(s, " EXCEPT ({})", idents(except));
            }
            if !replace.is_empty() {
                let _ = write!(
                    s,
                    " REPLACE ({})",
                    replace
                        .iter()
                        .map(|(e, c)| format!("{} AS {}", expr_str(e), c.value))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
            s
        }
        SelectItem::QualifiedStar {
            expr: Some(expr), ..
        } => format!("{}.*", expr_str(expr)),
        SelectItem::QualifiedStar { qualifier, .. } => format!("{}.*", dotted(qualifier)),
    }
}

fn select_items_str(items: &[SelectItem]) -> String {
    items
        .iter()
        .map(select_item_str)
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn render_returning(out: &mut Vec<String>, returning: &Option<Returning>) {
    if let Some(items) = returning {
        out.push(format!("  then return {}", select_items_str(items)));
    }
}

fn set_op_str(op: SetOperator, all: bool) -> String {
    let op = match op {
        SetOperator::Union => "union",
        SetOperator::Intersect => "intersect",
        SetOperator::Except => "except",
    };
    format!("{op} {}", if all { "all" } else { "distinct" })
}

fn join_kind_str(kind: JoinKind) -> &'static str {
    match kind {
        JoinKind::Inner => "inner",
        JoinKind::Left => "left",
        JoinKind::Right => "right",
        JoinKind::Full => "full",
        JoinKind::Cross => "cross",
    }
}

fn condition_str(condition: &JoinCondition) -> String {
    match condition {
        JoinCondition::On(e) => format!(" ON {}", expr_str(e)),
        JoinCondition::Using(cols) => format!(" USING ({})", idents(cols)),
        JoinCondition::None => String::new(),
    }
}

fn with_offset_str(with_offset: &Option<Option<Ident>>) -> String {
    match with_offset {
        None => String::new(),
        Some(None) => " WITH OFFSET".into(),
        Some(Some(o)) => format!(" WITH OFFSET AS {}", o.value),
    }
}

/// A nested query: a `query` line with its span, the query beneath it.
pub(super) fn render_query(out: &mut Vec<String>, depth: usize, q: &Query) {
    out.push(format!("{}query  [{}]", pad(depth), span_str(q.span)));
    render_query_body(out, depth + 1, q);
}

pub(super) fn render_query_body(out: &mut Vec<String>, depth: usize, q: &Query) {
    let p = pad(depth);
    if !q.hints.is_empty() {
        out.push(format!("{p}hints{}", hints_str(&q.hints)));
    }
    for cte in &q.with {
        out.push(format!("{p}with {}", cte.name.value));
        render_query(out, depth + 1, &cte.query);
    }
    render_set_expr(out, depth, &q.body);
    if !q.order_by.is_empty() {
        out.push(format!("{p}order by {}", order_by_str(&q.order_by)));
    }
    if let Some(l) = &q.limit {
        out.push(format!("{p}limit {}", expr_str(l)));
    }
    if let Some(o) = &q.offset {
        out.push(format!("{p}offset {}", expr_str(o)));
    }
}

fn render_set_expr(out: &mut Vec<String>, depth: usize, body: &SetExpr) {
    let p = pad(depth);
    match body {
        SetExpr::Select(s) => {
            out.push(format!(
                "{p}select{}{}  [{}]",
                flag(s.distinct, " distinct"),
                flag(s.as_struct, " as struct"),
                span_str(s.span)
            ));
            for item in &s.items {
                out.push(format!("{p}  item {}", select_item_str(item)));
            }
            if let Some(from) = &s.from {
                out.push(format!("{p}  from"));
                render_table_expr(out, depth + 2, from);
            }
            if let Some(w) = &s.where_clause {
                out.push(format!("{p}  where {}", expr_str(w)));
            }
            if !s.group_by.is_empty() {
                out.push(format!("{p}  group by {}", list(&s.group_by)));
            }
            if let Some(h) = &s.having {
                out.push(format!("{p}  having {}", expr_str(h)));
            }
        }
        SetExpr::Query(q) => render_query(out, depth, q),
        SetExpr::SetOperation {
            op,
            all,
            left,
            right,
            span,
        } => {
            out.push(format!(
                "{p}{}  [{}]",
                set_op_str(*op, *all),
                span_str(*span)
            ));
            render_set_expr(out, depth + 1, left);
            render_set_expr(out, depth + 1, right);
        }
    }
}

fn render_table_expr(out: &mut Vec<String>, depth: usize, te: &TableExpr) {
    let p = pad(depth);
    match te {
        TableExpr::Table {
            path,
            alias,
            hints,
            span,
        } => out.push(format!(
            "{p}table {}{}{}  [{}]",
            dotted(path),
            alias_str(alias),
            hints_str(hints),
            span_str(*span)
        )),
        TableExpr::Subquery { query, alias, span } => {
            out.push(format!(
                "{p}subquery{}  [{}]",
                alias_str(alias),
                span_str(*span)
            ));
            render_query(out, depth + 1, query);
        }
        TableExpr::Unnest {
            array,
            alias,
            with_offset,
            span,
        } => out.push(format!(
            "{p}unnest {}{}{}  [{}]",
            expr_str(array),
            alias_str(alias),
            with_offset_str(with_offset),
            span_str(*span)
        )),
        TableExpr::Join {
            kind,
            left,
            right,
            condition,
            hints,
            span,
        } => {
            out.push(format!(
                "{p}{} join{}{}  [{}]",
                join_kind_str(*kind),
                hints_str(hints),
                condition_str(condition),
                span_str(*span)
            ));
            render_table_expr(out, depth + 1, left);
            render_table_expr(out, depth + 1, right);
        }
    }
}

/// A query on one line, for subqueries inside expressions.
pub(super) fn query_inline(q: &Query) -> String {
    let mut parts = Vec::new();
    if !q.hints.is_empty() {
        parts.push(hints_str(&q.hints).trim_start().to_string());
    }
    if !q.with.is_empty() {
        parts.push(format!(
            "WITH {}",
            q.with
                .iter()
                .map(|c| format!("{} AS {{{}}}", c.name.value, query_inline(&c.query)))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    parts.push(set_expr_inline(&q.body));
    if !q.order_by.is_empty() {
        parts.push(format!("ORDER BY {}", order_by_str(&q.order_by)));
    }
    if let Some(l) = &q.limit {
        parts.push(format!("LIMIT {}", expr_str(l)));
    }
    if let Some(o) = &q.offset {
        parts.push(format!("OFFSET {}", expr_str(o)));
    }
    parts.join(" ")
}

fn set_expr_inline(body: &SetExpr) -> String {
    match body {
        SetExpr::Select(s) => {
            let mut out = format!(
                "SELECT{}{} {}",
                flag(s.distinct, " DISTINCT"),
                flag(s.as_struct, " AS STRUCT"),
                select_items_str(&s.items)
            );
            if let Some(from) = &s.from {
                let _ = write!(out, " FROM {}", table_expr_inline(from));
            }
            if let Some(w) = &s.where_clause {
                let _ = write!(out, " WHERE {}", expr_str(w));
            }
            if !s.group_by.is_empty() {
                let _ = write!(out, " GROUP BY {}", list(&s.group_by));
            }
            if let Some(h) = &s.having {
                let _ = write!(out, " HAVING {}", expr_str(h));
            }
            out
        }
        SetExpr::Query(q) => format!("({})", query_inline(q)),
        SetExpr::SetOperation {
            op,
            all,
            left,
            right,
            ..
        } => format!(
            "({} {} {})",
            set_expr_inline(left),
            set_op_str(*op, *all).to_uppercase(),
            set_expr_inline(right)
        ),
    }
}

fn table_expr_inline(te: &TableExpr) -> String {
    match te {
        TableExpr::Table {
            path, alias, hints, ..
        } => format!("{}{}{}", dotted(path), alias_str(alias), hints_str(hints)),
        TableExpr::Subquery { query, alias, .. } => {
            format!("({}){}", query_inline(query), alias_str(alias))
        }
        TableExpr::Unnest {
            array,
            alias,
            with_offset,
            ..
        } => format!(
            "UNNEST({}){}{}",
            expr_str(array),
            alias_str(alias),
            with_offset_str(with_offset)
        ),
        TableExpr::Join {
            kind,
            left,
            right,
            condition,
            hints,
            ..
        } => format!(
            "({} {} JOIN{} {}{})",
            table_expr_inline(left),
            join_kind_str(*kind).to_uppercase(),
            hints_str(hints),
            table_expr_inline(right),
            condition_str(condition)
        ),
    }
}
