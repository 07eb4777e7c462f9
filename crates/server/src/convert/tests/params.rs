//! `params.rs`: declared and inferred parameter types, and their errors.

use super::*;
use std::collections::HashMap;

use pb::TypeCode;
use prost_types::Struct;

use crate::convert::{params_from_proto, type_to_proto};

#[test]
fn params() {
    let mut fields = std::collections::BTreeMap::new();
    fields.insert("id".to_string(), s("42"));
    fields.insert("when".to_string(), s("2020-01-01T00:00:00Z"));
    fields.insert("name".to_string(), s("x"));
    fields.insert("flag".to_string(), b(true));
    fields.insert("count".to_string(), n(3.0));
    fields.insert("ratio".to_string(), n(0.5));
    fields.insert("nothing".to_string(), null());
    fields.insert("mixed".to_string(), list(vec![n(1.0), null(), n(2.5)]));
    fields.insert("strs".to_string(), list(vec![null(), s("a")]));
    fields.insert("empty".to_string(), list(vec![]));
    fields.insert("Typed_Case".to_string(), s("7"));
    let params = Struct { fields };
    let mut types = HashMap::new();
    types.insert("id".to_string(), type_to_proto(&Type::Int64));
    types.insert("when".to_string(), type_to_proto(&Type::Timestamp));
    types.insert("typed_case".to_string(), type_to_proto(&Type::Int64));
    types.insert("unused".to_string(), type_to_proto(&Type::Bool));
    let p = params_from_proto(Some(&params), &types).unwrap();
    let get = |k: &str| p.get(k).cloned().unwrap();
    assert_eq!(get("id"), (Type::Int64, Value::Int64(42)));
    assert_eq!(
        get("when"),
        (
            Type::Timestamp,
            Value::Timestamp(ts("2020-01-01T00:00:00Z"))
        )
    );
    assert_eq!(get("name"), (Type::String, Value::String("x".into())));
    assert_eq!(get("flag"), (Type::Bool, Value::Bool(true)));
    assert_eq!(get("count"), (Type::Int64, Value::Int64(3)));
    assert_eq!(get("ratio"), (Type::Float64, Value::Float64(0.5)));
    // A NULL without a type is an untyped NULL, typed where it is used.
    assert!(!p.contains_key("nothing"));
    assert_eq!(p.untyped_nulls().collect::<Vec<_>>(), vec!["nothing"]);
    assert_eq!(
        get("mixed"),
        (
            Type::Array(Box::new(Type::Float64)),
            Value::Array(vec![Value::Float64(1.0), Value::Null, Value::Float64(2.5)])
        )
    );
    assert_eq!(
        get("strs"),
        (
            Type::Array(Box::new(Type::String)),
            Value::Array(vec![Value::Null, Value::String("a".into())])
        )
    );
    assert_eq!(
        get("empty"),
        (Type::Array(Box::new(Type::Int64)), Value::Array(vec![]))
    );
    assert_eq!(get("Typed_Case"), (Type::Int64, Value::Int64(7)));
    assert!(!p.contains_key("unused"));
    assert!(params_from_proto(None, &types).unwrap().is_empty());

    let one = |name: &str, v: prost_types::Value| Struct {
        fields: [(name.to_string(), v)].into_iter().collect(),
    };
    let err = params_from_proto(Some(&one("id", s("x"))), &types).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(
        err.message()
            .starts_with("Invalid value for bind parameter id:")
            && err.message().contains("INT64"),
        "{}",
        err.message()
    );
    // A NUMERIC parameter with more than 9 decimals is refused, not rounded.
    let mut numeric = HashMap::new();
    numeric.insert("n".to_string(), type_to_proto(&Type::Numeric));
    let err = params_from_proto(Some(&one("n", s("3.1415926535"))), &numeric).unwrap_err();
    assert_eq!(
        (err.code(), err.message()),
        (
            Code::InvalidArgument,
            "Invalid value for bind parameter n: Could not parse \"3.1415926535\" as NUMERIC. \
             The NUMERIC type supports 38 digits of precision and 9 digits of scale"
        )
    );
    let err = params_from_proto(
        Some(&one("s", kind(Kind::StructValue(Struct::default())))),
        &types,
    )
    .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(
        err.message().contains("bind parameter s"),
        "{}",
        err.message()
    );
    let err = params_from_proto(Some(&one("l", list(vec![s("a"), b(true)]))), &types).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    let mut interval = HashMap::new();
    interval.insert(
        "u".to_string(),
        pb::Type {
            code: TypeCode::Interval as i32,
            ..Default::default()
        },
    );
    let err = params_from_proto(Some(&one("u", s("x"))), &interval).unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented);
    assert!(
        err.message().contains("bind parameter u"),
        "{}",
        err.message()
    );
}
