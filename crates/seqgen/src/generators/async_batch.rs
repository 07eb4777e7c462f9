//! The asynchronous batch generator: like [`Batch`](crate::Batch), but the
//! next batch is fetched on a background thread as soon as fewer than a
//! low-water mark of values remain, so callers wait only when a batch runs
//! dry before the next one has arrived.
//!
//! With the batch size and the low-water mark tuned to the rate of use (the
//! low-water mark above the number of values used while one batch is
//! fetched), no caller ever waits: values cost no transaction at all. The
//! order and gap properties are those of [`Batch`](crate::Batch), and a
//! batch fetched but not reached when the instance stops is a gap too.
//!
//! Because fetches run on their own thread, values may be taken from inside
//! the caller's transaction (a fetch is never nested in it).

use std::ops::Range;
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};

use super::Generator;
use crate::error::{Error, Result};
use crate::store::{reserve_in_own_transaction, Store};

/// Hands out values of one sequence from batches fetched in the background.
pub struct AsyncBatch<S: Store> {
    inner: Arc<Inner<S>>,
}

struct Inner<S: Store> {
    store: Arc<S>,
    name: String,
    batch_size: i64,
    low_water: i64,
    state: Mutex<State>,
    /// Signalled when a fetch finishes (with a batch or an error).
    arrived: Condvar,
}

#[derive(Default)]
struct State {
    /// The values of the current batch not yet handed out.
    current: Range<i64>,
    /// A fetched batch waiting for the current one to run out.
    next: Option<Range<i64>>,
    /// Whether a fetch is in flight.
    fetching: bool,
    /// The error of the last fetch, for the next caller that has to wait.
    failure: Option<Error>,
    /// Fetches started (for tests and statistics).
    fetches: u64,
    /// Callers that found the batch empty and had to wait.
    waits: u64,
}

impl<S: Store> AsyncBatch<S> {
    /// The generator for sequence `name` in `store`, reserving
    /// `batch_size` values at a time and fetching the next batch when fewer
    /// than `low_water` remain (`0 <= low_water < batch_size`). The first
    /// batch is fetched at once, in the background.
    pub fn new(
        store: Arc<S>,
        name: impl Into<String>,
        batch_size: i64,
        low_water: i64,
    ) -> Result<AsyncBatch<S>> {
        if batch_size < 1 {
            return Err(Error::Config(format!(
                "the batch size must be at least 1; got {batch_size}"
            )));
        }
        if !(0..batch_size).contains(&low_water) {
            return Err(Error::Config(format!(
                "the low-water mark must be at least 0 and below the batch size {batch_size}; \
                 got {low_water}"
            )));
        }
        let inner = Arc::new(Inner {
            store,
            name: name.into(),
            batch_size,
            low_water,
            state: Mutex::new(State::default()),
            arrived: Condvar::new(),
        });
        {
            let mut state = inner.state.lock();
            Inner::start_fetch(&inner, &mut state);
        }
        Ok(AsyncBatch { inner })
    }

    /// Batches fetched so far (including one in flight).
    pub fn fetches(&self) -> u64 {
        self.inner.state.lock().fetches
    }

    /// How many calls found the batch empty and waited for a fetch.
    pub fn waits(&self) -> u64 {
        self.inner.state.lock().waits
    }
}

impl<S: Store> Inner<S> {
    /// Starts a background fetch of the next batch (the caller holds the
    /// state lock and has checked that none is in flight or waiting).
    fn start_fetch(inner: &Arc<Inner<S>>, state: &mut State) {
        state.fetching = true;
        state.fetches += 1;
        let me = Arc::clone(inner);
        let spawned = std::thread::Builder::new()
            .name("seqgen-fetch".into())
            .spawn(move || {
                let fetched = reserve_in_own_transaction(&*me.store, &me.name, me.batch_size);
                let mut state = me.state.lock();
                state.fetching = false;
                match fetched {
                    Ok(first) => state.next = Some(first..first + me.batch_size),
                    Err(e) => state.failure = Some(e),
                }
                me.arrived.notify_all();
            });
        if let Err(e) = spawned {
            state.fetching = false;
            state.failure = Some(Error::Config(format!(
                "cannot start the background fetch thread: {e}"
            )));
        }
    }
}

impl<S: Store> Generator for AsyncBatch<S> {
    fn next_value(&self) -> Result<i64> {
        let inner = &self.inner;
        let mut state = inner.state.lock();
        let mut waited = false;
        while state.current.is_empty() {
            if let Some(batch) = state.next.take() {
                state.current = batch;
                break;
            }
            if let Some(e) = state.failure.take() {
                return Err(e);
            }
            if !state.fetching {
                Inner::start_fetch(inner, &mut state);
            }
            if !waited {
                state.waits += 1;
                waited = true;
            }
            inner.arrived.wait(&mut state);
        }
        let value = state.current.start;
        state.current.start += 1;
        let remaining = state.current.end - state.current.start;
        if remaining < inner.low_water && state.next.is_none() && !state.fetching {
            Inner::start_fetch(inner, &mut state);
        }
        Ok(value)
    }
}
