//! What a statement returns to its caller.
//!
//! A query's rows and columns ([`QueryResult`]), a DML statement's row
//! count (and `THEN RETURN` rows), or the word of a transaction statement,
//! with what running it cost ([`QueryStats`]). The session produces these;
//! DML builds them too, so they live apart from both.

use std::time::Duration;

use rowtree_types::{Type, Value};

/// What a statement returned.
#[derive(Debug, Clone, PartialEq)]
pub enum ExecuteResult {
    Query(QueryResult),
    Dml {
        row_count: u64,
        returning: Option<QueryResult>,
    },
    Ddl,
    /// `BEGIN`, `COMMIT` or `ROLLBACK` succeeded (the word, upper case).
    Transaction(&'static str),
}

/// A query's result set.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryResult {
    pub columns: Vec<(String, Type)>,
    pub rows: Vec<Vec<Value>>,
    pub stats: QueryStats,
}

/// What running a statement cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QueryStats {
    /// Keys read by scans (including other tables' rows in interleaved ranges).
    pub rows_scanned: u64,
    pub rows_returned: u64,
    pub splits_touched: u64,
    pub elapsed: Duration,
}
