//! The four ways to hand out values of a table-based sequence.
//!
//! | generator | transaction it uses | unique | ordered | gapless | latency added to the caller |
//! |---|---|---|---|---|---|
//! | [`Sync`] | the caller's own | yes | yes | yes | a read of the row, and the row's lock held until the caller commits |
//! | [`Async`] | one of its own, before the caller's | yes | yes | no | one small transaction per value |
//! | [`Batch`] | one of its own per batch | yes | no | no | one small transaction per batch |
//! | [`AsyncBatch`] | one of its own per batch, in the background | yes | no | no | none while batches arrive in time |
//!
//! *Ordered* means a value is never handed out after a higher one (in
//! commit order for [`Sync`], in the order calls return for [`Async`]);
//! *gapless* that every value up to the last one handed out is used by a
//! committed transaction. The out-of-transaction generators leave a gap
//! whenever the caller's transaction fails after getting a value, and the
//! batch generators also when an instance stops with values left in its
//! batch: those values are never handed out again, by anyone.
//!
//! Only [`Sync`] runs inside the caller's transaction; the others implement
//! [`Generator`] and run their own transactions, so they must be called
//! outside the caller's transaction (Spanner has no nested transactions),
//! or, for [`AsyncBatch`], from anywhere: its fetches run on a background
//! thread.

mod async_batch;
mod asynchronous;
mod batch;
mod sync;

pub use async_batch::AsyncBatch;
pub use asynchronous::Async;
pub use batch::Batch;
pub use sync::{Sync, SyncValues};

use crate::error::Result;

/// A generator that hands out values from transactions of its own.
pub trait Generator: Send + std::marker::Sync {
    /// The next value. Never returns a value twice, across every
    /// generator of the same sequence in every process.
    fn next_value(&self) -> Result<i64>;
}
