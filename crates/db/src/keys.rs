//! How rows and index entries become ordered byte keys.
//!
//! Every key starts with the id of a root-level object (a root table or a
//! non-interleaved index), followed by that object's key columns. A row of a
//! table interleaved in a parent continues the parent's key with the child's
//! object id and the child's own key columns; a complete key ends with
//! [`ROW_END`]:
//!
//! ```text
//! Users(1)                      01 <Users> 03 ..1.. 00
//! UserAccessLogs(1, ts)         01 <Users> 03 ..1.. 01 <Logs> 03 ..ts.. 00
//! Users(2)                      01 <Users> 03 ..2.. 00
//! UsersByLastAccess(ts, 1)      01 <Index> 03 ..ts.. 03 ..1.. 00
//! ```
//!
//! Because `ROW_END` (0x00) sorts before an object marker (0x01), which sorts
//! before any column encoding (0x02..=0xFE), a parent row sorts before its
//! children and every child row sorts before the parent's next sibling: a
//! *row tree* is one contiguous key range, `[prefix, prefix_end(prefix))`.
//! An interleaved index lives under its parent row in the same way.

use rowtree_encoding::{encode_key_value, encode_object, prefix_end, Direction, ROW_END};
use rowtree_schema::{Catalog, Index, KeyColumn, Table, TableId};
use rowtree_types::{Type, Value};

use crate::error::{Error, Result};

/// The most bytes a key may have (Spanner's limit).
pub const MAX_KEY_BYTES: usize = 8 * 1024;

/// A keyed object: a table, or an index (whose entries form a table too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Object {
    Table(TableId),
    Index(u32),
}

/// A stored key with what it decodes to: the object it belongs to and its
/// key values.
pub type DecodedKey = (Vec<u8>, Object, Vec<Value>);

/// One level of a key: an object id and the key columns it adds, with their
/// types and directions.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Level {
    pub object_id: u32,
    pub object: Object,
    /// `encode_object(object_id)`, the bytes that start this level.
    pub prefix: Vec<u8>,
    /// (type, direction) of each key column added at this level.
    pub columns: Vec<(Type, Direction)>,
}

fn object_prefix(id: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(5);
    encode_object(&mut out, id);
    out
}

fn direction(desc: bool) -> Direction {
    if desc {
        Direction::Desc
    } else {
        Direction::Asc
    }
}

fn table_key_types(table: &Table, keys: &[KeyColumn]) -> Vec<(Type, Direction)> {
    keys.iter()
        .map(|k| (table.columns[k.column].ty.clone(), direction(k.desc)))
        .collect()
}

/// The key levels of a table: its root ancestor first, each level adding the
/// key columns beyond its parent's.
pub(crate) fn table_levels(catalog: &Catalog, table: &Table) -> Vec<Level> {
    let mut chain: Vec<&Table> = catalog.ancestors(table.id);
    chain.push(table);
    let mut levels = Vec::with_capacity(chain.len());
    let mut done = 0;
    for t in chain {
        let all = table_key_types(t, &t.primary_key);
        levels.push(Level {
            object_id: t.id,
            object: Object::Table(t.id),
            prefix: object_prefix(t.id),
            columns: all[done.min(all.len())..].to_vec(),
        });
        done = all.len();
    }
    levels
}

/// The key columns of an index entry, as (type, direction): the index's own
/// key columns, then the table's primary-key columns not already among them.
pub(crate) fn index_key_columns(table: &Table, index: &Index) -> Vec<(usize, Type, Direction)> {
    let mut cols: Vec<(usize, Type, Direction)> = index
        .keys
        .iter()
        .map(|k| {
            (
                k.column,
                table.columns[k.column].ty.clone(),
                direction(k.desc),
            )
        })
        .collect();
    for k in &table.primary_key {
        if !index.keys.iter().any(|ik| ik.column == k.column) {
            cols.push((
                k.column,
                table.columns[k.column].ty.clone(),
                direction(k.desc),
            ));
        }
    }
    cols
}

/// The key levels of an index: a root-level index is one level; an index
/// interleaved in `P` repeats `P`'s levels (its leading columns are `P`'s
/// key) and adds one level for the rest of the entry key.
pub(crate) fn index_levels(catalog: &Catalog, table: &Table, index: &Index) -> Vec<Level> {
    let cols = index_key_columns(table, index);
    match index.interleave_in.and_then(|p| catalog.table_by_id(p)) {
        None => vec![Level {
            object_id: index.id,
            object: Object::Index(index.id),
            prefix: object_prefix(index.id),
            columns: cols.into_iter().map(|(_, t, d)| (t, d)).collect(),
        }],
        Some(parent) => {
            let mut levels = table_levels(catalog, parent);
            let shared = parent.primary_key.len();
            // The parent's key columns keep the parent's directions so the
            // entries sort inside the parent's row tree.
            levels.push(Level {
                object_id: index.id,
                object: Object::Index(index.id),
                prefix: object_prefix(index.id),
                columns: cols[shared.min(cols.len())..]
                    .iter()
                    .map(|(_, t, d)| (t.clone(), *d))
                    .collect(),
            });
            levels
        }
    }
}

/// Encodes a full or partial key (`values` may cover any prefix of the key
/// columns) without `ROW_END`. A partial key stops after its last value.
pub(crate) fn encode_prefix(levels: &[Level], values: &[Value]) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(16 + values.len() * 9);
    let mut i = 0;
    for level in levels {
        if i >= values.len() && i > 0 {
            break;
        }
        out.extend_from_slice(&level.prefix);
        for (_, dir) in &level.columns {
            let Some(v) = values.get(i) else {
                return Ok(out);
            };
            encode_key_value(&mut out, v, *dir)?;
            i += 1;
        }
    }
    if i < values.len() {
        return Err(Error::invalid(format!(
            "Wrong number of key parts: expected at most {i}, got {}",
            values.len()
        )));
    }
    Ok(out)
}

/// Encodes a complete key and checks Spanner's 8 KiB limit.
pub(crate) fn encode_full(levels: &[Level], values: &[Value]) -> Result<Vec<u8>> {
    let n: usize = levels.iter().map(|l| l.columns.len()).sum();
    if values.len() != n {
        return Err(Error::invalid(format!(
            "Wrong number of key parts: expected {n}, got {}",
            values.len()
        )));
    }
    // With every value given, encode_prefix writes every level's object
    // marker (also for a table whose key is empty).
    let mut key = encode_prefix(levels, values)?;
    key.push(ROW_END);
    if key.len() > MAX_KEY_BYTES {
        return Err(Error::OutOfRange {
            message: format!(
                "Key too large: {} bytes, the limit is {MAX_KEY_BYTES} bytes",
                key.len()
            ),
        });
    }
    Ok(key)
}

/// The whole key range of a root-level object: `[prefix, prefix_end)`.
pub(crate) fn object_range(object_id: u32) -> (Vec<u8>, Option<Vec<u8>>) {
    let mut start = Vec::with_capacity(5);
    encode_object(&mut start, object_id);
    let end = prefix_end(&start);
    (start, end)
}

/// Decodes a stored key into the object it belongs to and its key values.
/// Returns `None` for a key of an object not in `levels_of` (a dropped
/// object whose data is not yet cleaned up).
pub(crate) fn decode_key(catalog: &Catalog, key: &[u8]) -> Result<Option<(Object, Vec<Value>)>> {
    use rowtree_encoding::{decode_key_value, decode_object};
    let mut input = key;
    let mut values = Vec::new();
    let mut levels: Option<Vec<Level>> = None;
    let mut depth = 0;
    loop {
        let id = decode_object(&mut input)?;
        let level_list = match &levels {
            None => {
                // Root-level object.
                let l = if let Some(t) = catalog.table_by_id(id) {
                    table_levels(catalog, t)
                } else if let Some(ix) = catalog.index_by_id(id) {
                    let Some(t) = catalog.table_by_id(ix.table) else {
                        return Ok(None);
                    };
                    index_levels(catalog, t, ix)
                } else {
                    return Ok(None);
                };
                levels = Some(l);
                levels.as_ref().expect("just set")
            }
            Some(_) => {
                // A child level: a table interleaved here or an interleaved index.
                let l = if let Some(t) = catalog.table_by_id(id) {
                    table_levels(catalog, t)
                } else if let Some(ix) = catalog.index_by_id(id) {
                    let Some(t) = catalog.table_by_id(ix.table) else {
                        return Ok(None);
                    };
                    index_levels(catalog, t, ix)
                } else {
                    return Ok(None);
                };
                if l.len() <= depth || l[depth].object_id != id {
                    return Err(Error::internal(
                        "key does not follow the schema's interleaving",
                    ));
                }
                levels = Some(l);
                levels.as_ref().expect("just set")
            }
        };
        let level = &level_list[depth];
        for (ty, dir) in &level.columns {
            values.push(decode_key_value(&mut input, ty, *dir)?);
        }
        let object = level.object;
        depth += 1;
        match input.first() {
            Some(&ROW_END) => return Ok(Some((object, values))),
            Some(_) => continue,
            None => return Err(Error::internal("key ends without a row terminator")),
        }
    }
}

/// Describes a key or key prefix (such as a split boundary) in human terms:
/// `Users(1)`, `Users(1)/Albums(10)`, `UsersByLastAccess`, or `<begin>`.
pub fn describe(catalog: &Catalog, key: &[u8]) -> String {
    use rowtree_encoding::{decode_key_value, decode_object};
    if key.is_empty() {
        return "<begin>".into();
    }
    let mut input = key;
    let mut parts: Vec<String> = Vec::new();
    let mut depth = 0;
    while !input.is_empty() && input[0] != ROW_END {
        let Ok(id) = decode_object(&mut input) else {
            break;
        };
        let levels = if let Some(t) = catalog.table_by_id(id) {
            table_levels(catalog, t)
        } else if let Some(ix) = catalog.index_by_id(id) {
            match catalog.table_by_id(ix.table) {
                Some(t) => index_levels(catalog, t, ix),
                None => break,
            }
        } else {
            parts.push(format!("<dropped object {id}>"));
            break;
        };
        let Some(level) = levels.get(depth) else {
            break;
        };
        let name = match level.object {
            Object::Table(t) => catalog.table_by_id(t).map(|t| t.name.clone()),
            Object::Index(i) => catalog.index_by_id(i).map(|i| i.name.clone()),
        }
        .unwrap_or_default();
        let mut values = Vec::new();
        for (ty, dir) in &level.columns {
            if input.is_empty()
                || input[0] == ROW_END
                || input[0] == rowtree_encoding::OBJECT_MARKER
            {
                break;
            }
            match decode_key_value(&mut input, ty, *dir) {
                Ok(v) => values.push(v.sql_literal()),
                Err(_) => break,
            }
        }
        parts.push(if values.is_empty() {
            name
        } else {
            format!("{name}({})", values.join(", "))
        });
        depth += 1;
    }
    if parts.is_empty() {
        format!(
            "<{}>",
            key.iter().map(|b| format!("{b:02x}")).collect::<String>()
        )
    } else {
        parts.join("/")
    }
}
