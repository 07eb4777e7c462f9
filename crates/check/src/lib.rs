//! Reliability checks against a real `rowtree serve` process.
//!
//! The unit and integration tests of the other crates run the server in
//! process; these checks run the binary users run, over the wire, and do
//! to it what production does: kill it at a random moment and start it
//! again ([`kill`]), and keep hundreds of sessions busy for minutes
//! ([`soak`]). The pieces, bottom-up:
//!
//! 1. [`server`]: start, stop, SIGKILL and restart a `rowtree serve` child
//!    over a data directory the check owns;
//! 2. [`proto`] and [`wire`]: the generated Spanner messages, and Spanner's
//!    wire format for values, key sets, mutations;
//! 3. [`client`]: a small async gRPC client (admin, sessions, transactions,
//!    queries, reads, commits) generic enough for other checkers;
//! 4. [`kill`] and [`soak`]: the checks, each returning a report whose
//!    `violations()` say whether it passed; [`anomaly`]: the isolation
//!    workloads and their history checker, against one server or a cluster
//!    of `rowtree serve --cluster` processes whose nodes die and freeze.

pub mod anomaly;
pub mod client;
pub mod error;
pub mod kill;
pub mod latency;
pub mod proto;
pub mod proxy;
pub mod server;
pub mod soak;
pub mod wire;

pub use error::{Error, Result};
