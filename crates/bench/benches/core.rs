//! The core benchmarks: reads, index lookups, durable commits (one writer
//! and 32 concurrent writers, to show group commit) and a cascade delete of
//! a row tree, each on a durable on-disk database (the real engine: fjall,
//! one fsync per commit group) and in memory for comparison.
//!
//! ```sh
//! cargo bench -p rowtree-bench
//! ```
//!
//! The whole suite takes a few minutes; `cargo bench -p rowtree-bench --
//! commit` runs only the benchmarks whose name contains `commit`. What each
//! benchmark does, and one run's medians, are in `docs/performance.md`.

/// The benchmarks allocate as the `rowtree` binary does (jemalloc), so
/// they time what ships: with glibc's malloc, some of them measure the
/// allocator's state more than the database (docs/performance.md, "The
/// criterion regressions were glibc's malloc").
#[cfg(all(unix, not(target_env = "musl")))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use rowtree_bench::workload::{self, KeyGen};
use rowtree_db::Database;
use tempfile::TempDir;

/// A benchmark database and, for a durable one, the directory holding it.
struct Fixture {
    /// `disk` or `memory`: the last part of every benchmark's name.
    name: &'static str,
    // Declared before `_dir` so the database closes before its directory
    // is removed.
    db: Database,
    _dir: Option<TempDir>,
}

impl Fixture {
    /// A durable database in a fresh directory under cargo's target
    /// directory (on the build disk, never a tmpfs), with the schema.
    fn disk() -> Fixture {
        let dir = tempfile::Builder::new()
            .prefix("rowtree-bench-")
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .expect("create a temporary directory");
        let db = Database::open(dir.path()).expect("open the database");
        workload::create_schema(&db).expect("create the schema");
        Fixture {
            name: "disk",
            db,
            _dir: Some(dir),
        }
    }

    /// An in-memory database with the schema.
    fn memory() -> Fixture {
        let db = Database::in_memory();
        workload::create_schema(&db).expect("create the schema");
        Fixture {
            name: "memory",
            db,
            _dir: None,
        }
    }

    /// Both kinds, each loaded with `workload::ROWS` rows of `T`.
    fn loaded() -> Vec<Fixture> {
        let fixtures = [Fixture::disk(), Fixture::memory()];
        for f in &fixtures {
            workload::load_t(&f.db, workload::ROWS).expect("preload T");
        }
        fixtures.into()
    }
}

/// Point reads, 100-row range scans and index lookups over 100,000
/// preloaded rows, at random keys.
fn reads(c: &mut Criterion) {
    let fixtures = Fixture::loaded();

    // Check once that every request returns what it should, so no
    // benchmark times an empty answer.
    for f in &fixtures {
        let db = &f.db;
        let row = db.read(&workload::point_read(4242)).expect("point read");
        assert_eq!(row.len(), 1);
        let rows = db.read(&workload::range_scan(500)).expect("range scan");
        assert_eq!(rows.len(), workload::SCAN_ROWS as usize);
        let per_col = (workload::ROWS / workload::COL_VALUES) as usize;
        for storing in [false, true] {
            let entries = db
                .read(&workload::index_lookup(42, storing))
                .expect("index lookup");
            assert_eq!(entries.len(), per_col);
            assert_eq!(entries[0].len(), if storing { 3 } else { 2 });
        }
    }

    let mut group = c.benchmark_group("point_read");
    group.throughput(Throughput::Elements(1));
    for f in &fixtures {
        let mut keys = KeyGen::new(1);
        group.bench_function(f.name, |b| {
            b.iter(|| {
                let id = keys.below(workload::ROWS);
                f.db.read(&workload::point_read(id)).expect("point read")
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("range_scan_100");
    group.throughput(Throughput::Elements(workload::SCAN_ROWS as u64));
    for f in &fixtures {
        let mut keys = KeyGen::new(2);
        group.bench_function(f.name, |b| {
            b.iter(|| {
                let first = keys.below(workload::ROWS - workload::SCAN_ROWS);
                f.db.read(&workload::range_scan(first)).expect("range scan")
            })
        });
    }
    group.finish();

    for (group_name, storing) in [("index_lookup", false), ("index_lookup_storing", true)] {
        let mut group = c.benchmark_group(group_name);
        group.throughput(Throughput::Elements(1));
        for f in &fixtures {
            let mut keys = KeyGen::new(3);
            group.bench_function(f.name, |b| {
                b.iter(|| {
                    let col = keys.below(workload::COL_VALUES);
                    f.db.read(&workload::index_lookup(col, storing))
                        .expect("index lookup")
                })
            });
        }
        group.finish();
    }
}

/// Single-row commits of a 1 KB row: one writer in a loop, then 32 writer
/// threads at once. Both report the time per commit, so commits/s is the
/// throughput criterion prints (`elem/s`).
fn commits(c: &mut Criterion) {
    const WRITERS: usize = 32;
    let fixtures = [Fixture::disk(), Fixture::memory()];
    let next_id = AtomicI64::new(0);

    let mut group = c.benchmark_group("commit_1kb");
    group.throughput(Throughput::Elements(1));
    for f in &fixtures {
        group.bench_function(format!("1_writer/{}", f.name), |b| {
            b.iter(|| {
                let id = next_id.fetch_add(1, Ordering::Relaxed);
                f.db.write(vec![workload::commit_row(id)]).expect("commit")
            })
        });

        let before = f.db.commit_stats();
        group.bench_function(format!("{WRITERS}_writers/{}", f.name), |b| {
            b.iter_custom(|iters| {
                // Every writer does the same number of commits; the time is
                // scaled back to `iters` commits.
                let per_writer = iters.div_ceil(WRITERS as u64);
                let done = per_writer * WRITERS as u64;
                let elapsed = workload::concurrent_commits(&f.db, WRITERS, per_writer, &next_id)
                    .expect("concurrent commits");
                elapsed.mul_f64(iters as f64 / done as f64)
            })
        });
        let after = f.db.commit_stats();
        let (commits, flushes) = (
            after.commits - before.commits,
            after.flushes - before.flushes,
        );
        println!(
            "commit_1kb/{WRITERS}_writers/{}: {commits} commits in {flushes} group flushes ({:.1} commits per flush)",
            f.name,
            commits as f64 / flushes.max(1) as f64
        );
    }
    group.finish();
}

/// Deleting the root of a 1,000-child row tree, which ON DELETE CASCADE
/// turns into 1,001 row deletes in one commit. Each iteration deletes a
/// tree built (untimed) just before it.
fn cascade_delete(c: &mut Criterion) {
    let fixtures = [Fixture::disk(), Fixture::memory()];
    let next_root = AtomicI64::new(0);

    for f in &fixtures {
        let root = next_root.fetch_add(1, Ordering::Relaxed);
        f.db.write(workload::tree(root)).expect("build a tree");
        let leaves = workload::count_leaves(&f.db, root).expect("count leaves");
        assert_eq!(leaves, workload::TREE_CHILDREN as usize);
        f.db.write(vec![workload::delete_tree(root)])
            .expect("delete a tree");
        assert_eq!(workload::count_leaves(&f.db, root).expect("count"), 0);
    }

    let mut group = c.benchmark_group("cascade_delete_1000");
    group.throughput(Throughput::Elements(workload::TREE_CHILDREN as u64 + 1));
    for f in &fixtures {
        group.bench_function(f.name, |b| {
            b.iter_batched(
                || {
                    let root = next_root.fetch_add(1, Ordering::Relaxed);
                    f.db.write(workload::tree(root)).expect("build a tree");
                    root
                },
                |root| {
                    f.db.write(vec![workload::delete_tree(root)])
                        .expect("delete a tree")
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
}

criterion_group! {
    name = core;
    config = config();
    targets = reads, commits, cascade_delete
}
criterion_main!(core);
