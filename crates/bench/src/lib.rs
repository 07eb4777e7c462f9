//! Rowtree's benchmarks: the workloads they run, and (in `benches/core.rs`)
//! the criterion benchmarks that time them on the embedded API.
//!
//! Run them all, on a durable on-disk database and in memory:
//!
//! ```sh
//! cargo bench -p rowtree-bench
//! ```
//!
//! `docs/performance.md` says what each benchmark measures and quotes the
//! medians of one run.

pub mod workload;

pub use workload::KeyGen;
