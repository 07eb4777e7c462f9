//! Each rule's positive and negative schemas (`tests/rules/<rule-id>/`).
//!
//! Every `.sql` file there names what the advisor must report for the
//! directory's rule in header comments:
//!
//! * `-- expect: <rule-id> <object> <severity>`, once per finding, or
//! * `-- expect: none` (a negative schema: no finding of that rule),
//! * `-- expect-input-errors: N` when some statements are meant to be
//!   refused (otherwise none may be).
//!
//! Findings of other rules are not checked here (a schema written for one
//! rule may well trip another). For each finding with a fix, the fix is
//! then pasted in place of the statements it rewrites, and the result must
//! load cleanly and no longer have that finding.
//!
//! `tests/rules_pg/<rule-id>/` holds the same kind of schemas in the
//! PostgreSQL dialect, read with [`Config::with_dialect`]; their fixes are
//! PostgreSQL DDL and are pasted back and re-checked the same way.

use std::collections::BTreeSet;
use std::path::Path;

use rowtree_advisor::{advise, Config, Dialect, Finding, Rule, Source};

fn expectations(text: &str) -> (BTreeSet<(String, String, String)>, usize, bool) {
    let mut expected = BTreeSet::new();
    let mut input_errors = 0;
    let mut none = false;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("-- expect: ") {
            let words: Vec<&str> = rest.split_whitespace().collect();
            if words == ["none"] {
                none = true;
            } else {
                assert_eq!(words.len(), 3, "bad expect line: {line}");
                expected.insert((words[0].into(), words[1].into(), words[2].into()));
            }
        } else if let Some(n) = line.strip_prefix("-- expect-input-errors: ") {
            input_errors = n.trim().parse().unwrap();
        }
    }
    (expected, input_errors, none)
}

fn key(f: &Finding) -> (String, String, String) {
    (
        f.rule.id().to_string(),
        f.object.clone(),
        f.severity.as_str().to_string(),
    )
}

/// The name a `CREATE [UNIQUE] [NULL_FILTERED] TABLE|INDEX|SEQUENCE name`
/// statement creates.
fn created(statement: &str) -> Option<String> {
    let words: Vec<&str> = statement
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    let mut i = 0;
    if !words.first()?.eq_ignore_ascii_case("CREATE") {
        return None;
    }
    i += 1;
    while ["UNIQUE", "NULL_FILTERED"]
        .iter()
        .any(|w| words.get(i).is_some_and(|x| x.eq_ignore_ascii_case(w)))
    {
        i += 1;
    }
    Some(words.get(i + 1)?.to_ascii_lowercase())
}

/// `text` with `fix` pasted in place of the statements it recreates.
fn apply_fix(dialect: Dialect, text: &str, fix: &str) -> String {
    let mut statements: Vec<String> = rowtree_parser::split_statements_in(dialect, text)
        .iter()
        .map(|s| s.text.to_string())
        .collect();
    let fixes: Vec<String> = rowtree_parser::split_statements_in(dialect, fix)
        .iter()
        .map(|s| s.text.to_string())
        .collect();
    let mut at = None;
    for f in &fixes {
        if let Some(name) = created(f) {
            if let Some(i) = statements
                .iter()
                .position(|s| created(s).as_deref() == Some(name.as_str()))
            {
                statements.remove(i);
                at = Some(at.map_or(i, |a: usize| a.min(i)));
            }
        }
    }
    let at = at.unwrap_or(statements.len());
    for (n, f) in fixes.into_iter().enumerate() {
        statements.insert(at + n, f);
    }
    statements.join(";\n") + ";\n"
}

#[test]
fn rule_schemas() {
    let checked = check_schemas("tests/rules", Dialect::GoogleSql, Rule::all());
    assert!(checked >= 18);
}

#[test]
fn postgresql_rule_schemas() {
    let checked = check_schemas(
        "tests/rules_pg",
        Dialect::PostgreSql,
        &[
            Rule::MonotonicKey,
            Rule::MonotonicIndex,
            Rule::SequentialId,
            Rule::TimeOrderedUuid,
        ],
    );
    assert!(checked >= 8);
}

/// Checks every schema of `rules` under `dir`, read in `dialect`, and
/// returns how many there were.
fn check_schemas(dir: &str, dialect: Dialect, rules: &[Rule]) -> usize {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let config = Config::default().with_dialect(dialect);
    let mut checked = 0;
    let mut failures = Vec::new();
    for rule in rules {
        let dir = root.join(rule.id());
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "sql"))
            .collect();
        files.sort();
        let (mut bad, mut good) = (0, 0);
        for path in files {
            let text = std::fs::read_to_string(&path).unwrap();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            let (expected, input_errors, none) = expectations(&text);
            assert!(none || !expected.is_empty(), "{name}: no expectations");
            if none {
                good += 1
            } else {
                bad += 1
            }
            let report = advise(
                &[Source {
                    name: name.clone(),
                    text: text.clone(),
                }],
                &config,
            );
            if report.errors.len() != input_errors {
                failures.push(format!(
                    "{}/{name}: input errors {:?}",
                    rule.id(),
                    report.errors
                ));
            }
            let got: BTreeSet<_> = report
                .findings
                .iter()
                .filter(|f| f.rule == *rule)
                .map(key)
                .collect();
            if got != expected {
                failures.push(format!(
                    "{}/{name}:\n  expected {expected:?}\n  got      {got:?}\n{}",
                    rule.id(),
                    rowtree_advisor::to_text(&report, false)
                ));
            }
            for f in report.findings.iter().filter(|f| f.rule == *rule) {
                let Some(fix) = &f.fix else { continue };
                let fixed = apply_fix(dialect, &text, fix);
                let again = advise(
                    &[Source {
                        name: name.clone(),
                        text: fixed.clone(),
                    }],
                    &config,
                );
                if again.errors.len() > input_errors {
                    failures.push(format!(
                        "{}/{name}: the fix for {} does not load: {:?}\n{fixed}",
                        rule.id(),
                        f.object,
                        again.errors
                    ));
                }
                if again
                    .findings
                    .iter()
                    .any(|g| g.rule == f.rule && g.object == f.object)
                {
                    failures.push(format!(
                        "{}/{name}: the fix for {} leaves the finding:\n{fixed}",
                        rule.id(),
                        f.object
                    ));
                }
            }
            checked += 1;
        }
        assert!(
            bad > 0 && good > 0,
            "{}: needs positive and negative schemas",
            rule.id()
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    checked
}
