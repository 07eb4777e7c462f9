//! `CREATE SEQUENCE`, `ALTER SEQUENCE`, `DROP SEQUENCE`.

use rowtree_parser::ast::{AlterSequence, AlterSequenceAction, CreateSequence, Ident, Span};

use crate::error::{Result, SchemaError};
use crate::names;
use crate::sequence::{read_settings, validate, Sequence, SequenceSpelling};
use crate::state::State;
use crate::Effect;

fn unspecified_kind(span: Span) -> SchemaError {
    SchemaError::invalid(
        "The sequence does not have a valid sequence kind. Please specify the sequence kind \
         explicitly or set the database option `default_sequence_kind`.",
        span,
    )
}

pub(crate) fn create(state: &mut State, stmt: &CreateSequence) -> Result<Vec<Effect>> {
    let name = &stmt.name;
    if stmt.if_not_exists && state.sequence_position(&name.value).is_some() {
        return Ok(Vec::new());
    }
    names::validate("Sequence", &name.value, name.span)?;
    if state.name_taken(&name.value) {
        return Err(SchemaError::precondition(
            format!("Duplicate name in schema: {}.", name.value),
            name.span,
        ));
    }
    let settings = read_settings(&stmt.options)?;
    let kind = settings.kind.clone().flatten();
    if kind.is_none() && state.database_option("default_sequence_kind").is_none() {
        return Err(unspecified_kind(stmt.options.span));
    }
    let start = settings.start_with_counter.flatten();
    let skip_range = validate(
        kind.as_deref(),
        (settings.skip_min.flatten(), settings.skip_max.flatten()),
        start,
        stmt.options.span,
    )?;
    let id = state.take_sequence_id();
    state.sequences.push(Sequence {
        id,
        name: name.value.clone(),
        skip_range,
        start_with_counter: start.unwrap_or(1),
        internal: false,
        spelling: SequenceSpelling {
            options_form: settings.options_form,
            kind_explicit: kind.is_some(),
            start_explicit: start.is_some(),
        },
    });
    Ok(vec![Effect::ResetSequence {
        sequence: id,
        counter: None,
    }])
}

/// The position of user sequence `name` (internal ones are not addressable).
fn find(state: &State, name: &Ident) -> Option<usize> {
    state
        .sequence_position(&name.value)
        .filter(|&i| !state.sequences[i].internal)
}

fn not_found(name: &Ident) -> SchemaError {
    SchemaError::not_found(format!("Sequence not found: {}", name.value), name.span)
}

pub(crate) fn alter(state: &mut State, stmt: &AlterSequence) -> Result<Vec<Effect>> {
    let position = find(state, &stmt.name).ok_or_else(|| not_found(&stmt.name))?;
    let has_default_kind = state.database_option("default_sequence_kind").is_some();
    let sequence = &mut state.sequences[position];
    let mut skip = sequence
        .skip_range
        .map_or((None, None), |(lo, hi)| (Some(lo), Some(hi)));
    let mut start = sequence
        .spelling
        .start_explicit
        .then_some(sequence.start_with_counter);
    let mut kind_explicit = sequence.spelling.kind_explicit;
    let mut kind = kind_explicit.then(|| crate::sequence::BIT_REVERSED_POSITIVE.to_string());
    let mut restart = None;
    let span = match &stmt.action {
        AlterSequenceAction::SetOptions(options) => {
            let settings = read_settings(options)?;
            if let Some(k) = settings.kind {
                kind_explicit = k.is_some();
                kind = k;
            }
            if let Some(lo) = settings.skip_min {
                skip.0 = lo;
            }
            if let Some(hi) = settings.skip_max {
                skip.1 = hi;
            }
            if let Some(s) = settings.start_with_counter {
                start = s;
                restart = s;
            }
            options.span
        }
        AlterSequenceAction::RestartCounterWith(n) => {
            start = Some(*n);
            restart = Some(*n);
            stmt.name.span
        }
        AlterSequenceAction::SkipRange(lo, hi) => {
            skip = (Some(*lo), Some(*hi));
            stmt.name.span
        }
        AlterSequenceAction::NoSkipRange => {
            skip = (None, None);
            stmt.name.span
        }
    };
    if !kind_explicit && !has_default_kind {
        return Err(unspecified_kind(span));
    }
    let skip_range = validate(kind.as_deref(), skip, start, span)?;
    sequence.skip_range = skip_range;
    sequence.start_with_counter = start.unwrap_or(1);
    sequence.spelling.start_explicit = start.is_some();
    sequence.spelling.kind_explicit = kind_explicit;
    let id = sequence.id;
    Ok(restart
        .map(|counter| Effect::ResetSequence {
            sequence: id,
            counter: Some(counter),
        })
        .into_iter()
        .collect())
}

pub(crate) fn drop(state: &mut State, name: &Ident, if_exists: bool) -> Result<Vec<Effect>> {
    let Some(position) = find(state, name) else {
        if if_exists {
            return Ok(Vec::new());
        }
        return Err(not_found(name));
    };
    let sequence_name = &state.sequences[position].name;
    for table in &state.tables {
        for column in &table.columns {
            let uses = column.default.as_ref().is_some_and(|d| {
                d.expr
                    .sequences()
                    .iter()
                    .any(|s| s.eq_ignore_ascii_case(sequence_name))
            });
            if uses {
                return Err(SchemaError::precondition(
                    format!(
                        "Cannot drop SEQUENCE `{sequence_name}` on which there is a dependent \
                         column: {}.{}.",
                        table.name, column.name
                    ),
                    name.span,
                ));
            }
        }
    }
    let sequence = state.sequences.remove(position);
    Ok(vec![Effect::DropSequence(sequence.id)])
}
