//! Printing a [`Report`]: text for people, JSON for scripts, SARIF 2.1.0 for
//! code-scanning tools.
//!
//! * Text: one block per finding, `file:line:column: severity[rule] object:
//!   message`, then the fix indented; input errors as `file:line:column:
//!   input error: message`; a summary line. Colour (ANSI) only when asked,
//!   which the CLI does when stdout is a terminal.
//! * JSON: `{"findings":[{rule, severity, file, line, column, object,
//!   message, fix}], "errors":[{file, line, column, message}]}`.
//! * SARIF: one run whose driver lists every rule (id, name, descriptions,
//!   help, default level); each finding is a result with `ruleId`, `level`
//!   (`error`, `warning`, `note`), the message (followed by the fix, so a
//!   viewer that shows only the message still shows it), a physical
//!   location, and `properties.object` / `properties.fix`. Input errors are
//!   tool execution notifications of the run's invocation.

use serde_json::{json, Value};

use crate::{Report, Rule, Severity};

const RESET: &str = "\x1b[0m";
const BOLD: &str = "\x1b[1m";
const DIM: &str = "\x1b[2m";

fn severity_colour(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "\x1b[1;31m",
        Severity::Warning => "\x1b[1;33m",
        Severity::Info => "\x1b[1;36m",
    }
}

/// The report as text, with ANSI colours when `color` is true.
pub fn to_text(report: &Report, color: bool) -> String {
    let paint = |code: &str, s: &str| {
        if color {
            format!("{code}{s}{RESET}")
        } else {
            s.to_string()
        }
    };
    let mut out = String::new();
    for e in &report.errors {
        out.push_str(&format!(
            "{}:{}:{}: {}: {}\n",
            e.file,
            e.line,
            e.column,
            paint("\x1b[1;31m", "input error"),
            e.message
        ));
    }
    for f in &report.findings {
        out.push_str(&format!(
            "{}:{}:{}: {}[{}] {}: {}\n",
            f.file,
            f.line,
            f.column,
            paint(severity_colour(f.severity), f.severity.as_str()),
            f.rule.id(),
            paint(BOLD, &f.object),
            f.message
        ));
        if let Some(fix) = &f.fix {
            out.push_str(&paint(DIM, "  fix:"));
            out.push('\n');
            for line in fix.lines() {
                out.push_str("    ");
                out.push_str(line);
                out.push('\n');
            }
        }
        out.push('\n');
    }
    let count = |s: Severity| report.findings.iter().filter(|f| f.severity == s).count();
    out.push_str(&format!(
        "{} finding(s): {} error(s), {} warning(s), {} info; {} input error(s)\n",
        report.findings.len(),
        count(Severity::Error),
        count(Severity::Warning),
        count(Severity::Info),
        report.errors.len()
    ));
    out
}

/// The report as JSON: `{"findings": [...], "errors": [...]}`.
pub fn to_json(report: &Report) -> String {
    serde_json::to_string_pretty(report).expect("a report always serializes")
}

/// SARIF's level for a severity.
fn sarif_level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// The default severity of each rule's strongest findings, for SARIF's
/// `defaultConfiguration`.
fn default_severity(rule: Rule) -> Severity {
    match rule {
        Rule::MonotonicKey
        | Rule::MonotonicIndex
        | Rule::SequentialId
        | Rule::TimeOrderedUuid
        | Rule::Limits => Severity::Error,
        Rule::IndexStoring => Severity::Warning,
        Rule::InterleaveCandidate | Rule::DescHistory | Rule::SparseIndex => Severity::Info,
    }
}

/// A file name as a relative URI reference: characters other than
/// unreserved ones and `/` are percent-encoded.
fn uri(path: &str) -> String {
    let mut out = String::new();
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn location(file: &str, line: u32, column: u32) -> Value {
    json!({
        "physicalLocation": {
            "artifactLocation": { "uri": uri(file) },
            "region": { "startLine": line.max(1), "startColumn": column.max(1) }
        }
    })
}

/// The report as a SARIF 2.1.0 log.
pub fn to_sarif(report: &Report) -> String {
    let rules: Vec<Value> = Rule::all()
        .iter()
        .map(|r| {
            json!({
                "id": r.id(),
                "name": r.id(),
                "shortDescription": { "text": r.summary() },
                "help": {
                    "text": format!("{} See {} in the Rowtree repository.", r.summary(), r.doc_path())
                },
                "defaultConfiguration": { "level": sarif_level(default_severity(*r)) }
            })
        })
        .collect();
    let results: Vec<Value> = report
        .findings
        .iter()
        .map(|f| {
            let index = Rule::all().iter().position(|r| *r == f.rule).unwrap_or(0);
            let text = match &f.fix {
                Some(fix) => format!("{}\n\nFix:\n{}", f.message, fix),
                None => f.message.clone(),
            };
            let mut properties = json!({ "object": f.object });
            if let Some(fix) = &f.fix {
                properties["fix"] = json!(fix);
            }
            json!({
                "ruleId": f.rule.id(),
                "ruleIndex": index,
                "level": sarif_level(f.severity),
                "message": { "text": text },
                "locations": [location(&f.file, f.line, f.column)],
                "properties": properties
            })
        })
        .collect();
    let notifications: Vec<Value> = report
        .errors
        .iter()
        .map(|e| {
            json!({
                "level": "error",
                "message": { "text": e.message },
                "locations": [location(&e.file, e.line, e.column)]
            })
        })
        .collect();
    let log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": {
                    "name": "rowtree-advise",
                    "version": env!("CARGO_PKG_VERSION"),
                    "rules": rules
                }
            },
            "invocations": [{
                "executionSuccessful": report.errors.is_empty(),
                "toolExecutionNotifications": notifications
            }],
            "results": results
        }]
    });
    serde_json::to_string_pretty(&log).expect("a SARIF log always serializes")
}
