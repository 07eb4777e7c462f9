//! Workload parsing errors are clear; the same seed gives the same report.

use rowtree_sim::{catalog_from_sql, simulate, SimConfig, Workload};

const SCHEMA: &str = "
CREATE TABLE Logs (
  ShardId INT64 NOT NULL AS (MOD(FARM_FINGERPRINT(CAST(LastAccess AS STRING)), 16)) STORED,
  LastAccess TIMESTAMP NOT NULL,
  UserId INT64 NOT NULL,
  Note STRING(MAX),
) PRIMARY KEY (ShardId, LastAccess, UserId);
CREATE INDEX LogsByUser ON Logs(UserId);
";

fn parse(toml: &str) -> Result<Workload, String> {
    let catalog = catalog_from_sql(SCHEMA).expect("schema");
    Workload::parse(toml, &catalog).map_err(|e| e.to_string())
}

fn error_of(toml: &str) -> String {
    parse(toml).expect_err("should fail")
}

const GOOD: &str = r#"
seed = 5
duration = "3m"
[[table]]
name = "Logs"
inserts_per_sec = 2000
[table.columns]
LastAccess = "timestamp"
UserId = { kind = "uniform", min = 1, max = 1000 }
"#;

#[test]
fn a_good_workload_parses() {
    let w = parse(GOOD).unwrap();
    assert_eq!(w.seed, 5);
    assert_eq!(w.duration, 180_000_000_000);
    assert_eq!(w.tables.len(), 1);
}

#[test]
fn errors_name_what_is_wrong() {
    let e = error_of(&GOOD.replace("name = \"Logs\"", "name = \"Nope\""));
    assert!(
        e.contains("table `Nope` is not in the schema") && e.contains("Logs"),
        "{e}"
    );

    let e = error_of(&GOOD.replace("UserId = {", "Nope = {"));
    assert!(e.contains("no column `Nope`"), "{e}");

    let e = error_of(&GOOD.replace(
        "LastAccess = \"timestamp\"",
        "LastAccess = \"timestamp\"\nShardId = \"uuid\"",
    ));
    assert!(e.contains("`ShardId` is a generated column"), "{e}");

    let e = error_of(&GOOD.replace("UserId = { kind = \"uniform\", min = 1, max = 1000 }", ""));
    assert!(e.contains("key column `UserId` needs a generator"), "{e}");

    let e = error_of(&GOOD.replace("\"uniform\"", "\"gaussian\""));
    assert!(e.contains("unknown generator `gaussian`"), "{e}");

    let e = error_of(&GOOD.replace("kind = \"uniform\", min = 1, max = 1000", "kind = \"uuid\""));
    assert!(e.contains("`uuid` needs a STRING or BYTES column"), "{e}");

    let e = error_of(&GOOD.replace("max = 1000", "max = 1000, mean = 3"));
    assert!(e.contains("unknown parameter `mean`"), "{e}");

    let e = error_of(&GOOD.replace("inserts_per_sec = 2000", "inserts_per_sec = -1"));
    assert!(
        e.contains("`inserts_per_sec` must be a non-negative number"),
        "{e}"
    );

    let e = error_of(&GOOD.replace("duration = \"3m\"", "duration = \"3 parsecs\""));
    assert!(e.contains("duration"), "{e}");

    let e = error_of(&GOOD.replace("seed = 5", "seed = 5\nspeed = 3"));
    assert!(e.contains("unknown field `speed`"), "{e}");

    let e = error_of(&GOOD.replace("inserts_per_sec = 2000", "updates_per_sec = 10"));
    assert!(e.contains("update_columns is empty"), "{e}");

    let e = error_of("[[table]\nname = 1");
    assert!(e.starts_with("workload:"), "{e}");
}

#[test]
fn schema_errors_have_a_line() {
    let e = catalog_from_sql(
        "CREATE TABLE A (X INT64) PRIMARY KEY (X);\nCREATE TABLE B (Y INT64) PRIMARY KEY (Z);",
    )
    .expect_err("bad key");
    assert!(e.to_string().contains("line 2"), "{e}");
}

#[test]
fn same_seed_same_report() {
    let catalog = catalog_from_sql(SCHEMA).unwrap();
    let w = parse(GOOD).unwrap();
    let config = SimConfig::new(2);
    let a = simulate(&catalog, &w, &config, &mut |_, _| {}).unwrap();
    let b = simulate(&catalog, &w, &config, &mut |_, _| {}).unwrap();
    assert_eq!(a, b);
    assert!(a.achieved_ops_per_sec > 0.0);
    assert!(a.multi_split_ops > 0 || a.splits.at_end >= 1);
    let mut w2 = w.clone();
    w2.seed = 6;
    let c = simulate(&catalog, &w2, &config, &mut |_, _| {}).unwrap();
    assert_ne!(serde_json::to_string(&a.heatmap).unwrap(), String::new());
    let _ = c;
}
