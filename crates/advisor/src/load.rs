//! Reading DDL files into one catalog, remembering where each object came
//! from.
//!
//! Every source is cut into statements by [`rowtree_parser::split_statements`]
//! (which knows where `;` is a token and where it sits inside a string or
//! comment), each statement is parsed with [`rowtree_parser::parse_statement`]
//! and applied to the running [`Catalog`] with [`Catalog::apply`], the same
//! validation `rowtree serve` runs on UpdateDatabaseDdl. Files are applied in
//! the order given, as one schema. All three are the dialect's
//! ([`rowtree_parser::split_statements_in`], [`rowtree_parser::parse_statement_in`],
//! [`Catalog::new_in`]), so a PostgreSQL-dialect schema is read as the
//! server would read it.
//!
//! For each CREATE TABLE / CREATE INDEX the loader records a [`Site`]: the
//! file, the line and column of the statement's first token (what findings
//! point at), the lines the statement covers, and the rule ids its
//! `-- rowtree:allow(...)` comments name (on those lines or the line just
//! before).
//!
//! A statement that does not parse or apply becomes an [`InputError`] at the
//! position the parser or the catalog names, and the loader goes on with
//! the next one. Two refusals are turned into findings instead, because the
//! advisor can say more than the error: a key over Spanner's limits
//! ([`crate::Rule::Limits`]), and an `AUTO_INCREMENT`/`SERIAL`/`bigserial`
//! column, which neither parser accepts but whose intent is clear
//! ([`crate::Rule::SequentialId`]).

use std::collections::HashMap;

use rowtree_parser::ast::{self, StatementKind};
use rowtree_parser::{parse_statement_in, split_statements_in, Position};
use rowtree_schema::limits::{MAX_INTERLEAVE_DEPTH, MAX_KEY_COLUMNS};
use rowtree_schema::Catalog;
use rowtree_types::Dialect;

use crate::{Finding, InputError, Rule, Severity, Source, MAX_SOURCE_BYTES};

/// Where an object was created and which rules its statement silences.
#[derive(Debug, Clone)]
pub(crate) struct Site {
    pub file: String,
    pub line: u32,
    pub column: u32,
    /// The statement's text, comments inside it included.
    pub text: String,
    /// Rule ids named by `rowtree:allow(...)` (or `all`), lowercased.
    pub allows: Vec<String>,
}

impl Site {
    /// The comments about column `column_name`, lowercased: the one on the
    /// line that defines it (the line whose first word is the name) and a
    /// comment-only line just above it.
    pub fn line_comment_for(&self, column_name: &str) -> Option<String> {
        let lines: Vec<&str> = self.text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let trimmed = line.trim_start().trim_start_matches('(').trim_start();
            let word: String = trimmed
                .trim_start_matches('`')
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !word.eq_ignore_ascii_case(column_name) {
                continue;
            }
            let mut comment = String::new();
            if let Some(above) = i.checked_sub(1).map(|j| lines[j].trim_start()) {
                if above.starts_with("--") || above.starts_with('#') {
                    comment.push_str(above);
                    comment.push('\n');
                }
            }
            if let Some(at) = line.find("--").or_else(|| line.find('#')) {
                comment.push_str(&line[at..]);
            }
            return (!comment.is_empty()).then(|| comment.to_ascii_lowercase());
        }
        None
    }
}

/// The schema the sources describe, and what could not be used.
pub(crate) struct Loaded {
    pub catalog: Catalog,
    /// Sites by lowercased object name.
    pub sites: HashMap<String, Site>,
    pub errors: Vec<InputError>,
    /// Findings made while loading (limits and AUTO_INCREMENT refusals).
    pub early_findings: Vec<Finding>,
    /// Source order of file names, for sorting findings.
    pub file_order: Vec<String>,
}

impl Loaded {
    /// Whether an inline comment on the statement that created the
    /// finding's object silences it.
    pub fn silenced(&self, finding: &Finding) -> bool {
        self.sites
            .get(&finding.object.to_ascii_lowercase())
            .is_some_and(|site| {
                site.allows
                    .iter()
                    .any(|a| a == "all" || a == finding.rule.id())
            })
    }

    /// The site of `object`, or a placeholder at the top of the first file
    /// (for objects whose statement is unknown, which should not happen).
    pub fn site(&self, object: &str) -> Site {
        self.sites
            .get(&object.to_ascii_lowercase())
            .cloned()
            .unwrap_or_else(|| Site {
                file: self.file_order.first().cloned().unwrap_or_default(),
                line: 1,
                column: 1,
                text: String::new(),
                allows: Vec::new(),
            })
    }
}

/// The rule ids named by `rowtree:allow(a, b)` markers in `lines`.
fn allows_in(lines: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for line in lines {
        let mut rest = *line;
        while let Some(at) = rest.find("rowtree:allow(") {
            rest = &rest[at + "rowtree:allow(".len()..];
            let Some(end) = rest.find(')') else { break };
            for id in rest[..end].split(',') {
                let id = id.trim().to_ascii_lowercase();
                if !id.is_empty() {
                    out.push(id);
                }
            }
            rest = &rest[end..];
        }
    }
    out
}

fn position(text: &str, offset: usize) -> (u32, u32) {
    let p = Position::of(text, offset);
    (
        u32::try_from(p.line).unwrap_or(u32::MAX),
        u32::try_from(p.column).unwrap_or(u32::MAX),
    )
}

/// Applies every statement of `sources`, in order, to one catalog.
pub(crate) fn load(sources: &[Source], dialect: Dialect) -> Loaded {
    let mut loaded = Loaded {
        catalog: Catalog::new_in(dialect),
        sites: HashMap::new(),
        errors: Vec::new(),
        early_findings: Vec::new(),
        file_order: sources.iter().map(|s| s.name.clone()).collect(),
    };
    for source in sources {
        if source.text.len() > MAX_SOURCE_BYTES {
            loaded.errors.push(InputError {
                file: source.name.clone(),
                line: 1,
                column: 1,
                message: format!(
                    "file is {} bytes; the advisor reads files of at most {} bytes (16 MiB)",
                    source.text.len(),
                    MAX_SOURCE_BYTES
                ),
            });
            continue;
        }
        let lines: Vec<&str> = source.text.lines().collect();
        for statement in split_statements_in(dialect, &source.text) {
            let (line, column) = position(&source.text, statement.offset);
            let (last_line, _) = position(&source.text, statement.offset + statement.text.len());
            let from = (line as usize).saturating_sub(2);
            let to = (last_line as usize).min(lines.len());
            let site = Site {
                file: source.name.clone(),
                line,
                column,
                text: statement.text.to_string(),
                allows: allows_in(lines.get(from..to).unwrap_or(&[])),
            };
            let error_at = |offset: usize, message: String| {
                let (line, column) = position(&source.text, statement.offset + offset);
                InputError {
                    file: source.name.clone(),
                    line,
                    column,
                    message,
                }
            };
            let parsed = match parse_statement_in(dialect, statement.text) {
                Ok(parsed) => parsed,
                Err(e) => {
                    let bit_reversed_default = loaded
                        .catalog
                        .database_option("default_sequence_kind")
                        .is_some_and(|v| {
                            v.trim_matches('\'')
                                .eq_ignore_ascii_case("bit_reversed_positive")
                        });
                    if let Some(f) =
                        auto_increment(&site, dialect).filter(|_| !bit_reversed_default)
                    {
                        loaded.sites.insert(f.object.to_ascii_lowercase(), site);
                        loaded.early_findings.push(f);
                    }
                    loaded.errors.push(error_at(e.offset, e.message.clone()));
                    continue;
                }
            };
            match loaded.catalog.apply(&parsed) {
                Ok((next, _effects)) => {
                    loaded.catalog = next;
                    if let Some(name) = created_name(&parsed) {
                        loaded.sites.insert(name.to_ascii_lowercase(), site);
                    }
                }
                Err(e) => {
                    if let Some(f) = over_limits(&loaded.catalog, &parsed, &site) {
                        loaded.sites.insert(f.object.to_ascii_lowercase(), site);
                        loaded.early_findings.push(f);
                        continue;
                    }
                    let offset = e.span().map_or(0, |s| s.start);
                    loaded.errors.push(error_at(offset, e.to_string()));
                }
            }
        }
    }
    loaded
}

fn created_name(stmt: &ast::Statement) -> Option<&str> {
    match &stmt.kind {
        StatementKind::CreateTable(t) => Some(&t.name.value),
        StatementKind::CreateIndex(i) => Some(&i.name.value),
        _ => None,
    }
}

fn finding(rule: Rule, severity: Severity, site: &Site, object: &str, message: String) -> Finding {
    Finding {
        rule,
        severity,
        file: site.file.clone(),
        line: site.line,
        column: site.column,
        object: object.to_string(),
        message,
        fix: None,
    }
}

/// A CREATE TABLE or CREATE INDEX the catalog refused because a key is
/// longer than 16 columns or an interleave chain deeper than 7 tables.
fn over_limits(catalog: &Catalog, stmt: &ast::Statement, site: &Site) -> Option<Finding> {
    match &stmt.kind {
        StatementKind::CreateTable(t) => {
            let mut depth = 1;
            let mut parent = t.interleave.as_ref().map(|i| i.parent.value.clone());
            // A child's key repeats its parent's, so its own length is the
            // full key length.
            let key_len = t.primary_key.len();
            while let Some(name) = parent {
                depth += 1;
                if depth > MAX_INTERLEAVE_DEPTH + 1 {
                    break;
                }
                let table = catalog.table(&name)?;
                parent = table
                    .parent
                    .and_then(|p| catalog.table_by_id(p.table))
                    .map(|p| p.name.clone());
            }
            if depth > MAX_INTERLEAVE_DEPTH {
                return Some(finding(
                    Rule::Limits,
                    Severity::Error,
                    site,
                    &t.name.value,
                    format!(
                        "Interleaving {} here makes a chain of {depth} tables; Spanner allows a root plus six levels ({MAX_INTERLEAVE_DEPTH} tables), and refuses the statement. Interleave it in a higher ancestor or keep it as a root table keyed by the parent's key.",
                        t.name.value
                    ),
                ));
            }
            if key_len > MAX_KEY_COLUMNS {
                return Some(finding(
                    Rule::Limits,
                    Severity::Error,
                    site,
                    &t.name.value,
                    format!(
                        "The primary key of {} has {key_len} columns; Spanner allows at most {MAX_KEY_COLUMNS} (counting the columns inherited from interleave parents) and refuses the statement. Key by fewer columns, for example a hash or UUID of the natural key, and keep the rest as ordinary columns.",
                        t.name.value
                    ),
                ));
            }
            None
        }
        StatementKind::CreateIndex(i) => {
            let table = catalog.table(&i.table.value)?;
            let mut full: Vec<String> = i
                .keys
                .iter()
                .map(|k| k.column.value.to_ascii_lowercase())
                .collect();
            for k in &table.primary_key {
                let name = table.columns[k.column].name.to_ascii_lowercase();
                if !full.contains(&name) {
                    full.push(name);
                }
            }
            if full.len() > MAX_KEY_COLUMNS {
                return Some(finding(
                    Rule::Limits,
                    Severity::Error,
                    site,
                    &i.name.value,
                    format!(
                        "The index {} is stored under {} key columns (its own {} plus the table's key columns it does not name); Spanner allows at most {MAX_KEY_COLUMNS} and refuses the statement. Index fewer columns and STORING the others.",
                        i.name.value,
                        full.len(),
                        i.keys.len()
                    ),
                ));
            }
            None
        }
        _ => None,
    }
}

/// A CREATE TABLE that the parser refused and that declares an
/// AUTO_INCREMENT or SERIAL column: a counter as key, whatever else is wrong
/// (unless the database's `default_sequence_kind` is bit-reversed, which
/// the caller checks: Spanner then fills such columns from a bit-reversed
/// sequence).
fn auto_increment(site: &Site, dialect: Dialect) -> Option<Finding> {
    let upper = site.text.to_ascii_uppercase();
    let words: Vec<&str> = upper
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    if words.len() < 3 || words[0] != "CREATE" || words[1] != "TABLE" {
        return None;
    }
    let keyword = words.iter().find(|w| {
        matches!(
            **w,
            "AUTO_INCREMENT" | "AUTOINCREMENT" | "SERIAL" | "BIGSERIAL"
        )
    })?;
    // The name as written: the third word of the original text.
    let name: String = site
        .text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .nth(2)?
        .to_string();
    let name = if name.eq_ignore_ascii_case("IF") {
        site.text
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .nth(5)?
            .to_string()
    } else {
        name
    };
    Some(finding(
        Rule::SequentialId,
        Severity::Error,
        site,
        &name,
        format!(
            "{name} declares a {keyword} column: values handed out in increasing order, so as a key every insert lands after all existing rows, in the table's last split on one node. {}",
            match dialect {
                Dialect::PostgreSql => format!("Spanner's PostgreSQL dialect has no {keyword} unless the database's default_sequence_kind is bit-reversed; use a bit-reversed sequence (CREATE SEQUENCE ... BIT_REVERSED_POSITIVE with DEFAULT nextval('...'), or GENERATED BY DEFAULT AS IDENTITY (BIT_REVERSED_POSITIVE)) or spanner.generate_uuid()."),
                _ => format!("Spanner's GoogleSQL has no {keyword}; use a bit-reversed sequence (CREATE SEQUENCE ... OPTIONS (sequence_kind = 'bit_reversed_positive') with DEFAULT (GET_NEXT_SEQUENCE_VALUE(SEQUENCE ...))) or GENERATE_UUID()."),
            }
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(sources: &[Source]) -> Loaded {
        super::load(sources, Dialect::GoogleSql)
    }

    fn source(text: &str) -> Vec<Source> {
        vec![Source {
            name: "s.sql".into(),
            text: text.into(),
        }]
    }

    #[test]
    fn errors_are_placed_and_loading_goes_on() {
        let loaded = load(&source(
            "CREATE TABLE A (X INT64) PRIMARY KEY (Y);\n\n  CREATE TABEL B;\nCREATE TABLE C (X INT64) PRIMARY KEY (X);",
        ));
        let at: Vec<(u32, u32)> = loaded.errors.iter().map(|e| (e.line, e.column)).collect();
        assert_eq!(at, vec![(1, 39), (3, 10)]);
        assert!(loaded.catalog.table("C").is_some());
        let site = &loaded.sites["c"];
        assert_eq!((site.line, site.column), (4, 1));
    }

    #[test]
    fn oversized_files_are_refused_unread() {
        let text = " ".repeat(MAX_SOURCE_BYTES + 1);
        let loaded = load(&source(&text));
        assert_eq!(loaded.errors.len(), 1);
        assert!(loaded.errors[0].message.contains("at most"));
    }

    #[test]
    fn allow_comments_cover_the_statement_and_the_line_before() {
        let loaded = load(&source(
            "-- rowtree:allow(limits)\nCREATE TABLE A (X INT64) PRIMARY KEY (X);\n-- unrelated\n\nCREATE TABLE B (\n  X INT64, -- rowtree:allow(all)\n) PRIMARY KEY (X);\nCREATE TABLE C (X INT64) PRIMARY KEY (X);",
        ));
        assert_eq!(loaded.sites["a"].allows, vec!["limits"]);
        assert_eq!(loaded.sites["b"].allows, vec!["all"]);
        assert!(loaded.sites["c"].allows.is_empty());
    }

    #[test]
    fn auto_increment_is_a_finding_unless_sequences_default_to_bit_reversed() {
        let table = "CREATE TABLE T (Id INT64 NOT NULL AUTO_INCREMENT) PRIMARY KEY (Id);";
        let plain = load(&source(table));
        assert_eq!(plain.early_findings.len(), 1);
        assert_eq!(plain.early_findings[0].object, "T");
        let with_default = load(&source(&format!(
            "ALTER DATABASE db SET OPTIONS (default_sequence_kind = 'bit_reversed_positive');\n{table}"
        )));
        assert!(with_default.early_findings.is_empty());
        assert_eq!(with_default.errors.len(), 1);
    }

    #[test]
    fn bigserial_is_a_finding_in_postgresql() {
        let table = "CREATE TABLE t (id bigserial NOT NULL, PRIMARY KEY (id));";
        let loaded = super::load(&source(table), Dialect::PostgreSql);
        assert_eq!(loaded.early_findings.len(), 1);
        assert_eq!(loaded.early_findings[0].object, "t");
        assert!(loaded.early_findings[0].message.contains("nextval"));
        assert_eq!(loaded.errors.len(), 1);
    }

    #[test]
    fn allow_markers() {
        assert_eq!(
            allows_in(&[
                "-- rowtree:allow(monotonic-key, Limits)",
                "x rowtree:allow(all)"
            ]),
            vec!["monotonic-key", "limits", "all"]
        );
    }
}
