//! `types.rs` and `results.rs`: types both ways, rows and metadata.

use super::*;
use pb::TypeAnnotationCode;
use pb::TypeCode;

use rowtree_types::Dialect;

use crate::convert::{metadata, row_to_proto, type_from_proto, type_to_proto, type_to_proto_in};

#[test]
fn types_round_trip() {
    for t in all_types() {
        let p = type_to_proto(&t);
        assert_eq!(type_from_proto(&p).unwrap(), t, "{t}");
    }
    let p = type_to_proto(&Type::Array(Box::new(Type::Numeric)));
    assert_eq!(p.code, TypeCode::Array as i32);
    assert_eq!(p.array_element_type.unwrap().code, TypeCode::Numeric as i32);
    let p = type_to_proto(&Type::Struct(vec![("f".into(), Type::Json)]));
    let fields = p.struct_type.unwrap().fields;
    assert_eq!(fields[0].name, "f");
    assert_eq!(
        fields[0].r#type.as_ref().unwrap().code,
        TypeCode::Json as i32
    );
    assert_eq!(fields[0].r#type.as_ref().unwrap().type_annotation, 0);
}

#[test]
fn unsupported_types() {
    let code = |c: TypeCode| pb::Type {
        code: c as i32,
        ..Default::default()
    };
    let err = type_from_proto(&code(TypeCode::Unspecified)).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    // PROTO and ENUM are supported (tests/proto.rs); INTERVAL is not.
    let err = type_from_proto(&code(TypeCode::Interval)).unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented);
    assert!(
        err.message().starts_with("Unsupported type"),
        "{}",
        err.message()
    );
    // A PostgreSQL annotation on another type's code.
    for (a, c) in [
        (TypeAnnotationCode::PgNumeric, TypeCode::String),
        (TypeAnnotationCode::PgJsonb, TypeCode::Numeric),
        (TypeAnnotationCode::PgOid, TypeCode::String),
    ] {
        let t = pb::Type {
            type_annotation: a as i32,
            ..code(c)
        };
        assert_eq!(
            type_from_proto(&t).unwrap_err().code(),
            Code::InvalidArgument
        );
    }
    let unknown = pb::Type {
        code: 99,
        ..Default::default()
    };
    assert_eq!(
        type_from_proto(&unknown).unwrap_err().code(),
        Code::InvalidArgument
    );
    // ARRAY without an element type, ARRAY<ARRAY<..>>, STRUCT without fields info.
    assert_eq!(
        type_from_proto(&code(TypeCode::Array)).unwrap_err().code(),
        Code::InvalidArgument
    );
    let nested = pb::Type {
        array_element_type: Some(Box::new(type_to_proto(&Type::Array(Box::new(Type::Int64))))),
        ..code(TypeCode::Array)
    };
    assert_eq!(
        type_from_proto(&nested).unwrap_err().code(),
        Code::InvalidArgument
    );
    assert_eq!(
        type_from_proto(&code(TypeCode::Struct)).unwrap_err().code(),
        Code::InvalidArgument
    );
}

#[test]
fn rows_and_metadata() {
    let columns = vec![
        ("Id".to_string(), Type::Int64),
        ("Tags".to_string(), Type::Array(Box::new(Type::String))),
        ("Score".to_string(), Type::Float64),
    ];
    let row = vec![
        Value::Int64(7),
        Value::Array(vec![Value::String("a".into()), Value::Null]),
        Value::Null,
    ];
    assert_eq!(
        row_to_proto(&row, &columns),
        vec![s("7"), list(vec![s("a"), null()]), null()]
    );
    let md = metadata(&columns, Dialect::GoogleSql);
    assert!(md.transaction.is_none() && md.undeclared_parameters.is_none());
    let fields = md.row_type.unwrap().fields;
    let got: Vec<(String, Type)> = fields
        .iter()
        .map(|f| {
            (
                f.name.clone(),
                type_from_proto(f.r#type.as_ref().unwrap()).unwrap(),
            )
        })
        .collect();
    assert_eq!(got, columns);
}

#[test]
fn postgresql_annotations() {
    let annotated = |c: TypeCode, a: TypeAnnotationCode| pb::Type {
        code: c as i32,
        type_annotation: a as i32,
        ..Default::default()
    };
    // Accepted on parameters, each on its own code.
    for (t, want) in [
        (
            annotated(TypeCode::Numeric, TypeAnnotationCode::PgNumeric),
            Type::Numeric,
        ),
        (
            annotated(TypeCode::Json, TypeAnnotationCode::PgJsonb),
            Type::Json,
        ),
        (
            annotated(TypeCode::Int64, TypeAnnotationCode::PgOid),
            Type::Int64,
        ),
    ] {
        assert_eq!(type_from_proto(&t).unwrap(), want);
    }
    // Written on the row types of a PostgreSQL database only, arrays and
    // struct fields included.
    let t = Type::Struct(vec![
        ("n".into(), Type::Array(Box::new(Type::Numeric))),
        ("j".into(), Type::Json),
        ("i".into(), Type::Int64),
    ]);
    let google = type_to_proto_in(&t, Dialect::GoogleSql);
    assert_eq!(google, type_to_proto(&t));
    let pg = type_to_proto_in(&t, Dialect::PostgreSql);
    let fields = pg.struct_type.as_ref().unwrap().fields.clone();
    let ann = |i: usize| fields[i].r#type.as_ref().unwrap();
    assert_eq!(
        ann(0).array_element_type.as_ref().unwrap().type_annotation,
        TypeAnnotationCode::PgNumeric as i32
    );
    assert_eq!(ann(0).type_annotation, 0);
    assert_eq!(ann(1).type_annotation, TypeAnnotationCode::PgJsonb as i32);
    assert_eq!(ann(2).type_annotation, 0);
    assert_eq!(type_from_proto(&pg).unwrap(), t);
    let md = metadata(&[("n".to_string(), Type::Numeric)], Dialect::PostgreSql);
    assert_eq!(
        md.row_type.unwrap().fields[0]
            .r#type
            .as_ref()
            .unwrap()
            .type_annotation,
        TypeAnnotationCode::PgNumeric as i32
    );
}
