//! FROM items: tables, CTEs, views, system and virtual tables, derived
//! tables.
//!
//! Each item yields a [`Node`] and the [`RowScope`] naming its slots. A
//! name is looked up as a CTE, a view (bound on its own, nested at most
//! [`MAX_VIEW_NESTING`] deep), a `SPANNER_SYS` table, an
//! `INFORMATION_SCHEMA` view, and finally a base table, whose scan starts
//! with no conjuncts and no access path (WHERE and the planner add them).
//! Joins and UNNEST have their own modules.

use rowtree_parser::ast::{self, Expr, Ident, Literal, Span, TableExpr};

use crate::error::{Error, Result};
use crate::plan::{Access, IndexHint, Node, NodeKind, ScanNode};
use crate::scope::RowScope;

use super::{Binder, Outer, MAX_VIEW_NESTING};

impl Binder<'_> {
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
            .or_else(|| crate::information_schema::pg_catalog_table(self.catalog, &full))
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
}

/// Where the range variable `alias` is introduced in a FROM item.
pub(super) fn alias_span(te: &TableExpr, alias: &str) -> Option<Span> {
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
