//! `rowtree advise`: exit codes, formats, config and inline suppression.

use std::path::Path;
use std::process::{Command, Output};

fn advise(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rowtree"))
        .current_dir(dir)
        .arg("advise")
        .args(args)
        .output()
        .expect("rowtree runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

const HOT: &str = "CREATE TABLE UserAccessLogs (
  LastAccess TIMESTAMP NOT NULL,
  UserId STRING(36) NOT NULL,
) PRIMARY KEY (LastAccess, UserId);
";

const CLEAN: &str = "CREATE TABLE Users (
  UserId STRING(36) NOT NULL DEFAULT (GENERATE_UUID()),
  Name STRING(100),
) PRIMARY KEY (UserId);
";

fn files(contents: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in contents {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

#[test]
fn exit_codes() {
    let dir = files(&[
        ("clean.sql", CLEAN),
        ("hot.sql", HOT),
        (
            "broken.sql",
            "CREATE TABLE Oops (A INT64) PRIMARY KEY (B);\nCREATE TABEL X;\n",
        ),
    ]);
    let clean = advise(dir.path(), &["clean.sql"]);
    assert_eq!(clean.status.code(), Some(0), "{}", stdout(&clean));
    let hot = advise(dir.path(), &["hot.sql"]);
    assert_eq!(hot.status.code(), Some(1));
    let text = stdout(&hot);
    assert!(
        text.starts_with("hot.sql:1:1: error[monotonic-key] UserAccessLogs: "),
        "{text}"
    );
    assert!(text.contains("DESC does not help"));
    assert!(text.contains("PRIMARY KEY (UserId, LastAccess)"));
    // Not a terminal: no colour.
    assert!(!text.contains('\x1b'));

    // Unusable input: 2, each error placed, and the rest still analysed.
    let broken = advise(dir.path(), &["broken.sql", "hot.sql", "missing.sql"]);
    assert_eq!(broken.status.code(), Some(2));
    let text = stdout(&broken);
    assert!(text.contains("broken.sql:1:42: input error: "), "{text}");
    assert!(
        text.contains("broken.sql:2:8: input error: Syntax error"),
        "{text}"
    );
    assert!(
        text.contains("missing.sql:1:1: input error: cannot read"),
        "{text}"
    );
    assert!(text.contains("hot.sql:1:1: error[monotonic-key]"), "{text}");
}

#[test]
fn json_format() {
    let dir = files(&[("hot.sql", HOT)]);
    let out = advise(dir.path(), &["--format", "json", "hot.sql"]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let f = &v["findings"][0];
    let keys: Vec<&str> = f.as_object().unwrap().keys().map(|k| k.as_str()).collect();
    let mut expected = vec![
        "rule", "severity", "file", "line", "column", "object", "message", "fix",
    ];
    let mut sorted = keys.clone();
    sorted.sort();
    expected.sort();
    assert_eq!(sorted, expected);
    assert_eq!(f["rule"], "monotonic-key");
    assert_eq!(f["severity"], "error");
    assert_eq!(f["file"], "hot.sql");
    assert_eq!(f["line"], 1);
    assert_eq!(f["column"], 1);
    assert_eq!(f["object"], "UserAccessLogs");
    assert!(f["fix"]
        .as_str()
        .unwrap()
        .starts_with("CREATE TABLE UserAccessLogs ("));
    assert_eq!(v["errors"], serde_json::json!([]));
}

#[test]
fn sarif_format() {
    let dir = files(&[("hot.sql", HOT)]);
    let out = advise(dir.path(), &["--format", "sarif", "hot.sql"]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["version"], "2.1.0");
    let result = &v["runs"][0]["results"][0];
    assert_eq!(result["ruleId"], "monotonic-key");
    assert_eq!(result["level"], "error");
    assert_eq!(
        result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "hot.sql"
    );
}

#[test]
fn config_and_inline_suppression() {
    let dir = files(&[
        ("hot.sql", HOT),
        (
            "allowed.sql",
            "-- rowtree:allow(monotonic-key)\nCREATE TABLE Log (EventAt TIMESTAMP NOT NULL) PRIMARY KEY (EventAt);\n",
        ),
        ("silence.toml", "[allow_objects]\nuseraccesslogs = [\"monotonic-key\"]\n"),
        ("soften.toml", "[severity]\nmonotonic-key = \"warning\"\n"),
        ("typo.toml", "allow = [\"monotonic-keys\"]\n"),
    ]);
    let allowed = advise(dir.path(), &["allowed.sql"]);
    assert_eq!(allowed.status.code(), Some(0), "{}", stdout(&allowed));
    let silenced = advise(dir.path(), &["--config", "silence.toml", "hot.sql"]);
    assert_eq!(silenced.status.code(), Some(0), "{}", stdout(&silenced));
    let softened = advise(dir.path(), &["--config", "soften.toml", "hot.sql"]);
    assert_eq!(softened.status.code(), Some(0));
    assert!(stdout(&softened).contains("warning[monotonic-key]"));
    let typo = advise(dir.path(), &["--config", "typo.toml", "hot.sql"]);
    assert_eq!(typo.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&typo.stderr).contains("unknown rule id `monotonic-keys`"));
}

#[test]
fn help_lists_rules_and_exit_codes() {
    let out = Command::new(env!("CARGO_BIN_EXE_rowtree"))
        .args(["advise", "--help"])
        .output()
        .unwrap();
    let text = stdout(&out);
    for rule in [
        "monotonic-key",
        "monotonic-index",
        "sequential-id",
        "time-ordered-uuid",
        "interleave-candidate",
        "desc-history",
        "limits",
        "index-storing",
        "sparse-index",
    ] {
        assert!(text.contains(rule), "{rule} missing from --help");
    }
    assert!(text.contains("Exit status: 0"));
}

#[test]
fn the_postgresql_dialect_is_read_and_fixed_in_its_own_ddl() {
    let dir = files(&[
        (
            "hot.sql",
            "CREATE TABLE user_access_logs (\n  last_access timestamptz NOT NULL,\n  user_id varchar(36) NOT NULL,\n  PRIMARY KEY (last_access, user_id)\n);\n",
        ),
        (
            "clean.sql",
            "CREATE TABLE users (\n  user_id varchar(36) NOT NULL DEFAULT spanner.generate_uuid(),\n  name varchar(100),\n  PRIMARY KEY (user_id)\n);\n",
        ),
    ]);
    let hot = advise(dir.path(), &["--dialect", "postgresql", "hot.sql"]);
    assert_eq!(hot.status.code(), Some(1), "{}", stdout(&hot));
    let text = stdout(&hot);
    assert!(
        text.contains("hot.sql:1:1: error[monotonic-key] user_access_logs"),
        "{text}"
    );
    assert!(
        text.contains("PRIMARY KEY (user_id, last_access)"),
        "{text}"
    );
    let clean = advise(dir.path(), &["--dialect", "postgresql", "clean.sql"]);
    assert_eq!(clean.status.code(), Some(0), "{}", stdout(&clean));
    // Read as GoogleSQL (the default), the same file does not parse.
    let wrong = advise(dir.path(), &["clean.sql"]);
    assert_eq!(wrong.status.code(), Some(2));
    let help = Command::new(env!("CARGO_BIN_EXE_rowtree"))
        .args(["advise", "--help"])
        .output()
        .unwrap();
    assert!(stdout(&help).contains("--dialect"));
    assert!(stdout(&help).contains("postgresql"));
}

/// A workload on HOT's table at `rate` inserts/s, with the split policy
/// sped up so that a few simulated minutes show where the load settles.
fn workload(rate: u32) -> String {
    format!(
        "seed = 5
duration = \"4m\"
[splitting]
hot_for = \"10s\"
cooldown = \"5s\"
balance_interval = \"5s\"
move_after = \"10s\"
[[table]]
name = \"UserAccessLogs\"
inserts_per_sec = {rate}
[table.columns]
LastAccess = \"timestamp\"
UserId = \"uuid\"
"
    )
}

/// The `(x one node)` figures of a forecast: as written, then with the fix.
fn multiples(message: &str) -> Vec<f64> {
    message
        .match_indices("x one node)")
        .chain(message.match_indices("x), busiest"))
        .map(|(i, _)| {
            let head = &message[..i];
            let start = head.rfind('(').unwrap() + 1;
            head[start..].parse::<f64>().unwrap()
        })
        .collect()
}

#[test]
fn a_workload_weighs_and_forecasts_hotspots() {
    let dir = files(&[
        ("hot.sql", HOT),
        ("busy.toml", &workload(5000)),
        ("quiet.toml", &workload(20)),
    ]);
    // Twenty inserts a second: the hotspot is real but harmless.
    let quiet = advise(
        dir.path(),
        &["hot.sql", "--workload", "quiet.toml", "--format", "json"],
    );
    assert_eq!(quiet.status.code(), Some(0), "{}", stdout(&quiet));
    let json: serde_json::Value = serde_json::from_str(&stdout(&quiet)).unwrap();
    let finding = &json["findings"][0];
    assert_eq!(finding["rule"], "monotonic-key");
    assert_eq!(finding["severity"], "info");
    assert!(finding["message"]
        .as_str()
        .unwrap()
        .contains("harmless at this rate"));

    // Five thousand a second on two nodes: one node saturates as written;
    // the fix spreads the writes over both.
    let busy = advise(
        dir.path(),
        &[
            "hot.sql",
            "--workload",
            "busy.toml",
            "--nodes",
            "2",
            "--format",
            "json",
        ],
    );
    assert_eq!(busy.status.code(), Some(1), "{}", stdout(&busy));
    let json: serde_json::Value = serde_json::from_str(&stdout(&busy)).unwrap();
    let finding = &json["findings"][0];
    assert_eq!(finding["severity"], "error");
    let message = finding["message"].as_str().unwrap();
    assert!(
        message.contains("Forecast (rowtree simulate, 2 nodes)"),
        "{message}"
    );
    let x = multiples(message);
    assert_eq!(x.len(), 2, "{message}");
    assert!(
        x[0] <= 1.05,
        "as written, at most one node's worth: {message}"
    );
    assert!(
        x[1] >= 1.3,
        "with the fix, more than one node's worth: {message}"
    );

    // A workload naming a table the schema lacks is unusable input.
    std::fs::write(
        dir.path().join("bad.toml"),
        workload(10).replace("UserAccessLogs", "Nope"),
    )
    .unwrap();
    let bad = advise(dir.path(), &["hot.sql", "--workload", "bad.toml"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("Nope"));
}

#[test]
fn a_live_database_is_advised_from_its_own_ddl() {
    let dir = files(&[]);
    let data = dir.path().join("logsdb");
    let sql = Command::new(env!("CARGO_BIN_EXE_rowtree"))
        .args(["sql", "--data-dir"])
        .arg(&data)
        .args(["-e", HOT])
        .output()
        .unwrap();
    assert!(
        sql.status.success(),
        "{}",
        String::from_utf8_lossy(&sql.stderr)
    );

    let text = advise(dir.path(), &["--database", "logsdb"]);
    assert_eq!(text.status.code(), Some(1), "{}", stdout(&text));
    let out = stdout(&text);
    assert!(
        out.starts_with("logsdb.ddl:1:1: error[monotonic-key] UserAccessLogs: "),
        "{out}"
    );
    assert!(out.contains("No split was hot"), "{out}");

    let json = advise(dir.path(), &["--database", "logsdb", "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(doc["findings"][0]["rule"], "monotonic-key");
    assert_eq!(doc["hot_splits"], serde_json::json!([]));

    // Files and a database do not mix; a missing directory is unusable input.
    let both = advise(dir.path(), &["--database", "logsdb", "x.sql"]);
    assert_eq!(both.status.code(), Some(2));
    let missing = advise(dir.path(), &["--database", "nowhere"]);
    assert_eq!(missing.status.code(), Some(2));
}

#[test]
fn a_workload_forecasts_a_postgresql_schema_too() {
    let schema = "CREATE TABLE useraccesslogs (
  lastaccess timestamptz NOT NULL,
  userid varchar(36) NOT NULL,
  PRIMARY KEY (lastaccess, userid)
);
";
    let busy = workload(5000)
        .replace("UserAccessLogs", "useraccesslogs")
        .replace("LastAccess", "lastaccess")
        .replace("UserId", "userid");
    let dir = files(&[("hot.sql", schema), ("busy.toml", &busy)]);
    let out = advise(
        dir.path(),
        &[
            "hot.sql",
            "--dialect",
            "postgresql",
            "--workload",
            "busy.toml",
            "--nodes",
            "2",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let message = json["findings"][0]["message"].as_str().unwrap();
    let x = multiples(message);
    assert_eq!(x.len(), 2, "{message}");
    assert!(x[0] <= 1.05 && x[1] >= 1.3, "{message}");
}
