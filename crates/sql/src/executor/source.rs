//! Where a plan reads rows: [`DataSource`], implemented by both kinds of
//! transaction.
//!
//! Operators never hold the transaction; they reach it through the
//! [`ExecContext`](super::context::ExecContext) each `next` receives. A
//! read-write transaction also sees its own earlier writes, serves
//! sequences, and fixes the statement's `CURRENT_TIMESTAMP`.

use std::sync::Arc;

use rowtree_db::{
    ReadOnlyTransaction, ReadWriteTransaction, RowStream, ScanRequest, TreeScanRequest, TreeStream,
};
use rowtree_schema::Catalog;
use rowtree_types::Timestamp;

use crate::error::{Error, Result};

/// Where a plan reads rows: a transaction.
pub trait DataSource {
    /// The schema the statement runs against.
    fn catalog(&self) -> Arc<Catalog>;
    /// Opens a scan (see [`ScanRequest`]).
    fn scan(&mut self, request: &ScanRequest) -> rowtree_db::Result<RowStream>;
    /// Opens a scan of whole row trees (see [`TreeScanRequest`]).
    fn scan_tree(&mut self, request: &TreeScanRequest) -> rowtree_db::Result<TreeStream>;
    /// The statement's `CURRENT_TIMESTAMP()`.
    fn now(&self) -> Timestamp;
    /// `GET_NEXT_SEQUENCE_VALUE`: only read-write transactions may.
    fn next_sequence_value(&mut self, sequence: &str) -> Result<i64> {
        let _ = sequence;
        Err(Error::failed_precondition(
            "GET_NEXT_SEQUENCE_VALUE is not allowed in read-only transactions",
        ))
    }
    /// `GET_INTERNAL_SEQUENCE_STATE`: the last counter handed out, or NULL.
    fn sequence_state(&mut self, sequence: &str) -> Result<Option<i64>>;
    /// The database, for the SPANNER_SYS tables (its split state); `None`
    /// when the source has no database behind it (the tables then fail).
    fn database(&self) -> Option<&rowtree_db::Database> {
        None
    }
}

pub(super) fn wall_clock() -> Timestamp {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i128)
        .unwrap_or(0);
    Timestamp::from_nanos(nanos / 1000 * 1000)
        .unwrap_or_else(|| Timestamp::from_nanos(0).expect("epoch"))
}

impl DataSource for ReadOnlyTransaction {
    fn catalog(&self) -> Arc<Catalog> {
        ReadOnlyTransaction::catalog(self)
    }
    fn scan(&mut self, request: &ScanRequest) -> rowtree_db::Result<RowStream> {
        ReadOnlyTransaction::scan(self, request)
    }
    fn scan_tree(&mut self, request: &TreeScanRequest) -> rowtree_db::Result<TreeStream> {
        ReadOnlyTransaction::scan_tree(self, request)
    }
    fn now(&self) -> Timestamp {
        wall_clock()
    }
    fn sequence_state(&mut self, sequence: &str) -> Result<Option<i64>> {
        Ok(ReadOnlyTransaction::sequence_state(self, sequence)?)
    }
    fn database(&self) -> Option<&rowtree_db::Database> {
        Some(ReadOnlyTransaction::database(self))
    }
}

impl DataSource for ReadWriteTransaction {
    fn catalog(&self) -> Arc<Catalog> {
        ReadWriteTransaction::catalog(self)
    }
    fn scan(&mut self, request: &ScanRequest) -> rowtree_db::Result<RowStream> {
        ReadWriteTransaction::scan(self, request)
    }
    fn scan_tree(&mut self, request: &TreeScanRequest) -> rowtree_db::Result<TreeStream> {
        ReadWriteTransaction::scan_tree(self, request)
    }
    fn now(&self) -> Timestamp {
        wall_clock()
    }
    fn next_sequence_value(&mut self, sequence: &str) -> Result<i64> {
        Ok(ReadWriteTransaction::next_sequence_value(self, sequence)?)
    }
    fn sequence_state(&mut self, sequence: &str) -> Result<Option<i64>> {
        Ok(ReadWriteTransaction::sequence_state(self, sequence)?)
    }
    fn database(&self) -> Option<&rowtree_db::Database> {
        Some(ReadWriteTransaction::database(self))
    }
}
