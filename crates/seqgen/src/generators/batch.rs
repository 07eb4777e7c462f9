//! The batch generator: each instance reserves a batch of values in one
//! small transaction and hands them out from memory.
//!
//! A transaction is needed once per batch, so values come as fast as
//! `batch_size` times the rate of small transactions. Two instances hand
//! out values from different batches at the same time, so values are not
//! ordered across instances (nor across threads of one instance relative
//! to when they commit), and values left in a batch when an instance stops
//! are never handed out: a gap, never a duplicate, because the row already
//! records them as taken.
//!
//! A caller that finds the batch empty fetches the next one while the
//! others wait for it (one fetch at a time per instance); that caller pays
//! one transaction's latency.

use std::ops::Range;
use std::sync::Arc;

use parking_lot::Mutex;

use super::Generator;
use crate::error::{Error, Result};
use crate::store::{reserve_in_own_transaction, Store};

/// Hands out values of one sequence from batches reserved in advance.
pub struct Batch<S: Store> {
    store: Arc<S>,
    name: String,
    batch_size: i64,
    /// The values of the current batch not yet handed out.
    left: Mutex<Range<i64>>,
}

impl<S: Store> Batch<S> {
    /// The generator for sequence `name` in `store`, reserving
    /// `batch_size` values at a time (at least 1).
    pub fn new(store: Arc<S>, name: impl Into<String>, batch_size: i64) -> Result<Batch<S>> {
        if batch_size < 1 {
            return Err(Error::Config(format!(
                "the batch size must be at least 1; got {batch_size}"
            )));
        }
        Ok(Batch {
            store,
            name: name.into(),
            batch_size,
            left: Mutex::new(0..0),
        })
    }

    /// How many values of the current batch are left.
    pub fn remaining(&self) -> i64 {
        let left = self.left.lock();
        left.end - left.start
    }
}

impl<S: Store> Generator for Batch<S> {
    fn next_value(&self) -> Result<i64> {
        let mut left = self.left.lock();
        if left.is_empty() {
            let first = reserve_in_own_transaction(&*self.store, &self.name, self.batch_size)?;
            *left = first..first + self.batch_size;
        }
        let value = left.start;
        left.start += 1;
        Ok(value)
    }
}
