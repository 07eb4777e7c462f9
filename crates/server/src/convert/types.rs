//! Types: GoogleSQL types to `google.spanner.v1.Type` and back.
//!
//! A result set's row type, `param_types` and struct fields all travel as
//! these. Decoding is where unsupported types are refused (INTERVAL is
//! `UNIMPLEMENTED`). PROTO and ENUM carry their type's fully qualified name
//! in `proto_type_fqn`.
//!
//! A PostgreSQL-dialect database speaks the same type codes, with a
//! `TypeAnnotationCode` where PostgreSQL's type is not GoogleSQL's:
//! `numeric` is `NUMERIC` + `PG_NUMERIC`, `jsonb` is `JSON` + `PG_JSONB`
//! (and `oid` would be `INT64` + `PG_OID`). [`type_to_proto_in`] adds them
//! to the row types a PostgreSQL database returns (clients decode `numeric`
//! and `jsonb` columns by them); [`type_from_proto`] accepts them on
//! parameters, each only on its own code.
//!
//! `UUID` is type code 17 (`TypeCode::Uuid` in `google/spanner/v1/type.proto`).
//! Clients that predate it see an unknown code and, per protobuf's open
//! enums, an `i32` they cannot name; Rowtree only sends it for UUID values.

use googleapis_tonic_google_spanner_v1::google::spanner::v1 as pb;
use pb::struct_type::Field;
use pb::{TypeAnnotationCode, TypeCode};
use rowtree_types::{Dialect, Type};
use tonic::Status;

use super::describe::invalid;

/// The wire type of a GoogleSQL type.
pub fn type_to_proto(t: &Type) -> pb::Type {
    let code = match t {
        Type::Bool => TypeCode::Bool,
        Type::Int64 => TypeCode::Int64,
        Type::Float32 => TypeCode::Float32,
        Type::Float64 => TypeCode::Float64,
        Type::Numeric => TypeCode::Numeric,
        Type::String => TypeCode::String,
        Type::Bytes => TypeCode::Bytes,
        Type::Date => TypeCode::Date,
        Type::Timestamp => TypeCode::Timestamp,
        Type::Json => TypeCode::Json,
        Type::Uuid => TypeCode::Uuid,
        Type::Array(_) => TypeCode::Array,
        Type::Struct(_) => TypeCode::Struct,
        Type::Proto(_) => TypeCode::Proto,
        Type::Enum(_) => TypeCode::Enum,
    };
    let mut out = pb::Type {
        code: code as i32,
        ..Default::default()
    };
    match t {
        Type::Array(element) => out.array_element_type = Some(Box::new(type_to_proto(element))),
        Type::Struct(fields) => out.struct_type = Some(struct_type(fields)),
        Type::Proto(name) | Type::Enum(name) => out.proto_type_fqn = name.clone(),
        _ => {}
    }
    out
}

/// The wire type of `t` as a database of `dialect` reports it: in a
/// PostgreSQL database `NUMERIC` carries `PG_NUMERIC` and `JSON` carries
/// `PG_JSONB`, in arrays and struct fields too.
pub fn type_to_proto_in(t: &Type, dialect: Dialect) -> pb::Type {
    let mut out = type_to_proto(t);
    if dialect == Dialect::PostgreSql {
        annotate_pg(&mut out);
    }
    out
}

fn annotate_pg(t: &mut pb::Type) {
    match TypeCode::try_from(t.code) {
        Ok(TypeCode::Numeric) => t.type_annotation = TypeAnnotationCode::PgNumeric as i32,
        Ok(TypeCode::Json) => t.type_annotation = TypeAnnotationCode::PgJsonb as i32,
        _ => {}
    }
    if let Some(element) = t.array_element_type.as_deref_mut() {
        annotate_pg(element);
    }
    if let Some(st) = t.struct_type.as_mut() {
        for f in &mut st.fields {
            if let Some(ft) = f.r#type.as_mut() {
                annotate_pg(ft);
            }
        }
    }
}

/// A `StructType` with named fields (row types, struct types).
pub(super) fn struct_type(fields: &[(String, Type)]) -> pb::StructType {
    struct_type_in(fields, Dialect::GoogleSql)
}

/// A `StructType` with named fields, typed as a database of `dialect`
/// reports them ([`type_to_proto_in`]).
pub(super) fn struct_type_in(fields: &[(String, Type)], dialect: Dialect) -> pb::StructType {
    pb::StructType {
        fields: fields
            .iter()
            .map(|(name, t)| Field {
                name: name.clone(),
                r#type: Some(type_to_proto_in(t, dialect)),
            })
            .collect(),
    }
}

/// The GoogleSQL type of a wire type. `TYPE_CODE_UNSPECIFIED`, unknown codes
/// and incomplete ARRAY/STRUCT types are `INVALID_ARGUMENT`; types Rowtree
/// does not implement (INTERVAL) are `UNIMPLEMENTED`. The
/// PostgreSQL annotations are accepted on their own codes (`PG_NUMERIC` on
/// `NUMERIC`, `PG_JSONB` on `JSON`, `PG_OID` on `INT64`: the value is the
/// same type underneath) and refused on any other.
pub fn type_from_proto(t: &pb::Type) -> Result<Type, Status> {
    match TypeAnnotationCode::try_from(t.type_annotation) {
        Ok(TypeAnnotationCode::Unspecified) => {}
        Ok(annotation) => {
            let expected = match annotation {
                TypeAnnotationCode::PgNumeric => TypeCode::Numeric,
                TypeAnnotationCode::PgJsonb => TypeCode::Json,
                TypeAnnotationCode::PgOid => TypeCode::Int64,
                TypeAnnotationCode::Unspecified => unreachable!("matched above"),
            };
            if t.code != expected as i32 {
                return Err(invalid(format!(
                    "Type annotation {} is only valid on type code {}",
                    annotation.as_str_name(),
                    expected.as_str_name()
                )));
            }
        }
        Err(_) => {
            return Err(invalid(format!(
                "Unknown type annotation code {}",
                t.type_annotation
            )))
        }
    }
    let code =
        TypeCode::try_from(t.code).map_err(|_| invalid(format!("Unknown type code {}", t.code)))?;
    Ok(match code {
        TypeCode::Unspecified => {
            return Err(invalid(
                "Type code must be specified, found TYPE_CODE_UNSPECIFIED",
            ))
        }
        TypeCode::Bool => Type::Bool,
        TypeCode::Int64 => Type::Int64,
        TypeCode::Float64 => Type::Float64,
        TypeCode::Float32 => Type::Float32,
        TypeCode::Timestamp => Type::Timestamp,
        TypeCode::Date => Type::Date,
        TypeCode::String => Type::String,
        TypeCode::Bytes => Type::Bytes,
        TypeCode::Numeric => Type::Numeric,
        TypeCode::Json => Type::Json,
        TypeCode::Uuid => Type::Uuid,
        TypeCode::Array => {
            let element = t
                .array_element_type
                .as_deref()
                .ok_or_else(|| invalid("Array types must specify element type"))?;
            let element = type_from_proto(element)?;
            if matches!(element, Type::Array(_)) {
                return Err(invalid(
                    "Unsupported type ARRAY<ARRAY<...>>: arrays of arrays do not exist in GoogleSQL",
                ));
            }
            Type::Array(Box::new(element))
        }
        TypeCode::Struct => {
            let st = t
                .struct_type
                .as_ref()
                .ok_or_else(|| invalid("Struct types must specify struct_type"))?;
            let fields = st
                .fields
                .iter()
                .map(|f| {
                    let ft = f.r#type.as_ref().ok_or_else(|| {
                        invalid(format!("Struct field '{}' must specify a type", f.name))
                    })?;
                    Ok((f.name.clone(), type_from_proto(ft)?))
                })
                .collect::<Result<Vec<_>, Status>>()?;
            Type::Struct(fields)
        }
        TypeCode::Proto | TypeCode::Enum => {
            if t.proto_type_fqn.is_empty() {
                return Err(invalid(format!(
                    "{} types must specify proto_type_fqn",
                    code.as_str_name()
                )));
            }
            if code == TypeCode::Proto {
                Type::Proto(t.proto_type_fqn.clone())
            } else {
                Type::Enum(t.proto_type_fqn.clone())
            }
        }
        TypeCode::Interval => {
            return Err(Status::unimplemented(format!(
                "Unsupported type: {}",
                code.as_str_name()
            )))
        }
    })
}
