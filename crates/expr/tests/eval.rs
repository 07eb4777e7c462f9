//! Scenario tests for binding and evaluation.
//!
//! `tests/scenarios/eval.txt` holds one case per line:
//!
//! ```text
//! expression => TYPE value            (the value printed as a GoogleSQL literal)
//! expression => ERROR Kind [start..end]: message
//! ```
//!
//! Each expression is parsed with `rowtree_parser::parse_expr`, bound
//! against a small fixed scope (see [`TestScope`]) and evaluated with a
//! deterministic context. Run with `UPDATE_SCENARIOS=1` to rewrite the
//! expectations from the actual results, then review the diff.

use std::collections::HashMap;
use std::path::Path;

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

fn run(text: &str) -> String {
    let expr = match rowtree_parser::parse_expr(text) {
        Ok(e) => e,
        Err(e) => return format!("PARSE ERROR: {e}"),
    };
    let mut options = BindOptions::default();
    options.params.insert("p".into(), Type::Int64);
    options.params.insert("name".into(), Type::String);
    let format_error = |e: Error| {
        let kind = match e {
            Error::InvalidArgument { .. } => "InvalidArgument",
            Error::OutOfRange { .. } => "OutOfRange",
            Error::NotFound { .. } => "NotFound",
            Error::FailedPrecondition { .. } => "FailedPrecondition",
            Error::ResourceExhausted { .. } => "ResourceExhausted",
        };
        let at = e
            .span()
            .map(|s| format!(" [{}..{}]", s.start, s.end))
            .unwrap_or_default();
        format!("ERROR {kind}{at}: {}", e.message())
    };
    let bound = match bind(&expr, &TestScope, &options) {
        Ok(b) => b,
        Err(e) => return format_error(e),
    };
    let mut ctx = TestContext {
        counters: HashMap::new(),
    };
    match bound.eval(&row(), &mut ctx) {
        Ok(v) => format!("{} {}", bound.ty(), v.sql_literal()),
        Err(e) => format_error(e),
    }
}

#[test]
fn scenarios() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios/eval.txt");
    let input = std::fs::read_to_string(&path).expect("read scenarios");
    let update = std::env::var_os("UPDATE_SCENARIOS").is_some();
    let mut output = String::new();
    let mut failures = Vec::new();
    for (n, line) in input.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            output.push_str(line);
            output.push('\n');
            continue;
        }
        let (text, expected) = match line.rsplit_once(" => ") {
            Some((t, e)) => (t.trim(), Some(e.trim())),
            None => (trimmed, None),
        };
        let actual = run(text);
        if expected != Some(actual.as_str()) {
            failures.push(format!(
                "line {}: {text}\n  expected: {}\n  actual:   {actual}",
                n + 1,
                expected.unwrap_or("<none>")
            ));
        }
        output.push_str(&format!("{text} => {actual}\n"));
    }
    if update {
        std::fs::write(&path, output).expect("write scenarios");
        return;
    }
    assert!(
        failures.is_empty(),
        "{} failing scenarios:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
