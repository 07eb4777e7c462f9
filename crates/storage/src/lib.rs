//! Storage: an ordered byte key-value store, and MVCC versions on top of it.
//!
//! Everything Rowtree keeps ends up here as byte keys and byte values:
//!
//! * [`Engine`] is the interface the upper layers use: point reads, ordered
//!   range scans (forward and reverse), and atomic, optionally durable write
//!   batches, over a few key spaces ([`Space::Data`] for rows, [`Space::Meta`]
//!   for the catalog and other metadata, [`Space::Heads`] for each row's newest
//!   version's timestamp). Two engines implement it: [`FjallEngine`]
//!   (on disk, an LSM tree) and [`MemoryEngine`] (tests, ephemeral databases).
//! * [`Mvcc`] stores many versions of each row, tagged with their commit
//!   timestamps, so a reader at timestamp `t` sees exactly the rows committed at
//!   or before `t`, without locks; [`Mvcc::gc`] drops versions nobody can read.
//! * Failures are typed by what the caller does ([`Error`]): after a failed
//!   write or fsync the disk engine accepts no more writes until the database
//!   is reopened ([`Error::Stopped`]); data that fails a checksum is reported
//!   ([`Error::Corrupt`]), never served.
//!
//! The engine knows nothing about rows, tables or timestamps; the MVCC layer
//! knows timestamps but not tables. Splits and routing live one layer up, in
//! `rowtree-kv`.

mod engine;
mod error;
mod fjall_engine;
mod memory;
pub mod mvcc;

pub use engine::{Durability, Engine, KeyRange, NextKey, ScanIter, Space, WriteBatch, WriteOp};
pub use error::{is_disk_full, Error, Failed, Result, Stop};
pub use fjall_engine::{FjallEngine, FjallOptions};
pub use memory::MemoryEngine;
pub use mvcc::{GcStats, Mvcc};
