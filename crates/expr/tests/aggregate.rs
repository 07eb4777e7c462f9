//! Aggregate accumulators and grouping keys.

use std::collections::HashSet;

use rowtree_expr::aggregate::{
    accumulator, aggregate_signature, group_key_eq, AggregateModifiers, GroupKey,
};
use rowtree_expr::Error;
use rowtree_types::{Numeric, Type, Value};

fn int(v: i64) -> Value {
    Value::Int64(v)
}

fn s(v: &str) -> Value {
    Value::String(v.into())
}

fn num(v: &str) -> Value {
    Value::Numeric(Numeric::parse(v).unwrap())
}

/// Runs aggregate `name` over one-argument rows.
fn run(
    name: &str,
    ty: Type,
    distinct: bool,
    modifiers: Option<&AggregateModifiers>,
    rows: &[Value],
) -> Result<Value, Error> {
    let mut acc = accumulator(name, &[ty], distinct, modifiers)?;
    for r in rows {
        acc.update(std::slice::from_ref(r))?;
    }
    acc.finish()
}

fn agg(name: &str, ty: Type, rows: &[Value]) -> Value {
    run(name, ty, false, None, rows).unwrap()
}

#[test]
fn signatures() {
    assert_eq!(
        aggregate_signature("count", &[], false).unwrap(),
        Type::Int64
    );
    assert_eq!(
        aggregate_signature("SUM", &[Type::Int64], false).unwrap(),
        Type::Int64
    );
    assert_eq!(
        aggregate_signature("SUM", &[Type::Float32], false).unwrap(),
        Type::Float64
    );
    assert_eq!(
        aggregate_signature("AVG", &[Type::Int64], false).unwrap(),
        Type::Float64
    );
    assert_eq!(
        aggregate_signature("AVG", &[Type::Numeric], false).unwrap(),
        Type::Numeric
    );
    assert_eq!(
        aggregate_signature("ARRAY_AGG", &[Type::String], false).unwrap(),
        Type::Array(Box::new(Type::String))
    );
    assert_eq!(
        aggregate_signature("STRING_AGG", &[Type::Bytes, Type::Bytes], false).unwrap(),
        Type::Bytes
    );
    assert_eq!(
        aggregate_signature("SUM", &[Type::String], false)
            .unwrap_err()
            .message(),
        "No matching signature for aggregate function SUM for argument types: STRING. Supported signatures: SUM(INT64); SUM(NUMERIC); SUM(FLOAT64)"
    );
    assert!(aggregate_signature("MAX", &[Type::Json], false).is_err());
    assert!(aggregate_signature("COUNT", &[Type::Json], true).is_err());
    assert!(
        aggregate_signature("ARRAY_AGG", &[Type::Array(Box::new(Type::Int64))], false).is_err()
    );
    assert!(aggregate_signature("COUNTIF", &[Type::Int64], false).is_err());
    assert!(aggregate_signature("NOPE", &[Type::Int64], false).is_err());
}

#[test]
fn empty_input() {
    let mut star = accumulator("COUNT", &[], false, None).unwrap();
    assert_eq!(star.finish().unwrap(), int(0));
    assert_eq!(agg("COUNT", Type::Int64, &[]), int(0));
    assert_eq!(agg("COUNTIF", Type::Bool, &[]), int(0));
    for name in [
        "SUM",
        "AVG",
        "MIN",
        "MAX",
        "ANY_VALUE",
        "ARRAY_AGG",
        "BIT_OR",
    ] {
        assert_eq!(agg(name, Type::Int64, &[]), Value::Null, "{name}");
    }
    assert_eq!(agg("STRING_AGG", Type::String, &[]), Value::Null);
    assert_eq!(agg("LOGICAL_AND", Type::Bool, &[]), Value::Null);
    // All-NULL input is like empty input, except for COUNT(*) and ARRAY_AGG.
    assert_eq!(agg("SUM", Type::Int64, &[Value::Null]), Value::Null);
    assert_eq!(agg("COUNT", Type::Int64, &[Value::Null]), int(0));
    let mut star = accumulator("COUNT", &[], false, None).unwrap();
    star.update(&[]).unwrap();
    star.update(&[]).unwrap();
    assert_eq!(star.finish().unwrap(), int(2));
}

#[test]
fn numeric_aggregates() {
    let rows = [int(1), Value::Null, int(2), int(4)];
    assert_eq!(agg("COUNT", Type::Int64, &rows), int(3));
    assert_eq!(agg("SUM", Type::Int64, &rows), int(7));
    assert_eq!(agg("AVG", Type::Int64, &rows), Value::Float64(7.0 / 3.0));
    assert_eq!(agg("MIN", Type::Int64, &rows), int(1));
    assert_eq!(agg("MAX", Type::Int64, &rows), int(4));
    assert_eq!(agg("BIT_OR", Type::Int64, &rows), int(7));
    assert_eq!(agg("BIT_AND", Type::Int64, &rows), int(0));
    assert_eq!(agg("BIT_XOR", Type::Int64, &[int(3), int(5)]), int(6));
    let err = run("SUM", Type::Int64, false, None, &[int(i64::MAX), int(1)]).unwrap_err();
    assert!(matches!(err, Error::OutOfRange { .. }));
    assert_eq!(err.message(), "int64 overflow: 9223372036854775807 + 1");
    // AVG over INT64 does not overflow.
    assert_eq!(
        agg("AVG", Type::Int64, &[int(i64::MAX), int(i64::MAX)]),
        Value::Float64(i64::MAX as f64)
    );
    let floats = [Value::Float64(1.5), Value::Float64(2.5)];
    assert_eq!(agg("SUM", Type::Float64, &floats), Value::Float64(4.0));
    assert_eq!(agg("AVG", Type::Float64, &floats), Value::Float64(2.0));
    let with_nan = [Value::Float64(1.0), Value::Float64(f64::NAN)];
    let Value::Float64(m) = agg("MAX", Type::Float64, &with_nan) else {
        panic!()
    };
    assert!(m.is_nan());
    let Value::Float64(m) = agg("MIN", Type::Float64, &with_nan) else {
        panic!()
    };
    assert!(m.is_nan());
    assert!(run(
        "SUM",
        Type::Float64,
        false,
        None,
        &[Value::Float64(f64::MAX), Value::Float64(f64::MAX)]
    )
    .is_err());
    let nums = [num("1.5"), num("2"), num("0.000000001")];
    assert_eq!(agg("SUM", Type::Numeric, &nums), num("3.500000001"));
    assert_eq!(agg("AVG", Type::Numeric, &[num("1"), num("2")]), num("1.5"));
    assert_eq!(
        agg("AVG", Type::Numeric, &[num("1"), num("0"), num("0")]),
        num("0.333333333")
    );
    assert_eq!(
        agg("AVG", Type::Numeric, &[num("2"), num("0"), num("0")]),
        num("0.666666667")
    );
    let max = num("99999999999999999999999999999.999999999");
    assert!(run(
        "SUM",
        Type::Numeric,
        false,
        None,
        &[max.clone(), max.clone()]
    )
    .is_err());
    assert_eq!(agg("AVG", Type::Numeric, &[max.clone(), max.clone()]), max);
}

#[test]
fn other_aggregates() {
    let strings = [s("b"), Value::Null, s("a"), s("c")];
    assert_eq!(agg("MIN", Type::String, &strings), s("a"));
    assert_eq!(agg("MAX", Type::String, &strings), s("c"));
    assert_eq!(
        agg("ANY_VALUE", Type::String, &[Value::Null, s("x")]),
        s("x")
    );
    assert_eq!(agg("STRING_AGG", Type::String, &strings), s("b,a,c"));
    let mut acc = accumulator("STRING_AGG", &[Type::String, Type::String], false, None).unwrap();
    acc.update(&[s("x"), s(" & ")]).unwrap();
    acc.update(&[s("y"), s(" & ")]).unwrap();
    assert_eq!(acc.finish().unwrap(), s("x & y"));
    assert_eq!(
        agg(
            "STRING_AGG",
            Type::Bytes,
            &[Value::Bytes(b"a".to_vec()), Value::Bytes(b"b".to_vec())]
        ),
        Value::Bytes(b"a,b".to_vec())
    );
    let bools = [
        Value::Bool(true),
        Value::Null,
        Value::Bool(false),
        Value::Bool(true),
    ];
    assert_eq!(agg("COUNTIF", Type::Bool, &bools), int(2));
    assert_eq!(agg("LOGICAL_AND", Type::Bool, &bools), Value::Bool(false));
    assert_eq!(agg("LOGICAL_OR", Type::Bool, &bools), Value::Bool(true));
    // ARRAY_AGG keeps NULL elements (Spanner) unless IGNORE NULLS.
    assert_eq!(
        agg("ARRAY_AGG", Type::Int64, &[int(1), Value::Null, int(2)]),
        Value::Array(vec![int(1), Value::Null, int(2)])
    );
    let ignore = AggregateModifiers {
        ignore_nulls: true,
        ..Default::default()
    };
    assert_eq!(
        run(
            "ARRAY_AGG",
            Type::Int64,
            false,
            Some(&ignore),
            &[int(1), Value::Null, int(2)]
        )
        .unwrap(),
        Value::Array(vec![int(1), int(2)])
    );
    assert_eq!(
        run(
            "ARRAY_AGG",
            Type::Int64,
            false,
            Some(&ignore),
            &[Value::Null]
        )
        .unwrap(),
        Value::Null
    );
    let arrays = [
        Value::Array(vec![int(1)]),
        Value::Null,
        Value::Array(vec![int(2), int(3)]),
    ];
    assert_eq!(
        agg(
            "ARRAY_CONCAT_AGG",
            Type::Array(Box::new(Type::Int64)),
            &arrays
        ),
        Value::Array(vec![int(1), int(2), int(3)])
    );
}

#[test]
fn distinct() {
    let rows = [int(1), int(2), int(1), Value::Null, int(2), int(3)];
    assert_eq!(
        run("COUNT", Type::Int64, true, None, &rows).unwrap(),
        int(3)
    );
    assert_eq!(run("SUM", Type::Int64, true, None, &rows).unwrap(), int(6));
    let floats = [
        Value::Float64(f64::NAN),
        Value::Float64(f64::NAN),
        Value::Float64(0.0),
        Value::Float64(-0.0),
    ];
    assert_eq!(
        run("COUNT", Type::Float64, true, None, &floats).unwrap(),
        int(2)
    );
    let order = AggregateModifiers {
        order_by: vec![(false, None)],
        ..Default::default()
    };
    // DISTINCT with ORDER BY the argument itself: keys appended.
    let mut acc = accumulator("ARRAY_AGG", &[Type::Int64], true, Some(&order)).unwrap();
    for v in [3, 1, 3, 2, 1] {
        acc.update(&[int(v), int(v)]).unwrap();
    }
    assert_eq!(
        acc.finish().unwrap(),
        Value::Array(vec![int(1), int(2), int(3)])
    );
    assert!(accumulator("COUNT", &[], true, None).is_err());
}

#[test]
fn order_by_and_limit() {
    // ARRAY_AGG(name ORDER BY score DESC NULLS LAST, name LIMIT 3)
    let modifiers = AggregateModifiers {
        ignore_nulls: false,
        order_by: vec![(true, Some(false)), (false, None)],
        limit: Some(3),
    };
    let mut acc = accumulator("ARRAY_AGG", &[Type::String], false, Some(&modifiers)).unwrap();
    let rows = [
        ("a", Value::Null),
        ("b", int(5)),
        ("c", int(9)),
        ("d", int(5)),
        ("e", int(1)),
    ];
    for (name, score) in rows {
        acc.update(&[s(name), score, s(name)]).unwrap();
    }
    assert_eq!(
        acc.finish().unwrap(),
        Value::Array(vec![s("c"), s("b"), s("d")])
    );
    // Default NULL placement: first ascending, last descending.
    let asc = AggregateModifiers {
        order_by: vec![(false, None)],
        ..Default::default()
    };
    let mut acc = accumulator(
        "STRING_AGG",
        &[Type::String, Type::String],
        false,
        Some(&asc),
    )
    .unwrap();
    for (v, k) in [("x", int(2)), ("y", Value::Null), ("z", int(1))] {
        acc.update(&[s(v), s("-"), k]).unwrap();
    }
    assert_eq!(acc.finish().unwrap(), s("y-z-x"));
    let desc = AggregateModifiers {
        order_by: vec![(true, None)],
        ..Default::default()
    };
    let mut acc = accumulator("ARRAY_AGG", &[Type::Int64], false, Some(&desc)).unwrap();
    for v in [Value::Null, int(1), int(2)] {
        acc.update(&[v.clone(), v]).unwrap();
    }
    assert_eq!(
        acc.finish().unwrap(),
        Value::Array(vec![int(2), int(1), Value::Null])
    );
    // LIMIT without ORDER BY keeps the first rows.
    let limit = AggregateModifiers {
        limit: Some(2),
        ..Default::default()
    };
    assert_eq!(
        run(
            "ARRAY_AGG",
            Type::Int64,
            false,
            Some(&limit),
            &[int(7), int(8), int(9)]
        )
        .unwrap(),
        Value::Array(vec![int(7), int(8)])
    );
    let zero = AggregateModifiers {
        limit: Some(0),
        ..Default::default()
    };
    assert_eq!(
        run("ARRAY_AGG", Type::Int64, false, Some(&zero), &[int(7)]).unwrap(),
        Value::Null
    );
}

#[test]
fn group_keys() {
    let set: HashSet<GroupKey> = [
        Value::Null,
        Value::Null,
        Value::Float64(f64::NAN),
        Value::Float64(-f64::NAN),
        Value::Float64(0.0),
        Value::Float64(-0.0),
        Value::Float64(1.0),
    ]
    .into_iter()
    .map(GroupKey)
    .collect();
    assert_eq!(set.len(), 4);
    assert!(group_key_eq(&Value::Null, &Value::Null));
    assert!(!group_key_eq(&Value::Null, &int(0)));
    assert!(group_key_eq(
        &Value::Struct(vec![Value::Float64(-0.0), Value::Null]),
        &Value::Struct(vec![Value::Float64(0.0), Value::Null])
    ));
    let multi: HashSet<GroupKey> = [
        vec![int(1), s("a")],
        vec![int(1), s("a")],
        vec![int(1), Value::Null],
        vec![int(1), Value::Null],
    ]
    .into_iter()
    .map(GroupKey::from_values)
    .collect();
    assert_eq!(multi.len(), 2);
}
