//! The non-evaluation API: tree metadata, bind options, coercion, ordering.

use std::cmp::Ordering;

use rowtree_expr::{bind, cast, coerce_value, compare, BindOptions, BoundExpr, Error, Scope};
use rowtree_parser::ast::Ident;
use rowtree_types::{Date, Numeric, TimeZone, Timestamp, Type, Value};

/// Columns `a` (slot 3, INT64) and `b` (slot 1, STRING).
struct Columns;

impl Scope for Columns {
    fn resolve(&self, path: &[Ident]) -> Option<(usize, Type)> {
        match path {
            [c] if c.matches("a") => Some((3, Type::Int64)),
            [c] if c.matches("b") => Some((1, Type::String)),
            _ => None,
        }
    }
}

fn bound(text: &str, options: &BindOptions) -> Result<BoundExpr, Error> {
    bind(
        &rowtree_parser::parse_expr(text).expect(text),
        &Columns,
        options,
    )
}

fn ok(text: &str) -> BoundExpr {
    bound(text, &BindOptions::default()).unwrap_or_else(|e| panic!("{text}: {e}"))
}

#[test]
fn metadata() {
    let e = ok("CONCAT(b, CAST(a + a AS STRING), b)");
    assert_eq!(e.ty(), &Type::String);
    assert_eq!(e.columns(), vec![1, 3]);
    assert!(e.is_deterministic());
    assert!(e.sequences().is_empty());

    let e = ok("BIT_REVERSE(GET_NEXT_SEQUENCE_VALUE(SEQUENCE Orders), true) + GET_INTERNAL_SEQUENCE_STATE(SEQUENCE orders)");
    assert_eq!(e.sequences(), vec!["Orders".to_string()]);
    assert!(!e.is_deterministic());

    for volatile in [
        "GENERATE_UUID()",
        "CURRENT_TIMESTAMP()",
        "PENDING_COMMIT_TIMESTAMP()",
    ] {
        assert!(!ok(volatile).is_deterministic(), "{volatile}");
    }
    assert!(
        ok("IFNULL(CAST(NULL AS TIMESTAMP), PENDING_COMMIT_TIMESTAMP())")
            .uses_pending_commit_timestamp()
    );
    assert!(!ok("CURRENT_TIMESTAMP()").uses_pending_commit_timestamp());
    assert_eq!(ok("MOD(FARM_FINGERPRINT(b), 2048)").ty(), &Type::Int64);
}

#[test]
fn options_restrict_functions() {
    let options = BindOptions {
        allow_sequence_functions: false,
        allow_pending_commit_timestamp: false,
        ..BindOptions::default()
    };
    for refused in [
        "GET_NEXT_SEQUENCE_VALUE(SEQUENCE s)",
        "PENDING_COMMIT_TIMESTAMP()",
    ] {
        let err = bound(refused, &options).unwrap_err();
        assert!(err.message().contains("is not allowed"), "{refused}: {err}");
    }
    // Reading the state does not advance the sequence, so it stays allowed.
    assert!(bound("GET_INTERNAL_SEQUENCE_STATE(SEQUENCE s)", &options).is_ok());
}

#[test]
fn errors_carry_spans() {
    let err = bound("a + nope", &BindOptions::default()).unwrap_err();
    assert_eq!(err.message(), "Unrecognized name: nope");
    let span = err.span().expect("span");
    assert_eq!((span.start, span.end), (4, 8));
}

#[test]
fn assignment_coercion() {
    let num = |s: &str| Value::Numeric(Numeric::parse(s).unwrap());
    assert_eq!(
        coerce_value(Value::Int64(2), &Type::Float64).unwrap(),
        Value::Float64(2.0)
    );
    assert_eq!(
        coerce_value(Value::Int64(2), &Type::Numeric).unwrap(),
        num("2")
    );
    assert_eq!(
        coerce_value(num("1.5"), &Type::Float64).unwrap(),
        Value::Float64(1.5)
    );
    assert_eq!(coerce_value(Value::Null, &Type::Date).unwrap(), Value::Null);
    assert_eq!(
        coerce_value(Value::from("2024-02-29"), &Type::Date).unwrap(),
        Value::Date(Date::parse("2024-02-29").unwrap())
    );
    assert_eq!(
        coerce_value(Value::from("2016-01-25T15:10:10Z"), &Type::Timestamp).unwrap(),
        Value::Timestamp(Timestamp::parse("2016-01-25T15:10:10Z", &TimeZone::UTC).unwrap())
    );
    assert_eq!(
        coerce_value(
            Value::Array(vec![Value::Int64(1)]),
            &Type::Array(Box::new(Type::Float64))
        )
        .unwrap(),
        Value::Array(vec![Value::Float64(1.0)])
    );
    // Narrowing and unrelated types are refused.
    for (v, t) in [
        (Value::Float64(1.0), Type::Int64),
        (Value::Bool(true), Type::Date),
        (Value::from("1"), Type::Int64),
        (num("1"), Type::Int64),
    ] {
        let err = coerce_value(v.clone(), &t).unwrap_err();
        assert!(
            matches!(err, Error::InvalidArgument { .. }),
            "{v:?} -> {t}: {err}"
        );
    }
    assert!(coerce_value(Value::from("2024-02-30"), &Type::Date).is_err());
}

#[test]
fn cast_function() {
    assert_eq!(
        cast(Value::Int64(7), &Type::String).unwrap(),
        Value::from("7")
    );
    assert_eq!(
        cast(Value::Bool(true), &Type::Date).unwrap_err().message(),
        "Invalid cast from BOOL to DATE"
    );
}

#[test]
fn order_by_ordering() {
    let mut values = [
        Value::Float64(1.5),
        Value::Int64(1),
        Value::Float64(f64::NEG_INFINITY),
        Value::Null,
        Value::Float64(f64::NAN),
        Value::Int64(-3),
        Value::Numeric(Numeric::parse("1.25").unwrap()),
    ];
    values.sort_by(|a, b| compare(a, b).unwrap_or(Ordering::Equal));
    let printed: Vec<String> = values.iter().map(Value::sql_literal).collect();
    assert_eq!(
        printed,
        [
            "NULL",
            "CAST(\"nan\" AS FLOAT64)",
            "CAST(\"-inf\" AS FLOAT64)",
            "-3",
            "1",
            "NUMERIC \"1.25\"",
            "1.5"
        ]
    );
    assert_eq!(
        compare(&Value::Float64(f64::NAN), &Value::Float64(f64::NAN)),
        Some(Ordering::Equal)
    );
    assert_eq!(
        compare(&Value::Float64(-0.0), &Value::Float64(0.0)),
        Some(Ordering::Equal)
    );
    assert_eq!(
        compare(
            &Value::Int64(i64::MAX),
            &Value::Float64(9_223_372_036_854_775_808.0)
        ),
        Some(Ordering::Less)
    );
    assert_eq!(compare(&Value::from("a"), &Value::Int64(1)), None);
    assert_eq!(
        compare(
            &Value::Json(serde_json::json!(1)),
            &Value::Json(serde_json::json!(1))
        ),
        None
    );
}
