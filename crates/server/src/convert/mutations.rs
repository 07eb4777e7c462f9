//! Mutations: a commit's `google.spanner.v1.Mutation`s checked against the
//! schema and decoded into the database's [`Mutation`]s.

use googleapis_tonic_google_spanner_v1::google::spanner::v1 as pb;
use pb::mutation::Operation;
use rowtree_db::{Mutation, WriteKind};
use rowtree_schema::{Catalog, Table};
use rowtree_types::Type;
use tonic::Status;

use super::describe::{describe_list, invalid};
use super::keys::key_set;
use super::values::{decode, numeric_scale_error};

fn table<'c>(catalog: &'c Catalog, name: &str) -> Result<&'c Table, Status> {
    if name.is_empty() {
        return Err(invalid("Mutation does not specify table."));
    }
    catalog
        .table(name)
        .ok_or_else(|| Status::not_found(format!("Table not found: {name}")))
}

/// Commit mutations against `catalog`. Table and column names match case
/// insensitively and come out as the schema spells them; each value is
/// decoded with its column's type; a delete's key set with the table's
/// primary key types. Queue mutations (`send`, `ack`) are `UNIMPLEMENTED`.
pub fn mutations_from_proto(
    ms: &[pb::Mutation],
    catalog: &Catalog,
) -> Result<Vec<Mutation>, Status> {
    ms.iter().map(|m| mutation_from_proto(m, catalog)).collect()
}

fn mutation_from_proto(m: &pb::Mutation, catalog: &Catalog) -> Result<Mutation, Status> {
    let (kind, write) = match &m.operation {
        None => return Err(invalid("Mutation does not specify an operation.")),
        Some(Operation::Insert(w)) => (WriteKind::Insert, w),
        Some(Operation::Update(w)) => (WriteKind::Update, w),
        Some(Operation::InsertOrUpdate(w)) => (WriteKind::InsertOrUpdate, w),
        Some(Operation::Replace(w)) => (WriteKind::Replace, w),
        Some(Operation::Delete(d)) => {
            let t = table(catalog, &d.table)?;
            let ks = d.key_set.as_ref().ok_or_else(|| {
                invalid(format!(
                    "Delete mutation on table {} does not specify a key_set.",
                    t.name
                ))
            })?;
            let columns: Vec<(Option<&str>, &Type)> = t
                .primary_key
                .iter()
                .map(|k| {
                    let c = &t.columns[k.column];
                    (Some(c.name.as_str()), &c.ty)
                })
                .collect();
            return Ok(Mutation::Delete {
                table: t.name.clone(),
                key_set: key_set(ks, &columns, Some(&t.name))?,
            });
        }
        Some(Operation::Send(_)) | Some(Operation::Ack(_)) => {
            return Err(Status::unimplemented(
                "Queue mutations (send, ack) are not supported",
            ))
        }
    };
    let t = table(catalog, &write.table)?;
    let mut positions = Vec::with_capacity(write.columns.len());
    for name in &write.columns {
        let (pos, col) = t.column(name).ok_or_else(|| {
            Status::not_found(format!("Column not found in table {}: {name}", t.name))
        })?;
        if positions.contains(&pos) {
            return Err(invalid(format!("Multiple values for column {}.", col.name)));
        }
        positions.push(pos);
    }
    let columns: Vec<&rowtree_schema::Column> = positions.iter().map(|&p| &t.columns[p]).collect();
    let rows = write
        .values
        .iter()
        .map(|list| {
            if list.values.len() != columns.len() {
                return Err(invalid(format!(
                    "Mutation on table {} names {} columns but a row has {} values: {}",
                    t.name,
                    columns.len(),
                    list.values.len(),
                    describe_list(list)
                )));
            }
            list.values
                .iter()
                .zip(&columns)
                .map(|(v, c)| {
                    // A NUMERIC with more than 9 decimals is INVALID_ARGUMENT
                    // (never rounded); a value of the wrong kind in a
                    // mutation is FAILED_PRECONDITION, as Spanner answers.
                    if let Some(e) = numeric_scale_error(v, &c.ty) {
                        return Err(invalid(format!(
                            "Invalid value for column {} in table {}: {e}",
                            c.name, t.name
                        )));
                    }
                    decode(v, &c.ty).map_err(|e| {
                        Status::failed_precondition(format!(
                            "Invalid value for column {} in table {}: {e}",
                            c.name, t.name
                        ))
                    })
                })
                .collect::<Result<Vec<_>, Status>>()
        })
        .collect::<Result<Vec<_>, Status>>()?;
    Ok(Mutation::Write {
        kind,
        table: t.name.clone(),
        columns: columns.iter().map(|c| c.name.clone()).collect(),
        rows,
    })
}
