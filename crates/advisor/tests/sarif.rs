//! The SARIF output validates against the SARIF 2.1.0 JSON schema and
//! carries what a code-scanning viewer shows: rule, level, file, line,
//! column, message and fix.
//!
//! The schema is not kept in this repository. It is the OASIS
//! `sarif-schema-2.1.0.json` (draft-07), taken from the `serde-sarif` crate
//! on crates.io (version 0.8.0, MIT), which ships it as `src/schema.json`:
//! the test asks cargo for that package (`cargo metadata` on a scratch
//! manifest, which downloads it into cargo's registry cache the first time)
//! and reads the file from there. Set `SARIF_SCHEMA=/path/to/schema.json`
//! to use another copy.

use std::path::PathBuf;
use std::process::Command;

use rowtree_advisor::{advise, to_sarif, Config, Source};

const SCHEMA_CRATE: &str = "serde-sarif";
const SCHEMA_VERSION: &str = "0.8.0";

fn schema_path() -> PathBuf {
    if let Ok(path) = std::env::var("SARIF_SCHEMA") {
        return PathBuf::from(path);
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("Cargo.toml"),
        format!(
            "[package]\nname = \"sarif-schema-probe\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n[lib]\npath = \"lib.rs\"\n\n[dependencies]\n{SCHEMA_CRATE} = \"={SCHEMA_VERSION}\"\n\n[workspace]\n"
        ),
    )
    .unwrap();
    std::fs::write(dir.path().join("lib.rs"), "").unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--manifest-path"])
        .arg(dir.path().join("Cargo.toml"))
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo metadata failed (the test needs crates.io or a cached {SCHEMA_CRATE} {SCHEMA_VERSION}): {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let manifest = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == SCHEMA_CRATE && p["version"] == SCHEMA_VERSION)
        .and_then(|p| p["manifest_path"].as_str())
        .expect("serde-sarif in the metadata");
    PathBuf::from(manifest)
        .parent()
        .unwrap()
        .join("src/schema.json")
}

const SCHEMA: &str = "
-- A finding with a fix, one without, and an input error.
CREATE TABLE UserAccessLogs (
  LastAccess TIMESTAMP NOT NULL,
  UserId STRING(36) NOT NULL,
) PRIMARY KEY (LastAccess, UserId);

CREATE TABLE Paths (Path STRING(MAX) NOT NULL) PRIMARY KEY (Path);

CREATE TABLE Broken (A INT64) PRIMARY KEY (Missing);
";

#[test]
fn sarif_validates_against_the_2_1_0_schema() {
    let path = schema_path();
    // The schema's patterns for `language` end in a stray `]`, which
    // ECMAScript regexes read as a literal but the validator's stricter
    // check of the schema itself refuses; escaping it keeps the meaning.
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace(r#"{2}]?$""#, r#"{2}\\]?$""#);
    let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert!(
        schema["$id"]
            .as_str()
            .is_some_and(|id| id.ends_with("sarif-schema-2.1.0.json")),
        "{} is not the SARIF 2.1.0 schema",
        path.display()
    );
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the schema compiles");
    let report = advise(
        &[Source {
            name: "schema dir/app.sql".into(),
            text: SCHEMA.into(),
        }],
        &Config::default(),
    );
    assert!(!report.findings.is_empty() && !report.errors.is_empty());
    let sarif: serde_json::Value = serde_json::from_str(&to_sarif(&report)).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&sarif)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    // The validator does check: a level SARIF does not have is refused.
    let mut broken = sarif.clone();
    broken["runs"][0]["results"][0]["level"] = "fatal".into();
    assert!(!validator.is_valid(&broken));

    // What a code-scanning viewer reads.
    let run = &sarif["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    assert_eq!(rules.len(), rowtree_advisor::Rule::all().len());
    assert!(rules.iter().all(|r| r["help"]["text"].is_string()));
    let result = run["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["ruleId"] == "monotonic-key")
        .unwrap();
    assert_eq!(result["level"], "error");
    let location = &result["locations"][0]["physicalLocation"];
    assert_eq!(location["artifactLocation"]["uri"], "schema%20dir/app.sql");
    assert_eq!(location["region"]["startLine"], 3);
    assert_eq!(location["region"]["startColumn"], 1);
    assert!(result["properties"]["fix"]
        .as_str()
        .unwrap()
        .contains("PRIMARY KEY (UserId, LastAccess)"));
    assert!(result["message"]["text"]
        .as_str()
        .unwrap()
        .contains("Fix:\nCREATE TABLE"));
    let notes = run["invocations"][0]["toolExecutionNotifications"]
        .as_array()
        .unwrap();
    assert_eq!(notes.len(), 1);
    assert_eq!(run["invocations"][0]["executionSuccessful"], false);
}
