//! The asynchronous generator: each value comes from a small transaction of
//! its own, run before the caller's transaction.
//!
//! The small transaction only reads and increments the row, so it holds the
//! row's lock for far less time than a caller's transaction would, and
//! values come faster than from [`Sync`](crate::Sync). The value is
//! committed as used before the caller's transaction starts: if that
//! transaction then fails, the value is a gap.

use std::sync::Arc;

use super::Generator;
use crate::error::Result;
use crate::store::{reserve_in_own_transaction, Store};

/// Hands out values of one sequence, one small transaction per value.
pub struct Async<S: Store> {
    store: Arc<S>,
    name: String,
}

impl<S: Store> Async<S> {
    /// The generator for sequence `name` in `store`.
    pub fn new(store: Arc<S>, name: impl Into<String>) -> Async<S> {
        Async {
            store,
            name: name.into(),
        }
    }
}

impl<S: Store> Generator for Async<S> {
    fn next_value(&self) -> Result<i64> {
        reserve_in_own_transaction(&*self.store, &self.name, 1)
    }
}
