//! Rowtree's hotspot simulator.
//!
//! Plays a workload (per table: insert, update and read rates, and how each
//! column's values are generated) against the real split machinery of
//! `rowtree-kv` ([`rowtree_kv::SplitManager`]: load tracking, the split
//! policy, merging, balancing, the load history) on N simulated nodes in
//! virtual time. Keys are the real ones: rows and index entries are encoded
//! by `rowtree_db::keys`, generated columns computed by the database's own
//! code. See `docs/simulator.md`.
//!
//! The model: time advances in steps (10 ms); each node serves one
//! CPU-second per second from a FIFO queue; an operation costs modelled CPU
//! (a read 1/22,500 s, a row or index entry written 1/3,500 s, plus a prepare
//! per participant and a commit record on the coordinator when a write spans
//! splits); a request queued longer than the timeout (1 s) fails. Every
//! served access is recorded with the split manager, which is ticked every
//! virtual second.

pub mod demo;
pub mod engine;
pub mod keygen;
pub mod report;
pub mod workload;

pub use demo::{run_demo, DemoConfig, DemoReport, DESIGNS};
pub use engine::{
    capacity_per_node, keyviz_heatmap, keyviz_html, simulate, simulate_with_history, History,
    SimConfig,
};
pub use report::{render_text, Report};
pub use workload::{catalog_from_sql, parse_duration, Costs, Error, Generator, Result, Workload};
