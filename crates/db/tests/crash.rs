//! Crash test: a child process commits in a loop and is killed with SIGKILL
//! at a random moment; the parent reopens the database and checks that
//!
//! * every commit the child saw acknowledged is there, whole, and
//! * no commit is half visible: each commit writes a row in `A`, a row in
//!   `B` (a different split) and an index entry, and either all of them
//!   survived or none did.
//!
//! The child is this same test binary, started with `ROWTREE_CRASH_CHILD`
//! set. `CRASH_CYCLES` sets the number of kill cycles (default 5).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rowtree_db::{Database, KeySet, Mutation, ReadRequest, Value};

const SCHEMA: &[&str] = &[
    "CREATE TABLE A (Id INT64 NOT NULL, Writer INT64, Payload STRING(MAX)) PRIMARY KEY (Id)",
    "CREATE TABLE B (Id INT64 NOT NULL, Payload STRING(MAX)) PRIMARY KEY (Id)",
    "CREATE INDEX AByWriter ON A(Writer)",
];

/// The writer: 4 threads commit rows with ids from disjoint sequences and
/// print `ack <id>` after each acknowledged commit.
fn child(dir: &str, start: i64) {
    let db = Database::open(dir).expect("child opens");
    if db.catalog().table("A").is_none() {
        db.apply_ddl(SCHEMA).expect("schema");
    }
    println!("ready");
    let out = Arc::new(Mutex::new(std::io::stdout()));
    let threads: Vec<_> = (0..4i64)
        .map(|t| {
            let db = db.clone();
            let out = out.clone();
            std::thread::spawn(move || {
                let mut n = 0i64;
                loop {
                    let id = start + n * 4 + t;
                    n += 1;
                    let payload =
                        Value::String(format!("payload-{id}-{}", "x".repeat((id % 50) as usize)));
                    db.write(vec![
                        Mutation::insert(
                            "A",
                            &["Id", "Writer", "Payload"],
                            vec![vec![Value::Int64(id), Value::Int64(t), payload.clone()]],
                        ),
                        Mutation::insert(
                            "B",
                            &["Id", "Payload"],
                            vec![vec![Value::Int64(id), payload]],
                        ),
                    ])
                    .expect("commit");
                    use std::io::Write;
                    let mut o = out.lock().expect("stdout");
                    writeln!(o, "ack {id}").expect("print");
                    o.flush().expect("flush");
                }
            })
        })
        .collect();
    for t in threads {
        let _ = t.join();
    }
}

fn ids(db: &Database, table: &str) -> std::collections::BTreeSet<i64> {
    db.read(&ReadRequest::new(table, &["Id"], KeySet::all()))
        .expect("read")
        .into_iter()
        .map(|r| match r[0] {
            Value::Int64(i) => i,
            ref other => panic!("unexpected {other:?}"),
        })
        .collect()
}

#[test]
fn crash_child() {
    // Only does something when started by `sigkill_keeps_acknowledged_commits`.
    if let Ok(dir) = std::env::var("ROWTREE_CRASH_CHILD") {
        let start: i64 = std::env::var("ROWTREE_CRASH_START")
            .expect("start")
            .parse()
            .expect("number");
        child(&dir, start);
    }
}

#[test]
fn sigkill_keeps_acknowledged_commits() {
    if std::env::var("ROWTREE_CRASH_CHILD").is_ok() {
        return;
    }
    let cycles: usize = std::env::var("CRASH_CYCLES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(5);
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("db");
    let exe = std::env::current_exe().expect("test binary");
    let mut acked_total = std::collections::BTreeSet::new();
    let mut seed: u64 = 0x9E3779B97F4A7C15 ^ std::process::id() as u64;
    for cycle in 0..cycles {
        let start = (cycle as i64 + 1) * 1_000_000_000;
        let mut child = Command::new(&exe)
            .args(["--exact", "crash_child", "--nocapture", "--test-threads=1"])
            .env("ROWTREE_CRASH_CHILD", &path)
            .env("ROWTREE_CRASH_START", start.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn child");
        let stdout = child.stdout.take().expect("stdout");
        let acked = Arc::new(Mutex::new(Vec::new()));
        let reader = {
            let acked = acked.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    if let Some(id) = line.strip_prefix("ack ") {
                        acked
                            .lock()
                            .expect("acked")
                            .push(id.trim().parse::<i64>().expect("id"));
                    }
                }
            })
        };
        // Let it write for a random 50-400 ms after its first acknowledgement.
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let run_for = Duration::from_millis(50 + seed % 350);
        let begun = Instant::now();
        while acked.lock().expect("acked").is_empty() && begun.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(run_for);
        child.kill().expect("SIGKILL the child");
        let _ = child.wait();
        reader.join().expect("reader");
        let acked = acked.lock().expect("acked").clone();
        assert!(
            !acked.is_empty(),
            "cycle {cycle}: the child acknowledged nothing"
        );

        let db = Database::open(&path).expect("reopen after SIGKILL");
        let a = ids(&db, "A");
        let b = ids(&db, "B");
        for id in &acked {
            assert!(
                a.contains(id),
                "cycle {cycle}: acknowledged commit {id} lost from A"
            );
        }
        acked_total.extend(acked.iter().copied());
        for id in &acked_total {
            assert!(
                a.contains(id),
                "cycle {cycle}: earlier acknowledged commit {id} lost"
            );
        }
        assert_eq!(
            a, b,
            "cycle {cycle}: a commit is half visible (A and B differ)"
        );
        let by_index: std::collections::BTreeSet<i64> = db
            .read(&ReadRequest::new("A", &["Id"], KeySet::all()).with_index("AByWriter"))
            .expect("index read")
            .into_iter()
            .map(|r| match r[0] {
                Value::Int64(i) => i,
                ref other => panic!("unexpected {other:?}"),
            })
            .collect();
        assert_eq!(
            a, by_index,
            "cycle {cycle}: index entries and rows disagree"
        );
        eprintln!(
            "cycle {cycle}: {} acknowledged, {} rows survive",
            acked.len(),
            a.len()
        );
    }
}
