//! Query parameters: `params` and `param_types` of a request to the
//! SQL layer's [`Params`](rowtree_sql::Params), typed by the declared type
//! or, for an untyped parameter, by the value's wire kind (an untyped NULL is
//! left for the statement to type).

use std::collections::HashMap;

use googleapis_tonic_google_spanner_v1::google::spanner::v1 as pb;
use prost_types::value::Kind;
use prost_types::Struct;
use rowtree_types::{Type, Value};
use tonic::Status;

use super::describe::{describe, invalid};
use super::types::type_from_proto;
use super::values::{as_i64, decode};

/// Query parameters from `ExecuteSqlRequest.params` and `param_types`.
///
/// Names are stored without a leading `@` (clients send them without one).
/// A parameter with an entry in `types` (matched exactly, else ignoring case)
/// is decoded with that type. A parameter without one is *untyped*, which
/// Spanner allows; Spanner infers its type from the query. Rowtree does so
/// for a NULL, and types any other untyped value by its kind:
///
/// | wire kind | type |
/// |---|---|
/// | `string_value` | `STRING` |
/// | `bool_value` | `BOOL` |
/// | integral `number_value` within INT64 | `INT64` |
/// | other `number_value` | `FLOAT64` |
/// | `null_value` | none: an *untyped NULL* ([`rowtree_sql::Params::insert_untyped_null`]), typed by where the statement uses it, as Spanner does |
/// | `list_value` | `ARRAY` of the elements' type (INT64 mixed with FLOAT64 is FLOAT64; all NULL or empty is `ARRAY<INT64>`) |
/// | `struct_value` | error: structs need a declared type |
///
/// Entries of `types` without a value are ignored.
pub fn params_from_proto(
    params: Option<&Struct>,
    types: &HashMap<String, pb::Type>,
) -> Result<rowtree_sql::Params, Status> {
    let mut out = rowtree_sql::Params::new();
    let Some(params) = params else {
        return Ok(out);
    };
    for (name, v) in &params.fields {
        let key = name.strip_prefix('@').unwrap_or(name);
        let declared = types.get(name).or_else(|| types.get(key)).or_else(|| {
            types
                .iter()
                .find(|(k, _)| k.strip_prefix('@').unwrap_or(k).eq_ignore_ascii_case(key))
                .map(|(_, t)| t)
        });
        let bad = |e: String| invalid(format!("Invalid value for bind parameter {key}: {e}"));
        if declared.is_none() && matches!(v.kind, Some(Kind::NullValue(_))) {
            out.insert_untyped_null(key);
            continue;
        }
        let (ty, value) = match declared {
            Some(pt) => {
                let ty = type_from_proto(pt).map_err(|s| {
                    Status::new(
                        s.code(),
                        format!("Invalid type for bind parameter {key}: {}", s.message()),
                    )
                })?;
                let value = decode(v, &ty).map_err(bad)?;
                (ty, value)
            }
            None => infer_untyped(v).map_err(bad)?,
        };
        out.insert(key.to_string(), (ty, value));
    }
    Ok(out)
}

/// The type of an untyped scalar wire value; `None` for NULL.
fn untyped_scalar_type(v: &prost_types::Value) -> Result<Option<Type>, String> {
    Ok(Some(match &v.kind {
        Some(Kind::NullValue(_)) => return Ok(None),
        Some(Kind::BoolValue(_)) => Type::Bool,
        Some(Kind::StringValue(_)) => Type::String,
        Some(Kind::NumberValue(n)) if as_i64(*n).is_some() => Type::Int64,
        Some(Kind::NumberValue(_)) => Type::Float64,
        Some(Kind::StructValue(_)) => {
            return Err("a struct_value parameter must have its type in param_types".into())
        }
        Some(Kind::ListValue(_)) => return Err("untyped arrays cannot hold arrays".into()),
        None => return Err(format!("Could not parse {}", describe(v))),
    }))
}

fn infer_untyped(v: &prost_types::Value) -> Result<(Type, Value), String> {
    let ty = match &v.kind {
        Some(Kind::ListValue(l)) => {
            let mut element: Option<Type> = None;
            for item in &l.values {
                let Some(t) = untyped_scalar_type(item)? else {
                    continue;
                };
                element = Some(match (element, t) {
                    (None, t) => t,
                    (Some(a), b) if a == b => a,
                    (Some(Type::Int64 | Type::Float64), Type::Int64 | Type::Float64) => {
                        Type::Float64
                    }
                    (Some(a), b) => {
                        return Err(format!("an untyped array cannot mix {a} and {b} elements"))
                    }
                });
            }
            Type::Array(Box::new(element.unwrap_or(Type::Int64)))
        }
        // NULL is handled by the caller (an untyped NULL).
        _ => untyped_scalar_type(v)?.unwrap_or(Type::Int64),
    };
    let value = decode(v, &ty)?;
    Ok((ty, value))
}
