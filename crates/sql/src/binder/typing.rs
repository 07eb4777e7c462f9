//! Type rules the clauses share.
//!
//! Which types can be grouped and compared for equality (GROUP BY,
//! DISTINCT, PARTITION BY, hash join keys), the common supertype two
//! columns meet in (set operations, JOIN USING), and the declared type a
//! CAST to a column type names.

use rowtree_parser::ast::{self, DataType};
use rowtree_types::Type;

/// Whether values of the type can be grouped and compared for equality.
pub(super) fn groupable(t: &Type) -> bool {
    match t {
        Type::Json => false,
        Type::Array(e) => groupable(e),
        Type::Struct(fields) => fields.iter().all(|(_, t)| groupable(t)),
        _ => true,
    }
}

/// The common supertype of two column types of a set operation.
pub(super) fn common_type(a: &Type, b: &Type) -> Option<Type> {
    use Type::*;
    Some(match (a, b) {
        _ if a == b => a.clone(),
        (Int64, Numeric) | (Numeric, Int64) => Numeric,
        (Int64 | Numeric | Float32 | Float64, Int64 | Numeric | Float32 | Float64) => Float64,
        _ => return None,
    })
}

/// The column type as a declared type (for CAST), when it has one.
pub(crate) fn data_type(t: &Type) -> Option<DataType> {
    Some(match t {
        Type::Bool => DataType::Bool,
        Type::Int64 => DataType::Int64,
        Type::Float32 => DataType::Float32,
        Type::Float64 => DataType::Float64,
        Type::Numeric => DataType::Numeric,
        Type::String => DataType::String(ast::Length::Max),
        Type::Bytes => DataType::Bytes(ast::Length::Max),
        Type::Date => DataType::Date,
        Type::Timestamp => DataType::Timestamp,
        Type::Json => DataType::Json,
        Type::Uuid => DataType::Uuid,
        Type::Array(e) => DataType::Array(Box::new(data_type(e)?)),
        Type::Proto(name) => DataType::Proto(name.clone()),
        Type::Enum(name) => DataType::Enum(name.clone()),
        Type::Struct(_) => return None,
    })
}
