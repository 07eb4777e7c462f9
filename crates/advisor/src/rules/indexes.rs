//! The index cost rules: what an index stores.
//!
//! A secondary index is a second table, written in the same transaction as
//! every change to the columns it holds. `STORING` copies columns into it so
//! reads need not go back to the table; copying most of the table doubles
//! the storage and the write work for every row. A NULL-able key column is
//! indexed for every row, NULL or not, unless the index is `NULL_FILTERED`:
//! an index on a column that is usually NULL is then mostly entries nobody
//! looks up.

use crate::ddl::IndexDdl;
use crate::rules::Context;
use crate::{Finding, Rule, Severity};

/// Words of column names that are usually NULL (set only for some rows).
const SPARSE_WORDS: &[&str] = &[
    "deleted",
    "archived",
    "cancel",
    "completed",
    "closed",
    "resolved",
    "expire",
    "ended",
    "finished",
    "shipped",
    "delivered",
    "refunded",
    "coupon",
    "promo",
    "referr",
    "error",
    "failure",
    "failed",
    "optional",
    "override",
    "suspended",
    "banned",
    "revoked",
];

/// Comment words that say a column is usually NULL.
const SPARSE_COMMENTS: &[&str] = &[
    "sparse",
    "mostly null",
    "usually null",
    "rarely set",
    "null unless",
    "null for most",
    "optional",
];

/// `index-storing`: an index whose STORING clause, with its key, covers at
/// least two thirds of a table's (three or more) non-key columns.
pub(crate) fn index_storing(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    for index in ctx.catalog.indexes() {
        let Some(table) = ctx.catalog.table_by_id(index.table) else {
            continue;
        };
        let non_key: Vec<usize> = (0..table.columns.len())
            .filter(|p| !table.is_key_column(*p))
            .collect();
        if non_key.len() < 3 || index.storing.len() < 2 {
            continue;
        }
        let covered = non_key.iter().filter(|p| index.uses_column(**p)).count();
        if covered * 3 < non_key.len() * 2 {
            continue;
        }
        let mut ddl = IndexDdl::of(ctx.catalog, table, index);
        ddl.storing.clear();
        let message = format!(
            "The index {} holds {} of the {} non-key columns of {} ({} of them in STORING): it is nearly a second copy of the table, so every write to those columns is written twice and the storage doubles. Store only the columns the queries that use the index read, or none (the query then joins back to {} by key).",
            index.name,
            covered,
            non_key.len(),
            table.name,
            index.storing.len(),
            table.name
        );
        out.push(ctx.finding(
            Rule::IndexStoring,
            Severity::Warning,
            &index.name,
            message,
            Some(ddl.print()),
        ));
    }
}

/// `sparse-index`: an index without NULL_FILTERED whose first key column is
/// nullable and, by its name or comment, usually NULL.
pub(crate) fn sparse_index(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    for index in ctx.catalog.indexes() {
        if index.null_filtered || index.keys.is_empty() {
            continue;
        }
        let Some(table) = ctx.catalog.table_by_id(index.table) else {
            continue;
        };
        let column = &table.columns[index.keys[0].column];
        if column.not_null || column.data_type == rowtree_schema::ast::DataType::Bool {
            continue;
        }
        let lower = column.name.to_ascii_lowercase();
        let by_name = SPARSE_WORDS.iter().any(|w| lower.contains(w));
        let by_comment = ctx
            .site(&table.name)
            .and_then(|s| s.line_comment_for(&column.name))
            .is_some_and(|c| SPARSE_COMMENTS.iter().any(|w| c.contains(w)));
        if !by_name && !by_comment {
            continue;
        }
        let mut ddl = IndexDdl::of(ctx.catalog, table, index);
        ddl.null_filtered = true;
        let mut message = format!(
            "The index {} is keyed by {}.{}, which is NULL for most rows, but it is not NULL_FILTERED: it stores an entry for every row, NULL or not, and every insert writes one. With NULL_FILTERED it holds only the rows that have a value, and queries that filter on the column can still use it.",
            index.name, table.name, column.name
        );
        if index.unique {
            message.push_str(" (A UNIQUE NULL_FILTERED index also stops treating rows with NULL keys as duplicates of each other.)");
        }
        out.push(ctx.finding(
            Rule::SparseIndex,
            Severity::Info,
            &index.name,
            message,
            Some(ddl.print()),
        ));
    }
}
