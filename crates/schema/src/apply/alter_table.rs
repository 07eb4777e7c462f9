//! `ALTER TABLE`: columns, constraints and the ON DELETE action.
//!
//! The table is changed on a copy and written back only when the whole
//! statement is valid. Which column changes Spanner allows:
//!
//! * types: only `STRING` <-> `BYTES` (also as array elements) and length
//!   changes; never for a column a key, index, foreign key, check or stored
//!   generated column depends on in a way the change would break;
//! * `NOT NULL`: added (the data is validated) or removed, but not on key
//!   columns, on key columns of non-null-filtered indexes, or on foreign key
//!   columns;
//! * DEFAULT and `allow_commit_timestamp`: freely, within the column rules;
//! * generated columns stay generated, regular ones regular.
//!
//! PostgreSQL's one-property forms (`ALTER COLUMN c TYPE t`, `SET/DROP NOT
//! NULL`) are the full-definition form with the rest of the column kept.

use rowtree_parser::ast::{
    self, AlterTable, AlterTableAction, ColumnDef, Ident, OnDelete, TableConstraint,
};

use crate::error::{Result, SchemaError};
use crate::expressions::{bind_default, ColumnTarget};
use crate::limits::MAX_COLUMNS_PER_TABLE;
use crate::state::State;
use crate::table::{declared_length, Column, Table};
use crate::Effect;

use super::columns::{
    bind_column_expressions, check_sequences_exist, new_column, read_column_options, rebind_table,
    scope_of,
};
use super::constraints::{build_check, build_foreign_key};

pub(crate) fn apply(state: &mut State, stmt: &AlterTable) -> Result<Vec<Effect>> {
    let position = state.table_position(&stmt.name.value).ok_or_else(|| {
        SchemaError::not_found(
            format!("Table not found: {}", stmt.name.value),
            stmt.name.span,
        )
    })?;
    let mut table = state.tables[position].clone();
    let effects = match &stmt.action {
        AlterTableAction::AddColumn {
            if_not_exists,
            column,
        } => add_column(state, &mut table, column, *if_not_exists)?,
        AlterTableAction::DropColumn { name } => drop_column(state, &mut table, name)?,
        AlterTableAction::AlterColumn { column } => alter_column(state, &mut table, column)?,
        AlterTableAction::AlterColumnType {
            name,
            data_type,
            type_span,
        } => {
            let (_, column) = find_column(&table, name)?;
            let mut def = current_definition(column, name);
            def.data_type = data_type.clone();
            def.type_span = *type_span;
            alter_column(state, &mut table, &def)?
        }
        AlterTableAction::AlterColumnSetNotNull { name, not_null } => {
            let (_, column) = find_column(&table, name)?;
            let mut def = current_definition(column, name);
            def.not_null = *not_null;
            alter_column(state, &mut table, &def)?
        }
        AlterTableAction::AlterColumnSetOptions { name, options } => {
            let (pos, _) = find_column(&table, name)?;
            let (allow, set) = read_column_options(options)?;
            let mut changed = table.columns[pos].clone();
            changed.allow_commit_timestamp = allow;
            changed.commit_timestamp_option_set = set;
            check_commit_timestamp_change(state, &table, pos, &changed, name.span)?;
            table.columns[pos] = changed;
            Vec::new()
        }
        AlterTableAction::AlterColumnSetDefault { name, default } => {
            let (pos, column) = find_column(&table, name)?;
            refuse_on_generated_or_identity(&table, column, name.span)?;
            let target = ColumnTarget {
                table: &table.name,
                column: &column.name,
                ty: &column.ty,
                allow_commit_timestamp: column.allow_commit_timestamp,
            };
            let scope = crate::expressions::TableScope {
                exact_numeric: state.dialect == rowtree_types::Dialect::PostgreSql,
                ..scope_of(&table)
            };
            let bound = bind_default(default, &scope, &target)?;
            check_sequences_exist(state, &bound, default.expr.span())?;
            table.columns[pos].default = Some(bound);
            Vec::new()
        }
        AlterTableAction::AlterColumnDropDefault { name } => {
            let (pos, column) = find_column(&table, name)?;
            if column.identity_sequence.is_some() {
                return Err(SchemaError::invalid(
                    format!(
                        "Cannot alter column `{}.{}` to drop the identity property.",
                        table.name, column.name
                    ),
                    name.span,
                ));
            }
            table.columns[pos].default = None;
            Vec::new()
        }
        AlterTableAction::SetOnDelete(action) => {
            set_on_delete(&mut table, *action, stmt.name.span)?;
            Vec::new()
        }
        AlterTableAction::AddConstraint(TableConstraint::Check(check)) => {
            let built = build_check(state, &table, check)?;
            let effect = Effect::ValidateCheck {
                table: table.id,
                check: built.name.clone(),
            };
            table.checks.push(built);
            vec![effect]
        }
        AlterTableAction::AddConstraint(TableConstraint::ForeignKey(fk)) => {
            let built = build_foreign_key(state, &table, fk)?;
            let effect = Effect::ValidateForeignKey {
                table: table.id,
                foreign_key: built.name.clone(),
            };
            table.foreign_keys.push(built);
            vec![effect]
        }
        AlterTableAction::DropConstraint { name } => {
            let before = table.checks.len() + table.foreign_keys.len();
            table
                .checks
                .retain(|c| !c.name.eq_ignore_ascii_case(&name.value));
            table
                .foreign_keys
                .retain(|f| !f.name.eq_ignore_ascii_case(&name.value));
            if table.checks.len() + table.foreign_keys.len() == before {
                return Err(SchemaError::not_found(
                    format!("{} is not a constraint in {}", name.value, table.name),
                    name.span,
                ));
            }
            Vec::new()
        }
        AlterTableAction::AddRowDeletionPolicy(policy) => {
            if table.row_deletion_policy.is_some() {
                return Err(SchemaError::precondition(
                    format!(
                        "Table {} already has a row deletion policy; change it with REPLACE \
                         ROW DELETION POLICY.",
                        table.name
                    ),
                    stmt.name.span,
                ));
            }
            table.row_deletion_policy = Some(super::row_deletion::build(&table, policy)?);
            Vec::new()
        }
        AlterTableAction::ReplaceRowDeletionPolicy(policy) => {
            no_policy_refused(&table, stmt.name.span)?;
            table.row_deletion_policy = Some(super::row_deletion::build(&table, policy)?);
            Vec::new()
        }
        AlterTableAction::DropRowDeletionPolicy => {
            no_policy_refused(&table, stmt.name.span)?;
            table.row_deletion_policy = None;
            Vec::new()
        }
    };
    state.tables[position] = table;
    Ok(effects)
}

/// REPLACE and DROP ROW DELETION POLICY need a policy to act on.
fn no_policy_refused(table: &Table, span: ast::Span) -> Result<()> {
    if table.row_deletion_policy.is_none() {
        return Err(SchemaError::not_found(
            format!("Table {} does not have a row deletion policy.", table.name),
            span,
        ));
    }
    Ok(())
}

/// The definition `column` has now, as an `ALTER COLUMN` would write it in
/// full: PostgreSQL's `ALTER COLUMN c TYPE t` and `SET/DROP NOT NULL` change
/// one property and keep the rest, which is a full definition with that one
/// property changed. Spans point at the name written in the statement.
fn current_definition(column: &Column, name: &Ident) -> ColumnDef {
    let source = |e: &crate::table::ColumnExpr| ast::SourceExpr {
        expr: e.source.clone(),
        text: e.text.clone(),
    };
    let identity = column.identity_sequence.is_some();
    ColumnDef {
        name: Ident {
            value: column.name.clone(),
            span: name.span,
        },
        data_type: column.data_type.clone(),
        type_span: name.span,
        not_null: column.not_null,
        default: if identity {
            None
        } else {
            column.default.as_ref().map(source)
        },
        generated: column.generated.as_ref().map(|g| ast::Generated {
            expr: source(g),
            stored: column.generated_stored,
        }),
        identity: identity.then(ast::SequenceOptions::default),
        hidden: column.hidden,
        options: Vec::new(),
    }
}

fn find_column<'t>(table: &'t Table, name: &Ident) -> Result<(usize, &'t Column)> {
    table.column(&name.value).ok_or_else(|| {
        SchemaError::not_found(
            format!("Column not found in table {}: {}", table.name, name.value),
            name.span,
        )
    })
}

fn refuse_on_generated_or_identity(table: &Table, column: &Column, span: ast::Span) -> Result<()> {
    if column.identity_sequence.is_some() {
        return Err(SchemaError::invalid(
            format!(
                "Cannot alter an identity column `{}.{}` to a generated or default column.",
                table.name, column.name
            ),
            span,
        ));
    }
    if column.generated.is_some() {
        return Err(SchemaError::precondition(
            format!(
                "Column {} with a DEFAULT value cannot be a generated column and vice versa.",
                column.name
            ),
            span,
        ));
    }
    Ok(())
}

fn add_column(
    state: &mut State,
    table: &mut Table,
    def: &ColumnDef,
    if_not_exists: bool,
) -> Result<Vec<Effect>> {
    if table.column(&def.name.value).is_some() {
        if if_not_exists {
            return Ok(Vec::new());
        }
        return Err(SchemaError::precondition(
            format!("Duplicate column name {}.{}.", table.name, def.name.value),
            def.name.span,
        ));
    }
    if table.columns.len() >= MAX_COLUMNS_PER_TABLE {
        return Err(SchemaError::precondition(
            format!(
                "Table {} has too many columns; the limit is {MAX_COLUMNS_PER_TABLE}.",
                table.name
            ),
            def.name.span,
        ));
    }
    let column = new_column(state, &table.name, def, table.next_column_id)?;
    if column.not_null && def.default.is_none() && def.generated.is_none() && def.identity.is_none()
    {
        return Err(SchemaError::precondition(
            format!(
                "Cannot add NOT NULL column {}.{} to existing table {}.",
                table.name, column.name, table.name
            ),
            def.name.span,
        ));
    }
    table.next_column_id += 1;
    table.columns.push(column);
    let position = table.columns.len() - 1;
    bind_column_expressions(state, table, &[(position, def)])?;
    let column = &table.columns[position];
    let backfill =
        column.default.is_some() || (column.generated.is_some() && column.generated_stored);
    Ok(if backfill {
        vec![Effect::BackfillColumn {
            table: table.id,
            column: position,
        }]
    } else {
        Vec::new()
    })
}

fn drop_column(state: &mut State, table: &mut Table, name: &Ident) -> Result<Vec<Effect>> {
    let (position, column) = find_column(table, name)?;
    let column_name = column.name.clone();
    super::access::forget_column(state, &table.name, &column_name);
    if table.is_key_column(position) {
        return Err(SchemaError::invalid(
            format!(
                "Cannot drop key column {column_name} from table {}.",
                table.name
            ),
            name.span,
        ));
    }
    if table
        .row_deletion_column()
        .is_some_and(|(used, _)| used == position)
    {
        return Err(SchemaError::precondition(
            format!(
                "Cannot drop column `{column_name}` from table `{}` because it is used by the \
                 table's row deletion policy.",
                table.name
            ),
            name.span,
        ));
    }
    if let Some(index) = state
        .indexes
        .iter()
        .find(|i| i.table == table.id && i.uses_column(position))
    {
        return Err(SchemaError::precondition(
            format!(
                "Cannot drop column {column_name} from table {} because it is used by index {}.",
                table.name, index.name
            ),
            name.span,
        ));
    }
    for other in &table.columns {
        if let Some(g) = &other.generated {
            if g.expr.columns().contains(&position) {
                return Err(SchemaError::precondition(
                    format!(
                        "Cannot drop column `{column_name}` from table `{}` because it is \
                         referenced by generated column `{}`.",
                        table.name, other.name
                    ),
                    name.span,
                ));
            }
        }
    }
    if let Some(check) = table
        .checks
        .iter()
        .find(|c| c.expr.expr.columns().contains(&position))
    {
        return Err(SchemaError::precondition(
            format!(
                "Cannot drop column `{column_name}` on which there is a dependent check \
                 constraint: {}.",
                check.name
            ),
            name.span,
        ));
    }
    let fks = foreign_keys_using(state, table, position);
    if !fks.is_empty() {
        return Err(SchemaError::precondition(
            format!(
                "Cannot drop column `{column_name}` from table `{}`. It is used by one or more \
                 foreign keys: {}. You must drop the foreign keys before dropping the column.",
                table.name,
                fks.join(", ")
            ),
            name.span,
        ));
    }

    let removed = table.columns.remove(position);
    let shift = |p: &mut usize| {
        if *p > position {
            *p -= 1;
        }
    };
    table
        .primary_key
        .iter_mut()
        .for_each(|k| shift(&mut k.column));
    for index in state.indexes.iter_mut().filter(|i| i.table == table.id) {
        index.keys.iter_mut().for_each(|k| shift(&mut k.column));
        index.storing.iter_mut().for_each(&shift);
    }
    for fk in &mut table.foreign_keys {
        fk.columns.iter_mut().for_each(&shift);
        if fk.referenced_table == table.id {
            fk.referenced_columns.iter_mut().for_each(&shift);
        }
    }
    for other in state.tables.iter_mut().filter(|t| t.id != table.id) {
        for fk in other
            .foreign_keys
            .iter_mut()
            .filter(|f| f.referenced_table == table.id)
        {
            fk.referenced_columns.iter_mut().for_each(&shift);
        }
    }
    rebind_table(table)?;

    let mut effects = Vec::new();
    if let Some(seq) = &removed.identity_sequence {
        if let Some(i) = state.sequence_position(seq) {
            let sequence = state.sequences.remove(i);
            effects.push(Effect::DropSequence(sequence.id));
        }
    }
    Ok(effects)
}

/// Names of the foreign keys (declared anywhere) that read the column at
/// `position` of `table`.
fn foreign_keys_using(state: &State, table: &Table, position: usize) -> Vec<String> {
    let mut names: Vec<String> = table
        .foreign_keys
        .iter()
        .filter(|fk| {
            fk.columns.contains(&position)
                || (fk.referenced_table == table.id && fk.referenced_columns.contains(&position))
        })
        .map(|fk| fk.name.clone())
        .collect();
    for other in state.tables.iter().filter(|t| t.id != table.id) {
        names.extend(
            other
                .foreign_keys
                .iter()
                .filter(|fk| {
                    fk.referenced_table == table.id && fk.referenced_columns.contains(&position)
                })
                .map(|fk| fk.name.clone()),
        );
    }
    names
}

/// Whether `old` may become `new`: the same value type, or `STRING` <->
/// `BYTES`, element-wise for arrays.
fn allowed_type_change(old: &ast::DataType, new: &ast::DataType) -> bool {
    use ast::DataType::*;
    match (old, new) {
        (Array(a), Array(b)) => allowed_type_change(a, b),
        (String(_) | Bytes(_), String(_) | Bytes(_)) => true,
        // A message is stored as its bytes, an enum as its number: these
        // changes keep every stored value.
        (Bytes(_) | Proto(_), Bytes(_) | Proto(_)) | (Int64 | Enum(_), Int64 | Enum(_)) => true,
        (a, b) => a.value_type() == b.value_type(),
    }
}

/// Key columns shared with the parent or a child cannot change (except for
/// the commit timestamp option).
fn check_shared_key_column(
    state: &State,
    table: &Table,
    position: usize,
    span: ast::Span,
) -> Result<()> {
    let column = &table.columns[position];
    if !table.is_key_column(position) {
        return Ok(());
    }
    let full = format!("{}.{}", table.name, column.name);
    if let Some(parent) = table.parent.and_then(|p| state.table_by_id(p.table)) {
        if parent
            .column(&column.name)
            .is_some_and(|(p, _)| parent.is_key_column(p))
        {
            return Err(SchemaError::invalid(
                format!("Cannot alter parent key column {full}."),
                span,
            ));
        }
    }
    let child_uses = state.tables.iter().any(|t| {
        t.parent.is_some_and(|p| p.table == table.id)
            && t.column(&column.name)
                .is_some_and(|(p, _)| t.is_key_column(p))
    });
    if child_uses {
        return Err(SchemaError::invalid(
            format!("Requested change to key column {full} could not be made."),
            span,
        ));
    }
    Ok(())
}

fn alter_column(state: &mut State, table: &mut Table, def: &ColumnDef) -> Result<Vec<Effect>> {
    let (position, old) = find_column(table, &def.name)?;
    let old = old.clone();
    let span = def.name.span;
    let full = format!("{}.{}", table.name, old.name);
    let mut new = new_column(state, &table.name, def, old.id)?;
    // The definition is written with the user's spelling of the name; keep
    // the original case, as Spanner does.
    new.name = old.name.clone();
    if def.options.is_empty() {
        new.allow_commit_timestamp = old.allow_commit_timestamp;
        new.commit_timestamp_option_set = old.commit_timestamp_option_set;
    }

    if old.generated.is_some() && def.generated.is_none() {
        return Err(SchemaError::invalid(
            format!("Cannot convert generated column `{full}` to a regular column."),
            span,
        ));
    }
    if old.generated.is_none() && def.generated.is_some() {
        return Err(SchemaError::invalid(
            format!("Cannot convert column `{full}` to a generated column."),
            span,
        ));
    }
    match (old.identity_sequence.is_some(), def.identity.is_some()) {
        (true, false) => {
            return Err(SchemaError::invalid(
                format!("Cannot alter column `{full}` to drop the identity property."),
                span,
            ))
        }
        (false, true) => {
            return Err(SchemaError::invalid(
                format!("Cannot alter column `{full}` to an identity column."),
                span,
            ))
        }
        _ => {}
    }

    let mut effects = Vec::new();
    let type_changed = old.ty != new.ty;
    let length_changed = declared_length(&old.data_type) != declared_length(&new.data_type);
    let nullability_changed = old.not_null != new.not_null;
    if !allowed_type_change(&old.data_type, &new.data_type) {
        return Err(SchemaError::invalid(
            format!(
                "Cannot change type of column `{}` from `{}` to `{}`",
                old.name, old.ty, new.ty
            ),
            def.type_span,
        ));
    }
    if type_changed || length_changed || nullability_changed {
        check_shared_key_column(state, table, position, span)?;
    }
    if table.is_key_column(position) && (type_changed || nullability_changed) {
        return Err(SchemaError::invalid(
            format!("Cannot change key column {full}."),
            span,
        ));
    }
    if type_changed {
        if let Some(index) = state
            .indexes
            .iter()
            .find(|i| i.table == table.id && i.uses_column(position))
        {
            return Err(SchemaError::precondition(
                format!(
                    "Cannot change the type of column `{}` of table `{}`. It is used by index {}.",
                    old.name, table.name, index.name
                ),
                def.type_span,
            ));
        }
        let fks = foreign_keys_using(state, table, position);
        if !fks.is_empty() {
            return Err(SchemaError::precondition(
                format!(
                    "Cannot change the type for column `{}` of table `{}`. It is used by one or \
                     more foreign keys: {}.",
                    old.name,
                    table.name,
                    fks.join(", ")
                ),
                def.type_span,
            ));
        }
        if let Some(check) = table
            .checks
            .iter()
            .find(|c| c.expr.expr.columns().contains(&position))
        {
            return Err(SchemaError::invalid(
                format!(
                    "Cannot change the data type of column `{}`, which is used by check \
                     constraint `{}`.",
                    old.name, check.name
                ),
                def.type_span,
            ));
        }
        let has_dependent_generated = table.columns.iter().any(|c| {
            c.generated
                .as_ref()
                .is_some_and(|g| g.expr.columns().contains(&position))
        });
        if has_dependent_generated {
            return Err(SchemaError::precondition(
                format!(
                    "Cannot change the data type of column `{}`, which has a dependent stored \
                     generated column.",
                    old.name
                ),
                def.type_span,
            ));
        }
        if old.generated.is_some() && old.generated_stored {
            return Err(SchemaError::invalid(
                format!("Cannot change the data type of a stored generated column `{full}`."),
                def.type_span,
            ));
        }
        if old.ty.representation() != new.ty.representation() {
            effects.push(Effect::ConvertColumn {
                table: table.id,
                column: position,
            });
        } else if declared_length(&new.data_type).is_some() {
            // PROTO to BYTES(n): the bytes stay, their length is checked.
            effects.push(Effect::ValidateColumnLength {
                table: table.id,
                column: position,
            });
        }
    } else if let (Some(old_len), new_len) = (
        declared_length(&old.data_type),
        declared_length(&new.data_type),
    ) {
        if new_len.is_some_and(|n| n < old_len) {
            effects.push(Effect::ValidateColumnLength {
                table: table.id,
                column: position,
            });
        }
    } else if declared_length(&new.data_type).is_some() {
        // From MAX to a limit: shrinking.
        effects.push(Effect::ValidateColumnLength {
            table: table.id,
            column: position,
        });
    }

    if nullability_changed {
        if let Some(index) = state.indexes.iter().find(|i| {
            i.table == table.id && !i.null_filtered && i.keys.iter().any(|k| k.column == position)
        }) {
            return Err(SchemaError::precondition(
                format!(
                    "Changing NOT NULL constraints on column {} is not allowed because it affects \
                     index {}.",
                    old.name, index.name
                ),
                span,
            ));
        }
        let fks = foreign_keys_using(state, table, position);
        if !fks.is_empty() {
            return Err(SchemaError::precondition(
                format!(
                    "Cannot change the nullability for column `{}` of table `{}`. It is used by \
                     one or more foreign keys: {}.",
                    old.name,
                    table.name,
                    fks.join(", ")
                ),
                span,
            ));
        }
        if new.not_null {
            effects.push(Effect::ValidateNotNull {
                table: table.id,
                column: position,
            });
        }
    }

    if let (Some(old_g), Some(new_g)) = (&old.generated, &def.generated) {
        if old.generated_stored != new_g.stored {
            return Err(SchemaError::invalid(
                format!("Cannot change the STORED attribute for generated column `{full}`."),
                span,
            ));
        }
        if old.generated_stored && old_g.text != new_g.expr.text {
            return Err(SchemaError::invalid(
                format!(
                    "Cannot change the expression of a generated column `{full}` because it is \
                     stored or has other dependencies."
                ),
                span,
            ));
        }
    }
    check_commit_timestamp_change(state, table, position, &new, span)?;

    // Identity columns keep their sequence and its DEFAULT.
    let keep_identity = old.identity_sequence.is_some();
    if keep_identity {
        new.identity_sequence = old.identity_sequence.clone();
        new.default = old.default.clone();
    }
    table.columns[position] = new;
    if !keep_identity {
        bind_column_expressions(state, table, &[(position, def)])?;
    }
    rebind_table(table)?;
    Ok(effects)
}

/// Refuses commit-timestamp columns where Spanner does not allow them: in
/// foreign keys, checks, and as inputs of stored generated columns.
fn check_commit_timestamp_change(
    state: &State,
    table: &Table,
    position: usize,
    changed: &Column,
    span: ast::Span,
) -> Result<()> {
    let old = &table.columns[position];
    if changed.allow_commit_timestamp == old.allow_commit_timestamp {
        return Ok(());
    }
    if changed.commit_timestamp_option_set && changed.ty != rowtree_types::Type::Timestamp {
        return Err(SchemaError::precondition(
            format!(
                "Column {}.{} has invalid allow_commit_timestamp option.  Option only allowed on \
                 TIMESTAMP columns.",
                table.name, old.name
            ),
            span,
        ));
    }
    if !changed.allow_commit_timestamp {
        return Ok(());
    }
    let fks = foreign_keys_using(state, table, position);
    if !fks.is_empty() {
        return Err(SchemaError::precondition(
            format!(
                "Cannot set the commit_timestamp option for column `{}` of table `{}`. It is \
                 used by one or more foreign keys: {}.",
                old.name,
                table.name,
                fks.join(", ")
            ),
            span,
        ));
    }
    if table
        .checks
        .iter()
        .any(|c| c.expr.expr.columns().contains(&position))
    {
        return Err(SchemaError::invalid(
            format!(
                "Column `{}` has option commit_timestamp, which is not supported in check \
                 constraint.",
                old.name
            ),
            span,
        ));
    }
    let feeds_stored = table.columns.iter().any(|c| {
        c.generated_stored
            && c.generated
                .as_ref()
                .is_some_and(|g| g.expr.columns().contains(&position))
    });
    if feeds_stored {
        return Err(SchemaError::precondition(
            format!(
                "Cannot use commit timestamp column `{}` as a dependency of a materialized \
                 generated column.",
                old.name
            ),
            span,
        ));
    }
    Ok(())
}

fn set_on_delete(table: &mut Table, action: OnDelete, span: ast::Span) -> Result<()> {
    let Some(parent) = &mut table.parent else {
        return Err(SchemaError::invalid(
            format!(
                "Cannot SET ON DELETE on table {} that does not have an INTERLEAVE clause.",
                table.name
            ),
            span,
        ));
    };
    match parent.kind {
        ast::InterleaveKind::In => Err(SchemaError::invalid(
            format!(
                "Cannot SET ON DELETE on an INTERLEAVE IN table {}.",
                table.name
            ),
            span,
        )),
        ast::InterleaveKind::InParent(_) => {
            parent.kind = ast::InterleaveKind::InParent(action);
            Ok(())
        }
    }
}
