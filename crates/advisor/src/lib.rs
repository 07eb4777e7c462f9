//! The schema advisor: finds, in a GoogleSQL or PostgreSQL-dialect schema
//! ([`Config::with_dialect`]), the key designs that
//! Spanner cannot spread over its nodes, and says what to write instead.
//!
//! Spanner keeps each table (and each non-interleaved index) sorted by key
//! and serves every contiguous key range, a *split*, from one node. It adds
//! split points where load concentrates, but a key whose new values always
//! sort after (or before) all existing ones sends every insert to the last
//! split: cutting it only makes a new last split that is just as hot, so one
//! node takes the whole write load however many the instance has
//! (docs/hotspots.md shows it with the simulator). These mistakes are
//! invisible in small tests, so the advisor looks for them in the DDL.
//!
//! How it works:
//!
//! 1. The loader (`load.rs`) cuts each [`Source`] into statements with the
//!    database's own splitter and parser, applies them in order to one
//!    [`rowtree_schema::Catalog`], and remembers where each table and index
//!    was created (file, line, column) and which rules its statement
//!    silences (`-- rowtree:allow(rule-id)`). A statement that does not
//!    parse or apply becomes an [`InputError`] and the rest is still
//!    analysed.
//! 2. Each rule (`rules/`) reads the final catalog and emits
//!    [`Finding`]s, each with a paste-able DDL fix, in the schema's
//!    dialect, where one exists.
//! 3. [`advise`] drops the findings that inline comments or the [`Config`]
//!    silence, applies severity overrides and sorts the rest by place.
//! 4. The renderers ([`to_text`], [`to_json`], [`to_sarif`]) print a [`Report`] as text, JSON or SARIF.
//!
//! The advisor is offline and deterministic: the same files give the same
//! report, so it can run in CI.

mod classify;
mod config;
mod ddl;
mod load;
mod render;
mod rules;

use serde::Serialize;

pub use config::Config;
pub use render::{to_json, to_sarif, to_text};
pub use rowtree_types::Dialect;

/// Largest source file the advisor reads (16 MiB); a larger one is refused
/// with an [`InputError`] rather than read into memory.
pub const MAX_SOURCE_BYTES: usize = 16 * 1024 * 1024;

/// One DDL file: its name (as it should appear in findings) and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    pub name: String,
    pub text: String,
}

/// The advisor's findings and the input it could not use.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    pub findings: Vec<Finding>,
    pub errors: Vec<InputError>,
}

impl Report {
    /// The process exit status `rowtree advise` uses: 2 when some input was
    /// unusable, else 1 when an error-level finding exists, else 0.
    pub fn exit_code(&self) -> i32 {
        if !self.errors.is_empty() {
            2
        } else if self.findings.iter().any(|f| f.severity == Severity::Error) {
            1
        } else {
            0
        }
    }
}

/// One piece of advice about one table or index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub rule: Rule,
    pub severity: Severity,
    /// The source file of the statement that created `object`.
    pub file: String,
    /// 1-based line and column of that statement's first token.
    pub line: u32,
    pub column: u32,
    /// The table or index the fix changes, as written in the DDL.
    pub object: String,
    /// What is wrong and why, naming the mechanism.
    pub message: String,
    /// Paste-able DDL, in the dialect of the sources, that fixes it, when
    /// there is one.
    pub fix: Option<String>,
}

/// A statement (or file) the advisor could not use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InputError {
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub message: String,
}

/// How much a finding matters. Only `Error` makes `rowtree advise` fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Info,
}

impl Severity {
    /// `error`, `warning` or `info`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }

    /// The severity named `name` (as [`Severity::as_str`] spells it).
    pub fn from_name(name: &str) -> Option<Severity> {
        match name.to_ascii_lowercase().as_str() {
            "error" => Some(Severity::Error),
            "warning" => Some(Severity::Warning),
            "info" => Some(Severity::Info),
            _ => None,
        }
    }
}

/// The rules, with stable ids (see `docs/advisor/<id>.md` for each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rule {
    MonotonicKey,
    MonotonicIndex,
    SequentialId,
    TimeOrderedUuid,
    InterleaveCandidate,
    DescHistory,
    Limits,
    IndexStoring,
    SparseIndex,
}

const ALL_RULES: [Rule; 9] = [
    Rule::MonotonicKey,
    Rule::MonotonicIndex,
    Rule::SequentialId,
    Rule::TimeOrderedUuid,
    Rule::InterleaveCandidate,
    Rule::DescHistory,
    Rule::Limits,
    Rule::IndexStoring,
    Rule::SparseIndex,
];

impl Rule {
    /// The stable id used in output, suppressions and the config file.
    pub fn id(&self) -> &'static str {
        match self {
            Rule::MonotonicKey => "monotonic-key",
            Rule::MonotonicIndex => "monotonic-index",
            Rule::SequentialId => "sequential-id",
            Rule::TimeOrderedUuid => "time-ordered-uuid",
            Rule::InterleaveCandidate => "interleave-candidate",
            Rule::DescHistory => "desc-history",
            Rule::Limits => "limits",
            Rule::IndexStoring => "index-storing",
            Rule::SparseIndex => "sparse-index",
        }
    }

    /// Every rule, in a fixed order.
    pub fn all() -> &'static [Rule] {
        &ALL_RULES
    }

    /// The rule with id `id`.
    pub fn from_id(id: &str) -> Option<Rule> {
        ALL_RULES
            .iter()
            .copied()
            .find(|r| r.id().eq_ignore_ascii_case(id.trim()))
    }

    /// One line saying what the rule looks for (for `--help` and SARIF).
    pub fn summary(&self) -> &'static str {
        match self {
            Rule::MonotonicKey => {
                "A root table's first key column only grows (time, commit timestamp, counter): every insert goes to the last split, on one node."
            }
            Rule::MonotonicIndex => {
                "A non-interleaved index's first key column only grows: every index write goes to the index's last split."
            }
            Rule::SequentialId => {
                "Surrogate ids handed out in order (a counter table, AUTO_INCREMENT/SERIAL) used as the first key."
            }
            Rule::TimeOrderedUuid => {
                "A key filled with a time-ordered id (UUID v1/v6/v7, ULID, KSUID, Snowflake, timestamp-prefixed string)."
            }
            Rule::InterleaveCandidate => {
                "A table keyed by another table's full key but not interleaved in it, or a large column inside a row tree."
            }
            Rule::DescHistory => {
                "A history table keyed (parent key, timestamp ASC) where newest-first reads are typical."
            }
            Rule::Limits => {
                "Spanner's key limits: 16 key columns, 8 KiB keys, 7 interleave levels, no STRING(MAX)/BYTES(MAX) keys."
            }
            Rule::IndexStoring => "An index whose STORING clause copies most of its table.",
            Rule::SparseIndex => {
                "An index on a mostly-NULL column without NULL_FILTERED, which stores an entry for every NULL."
            }
        }
    }

    /// Where the rule's documentation lives in the repository.
    pub fn doc_path(&self) -> String {
        format!("docs/advisor/{}.md", self.id())
    }
}

impl Serialize for Rule {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.id())
    }
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

/// Errors of the advisor's own inputs (the config file).
#[derive(Debug, thiserror::Error)]
pub enum AdviseError {
    /// The config file is not valid TOML or has unknown keys.
    #[error("invalid advisor config: {0}")]
    ConfigSyntax(String),
    /// The config file names a rule that does not exist.
    #[error("unknown rule id `{0}` in the advisor config (known: {known})", known = known_rules())]
    UnknownRule(String),
    /// The config file names a severity that does not exist.
    #[error("unknown severity `{0}` in the advisor config (use error, warning or info)")]
    UnknownSeverity(String),
    /// `shard_count` out of range.
    #[error("shard_count must be between 2 and 65536, not {0}")]
    ShardCount(i64),
}

fn known_rules() -> String {
    ALL_RULES
        .iter()
        .map(|r| r.id())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Reads `sources` in order as one schema of `config`'s dialect (GoogleSQL
/// unless [`Config::with_dialect`] says otherwise) and reports what the rules find,
/// minus what inline comments and `config` silence.
pub fn advise(sources: &[Source], config: &Config) -> Report {
    let loaded = load::load(sources, config.dialect());
    let ctx = rules::Context::new(&loaded, config);
    let mut findings = rules::run(&ctx);
    findings.extend(loaded.early_findings.iter().cloned());
    let mut kept: Vec<Finding> = findings
        .into_iter()
        .filter(|f| !loaded.silenced(f) && !config.silences(f.rule, &f.object))
        .map(|mut f| {
            f.severity = config.severity(f.rule).unwrap_or(f.severity);
            f
        })
        .collect();
    let file_index = |f: &Finding| {
        loaded
            .file_order
            .iter()
            .position(|n| *n == f.file)
            .unwrap_or(usize::MAX)
    };
    kept.sort_by(|a, b| {
        (file_index(a), a.line, a.column, a.rule, &a.object).cmp(&(
            file_index(b),
            b.line,
            b.column,
            b.rule,
            &b.object,
        ))
    });
    kept.dedup();
    Report {
        findings: kept,
        errors: loaded.errors.clone(),
    }
}
