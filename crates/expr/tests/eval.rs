//! Evaluation tests: goldenscripts under `tests/scripts/eval/`, one test
//! each, a file per family of operators and functions.
//!
//! `eval "EXPR"` parses an expression with `rowtree_parser::parse_expr`,
//! binds it against a small fixed scope (see [`TestScope`]) and evaluates it
//! with a deterministic context (see [`TestContext`]), printing the result's
//! type and value (as a GoogleSQL literal). `!eval` expects binding or
//! evaluation to fail, printed as `Kind [start..end]: message` (the error's
//! kind and the span it points at). Each case evaluates on its own: sequence
//! counters start again at every command. Regenerate the expected output
//! with `UPDATE_GOLDENFILES=1 cargo test -p rowtree-expr --test eval`, then
//! review the diff.

use rowtree_testkit::goldenscript;
use std::collections::HashMap;

use rowtree_expr::{bind, BindOptions, Error, EvalContext, Scope};
use rowtree_parser::ast::Ident;
use rowtree_types::{Date, TimeZone, Timestamp, Type, Value};

/// Columns: `i INT64 = 5`, `s STRING = 'hello'`, `n INT64 = NULL`,
/// `f FLOAT64 = 1.5`, `ts TIMESTAMP = 2016-01-25T15:10:10.555555Z`,
/// `d DATE = 2024-02-29`, `b BOOL = NULL`, `big INT64 = i64::MAX`, also
/// reachable qualified as `t.<name>`. Sequence `seq` exists; `nope` does not.
struct TestScope;

const COLUMNS: &[(&str, Type)] = &[
    ("i", Type::Int64),
    ("s", Type::String),
    ("n", Type::Int64),
    ("f", Type::Float64),
    ("ts", Type::Timestamp),
    ("d", Type::Date),
    ("b", Type::Bool),
    ("big", Type::Int64),
];

fn row() -> Vec<Value> {
    vec![
        Value::Int64(5),
        Value::String("hello".into()),
        Value::Null,
        Value::Float64(1.5),
        Value::Timestamp(Timestamp::parse("2016-01-25T15:10:10.555555Z", &TimeZone::UTC).unwrap()),
        Value::Date(Date::parse("2024-02-29").unwrap()),
        Value::Null,
        Value::Int64(i64::MAX),
    ]
}

impl Scope for TestScope {
    fn resolve(&self, path: &[Ident]) -> Option<(usize, Type)> {
        let column = match path {
            [c] => c,
            [t, c] if t.matches("t") => c,
            _ => return None,
        };
        COLUMNS
            .iter()
            .position(|(name, _)| column.matches(name))
            .map(|slot| (slot, COLUMNS[slot].1.clone()))
    }

    fn sequence_exists(&self, name: &str) -> Option<bool> {
        Some(name.eq_ignore_ascii_case("seq"))
    }
}

/// A fixed clock, a bit-reversed sequence counter, a placeholder commit
/// timestamp and two parameters.
struct TestContext {
    counters: HashMap<String, i64>,
}

impl EvalContext for TestContext {
    fn now(&self) -> Timestamp {
        Timestamp::parse("2024-01-01T00:00:00Z", &TimeZone::UTC).unwrap()
    }

    fn next_sequence_value(&mut self, sequence: &str) -> Result<i64, Error> {
        let counter = self.counters.entry(sequence.to_string()).or_insert(0);
        *counter += 1;
        Ok(((*counter as u64).reverse_bits() >> 1) as i64)
    }

    fn sequence_state(&mut self, sequence: &str) -> Result<Option<i64>, Error> {
        Ok(self.counters.get(sequence).copied())
    }

    fn pending_commit_timestamp(&mut self) -> Result<Value, Error> {
        Ok(Value::Timestamp(Timestamp::MAX))
    }

    fn param(&self, name: &str) -> Option<Value> {
        match name {
            "p" => Some(Value::Int64(7)),
            "name" => Some(Value::String("world".into())),
            _ => None,
        }
    }
}

/// `Kind [start..end]: message`.
fn format_error(e: Error) -> String {
    let kind = match e {
        Error::InvalidArgument { .. } => "InvalidArgument",
        Error::OutOfRange { .. } => "OutOfRange",
        Error::NotFound { .. } => "NotFound",
        Error::FailedPrecondition { .. } => "FailedPrecondition",
        Error::ResourceExhausted { .. } => "ResourceExhausted",
        Error::Context { .. } => "Context",
    };
    let at = e
        .span()
        .map(|s| format!(" [{}..{}]", s.start, s.end))
        .unwrap_or_default();
    format!("{kind}{at}: {}", e.message())
}

/// Binds and evaluates one expression: `TYPE value`, or the error.
fn eval(text: &str) -> Result<String, Box<dyn std::error::Error>> {
    let expr = rowtree_parser::parse_expr(text).map_err(|e| format!("parse error: {e}"))?;
    let mut options = BindOptions::default();
    options.params.insert("p".into(), Type::Int64);
    options.params.insert("name".into(), Type::String);
    let bound = bind(&expr, &TestScope, &options).map_err(format_error)?;
    let mut ctx = TestContext {
        counters: HashMap::new(),
    };
    let value = bound.eval(&row(), &mut ctx).map_err(format_error)?;
    Ok(format!("{} {}", bound.ty(), value.sql_literal()))
}

struct Runner;

impl goldenscript::Runner for Runner {
    type Command = goldenscript::Command;

    fn run(
        &mut self,
        command: &goldenscript::Command,
        _context: &goldenscript::Context,
    ) -> Result<String, Box<dyn std::error::Error>> {
        let mut args = command.consume_args();
        match command.name.as_str() {
            "eval" => {
                let text = args.next_pos().ok_or("eval \"EXPR\"")?;
                args.reject_next()?;
                eval(text)
            }
            other => Err(format!("unknown command {other}").into()),
        }
    }
}

// One test per script, and a check that every file of the directory has one.
rowtree_testkit::scripts! {
    dir: "eval",
    runner: Runner,
    scripts: [
        hashes,
        arithmetic,
        functions,
        nulls,
        comparisons,
        strings,
        columns_and_params,
        casts,
        literals,
        math,
        datetime,
        arrays,
        json,
    ],
}
