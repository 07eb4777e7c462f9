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
//!
//! `src/bin/grpc_load.rs` is a load generator for `rowtree serve` over
//! Spanner's gRPC API (point reads and single-row commits with N sessions):
//!
//! ```sh
//! cargo run --release -p rowtree-bench --bin grpc-load -- --spawn --sessions 32 --duration 20
//! ```
//!
//! [`ycsb`] runs YCSB's core workloads against Rowtree (embedded and over
//! gRPC), PostgreSQL and SQLite in one run: `rowtree bench ycsb`.

pub mod sql_workload;
pub mod workload;
pub mod ycsb;

pub use workload::KeyGen;
