//! Keys and key sets: which columns key a read of a table or an index, and
//! `google.spanner.v1.KeySet` decoded with those columns' types (also used
//! by delete mutations, with column names for the messages).

use googleapis_tonic_google_spanner_v1::google::spanner::v1 as pb;
use pb::key_range::{EndKeyType, StartKeyType};
use prost_types::ListValue;
use rowtree_db::{Bound, KeyRange, KeySet};
use rowtree_schema::Catalog;
use rowtree_types::{Type, Value};
use tonic::Status;

use super::describe::{describe_list, invalid};
use super::values::decode;

/// The key columns (name, type) of a read of `table`, or of `index` on it:
/// an index's key is its own key columns followed by the table's primary-key
/// columns it does not already name ([`rowtree_schema::Index::full_key`], the
/// order `rowtree_db` reads and stores index entries in).
pub fn key_columns(
    catalog: &Catalog,
    table: &str,
    index: Option<&str>,
) -> Result<Vec<(String, Type)>, Status> {
    let t = catalog
        .table(table)
        .ok_or_else(|| Status::not_found(format!("Table not found: {table}")))?;
    let keys = match index {
        None => t.primary_key.clone(),
        Some(name) => catalog
            .index(name)
            .filter(|ix| ix.table == t.id)
            .ok_or_else(|| {
                Status::not_found(format!("Index not found on table {}: {name}", t.name))
            })?
            .full_key(t),
    };
    Ok(keys
        .iter()
        .map(|k| {
            let c = &t.columns[k.column];
            (c.name.clone(), c.ty.clone())
        })
        .collect())
}

/// The key column types of a read of `table` or of `index` on it (see
/// [`key_columns`]).
pub fn key_types(catalog: &Catalog, table: &str, index: Option<&str>) -> Result<Vec<Type>, Status> {
    Ok(key_columns(catalog, table, index)?
        .into_iter()
        .map(|(_, t)| t)
        .collect())
}

/// A key set whose keys have the types `key_types` (from [`key_types`]).
/// Point keys must have one value per key column; range bounds may be
/// prefixes; every range needs a start and an end.
pub fn key_set_from_proto(ks: &pb::KeySet, key_types: &[Type]) -> Result<KeySet, Status> {
    let columns: Vec<(Option<&str>, &Type)> = key_types.iter().map(|t| (None, t)).collect();
    key_set(ks, &columns, None)
}

/// A key set for a read through an index. An index key is the index's
/// columns followed by the table's key columns it lacks; clients address
/// index rows by the index's own columns, so a point key with fewer parts
/// than the full index key means every row with that prefix.
pub fn index_key_set_from_proto(ks: &pb::KeySet, key_types: &[Type]) -> Result<KeySet, Status> {
    let columns: Vec<(Option<&str>, &Type)> = key_types.iter().map(|t| (None, t)).collect();
    let points = pb::KeySet {
        keys: Vec::new(),
        ..ks.clone()
    };
    let mut set = key_set(&points, &columns, None)?;
    for k in &ks.keys {
        let values = key(k, &columns, None, true)?;
        if values.len() < columns.len() {
            set.ranges.push(KeyRange::prefix(values));
        } else {
            set.keys.push(values);
        }
    }
    Ok(set)
}

/// [`key_set_from_proto`] with column names (for messages) and the name of
/// the table or index.
pub(super) fn key_set(
    ks: &pb::KeySet,
    columns: &[(Option<&str>, &Type)],
    object: Option<&str>,
) -> Result<KeySet, Status> {
    let keys = ks
        .keys
        .iter()
        .map(|k| key(k, columns, object, false))
        .collect::<Result<Vec<_>, _>>()?;
    let ranges = ks
        .ranges
        .iter()
        .map(|r| {
            let start = match &r.start_key_type {
                Some(StartKeyType::StartClosed(k)) => Bound::Closed(key(k, columns, object, true)?),
                Some(StartKeyType::StartOpen(k)) => Bound::Open(key(k, columns, object, true)?),
                None => {
                    return Err(invalid(
                        "Key range must contain either start_closed or start_open.",
                    ))
                }
            };
            let end = match &r.end_key_type {
                Some(EndKeyType::EndClosed(k)) => Bound::Closed(key(k, columns, object, true)?),
                Some(EndKeyType::EndOpen(k)) => Bound::Open(key(k, columns, object, true)?),
                None => {
                    return Err(invalid(
                        "Key range must contain either end_closed or end_open.",
                    ))
                }
            };
            Ok(KeyRange { start, end })
        })
        .collect::<Result<Vec<_>, Status>>()?;
    Ok(KeySet {
        keys,
        ranges,
        all: ks.all,
    })
}

fn key(
    list: &ListValue,
    columns: &[(Option<&str>, &Type)],
    object: Option<&str>,
    prefix_ok: bool,
) -> Result<Vec<Value>, Status> {
    let n = list.values.len();
    if n > columns.len() || (!prefix_ok && n < columns.len()) {
        let object = object.map(|o| format!(" for {o}")).unwrap_or_default();
        return Err(invalid(format!(
            "Wrong number of key parts{object}. Expected {} key parts, found {n} key parts. Supplied key: {}",
            columns.len(),
            describe_list(list)
        )));
    }
    list.values
        .iter()
        .zip(columns)
        .enumerate()
        .map(|(i, (v, (name, t)))| {
            decode(v, t).map_err(|e| match name {
                Some(name) => invalid(format!("Invalid value for key column {name}: {e}")),
                None => invalid(format!("Invalid value for key part {} ({t}): {e}", i + 1)),
            })
        })
        .collect()
}
