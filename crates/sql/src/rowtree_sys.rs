//! ROWTREE_SYS: the schema advisor's findings as tables.
//!
//! Two tables, computed when a query reads them (as SPANNER_SYS's are):
//!
//! | table | one row per |
//! |---|---|
//! | `SCHEMA_ADVICE` | finding of the schema advisor on the database's schema now |
//! | `HOT_SPLIT_ADVICE` | hot split of `SPANNER_SYS.SPLIT_STATS_TOP_MINUTE`, explained |
//!
//! `SCHEMA_ADVICE` runs [`rowtree_advisor::advise`] over the schema as
//! `GetDatabaseDdl` prints it, so it always describes the schema the query
//! sees, whichever client changed it last.
//!
//! `HOT_SPLIT_ADVICE` is the runtime half: for each split the load history
//! reports hot (a CPU score of at least 50 in a one-minute interval), it
//! names the table or index whose keys the split holds and that object's
//! key columns, and, when the advisor has a finding on that object (or, for
//! an index, on its table), the rule that explains the hotspot and its fix.
//! A hot split no rule explains is still listed, with `RULE` NULL: the
//! load is then on particular keys (a hot row, a skewed workload) rather
//! than on the shape of the key.

use rowtree_advisor::{Finding, Report, Rule};
use rowtree_db::Database;
use rowtree_kv::Granularity;
use rowtree_schema::Catalog;
use rowtree_types::{Timestamp, Type, Value};

use rowtree_db::keys::{describe_limit, describe_start};
use rowtree_kv::history::REPORTED_HOT_SCORE;

/// The schema name.
pub const SCHEMA_NAME: &str = "ROWTREE_SYS";

/// The advisor's report on `catalog`'s schema (read, and fixed, in the
/// catalog's dialect).
pub fn advice(catalog: &Catalog) -> Report {
    let text = catalog.ddl().join(";\n\n");
    rowtree_advisor::advise(
        &[rowtree_advisor::Source {
            name: "schema".into(),
            text,
        }],
        &rowtree_advisor::Config::default().with_dialect(catalog.dialect()),
    )
}

/// The columns of `SCHEMA_ADVICE`.
pub(crate) fn schema_advice_columns() -> Vec<(&'static str, Type)> {
    vec![
        ("RULE", Type::String),
        ("SEVERITY", Type::String),
        ("OBJECT", Type::String),
        ("MESSAGE", Type::String),
        ("FIX", Type::String),
    ]
}

/// The columns of `HOT_SPLIT_ADVICE`.
pub(crate) fn hot_split_columns() -> Vec<(&'static str, Type)> {
    vec![
        ("INTERVAL_END", Type::Timestamp),
        ("SPLIT_START", Type::String),
        ("SPLIT_LIMIT", Type::String),
        ("CPU_USAGE_SCORE", Type::Int64),
        ("OBJECT", Type::String),
        ("KEY_COLUMNS", Type::Array(Box::new(Type::String))),
        ("RULE", Type::String),
        ("EXPLANATION", Type::String),
        ("FIX", Type::String),
    ]
}

fn string_or_null(s: Option<&str>) -> Value {
    s.map_or(Value::Null, |s| Value::String(s.to_string()))
}

/// `SCHEMA_ADVICE`: one row per finding, in the advisor's order.
pub(crate) fn schema_advice_rows(db: &Database) -> Vec<Vec<Value>> {
    advice(&db.catalog())
        .findings
        .iter()
        .map(|f| {
            vec![
                Value::String(f.rule.id().to_string()),
                Value::String(f.severity.as_str().to_string()),
                Value::String(f.object.clone()),
                Value::String(f.message.clone()),
                string_or_null(f.fix.as_deref()),
            ]
        })
        .collect()
}

/// The rules about where writes land (the ones that explain a hot split).
fn is_hotspot(rule: Rule) -> bool {
    matches!(
        rule,
        Rule::MonotonicKey | Rule::MonotonicIndex | Rule::SequentialId | Rule::TimeOrderedUuid
    )
}

/// The finding that explains load on `object`: one on the object itself, or,
/// for an index, one on its table; hotspot rules first.
fn explaining<'a>(catalog: &Catalog, findings: &'a [Finding], object: &str) -> Option<&'a Finding> {
    let table_of_index = catalog
        .index(object)
        .and_then(|ix| catalog.table_by_id(ix.table))
        .map(|t| t.name.clone());
    let on = |f: &&Finding| {
        f.object.eq_ignore_ascii_case(object)
            || table_of_index
                .as_deref()
                .is_some_and(|t| f.object.eq_ignore_ascii_case(t) && is_hotspot(f.rule))
    };
    findings
        .iter()
        .filter(on)
        .min_by_key(|f| (!is_hotspot(f.rule), f.severity))
}

/// The key columns of a table or index, as `Name` or `Name DESC`.
fn key_columns(catalog: &Catalog, object: &str) -> Vec<String> {
    let show = |name: &str, desc: bool| {
        if desc {
            format!("{name} DESC")
        } else {
            name.to_string()
        }
    };
    if let Some(table) = catalog.table(object) {
        return table
            .primary_key
            .iter()
            .map(|k| show(&table.columns[k.column].name, k.desc))
            .collect();
    }
    if let Some(index) = catalog.index(object) {
        if let Some(table) = catalog.table_by_id(index.table) {
            return index
                .keys
                .iter()
                .map(|k| show(&table.columns[k.column].name, k.desc))
                .collect();
        }
    }
    Vec::new()
}

/// A hot split explained: where it is, how hot, whose keys it holds, and
/// the rule (if any) that explains it.
#[derive(Debug, Clone, PartialEq)]
pub struct HotSplitAdvice {
    /// End of the one-minute interval, nanoseconds since the epoch.
    pub interval_end: u64,
    /// The split's start and limit in human terms (as SPANNER_SYS shows them).
    pub start: String,
    pub limit: String,
    /// CPU usage score (100: one node's CPU for the whole interval).
    pub cpu_score: i64,
    /// The table or index whose keys the split holds.
    pub object: Option<String>,
    /// That object's key columns (`Name` or `Name DESC`).
    pub key_columns: Vec<String>,
    /// The rule that explains the load, if a finding does.
    pub rule: Option<Rule>,
    /// In words: the finding's message, or why no rule applies.
    pub explanation: String,
    /// The finding's fix.
    pub fix: Option<String>,
}

/// Every hot split of `db`'s one-minute history, oldest interval first,
/// then hottest first, explained with `findings` (the advisor's on `db`'s
/// schema).
pub fn hot_splits(db: &Database, findings: &[Finding]) -> Vec<HotSplitAdvice> {
    let catalog = db.catalog();
    let mut out = Vec::new();
    for (end, stats) in db.split_history().intervals(Granularity::Minute) {
        let mut hot: Vec<_> = stats
            .iter()
            .filter(|s| s.cpu_score >= REPORTED_HOT_SCORE)
            .collect();
        hot.sort_by(|a, b| {
            b.cpu_score
                .total_cmp(&a.cpu_score)
                .then_with(|| a.start.cmp(&b.start))
        });
        for s in hot {
            let object = rowtree_db::keys::root_object_name(&catalog, &s.start);
            let start = describe_start(&catalog, &s.start);
            let limit = describe_limit(&catalog, &s.start, s.limit.as_deref());
            let (rule, explanation, fix) = match object.as_deref() {
                None => (
                    None,
                    "The split holds no table's keys (the key space before the first table)."
                        .to_string(),
                    None,
                ),
                Some(name) => match explaining(&catalog, findings, name) {
                    Some(f) => (
                        Some(f.rule),
                        format!("{} (finding on {})", f.message, f.object),
                        f.fix.clone(),
                    ),
                    None => (
                        None,
                        format!(
                            "No schema rule explains this split: the load on {name} \
                             [{start} .. {limit}) comes from the workload's choice of \
                             keys (a few hot rows, or a skewed key distribution), not \
                             from the shape of the key."
                        ),
                        None,
                    ),
                },
            };
            out.push(HotSplitAdvice {
                interval_end: end,
                start,
                limit,
                cpu_score: s.cpu_score.round().clamp(0.0, i64::MAX as f64) as i64,
                key_columns: object
                    .as_deref()
                    .map(|o| key_columns(&catalog, o))
                    .unwrap_or_default(),
                object,
                rule,
                explanation,
                fix,
            });
        }
    }
    out
}

/// `HOT_SPLIT_ADVICE`: [`hot_splits`] as rows.
pub(crate) fn hot_split_rows(db: &Database) -> Vec<Vec<Value>> {
    let findings = advice(&db.catalog()).findings;
    hot_splits(db, &findings)
        .into_iter()
        .map(|h| {
            vec![
                Timestamp::from_nanos(i128::from(h.interval_end))
                    .map_or(Value::Null, Value::Timestamp),
                Value::String(h.start),
                Value::String(h.limit),
                Value::Int64(h.cpu_score),
                string_or_null(h.object.as_deref()),
                Value::Array(h.key_columns.into_iter().map(Value::String).collect()),
                string_or_null(h.rule.map(|r| r.id())),
                Value::String(h.explanation),
                string_or_null(h.fix.as_deref()),
            ]
        })
        .collect()
}

/// The findings on `after` that `before` did not have (matched by rule,
/// object and message): what a schema change introduced.
pub fn new_findings(before: &Catalog, after: &Catalog) -> Vec<Finding> {
    let old = advice(before).findings;
    advice(after)
        .findings
        .into_iter()
        .filter(|f| {
            !old.iter()
                .any(|o| o.rule == f.rule && o.object == f.object && o.message == f.message)
        })
        .collect()
}
