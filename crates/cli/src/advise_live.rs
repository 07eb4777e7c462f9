//! `rowtree advise --database DIR`: advice on a live database, its schema
//! and its recorded load.
//!
//! The schema is the database's own DDL, as `GetDatabaseDdl` prints it
//! (findings point at lines of that text, named `<database>.ddl`). The
//! load is its split statistics: every split the one-minute history
//! recorded as hot (a CPU score of at least 50, as in
//! `SPANNER_SYS.SPLIT_STATS_TOP_MINUTE`) is listed with the table or index
//! whose keys it holds, that object's key columns, and the finding (rule
//! and fix) that explains it, the same rows `ROWTREE_SYS.HOT_SPLIT_ADVICE`
//! returns inside the database.

use std::path::Path;

use rowtree_advisor::{Finding, Source};
use rowtree_sql::rowtree_sys::{hot_splits, HotSplitAdvice};

/// A live database: its schema as advisor input, and its hot splits to be
/// explained with the advisor's findings on that schema.
pub struct Live {
    /// The database's DDL, one statement per `;`.
    pub source: Source,
    /// The database's dialect, which its DDL is printed in.
    pub dialect: rowtree_types::Dialect,
    db: rowtree_db::Database,
}

impl Live {
    /// Opens the database in `dir` (a database directory, or a `rowtree
    /// serve` data directory with `name` choosing among its databases).
    pub fn open(dir: &Path, name: Option<&str>) -> Result<Live, String> {
        let (db, label) = crate::keyviz::open_database(dir, name)?;
        let text = db
            .ddl()
            .iter()
            .map(|s| format!("{s};\n"))
            .collect::<Vec<_>>()
            .join("\n");
        let file = format!("{}.ddl", label.rsplit('/').next().unwrap_or(&label));
        Ok(Live {
            source: Source { name: file, text },
            dialect: db.dialect(),
            db,
        })
    }

    /// The hot splits of the load history, explained by `findings`.
    pub fn hot_splits(&self, findings: &[Finding]) -> Vec<HotSplitAdvice> {
        hot_splits(&self.db, findings)
    }
}

/// The hot splits as text, after the findings.
pub fn hot_splits_text(hot: &[HotSplitAdvice]) -> String {
    if hot.is_empty() {
        return "No split was hot (CPU score >= 50) in the recorded one-minute history.\n".into();
    }
    let mut out = format!(
        "{} hot split interval(s) in the recorded history:\n",
        hot.len()
    );
    for h in hot {
        let when = rowtree_types::Timestamp::from_nanos(i128::from(h.interval_end))
            .map(|t| t.to_string())
            .unwrap_or_default();
        out.push_str(&format!(
            "  {when}  score {:>3}  [{} .. {})  {}{}\n    {}\n",
            h.cpu_score,
            h.start,
            h.limit,
            h.object.as_deref().unwrap_or("-"),
            if h.key_columns.is_empty() {
                String::new()
            } else {
                format!(" (key: {})", h.key_columns.join(", "))
            },
            match h.rule {
                Some(rule) => format!("{}: {}", rule.id(), h.explanation),
                None => h.explanation.clone(),
            }
        ));
    }
    out
}

/// The hot splits as JSON values (for `--format json`).
pub fn hot_splits_json(hot: &[HotSplitAdvice]) -> serde_json::Value {
    serde_json::Value::Array(
        hot.iter()
            .map(|h| {
                serde_json::json!({
                    "interval_end": rowtree_types::Timestamp::from_nanos(i128::from(h.interval_end))
                        .map(|t| t.to_string())
                        .unwrap_or_default(),
                    "split_start": h.start,
                    "split_limit": h.limit,
                    "cpu_usage_score": h.cpu_score,
                    "object": h.object,
                    "key_columns": h.key_columns,
                    "rule": h.rule.map(|r| r.id()),
                    "explanation": h.explanation,
                    "fix": h.fix,
                })
            })
            .collect(),
    )
}
