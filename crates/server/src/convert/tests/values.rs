//! `values.rs`: round trips, the canonical wire forms, what is accepted
//! leniently and what is refused.

use super::*;
use prost_types::Struct;

use crate::convert::{value_to_proto, COMMIT_TIMESTAMP_PLACEHOLDER};

#[test]
fn values_round_trip() {
    for (t, v) in samples() {
        let wire = value_to_proto(&v, &t);
        let back = value_from_proto(&wire, &t).unwrap_or_else(|e| panic!("{t} {v:?}: {e}"));
        assert_eq!(back, v, "{t}: {wire:?}");
    }
    // NaN != NaN, so check it separately.
    for t in [Type::Float64, Type::Float32] {
        let v = if t == Type::Float64 {
            Value::Float64(f64::NAN)
        } else {
            Value::Float32(f32::NAN)
        };
        let wire = value_to_proto(&v, &t);
        assert_eq!(wire, s("NaN"));
        match value_from_proto(&wire, &t).unwrap() {
            Value::Float64(f) => assert!(f.is_nan()),
            Value::Float32(f) => assert!(f.is_nan()),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn wire_forms_follow_spanner() {
    let enc = |v: Value, t: Type| value_to_proto(&v, &t);
    assert_eq!(enc(Value::Null, Type::Int64), null());
    assert_eq!(
        enc(Value::Int64(9007199254740993), Type::Int64),
        s("9007199254740993")
    );
    assert_eq!(enc(Value::Float64(1.5), Type::Float64), n(1.5));
    assert_eq!(
        enc(Value::Float64(f64::INFINITY), Type::Float64),
        s("Infinity")
    );
    assert_eq!(
        enc(Value::Float64(f64::NEG_INFINITY), Type::Float64),
        s("-Infinity")
    );
    assert_eq!(enc(Value::Float32(1.5), Type::Float32), n(1.5));
    assert_eq!(enc(Value::Int64(2), Type::Float64), n(2.0));
    assert_eq!(
        enc(Value::Numeric(Numeric::MAX), Type::Numeric),
        s("99999999999999999999999999999.999999999")
    );
    assert_eq!(enc(Value::Numeric(num("1.50")), Type::Numeric), s("1.5"));
    assert_eq!(enc(Value::Bytes(b"hi".to_vec()), Type::Bytes), s("aGk="));
    assert_eq!(
        enc(Value::Date(date("2024-2-9")), Type::Date),
        s("2024-02-09")
    );
    assert_eq!(
        enc(Value::Timestamp(Timestamp::MAX), Type::Timestamp),
        s("9999-12-31T23:59:59.999999999Z")
    );
    assert_eq!(
        enc(Value::Timestamp(Timestamp::MIN), Type::Timestamp),
        s("0001-01-01T00:00:00Z")
    );
    assert_eq!(
        enc(
            Value::Timestamp(ts("2016-01-25T15:10:10.500Z")),
            Type::Timestamp
        ),
        s("2016-01-25T15:10:10.5Z")
    );
    assert_eq!(
        enc(Value::Timestamp(Timestamp::PENDING_COMMIT), Type::Timestamp),
        s(COMMIT_TIMESTAMP_PLACEHOLDER)
    );
    assert_eq!(
        enc(
            Value::Json(parse_json(r#"{"b":1, "a":[true, null]}"#).unwrap()),
            Type::Json
        ),
        s(r#"{"a":[true,null],"b":1}"#)
    );
    assert_eq!(
        enc(
            Value::Array(vec![Value::Int64(1), Value::Null]),
            Type::Array(Box::new(Type::Int64))
        ),
        list(vec![s("1"), null()])
    );
    assert_eq!(
        enc(
            Value::Struct(vec![Value::Int64(1), Value::String("x".into())]),
            Type::Struct(vec![("a".into(), Type::Int64), ("b".into(), Type::String)])
        ),
        list(vec![s("1"), s("x")])
    );
}

#[test]
fn lenient_inputs() {
    let dec = |v: prost_types::Value, t: Type| value_from_proto(&v, &t).unwrap();
    assert_eq!(dec(n(3.0), Type::Int64), Value::Int64(3));
    assert_eq!(dec(n(i64::MIN as f64), Type::Int64), Value::Int64(i64::MIN));
    assert_eq!(
        dec(s("-Infinity"), Type::Float32),
        Value::Float32(f32::NEG_INFINITY)
    );
    assert_eq!(dec(n(0.1), Type::Float32), Value::Float32(0.1));
    assert_eq!(
        dec(s("2016-01-25T10:10:10.5-05:00"), Type::Timestamp),
        Value::Timestamp(ts("2016-01-25T15:10:10.5Z"))
    );
    assert_eq!(
        dec(s("2016-01-25t15:10:10z"), Type::Timestamp),
        Value::Timestamp(ts("2016-01-25T15:10:10Z"))
    );
    assert_eq!(
        dec(s(COMMIT_TIMESTAMP_PLACEHOLDER), Type::Timestamp),
        Value::Timestamp(Timestamp::PENDING_COMMIT)
    );
    assert_eq!(
        dec(s("9999-12-31T23:59:59.999999999Z"), Type::Timestamp),
        Value::Timestamp(Timestamp::MAX)
    );
    assert_eq!(
        dec(s("0001-01-01T00:00:00Z"), Type::Timestamp),
        Value::Timestamp(Timestamp::MIN)
    );
    assert_eq!(dec(s("aGk"), Type::Bytes), Value::Bytes(b"hi".to_vec()));
    assert_eq!(
        dec(s("1e-9"), Type::Numeric),
        Value::Numeric(num("0.000000001"))
    );
    assert_eq!(dec(s("+1.5E2"), Type::Numeric), Value::Numeric(num("150")));
    // Exact only: trailing zeros past the ninth decimal are fine, a nonzero
    // digit there is refused rather than rounded.
    assert_eq!(
        dec(s("1.50000000000"), Type::Numeric),
        Value::Numeric(num("1.5"))
    );
    assert_eq!(
        dec(s("-99999999999999999999999999999.999999999"), Type::Numeric),
        Value::Numeric(Numeric::MIN)
    );
    assert_eq!(
        dec(s(r#"{"a": 1, "a": 2}"#), Type::Json),
        Value::Json(parse_json(r#"{"a":1}"#).unwrap())
    );
}

#[test]
fn bad_inputs() {
    decode_err(&s("abc"), &Type::Int64, &["\"abc\"", "INT64"]);
    decode_err(&s("1.0"), &Type::Int64, &["INT64"]);
    decode_err(&s("9223372036854775808"), &Type::Int64, &["INT64"]);
    decode_err(&n(3.5), &Type::Int64, &["INT64"]);
    decode_err(&n(1e19), &Type::Int64, &["INT64"]);
    decode_err(&b(true), &Type::Int64, &["true", "INT64"]);
    decode_err(&s("1.5"), &Type::Float64, &["FLOAT64", "'NaN'"]);
    decode_err(&s("nan"), &Type::Float64, &["FLOAT64"]);
    decode_err(&n(1e39), &Type::Float32, &["FLOAT32", "out of range"]);
    decode_err(&n(1.0), &Type::String, &["STRING"]);
    decode_err(&s("true"), &Type::Bool, &["BOOL"]);
    decode_err(&s("1e29"), &Type::Numeric, &["NUMERIC"]);
    decode_err(
        &s("100000000000000000000000000000"),
        &Type::Numeric,
        &["NUMERIC"],
    );
    decode_err(&s("1.2.3"), &Type::Numeric, &["NUMERIC"]);
    decode_err(
        &s("3.1415926535"),
        &Type::Numeric,
        &[
            "\"3.1415926535\" as NUMERIC",
            "38 digits of precision and 9 digits of scale",
        ],
    );
    decode_err(&s("1.0000000005"), &Type::Numeric, &["NUMERIC"]);
    decode_err(&n(1.5), &Type::Numeric, &["NUMERIC"]);
    decode_err(&s("!!"), &Type::Bytes, &["BYTES", "base64"]);
    decode_err(&s("2024-02-30"), &Type::Date, &["DATE"]);
    decode_err(&s("10000-01-01"), &Type::Date, &["DATE"]);
    decode_err(&s("2016-01-25 15:10:10Z"), &Type::Timestamp, &["TIMESTAMP"]);
    decode_err(&s("2016-01-25T15:10:10"), &Type::Timestamp, &["TIMESTAMP"]);
    decode_err(&s("2016-01-25"), &Type::Timestamp, &["TIMESTAMP"]);
    decode_err(
        &s("2016-01-25T15:10:10.1234567891Z"),
        &Type::Timestamp,
        &["TIMESTAMP"],
    );
    decode_err(&s("2016-01-25T25:10:10Z"), &Type::Timestamp, &["TIMESTAMP"]);
    decode_err(
        &s("9999-12-31T23:59:59-01:00"),
        &Type::Timestamp,
        &["TIMESTAMP", "range"],
    );
    decode_err(
        &s("0001-01-01T00:00:00+01:00"),
        &Type::Timestamp,
        &["TIMESTAMP", "range"],
    );
    decode_err(&s("{"), &Type::Json, &["JSON"]);
    decode_err(&s("1e400"), &Type::Json, &["JSON"]);
    decode_err(
        &s("[1]"),
        &Type::Array(Box::new(Type::Int64)),
        &["ARRAY<INT64>"],
    );
    decode_err(
        &list(vec![s("1"), s("x")]),
        &Type::Array(Box::new(Type::Int64)),
        &["\"x\"", "INT64", "array element 1"],
    );
    let st = Type::Struct(vec![("a".into(), Type::Int64), ("b".into(), Type::Bool)]);
    decode_err(&list(vec![s("1")]), &st, &["expected 2 fields, found 1"]);
    decode_err(
        &list(vec![s("1"), s("no")]),
        &st,
        &["BOOL", "struct field b"],
    );
    decode_err(&prost_types::Value { kind: None }, &Type::Int64, &["empty"]);
    decode_err(
        &kind(Kind::StructValue(Struct::default())),
        &Type::String,
        &["struct_value", "STRING"],
    );
}
