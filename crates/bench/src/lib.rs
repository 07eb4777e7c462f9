//! Rowtree's benchmarks: the workloads they run, and (in `benches/core.rs`)
//! the criterion benchmarks that time them on the embedded API; the SQL
//! benchmarks (`benches/sql.rs`, data and queries in [`sql_workload`]) time
//! queries through `rowtree_sql::Session`.
//!
//! Run them all, on a durable on-disk database and in memory:
//!
//! ```sh
//! cargo bench -p rowtree-bench
//! ```
//!
//! `docs/performance.md` says what each benchmark measures and quotes the
//! medians of one run.

pub mod sql_workload;
pub mod workload;

pub use workload::KeyGen;
