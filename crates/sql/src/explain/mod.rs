//! EXPLAIN: the operator tree as a typed description, and its renderings.
//!
//! A statement's plan is described once, as a [`PlanTree`] of
//! [`PlanNode`]s (`describe.rs`), and every form a client sees is rendered
//! from that description, never re-parsed from another form:
//!
//! ```text
//!   physical Plan ──describe──▶ PlanTree ──text()──────────▶ EXPLAIN [ANALYZE] rows
//!   (+ dml head)                   │     ──scan_totals()───▶ query stats
//!                                  └────(server)───────────▶ google.spanner.v1.QueryPlan
//! ```
//!
//! Each node names its operator (`TableScan`, `HashJoin`, ...), carries the
//! one-line description EXPLAIN prints, key-value attributes (table, index,
//! key ranges, filter, join type, ...) and, after an execution, its counters.
//!
//! What the description says: a scan shows what the planner decided about
//! storage: table or index (and whether it fetches base rows by key), the
//! key ranges it reads, the direction, an early limit, and the residual
//! filter. A join shows its method; an interleaved merge join that reads
//! each row tree once shows its one `TreeScan` (parent+child, the parent's
//! key ranges, each side's filter) in place of the two scans. With ANALYZE
//! (after the plan ran), each line also gives the rows the operator
//! produced and, for scans, the keys read and splits touched. INSERT,
//! UPDATE and DELETE show their operator (`Update T: set Name`,
//! `Delete T`, `Insert T (cols): 2 rows`, ...) over the plan of the rows
//! they read; with ANALYZE, the rows affected and a note that the statement
//! was rolled back.

mod describe;
mod tree;

pub(crate) use describe::{describe, describe_dml, explain_dml};
pub use tree::{NodeStats, PlanNode, PlanTree, ScanCounters};
