//! What a read or write addresses, resolved against the schema, and the
//! byte ranges its keys occupy.
//!
//! A [`Target`] is a table, or a table read through one of its indexes: the
//! key levels its keys are encoded with ([`crate::keys`]) and which table
//! column each key position holds. It turns a [`KeySet`] of key values into
//! [`Span`]s of encoded keys (points for whole keys, ranges for key ranges),
//! which every reader — point reads, streaming scans, the commit resolver's
//! deletes — walks through the split router.
//!
//! It sits right above the key layout and below everything that reads or
//! writes rows, so those share one translation from keys to bytes.

use rowtree_encoding::prefix_end;
use rowtree_schema::{Catalog, Index, Table};
use rowtree_types::Value;

use crate::error::{Error, Result};
use crate::keys::{self, Level, Object};
use crate::mutation::{Bound, KeyRange, KeySet};

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
            None => Ok(table_target(catalog, t)),
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

/// The target of a table's own rows (no index).
pub(crate) fn table_target<'c>(catalog: &'c Catalog, table: &'c Table) -> Target<'c> {
    Target {
        table,
        index: None,
        levels: keys::table_levels(catalog, table),
        object: Object::Table(table.id),
        key_columns: table.primary_key.iter().map(|k| k.column).collect(),
    }
}
