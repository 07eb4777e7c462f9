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

/// The PostgreSQL server the bench starts stops, and its directory goes,
/// when the bench is killed (SIGKILL: no destructor runs) mid-run.
#[test]
fn a_killed_bench_leaves_no_postgresql_running() {
    use std::io::{BufRead, BufReader};
    use std::os::unix::fs::PermissionsExt;
    use std::process::Stdio;
    use std::time::{Duration, Instant};

    if !std::path::Path::new("/usr/lib/postgresql").exists() {
        eprintln!("PostgreSQL is not installed: nothing to check");
        return;
    }
    // The bench's temporary directories go here, where the test can find
    // them; readable by the `postgres` user the server runs as under root.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut bench = Command::new(env!("CARGO_BIN_EXE_rowtree"))
        .current_dir(tmp.path())
        .env("TMPDIR", tmp.path())
        .args([
            "bench",
            "ycsb",
            "--records",
            "500",
            "--workloads",
            "c",
            "--clients",
            "1",
            "--systems",
            "postgres",
            "--seconds",
            "60",
            "--out",
        ])
        .arg(tmp.path().join("out"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run rowtree");
    // Once the cell runs, the server is up and loaded.
    let mut stderr = BufReader::new(bench.stderr.take().unwrap());
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        if stderr.read_line(&mut line).unwrap() == 0 {
            panic!("the bench ended before its cell: {seen}");
        }
        seen.push_str(&line);
        if line.starts_with("cell 1/1") {
            break;
        }
    }
    let cluster = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("ycsb-postgres-"))
        })
        .expect("the cluster's directory under TMPDIR");
    let pid_file = std::fs::read_to_string(cluster.join("data/postmaster.pid")).unwrap();
    let postmaster = format!("/proc/{}", pid_file.lines().next().unwrap().trim());
    assert!(std::path::Path::new(&postmaster).exists());

    bench.kill().unwrap();
    bench.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::path::Path::new(&postmaster).exists() || cluster.exists() {
        assert!(
            Instant::now() < deadline,
            "30 s after the bench was killed: server running {}, directory left {}",
            std::path::Path::new(&postmaster).exists(),
            cluster.exists()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
