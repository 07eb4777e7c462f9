//! `ALTER DATABASE db SET OPTIONS (...)`.
//!
//! Options are kept as SQL literal text and printed back verbatim. Only
//! `default_sequence_kind` changes how other DDL is validated: with it set,
//! sequences and identity columns may omit their kind.

use rowtree_parser::ast::{Expr, Ident, Literal, OptionPair};

use crate::error::{Result, SchemaError};
use crate::sequence::BIT_REVERSED_POSITIVE;
use crate::state::State;
use crate::Effect;

/// The database options Spanner's GoogleSQL dialect accepts.
const KNOWN_OPTIONS: &[&str] = &[
    "default_leader",
    "default_sequence_kind",
    "default_time_zone",
    "enable_key_visualizer",
    "optimizer_statistics_package",
    "optimizer_version",
    "version_retention_period",
    "witness_location",
];

pub(crate) fn alter(
    state: &mut State,
    name: &Ident,
    options: &[OptionPair],
) -> Result<Vec<Effect>> {
    for option in options {
        let key = option.name.value.to_ascii_lowercase();
        if !KNOWN_OPTIONS.contains(&key.as_str()) {
            return Err(SchemaError::precondition(
                format!("Invalid Alter Database Option: {}.", option.name.value),
                option.name.span,
            ));
        }
        let text = literal_text(&option.value)?;
        if key == "version_retention_period" {
            match &option.value {
                Expr::Literal {
                    value: Literal::String(v),
                    span,
                } => {
                    if parse_retention(v).is_none() {
                        return Err(SchemaError::invalid(
                            format!(
                                "Invalid version_retention_period: '{v}'. It must be a duration \
                                 between 1h and 7d, such as '1h', '90m', '3d' or '86400s'."
                            ),
                            *span,
                        ));
                    }
                }
                Expr::Literal {
                    value: Literal::Null,
                    ..
                } => {}
                other => {
                    return Err(SchemaError::invalid(
                        "The version_retention_period option takes a string such as '7d'.",
                        other.span(),
                    ))
                }
            }
        }
        if key == "default_sequence_kind" {
            match &option.value {
                Expr::Literal {
                    value: Literal::String(kind),
                    ..
                } if kind.eq_ignore_ascii_case(BIT_REVERSED_POSITIVE) => {}
                Expr::Literal {
                    value: Literal::Null,
                    ..
                } => {
                    if state.database_option(&key).is_some() {
                        return Err(SchemaError::precondition(
                            "The default_sequence_kind option may not be unset once set.",
                            option.value.span(),
                        ));
                    }
                }
                Expr::Literal {
                    value: Literal::String(kind),
                    span,
                } => {
                    return Err(SchemaError::precondition(
                        format!("Invalid Sequence Kind: {kind}."),
                        *span,
                    ))
                }
                other => {
                    return Err(SchemaError::invalid(
                        "The default_sequence_kind option only supports string or null.",
                        other.span(),
                    ))
                }
            }
        }
        let existing = state
            .database_options
            .iter()
            .position(|(n, _)| n.eq_ignore_ascii_case(&key));
        match (text, existing) {
            (None, Some(i)) => {
                state.database_options.remove(i);
            }
            (None, None) => {}
            (Some(text), Some(i)) => state.database_options[i].1 = text,
            (Some(text), None) => state.database_options.push((key, text)),
        }
    }
    state.database_name = Some(name.value.clone());
    Ok(Vec::new())
}

/// A `version_retention_period` value (`'7d'`, `'36h'`, `'90m'`,
/// `'86400s'`): Spanner accepts one hour to seven days.
pub fn parse_retention(text: &str) -> Option<std::time::Duration> {
    let text = text.trim();
    let unit = text.chars().last()?;
    let n: u64 = text[..text.len() - unit.len_utf8()].parse().ok()?;
    let secs = match unit {
        'd' => n.checked_mul(86_400)?,
        'h' => n.checked_mul(3_600)?,
        'm' => n.checked_mul(60)?,
        's' => n,
        _ => return None,
    };
    (3_600..=7 * 86_400)
        .contains(&secs)
        .then(|| std::time::Duration::from_secs(secs))
}

/// The SQL text of an option value; `None` for NULL (which unsets it).
fn literal_text(value: &Expr) -> Result<Option<String>> {
    match value {
        Expr::Literal { value, span } => Ok(match value {
            Literal::Null => None,
            Literal::Bool(b) => Some(b.to_string()),
            Literal::Integer(t) | Literal::Float(t) => Some(t.clone()),
            Literal::String(s) => Some(quote(s)),
            _ => {
                return Err(SchemaError::invalid(
                    "Database option values must be strings, numbers, booleans or NULL.",
                    *span,
                ))
            }
        }),
        other => Err(SchemaError::invalid(
            "Database option values must be literals.",
            other.span(),
        )),
    }
}

/// A GoogleSQL single-quoted string literal.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        match c {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}
