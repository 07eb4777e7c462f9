//! SPANNER_SYS: the database's split statistics as tables.
//!
//! Unlike INFORMATION_SCHEMA (computed from the catalog when the statement
//! is bound), these tables read the database's split state when the query
//! runs: the binder plans a `NodeKind::SystemTable`
//! scan, and the executor asks its [`DataSource`](crate::DataSource) for the
//! database ([`DataSource::database`](crate::DataSource::database)) and
//! computes the rows from [`rowtree_db::Database::split_history`] and the
//! live split map.
//!
//! | table | one row per |
//! |---|---|
//! | `SPLIT_STATS_TOP_MINUTE`, `_10MINUTE`, `_HOUR` | split (key range) and interval with a `CPU_USAGE_SCORE` of at least 50 (Spanner's columns) |
//! | `SPLITS` (Rowtree's own) | split now: id, node, key range, tables, load |
//!
//! Keys are shown in human terms, as `rowtree_db::keys::describe` prints
//! them: `Users(42)`, `Users(42)/Events(7)`, `UsersByLastAccess("x")`. A
//! boundary at the start of a table or index (no key values) is shown as
//! `Users(<begin>)`; the limit of a split that ends where the next table or
//! index begins is the end of the split's own table, `Users(<end>)`; the
//! first key of the key space is `<begin>` and its end `<end>`.

use rowtree_db::Database;
use rowtree_kv::{Granularity, IntervalStat};
use rowtree_schema::Catalog;
use rowtree_types::{Timestamp, Type, Value};

/// The schema name.
pub const SCHEMA_NAME: &str = "SPANNER_SYS";

/// A SPANNER_SYS table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SysTable {
    /// `SPLIT_STATS_TOP_MINUTE`, `SPLIT_STATS_TOP_10MINUTE`, `SPLIT_STATS_TOP_HOUR`.
    SplitStatsTop(Granularity),
    /// `SPLITS`: every split now.
    Splits,
    /// `ROWTREE_SYS.SCHEMA_ADVICE`: the schema advisor's findings
    /// (see [`crate::rowtree_sys`]).
    SchemaAdvice,
    /// `ROWTREE_SYS.HOT_SPLIT_ADVICE`: hot splits explained by name and rule.
    HotSplitAdvice,
}

/// The smallest `CPU_USAGE_SCORE` the `SPLIT_STATS_TOP_*` tables report (a
/// warm split).
pub const MIN_REPORTED_SCORE: f64 = rowtree_kv::history::REPORTED_HOT_SCORE;

fn string_array() -> Type {
    Type::Array(Box::new(Type::String))
}

impl SysTable {
    /// The table at `path` (`["SPANNER_SYS", "SPLITS"]`, any case), if any.
    pub fn lookup(path: &[&str]) -> Option<SysTable> {
        let &[schema, name] = path else {
            return None;
        };
        [
            SysTable::SplitStatsTop(Granularity::Minute),
            SysTable::SplitStatsTop(Granularity::TenMinutes),
            SysTable::SplitStatsTop(Granularity::Hour),
            SysTable::Splits,
            SysTable::SchemaAdvice,
            SysTable::HotSplitAdvice,
        ]
        .into_iter()
        .find(|t| t.schema().eq_ignore_ascii_case(schema) && t.name().eq_ignore_ascii_case(name))
    }

    /// The table's schema: `SPANNER_SYS`, or `ROWTREE_SYS` for Rowtree's own
    /// advice tables.
    pub fn schema(&self) -> &'static str {
        match self {
            SysTable::SchemaAdvice | SysTable::HotSplitAdvice => crate::rowtree_sys::SCHEMA_NAME,
            _ => SCHEMA_NAME,
        }
    }

    /// The table's name (without the schema).
    pub fn name(&self) -> &'static str {
        match self {
            SysTable::SplitStatsTop(Granularity::Minute) => "SPLIT_STATS_TOP_MINUTE",
            SysTable::SplitStatsTop(Granularity::TenMinutes) => "SPLIT_STATS_TOP_10MINUTE",
            SysTable::SplitStatsTop(Granularity::Hour) => "SPLIT_STATS_TOP_HOUR",
            SysTable::Splits => "SPLITS",
            SysTable::SchemaAdvice => "SCHEMA_ADVICE",
            SysTable::HotSplitAdvice => "HOT_SPLIT_ADVICE",
        }
    }

    /// The columns, in order.
    pub fn columns(&self) -> Vec<(String, Type)> {
        let cols: Vec<(&str, Type)> = match self {
            SysTable::SplitStatsTop(_) => vec![
                ("INTERVAL_END", Type::Timestamp),
                ("SPLIT_START", Type::String),
                ("SPLIT_LIMIT", Type::String),
                ("CPU_USAGE_SCORE", Type::Int64),
                ("AFFECTED_TABLES", string_array()),
                ("UNSPLITTABLE_REASONS", string_array()),
            ],
            SysTable::Splits => vec![
                ("SPLIT_ID", Type::Int64),
                ("NODE", Type::Int64),
                ("SPLIT_START", Type::String),
                ("SPLIT_LIMIT", Type::String),
                ("AFFECTED_TABLES", string_array()),
                ("CPU_USAGE_SCORE", Type::Int64),
                ("READS_PER_SECOND", Type::Float64),
                ("WRITES_PER_SECOND", Type::Float64),
                ("BYTES_WRITTEN", Type::Int64),
                ("UNSPLITTABLE_REASON", Type::String),
            ],
            SysTable::SchemaAdvice => crate::rowtree_sys::schema_advice_columns(),
            SysTable::HotSplitAdvice => crate::rowtree_sys::hot_split_columns(),
        };
        cols.into_iter().map(|(n, t)| (n.to_string(), t)).collect()
    }

    /// The rows now, from `db`'s split state.
    pub fn rows(&self, db: &Database) -> Vec<Vec<Value>> {
        let catalog = db.catalog();
        match self {
            SysTable::SplitStatsTop(g) => top_rows(db, &catalog, *g),
            SysTable::Splits => split_rows(db, &catalog),
            SysTable::SchemaAdvice => crate::rowtree_sys::schema_advice_rows(db),
            SysTable::HotSplitAdvice => crate::rowtree_sys::hot_split_rows(db),
        }
    }
}

/// `SPLIT_STATS_TOP_*`: oldest interval first, then by score (highest
/// first) and start key.
fn top_rows(db: &Database, catalog: &Catalog, g: Granularity) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for (end, stats) in db.split_history().intervals(g) {
        let mut hot: Vec<&IntervalStat> = stats
            .iter()
            .filter(|s| s.cpu_score >= MIN_REPORTED_SCORE)
            .collect();
        hot.sort_by(|a, b| {
            b.cpu_score
                .total_cmp(&a.cpu_score)
                .then_with(|| a.start.cmp(&b.start))
        });
        for s in hot {
            out.push(vec![
                timestamp(end),
                Value::String(start_text(catalog, &s.start)),
                Value::String(limit_text(catalog, &s.start, s.limit.as_deref())),
                Value::Int64(score(s.cpu_score)),
                strings(db.tables_in_range(&s.start, s.limit.as_deref())),
                strings(
                    s.unsplittable
                        .iter()
                        .map(|r| r.as_str().to_string())
                        .collect(),
                ),
            ]);
        }
    }
    out
}

/// `SPLITS`: every split in key order.
fn split_rows(db: &Database, catalog: &Catalog) -> Vec<Vec<Value>> {
    let now = db.router().now();
    let unsplittable = db.split_manager().unsplittable();
    db.router()
        .split_map()
        .splits()
        .iter()
        .map(|split| {
            let rate = split.load.lock().rate(now);
            let reason = unsplittable
                .iter()
                .find(|(id, _)| *id == split.id)
                .map_or(Value::Null, |(_, r)| Value::String(r.as_str().to_string()));
            vec![
                Value::Int64(split.id.0 as i64),
                Value::Int64(i64::from(split.node().0)),
                Value::String(start_text(catalog, &split.start)),
                Value::String(limit_text(catalog, &split.start, split.limit.as_deref())),
                strings(db.tables_in_range(&split.start, split.limit.as_deref())),
                Value::Int64(score(rate.cpu * 100.0)),
                Value::Float64(rate.rows_read),
                Value::Float64(rate.rows_written),
                Value::Int64(split.stats.snapshot().bytes_written as i64),
                reason,
            ]
        })
        .collect()
}

fn score(s: f64) -> i64 {
    s.round().clamp(0.0, i64::MAX as f64) as i64
}

fn timestamp(nanos: u64) -> Value {
    Timestamp::from_nanos(i128::from(nanos)).map_or(Value::Null, Value::Timestamp)
}

fn strings(items: Vec<String>) -> Value {
    Value::Array(items.into_iter().map(Value::String).collect())
}

/// A split's start key in human terms (see [`rowtree_db::keys::describe_start`]).
pub fn start_text(catalog: &Catalog, start: &[u8]) -> String {
    rowtree_db::keys::describe_start(catalog, start)
}

/// A split's limit in human terms (see [`rowtree_db::keys::describe_limit`]).
pub fn limit_text(catalog: &Catalog, start: &[u8], limit: Option<&[u8]>) -> String {
    rowtree_db::keys::describe_limit(catalog, start, limit)
}
