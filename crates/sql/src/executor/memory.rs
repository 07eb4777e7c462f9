//! The memory a query's buffers hold, against its limit.
//!
//! Operators that must see all their input before they emit (sort,
//! aggregate, window, a hash join's build side, set operations, an ARRAY
//! subquery) hold it in memory. Each grows a [`Reservation`] row by row
//! against the query's [`Memory`], so a query over too much data fails
//! with RESOURCE_EXHAUSTED instead of exhausting the process.

use std::cell::Cell;
use std::rc::Rc;

use rowtree_types::Value;

use crate::error::{Error, Result};

/// The memory one query holds in its buffers (sorted rows, groups, a hash
/// join's build side, ...), against the limit it started with
/// ([`crate::limits::query_memory`]). Every buffering operator holds a
/// [`Reservation`] and grows it row by row; a row that would cross the limit
/// fails the query with RESOURCE_EXHAUSTED, so a query can be refused but
/// can never exhaust the process's memory.
pub(crate) struct Memory {
    used: Cell<usize>,
    limit: usize,
}

impl Memory {
    pub(super) fn new() -> Rc<Memory> {
        Rc::new(Memory {
            used: Cell::new(0),
            limit: crate::limits::query_memory(),
        })
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

    fn hold_bytes(&mut self, bytes: usize) -> Result<()> {
        let used = self.memory.used.get().saturating_add(bytes);
        if used > self.memory.limit {
            return Err(Error::resource_exhausted(format!(
                "The query needs more than its memory limit of {} MiB to buffer rows for {}; \
                 add a LIMIT, filter more rows out, or stream the result instead",
                self.memory.limit >> 20,
                self.what
            )));
        }
        self.memory.used.set(used);
        self.bytes += bytes;
        Ok(())
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.memory.used.set(self.memory.used.get() - self.bytes);
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
