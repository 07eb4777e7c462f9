//! PROTO and ENUM across the conversions: their wire types (with
//! `proto_type_fqn`), their values (a message as base64 bytes, an enum as
//! its number in decimal), and as parameters, key parts and mutation values.

use super::*;
use std::collections::HashMap;

use base64::Engine as _;
use pb::TypeCode;
use prost_types::Struct;
use rowtree_db::{KeySet, Mutation};
use rowtree_testkit::protos::{music, singer_info};

use crate::convert::{
    key_set_from_proto, key_types, mutations_from_proto, params_from_proto, type_from_proto,
    type_to_proto, value_to_proto,
};

const INFO: &str = "examples.spanner.music.SingerInfo";
const GENRE: &str = "examples.spanner.music.Genre";

fn info() -> Type {
    Type::Proto(INFO.into())
}

fn genre() -> Type {
    Type::Enum(GENRE.into())
}

#[test]
fn wire_types_carry_the_name() {
    let p = type_to_proto(&info());
    assert_eq!(p.code, TypeCode::Proto as i32);
    assert_eq!(p.proto_type_fqn, INFO);
    assert_eq!(type_from_proto(&p).unwrap(), info());
    let p = type_to_proto(&Type::Array(Box::new(genre())));
    let element = p.array_element_type.as_deref().unwrap();
    assert_eq!(element.code, TypeCode::Enum as i32);
    assert_eq!(element.proto_type_fqn, GENRE);
    assert_eq!(type_from_proto(&p).unwrap(), Type::Array(Box::new(genre())));
    // Without the name, the type means nothing.
    for code in [TypeCode::Proto, TypeCode::Enum] {
        let err = type_from_proto(&pb::Type {
            code: code as i32,
            ..Default::default()
        })
        .unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument);
        assert!(
            err.message().contains("proto_type_fqn"),
            "{}",
            err.message()
        );
    }
}

#[test]
fn wire_values() {
    let bytes = singer_info(Some(1), Some("FR"), Some(3));
    let text = base64::engine::general_purpose::STANDARD.encode(&bytes);
    assert_eq!(
        value_to_proto(&Value::Bytes(bytes.clone()), &info()),
        s(&text)
    );
    assert_eq!(
        value_from_proto(&s(&text), &info()).unwrap(),
        Value::Bytes(bytes)
    );
    assert_eq!(value_to_proto(&Value::Int64(3), &genre()), s("3"));
    assert_eq!(
        value_from_proto(&s("3"), &genre()).unwrap(),
        Value::Int64(3)
    );
    let array = Type::Array(Box::new(genre()));
    let v = Value::Array(vec![Value::Int64(2), Value::Null]);
    assert_eq!(value_to_proto(&v, &array), list(vec![s("2"), null()]));
    assert_eq!(
        value_from_proto(&list(vec![s("2"), null()]), &array).unwrap(),
        v
    );
    decode_err(&s("ROCK"), &genre(), &["\"ROCK\"", GENRE]);
    decode_err(&s("not base64!"), &info(), &["BYTES", INFO]);
    decode_err(&b(true), &info(), &[INFO]);
}

#[test]
fn parameters() {
    let bytes = singer_info(Some(2), None, None);
    let text = base64::engine::general_purpose::STANDARD.encode(&bytes);
    let mut fields = std::collections::BTreeMap::new();
    fields.insert("info".to_string(), s(&text));
    fields.insert("genre".to_string(), s("1"));
    let mut types = HashMap::new();
    types.insert("info".to_string(), type_to_proto(&info()));
    types.insert("genre".to_string(), type_to_proto(&genre()));
    let p = params_from_proto(Some(&Struct { fields }), &types).unwrap();
    assert_eq!(
        p.get("info").cloned().unwrap(),
        (info(), Value::Bytes(bytes))
    );
    assert_eq!(p.get("genre").cloned().unwrap(), (genre(), Value::Int64(1)));
}

fn proto_catalog() -> Catalog {
    let bundle = rowtree_types::ProtoBundle::decode(&music()).unwrap();
    let c = Catalog::new()
        .with_proto_descriptors(std::sync::Arc::new(bundle))
        .unwrap();
    let c = c
        .apply_sql(&format!("CREATE PROTO BUNDLE ({INFO}, {GENRE})"))
        .unwrap()
        .0;
    c.apply_sql(&format!(
        "CREATE TABLE Singers (G {GENRE} NOT NULL, Info {INFO}, Genres ARRAY<{GENRE}>) PRIMARY KEY (G)"
    ))
    .unwrap()
    .0
}

#[test]
fn keys_and_mutations() {
    let c = proto_catalog();
    assert_eq!(key_types(&c, "Singers", None).unwrap(), vec![genre()]);
    let ks = pb::KeySet {
        keys: vec![lv(vec![s("3")])],
        ..Default::default()
    };
    assert_eq!(
        key_set_from_proto(&ks, &[genre()]).unwrap(),
        KeySet {
            keys: vec![vec![Value::Int64(3)]],
            ..KeySet::default()
        }
    );
    let bytes = singer_info(Some(1), None, Some(3));
    let text = base64::engine::general_purpose::STANDARD.encode(&bytes);
    let ms = vec![op(Operation::Insert(write(
        "Singers",
        &["G", "Info", "Genres"],
        vec![vec![s("3"), s(&text), list(vec![s("0"), null()])]],
    )))];
    assert_eq!(
        mutations_from_proto(&ms, &c).unwrap(),
        vec![Mutation::insert(
            "Singers",
            &["G", "Info", "Genres"],
            vec![vec![
                Value::Int64(3),
                Value::Bytes(bytes),
                Value::Array(vec![Value::Int64(0), Value::Null]),
            ]],
        )]
    );
}
