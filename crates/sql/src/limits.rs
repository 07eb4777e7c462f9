//! The query limits Spanner documents, enforced before any work is done.
//!
//! A statement longer than [`MAX_STATEMENT_CHARS`] or with more than
//! [`MAX_PARAMETERS`] parameters is refused with INVALID_ARGUMENT before it
//! is parsed. Nesting is bounded by the parser (`rowtree_parser::MAX_NESTING`),
//! the size of what a query holds in memory by [`query_memory`] (checked
//! by the operators that buffer rows, see `executor::memory`). The limits on what a commit may
//! write are the database's (`rowtree_db::write`).

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::{Error, Params, Result};

/// Longest statement, in characters (Spanner: "Query statement length:
/// 1 million characters").
pub const MAX_STATEMENT_CHARS: usize = 1_000_000;

/// Most parameters one statement may bind (Spanner: 950).
pub const MAX_PARAMETERS: usize = 950;

/// Most bytes of rows one query may hold in memory at once by default (in
/// its sorts, aggregations, hash joins, window partitions, DISTINCT and set
/// operations, ARRAY subqueries and an unstreamed result); past it the query
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
