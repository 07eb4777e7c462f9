//! `CREATE`, `ALTER` and `DROP PROTO BUNDLE`: the list of protocol buffer
//! type names the database knows. The descriptors are the server layer's;
//! here only the names are validated (unique, each a dotted name) and kept.

use rowtree_parser::ast::{AlterProtoBundle, ProtoTypeName};

use crate::error::{Result, SchemaError};
use crate::state::State;
use crate::Effect;

/// Each dotted part must be a valid identifier.
fn validate_name(t: &ProtoTypeName) -> Result<()> {
    let ok = t.name.split('.').all(|part| {
        let mut chars = part.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    });
    if ok {
        Ok(())
    } else {
        Err(SchemaError::invalid(
            format!("Invalid proto type name: {}.", t.name),
            t.span,
        ))
    }
}

fn position(list: &[String], name: &str) -> Option<usize> {
    list.iter().position(|n| n == name)
}

pub(crate) fn create(state: &mut State, types: &[ProtoTypeName]) -> Result<Vec<Effect>> {
    if state.proto_bundle.is_some() {
        return Err(SchemaError::precondition(
            "Proto bundle already exists.",
            types.first().map(|t| t.span),
        ));
    }
    let mut list = Vec::new();
    for t in types {
        validate_name(t)?;
        if position(&list, &t.name).is_some() {
            return Err(SchemaError::invalid(
                format!("Duplicate proto type name in proto bundle: {}.", t.name),
                t.span,
            ));
        }
        list.push(t.name.clone());
    }
    state.proto_bundle = Some(list);
    Ok(Vec::new())
}

pub(crate) fn alter(state: &mut State, alter: &AlterProtoBundle) -> Result<Vec<Effect>> {
    let Some(list) = state.proto_bundle.as_mut() else {
        return Err(SchemaError::not_found("Proto bundle not found.", None));
    };
    let mut mentioned: Vec<&str> = Vec::new();
    for t in alter
        .insert
        .iter()
        .chain(alter.update.iter())
        .chain(alter.delete.iter())
    {
        validate_name(t)?;
        if mentioned.contains(&t.name.as_str()) {
            return Err(SchemaError::invalid(
                format!(
                    "Duplicate proto type name in ALTER PROTO BUNDLE: {}.",
                    t.name
                ),
                t.span,
            ));
        }
        mentioned.push(&t.name);
    }
    for t in &alter.update {
        if position(list, &t.name).is_none() {
            return Err(SchemaError::not_found(
                format!("Proto type not found in proto bundle: {}.", t.name),
                t.span,
            ));
        }
    }
    for t in &alter.delete {
        let Some(i) = position(list, &t.name) else {
            return Err(SchemaError::not_found(
                format!("Proto type not found in proto bundle: {}.", t.name),
                t.span,
            ));
        };
        list.remove(i);
    }
    for t in &alter.insert {
        if position(list, &t.name).is_some() {
            return Err(SchemaError::precondition(
                format!("Proto type already exists in proto bundle: {}.", t.name),
                t.span,
            ));
        }
        list.push(t.name.clone());
    }
    Ok(Vec::new())
}

pub(crate) fn drop(state: &mut State) -> Result<Vec<Effect>> {
    if state.proto_bundle.take().is_none() {
        return Err(SchemaError::not_found("Proto bundle not found.", None));
    }
    Ok(Vec::new())
}
