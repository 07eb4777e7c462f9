//! Regular expressions (`REGEXP_CONTAINS`, `REGEXP_EXTRACT`,
//! `REGEXP_EXTRACT_ALL`, `REGEXP_REPLACE`), with the `regex` crate's RE2-like
//! syntax, which is what GoogleSQL uses. A pattern that does not parse is an
//! OUT_OF_RANGE error at evaluation, as in Spanner.

use rowtree_types::Value;

use super::args::{oor, string};
use crate::{EvalContext, Result};

fn regex(pattern: &str) -> Result<regex::Regex> {
    regex::Regex::new(pattern).map_err(|e| {
        let detail = match &e {
            regex::Error::Syntax(text) => text.lines().last().unwrap_or("").to_string(),
            other => other.to_string(),
        };
        oor(format!("Cannot parse regular expression: {detail}"))
    })
}

pub(super) fn eval_regexp_contains(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    Ok(Value::Bool(
        regex(string(&args[1])?)?.is_match(string(&args[0])?),
    ))
}

pub(super) fn eval_regexp_extract(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let re = regex(string(&args[1])?)?;
    if re.captures_len() > 2 {
        return Err(oor(
            "Regular expressions passed into extraction functions must not have more than 1 capturing group",
        ));
    }
    Ok(match re.captures(string(&args[0])?) {
        None => Value::Null,
        Some(c) => match c.get(if re.captures_len() == 2 { 1 } else { 0 }) {
            Some(m) => Value::String(m.as_str().to_string()),
            None => Value::Null,
        },
    })
}

pub(super) fn eval_regexp_extract_all(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let re = regex(string(&args[1])?)?;
    if re.captures_len() > 2 {
        return Err(oor(
            "Regular expressions passed into extraction functions must not have more than 1 capturing group",
        ));
    }
    let group = if re.captures_len() == 2 { 1 } else { 0 };
    Ok(Value::Array(
        re.captures_iter(string(&args[0])?)
            .map(|c| Value::String(c.get(group).map_or("", |m| m.as_str()).to_string()))
            .collect(),
    ))
}

pub(super) fn eval_regexp_replace(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let re = regex(string(&args[1])?)?;
    // GoogleSQL writes group references as \1; the regex crate as ${1}.
    let mut replacement = String::new();
    let mut chars = string(&args[2])?.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('\\', Some(d)) if d.is_ascii_digit() => {
                replacement.push_str(&format!("${{{d}}}"));
                chars.next();
            }
            ('\\', Some('\\')) => {
                replacement.push('\\');
                chars.next();
            }
            ('$', _) => replacement.push_str("$$"),
            (c, _) => replacement.push(c),
        }
    }
    Ok(Value::String(
        re.replace_all(string(&args[0])?, replacement.as_str())
            .into_owned(),
    ))
}
