//! Where a commit is made: the keys a set of mutations will write, worked
//! out before the commit, so that a cluster node can hand a single-use
//! commit to the node leading those keys' splits.
//!
//! On a cluster whose splits are led by different nodes, a split's keys
//! are locked only by the node leading it, so a commit must be made there.
//! A commit of mutations alone (no reads: the commonest write of the
//! client libraries) names its keys up front, so the node a client
//! happens to call can tell where it belongs without running it.
//! [`Database::commit_leader`] computes the row key of every written row
//! exactly as the commit will (values coerced to the column types,
//! generated key columns computed, such as a hash shard), and the index
//! entries of a row written whole, and asks the database's replication
//! which node leads all of their splits.
//!
//! It is a hint, not a promise. What it cannot know it leaves out: the
//! old index entries an update removes (they are read at commit), keys
//! filled by a DEFAULT (`GENERATE_UUID()`, a sequence: computed where the
//! commit runs), rows a range delete finds. The node the hint names checks
//! every key again before it commits
//! ([`rowtree_kv::Replication::check_writes`]), and refuses with
//! [`Error::LedElsewhere`](crate::Error::LedElsewhere), having done
//! nothing, when it does not lead them all.

use rowtree_expr::coerce_value;
use rowtree_schema::{Catalog, Table};
use rowtree_types::{Timestamp, Value};

use crate::database::Database;
use crate::eval::{eval_generated, KeyEval};
use crate::keys;
use crate::mutation::Mutation;
use crate::target::{table_target, Span};

impl Database {
    /// The node that leads every split `mutations` are known to write (see
    /// the module docs): where a single-use commit of them should be made.
    /// `None` when the database is not replicated, their splits are led by
    /// different nodes or by none known, or a key cannot be known before
    /// the commit (it takes a DEFAULT, a commit timestamp, a range).
    pub fn commit_leader(&self, mutations: &[Mutation]) -> Option<u64> {
        if !self.inner.router.replicated() {
            return None;
        }
        let now = Timestamp::from_nanos(self.inner.options.clock.now_nanos() as i128)?;
        let keys = known_keys(&self.catalog(), mutations, now)?;
        self.inner
            .router
            .leader_of_keys(keys.iter().map(Vec::as_slice))
    }
}

/// The keys `mutations` will write that can be known before the commit,
/// or `None` if a row key cannot be (see the module docs).
pub(crate) fn known_keys(
    catalog: &Catalog,
    mutations: &[Mutation],
    now: Timestamp,
) -> Option<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    for m in mutations {
        match m {
            Mutation::Write {
                table,
                columns,
                rows,
                ..
            } => {
                let t = catalog.table(table)?;
                let positions = positions(t, columns)?;
                let whole =
                    positions.len() == t.columns.iter().filter(|c| c.generated.is_none()).count();
                for values in rows {
                    row_keys(catalog, t, &positions, values, whole, now, &mut out)?;
                }
            }
            Mutation::Delete { table, key_set } => {
                let t = catalog.table(table)?;
                for span in table_target(catalog, t).ranges(key_set).ok()? {
                    match span {
                        Span::Point(key) => out.push(key),
                        Span::Range(_) => return None,
                    }
                }
            }
        }
    }
    Some(out)
}

/// The column positions a write names, if every key column is among them
/// or generated (a key a DEFAULT fills is known only at commit).
fn positions(table: &Table, columns: &[String]) -> Option<Vec<usize>> {
    let positions = columns
        .iter()
        .map(|name| table.column(name).map(|(pos, _)| pos))
        .collect::<Option<Vec<usize>>>()?;
    table
        .primary_key
        .iter()
        .all(|k| positions.contains(&k.column) || table.columns[k.column].generated.is_some())
        .then_some(positions)
}

/// Pushes the row key of one written row and, if the row is written
/// whole, its index entries' keys.
fn row_keys(
    catalog: &Catalog,
    table: &Table,
    positions: &[usize],
    values: &[Value],
    whole: bool,
    now: Timestamp,
    out: &mut Vec<Vec<u8>>,
) -> Option<()> {
    if values.len() != positions.len() {
        return None;
    }
    let mut row = vec![Value::Null; table.columns.len()];
    for (&pos, value) in positions.iter().zip(values) {
        let value = coerce_value(value.clone(), &table.columns[pos].ty).ok()?;
        if value == Value::Timestamp(Timestamp::PENDING_COMMIT) {
            // The commit timestamp, known only once it is taken.
            if table.primary_key.iter().any(|k| k.column == pos) {
                return None;
            }
        }
        row[pos] = value;
    }
    eval_generated(table, &mut row, &mut KeyEval { now }).ok()?;
    let key: Vec<Value> = table
        .primary_key
        .iter()
        .map(|k| row[k.column].clone())
        .collect();
    out.push(keys::encode_full(&keys::table_levels(catalog, table), &key).ok()?);
    if whole {
        for index in catalog.indexes_of(table.id) {
            if index.null_filtered && index.keys.iter().any(|k| row[k.column].is_null()) {
                continue;
            }
            let key: Vec<Value> = keys::index_key_columns(table, index)
                .iter()
                .map(|(pos, _, _)| row[*pos].clone())
                .collect();
            out.push(keys::encode_full(&keys::index_levels(catalog, table, index), &key).ok()?);
        }
    }
    Some(())
}
