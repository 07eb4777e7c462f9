//! Unit tests of the wire conversions, one file per file of `convert/`,
//! and the helpers they share: short constructors for wire values, sample
//! values of every type, and a small schema (Singers, Albums, two indexes).

mod keys;
mod mutations;
mod params;
mod proto;
mod time;
mod types;
mod uuid;
mod values;

use prost_types::value::Kind;
use prost_types::ListValue;
use rowtree_schema::Catalog;
use rowtree_types::{parse_json, Date, Numeric, TimeZone, Timestamp, Type, Value};
use tonic::Code;

use googleapis_tonic_google_spanner_v1::google::spanner::v1 as pb;
use pb::mutation::Operation;

use crate::convert::value_from_proto;
use crate::convert::values::{kind, null};

fn s(text: &str) -> prost_types::Value {
    kind(Kind::StringValue(text.into()))
}

fn n(v: f64) -> prost_types::Value {
    kind(Kind::NumberValue(v))
}

fn b(v: bool) -> prost_types::Value {
    kind(Kind::BoolValue(v))
}

fn list(values: Vec<prost_types::Value>) -> prost_types::Value {
    kind(Kind::ListValue(ListValue { values }))
}

fn lv(values: Vec<prost_types::Value>) -> ListValue {
    ListValue { values }
}

fn ts(text: &str) -> Timestamp {
    Timestamp::parse(text, &TimeZone::UTC).unwrap()
}

fn num(text: &str) -> Numeric {
    Numeric::parse(text).unwrap()
}

fn date(text: &str) -> Date {
    Date::parse(text).unwrap()
}

/// Decoding `v` as `t` fails with INVALID_ARGUMENT and a message
/// containing every one of `parts`.
fn decode_err(v: &prost_types::Value, t: &Type, parts: &[&str]) {
    let err = value_from_proto(v, t).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{v:?} as {t}: {err:?}");
    for p in parts {
        assert!(err.message().contains(p), "{:?} lacks {p:?}", err.message());
    }
}

fn all_types() -> Vec<Type> {
    vec![
        Type::Bool,
        Type::Int64,
        Type::Float32,
        Type::Float64,
        Type::Numeric,
        Type::String,
        Type::Bytes,
        Type::Date,
        Type::Timestamp,
        Type::Json,
        Type::Uuid,
        Type::Array(Box::new(Type::Int64)),
        Type::Array(Box::new(Type::Struct(vec![
            ("a".into(), Type::String),
            (String::new(), Type::Array(Box::new(Type::Date))),
        ]))),
        Type::Struct(vec![]),
        Type::Struct(vec![
            ("x".into(), Type::Float64),
            ("y".into(), Type::Struct(vec![("z".into(), Type::Bytes)])),
        ]),
    ]
}

/// (type, value) pairs covering every type, their limits and NULLs.
fn samples() -> Vec<(Type, Value)> {
    let mut out = vec![
        (Type::Bool, Value::Bool(true)),
        (Type::Bool, Value::Bool(false)),
        (Type::Int64, Value::Int64(i64::MIN)),
        (Type::Int64, Value::Int64(i64::MAX)),
        (Type::Int64, Value::Int64(0)),
        (Type::Float64, Value::Float64(1.5)),
        (Type::Float64, Value::Float64(-0.0)),
        (Type::Float64, Value::Float64(f64::MAX)),
        (Type::Float64, Value::Float64(f64::MIN_POSITIVE)),
        (Type::Float64, Value::Float64(f64::INFINITY)),
        (Type::Float64, Value::Float64(f64::NEG_INFINITY)),
        (Type::Float32, Value::Float32(0.1)),
        (Type::Float32, Value::Float32(f32::MAX)),
        (Type::Float32, Value::Float32(f32::NEG_INFINITY)),
        (Type::Numeric, Value::Numeric(Numeric::MAX)),
        (Type::Numeric, Value::Numeric(Numeric::MIN)),
        (Type::Numeric, Value::Numeric(Numeric::ZERO)),
        (Type::Numeric, Value::Numeric(num("-0.000000001"))),
        (Type::String, Value::String(String::new())),
        (Type::String, Value::String("héllo, \"wörld\"\n".into())),
        (Type::Bytes, Value::Bytes((0..=255).collect())),
        (Type::Bytes, Value::Bytes(vec![])),
        (Type::Date, Value::Date(Date::MIN)),
        (Type::Date, Value::Date(Date::MAX)),
        (Type::Date, Value::Date(date("2024-02-29"))),
        (Type::Timestamp, Value::Timestamp(Timestamp::MIN)),
        (Type::Timestamp, Value::Timestamp(Timestamp::MAX)),
        (Type::Timestamp, Value::Timestamp(Timestamp::UNIX_EPOCH)),
        (
            Type::Timestamp,
            Value::Timestamp(ts("1969-12-31T23:59:59.999999999Z")),
        ),
        (Type::Timestamp, Value::Timestamp(Timestamp::PENDING_COMMIT)),
        (
            Type::Json,
            Value::Json(parse_json(r#"{"b": [1, 2.5, null, "x"], "a": {"c": true}}"#).unwrap()),
        ),
        (Type::Json, Value::Json(serde_json::Value::Null)),
        (Type::Uuid, Value::Uuid(rowtree_types::Uuid::MIN)),
        (Type::Uuid, Value::Uuid(rowtree_types::Uuid::MAX)),
        (
            Type::Array(Box::new(Type::Uuid)),
            Value::Array(vec![
                Value::Uuid(rowtree_types::Uuid::from_u128(
                    0xf81d4fae_7dec_11d0_a765_00a0c91e6bf6,
                )),
                Value::Null,
            ]),
        ),
        (
            Type::Array(Box::new(Type::Int64)),
            Value::Array(vec![Value::Int64(1), Value::Null, Value::Int64(-3)]),
        ),
        (Type::Array(Box::new(Type::String)), Value::Array(vec![])),
        (
            Type::Array(Box::new(Type::Timestamp)),
            Value::Array(vec![Value::Null, Value::Timestamp(Timestamp::MAX)]),
        ),
        (
            Type::Array(Box::new(Type::Bytes)),
            Value::Array(vec![Value::Bytes(b"hi".to_vec()), Value::Null]),
        ),
        (
            Type::Struct(vec![
                ("a".into(), Type::Int64),
                (String::new(), Type::Array(Box::new(Type::Numeric))),
            ]),
            Value::Struct(vec![
                Value::Null,
                Value::Array(vec![Value::Numeric(num("1.5")), Value::Null]),
            ]),
        ),
        (
            Type::Array(Box::new(Type::Struct(vec![("d".into(), Type::Date)]))),
            Value::Array(vec![
                Value::Struct(vec![Value::Date(date("2000-01-01"))]),
                Value::Null,
            ]),
        ),
    ];
    for t in all_types() {
        out.push((t, Value::Null));
    }
    out
}

fn catalog() -> Catalog {
    let mut c = Catalog::new();
    for ddl in [
        "CREATE TABLE Singers (SingerId INT64 NOT NULL, FirstName STRING(MAX), LastName STRING(1024), \
         Info BYTES(MAX), Updated TIMESTAMP OPTIONS (allow_commit_timestamp = true)) PRIMARY KEY (SingerId)",
        "CREATE TABLE Albums (SingerId INT64 NOT NULL, AlbumId INT64 NOT NULL, Title STRING(MAX), \
         Released DATE, Price NUMERIC, Tags ARRAY<STRING(MAX)>) PRIMARY KEY (SingerId, AlbumId DESC), \
         INTERLEAVE IN PARENT Singers ON DELETE CASCADE",
        "CREATE INDEX AlbumsByTitle ON Albums (Title DESC, SingerId)",
        "CREATE INDEX SingersByName ON Singers (LastName)",
    ] {
        c = c.apply_sql(ddl).expect(ddl).0;
    }
    c
}

fn write(table: &str, columns: &[&str], rows: Vec<Vec<prost_types::Value>>) -> pb::mutation::Write {
    pb::mutation::Write {
        table: table.into(),
        columns: columns.iter().map(|c| c.to_string()).collect(),
        values: rows.into_iter().map(lv).collect(),
    }
}

fn op(o: Operation) -> pb::Mutation {
    pb::Mutation { operation: Some(o) }
}
