//! `CREATE`, `ALTER` and `DROP PROTO BUNDLE`: the list of protocol buffer
//! type names the database knows, and the rules that keep it consistent
//! with the columns and the descriptors.
//!
//! The names are validated (unique, each a dotted name) and, when the
//! database has proto descriptors ([`crate::Catalog::with_proto_descriptors`]),
//! each must be a message or enum they define. A type a column uses cannot
//! leave the bundle (`ALTER PROTO BUNDLE DELETE`, `DROP PROTO BUNDLE`), and
//! new descriptors must still define every type in use, as the same kind.

use rowtree_parser::ast::{AlterProtoBundle, DataType, ProtoTypeName};
use rowtree_types::{ProtoBundle, ProtoKind};

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

/// The proto bundle types a declared column type uses (inside arrays too).
fn proto_type(data_type: &DataType) -> Option<(&str, ProtoKind)> {
    match data_type {
        DataType::Array(inner) => proto_type(inner),
        DataType::Proto(name) => Some((name, ProtoKind::Message)),
        DataType::Enum(name) => Some((name, ProtoKind::Enum)),
        _ => None,
    }
}

/// Every column of a proto bundle type: `(Table.column, type name, kind)`.
fn columns_using(state: &State) -> impl Iterator<Item = (String, &str, ProtoKind)> {
    state.tables.iter().flat_map(|t| {
        t.columns.iter().filter_map(move |c| {
            proto_type(&c.data_type)
                .map(|(name, kind)| (format!("{}.{}", t.name, c.name), name, kind))
        })
    })
}

/// Refuses taking `name` out of the bundle while a column uses it.
fn check_unused(state: &State, name: &str, span: Option<rowtree_parser::ast::Span>) -> Result<()> {
    match columns_using(state).find(|(_, n, _)| *n == name) {
        Some((column, _, _)) => Err(SchemaError::precondition(
            format!(
                "Cannot remove proto type {name} from the proto bundle: column {column} uses it."
            ),
            span,
        )),
        None => Ok(()),
    }
}

/// New descriptors must define every type a column uses, as the same kind.
pub(crate) fn check_descriptors(state: &State, descriptors: &ProtoBundle) -> Result<()> {
    for (column, name, kind) in columns_using(state) {
        if descriptors.kind(name) != Some(kind) {
            return Err(SchemaError::precondition(
                format!(
                    "The proto descriptors do not define {} {name}, which column {column} uses.",
                    match kind {
                        ProtoKind::Message => "message",
                        ProtoKind::Enum => "enum",
                    }
                ),
                None,
            ));
        }
    }
    Ok(())
}

/// With descriptors, a bundle type must be one of their messages or enums.
fn check_defined(state: &State, t: &ProtoTypeName) -> Result<()> {
    match &state.proto_descriptors {
        Some(d) if d.kind(&t.name).is_none() => Err(SchemaError::invalid(
            format!(
                "Proto type {} is not defined in the proto descriptors.",
                t.name
            ),
            t.span,
        )),
        _ => Ok(()),
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
        check_defined(state, t)?;
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
    if state.proto_bundle.is_none() {
        return Err(SchemaError::not_found("Proto bundle not found.", None));
    }
    for t in alter.insert.iter().chain(alter.update.iter()) {
        check_defined(state, t)?;
    }
    for t in &alter.delete {
        check_unused(state, &t.name, Some(t.span))?;
    }
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
    if let Some((_, name, _)) = columns_using(state).next() {
        let name = name.to_string();
        check_unused(state, &name, None)?;
    }
    if state.proto_bundle.take().is_none() {
        return Err(SchemaError::not_found("Proto bundle not found.", None));
    }
    Ok(Vec::new())
}
