//! UUID across the conversions: its type code, its wire form (canonical
//! out, every GoogleSQL form in), and UUIDs as parameters, key parts and
//! mutation values.

use super::*;
use std::collections::HashMap;

use pb::TypeCode;
use prost_types::Struct;
use rowtree_db::{KeySet, Mutation};
use rowtree_types::Uuid;

use crate::convert::{
    key_set_from_proto, key_types, mutations_from_proto, params_from_proto, type_from_proto,
    type_to_proto, value_to_proto,
};

const TEXT: &str = "f81d4fae-7dec-11d0-a765-00a0c91e6bf6";

fn uuid(text: &str) -> Value {
    Value::Uuid(Uuid::parse(text).unwrap())
}

#[test]
fn type_code_is_17() {
    let p = type_to_proto(&Type::Uuid);
    assert_eq!(p.code, 17);
    assert_eq!(p.code, TypeCode::Uuid as i32);
    assert_eq!(type_from_proto(&p).unwrap(), Type::Uuid);
    let array = type_to_proto(&Type::Array(Box::new(Type::Uuid)));
    assert_eq!(array.array_element_type.unwrap().code, 17);
}

#[test]
fn wire_form() {
    // Always the canonical lowercase form out.
    assert_eq!(value_to_proto(&uuid(TEXT), &Type::Uuid), s(TEXT));
    assert_eq!(
        value_to_proto(&Value::Uuid(Uuid::from_u128(1)), &Type::Uuid),
        s("00000000-0000-0000-0000-000000000001")
    );
    // Every form CAST(s AS UUID) accepts comes in.
    for text in [
        TEXT,
        "F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6",
        "f81d4fae7dec11d0a76500a0c91e6bf6",
        "{f81d4fae-7dec-11d0-a765-00a0c91e6bf6}",
    ] {
        assert_eq!(
            value_from_proto(&s(text), &Type::Uuid).unwrap(),
            uuid(TEXT),
            "{text}"
        );
    }
    let array = Type::Array(Box::new(Type::Uuid));
    let v = Value::Array(vec![uuid(TEXT), Value::Null]);
    let wire = value_to_proto(&v, &array);
    assert_eq!(wire, list(vec![s(TEXT), null()]));
    assert_eq!(value_from_proto(&wire, &array).unwrap(), v);
}

#[test]
fn bad_wire_values() {
    decode_err(
        &s("abc"),
        &Type::Uuid,
        &["\"abc\"", "UUID", "32 hexadecimal"],
    );
    decode_err(
        &s("f81d4fae--7dec-11d0-a765-00a0c91e6bf6"),
        &Type::Uuid,
        &["UUID"],
    );
    decode_err(&s(&format!("{TEXT}0")), &Type::Uuid, &["UUID"]);
    // Not a string kind at all.
    decode_err(&n(1.0), &Type::Uuid, &["UUID"]);
    decode_err(&b(true), &Type::Uuid, &["UUID"]);
}

#[test]
fn parameters() {
    let mut fields = std::collections::BTreeMap::new();
    fields.insert("id".to_string(), s(&TEXT.to_uppercase()));
    fields.insert("ids".to_string(), list(vec![s(TEXT), null()]));
    fields.insert("none".to_string(), null());
    let mut types = HashMap::new();
    types.insert("id".to_string(), type_to_proto(&Type::Uuid));
    types.insert(
        "ids".to_string(),
        type_to_proto(&Type::Array(Box::new(Type::Uuid))),
    );
    types.insert("none".to_string(), type_to_proto(&Type::Uuid));
    let p = params_from_proto(Some(&Struct { fields }), &types).unwrap();
    assert_eq!(p.get("id").cloned().unwrap(), (Type::Uuid, uuid(TEXT)));
    assert_eq!(
        p.get("ids").cloned().unwrap(),
        (
            Type::Array(Box::new(Type::Uuid)),
            Value::Array(vec![uuid(TEXT), Value::Null])
        )
    );
    assert_eq!(p.get("none").cloned().unwrap(), (Type::Uuid, Value::Null));

    let mut fields = std::collections::BTreeMap::new();
    fields.insert("id".to_string(), s("not-a-uuid"));
    let err = params_from_proto(Some(&Struct { fields }), &types).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(
        err.message().starts_with(
            "Invalid value for bind parameter id: Could not parse \"not-a-uuid\" as UUID"
        ),
        "{}",
        err.message()
    );
}

fn uuid_catalog() -> Catalog {
    Catalog::new()
        .apply_sql(
            "CREATE TABLE Things (Id UUID NOT NULL, Name STRING(MAX), Tags ARRAY<UUID>) PRIMARY KEY (Id)",
        )
        .unwrap()
        .0
}

#[test]
fn keys_and_mutations() {
    let c = uuid_catalog();
    assert_eq!(key_types(&c, "Things", None).unwrap(), vec![Type::Uuid]);
    let ks = pb::KeySet {
        keys: vec![lv(vec![s("{F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6}")])],
        ..Default::default()
    };
    assert_eq!(
        key_set_from_proto(&ks, &[Type::Uuid]).unwrap(),
        KeySet {
            keys: vec![vec![uuid(TEXT)]],
            ..KeySet::default()
        }
    );

    let ms = vec![op(Operation::Insert(write(
        "Things",
        &["Id", "Name", "Tags"],
        vec![vec![
            s(TEXT),
            s("a"),
            list(vec![s("00000000000000000000000000000001"), null()]),
        ]],
    )))];
    assert_eq!(
        mutations_from_proto(&ms, &c).unwrap(),
        vec![Mutation::insert(
            "Things",
            &["Id", "Name", "Tags"],
            vec![vec![
                uuid(TEXT),
                Value::String("a".into()),
                Value::Array(vec![Value::Uuid(Uuid::from_u128(1)), Value::Null]),
            ]],
        )]
    );

    let bad = vec![op(Operation::Insert(write(
        "Things",
        &["Id"],
        vec![vec![s("123")]],
    )))];
    let err = mutations_from_proto(&bad, &c).unwrap_err();
    assert!(
        err.message().contains("column Id") && err.message().contains("as UUID"),
        "{:?}: {}",
        err.code(),
        err.message()
    );
}
