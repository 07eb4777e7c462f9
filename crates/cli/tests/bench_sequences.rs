//! `rowtree bench sequences`: the real binary, embedded and against a real
//! `rowtree serve` (started here on a free port of 127.0.0.1 and killed at
//! the end), in the article tool's text format and in JSON.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};

fn rowtree(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rowtree"))
        .args(args)
        .output()
        .expect("run rowtree")
}

fn ok_stdout(o: &Output) -> String {
    assert!(
        o.status.success(),
        "rowtree failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).expect("utf-8")
}

#[test]
fn one_mode_prints_the_article_tools_output() {
    let out = ok_stdout(&rowtree(&[
        "bench",
        "sequences",
        "--mode",
        "batch",
        "--iterations",
        "50",
        "--threads",
        "5",
        "--txn-latency-ms",
        "1",
        "--batch-size",
        "7",
    ]));
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("50 iterations (5 parallel threads) in ")
            && lines[0].contains(" milliseconds: ")
            && lines[0].ends_with(" values/s"),
        "{out}"
    );
    for (line, p) in lines[1..5].iter().zip([50, 75, 90, 99]) {
        assert!(
            line.starts_with(&format!("Latency: {p}%ile ")) && line.ends_with(" ms"),
            "{out}"
        );
    }
}

#[test]
fn json_output_and_bad_options() {
    let out = ok_stdout(&rowtree(&[
        "bench",
        "sequences",
        "--mode",
        "sync",
        "--iterations",
        "30",
        "--threads",
        "3",
        "--txn-latency-ms",
        "0",
        "--in-memory",
        "--format",
        "json",
    ]));
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON object");
    assert_eq!(v["mode"], "sync");
    assert_eq!(v["threads"], 3);
    assert_eq!(v["iterations"], 30);
    // A fresh sequence, one value per request, nothing else taking any.
    assert_eq!(
        (v["min_value"].as_i64(), v["max_value"].as_i64()),
        (Some(1), Some(30))
    );
    for key in ["values_per_sec", "p50_ms", "p75_ms", "p90_ms", "p99_ms"] {
        assert!(v[key].as_f64().is_some(), "{key}: {v}");
    }

    let bad = rowtree(&["bench", "sequences", "--mode", "fast"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown mode \"fast\""));
    let bad = rowtree(&[
        "bench",
        "sequences",
        "--mode",
        "async-batch",
        "--batch-size",
        "10",
        "--low-water",
        "10",
    ]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr)
        .contains("--low-water (10) must be below --batch-size (10)"));
}

#[test]
fn the_matrix_runs_every_mode_and_evaluates_the_targets() {
    let out = ok_stdout(&rowtree(&[
        "bench",
        "sequences",
        "--matrix",
        "--iterations",
        "40",
        "--txn-latency-ms",
        "1",
        "--in-memory",
        "--format",
        "json",
    ]));
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON object");
    let runs = v["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 10, "five modes at 10 and 50 threads");
    assert_eq!(v["seed"].as_array().expect("the article's table").len(), 8);
    assert_eq!(v["unthrottled"]["iterations"], 100_000);
    let spread = v["unthrottled"]["spread"].as_array().expect("spread");
    assert_eq!(
        spread.iter().map(|b| b.as_u64().unwrap()).sum::<u64>(),
        100_000
    );
    assert!(v["targets"].as_array().expect("targets").len() >= 10);
}

#[test]
fn a_database_replicated_on_three_nodes_in_the_process() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let out = ok_stdout(&rowtree(&[
        "bench",
        "sequences",
        "--mode",
        "sync",
        "--iterations",
        "30",
        "--threads",
        "3",
        "--txn-latency-ms",
        "0",
        "--replicas",
        "3",
        "--max-clock-offset",
        "1",
        "--data-dir",
        data,
        "--format",
        "json",
    ]));
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON object");
    // Gapless and unique through the replicated commits.
    assert_eq!(
        (v["min_value"].as_i64(), v["max_value"].as_i64()),
        (Some(1), Some(30))
    );
    // Each node kept its own replica and Raft log.
    for node in 1..=3 {
        let node_dir = dir.path().join(format!("node-{node}"));
        assert!(node_dir.join("database").is_dir(), "{node_dir:?}");
        assert!(node_dir.join("node.json").is_file(), "{node_dir:?}");
    }

    let bad = rowtree(&["bench", "sequences", "--replicas", "8"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--replicas"));
    let bad = rowtree(&["bench", "sequences", "--replicas", "3", "--in-memory"]);
    assert!(!bad.status.success());
}

/// A running `rowtree serve --in-memory`, killed when dropped.
struct Serve(Child, String);

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve() -> Serve {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rowtree"))
        .args(["serve", "--in-memory", "--port", "0", "--http-port", "0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start rowtree serve");
    // The banner goes to standard error.
    let stderr = child.stderr.take().expect("stderr");
    let mut endpoint = None;
    for line in BufReader::new(stderr).lines() {
        let line = line.expect("read the banner");
        if let Some(addr) = line
            .trim()
            .strip_prefix("rowtree: serving Spanner's gRPC API on ")
        {
            endpoint = Some(addr.trim().to_string());
            break;
        }
    }
    Serve(child, endpoint.expect("the banner names the address"))
}

#[test]
fn every_mode_runs_against_rowtree_serve() {
    let server = serve();
    for mode in ["sync", "async", "batch", "async-batch", "bit-reversed"] {
        let out = ok_stdout(&rowtree(&[
            "bench",
            "sequences",
            "--mode",
            mode,
            "--iterations",
            "30",
            "--threads",
            "4",
            "--txn-latency-ms",
            "1",
            "--batch-size",
            "10",
            "--low-water",
            "3",
            "--endpoint",
            &server.1,
            "--format",
            "json",
        ]));
        let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON object");
        assert_eq!(v["mode"], mode);
        assert_eq!(v["iterations"], 30);
    }
}
