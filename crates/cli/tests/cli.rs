//! The `rowtree` binary end to end: output formats, errors with positions,
//! exit statuses, parameters, `--bail`, `rowtree ddl` on a data directory,
//! and what `rowtree serve --help` says of the memory budgets.

use std::process::{Command, Output};

fn rowtree(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rowtree"))
        .args(args)
        .output()
        .expect("run rowtree")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn json_lines_for_every_statement_kind() {
    let o = rowtree(&[
        "sql",
        "--in-memory",
        "--format",
        "json",
        "-e",
        "CREATE TABLE T (Id INT64 NOT NULL, Name STRING(MAX), B BYTES(MAX), F FLOAT64) PRIMARY KEY (Id);
         INSERT INTO T (Id, Name, B, F) VALUES (1, 'a', b'hi', 1.5), (2, NULL, NULL, NULL);
         SELECT Id, Name, B, F FROM T ORDER BY Id;
         SELECT Nope FROM T",
    ]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "a failed statement makes the exit status 1"
    );
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    assert_eq!(lines[0], serde_json::json!({"ok": true}));
    assert_eq!(lines[1], serde_json::json!({"row_count": 2}));
    assert_eq!(
        lines[2],
        serde_json::json!({"columns": ["Id", "Name", "B", "F"], "rows": [["1", "a", "aGk=", 1.5], ["2", null, null, null]]})
    );
    assert_eq!(lines[3]["error"]["code"], "INVALID_ARGUMENT");
    assert_eq!(lines[3]["error"]["line"], 4);
    assert!(
        lines[3]["error"]["message"]
            .as_str()
            .expect("message")
            .starts_with("Unrecognized name: Nope"),
        "{}",
        lines[3]
    );
}

#[test]
fn parameters_csv_and_bail() {
    let o = rowtree(&[
        "sql",
        "--in-memory",
        "--format",
        "csv",
        "--param",
        "n=INT64:2",
        "-e",
        "SELECT x, 'a,b' AS y FROM UNNEST(GENERATE_ARRAY(1, @n)) AS x",
    ]);
    assert!(o.status.success());
    assert_eq!(stdout(&o), "x,y\n1,\"a,b\"\n2,\"a,b\"\n");

    let o = rowtree(&[
        "sql",
        "--in-memory",
        "--format",
        "json",
        "--bail",
        "-e",
        "SELECT 1/0; SELECT 2",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stdout(&o).lines().count(),
        1,
        "--bail stops after the first failure"
    );
    let o = rowtree(&[
        "sql",
        "--in-memory",
        "--format",
        "json",
        "-e",
        "SELECT 1/0; SELECT 2 AS two",
    ]);
    assert_eq!(
        stdout(&o).lines().count(),
        2,
        "without --bail the rest still runs"
    );
}

#[test]
fn a_data_directory_keeps_schema_and_data_and_ddl_prints_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path().join("db");
    let d = d.to_str().expect("utf-8 path");
    let o = rowtree(&[
        "sql",
        "--data-dir",
        d,
        "-e",
        "CREATE TABLE Users (UserId INT64 NOT NULL, LastAccess TIMESTAMP) PRIMARY KEY (UserId);
         CREATE NULL_FILTERED INDEX UsersByLastAccess ON Users(UserId, LastAccess), INTERLEAVE IN Users;
         INSERT INTO Users (UserId) VALUES (7)",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = rowtree(&[
        "sql",
        "--data-dir",
        d,
        "--format",
        "json",
        "-e",
        "SELECT UserId FROM Users",
    ]);
    assert_eq!(
        stdout(&o).trim(),
        r#"{"columns":["UserId"],"rows":[["7"]]}"#
    );
    let o = rowtree(&["ddl", "--data-dir", d]);
    assert!(o.status.success());
    assert_eq!(
        stdout(&o).trim(),
        "CREATE TABLE Users (\n  UserId INT64 NOT NULL,\n  LastAccess TIMESTAMP,\n) PRIMARY KEY(UserId);\n\n\
         CREATE NULL_FILTERED INDEX UsersByLastAccess ON Users(UserId, LastAccess), INTERLEAVE IN Users;"
    );
}

#[test]
fn a_postgresql_database_keeps_its_dialect() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path().join("db");
    let d = d.to_str().expect("utf-8 path");
    let o = rowtree(&[
        "sql",
        "--data-dir",
        d,
        "--dialect",
        "postgresql",
        "--format",
        "csv",
        "-e",
        "create table Users (Id bigint primary key, Name varchar(20));
         insert into users (id, name) values (1, 'Ann'), (2, 'Bo') returning id;
         select name from users where id = 2",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout(&o).contains("name\nBo"), "{}", stdout(&o));
    // Reopened without the flag, the database is still PostgreSQL: its DDL
    // prints in that form and GoogleSQL syntax is a syntax error.
    let o = rowtree(&["ddl", "--data-dir", d]);
    assert!(o.status.success());
    assert!(
        stdout(&o).contains("CREATE TABLE users (") && stdout(&o).contains("bigint"),
        "{}",
        stdout(&o)
    );
    let o = rowtree(&["sql", "--data-dir", d, "-e", "SELECT `name` FROM users"]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("syntax error"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn errors_name_statement_line_and_column() {
    let o = rowtree(&[
        "sql",
        "--in-memory",
        "-e",
        "CREATE TABLE T (A INT64) PRIMARY KEY (A);\nCREATE TABLE T (\n  B INT32) PRIMARY KEY (B)",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("statement 2"), "{err}");
    assert!(err.contains("line 3, column 5"), "{err}");
}

#[test]
fn serve_help_explains_both_memory_budgets() {
    let o = rowtree(&["serve", "--help"]);
    assert!(o.status.success());
    let help = stdout(&o);
    assert!(help.contains("--query-memory <MIB>"), "{help}");
    assert!(help.contains("--server-query-memory <MIB>"), "{help}");
    assert!(
        help.contains("Memory all queries in flight may hold together"),
        "{help}"
    );
    let bad = rowtree(&["serve", "--server-query-memory", "0"]);
    assert!(!bad.status.success());
}

#[test]
fn serve_help_explains_the_postgresql_port() {
    let o = rowtree(&["serve", "--help"]);
    assert!(o.status.success());
    let help = stdout(&o);
    assert!(help.contains("--pg-port <PORT>"), "{help}");
    assert!(help.contains("--pg-create-databases"), "{help}");
    // Creating databases on connect means nothing without the port.
    let bad = rowtree(&["serve", "--in-memory", "--pg-create-databases"]);
    assert!(!bad.status.success());
}

#[test]
fn simulate_keyviz_names_the_schema_and_counts_time_from_the_start() {
    // Schema and workload in a temporary directory: its path must not
    // reach the page's title.
    let dir = tempfile::tempdir().expect("tempdir");
    let schema = dir.path().join("access-logs.sql");
    std::fs::write(
        &schema,
        "CREATE TABLE Logs (LastAccess TIMESTAMP NOT NULL, UserId INT64 NOT NULL) \
         PRIMARY KEY (LastAccess, UserId)",
    )
    .unwrap();
    let workload = dir.path().join("w.toml");
    std::fs::write(
        &workload,
        "seed = 1\nduration = \"3m\"\n[[table]]\nname = \"Logs\"\ninserts_per_sec = 200\n\
         [table.columns]\nLastAccess = \"timestamp\"\nUserId = { kind = \"uniform\", min = 1, max = 1000 }\n",
    )
    .unwrap();
    let page = dir.path().join("kv.html");
    let o = rowtree(&[
        "simulate",
        "--schema",
        schema.to_str().unwrap(),
        "--workload",
        workload.to_str().unwrap(),
        "--nodes",
        "2",
        "--keyviz",
        page.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<title>Key Visualizer: access-logs (simulated, 2 nodes)</title>"),
        "{}",
        &html[..html.len().min(600)]
    );
    let tmp = dir.path().to_string_lossy().into_owned();
    assert!(!html.contains(&tmp), "no temporary path in the page");
    assert!(html.contains("t+0:00 to t+0:03 of simulated time"));
    assert!(!html.contains("1970-01-01"));
    assert!(html.contains("\"id\":\"row-Logs-0\""));
}

#[test]
fn the_cluster_hotspot_demo_checks_its_arguments_before_starting_nodes() {
    let out = rowtree(&[
        "demo",
        "hotspots",
        "--cluster",
        "--designs",
        "uuid,no-such-design",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no design \"no-such-design\"") && err.contains("hash-sharded"),
        "{err}"
    );
    let out = rowtree(&["demo", "hotspots", "--cluster", "--duration", "5s"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("at least 15s"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Cluster options need --cluster.
    let out = rowtree(&["demo", "hotspots", "--node-capacity", "100"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--cluster"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
