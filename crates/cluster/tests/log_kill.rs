//! A process killed with SIGKILL in the middle of appending to its Raft
//! log loses no entry the log store had acknowledged as durable, and
//! leaves no hole or damaged entry behind.
//!
//! The test runs itself as the child: `appender_child` does nothing unless
//! `ROWTREE_LOG_KILL_CHILD` names a directory; then it opens a log store
//! there and appends to several groups at once, forever, printing
//! `acked <group> <index>` after each append's durability callback. The
//! parent starts it, kills it at a random moment, reads what it printed,
//! reopens the store and checks every group's log.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Command as Process, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use openraft::storage::{IOFlushed, RaftLogReader, RaftLogStorage};
use openraft::type_config::TypeConfigExt;
use openraft::EntryPayload;
use rowtree_cluster::raft::{to_raft_log_id, Entry, GroupId, LogStore, TypeConfig};
use rowtree_cluster::{Command, Commit, LogId};

const CHILD: &str = "ROWTREE_LOG_KILL_CHILD";
const GROUPS: u64 = 4;
const CYCLES: usize = 5;

/// The entry the child writes at `index` of `group`: a 1 KB write whose
/// content says where it belongs, so a misplaced or damaged entry shows.
fn entry(group: u64, index: u64) -> Entry {
    let mut value = format!("group {group} entry {index} ").into_bytes();
    value.resize(1024, b'.');
    openraft::Entry {
        log_id: to_raft_log_id(LogId::new(1, index)),
        payload: EntryPayload::Normal(Command::Write {
            commits: vec![Commit {
                ts: index + 1,
                writes: vec![(format!("k{group}").into_bytes(), Some(value))],
            }],
            closed_ts: None,
            meta: Vec::new(),
        }),
    }
}

#[test]
fn appender_child() {
    let Ok(dir) = std::env::var(CHILD) else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async move {
        let store = LogStore::open(&dir).unwrap();
        let mut tasks = Vec::new();
        for group in 0..GROUPS {
            let mut log = store.group(GroupId(group));
            tasks.push(tokio::spawn(async move {
                let state = log.get_log_state().await.unwrap();
                let mut next = state.last_log_id.map_or(0, |id| id.index + 1);
                loop {
                    // Appends of 1 to 5 entries.
                    let n = 1 + next % 5;
                    let entries: Vec<_> = (next..next + n).map(|i| entry(group, i)).collect();
                    let (tx, rx) = TypeConfig::oneshot();
                    log.append(entries, IOFlushed::signal(tx)).await.unwrap();
                    rx.await.unwrap().unwrap();
                    next += n;
                    println!("acked {group} {}", next - 1);
                }
            }));
        }
        for task in tasks {
            task.await.unwrap();
        }
    });
}

/// A pseudo-random delay in `[300, 900)` ms, different on every call.
fn random_delay() -> Duration {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos() as u64;
    Duration::from_millis(300 + (nanos.wrapping_mul(6364136223846793005) >> 33) % 600)
}

#[test]
fn a_kill_9_mid_append_loses_no_acknowledged_entry() {
    let dir = tempfile::tempdir().unwrap();
    let mut acked: HashMap<u64, u64> = HashMap::new();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for cycle in 0..CYCLES {
        let mut child = Process::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "appender_child",
                "--nocapture",
                "--test-threads",
                "1",
            ])
            .env(CHILD, dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let seen: Arc<Mutex<HashMap<u64, u64>>> = Arc::default();
        let reader = {
            let seen = Arc::clone(&seen);
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    let mut words = line.split_whitespace();
                    if words.next() != Some("acked") {
                        continue;
                    }
                    let group: u64 = words.next().unwrap().parse().unwrap();
                    let index: u64 = words.next().unwrap().parse().unwrap();
                    let mut seen = seen.lock().unwrap();
                    let last = seen.entry(group).or_default();
                    *last = (*last).max(index);
                }
            })
        };
        // Let it append for a while (at least until it acknowledged
        // something), then kill it without warning.
        let started = Instant::now();
        while seen.lock().unwrap().is_empty() {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "cycle {cycle}: the child acknowledged nothing in a minute"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        std::thread::sleep(random_delay());
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        reader.join().unwrap();
        for (group, index) in seen.lock().unwrap().iter() {
            let last = acked.entry(*group).or_default();
            *last = (*last).max(*index);
        }

        // Every group's log: contiguous from 0, every entry the one written
        // there, and reaching at least the last acknowledged index.
        let store = LogStore::open(dir.path()).unwrap();
        runtime.block_on(async {
            for group in 0..GROUPS {
                let mut log = store.group(GroupId(group));
                let entries = log.try_get_log_entries(..).await.unwrap();
                for (i, e) in entries.iter().enumerate() {
                    assert_eq!(
                        *e,
                        entry(group, i as u64),
                        "cycle {cycle}, group {group}: entry {i} is not what was written there"
                    );
                }
                let state = log.get_log_state().await.unwrap();
                let last = state.last_log_id.map(|id| id.index);
                assert_eq!(last, entries.len().checked_sub(1).map(|n| n as u64));
                if let Some(&acked) = acked.get(&group) {
                    assert!(
                        last.is_some_and(|l| l >= acked),
                        "cycle {cycle}, group {group}: entry {acked} was acknowledged, the log ends at {last:?}"
                    );
                }
            }
        });
        drop(store);
    }
    eprintln!("acknowledged before the last kill: {acked:?}");
    assert_eq!(acked.len() as u64, GROUPS);
}
