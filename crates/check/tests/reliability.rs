//! The reliability checks, bounded, against a real `rowtree` binary:
//! `kill` with 4 cycles (one of each kind) and `soak` for 30 s with 32
//! sessions. The full runs are `scripts/reliability`.
//!
//! The binary: `ROWTREE_BINARY` if set (scripts/check sets it to the debug
//! binary that the same `cargo test` builds), else `release/rowtree` in this test's target directory. In
//! CI (`CI` set) that one is built first with `cargo build --release -p
//! rowtree-cli`; elsewhere a missing binary skips the tests with a message.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use rowtree_check::{kill, soak};

/// The two checks share two cores with everything else: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// The binary to test, or `None` (with a message) to skip.
fn binary() -> Option<PathBuf> {
    if let Some(b) = std::env::var_os("ROWTREE_BINARY") {
        let b = PathBuf::from(b);
        assert!(b.is_file(), "ROWTREE_BINARY={} does not exist", b.display());
        return Some(b);
    }
    // <target>/debug/deps/reliability-<hash>
    let exe = std::env::current_exe().expect("the test binary's path");
    let target = exe
        .ancestors()
        .nth(3)
        .expect("a target directory above the test binary")
        .to_path_buf();
    let binary = target.join("release/rowtree");
    let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false");
    if ci {
        let status = Command::new(env!("CARGO"))
            .args(["build", "--release", "-p", "rowtree-cli"])
            .env("CARGO_TARGET_DIR", &target)
            .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .status()
            .expect("cargo runs");
        assert!(
            status.success(),
            "cargo build --release -p rowtree-cli failed"
        );
    }
    if binary.is_file() {
        eprintln!("testing {}", binary.display());
        Some(binary)
    } else {
        eprintln!(
            "SKIPPED: no rowtree release binary at {} and CI is not set; build it with \
             `cargo build --release -p rowtree-cli` or set ROWTREE_BINARY",
            binary.display()
        );
        None
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

#[test]
fn kill_cycles_keep_acknowledged_commits_whole() {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(binary) = binary() else { return };
    let mut config = kill::Config::new(binary, 4);
    config.backfill_rows = 60_000;
    config.clients = 4;
    let report = runtime()
        .block_on(kill::run(&config))
        .expect("the check runs");
    println!("{}", report.summary());
    assert_eq!(report.cycles_by_kind, [1, 1, 1, 1]);
    assert!(report.acknowledged > 0, "nothing was acknowledged");
    // The gc cycle ran garbage collection for real before its kill: a pass
    // finished removing versions, or the kill cut one short (a pass over
    // all the data can outlast the cycle).
    let gc = &report.gc;
    assert!(gc.passes_started > 0, "{gc:?}");
    assert!(gc.passes_removing > 0 || gc.killed_mid_pass > 0, "{gc:?}");
    assert_eq!(report.lost, 0);
    assert_eq!(report.half_applied, 0);
    assert_eq!(report.index_mismatches, 0);
    assert!(
        report.violations().is_empty(),
        "violations: {:?}; errors: {:?}; data kept in {}",
        report.violations(),
        report.error_samples,
        report.work_dir.display()
    );
}

#[test]
fn soak_finishes_every_operation_and_leaks_no_session() {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(binary) = binary() else { return };
    let mut config = soak::Config::new(binary, 32, Duration::from_secs(30));
    config.interval = Duration::from_secs(5);
    config.accounts = 2_000;
    let report = runtime()
        .block_on(soak::run(&config))
        .expect("the check runs");
    println!("{}", report.table());
    assert_eq!(report.intervals.len(), 6);
    assert!(report.total_ops > 0);
    assert!(
        report.intervals.iter().all(|i| i.rss_kib > 0),
        "no RSS samples"
    );
    assert_eq!(report.sessions_held, 32);
    assert_eq!(report.sessions_after_delete, 0);
    assert!(report.sums_checked > 0);
    assert!(
        report.violations().is_empty(),
        "violations: {:?}; errors: {:?}; data kept in {}",
        report.violations(),
        report.error_samples,
        report.work_dir.display()
    );
}
