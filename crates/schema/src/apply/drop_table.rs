//! `DROP TABLE`: refused while anything depends on the table.

use rowtree_parser::ast::Ident;

use crate::error::{Result, SchemaError};
use crate::state::State;
use crate::Effect;

pub(crate) fn apply(state: &mut State, name: &Ident, if_exists: bool) -> Result<Vec<Effect>> {
    let Some(position) = state.table_position(&name.value) else {
        if if_exists {
            return Ok(Vec::new());
        }
        return Err(SchemaError::not_found(
            format!("Table not found: {}", name.value),
            name.span,
        ));
    };
    let table = &state.tables[position];
    let mut children: Vec<&str> = state
        .tables
        .iter()
        .filter(|t| t.parent.is_some_and(|p| p.table == table.id))
        .map(|t| t.name.as_str())
        .collect();
    if !children.is_empty() {
        children.sort_unstable();
        return Err(SchemaError::precondition(
            format!(
                "Cannot drop table {} with interleaved tables: {}.",
                table.name,
                children.join(",")
            ),
            name.span,
        ));
    }
    let mut interleaved: Vec<&str> = state
        .indexes
        .iter()
        .filter(|i| i.interleave_in == Some(table.id) && i.table != table.id)
        .map(|i| i.name.as_str())
        .collect();
    interleaved.sort_unstable();
    let own: Vec<&str> = state
        .indexes
        .iter()
        .filter(|i| i.table == table.id)
        .map(|i| i.name.as_str())
        .collect();
    let dependent = if interleaved.is_empty() {
        own
    } else {
        interleaved
    };
    if !dependent.is_empty() {
        return Err(SchemaError::precondition(
            format!(
                "Cannot drop table {} with indices: {}.",
                table.name,
                dependent.join(",")
            ),
            name.span,
        ));
    }
    let referencing: Vec<&str> = state
        .tables
        .iter()
        .filter(|t| t.id != table.id)
        .flat_map(|t| t.foreign_keys.iter())
        .filter(|fk| fk.referenced_table == table.id)
        .map(|fk| fk.name.as_str())
        .collect();
    if !referencing.is_empty() {
        return Err(SchemaError::precondition(
            format!(
                "Cannot drop table `{}`. It is referenced by one or more foreign keys: {}. You \
                 must drop the foreign keys before dropping the table.",
                table.name,
                referencing.join(", ")
            ),
            name.span,
        ));
    }
    let table_name = table.name.clone();
    super::view::refuse_if_views_depend(state, "table", &table_name, name)?;
    super::access::forget_object(state, &table_name);
    let table = state.tables.remove(position);
    let mut effects = vec![Effect::DropTableData(table.id)];
    for column in &table.columns {
        if let Some(seq) = &column.identity_sequence {
            if let Some(i) = state.sequence_position(seq) {
                let sequence = state.sequences.remove(i);
                effects.push(Effect::DropSequence(sequence.id));
            }
        }
    }
    Ok(effects)
}
