//! Session parameters: what `SET`, `SHOW` and `RESET` read and write, and
//! what the server reports in ParameterStatus messages.
//!
//! Drivers send a few `SET`s on connect and read the reported parameters
//! (libpq takes `server_version`, `standard_conforming_strings` and
//! `client_encoding` from them; psql's `\d` checks the version). Rowtree
//! keeps any parameter a client sets, answers `SHOW` for it, and reports the
//! ones PostgreSQL reports. A few values are fixed by what Rowtree does and
//! are refused if set otherwise: the encoding is UTF8, strings are standard
//! conforming, dates print ISO. `TimeZone` is accepted and reported, but
//! timestamps are always sent in UTC (with their `+00` offset, so they read
//! as the right instant).

use std::collections::BTreeMap;

use rowtree_types::{Type, Value};

use crate::errors::PgError;
use crate::outcome::Outcome;

/// The version reported as `server_version`: the PostgreSQL release whose
/// protocol and catalog queries this server answers like.
pub const SERVER_VERSION: &str = "15.0 (Rowtree)";

/// The parameters PostgreSQL reports at startup and whenever they change.
const REPORTED: &[&str] = &[
    "application_name",
    "client_encoding",
    "DateStyle",
    "default_transaction_read_only",
    "in_hot_standby",
    "integer_datetimes",
    "IntervalStyle",
    "is_superuser",
    "server_encoding",
    "server_version",
    "session_authorization",
    "standard_conforming_strings",
    "TimeZone",
];

/// A connection's parameters, by lower-case name.
#[derive(Debug, Clone)]
pub struct Settings {
    values: BTreeMap<String, (String, String)>,
    defaults: BTreeMap<String, (String, String)>,
    /// Reported parameters changed since the connection last sent them.
    changed: Vec<(String, String)>,
}

impl Settings {
    /// The defaults, with the startup message's `user` and
    /// `application_name` (and any other parameter it set).
    pub fn new(user: &str, startup: &BTreeMap<String, String>) -> Settings {
        let mut values = BTreeMap::new();
        let mut put = |k: &str, v: &str| {
            values.insert(k.to_ascii_lowercase(), (k.to_string(), v.to_string()));
        };
        put("application_name", "");
        put("client_encoding", "UTF8");
        put("DateStyle", "ISO, MDY");
        put("default_transaction_read_only", "off");
        put("default_transaction_isolation", "serializable");
        put("transaction_isolation", "serializable");
        put("transaction_read_only", "off");
        put("in_hot_standby", "off");
        put("integer_datetimes", "on");
        put("IntervalStyle", "postgres");
        put("is_superuser", "on");
        put("server_encoding", "UTF8");
        put("server_version", SERVER_VERSION);
        put("server_version_num", "150000");
        put("session_authorization", user);
        put("standard_conforming_strings", "on");
        put("TimeZone", "UTC");
        put("extra_float_digits", "1");
        put("search_path", "public");
        put("lc_messages", "C");
        put("lc_monetary", "C");
        put("lc_numeric", "C");
        put("lc_time", "C");
        put("max_identifier_length", "63");
        put("statement_timeout", "0");
        put("lock_timeout", "0");
        put("idle_in_transaction_session_timeout", "0");
        put("row_security", "on");
        put("bytea_output", "hex");
        put("synchronous_commit", "on");
        let defaults = values.clone();
        let mut s = Settings {
            values,
            defaults,
            changed: Vec::new(),
        };
        for (k, v) in startup {
            if matches!(k.as_str(), "user" | "database" | "options" | "replication") {
                continue;
            }
            let _ = s.assign(k, v);
        }
        // `options`: command-line style settings (`-c name=value`, what
        // libpq's PGOPTIONS sends).
        if let Some(options) = startup.get("options") {
            let mut words = options.split_whitespace();
            while let Some(w) = words.next() {
                let setting = match w {
                    "-c" => words.next(),
                    w => w.strip_prefix("-c").or_else(|| w.strip_prefix("--")),
                };
                if let Some((k, v)) = setting.and_then(|s| s.split_once('=')) {
                    let _ = s.assign(&k.replace('-', "_"), v);
                }
            }
        }
        s.changed.clear();
        s
    }

    /// Every reported parameter, for the ParameterStatus messages of
    /// startup.
    pub fn reported(&self) -> Vec<(String, String)> {
        REPORTED
            .iter()
            .filter_map(|k| self.values.get(&k.to_ascii_lowercase()).cloned())
            .collect()
    }

    /// Reported parameters changed since the last call.
    pub fn take_changed(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.changed)
    }

    /// Whether new transaction blocks are read-only.
    pub fn default_read_only(&self) -> bool {
        matches!(
            self.get("default_transaction_read_only").as_deref(),
            Some("on" | "true" | "1" | "yes")
        )
    }

    /// `rowtree.non_atomic_bulk`: COPY FROM STDIN and TRUNCATE commit on
    /// their own even inside a transaction block (see `crate::copy`).
    pub fn non_atomic_bulk(&self) -> bool {
        matches!(
            self.get("rowtree.non_atomic_bulk").as_deref(),
            Some("on" | "true" | "1" | "yes")
        )
    }

    /// The client's `application_name` (psql sends `psql`).
    pub fn application_name(&self) -> String {
        self.values
            .get("application_name")
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    }

    fn get(&self, name: &str) -> Option<String> {
        self.values
            .get(&name.to_ascii_lowercase())
            .map(|(_, v)| v.to_ascii_lowercase())
    }

    /// Sets a parameter without checking it.
    pub fn put(&mut self, name: &str, value: &str) {
        let _ = self.assign(name, value);
    }

    fn assign(&mut self, name: &str, value: &str) -> Result<(), PgError> {
        let key = name.to_ascii_lowercase();
        let lower = value.to_ascii_lowercase();
        let fixed = |ok: bool, what: &str| {
            if ok {
                Ok(())
            } else {
                Err(PgError::new(
                    "22023",
                    format!("{what} cannot be set to \"{value}\" on Rowtree"),
                ))
            }
        };
        match key.as_str() {
            "client_encoding" => fixed(
                matches!(
                    lower.replace(['-', '_'], "").as_str(),
                    "utf8" | "unicode" | "sqlascii"
                ),
                "client_encoding (Rowtree speaks UTF8)",
            )?,
            "standard_conforming_strings" => fixed(
                matches!(lower.as_str(), "on" | "true" | "1"),
                "standard_conforming_strings",
            )?,
            "server_version"
            | "server_version_num"
            | "server_encoding"
            | "integer_datetimes"
            | "max_identifier_length"
            | "is_superuser" => {
                return Err(PgError::new(
                    "55P02",
                    format!("parameter \"{name}\" cannot be changed"),
                ))
            }
            _ => {}
        }
        // Keep the canonical spelling of known names (DateStyle, TimeZone).
        let (display, value) = match self.values.get(&key) {
            Some((display, _)) => (display.clone(), value.to_string()),
            None => (name.to_string(), value.to_string()),
        };
        // client_encoding is always UTF8 whatever the client asked.
        let value = if key == "client_encoding" {
            "UTF8".to_string()
        } else {
            value
        };
        if REPORTED.iter().any(|r| r.eq_ignore_ascii_case(&key)) {
            self.changed.push((display.clone(), value.clone()));
        }
        self.values.insert(key, (display, value));
        Ok(())
    }

    /// `SET [SESSION | LOCAL] name {TO | =} value [, ...]`, `SET TIME ZONE
    /// value`, `SET NAMES value`.
    pub fn set(&mut self, sql: &str) -> Result<String, PgError> {
        let body = strip_keyword(sql.trim().trim_end_matches(';').trim(), "set");
        let mut body = body.trim();
        for w in ["session ", "local "] {
            if body.to_ascii_lowercase().starts_with(w) {
                body = body[w.len()..].trim_start();
            }
        }
        let lower = body.to_ascii_lowercase();
        let (name, value) = if lower.starts_with("time zone") {
            ("TimeZone".to_string(), body[9..].trim().to_string())
        } else if lower.starts_with("names") {
            ("client_encoding".to_string(), body[5..].trim().to_string())
        } else if lower.starts_with("role") || lower.starts_with("session authorization") {
            return Ok("SET".into());
        } else {
            let split = body
                .find(|c: char| c == '=' || c.is_whitespace())
                .ok_or_else(|| PgError::new("42601", format!("syntax error in SET: {sql}")))?;
            let name = body[..split].trim().trim_matches('"').to_string();
            let mut rest = body[split..].trim_start();
            if let Some(r) = rest.strip_prefix('=') {
                rest = r;
            } else if rest.len() >= 2 && rest[..2].eq_ignore_ascii_case("to") {
                rest = &rest[2..];
            } else {
                return Err(PgError::new("42601", format!("syntax error in SET: {sql}")));
            }
            (name, rest.trim().to_string())
        };
        if value.eq_ignore_ascii_case("default") {
            let key = name.to_ascii_lowercase();
            match self.defaults.get(&key).cloned() {
                Some((_, v)) => self.assign(&name, &v)?,
                None => {
                    self.values.remove(&key);
                }
            }
            return Ok("SET".into());
        }
        // A list of values (search_path = a, b) keeps its text; quotes go.
        let value = value
            .split(',')
            .map(|v| unquote(v.trim()))
            .collect::<Vec<_>>()
            .join(", ");
        if name.contains('.') {
            // Custom (extension) parameters such as spanner.* are kept as
            // they are.
        }
        self.assign(&name, &value)?;
        Ok("SET".into())
    }

    /// `RESET name` / `RESET ALL`.
    pub fn reset(&mut self, sql: &str) -> Result<String, PgError> {
        let body = strip_keyword(sql.trim().trim_end_matches(';').trim(), "reset").trim();
        if body.eq_ignore_ascii_case("all") {
            let defaults = self.defaults.clone();
            for (_, (display, value)) in defaults {
                let _ = self.assign(&display, &value);
            }
            return Ok("RESET".into());
        }
        let key = body.trim_matches('"').to_ascii_lowercase();
        match self.defaults.get(&key).cloned() {
            Some((display, v)) => self.assign(&display, &v)?,
            None => {
                self.values.remove(&key);
            }
        }
        Ok("RESET".into())
    }

    /// `SHOW name` / `SHOW ALL`.
    pub fn show(&self, sql: &str) -> Result<Outcome, PgError> {
        let body = strip_keyword(sql.trim().trim_end_matches(';').trim(), "show").trim();
        let lower = body.to_ascii_lowercase();
        if lower == "all" {
            let rows = self
                .values
                .values()
                .map(|(k, v)| {
                    vec![
                        Value::String(k.clone()),
                        Value::String(v.clone()),
                        Value::String(String::new()),
                    ]
                })
                .collect::<Vec<_>>();
            return Ok(Outcome::Rows {
                tag: "SHOW".into(),
                columns: vec![
                    ("name".into(), Type::String),
                    ("setting".into(), Type::String),
                    ("description".into(), Type::String),
                ],
                rows,
            });
        }
        let key = match lower.as_str() {
            "time zone" => "timezone".to_string(),
            "transaction isolation level" => "transaction_isolation".to_string(),
            other => other.trim_matches('"').to_string(),
        };
        match self.values.get(&key) {
            Some((_, v)) => Ok(Outcome::Rows {
                tag: "SHOW".into(),
                columns: vec![(key.clone(), Type::String)],
                rows: vec![vec![Value::String(v.clone())]],
            }),
            None => Err(PgError::new(
                "42704",
                format!("unrecognized configuration parameter \"{body}\""),
            )),
        }
    }
}

fn strip_keyword<'a>(s: &'a str, keyword: &str) -> &'a str {
    if s.len() >= keyword.len() && s[..keyword.len()].eq_ignore_ascii_case(keyword) {
        &s[keyword.len()..]
    } else {
        s
    }
}

fn unquote(v: &str) -> String {
    if v.len() >= 2 && v.starts_with('\'') && v.ends_with('\'') {
        v[1..v.len() - 1].replace("''", "'")
    } else if v.len() >= 2 && v.starts_with('"') && v.ends_with('"') {
        v[1..v.len() - 1].to_string()
    } else {
        v.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_and_show() {
        let mut s = Settings::new("me", &BTreeMap::new());
        assert_eq!(s.set("SET application_name = 'psql'").unwrap(), "SET");
        assert_eq!(
            s.take_changed(),
            vec![("application_name".to_string(), "psql".to_string())]
        );
        s.set("set extra_float_digits to 3").unwrap();
        s.set("SET TIME ZONE 'UTC'").unwrap();
        match s.show("SHOW extra_float_digits").unwrap() {
            Outcome::Rows { rows, .. } => assert_eq!(rows[0][0], Value::String("3".into())),
            other => panic!("{other:?}"),
        }
        assert!(s.set("SET client_encoding = 'LATIN1'").is_err());
        assert!(s.show("SHOW nothing_like_this").is_err());
    }
}
