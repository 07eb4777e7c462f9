//! The memory a query's buffers hold, against its limit and the server's.
//!
//! Operators that must see all their input before they emit (sort,
//! aggregate, window, a hash join's build side, set operations, an ARRAY
//! subquery) hold it in memory. Each grows a [`Reservation`] row by row
//! against the query's [`Memory`], so a query over too much data fails
//! with RESOURCE_EXHAUSTED instead of exhausting the process. DML
//! statements hold the rows they collect to write (and THEN RETURN's)
//! the same way, against one [`Memory`] for the whole statement
//! ([`crate::dml`]).
//!
//! Two budgets are checked on each row (see [`crate::limits`]): the
//! query's own limit, and the [`MemoryPool`] all queries in flight share.
//! A query draws from the pool in slices of [`SLICE`] bytes rather than
//! row by row, so that many queries buffering at once do not all contend
//! on the pool's counter for every row; the slice is cut short where a
//! whole one would not fit, so the pool refuses a query only when the bytes
//! it really needs are not there. Every byte drawn is given back when the
//! reservation that needed it is dropped: that happens when the operator is
//! done with its rows, and when the query ends in any way (its operators
//! are dropped after an error, a cancelled stream or a panic alike).

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;

use rowtree_types::Value;

use crate::error::{Error, Result};
use crate::limits::MemoryPool;

/// How many bytes a query draws from the pool at a time (at most one
/// slice is drawn but unused).
pub(super) const SLICE: usize = 64 << 10;

/// The memory one query holds in its buffers (sorted rows, groups, a hash
/// join's build side, ...), against the limit it started with
/// ([`crate::limits::query_memory`]) and its server's pool. Every buffering
/// operator holds a [`Reservation`] and grows it row by row; a row that
/// would cross either budget fails the query with RESOURCE_EXHAUSTED, so a
/// query can be refused but can never exhaust the process's memory.
pub(crate) struct Memory {
    /// Bytes the query's reservations hold.
    used: Cell<usize>,
    limit: usize,
    pool: Arc<MemoryPool>,
    /// Bytes drawn from the pool: `used`, plus less than a slice while a
    /// reservation grows (given back whenever a reservation is dropped).
    drawn: Cell<usize>,
}

impl Memory {
    /// The memory of a query starting now, drawing from `pool`.
    pub(crate) fn new(pool: &Arc<MemoryPool>) -> Rc<Memory> {
        Rc::new(Memory {
            used: Cell::new(0),
            limit: crate::limits::query_memory(),
            pool: pool.clone(),
            drawn: Cell::new(0),
        })
    }

    /// An empty reservation against this memory, for a buffer used for
    /// `what` ("a sort").
    pub(crate) fn reserve(self: &Rc<Memory>, what: &'static str) -> Reservation {
        Reservation {
            memory: self.clone(),
            bytes: 0,
            what,
        }
    }

    /// Draws from the pool until `drawn` covers `used` bytes (which is
    /// within the query's limit), or says the server's budget ran out.
    fn cover(&self, used: usize, what: &str) -> Result<()> {
        let drawn = self.drawn.get();
        if used <= drawn {
            return Ok(());
        }
        let need = used - drawn;
        let slice = need.max(SLICE.min(self.limit - drawn));
        let got = match self.pool.draw(slice) {
            Ok(()) => slice,
            Err(_) if slice > need => match self.pool.draw(need) {
                Ok(()) => need,
                Err(reserved) => return Err(self.server_exhausted(reserved, what)),
            },
            Err(reserved) => return Err(self.server_exhausted(reserved, what)),
        };
        self.drawn.set(drawn + got);
        Ok(())
    }

    /// Gives the pool back what is drawn beyond `used`.
    fn trim(&self) {
        let spare = self.drawn.get() - self.used.get();
        if spare > 0 {
            self.pool.give_back(spare);
            self.drawn.set(self.used.get());
        }
    }

    fn server_exhausted(&self, reserved: usize, what: &str) -> Error {
        Error::resource_exhausted(format!(
            "The server is out of memory for queries: buffering rows for {what} would take \
             more than is left, as all queries in flight on this server together hold {} MiB; \
             the server's limit is {} MiB (rowtree serve --server-query-memory). Retry when \
             fewer queries run, or make this one hold less: add a LIMIT, filter more rows out, \
             or stream the result",
            reserved.div_ceil(1 << 20),
            self.pool.size() >> 20,
        ))
    }
}

impl Drop for Memory {
    fn drop(&mut self) {
        // Every reservation holds the memory, and trims it when dropped, so
        // nothing is left here; give back whatever is, all the same.
        self.pool.give_back(self.drawn.get());
    }
}

/// Bytes one buffer holds against its query's [`Memory`], given back when
/// the buffer (the reservation) is dropped.
pub(crate) struct Reservation {
    pub(super) memory: Rc<Memory>,
    pub(super) bytes: usize,
    /// What the buffer is for, in the error message: "a sort".
    pub(super) what: &'static str,
}

impl Reservation {
    /// Accounts for `row` being buffered.
    pub(crate) fn hold(&mut self, row: &[Value]) -> Result<()> {
        self.hold_bytes(row_bytes(row))
    }

    /// The bytes this reservation holds.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// Accounts for `bytes` more being held (a key list, an `IN` set).
    pub(crate) fn hold_bytes(&mut self, bytes: usize) -> Result<()> {
        let memory = &self.memory;
        let used = memory.used.get().saturating_add(bytes);
        if used > memory.limit {
            return Err(Error::resource_exhausted(format!(
                "The query needs more than its memory limit of {} MiB to buffer rows for {}; \
                 add a LIMIT, filter more rows out, or stream the result instead",
                memory.limit >> 20,
                self.what
            )));
        }
        memory.cover(used, self.what)?;
        memory.used.set(used);
        self.bytes += bytes;
        Ok(())
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.memory.used.set(self.memory.used.get() - self.bytes);
        self.memory.trim();
    }
}

/// Approximately the bytes `row` occupies: its values and what they own.
pub(super) fn row_bytes(row: &[Value]) -> usize {
    let mut bytes = std::mem::size_of_val(row);
    let mut stack: Vec<&Value> = row.iter().collect();
    while let Some(v) = stack.pop() {
        bytes += match v {
            Value::String(s) => s.len(),
            Value::Bytes(b) => b.len(),
            Value::Array(items) | Value::Struct(items) => {
                stack.extend(items.iter());
                std::mem::size_of_val(items.as_slice())
            }
            Value::Json(j) => json_bytes(j),
            _ => 0,
        };
    }
    bytes
}

/// Approximately the bytes a JSON value owns (without printing it).
pub(super) fn json_bytes(j: &serde_json::Value) -> usize {
    let mut bytes = 0;
    let mut stack = vec![j];
    while let Some(v) = stack.pop() {
        bytes += std::mem::size_of::<serde_json::Value>();
        match v {
            serde_json::Value::String(s) => bytes += s.len(),
            serde_json::Value::Array(items) => stack.extend(items.iter()),
            serde_json::Value::Object(members) => {
                for (k, v) in members {
                    bytes += k.len();
                    stack.push(v);
                }
            }
            _ => {}
        }
    }
    bytes
}
