//! Result sets: a row's values and the metadata (row type) that lets a
//! client decode them. The data API fills in the rest of a `ResultSet` or
//! `PartialResultSet` (the begun transaction, statistics, chunking).

use googleapis_tonic_google_spanner_v1::google::spanner::v1 as pb;
use rowtree_types::{Dialect, Type, Value};

use super::types::struct_type_in;
use super::values::value_to_proto;

/// A row's wire values, each encoded with its column's type.
pub fn row_to_proto(row: &[Value], columns: &[(String, Type)]) -> Vec<prost_types::Value> {
    row.iter()
        .enumerate()
        .map(|(i, v)| value_to_proto(v, columns.get(i).map_or(&Type::String, |(_, t)| t)))
        .collect()
}

/// Result set metadata with the row type of `columns`. `transaction` is left
/// `None` for the caller to fill in when the request began a transaction;
/// `undeclared_parameters` is `None`. The column types are written as a
/// database of `dialect` reports them (PostgreSQL's carry type annotations).
pub fn metadata(columns: &[(String, Type)], dialect: Dialect) -> pb::ResultSetMetadata {
    pb::ResultSetMetadata {
        row_type: Some(struct_type_in(columns, dialect)),
        transaction: None,
        undeclared_parameters: None,
    }
}
