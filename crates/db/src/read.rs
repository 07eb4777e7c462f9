//! The read path: a [`ReadRequest`] (a table or index, columns, a key set)
//! is resolved against the schema (`target.rs`: key sets become byte
//! ranges), read as a streaming scan through the split router at a
//! timestamp ([`crate::stream`]; `row.rs` turns stored bytes into rows),
//! and projected onto the requested columns.
//!
//! Reads of an interleaved table scan the key ranges of its ancestors' row
//! trees and keep only the keys that decode to the table itself (the other
//! keys in those ranges belong to the parent or to sibling tables). Reads of
//! an index return index entries: the index's key columns, the table's key
//! columns and the STORING columns.

use std::sync::Arc;

use rowtree_schema::Catalog;
use rowtree_types::Value;

use crate::error::Result;
use crate::mutation::KeySet;
use crate::overlay::TxnWrites;
use crate::stream::{RowStream, ScanRequest};
use crate::target::Target;

/// A read of rows by key set, from a table or through an index.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadRequest {
    pub table: String,
    /// Read through this index: `key_set` then addresses index keys.
    pub index: Option<String>,
    /// Columns to return, in this order.
    pub columns: Vec<String>,
    pub key_set: KeySet,
    /// Stop after this many rows (0 = no limit).
    pub limit: usize,
}

impl ReadRequest {
    /// A read of `columns` from `table` for the rows in `key_set`.
    pub fn new(table: &str, columns: &[&str], key_set: KeySet) -> ReadRequest {
        ReadRequest {
            table: table.to_string(),
            index: None,
            columns: columns.iter().map(|c| c.to_string()).collect(),
            key_set,
            limit: 0,
        }
    }

    /// The same read through an index.
    pub fn with_index(mut self, index: &str) -> ReadRequest {
        self.index = Some(index.to_string());
        self
    }

    /// The forward scan that serves this read.
    pub fn to_scan(&self) -> ScanRequest {
        ScanRequest {
            table: self.table.clone(),
            index: self.index.clone(),
            key_set: self.key_set.clone(),
            reverse: false,
            limit: self.limit,
            after: None,
        }
    }

    /// The same read with a row limit.
    pub fn with_limit(mut self, limit: usize) -> ReadRequest {
        self.limit = limit;
        self
    }
}

/// Reads `request` at timestamp `ts`, merging a read-write transaction's own
/// writes when given. Rows come back in key order.
pub(crate) fn read_at(
    db: &crate::Database,
    catalog: Arc<Catalog>,
    request: &ReadRequest,
    ts: u64,
    writes: Option<&TxnWrites>,
) -> Result<RowStream> {
    RowStream::open(db.clone(), catalog, &request.to_scan(), ts, writes)
}

/// Projects full rows onto the requested columns.
pub(crate) fn project_rows(
    catalog: &Catalog,
    request: &ReadRequest,
    stream: RowStream,
) -> Result<Vec<Vec<Value>>> {
    let target = Target::resolve(catalog, &request.table, request.index.as_deref())?;
    let projection = target.project(&request.columns)?;
    stream
        .map(|row| row.map(|r| projection.iter().map(|&p| r[p].clone()).collect()))
        .collect()
}
