//! Scenario tests: DDL statements and what the catalog answers.
//!
//! Each file in `tests/scenarios/` is a script of blocks:
//!
//! ```text
//! # comments (kept)
//! CREATE TABLE T (A INT64) PRIMARY KEY (A);
//! ----
//! ok
//! ```
//!
//! The text above `----` is one statement (or a command); below it is what
//! the catalog answered: `ok` with the effects, or
//! `error CODE at line:column: message` (the position of the offending
//! token within the statement). Commands:
//!
//! * `ddl`: the current schema as GetDatabaseDdl prints it;
//! * `roundtrip`: re-applies `ddl` to an empty catalog and checks it prints
//!   the same again;
//! * `reset`: start again from an empty catalog.
//!
//! Blocks run in order against one catalog. Run with `UPDATE_EXPECT=1` to
//! rewrite the expected output, then review the diff.

use std::path::Path;

use rowtree_parser::Position;
use rowtree_schema::{Catalog, SchemaError};

fn format_error(text: &str, e: &SchemaError) -> String {
    let position = e
        .span()
        .map(|s| format!(" at {}", Position::of(text, s.start)))
        .unwrap_or_default();
    format!("error {}{position}: {}", e.code(), e.message())
}

fn apply(catalog: &mut Catalog, text: &str) -> String {
    let statement = text.trim().trim_end_matches(';');
    match catalog.apply_sql(statement) {
        Ok((next, effects)) => {
            *catalog = next;
            if effects.is_empty() {
                "ok".to_string()
            } else {
                let effects: Vec<String> = effects.iter().map(|e| format!("{e:?}")).collect();
                format!("ok: {}", effects.join(", "))
            }
        }
        Err(e) => format_error(statement, &e),
    }
}

fn print_ddl(catalog: &Catalog) -> String {
    let ddl = catalog.ddl();
    if ddl.is_empty() {
        return "(empty)".to_string();
    }
    ddl.iter()
        .map(|s| format!("{s};"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn roundtrip(catalog: &Catalog) -> String {
    let original = catalog.ddl();
    let mut fresh = Catalog::new();
    for statement in &original {
        if let Err(e) = fresh.apply_sql(statement).map(|(next, _)| fresh = next) {
            return format!(
                "failed to re-apply:\n{statement}\n{}",
                format_error(statement, &e)
            );
        }
    }
    if fresh.ddl() == original {
        "ok: ddl re-applies to the same ddl".to_string()
    } else {
        format!("mismatch:\n{}", print_ddl(&fresh))
    }
}

/// Runs one script and returns it with regenerated outputs.
fn run_script(script: &str) -> String {
    let mut catalog = Catalog::new();
    let mut out = String::new();
    let mut lines = script.lines().peekable();
    loop {
        // Leading blank lines and comments are kept as they are.
        while let Some(line) = lines.peek() {
            if line.trim().is_empty() || line.starts_with('#') {
                out.push_str(line);
                out.push('\n');
                lines.next();
            } else {
                break;
            }
        }
        if lines.peek().is_none() {
            break;
        }
        let mut input = Vec::new();
        for line in lines.by_ref() {
            if line == "----" {
                break;
            }
            input.push(line);
        }
        // Skip the old output, up to the next blank line.
        for line in lines.by_ref() {
            if line.trim().is_empty() {
                break;
            }
        }
        let text = input.join("\n");
        let result = match text.trim() {
            "ddl" => print_ddl(&catalog),
            "roundtrip" => roundtrip(&catalog),
            "reset" => {
                catalog = Catalog::new();
                "ok".to_string()
            }
            _ => apply(&mut catalog, &text),
        };
        out.push_str(&text);
        out.push_str("\n----\n");
        out.push_str(&result);
        out.push_str("\n\n");
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

#[test]
fn scenarios() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios");
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/scenarios exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    entries.sort();
    assert!(
        !entries.is_empty(),
        "no scenario files in {}",
        dir.display()
    );
    let mut failures = Vec::new();
    for path in entries {
        let script = std::fs::read_to_string(&path).expect("readable scenario");
        let actual = run_script(&script);
        if update {
            std::fs::write(&path, &actual).expect("writable scenario");
        } else if actual != script {
            let first_diff = script
                .lines()
                .zip(actual.lines())
                .position(|(a, b)| a != b)
                .unwrap_or_else(|| script.lines().count().min(actual.lines().count()));
            let expected_line = script.lines().nth(first_diff).unwrap_or("<end of file>");
            let actual_line = actual.lines().nth(first_diff).unwrap_or("<end of file>");
            failures.push(format!(
                "{}:{}:\n  expected: {expected_line}\n  actual:   {actual_line}",
                path.display(),
                first_diff + 1
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "scenario output differs (rerun with UPDATE_EXPECT=1 and review the diff):\n{}",
        failures.join("\n")
    );
}
