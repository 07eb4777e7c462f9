//! The workload file (TOML): per table, operation rates and how each column
//! is generated. See `docs/simulator.md`.

use std::collections::BTreeMap;
use std::fmt;

use rowtree_schema::Catalog;
use rowtree_types::Type;
use serde::Deserialize;

/// A workload or schema error, with a message naming what is wrong and where.
#[derive(Debug, Clone, PartialEq)]
pub struct Error(pub String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

/// Results of this crate.
pub type Result<T> = std::result::Result<T, Error>;

pub(crate) fn err<T>(msg: impl Into<String>) -> Result<T> {
    Err(Error(msg.into()))
}

/// Modelled CPU costs, in seconds of one node.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Costs {
    /// A point read (1/22,500 s: Spanner's 22,500 reads/s per node).
    pub read: f64,
    /// One row or index entry written (1/3,500 s: 3,500 writes/s per node).
    pub write: f64,
    /// Two-phase commit: the prepare each participant split pays when a
    /// write touches more than one split.
    pub prepare: f64,
    /// Two-phase commit: the commit record the coordinator (the first split
    /// of the transaction in key order) pays.
    pub commit: f64,
}

impl Default for Costs {
    fn default() -> Self {
        Costs {
            read: 1.0 / 22_500.0,
            write: 1.0 / 3_500.0,
            prepare: 1.0 / 7_000.0,
            commit: 1.0 / 7_000.0,
        }
    }
}

/// How one column's values are generated.
#[derive(Debug, Clone, PartialEq)]
pub enum Generator {
    /// The virtual time of the operation (monotonically increasing).
    Timestamp,
    /// 1, 2, 3, ... from `start` (a conventional sequence).
    Counter { start: u64 },
    /// A counter from `start`, bit-reversed as Spanner's
    /// `bit_reversed_positive` sequences do.
    BitReversed { start: u64 },
    /// A random UUID v4 (STRING: 36-character text; BYTES: 16 bytes).
    Uuid,
    /// A uniformly random integer in `[min, max]`.
    Uniform { min: i64, max: i64 },
    /// A Zipf-distributed integer in `[1, n]` with exponent `s` (1 is the hottest).
    Zipf { n: u64, s: f64 },
    /// Always this value.
    Constant(toml::Value),
    /// NULL.
    Null,
}

/// One table's load.
#[derive(Debug, Clone, PartialEq)]
pub struct TableLoad {
    /// The table's name as in the schema.
    pub table: String,
    /// Inserts per second (each writes the row and its index entries).
    pub inserts_per_sec: f64,
    /// Updates per second: a read of the row, then a write of the row and of
    /// every index entry whose key changes (old entry deleted, new inserted).
    pub updates_per_sec: f64,
    /// Point reads per second of a row whose key is generated as for an insert.
    pub reads_per_sec: f64,
    /// The columns an update sets (by position); each gets a new generated value.
    pub update_columns: Vec<usize>,
    /// Generators by column position.
    pub columns: Vec<(usize, Generator)>,
}

/// A workload: what is played, for how long.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    /// Random seed (determinism).
    pub seed: u64,
    /// Simulated duration, nanoseconds.
    pub duration: u64,
    /// Virtual time step, nanoseconds.
    pub step: u64,
    /// A request queued longer than this fails, nanoseconds.
    pub timeout: u64,
    /// Modelled costs.
    pub costs: Costs,
    /// Per-table load.
    pub tables: Vec<TableLoad>,
    /// Overrides of the split manager's defaults (`[splitting]`).
    pub splitting: Splitting,
}

/// `[splitting]`: optional overrides of the kv policy and balancer defaults
/// (durations as text, e.g. "2m").
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Splitting {
    /// CPU score at which a split is hot (default 50).
    pub split_threshold: Option<f64>,
    /// How long a split must stay hot before a load split (default 2m).
    pub hot_for: Option<String>,
    /// At most one load split per split per this (default 60s).
    pub cooldown: Option<String>,
    /// Cold neighbours merge after this (default 5m).
    pub merge_after: Option<String>,
    /// How often the balancer runs (default 10s).
    pub balance_interval: Option<String>,
    /// How long a node must be overloaded before a move (default 3m).
    pub move_after: Option<String>,
    /// How far above the mean a node counts as overloaded (default 0.2).
    pub tolerance: Option<f64>,
}

impl Splitting {
    /// Applies the overrides to `config`.
    pub fn apply(&self, config: &mut rowtree_kv::ManagerConfig) -> Result<()> {
        let d = |v: &Option<String>, what: &str| -> Result<Option<std::time::Duration>> {
            v.as_ref()
                .map(|s| {
                    parse_duration(s)
                        .map(std::time::Duration::from_nanos)
                        .map_err(|e| Error(format!("workload: splitting.{what}: {}", e.0)))
                })
                .transpose()
        };
        if let Some(t) = self.split_threshold {
            if !(t > 0.0 && t.is_finite()) {
                return err("workload: splitting.split_threshold must be positive");
            }
            config.policy.split_threshold = t;
        }
        if let Some(v) = d(&self.hot_for, "hot_for")? {
            config.policy.hot_for = v;
        }
        if let Some(v) = d(&self.cooldown, "cooldown")? {
            config.policy.cooldown = v;
        }
        if let Some(v) = d(&self.merge_after, "merge_after")? {
            config.policy.merge_after = v;
        }
        if let Some(v) = d(&self.balance_interval, "balance_interval")? {
            config.balancer.interval = v;
        }
        if let Some(v) = d(&self.move_after, "move_after")? {
            config.balancer.move_after = v;
        }
        if let Some(t) = self.tolerance {
            if !(t >= 0.0 && t.is_finite()) {
                return err("workload: splitting.tolerance must be non-negative");
            }
            config.balancer.tolerance = t;
        }
        Ok(())
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkloadFile {
    seed: Option<u64>,
    duration: Option<String>,
    step: Option<String>,
    timeout: Option<String>,
    #[serde(default)]
    costs: Costs,
    #[serde(default)]
    table: Vec<TableFile>,
    #[serde(default)]
    splitting: Splitting,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TableFile {
    name: String,
    #[serde(default)]
    inserts_per_sec: f64,
    #[serde(default)]
    updates_per_sec: f64,
    #[serde(default)]
    reads_per_sec: f64,
    #[serde(default)]
    update_columns: Vec<String>,
    #[serde(default)]
    columns: BTreeMap<String, toml::Value>,
}

/// Parses a duration such as `30m`, `90s`, `10ms`, `1h`, `1h30m`.
pub fn parse_duration(text: &str) -> Result<u64> {
    let t = text.trim();
    if t.is_empty() {
        return err("empty duration");
    }
    let mut total: u128 = 0;
    let mut rest = t;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if digits == 0 {
            return err(format!(
                "invalid duration `{text}`: expected a number followed by h, m, s or ms (e.g. 30m, 90s, 10ms)"
            ));
        }
        let number: f64 = rest[..digits]
            .parse()
            .map_err(|_| Error(format!("invalid duration `{text}`")))?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        rest = &rest[unit_len..];
        let scale: f64 = match unit {
            "h" => 3.6e12,
            "m" | "min" => 6e10,
            "s" | "" => 1e9,
            "ms" => 1e6,
            "us" => 1e3,
            _ => {
                return err(format!(
                    "invalid duration `{text}`: unknown unit `{unit}` (use h, m, s or ms)"
                ))
            }
        };
        total += (number * scale) as u128;
    }
    if total == 0 {
        return err(format!("duration `{text}` must be positive"));
    }
    Ok(total.min(u64::MAX as u128) as u64)
}

fn generator(table: &str, column: &str, ty: &Type, v: &toml::Value) -> Result<Generator> {
    let here = format!("table `{table}`, column `{column}`");
    let (kind, params) = match v {
        toml::Value::String(s) => (s.clone(), toml::Table::new()),
        toml::Value::Table(t) => {
            let Some(kind) = t.get("kind").and_then(|k| k.as_str()) else {
                return err(format!(
                    "{here}: a generator table needs `kind` (timestamp, counter, bit_reversed, uuid, uniform, zipf, constant or null)"
                ));
            };
            (kind.to_string(), t.clone())
        }
        other => {
            return err(format!(
                "{here}: expected a generator name or table, got {}",
                other.type_str()
            ))
        }
    };
    let int = |name: &str, default: Option<i64>| -> Result<i64> {
        match params.get(name) {
            Some(toml::Value::Integer(i)) => Ok(*i),
            Some(other) => err(format!(
                "{here}: `{name}` must be an integer, got {}",
                other.type_str()
            )),
            None => default.ok_or_else(|| Error(format!("{here}: `{kind}` needs `{name}`"))),
        }
    };
    let allowed: &[&str] = match kind.as_str() {
        "timestamp" | "uuid" | "null" => &["kind"],
        "counter" | "bit_reversed" => &["kind", "start"],
        "uniform" => &["kind", "min", "max"],
        "zipf" => &["kind", "n", "s"],
        "constant" => &["kind", "value"],
        _ => &[],
    };
    for key in params.keys() {
        if !allowed.is_empty() && !allowed.contains(&key.as_str()) {
            return err(format!(
                "{here}: unknown parameter `{key}` for `{kind}` (allowed: {})",
                allowed[1..].join(", ")
            ));
        }
    }
    let is_int = matches!(ty, Type::Int64);
    let is_text = matches!(ty, Type::String | Type::Bytes);
    let g = match kind.as_str() {
        "timestamp" => {
            if !matches!(ty, Type::Timestamp) {
                return err(format!("{here}: `timestamp` needs a TIMESTAMP column, the column is {ty:?}"));
            }
            Generator::Timestamp
        }
        "counter" | "bit_reversed" => {
            if !(is_int || is_text) {
                return err(format!("{here}: `{kind}` needs an INT64 or STRING column, the column is {ty:?}"));
            }
            let start = int("start", Some(1))?;
            if start < 0 {
                return err(format!("{here}: `start` must not be negative"));
            }
            if kind == "counter" {
                Generator::Counter { start: start as u64 }
            } else {
                Generator::BitReversed { start: start as u64 }
            }
        }
        "uuid" => {
            if !is_text {
                return err(format!("{here}: `uuid` needs a STRING or BYTES column, the column is {ty:?}"));
            }
            Generator::Uuid
        }
        "uniform" => {
            if !(is_int || is_text) {
                return err(format!("{here}: `uniform` needs an INT64 or STRING column, the column is {ty:?}"));
            }
            let min = int("min", Some(1))?;
            let max = int("max", None)?;
            if max < min {
                return err(format!("{here}: `max` ({max}) is below `min` ({min})"));
            }
            Generator::Uniform { min, max }
        }
        "zipf" => {
            if !(is_int || is_text) {
                return err(format!("{here}: `zipf` needs an INT64 or STRING column, the column is {ty:?}"));
            }
            let n = int("n", None)?;
            if n < 1 {
                return err(format!("{here}: `n` must be at least 1"));
            }
            let s = match params.get("s") {
                None => 1.0,
                Some(toml::Value::Float(f)) => *f,
                Some(toml::Value::Integer(i)) => *i as f64,
                Some(other) => {
                    return err(format!("{here}: `s` must be a number, got {}", other.type_str()))
                }
            };
            if s <= 0.0 || !s.is_finite() {
                return err(format!("{here}: `s` must be positive"));
            }
            Generator::Zipf { n: n as u64, s }
        }
        "constant" => match params.get("value") {
            Some(v) => Generator::Constant(v.clone()),
            None => return err(format!("{here}: `constant` needs `value`")),
        },
        "null" => Generator::Null,
        other => {
            return err(format!(
                "{here}: unknown generator `{other}` (expected timestamp, counter, bit_reversed, uuid, uniform, zipf, constant or null)"
            ))
        }
    };
    Ok(g)
}

impl Workload {
    /// Parses a workload file against the schema in `catalog`.
    pub fn parse(text: &str, catalog: &Catalog) -> Result<Workload> {
        let file: WorkloadFile =
            toml::from_str(text).map_err(|e| Error(format!("workload: {e}")))?;
        if file.table.is_empty() {
            return err("workload: no [[table]] sections: give at least one table with rates");
        }
        let mut tables = Vec::new();
        for t in &file.table {
            let Some(table) = catalog.table(&t.name) else {
                let known: Vec<String> = catalog.tables().map(|t| t.name.clone()).collect();
                return err(format!(
                    "workload: table `{}` is not in the schema (tables: {})",
                    t.name,
                    known.join(", ")
                ));
            };
            for (what, rate) in [
                ("inserts_per_sec", t.inserts_per_sec),
                ("updates_per_sec", t.updates_per_sec),
                ("reads_per_sec", t.reads_per_sec),
            ] {
                if !(rate >= 0.0 && rate.is_finite()) {
                    return err(format!(
                        "workload: table `{}`: `{what}` must be a non-negative number",
                        t.name
                    ));
                }
            }
            let mut columns = Vec::new();
            for (name, spec) in &t.columns {
                let Some((pos, col)) = table.column(name) else {
                    return err(format!(
                        "workload: table `{}` has no column `{name}`",
                        t.name
                    ));
                };
                if col.generated.is_some() {
                    return err(format!(
                        "workload: table `{}`, column `{name}` is a generated column: its values are computed from the other columns, remove its generator",
                        t.name
                    ));
                }
                let g = generator(&t.name, name, &col.ty, spec)
                    .map_err(|e| Error(format!("workload: {}", e.0)))?;
                columns.push((pos, g));
            }
            for k in &table.primary_key {
                let col = &table.columns[k.column];
                if col.generated.is_none() && !columns.iter().any(|(p, _)| *p == k.column) {
                    return err(format!(
                        "workload: table `{}`: key column `{}` needs a generator (e.g. {} = \"uuid\" or {{ kind = \"uniform\", min = 1, max = 1000000 }})",
                        t.name, col.name, col.name
                    ));
                }
            }
            let mut update_columns = Vec::new();
            for name in &t.update_columns {
                let Some((pos, _)) = table.column(name) else {
                    return err(format!(
                        "workload: table `{}`: update column `{name}` does not exist",
                        t.name
                    ));
                };
                if table.is_key_column(pos) {
                    return err(format!(
                        "workload: table `{}`: update column `{name}` is a key column (an update keeps the key)",
                        t.name
                    ));
                }
                if !columns.iter().any(|(p, _)| *p == pos) {
                    return err(format!(
                        "workload: table `{}`: update column `{name}` needs a generator in [table.columns]",
                        t.name
                    ));
                }
                update_columns.push(pos);
            }
            if t.updates_per_sec > 0.0 && update_columns.is_empty() {
                return err(format!(
                    "workload: table `{}`: updates_per_sec is set but update_columns is empty",
                    t.name
                ));
            }
            tables.push(TableLoad {
                table: table.name.clone(),
                inserts_per_sec: t.inserts_per_sec,
                updates_per_sec: t.updates_per_sec,
                reads_per_sec: t.reads_per_sec,
                update_columns,
                columns,
            });
        }
        let opt = |v: &Option<String>, what: &str, default: u64| -> Result<u64> {
            match v {
                Some(s) => {
                    parse_duration(s).map_err(|e| Error(format!("workload: `{what}`: {}", e.0)))
                }
                None => Ok(default),
            }
        };
        let step = opt(&file.step, "step", 10_000_000)?;
        let w = Workload {
            seed: file.seed.unwrap_or(1),
            duration: opt(&file.duration, "duration", 30 * 60_000_000_000)?,
            step,
            timeout: opt(&file.timeout, "timeout", 1_000_000_000)?,
            costs: file.costs,
            tables,
            splitting: file.splitting,
        };
        w.splitting
            .apply(&mut rowtree_kv::ManagerConfig::default())?;
        if w.step > 1_000_000_000 || 1_000_000_000 % w.step != 0 {
            return err("workload: `step` must divide one second (e.g. 10ms)");
        }
        for (what, c) in [
            ("read", w.costs.read),
            ("write", w.costs.write),
            ("prepare", w.costs.prepare),
            ("commit", w.costs.commit),
        ] {
            if !(c >= 0.0 && c.is_finite()) {
                return err(format!(
                    "workload: costs.{what} must be a non-negative number of seconds"
                ));
            }
        }
        if w.tables
            .iter()
            .all(|t| t.inserts_per_sec + t.updates_per_sec + t.reads_per_sec == 0.0)
        {
            return err("workload: every rate is zero: set inserts_per_sec, updates_per_sec or reads_per_sec");
        }
        Ok(w)
    }
}

/// Builds a catalog from a schema script (statements separated by `;`).
pub fn catalog_from_sql(sql: &str) -> Result<Catalog> {
    let mut catalog = Catalog::new();
    for stmt in rowtree_parser::split_statements(sql) {
        if stmt.text.trim().is_empty() {
            continue;
        }
        let line = sql[..stmt.offset].matches('\n').count() + 1;
        let (next, _) = catalog
            .apply_sql(stmt.text)
            .map_err(|e| Error(format!("schema: statement at line {line}: {}", e.message())))?;
        catalog = next;
    }
    Ok(catalog)
}
