//! `rowtree bench ycsb`: the real binary on a tiny matrix (embedded and
//! SQLite, both in process), its table on standard output and, with
//! standard error not a terminal, one progress line as each cell starts.

use std::process::Command;

#[test]
fn a_tiny_matrix_prints_its_table_and_a_line_per_cell() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_rowtree"))
        .current_dir(dir.path())
        .args([
            "bench",
            "ycsb",
            "--records",
            "300",
            "--workloads",
            "c,a",
            "--clients",
            "1,2",
            "--systems",
            "embedded,sqlite",
            "--seconds",
            "0.2",
            "--warmup",
            "0",
        ])
        .output()
        .expect("run rowtree");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stderr}");
    // Cells run with systems innermost, then client counts, then workloads.
    let cells: Vec<&str> = stderr.lines().filter(|l| l.starts_with("cell ")).collect();
    let expected = [
        "c · 1 clients · embedded",
        "c · 1 clients · sqlite",
        "c · 2 clients · embedded",
        "c · 2 clients · sqlite",
        "a · 1 clients · embedded",
        "a · 1 clients · sqlite",
        "a · 2 clients · embedded",
        "a · 2 clients · sqlite",
    ];
    assert_eq!(cells.len(), expected.len(), "{stderr}");
    for (i, (line, label)) in cells.iter().zip(expected).enumerate() {
        assert!(
            line.starts_with(&format!("cell {}/8 at ", i + 1))
                && line.ends_with(&format!(" s: {label}")),
            "line {i}: {line:?}\n{stderr}"
        );
    }
    assert!(stdout.contains("#### c: 100% read"), "{stdout}");
    assert!(stdout.contains("| embedded/sqlite |"), "{stdout}");
}
