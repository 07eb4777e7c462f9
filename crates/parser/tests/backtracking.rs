//! Statements that offer the parser many readings of the same text must
//! still parse (or fail) in time linear-ish in their nesting: each `(` that
//! may open a subquery is tried as one first, and without remembering the
//! readings that failed, every enclosing level doubled the work. Found by
//! the `sql` fuzz target (`fuzz/`), whose 190-byte input took over ten
//! seconds.

use std::time::{Duration, Instant};

use rowtree_parser::parse_statement;

/// Parses `text`, which must fail, and returns how long that took.
fn fails_in(text: &str) -> Duration {
    let started = Instant::now();
    let error = parse_statement(text).expect_err("does not parse");
    assert!(error.offset <= text.len(), "{}", error.message);
    started.elapsed()
}

#[test]
fn unclosed_subqueries_inside_parentheses_fail_fast() {
    // The fuzzer's input, then the same shape 30 levels deep.
    let found = "SELECT Cnan((((((((((((((((((((SELECT((((((((((((((((((((((((((((((((((((\
                 ((((((((((SELECT((((((((((((((((((((SELECT((((((((((((((((((((((((((((((\
                 ((((((((((((((((SELECT((((((((((((((((((((((((((((((";
    assert!(fails_in(found) < Duration::from_secs(30));
    let deep = format!("SELECT f({}", "((SELECT ".repeat(30));
    assert!(fails_in(&deep) < Duration::from_secs(30));
}

#[test]
fn a_failure_deep_inside_balanced_subqueries_fails_fast() {
    // Every level's two readings fail at the same `+ )` inside them all.
    let depth = 30;
    let text = format!(
        "SELECT {}1 +{}",
        "((SELECT ".repeat(depth),
        "))".repeat(depth)
    );
    assert!(fails_in(&text) < Duration::from_secs(30));
    let text = format!(
        "SELECT * FROM {}t WHERE{}",
        "((SELECT * FROM ".repeat(depth),
        "))".repeat(depth)
    );
    assert!(fails_in(&text) < Duration::from_secs(30));
}

#[test]
fn remembered_failures_keep_the_readings_that_succeed() {
    // The same `(` fails as a query on one path and is then read as an
    // expression: results must not change.
    for text in [
        "SELECT ((SELECT 1) + 1)",
        "SELECT (((SELECT 1) + 1) * ((SELECT 2)))",
        "SELECT 1 FROM t WHERE x IN ((SELECT 1) + 1, 2)",
        "SELECT * FROM ((SELECT 1 AS a) AS s JOIN t ON TRUE)",
        "SELECT ARRAY(SELECT ((SELECT 1)))",
    ] {
        parse_statement(text).unwrap_or_else(|e| panic!("{text}: {}", e.message));
    }
}

#[test]
fn readings_past_the_nesting_limit_fail_fast() {
    // Past 1,000 levels every reading fails with the nesting error; once
    // one has, the others are not tried (each would run down to the limit
    // again, once per path). Found by the `parse` fuzz target.
    for text in [
        format!("SELECT f({}", "((SELECT ".repeat(600)),
        format!("SELECT {}1 +{}", "((SELECT ".repeat(600), "))".repeat(600)),
        format!(
            "SELECT {}SELECT 1, 2),{}",
            "((((SELECT a, ".repeat(300),
            " (x".repeat(300)
        ),
    ] {
        let started = Instant::now();
        let error = parse_statement(&text).expect_err("too deep");
        assert!(
            error.message.starts_with("Out of stack space"),
            "{}",
            error.message
        );
        assert!(started.elapsed() < Duration::from_secs(30));
    }
}
