//! The advisor's config file (`rowtree advise --config advise.toml`).
//!
//! A team adopts the advisor on an existing schema by first silencing what
//! it has decided to live with, then failing CI on anything new. The file
//! says three things:
//!
//! ```toml
//! # Rules silenced everywhere.
//! allow = ["desc-history"]
//!
//! # Rules silenced for one table or index (names compare case-insensitively).
//! [allow_objects]
//! AuditLog = ["monotonic-key"]
//!
//! # Severity overrides: error, warning or info.
//! [severity]
//! sparse-index = "warning"
//!
//! # Shards the hash-prefix fixes propose (default 16).
//! shard_count = 32
//! ```
//!
//! Unknown keys, rule ids and severities are errors, so a typo cannot
//! silently silence nothing.

use std::collections::BTreeMap;

use serde::Deserialize;

use rowtree_types::Dialect;

use crate::{AdviseError, Rule, Severity};

/// Which rules are silenced (globally or per object), severity overrides,
/// and the shard count the fixes propose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    allow: Vec<Rule>,
    allow_objects: Vec<(String, Rule)>,
    severity: BTreeMap<Rule, Severity>,
    shard_count: u32,
    dialect: Dialect,
}

/// The shard count a hash-prefix fix proposes unless the config says.
pub const DEFAULT_SHARD_COUNT: u32 = 16;

impl Default for Config {
    fn default() -> Self {
        Config {
            allow: Vec::new(),
            allow_objects: Vec::new(),
            severity: BTreeMap::new(),
            shard_count: DEFAULT_SHARD_COUNT,
            dialect: Dialect::GoogleSql,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    allow_objects: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    severity: BTreeMap<String, String>,
    shard_count: Option<i64>,
}

fn rule(id: &str) -> Result<Rule, AdviseError> {
    Rule::from_id(id).ok_or_else(|| AdviseError::UnknownRule(id.to_string()))
}

impl Config {
    /// Parses a config file's text.
    pub fn from_toml(text: &str) -> Result<Config, AdviseError> {
        let raw: RawConfig =
            toml::from_str(text).map_err(|e| AdviseError::ConfigSyntax(e.to_string()))?;
        let mut config = Config::default();
        for id in &raw.allow {
            config.allow.push(rule(id)?);
        }
        for (object, ids) in &raw.allow_objects {
            for id in ids {
                config.allow_objects.push((object.clone(), rule(id)?));
            }
        }
        for (id, level) in &raw.severity {
            let severity = Severity::from_name(level)
                .ok_or_else(|| AdviseError::UnknownSeverity(level.clone()))?;
            config.severity.insert(rule(id)?, severity);
        }
        if let Some(n) = raw.shard_count {
            if !(2..=65536).contains(&n) {
                return Err(AdviseError::ShardCount(n));
            }
            config.shard_count = n as u32;
        }
        Ok(config)
    }

    /// Silences `rule` everywhere.
    pub fn allow(mut self, rule: Rule) -> Config {
        self.allow.push(rule);
        self
    }

    /// Silences `rule` for the table or index `object` (any case).
    pub fn allow_object(mut self, object: impl Into<String>, rule: Rule) -> Config {
        self.allow_objects.push((object.into(), rule));
        self
    }

    /// Gives `rule`'s findings `severity` instead of their own.
    pub fn with_severity(mut self, rule: Rule, severity: Severity) -> Config {
        self.severity.insert(rule, severity);
        self
    }

    /// The shard count hash-prefix fixes propose (2 to 65536).
    pub fn with_shard_count(mut self, shards: u32) -> Result<Config, AdviseError> {
        if !(2..=65536).contains(&shards) {
            return Err(AdviseError::ShardCount(i64::from(shards)));
        }
        self.shard_count = shards;
        Ok(self)
    }

    /// Reads the sources as DDL of `dialect` (GoogleSQL unless set) and
    /// prints the fixes in that dialect.
    pub fn with_dialect(mut self, dialect: Dialect) -> Config {
        self.dialect = dialect;
        self
    }

    /// The SQL dialect the sources are written in and the fixes printed in.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Whether findings of `rule` about `object` are silenced.
    pub fn silences(&self, rule: Rule, object: &str) -> bool {
        self.allow.contains(&rule)
            || self
                .allow_objects
                .iter()
                .any(|(o, r)| *r == rule && o.eq_ignore_ascii_case(object))
    }

    /// The severity `rule`'s findings are given instead of their own.
    pub fn severity(&self, rule: Rule) -> Option<Severity> {
        self.severity.get(&rule).copied()
    }

    /// The number of shards hash-prefix fixes propose.
    pub fn shard_count(&self) -> u32 {
        self.shard_count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_all_sections() {
        let c = Config::from_toml(
            "allow = [\"desc-history\"]\nshard_count = 32\n[allow_objects]\nAuditLog = [\"monotonic-key\"]\n[severity]\nsparse-index = \"warning\"\n",
        )
        .unwrap();
        assert!(c.silences(Rule::DescHistory, "X"));
        assert!(c.silences(Rule::MonotonicKey, "auditlog"));
        assert!(!c.silences(Rule::MonotonicKey, "Other"));
        assert_eq!(c.severity(Rule::SparseIndex), Some(Severity::Warning));
        assert_eq!(c.shard_count(), 32);
    }

    #[test]
    fn builds_in_code() {
        let c = Config::default()
            .allow(Rule::Limits)
            .allow_object("Logs", Rule::MonotonicKey)
            .with_severity(Rule::DescHistory, Severity::Warning)
            .with_shard_count(8)
            .unwrap();
        assert!(c.silences(Rule::Limits, "any"));
        assert!(c.silences(Rule::MonotonicKey, "LOGS"));
        assert_eq!(c.severity(Rule::DescHistory), Some(Severity::Warning));
        assert_eq!(c.shard_count(), 8);
        assert!(Config::default().with_shard_count(1).is_err());
    }

    #[test]
    fn refuses_typos() {
        assert!(matches!(
            Config::from_toml("allow = [\"monotonic-keys\"]"),
            Err(AdviseError::UnknownRule(_))
        ));
        assert!(matches!(
            Config::from_toml("alow = []"),
            Err(AdviseError::ConfigSyntax(_))
        ));
        assert!(matches!(
            Config::from_toml("[severity]\nlimits = \"fatal\""),
            Err(AdviseError::UnknownSeverity(_))
        ));
        assert!(matches!(
            Config::from_toml("shard_count = 1"),
            Err(AdviseError::ShardCount(1))
        ));
    }
}
