//! The query limits: what one statement may ask for, and what all the
//! queries of the process may hold together.
//!
//! A statement longer than [`MAX_STATEMENT_CHARS`] or with more than
//! [`MAX_PARAMETERS`] parameters is refused with INVALID_ARGUMENT before it
//! is parsed (Spanner's documented limits). Nesting is bounded by the parser
//! (`rowtree_parser::MAX_NESTING`). The limits on what a commit may write
//! are the database's (`rowtree_db::write`).
//!
//! Memory has two budgets, both checked by the operators that buffer rows
//! (see `executor::memory`) and by DML for the rows it collects to write
//! and return (see [`crate::dml`]), both failing the query with
//! RESOURCE_EXHAUSTED with a message that says which one ran out:
//!
//! - **per query**: one query holds at most [`query_memory`] bytes
//!   ([`DEFAULT_QUERY_MEMORY`], `rowtree serve --query-memory`). This stops
//!   one big sort, but not many: 256 sessions each sorting a gigabyte would
//!   still ask for 256 GiB.
//! - **per server**: a [`MemoryPool`] counts the bytes held by every query
//!   in flight; each query's buffers draw from it as they grow and give
//!   back when they are dropped (when the operator is done, or the query
//!   ends, fails or is cancelled), so the pool cannot leak. The process has
//!   one, [`server_memory_pool`], sized by default at half the memory the
//!   machine (or its cgroup) has ([`default_server_query_memory`]);
//!   `rowtree serve --server-query-memory` changes it. A query that would
//!   take the pool past its size fails; the others go on. Sessions use the
//!   server pool unless given their own (`Session::with_memory_pool`, for
//!   tests and embedders that want a separate budget).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use crate::{Error, Params, Result};

/// Longest statement, in characters (Spanner: "Query statement length:
/// 1 million characters").
pub const MAX_STATEMENT_CHARS: usize = 1_000_000;

/// Most parameters one statement may bind (Spanner: 950).
pub const MAX_PARAMETERS: usize = 950;

/// Most bytes of rows one query may hold in memory at once by default (in
/// its sorts, aggregations, hash joins, window partitions, DISTINCT and set
/// operations, ARRAY subqueries, an unstreamed result, and the rows, keys
/// and THEN RETURN results of a DML statement); past it the query
/// fails with RESOURCE_EXHAUSTED instead of the process running out of
/// memory. `rowtree serve --query-memory` changes it ([`set_query_memory`]).
pub const DEFAULT_QUERY_MEMORY: usize = 1 << 30;

static QUERY_MEMORY: AtomicUsize = AtomicUsize::new(DEFAULT_QUERY_MEMORY);

/// The memory limit of every query from now on, in bytes.
pub fn set_query_memory(bytes: usize) {
    QUERY_MEMORY.store(bytes, Ordering::Relaxed);
}

/// The memory limit of a query starting now, in bytes.
pub fn query_memory() -> usize {
    QUERY_MEMORY.load(Ordering::Relaxed)
}

/// The bytes the buffers of many queries hold together, against a size.
///
/// A query's buffers draw from the pool as they grow and give back when
/// dropped; a draw that would take [`reserved`](MemoryPool::reserved) past
/// [`size`](MemoryPool::size) is refused and that query fails with
/// RESOURCE_EXHAUSTED. Only the executor draws (the counting is in
/// `executor::memory`), so nothing outside it can leave bytes reserved.
#[derive(Debug)]
pub struct MemoryPool {
    size: AtomicUsize,
    reserved: AtomicUsize,
}

impl MemoryPool {
    /// An empty pool of `size` bytes.
    pub fn new(size: usize) -> Arc<MemoryPool> {
        Arc::new(MemoryPool {
            size: AtomicUsize::new(size),
            reserved: AtomicUsize::new(0),
        })
    }

    /// The most bytes the pool hands out at once.
    pub fn size(&self) -> usize {
        self.size.load(Ordering::Relaxed)
    }

    /// Changes the size. Bytes already reserved stay reserved (a smaller
    /// size only refuses new draws until enough is given back).
    pub fn set_size(&self, bytes: usize) {
        self.size.store(bytes, Ordering::Relaxed);
    }

    /// The bytes the queries in flight hold now.
    pub fn reserved(&self) -> usize {
        self.reserved.load(Ordering::Acquire)
    }

    /// Reserves `bytes`, or returns how many are reserved already if that
    /// would exceed the size.
    pub(crate) fn draw(&self, bytes: usize) -> std::result::Result<(), usize> {
        let size = self.size();
        self.reserved
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |reserved| {
                reserved.checked_add(bytes).filter(|&total| total <= size)
            })
            .map(|_| ())
    }

    /// Gives back `bytes` drawn earlier.
    pub(crate) fn give_back(&self, bytes: usize) {
        let before = self.reserved.fetch_sub(bytes, Ordering::AcqRel);
        debug_assert!(before >= bytes, "gave back more than was drawn");
    }
}

/// The pool of the whole process: the queries of every session and every
/// database draw from it unless their session has a pool of its own. Its
/// size is [`default_server_query_memory`] until
/// [`set_server_query_memory`] changes it.
pub fn server_memory_pool() -> &'static Arc<MemoryPool> {
    static POOL: OnceLock<Arc<MemoryPool>> = OnceLock::new();
    POOL.get_or_init(|| MemoryPool::new(default_server_query_memory()))
}

/// The size of the process's pool from now on, in bytes
/// (`rowtree serve --server-query-memory`).
pub fn set_server_query_memory(bytes: usize) {
    server_memory_pool().set_size(bytes);
}

/// The size of the process's pool, in bytes.
pub fn server_query_memory() -> usize {
    server_memory_pool().size()
}

/// What the server pool holds when the machine's memory cannot be read
/// (outside Linux): 4 GiB.
pub const FALLBACK_SERVER_QUERY_MEMORY: usize = 4 << 30;

/// The default size of the process's pool: half the memory the process may
/// use, which is the machine's physical memory (`MemTotal` in
/// `/proc/meminfo`) or, inside a container, its cgroup's limit if that is
/// lower; [`FALLBACK_SERVER_QUERY_MEMORY`] if neither can be read. Half
/// leaves the other half to the block cache, memtables, transactions and
/// the allocator's slack.
pub fn default_server_query_memory() -> usize {
    match usable_memory() {
        Some(bytes) => (bytes / 2).max(1 << 20),
        None => FALLBACK_SERVER_QUERY_MEMORY,
    }
}

/// The memory this process may use, in bytes, if it can be read: physical
/// memory, or the cgroup's limit when lower (v2 `memory.max`, v1
/// `memory.limit_in_bytes`; v2 writes "max" for no limit, v1 a huge
/// number, which the physical memory then undercuts).
fn usable_memory() -> Option<usize> {
    let physical = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| meminfo_total(&text));
    let cgroup = [
        "/sys/fs/cgroup/memory.max",
        "/sys/fs/cgroup/memory/memory.limit_in_bytes",
    ]
    .iter()
    .filter_map(|path| std::fs::read_to_string(path).ok())
    .filter_map(|text| text.trim().parse::<usize>().ok())
    .min();
    match (physical, cgroup) {
        (Some(p), Some(c)) => Some(p.min(c)),
        (p, c) => p.or(c),
    }
}

/// `MemTotal` of `/proc/meminfo`'s text, in bytes.
fn meminfo_total(meminfo: &str) -> Option<usize> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut words = line["MemTotal:".len()..].split_whitespace();
    let kib: usize = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") | None => kib.checked_mul(1024),
        Some(_) => None,
    }
}

/// Checks a statement's length and parameter count.
pub fn check_statement(sql: &str, params: &Params) -> Result<()> {
    // A byte count under the limit is a character count under it.
    if sql.len() > MAX_STATEMENT_CHARS {
        let chars = sql.chars().count();
        if chars > MAX_STATEMENT_CHARS {
            return Err(Error::invalid(format!(
                "Statement is too long: {chars} characters; the maximum is {MAX_STATEMENT_CHARS}"
            )));
        }
    }
    if params.len() > MAX_PARAMETERS {
        return Err(Error::invalid(format!(
            "Too many parameters: {}; a statement may have at most {MAX_PARAMETERS}",
            params.len()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rowtree_types::{Type, Value};

    #[test]
    fn statement_length_counts_characters() {
        let params = Params::new();
        let at_limit = format!("SELECT '{}'", "x".repeat(MAX_STATEMENT_CHARS - 9));
        assert_eq!(at_limit.chars().count(), MAX_STATEMENT_CHARS);
        assert!(check_statement(&at_limit, &params).is_ok());
        // Two bytes a character: over a million bytes, under a million characters.
        let wide = format!("SELECT '{}'", "é".repeat(MAX_STATEMENT_CHARS - 9));
        assert!(check_statement(&wide, &params).is_ok());
        let over = format!("{at_limit} ");
        let err = check_statement(&over, &params).unwrap_err();
        assert_eq!(err.code, rowtree_types::Code::InvalidArgument);
        assert_eq!(
            err.message,
            "Statement is too long: 1000001 characters; the maximum is 1000000"
        );
    }

    #[test]
    fn a_pool_refuses_what_exceeds_its_size() {
        let pool = MemoryPool::new(100);
        assert_eq!(pool.draw(60), Ok(()));
        assert_eq!(pool.draw(50), Err(60));
        assert_eq!(pool.draw(40), Ok(()));
        assert_eq!(pool.reserved(), 100);
        assert_eq!(pool.draw(usize::MAX), Err(100));
        pool.give_back(100);
        assert_eq!(pool.reserved(), 0);
        pool.set_size(10);
        assert_eq!(pool.draw(11), Err(0));
    }

    #[test]
    fn the_default_pool_is_half_the_memory() {
        let meminfo = "MemTotal:       16318412 kB\nMemFree:         1234 kB\n";
        assert_eq!(meminfo_total(meminfo), Some(16318412 * 1024));
        assert_eq!(meminfo_total("MemFree: 1 kB\n"), None);
        assert_eq!(meminfo_total("MemTotal: lots\n"), None);
        let default = default_server_query_memory();
        match usable_memory() {
            Some(bytes) => assert_eq!(default, (bytes / 2).max(1 << 20)),
            None => assert_eq!(default, FALLBACK_SERVER_QUERY_MEMORY),
        }
        if cfg!(target_os = "linux") {
            assert!(usable_memory().is_some());
        }
    }

    #[test]
    fn parameters_are_counted() {
        let mut params = Params::new();
        for i in 0..MAX_PARAMETERS {
            params.insert(format!("p{i}"), (Type::Int64, Value::Int64(i as i64)));
        }
        assert!(check_statement("SELECT 1", &params).is_ok());
        params.insert("one_more".into(), (Type::Int64, Value::Null));
        let err = check_statement("SELECT 1", &params).unwrap_err();
        assert!(
            err.message.starts_with("Too many parameters: 951"),
            "{}",
            err.message
        );
    }
}
