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
use crate::eval::{eval_generated, KeyEval};

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

// ---------------------------------------------------------------------------
// Public key API for tools (the simulator) and the split policy.
// ---------------------------------------------------------------------------

/// A prepared encoder of the keys one table's rows produce: the row key and
/// every index entry key, exactly as a commit writes them. Generated columns
/// (e.g. `ShardId AS (MOD(FARM_FINGERPRINT(...), N)) STORED`) are computed by
/// the same code a commit uses.
#[derive(Debug, Clone)]
pub struct RowKeys {
    catalog: Catalog,
    table: TableId,
    levels: Vec<Level>,
    /// (index id, levels) of each index on the table, in catalog order.
    indexes: Vec<(u32, Vec<Level>)>,
}

impl RowKeys {
    /// The encoder for `table` (case-insensitive name).
    pub fn new(catalog: &Catalog, table: &str) -> Result<RowKeys> {
        let t = catalog
            .table(table)
            .ok_or_else(|| Error::invalid(format!("Table not found: {table}")))?;
        let levels = table_levels(catalog, t);
        let indexes = catalog
            .indexes_of(t.id)
            .into_iter()
            .map(|ix| (ix.id, index_levels(catalog, t, ix)))
            .collect();
        Ok(RowKeys {
            catalog: catalog.clone(),
            table: t.id,
            levels,
            indexes,
        })
    }

    fn table(&self) -> &Table {
        self.catalog
            .table_by_id(self.table)
            .expect("table of a RowKeys")
    }

    /// Names of the table's indexes, in the order [`RowKeys::keys`] returns
    /// their entries.
    pub fn index_names(&self) -> Vec<String> {
        self.indexes
            .iter()
            .filter_map(|(id, _)| self.catalog.index_by_id(*id).map(|i| i.name.clone()))
            .collect()
    }

    /// Fills the generated columns of `row` (one value per table column, in
    /// column order), with `now` as `CURRENT_TIMESTAMP()`.
    pub fn compute_generated(
        &self,
        row: &mut [Value],
        now: rowtree_types::Timestamp,
    ) -> Result<()> {
        let table = self.table();
        if row.len() != table.columns.len() {
            return Err(Error::invalid(format!(
                "Table {} has {} columns but {} values were given",
                table.name,
                table.columns.len(),
                row.len()
            )));
        }
        eval_generated(table, row, &mut KeyEval { now })
    }

    /// The row key of `row` (generated columns already filled).
    pub fn row_key(&self, row: &[Value]) -> Result<Vec<u8>> {
        let table = self.table();
        let key: Vec<Value> = table
            .primary_key
            .iter()
            .map(|k| row[k.column].clone())
            .collect();
        encode_full(&self.levels, &key)
    }

    /// The key of `row`'s entry in each index, in [`RowKeys::index_names`]
    /// order; `None` where a NULL_FILTERED index skips the row.
    pub fn index_keys(&self, row: &[Value]) -> Result<Vec<Option<Vec<u8>>>> {
        let table = self.table();
        let mut out = Vec::with_capacity(self.indexes.len());
        for (id, levels) in &self.indexes {
            let Some(index) = self.catalog.index_by_id(*id) else {
                continue;
            };
            if index.null_filtered && index.keys.iter().any(|k| row[k.column].is_null()) {
                out.push(None);
                continue;
            }
            let key: Vec<Value> = index_key_columns(table, index)
                .iter()
                .map(|(p, _, _)| row[*p].clone())
                .collect();
            out.push(Some(encode_full(levels, &key)?));
        }
        Ok(out)
    }

    /// Computes the generated columns, then returns the row key followed by
    /// every index entry key the row produces.
    pub fn keys(&self, row: &mut [Value], now: rowtree_types::Timestamp) -> Result<Vec<Vec<u8>>> {
        self.compute_generated(row, now)?;
        let mut out = vec![self.row_key(row)?];
        out.extend(self.index_keys(row)?.into_iter().flatten());
        Ok(out)
    }
}

/// The row key and every index entry key that writing `row_values` (one value
/// per column of `table`, generated columns may be NULL: they are computed)
/// produces, as the database stores them.
pub fn write_keys(catalog: &Catalog, table: &str, row_values: &[Value]) -> Result<Vec<Vec<u8>>> {
    let mut row = row_values.to_vec();
    RowKeys::new(catalog, table)?.keys(&mut row, rowtree_types::Timestamp::UNIX_EPOCH)
}

/// Row boundaries of keys, from the key layout: where a split boundary may go
/// (the root row) and which row a key belongs to. The split policy's
/// `KeyAligner` is implemented on it.
#[derive(Debug, Clone)]
pub struct Aligner {
    catalog: Catalog,
}

impl Aligner {
    /// An aligner for the keys of `catalog`'s objects.
    pub fn new(catalog: &Catalog) -> Aligner {
        Aligner {
            catalog: catalog.clone(),
        }
    }

    /// The prefixes of `key` after each complete level (object id and all its
    /// key columns), shallowest first. Empty when the key is not a row key of
    /// a known object.
    pub fn level_prefixes(&self, key: &[u8]) -> Vec<Vec<u8>> {
        use rowtree_encoding::{decode_key_value, decode_object};
        let catalog = &self.catalog;
        let mut out = Vec::new();
        let mut input = key;
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
                break;
            };
            let Some(level) = levels.get(depth) else {
                break;
            };
            if level.object_id != id {
                break;
            }
            for (ty, dir) in &level.columns {
                if decode_key_value(&mut input, ty, *dir).is_err() {
                    return out;
                }
            }
            out.push(key[..key.len() - input.len()].to_vec());
            depth += 1;
        }
        out
    }

    /// The root-row prefix of `key`: root object id and root key columns.
    pub fn root_row(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.level_prefixes(key).into_iter().next()
    }

    /// The prefix of the deepest complete row `key` belongs to.
    pub fn row(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.level_prefixes(key).pop()
    }
}

/// The split points a database puts at the start of every root-level object
/// (root tables and non-interleaved indexes), in key order.
pub fn root_object_starts(catalog: &Catalog) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = catalog
        .tables()
        .filter(|t| t.parent.is_none())
        .map(|t| object_range(t.id).0)
        .chain(
            catalog
                .indexes()
                .filter(|ix| ix.interleave_in.is_none())
                .map(|ix| object_range(ix.id).0),
        )
        .collect();
    out.sort();
    out
}

impl rowtree_kv::KeyAligner for Aligner {
    fn root_row(&self, key: &[u8]) -> Option<Vec<u8>> {
        Aligner::root_row(self, key)
    }

    fn row(&self, key: &[u8]) -> Option<Vec<u8>> {
        Aligner::row(self, key)
    }
}

/// The name of the root-level object (a root table or a non-interleaved
/// index) whose key range holds `key`, such as a split's start; `None` for
/// the empty key (the key space before the first object) or an object no
/// longer in `catalog`.
pub fn root_object_name(catalog: &Catalog, key: &[u8]) -> Option<String> {
    let mut input = key;
    let id = rowtree_encoding::decode_object(&mut input).ok()?;
    catalog
        .table_by_id(id)
        .map(|t| t.name.clone())
        .or_else(|| catalog.index_by_id(id).map(|ix| ix.name.clone()))
}

/// Whether `text` (from `describe`) names an object with no key values:
/// the key is the start of a table or index.
fn is_bare_object(text: &str) -> bool {
    !text.is_empty() && !text.contains(['(', '/', '<'])
}

/// A split's start key in human terms: `describe`, with `Users(<begin>)`
/// for the start of a table or index.
pub fn describe_start(catalog: &Catalog, start: &[u8]) -> String {
    let text = describe(catalog, start);
    if is_bare_object(&text) {
        format!("{text}(<begin>)")
    } else {
        text
    }
}

/// A split's limit in human terms: where the next object begins, the end of
/// the start's table (`Users(<end>)`).
pub fn describe_limit(catalog: &Catalog, start: &[u8], limit: Option<&[u8]>) -> String {
    let Some(limit) = limit else {
        return "<end>".into();
    };
    let text = describe(catalog, limit);
    if !is_bare_object(&text) {
        return text;
    }
    let own = describe(catalog, start);
    let table = own.split(['(', '/']).next().unwrap_or_default();
    if start.is_empty() || table.starts_with('<') || table.is_empty() {
        // The split before the first object: it ends where that one begins.
        format!("{text}(<begin>)")
    } else {
        format!("{table}(<end>)")
    }
}
