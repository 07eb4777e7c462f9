//! Mutations and key sets: how clients write and address rows.
//!
//! These mirror Spanner's `Mutation` and `KeySet` messages. A key is the list
//! of a table's (or index's) key column values in key order; a [`KeyRange`]
//! bounds keys by *prefixes*: `start_closed = [1]` means "every key whose
//! first column is >= 1", however many columns follow.

use rowtree_types::Value;

/// A key: values of the key columns, in key order (a prefix in ranges).
pub type Key = Vec<Value>;

/// One bound of a [`KeyRange`].
#[derive(Debug, Clone, PartialEq)]
pub enum Bound {
    /// Keys with this prefix are included.
    Closed(Key),
    /// Keys with this prefix are excluded.
    Open(Key),
}

/// A range of keys between two prefix bounds.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyRange {
    pub start: Bound,
    pub end: Bound,
}

impl KeyRange {
    /// `[start, end]`, both prefixes included.
    pub fn closed(start: Key, end: Key) -> KeyRange {
        KeyRange {
            start: Bound::Closed(start),
            end: Bound::Closed(end),
        }
    }

    /// `[start, end)`.
    pub fn closed_open(start: Key, end: Key) -> KeyRange {
        KeyRange {
            start: Bound::Closed(start),
            end: Bound::Open(end),
        }
    }

    /// Every key starting with `prefix`.
    pub fn prefix(prefix: Key) -> KeyRange {
        KeyRange::closed(prefix.clone(), prefix)
    }
}

/// A set of keys: explicit keys, ranges, or everything.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct KeySet {
    pub keys: Vec<Key>,
    pub ranges: Vec<KeyRange>,
    pub all: bool,
}

impl KeySet {
    /// Every row.
    pub fn all() -> KeySet {
        KeySet {
            all: true,
            ..KeySet::default()
        }
    }

    /// The given keys.
    pub fn keys(keys: impl IntoIterator<Item = Key>) -> KeySet {
        KeySet {
            keys: keys.into_iter().collect(),
            ..KeySet::default()
        }
    }

    /// One key.
    pub fn key(key: Key) -> KeySet {
        KeySet::keys([key])
    }

    /// One range.
    pub fn range(range: KeyRange) -> KeySet {
        KeySet {
            ranges: vec![range],
            ..KeySet::default()
        }
    }
}

/// What a write does to a row, as in Spanner's `Mutation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteKind {
    /// Fails with ALREADY_EXISTS if the row exists.
    Insert,
    /// Fails with NOT_FOUND if the row does not exist; unnamed columns keep
    /// their values.
    Update,
    /// Insert, or update the named columns of an existing row.
    InsertOrUpdate,
    /// Delete the row (and, per ON DELETE, its children) and insert it anew:
    /// unnamed columns become NULL or their default.
    Replace,
    /// Insert, or leave an existing row untouched (`INSERT OR IGNORE`).
    InsertOrIgnore,
}

/// A mutation, applied at commit in the order given.
#[derive(Debug, Clone, PartialEq)]
pub enum Mutation {
    /// Write rows: `columns` names the columns; each entry of `rows` gives
    /// their values in that order (key columns must be among them).
    Write {
        kind: WriteKind,
        table: String,
        columns: Vec<String>,
        rows: Vec<Vec<Value>>,
    },
    /// Delete the rows in a key set; missing rows are ignored.
    Delete { table: String, key_set: KeySet },
}

impl Mutation {
    /// An insert of one or more rows.
    pub fn insert(table: &str, columns: &[&str], rows: Vec<Vec<Value>>) -> Mutation {
        Self::write(WriteKind::Insert, table, columns, rows)
    }

    /// An update of one or more rows.
    pub fn update(table: &str, columns: &[&str], rows: Vec<Vec<Value>>) -> Mutation {
        Self::write(WriteKind::Update, table, columns, rows)
    }

    /// An insert-or-update of one or more rows.
    pub fn insert_or_update(table: &str, columns: &[&str], rows: Vec<Vec<Value>>) -> Mutation {
        Self::write(WriteKind::InsertOrUpdate, table, columns, rows)
    }

    /// A replace of one or more rows.
    pub fn replace(table: &str, columns: &[&str], rows: Vec<Vec<Value>>) -> Mutation {
        Self::write(WriteKind::Replace, table, columns, rows)
    }

    /// An insert that leaves existing rows untouched.
    pub fn insert_or_ignore(table: &str, columns: &[&str], rows: Vec<Vec<Value>>) -> Mutation {
        Self::write(WriteKind::InsertOrIgnore, table, columns, rows)
    }

    /// A delete of a key set.
    pub fn delete(table: &str, key_set: KeySet) -> Mutation {
        Mutation::Delete {
            table: table.to_string(),
            key_set,
        }
    }

    fn write(kind: WriteKind, table: &str, columns: &[&str], rows: Vec<Vec<Value>>) -> Mutation {
        Mutation::Write {
            kind,
            table: table.to_string(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows,
        }
    }

    /// How many mutations this counts as against Spanner's 80,000 limit:
    /// one per cell written (inserts and updates), one per deleted key/range.
    pub fn count(&self) -> usize {
        match self {
            Mutation::Write { columns, rows, .. } => columns.len().max(1) * rows.len(),
            Mutation::Delete { key_set, .. } => {
                key_set.keys.len() + key_set.ranges.len() + usize::from(key_set.all)
            }
        }
    }
}
