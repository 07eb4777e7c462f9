//! The read path: key sets become byte ranges, ranges are read through the
//! split router at a timestamp, stored bytes become rows.
//!
//! Reads of an interleaved table scan the key ranges of its ancestors' row
//! trees and keep only the keys that decode to the table itself (the other
//! keys in those ranges belong to the parent or to sibling tables). Reads of
//! an index return index entries: the index's key columns, the table's key
//! columns and the STORING columns.

use rowtree_encoding::{decode_row, prefix_end};
use rowtree_schema::{Catalog, Index, Table};
use rowtree_types::Value;

use crate::error::{Error, Result};
use crate::keys::{self, Level, Object};
use crate::mutation::{Bound, KeyRange, KeySet};

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
    pub fn to_scan(&self) -> crate::stream::ScanRequest {
        crate::stream::ScanRequest {
            table: self.table.clone(),
            index: self.index.clone(),
            key_set: self.key_set.clone(),
            reverse: false,
            limit: self.limit,
        }
    }

    /// The same read with a row limit.
    pub fn with_limit(mut self, limit: usize) -> ReadRequest {
        self.limit = limit;
        self
    }
}

/// A byte range `[start, end)` (end `None` = to the end of the key space).
pub(crate) type ByteRange = (Vec<u8>, Option<Vec<u8>>);

/// What a read targets, resolved against the schema.
pub(crate) struct Target<'c> {
    pub table: &'c Table,
    pub index: Option<&'c Index>,
    pub levels: Vec<Level>,
    pub object: Object,
    /// For each key position: the table column it holds.
    pub key_columns: Vec<usize>,
}

impl<'c> Target<'c> {
    pub fn resolve(catalog: &'c Catalog, table: &str, index: Option<&str>) -> Result<Target<'c>> {
        let t = catalog
            .table(table)
            .ok_or_else(|| Error::not_found(format!("Table not found: {table}")))?;
        match index {
            None => Ok(Target {
                table: t,
                index: None,
                levels: keys::table_levels(catalog, t),
                object: Object::Table(t.id),
                key_columns: t.primary_key.iter().map(|k| k.column).collect(),
            }),
            Some(name) => {
                let ix = catalog
                    .index(name)
                    .filter(|ix| ix.table == t.id)
                    .ok_or_else(|| {
                        Error::not_found(format!("Index not found on table {}: {name}", t.name))
                    })?;
                Ok(Target {
                    table: t,
                    index: Some(ix),
                    levels: keys::index_levels(catalog, t, ix),
                    object: Object::Index(ix.id),
                    key_columns: keys::index_key_columns(t, ix)
                        .into_iter()
                        .map(|(c, _, _)| c)
                        .collect(),
                })
            }
        }
    }

    /// Positions (in the table's columns) of the requested column names,
    /// checking that an index read only asks for columns the index holds.
    pub fn project(&self, columns: &[String]) -> Result<Vec<usize>> {
        columns
            .iter()
            .map(|name| {
                let (pos, _) = self.table.column(name).ok_or_else(|| {
                    Error::not_found(format!(
                        "Column not found in table {}: {name}",
                        self.table.name
                    ))
                })?;
                if let Some(ix) = self.index {
                    if !self.key_columns.contains(&pos) && !ix.storing.contains(&pos) {
                        return Err(Error::invalid(format!(
                            "Index {} does not store column {name}",
                            ix.name
                        )));
                    }
                }
                Ok(pos)
            })
            .collect()
    }

    /// Coerces key values to the key columns' types (an INT64 literal for a
    /// FLOAT64 key column, a string for a TIMESTAMP, ...).
    pub fn coerce_key(&self, key: &[Value]) -> Result<Vec<Value>> {
        if key.len() > self.key_columns.len() {
            return Err(Error::invalid(format!(
                "Wrong number of key parts for {}: expected at most {}, got {}",
                self.name(),
                self.key_columns.len(),
                key.len()
            )));
        }
        key.iter()
            .zip(&self.key_columns)
            .map(|(v, &c)| {
                let col = &self.table.columns[c];
                rowtree_expr::coerce_value(v.clone(), &col.ty).map_err(|e| {
                    Error::invalid(format!("Invalid value for key column {}: {e}", col.name))
                })
            })
            .collect()
    }

    pub fn name(&self) -> &str {
        self.index
            .map(|i| i.name.as_str())
            .unwrap_or(&self.table.name)
    }

    /// The byte ranges that hold the rows of `key_set`, with point keys
    /// marked so callers can use point lookups.
    pub fn ranges(&self, key_set: &KeySet) -> Result<Vec<Span>> {
        let mut out = Vec::new();
        if key_set.all {
            let whole = keys::encode_prefix(&self.levels, &[])?;
            let end = prefix_end(&whole);
            out.push(Span::Range((whole, end)));
            return Ok(out);
        }
        for key in &key_set.keys {
            let key = self.coerce_key(key)?;
            if key.len() == self.key_columns.len() {
                out.push(Span::Point(keys::encode_full(&self.levels, &key)?));
            } else {
                // A partial key in `keys` matches nothing in Spanner; refuse it clearly.
                return Err(Error::invalid(format!(
                    "Wrong number of key parts for {}: expected {}, got {}",
                    self.name(),
                    self.key_columns.len(),
                    key.len()
                )));
            }
        }
        for range in &key_set.ranges {
            if let Some(r) = self.byte_range(range)? {
                out.push(Span::Range(r));
            }
        }
        Ok(out)
    }

    /// Translates a prefix-bounded key range into bytes.
    pub fn byte_range(&self, range: &KeyRange) -> Result<Option<ByteRange>> {
        let start = match &range.start {
            Bound::Closed(k) => keys::encode_prefix(&self.levels, &self.coerce_key(k)?)?,
            Bound::Open(k) => {
                let p = keys::encode_prefix(&self.levels, &self.coerce_key(k)?)?;
                match prefix_end(&p) {
                    Some(e) => e,
                    None => return Ok(None),
                }
            }
        };
        let end = match &range.end {
            Bound::Closed(k) => {
                prefix_end(&keys::encode_prefix(&self.levels, &self.coerce_key(k)?)?)
            }
            Bound::Open(k) => Some(keys::encode_prefix(&self.levels, &self.coerce_key(k)?)?),
        };
        if let Some(e) = &end {
            if *e <= start {
                return Ok(None);
            }
        }
        Ok(Some((start, end)))
    }
}

/// One piece of a key set in bytes.
#[derive(Debug, Clone)]
pub(crate) enum Span {
    Point(Vec<u8>),
    Range(ByteRange),
}

/// Turns a stored key and value into a full table-shaped row (`Value::Null`
/// for columns an index does not hold) indexed by table column position.
pub(crate) fn materialize(
    target: &Target<'_>,
    key_values: Vec<Value>,
    value: &[u8],
) -> Result<Vec<Value>> {
    let mut row = vec![Value::Null; target.table.columns.len()];
    for (pos, v) in target.key_columns.iter().zip(key_values) {
        row[*pos] = v;
    }
    for (id, v) in decode_row(value)? {
        if let Some(pos) = target.table.columns.iter().position(|c| c.id == id) {
            row[pos] = v;
        }
    }
    Ok(row)
}

/// Reads `request` at timestamp `ts`, merging a read-write transaction's own
/// writes when given. Rows come back in key order.
pub(crate) fn read_at(
    db: &crate::Database,
    catalog: std::sync::Arc<Catalog>,
    request: &ReadRequest,
    ts: u64,
    writes: Option<&crate::write::TxnWrites>,
) -> Result<crate::stream::RowStream> {
    crate::stream::RowStream::open(db.clone(), catalog, &request.to_scan(), ts, writes)
}

/// Projects full rows onto the requested columns.
pub(crate) fn project_rows(
    catalog: &Catalog,
    request: &ReadRequest,
    stream: crate::stream::RowStream,
) -> Result<Vec<Vec<Value>>> {
    let target = Target::resolve(catalog, &request.table, request.index.as_deref())?;
    let projection = target.project(&request.columns)?;
    stream
        .map(|row| row.map(|r| projection.iter().map(|&p| r[p].clone()).collect()))
        .collect()
}
