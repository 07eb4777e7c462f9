//! Name scopes: which names a clause can see, and where they sit in a row.
//!
//! Every operator produces rows of a fixed width; a `RowScope` describes
//! such a row for name resolution. A FROM clause builds one as it goes: a
//! table contributes its columns (all of them, table-shaped, so a scan's row
//! is the table's row), a join concatenates its inputs' scopes, `USING (k)`
//! merges the two `k`s into one visible name. Each column remembers the
//! range variable (table alias) it came from, so `t.c` and `c` both resolve,
//! and `c` alone is an error when two tables have one (`Column name c is
//! ambiguous`).
//!
//! Resolution is case-insensitive, as GoogleSQL names are. A column may be
//! left out of `SELECT *` (HIDDEN columns, the second copy of a USING column)
//! while still resolving by name.

use std::cell::Cell;

use rowtree_parser::ast::{Ident, Span};
use rowtree_types::Type;

use crate::error::{Error, Result};

/// One column of a scope's row.
#[derive(Debug, Clone)]
pub(crate) struct ScopeColumn {
    /// The column name; empty for anonymous expression columns.
    pub name: String,
    pub ty: Type,
    /// Part of `SELECT *` expansion.
    pub in_star: bool,
    /// Resolvable without a qualifier (false for the right copy of a USING column).
    pub unqualified: bool,
    /// The scan and table column this slot reads, when it is a plain table column.
    pub origin: Option<(usize, usize)>,
}

/// The names of one row shape.
#[derive(Debug, Clone, Default)]
pub(crate) struct RowScope {
    pub columns: Vec<ScopeColumn>,
    /// Range variables: alias and the slots they own.
    pub tables: Vec<(String, Vec<usize>)>,
    /// Slots in `SELECT *` order (USING columns first).
    pub star: Vec<usize>,
}

/// A table column read through a slot: (scan id, column position).
pub(crate) type Origin = (usize, usize);

/// A column given to [`RowScope::single`]: name, type, part of `*`, origin.
pub(crate) type ColumnSpec = (String, Type, bool, Option<Origin>);

/// How a path resolved.
pub(crate) enum Resolved {
    Slot(usize, Type),
    NotFound,
}

impl RowScope {
    /// The scope of one table or derived table under `alias`.
    pub fn single(alias: &str, columns: Vec<ColumnSpec>) -> RowScope {
        let mut scope = RowScope::default();
        let mut slots = Vec::new();
        for (i, (name, ty, in_star, origin)) in columns.into_iter().enumerate() {
            if in_star {
                scope.star.push(i);
            }
            slots.push(i);
            scope.columns.push(ScopeColumn {
                name,
                ty,
                in_star,
                unqualified: true,
                origin,
            });
        }
        scope.tables.push((alias.to_string(), slots));
        scope
    }

    /// Number of slots in the row.
    pub fn width(&self) -> usize {
        self.columns.len()
    }

    /// `left` then `right`, as a join's row is.
    pub fn concat(left: &RowScope, right: &RowScope) -> RowScope {
        let shift = left.width();
        let mut out = left.clone();
        out.columns.extend(right.columns.iter().cloned());
        out.tables.extend(
            right
                .tables
                .iter()
                .map(|(a, slots)| (a.clone(), slots.iter().map(|s| s + shift).collect())),
        );
        out.star.extend(right.star.iter().map(|s| s + shift));
        out
    }

    /// Resolves `path` (`c`, `t.c`). Errors for ambiguous names and for a
    /// known range variable without that column.
    pub fn resolve(&self, path: &[Ident]) -> Result<Resolved> {
        let span = path_span(path);
        match path {
            [name] => {
                let hits: Vec<usize> = self
                    .columns
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| c.unqualified && c.name.eq_ignore_ascii_case(&name.value))
                    .map(|(i, _)| i)
                    .collect();
                match hits.as_slice() {
                    [] => Ok(Resolved::NotFound),
                    [slot] => Ok(Resolved::Slot(*slot, self.columns[*slot].ty.clone())),
                    _ => Err(Error::invalid_at(
                        span,
                        format!("Column name {} is ambiguous", name.value),
                    )),
                }
            }
            [table, column] => {
                let Some((alias, slots)) = self
                    .tables
                    .iter()
                    .find(|(alias, _)| alias.eq_ignore_ascii_case(&table.value))
                else {
                    return Ok(Resolved::NotFound);
                };
                let hit = slots
                    .iter()
                    .find(|&&s| self.columns[s].name.eq_ignore_ascii_case(&column.value));
                match hit {
                    Some(&slot) => Ok(Resolved::Slot(slot, self.columns[slot].ty.clone())),
                    None => Err(Error::invalid_at(
                        column.span,
                        format!("Name {} not found inside {alias}", column.value),
                    )),
                }
            }
            _ => Ok(Resolved::NotFound),
        }
    }

    /// The slots of range variable `alias` that `alias.*` expands to.
    pub fn table_star(&self, alias: &str) -> Option<Vec<usize>> {
        self.tables
            .iter()
            .find(|(a, _)| a.eq_ignore_ascii_case(alias))
            .map(|(_, slots)| {
                slots
                    .iter()
                    .copied()
                    .filter(|&s| self.columns[s].in_star || self.columns[s].origin.is_none())
                    .collect()
            })
    }
}

/// The span covering a whole dotted path.
pub(crate) fn path_span(path: &[Ident]) -> Span {
    match (path.first(), path.last()) {
        (Some(a), Some(b)) => Span {
            start: a.span.start,
            end: b.span.end,
        },
        _ => Span::default(),
    }
}

/// Marks which table columns a statement reads, per scan, so the planner
/// can tell whether an index covers the query.
#[derive(Debug, Default)]
pub(crate) struct UsedColumns {
    pub scans: Vec<Vec<Cell<bool>>>,
}

impl UsedColumns {
    /// Registers a scan of a table with `width` columns; returns its id.
    pub fn add_scan(&mut self, width: usize) -> usize {
        self.scans
            .push((0..width).map(|_| Cell::new(false)).collect());
        self.scans.len() - 1
    }

    pub fn mark(&self, origin: Option<(usize, usize)>) {
        if let Some((scan, col)) = origin {
            if let Some(c) = self.scans.get(scan).and_then(|s| s.get(col)) {
                c.set(true);
            }
        }
    }

    /// Positions of the columns of `scan` that were read.
    pub fn of(&self, scan: usize) -> Vec<usize> {
        self.scans
            .get(scan)
            .map(|s| {
                s.iter()
                    .enumerate()
                    .filter(|(_, c)| c.get())
                    .map(|(i, _)| i)
                    .collect()
            })
            .unwrap_or_default()
    }
}
