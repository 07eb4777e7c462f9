//! Reads: Read, StreamingRead and PartitionRead, rows by key set from a
//! table or through an index, without SQL.
//!
//! A read resolves its transaction like a statement (`selectors.rs`),
//! decodes its key set with the key columns' types, reads through the
//! database's read API, and hands the rows to a [`RowOut`]. A read-write
//! transaction aborted by wound-wait during the read ends at once, freeing
//! its locks; a transaction the request began is forgotten if the read
//! fails.

use googleapis_tonic_google_spanner_v1::google::spanner::v1 as pb;
use tonic::Status;

use super::results::{decode_token, Outcome, RowOut};
use super::selectors::Selected;
use super::sessions::SessionState;
use super::transactions::{end_aborted, TxnState};
use crate::convert;
use crate::status;

/// Read and StreamingRead: the rows of `r`'s key set, sent to `out`.
pub(super) fn read_rows(
    session: &SessionState,
    r: &pb::ReadRequest,
    out: &mut dyn RowOut,
) -> Result<(Outcome, Option<pb::Transaction>), Status> {
    let (_, pinned) = decode_token(&r.resume_token)?;
    let mut selected = session.select_pinned(r.transaction.as_ref(), pinned)?;
    out.dialect(session.db.dialect());
    match &selected {
        Selected::Held { begun, .. } => out.begun(begun.as_ref()),
        Selected::Snapshot { report, ro } => {
            out.begun(report.as_ref());
            out.snapshot(ro.read_timestamp());
        }
    }
    let result = (|| {
        let catalog = session.db.catalog();
        let table = catalog
            .table(&r.table)
            .ok_or_else(|| Status::not_found(format!("Table not found: {}", r.table)))?;
        let index = (!r.index.is_empty()).then_some(r.index.as_str());
        let key_types = convert::key_types(&catalog, &table.name, index)?;
        let key_set = match (&r.key_set, index) {
            (Some(ks), None) => convert::key_set_from_proto(ks, &key_types)?,
            (Some(ks), Some(_)) => convert::index_key_set_from_proto(ks, &key_types)?,
            (None, _) => return Err(Status::invalid_argument("A read needs a key set")),
        };
        let mut columns = Vec::with_capacity(r.columns.len());
        for c in &r.columns {
            let (_, col) = table.column(c).ok_or_else(|| {
                Status::not_found(format!("Column not found in table {}: {c}", table.name))
            })?;
            columns.push((col.name.clone(), col.ty.clone()));
        }
        let names: Vec<&str> = r.columns.iter().map(String::as_str).collect();
        let mut request = rowtree_db::ReadRequest::new(&table.name, &names, key_set);
        if let Some(ix) = index {
            request = request.with_index(ix);
        }
        if r.limit > 0 {
            request = request.with_limit(r.limit as usize);
        }
        let rows = match &mut selected {
            Selected::Snapshot { ro, .. } => ro.read(&request).map_err(status::from_db)?,
            Selected::Held { slot, .. } => {
                let mut state = slot.state.lock();
                match &mut *state {
                    TxnState::ReadOnly(ro) => ro.read(&request).map_err(status::from_db)?,
                    TxnState::ReadWrite(txn) => match txn.read(&request) {
                        Ok(rows) => rows,
                        Err(e) => {
                            if e.is_retryable() {
                                end_aborted(&mut state, &e.to_string());
                            }
                            return Err(status::from_db(e));
                        }
                    },
                    TxnState::PartitionedDml => {
                        return Err(Status::invalid_argument(
                            "Reads are not allowed in partitioned DML transactions",
                        ))
                    }
                    TxnState::Ended(code, message) => {
                        return Err(status::status(*code, message.clone()))
                    }
                }
            }
        };
        for row in rows {
            out.row(&columns, row)?;
        }
        Ok(Outcome {
            columns,
            stats: None,
        })
    })();
    match selected {
        Selected::Held { id, begun, .. } => match result {
            Ok(o) => Ok((o, begun)),
            Err(e) => {
                if begun.is_some() {
                    session.forget(&id);
                }
                Err(e)
            }
        },
        Selected::Snapshot { report, .. } => result.map(|o| (o, report)),
    }
}

/// PartitionRead: checks the table and answers one partition, the whole
/// read.
pub(super) fn partition_read(
    session: &SessionState,
    r: &pb::PartitionReadRequest,
) -> Result<pb::PartitionResponse, Status> {
    let selected = session.select(r.transaction.as_ref())?;
    let (txn, begun) = match &selected {
        Selected::Held { id, begun, .. } => (id.clone(), begun.clone()),
        Selected::Snapshot { .. } => {
            return Err(Status::invalid_argument(
                "PartitionRead needs a read-only transaction id or begin",
            ))
        }
    };
    let catalog = session.db.catalog();
    if catalog.table(&r.table).is_none() {
        return Err(Status::not_found(format!("Table not found: {}", r.table)));
    }
    Ok(pb::PartitionResponse {
        partitions: vec![pb::Partition {
            partition_token: [b"r".as_slice(), &txn].concat(),
        }],
        transaction: begun,
    })
}
