//! Application-side sequence generators: plain numeric ids (employee
//! numbers, invoice numbers) handed out from a `sequences` table, in the
//! four ways that trade order and gaplessness for throughput.
//!
//! A sequence is one row of the `sequences` table ([`store`]): its name and
//! the next value nobody has been given yet. Only one transaction can
//! update a row at a time, so a generator that takes one value per
//! transaction can never go faster than one value per transaction latency
//! (10 ms transactions: 100 values/s for the whole database, however many
//! clients or nodes). The generators differ in whose transaction takes the
//! values and how many at once:
//!
//! | need | use | why |
//! |---|---|---|
//! | ordered *and* gapless numbers (legal invoice numbering) | [`Sync`] | the value commits or rolls back with the caller's transaction; slow, and callers abort one another |
//! | ordered numbers, gaps allowed | [`Async`] | a small transaction per value, outside the caller's: faster, still one row update per value |
//! | unique numbers, fast | [`Batch`] | one row update per batch of N values |
//! | unique numbers, fast, no added latency | [`AsyncBatch`] | as [`Batch`], with the next batch fetched in the background before it is needed |
//! | a primary key | none of these: a `bit_reversed_positive` `CREATE SEQUENCE` or `GENERATE_UUID()` | monotonic keys send every insert to the last split (a hotspot); bit-reversed values and UUIDs spread them over the key space, and a built-in sequence takes no row lock at all |
//!
//! Every generator is written once against the [`Store`] trait and works
//! with the embedded database ([`embedded`]) and with any Spanner-API
//! endpoint ([`remote`]). [`bench`](mod@bench) reproduces the performance comparison
//! of the four, plus the built-in bit-reversed sequence, in the same
//! transaction shape.
//!
//! ```
//! use std::sync::Arc;
//! use rowtree_seqgen::{create_sequence, AsyncBatch, Generator, Store, Sync};
//!
//! let db = Arc::new(rowtree_db::Database::in_memory());
//! create_sequence(&*db, "invoice", 1)?;
//!
//! // Gapless: the value is taken inside the transaction that uses it.
//! let invoices = Sync::new("invoice");
//! let first = db.run(&mut |txn| invoices.next_value(txn))?.value;
//! assert_eq!(first, 1);
//!
//! // Fast: values from batches of 100 fetched in the background.
//! let ids = AsyncBatch::new(db.clone(), "invoice", 100, 20)?;
//! let a = ids.next_value()?;
//! let b = ids.next_value()?;
//! assert!(a >= 2 && b == a + 1);
//! # Ok::<(), rowtree_seqgen::Error>(())
//! ```

mod backoff;
pub mod bench;
pub mod embedded;
pub mod error;
pub mod generators;
pub mod plot;
pub mod remote;
pub mod store;

pub use backoff::{Backoff, RetryPolicy};
pub use error::{Error, Result};
pub use generators::{Async, AsyncBatch, Batch, Generator, Sync, SyncValues};
pub use store::{
    create_sequence, reserve, reserve_in_own_transaction, Committed, Store, Txn, SEQUENCES_DDL,
    SEQUENCES_TABLE,
};
