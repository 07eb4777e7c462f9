//! `rowtree cluster up` and `rowtree cluster status` with real processes:
//! three nodes form a cluster, the placement leader is killed with
//! SIGKILL and the others elect a new one, `cluster up` stops every node
//! on SIGTERM, and a second `cluster up` on the same directory brings the
//! same cluster back from its data, where `cluster remove` takes a node
//! out. Also the refusals of `serve
//! --cluster` and `serve` on each other's directories.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const ROWTREE: &str = env!("CARGO_BIN_EXE_rowtree");

/// A running `rowtree cluster up`, killed (with its nodes, which stop when
/// their standard input closes) when dropped.
struct Up {
    child: Child,
}

impl Drop for Up {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `rowtree cluster up` on `dir` and waits for its "is up" line.
fn up(dir: &Path) -> (Up, String) {
    let mut child = Command::new(ROWTREE)
        .args(["cluster", "up", "--nodes", "3", "--timeout", "60", "--dir"])
        .arg(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start rowtree cluster up");
    let stdout = child.stdout.take().expect("stdout");
    let up = Up { child };
    let mut banner = String::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.expect("read cluster up's output");
        banner.push_str(&line);
        banner.push('\n');
        if line.contains("Ctrl-C stops it") {
            return (up, banner);
        }
    }
    panic!("cluster up ended before the cluster was up: {banner}");
}

fn status(dir: &Path) -> Option<Value> {
    let out = Command::new(ROWTREE)
        .args(["cluster", "status", "--format", "json", "--dir"])
        .arg(dir)
        .output()
        .expect("run rowtree cluster status");
    out.status
        .success()
        .then(|| serde_json::from_slice(&out.stdout).expect("status is JSON"))
}

/// Polls the status until `ok` holds; fails after 30 s.
fn wait_for(dir: &Path, what: &str, ok: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let s = status(dir);
        if let Some(s) = &s {
            if ok(s) {
                return s.clone();
            }
        }
        assert!(Instant::now() < deadline, "{what}: last status {s:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn nodes(s: &Value) -> &Vec<Value> {
    s["nodes"].as_array().expect("nodes")
}

fn pids(dir: &Path) -> Vec<(u64, u32)> {
    let file: Value =
        serde_json::from_slice(&std::fs::read(dir.join("cluster.json")).unwrap()).unwrap();
    file["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["id"].as_u64().unwrap(), n["pid"].as_u64().unwrap() as u32))
        .collect()
}

fn alive(pid: u32) -> bool {
    // A zombie (exited, not yet reaped) has no cmdline.
    std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| !c.is_empty())
}

fn signal(pid: u32, sig: &str) {
    let ok = Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .expect("run kill")
        .success();
    assert!(ok, "kill {sig} {pid}");
}

#[test]
fn a_local_cluster_elects_a_new_leader_after_kill_9_and_comes_back_from_its_data() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let (mut cluster, banner) = up(dir);
    assert!(banner.contains("is up: 3 nodes"), "{banner}");
    let first = wait_for(dir, "three live voters", |s| {
        s["from_leader"] == true
            && nodes(s)
                .iter()
                .filter(|n| n["state"] == "live" && n["placement"] == "voter")
                .count()
                == 3
    });
    let cluster_id = first["cluster_id"].as_str().unwrap().to_string();
    assert!(banner.contains(&cluster_id), "{banner}");
    let leader = first["leader"].as_u64().unwrap();
    let term = first["term"].as_u64().unwrap();
    let text = Command::new(ROWTREE)
        .args(["cluster", "status", "--dir"])
        .arg(dir)
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains(&format!("leader node {leader}")), "{text}");
    assert_eq!(text.matches(" up ").count(), 3, "{text}");

    // kill -9 the placement leader's process.
    let pids = pids(dir);
    let (_, leader_pid) = *pids.iter().find(|(id, _)| *id == leader).unwrap();
    let killed = Instant::now();
    signal(leader_pid, "-KILL");
    let after = wait_for(dir, "a new leader that sees the old one gone", |s| {
        s["from_leader"] == true
            && s["leader"].as_u64().is_some_and(|l| l != leader)
            && nodes(s).iter().any(|n| {
                n["id"] == leader && n["last_heard_ms"].as_u64().is_none_or(|ms| ms > 2_000)
            })
    });
    let elected_in = killed.elapsed();
    assert!(after["term"].as_u64().unwrap() > term, "{after}");
    assert_eq!(after["cluster_id"], cluster_id.as_str());
    // Two election timeouts are at most 4 s; status polling adds a little.
    assert!(elected_in < Duration::from_secs(8), "took {elected_in:?}");
    eprintln!("new placement leader after kill -9 within {elected_in:?}");

    // SIGTERM stops cluster up and every node it started.
    signal(cluster.child.id(), "-TERM");
    let deadline = Instant::now() + Duration::from_secs(20);
    while cluster.child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "cluster up did not stop");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(cluster.child.wait().unwrap().success());
    for (id, pid) in &pids {
        assert!(!alive(*pid), "node {id} (pid {pid}) outlived cluster up");
    }

    // The same directory starts the same cluster again.
    let (_cluster, banner) = up(dir);
    assert!(banner.contains(&cluster_id), "{banner}");
    let again = wait_for(dir, "the same three nodes live again", |s| {
        s["from_leader"] == true
            && nodes(s)
                .iter()
                .filter(|n| {
                    n["state"] == "live" && n["last_heard_ms"].as_u64().is_some_and(|ms| ms < 2_000)
                })
                .count()
                == 3
    });
    assert_eq!(again["cluster_id"], cluster_id.as_str());

    // `cluster remove` takes a node out for good.
    let out = Command::new(ROWTREE)
        .args(["cluster", "remove", "--node-id", "3", "--dir"])
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("node 3 removed"));
    wait_for(dir, "node 3 removed, two voters", |s| {
        nodes(s)
            .iter()
            .any(|n| n["id"] == 3 && n["state"] == "removed" && n["placement"] == "none")
            && nodes(s)
                .iter()
                .filter(|n| n["placement"] == "voter")
                .count()
                == 2
    });
    let out = Command::new(ROWTREE)
        .args(["cluster", "remove", "--node-id", "42", "--dir"])
        .arg(dir)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not in the cluster"));
}

/// Runs `rowtree` with `args` and then `path`, and checks that it fails
/// saying `expected` on standard error.
fn refused(args: &[&str], path: Option<&Path>, expected: &str) {
    let mut command = Command::new(ROWTREE);
    command.args(args);
    if let Some(path) = path {
        command.arg(path);
    }
    let out = command.output().unwrap();
    assert!(!out.status.success(), "{args:?} succeeded");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(expected), "{args:?}: {err}");
}

#[test]
fn cluster_and_single_process_directories_are_not_mixed_up() {
    let dir = tempfile::tempdir().unwrap();
    let single = dir.path().join("single");
    std::fs::create_dir_all(&single).unwrap();
    std::fs::write(single.join("registry.json"), "{}").unwrap();
    let node = ["serve", "--cluster", "--node-id", "1", "--peer-port", "0"];
    refused(
        &[&node[..], &["--data-dir"]].concat(),
        Some(&single),
        "single-process",
    );

    let node_dir = dir.path().join("node");
    std::fs::create_dir_all(&node_dir).unwrap();
    std::fs::write(node_dir.join("node.json"), "{}").unwrap();
    refused(
        &["serve", "--port", "0", "--http-port", "0", "--data-dir"],
        Some(&node_dir),
        "start it with --cluster",
    );
    // A node needs an id, and a cluster node has no in-memory mode.
    refused(&["serve", "--cluster", "--in-memory"], None, "");
    // Without TLS or tokens between nodes, only loopback without --insecure.
    refused(
        &[&node[..], &["--host", "0.0.0.0", "--data-dir"]].concat(),
        Some(&dir.path().join("exposed")),
        "insecure",
    );
}
