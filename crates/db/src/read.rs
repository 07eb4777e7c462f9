//! A read request: a table or index, columns, a key set.
//!
//! A [`ReadRequest`] is served by a streaming scan
//! (`RowStream::open_read` in `stream.rs`): the request is resolved
//! against the schema once (`target.rs`: key sets become byte ranges, the
//! columns become table positions, checked before anything is read or
//! locked), read through the split router at a timestamp in chunks
//! (`row.rs` turns stored bytes into rows), and each row is cut down to the
//! requested columns as it leaves the stream.
//!
//! Reads of an interleaved table scan the key ranges of its ancestors' row
//! trees and keep only the keys that decode to the table itself (the other
//! keys in those ranges belong to the parent or to sibling tables). Reads of
//! an index return index entries: the index's key columns, the table's key
//! columns and the STORING columns.

use crate::mutation::KeySet;

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

    /// The same read with a row limit.
    pub fn with_limit(mut self, limit: usize) -> ReadRequest {
        self.limit = limit;
        self
    }
}
