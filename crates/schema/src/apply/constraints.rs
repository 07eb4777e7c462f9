//! CHECK and FOREIGN KEY constraints, from CREATE TABLE or ALTER TABLE ADD
//! CONSTRAINT.
//!
//! Constraint names live in the namespace shared with tables, indexes and
//! sequences. While a table is being created (or altered) it is not in the
//! catalog state, so name checks also look at that pending table.

use rowtree_parser::ast;
use rowtree_types::Type;

use crate::error::{Result, SchemaError};
use crate::expressions::bind_check;
use crate::names;
use crate::state::State;
use crate::table::{CheckConstraint, ForeignKey, Table};

use super::columns::scope_of;

/// Whether `name` is taken in `state` or by `pending` (its name or constraints).
pub(crate) fn name_taken(state: &State, pending: &Table, name: &str) -> bool {
    state.name_taken(name)
        || pending.name.eq_ignore_ascii_case(name)
        || pending.check(name).is_some()
        || pending.foreign_key(name).is_some()
}

fn constraint_name(
    state: &State,
    table: &Table,
    given: Option<&ast::Ident>,
    base: String,
) -> Result<(String, bool)> {
    match given {
        Some(ident) => {
            names::validate("Constraint", &ident.value, ident.span)?;
            if name_taken(state, table, &ident.value) {
                return Err(SchemaError::precondition(
                    format!("Duplicate name in schema: {}.", ident.value),
                    ident.span,
                ));
            }
            Ok((ident.value.clone(), false))
        }
        None => Ok((
            names::generate_constraint_name(&base, |n| name_taken(state, table, n)),
            true,
        )),
    }
}

/// Builds a CHECK constraint of `table`.
pub(crate) fn build_check(
    state: &State,
    table: &Table,
    check: &ast::Check,
) -> Result<CheckConstraint> {
    let (name, generated_name) = constraint_name(
        state,
        table,
        check.name.as_ref(),
        format!("CK_{}", table.name),
    )?;
    let scope = crate::expressions::TableScope {
        exact_numeric: state.dialect == rowtree_types::Dialect::PostgreSql,
        ..scope_of(table)
    };
    let expr = bind_check(&check.expr, &name, &scope)?;
    let used = expr.expr.columns();
    for &c in &used {
        if let Some(column) = table.columns.get(c) {
            if column.allow_commit_timestamp {
                return Err(SchemaError::invalid(
                    format!(
                        "Column `{}` has option commit_timestamp, which is not supported in \
                         check constraint.",
                        column.name
                    ),
                    check.expr.expr.span(),
                ));
            }
        }
    }
    if !used.iter().any(|&c| {
        table
            .columns
            .get(c)
            .is_some_and(|col| col.generated.is_none())
    }) {
        return Err(SchemaError::invalid(
            format!(
                "Check constraint `{}`.`{}` does not use any non generated column. Expression: \
                 '{}'. A check constraint expression requires at least one non-generated column \
                 as dependency.",
                table.name, name, check.expr.text
            ),
            check.expr.expr.span(),
        ));
    }
    Ok(CheckConstraint {
        name,
        generated_name,
        expr,
    })
}

/// Builds a FOREIGN KEY of `table` (the referencing table). `table` may be
/// its own referenced table.
pub(crate) fn build_foreign_key(
    state: &State,
    table: &Table,
    fk: &ast::ForeignKey,
) -> Result<ForeignKey> {
    let (name, generated_name) = constraint_name(
        state,
        table,
        fk.name.as_ref(),
        format!("FK_{}_{}", table.name, fk.referenced_table.value),
    )?;
    let referenced: &Table = if fk.referenced_table.matches(&table.name) {
        table
    } else {
        state.table(&fk.referenced_table.value).ok_or_else(|| {
            SchemaError::not_found(
                format!("Table not found: {}", fk.referenced_table.value),
                fk.referenced_table.span,
            )
        })?
    };
    if fk.columns.len() != fk.referenced_columns.len() {
        return Err(SchemaError::precondition(
            format!(
                "The number of columns are different for table `{}` and table `{}` in foreign \
                 key `{name}`.",
                table.name, referenced.name
            ),
            fk.span,
        ));
    }
    let columns = resolve_columns(table, &fk.columns, &name)?;
    let referenced_columns = resolve_columns(referenced, &fk.referenced_columns, &name)?;
    for (i, (&c, &r)) in columns.iter().zip(&referenced_columns).enumerate() {
        let (column, ref_column) = (&table.columns[c], &referenced.columns[r]);
        for (t, col, ident) in [
            (table, column, &fk.columns[i]),
            (referenced, ref_column, &fk.referenced_columns[i]),
        ] {
            if matches!(col.ty, Type::Json | Type::Array(_) | Type::Struct(_)) {
                return Err(SchemaError::invalid(
                    format!(
                        "Column `{}` for foreign key `{name}` on table `{}` has an unsupported \
                         type.",
                        col.name, t.name
                    ),
                    ident.span,
                ));
            }
            if col.allow_commit_timestamp {
                return Err(SchemaError::precondition(
                    format!(
                        "Commit timestamp column is not supported for column `{}` of table `{}` \
                         in foreign key `{name}`.",
                        col.name, t.name
                    ),
                    ident.span,
                ));
            }
        }
        if column.ty != ref_column.ty {
            return Err(SchemaError::precondition(
                format!(
                    "The column types are different for column `{}` of table `{}` and column \
                     `{}` of table `{}` in foreign key `{name}`.",
                    column.name, table.name, ref_column.name, referenced.name
                ),
                fk.columns[i].span,
            ));
        }
    }
    Ok(ForeignKey {
        name,
        generated_name,
        columns,
        referenced_table: referenced.id,
        referenced_columns,
        on_delete: fk.on_delete,
        enforced: !fk.not_enforced,
    })
}

fn resolve_columns(table: &Table, idents: &[ast::Ident], fk_name: &str) -> Result<Vec<usize>> {
    let mut out = Vec::with_capacity(idents.len());
    for ident in idents {
        let Some((position, column)) = table.column(&ident.value) else {
            return Err(SchemaError::precondition(
                format!(
                    "Column `{}` not found for table `{}` in foreign key `{fk_name}`.",
                    ident.value, table.name
                ),
                ident.span,
            ));
        };
        if out.contains(&position) {
            return Err(SchemaError::precondition(
                format!(
                    "Column `{}` used more than once for table `{}` in foreign key `{fk_name}`.",
                    column.name, table.name
                ),
                ident.span,
            ));
        }
        out.push(position);
    }
    Ok(out)
}
