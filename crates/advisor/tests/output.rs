//! The text and JSON reports of a small two-file schema, compared with
//! `tests/output/expected.{txt,json}`. Run with `UPDATE_GOLDENFILES=1` to
//! rewrite them after a deliberate change, and read the diff.

use std::path::Path;

use rowtree_advisor::{advise, to_json, to_text, Config, Source};

fn check(path: &Path, actual: &str) {
    if std::env::var_os("UPDATE_GOLDENFILES").is_some() {
        std::fs::write(path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        expected == actual,
        "{} differs (UPDATE_GOLDENFILES=1 rewrites it):\n{actual}",
        path.display()
    );
}

#[test]
fn text_and_json_reports() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/output");
    let sources: Vec<Source> = ["app.sql", "indexes.sql"]
        .iter()
        .map(|name| Source {
            name: name.to_string(),
            text: std::fs::read_to_string(dir.join(name)).unwrap(),
        })
        .collect();
    let report = advise(&sources, &Config::default());
    assert_eq!(report.exit_code(), 2);
    check(&dir.join("expected.txt"), &to_text(&report, false));
    check(&dir.join("expected.json"), &(to_json(&report) + "\n"));
    let coloured = to_text(&report, true);
    assert!(coloured.contains("\x1b[1;31merror\x1b[0m"));
}
