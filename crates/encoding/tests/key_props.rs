//! Properties of the key codec: every key type round-trips in both directions,
//! and byte order of encodings equals GoogleSQL order, for single columns and
//! for concatenated multi-column keys.

use std::cmp::Ordering;

use proptest::prelude::*;
use rowtree_encoding::{decode_key_value, encode_key_value, encode_object, Direction, ROW_END};
use rowtree_types::{Date, Numeric, Timestamp, Type, Uuid, Value};

fn key_type() -> impl Strategy<Value = Type> {
    prop_oneof![
        Just(Type::Bool),
        Just(Type::Int64),
        Just(Type::Float32),
        Just(Type::Float64),
        Just(Type::Numeric),
        Just(Type::String),
        Just(Type::Bytes),
        Just(Type::Date),
        Just(Type::Timestamp),
        Just(Type::Uuid),
        // An ENUM key is its number.
        Just(Type::Enum("a.b.E".into())),
    ]
}

fn special_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(f64::NAN),
        Just(-f64::NAN),
        Just(f64::from_bits(0x7FF0_0000_0000_0001)),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(0.0),
        Just(-0.0),
        Just(f64::MIN_POSITIVE),
        Just(-f64::MIN_POSITIVE),
        Just(f64::MAX),
        Just(f64::MIN),
        Just(5e-324),
    ]
}

/// A non-NULL value of `ty`, biased towards edge cases.
fn value_of(ty: &Type) -> BoxedStrategy<Value> {
    match ty {
        Type::Bool => any::<bool>().prop_map(Value::Bool).boxed(),
        Type::Int64 | Type::Enum(_) => prop_oneof![
            any::<i64>(),
            Just(i64::MIN),
            Just(i64::MAX),
            Just(0),
            Just(-1),
            -3i64..3
        ]
        .prop_map(Value::Int64)
        .boxed(),
        Type::Float64 => prop_oneof![special_f64(), any::<f64>(), -2.0f64..2.0]
            .prop_map(Value::Float64)
            .boxed(),
        Type::Float32 => prop_oneof![
            special_f64().prop_map(|f| f as f32),
            any::<f32>(),
            -2.0f32..2.0
        ]
        .prop_map(Value::Float32)
        .boxed(),
        Type::Numeric => prop_oneof![
            Numeric::MIN.scaled()..=Numeric::MAX.scaled(),
            -5_000_000_000i128..5_000_000_000,
            Just(Numeric::MIN.scaled()),
            Just(Numeric::MAX.scaled()),
        ]
        .prop_map(|s| Value::Numeric(Numeric::from_scaled(s).unwrap()))
        .boxed(),
        Type::String => prop_oneof![".*", "[a\\x00b]{0,4}", Just("\u{10FFFF}".to_string())]
            .prop_map(Value::String)
            .boxed(),
        Type::Bytes => prop_oneof![
            prop::collection::vec(any::<u8>(), 0..12),
            prop::collection::vec(prop_oneof![Just(0u8), Just(1), Just(0xFF)], 0..5),
        ]
        .prop_map(Value::Bytes)
        .boxed(),
        Type::Date => (Date::MIN.days()..=Date::MAX.days())
            .prop_map(|d| Value::Date(Date::from_days(d).unwrap()))
            .boxed(),
        Type::Timestamp => prop_oneof![
            Timestamp::MIN.nanos()..=Timestamp::MAX.nanos(),
            -3i128..3,
            Just(Timestamp::MIN.nanos()),
            Just(Timestamp::MAX.nanos()),
        ]
        .prop_map(|n| Value::Timestamp(Timestamp::from_nanos(n).unwrap()))
        .boxed(),
        Type::Uuid => prop_oneof![
            any::<u128>(),
            Just(0),
            Just(u128::MAX),
            // Values that differ only in the last byte, or only in the first.
            (0u128..4).prop_map(|b| 0x1234_5678_9abc_def0_1234_5678_9abc_de00 | b),
            (0u128..4).prop_map(|b| (b << 120) | 0xffff),
        ]
        .prop_map(|u| Value::Uuid(Uuid::from_u128(u)))
        .boxed(),
        Type::Json | Type::Array(_) | Type::Struct(_) | Type::Proto(_) => {
            unreachable!("not a key type")
        }
    }
}

/// A value of `ty` or NULL.
fn nullable_of(ty: &Type) -> BoxedStrategy<Value> {
    prop_oneof![1 => Just(Value::Null), 6 => value_of(ty)].boxed()
}

fn direction() -> impl Strategy<Value = Direction> {
    prop_oneof![Just(Direction::Asc), Just(Direction::Desc)]
}

/// GoogleSQL's order on floats in ORDER BY: NaN first, then numbers, with
/// -0.0 equal to +0.0.
fn cmp_float(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        (false, false) => a.partial_cmp(&b).unwrap(),
    }
}

/// The reference order of two values of one key type, NULL first (ASC).
fn sql_cmp(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Null, Value::Null) => Ordering::Equal,
        (Value::Null, _) => Ordering::Less,
        (_, Value::Null) => Ordering::Greater,
        (Value::Bool(a), Value::Bool(b)) => a.cmp(b),
        (Value::Int64(a), Value::Int64(b)) => a.cmp(b),
        (Value::Float32(a), Value::Float32(b)) => cmp_float(*a as f64, *b as f64),
        (Value::Float64(a), Value::Float64(b)) => cmp_float(*a, *b),
        (Value::Numeric(a), Value::Numeric(b)) => a.cmp(b),
        (Value::String(a), Value::String(b)) => a.cmp(b),
        (Value::Bytes(a), Value::Bytes(b)) => a.cmp(b),
        (Value::Date(a), Value::Date(b)) => a.cmp(b),
        (Value::Timestamp(a), Value::Timestamp(b)) => a.cmp(b),
        // GoogleSQL orders UUIDs as it would their canonical lowercase text.
        (Value::Uuid(a), Value::Uuid(b)) => a.to_string().cmp(&b.to_string()),
        _ => panic!("values of different types: {a:?} {b:?}"),
    }
}

fn directed(ord: Ordering, dir: Direction) -> Ordering {
    match dir {
        Direction::Asc => ord,
        Direction::Desc => ord.reverse(),
    }
}

fn encode(v: &Value, dir: Direction) -> Vec<u8> {
    let mut out = Vec::new();
    encode_key_value(&mut out, v, dir).unwrap();
    out
}

/// Equality as the key codec defines it: floats compare by SQL order, so NaN
/// equals NaN and -0.0 equals +0.0.
fn key_eq(a: &Value, b: &Value) -> bool {
    sql_cmp(a, b) == Ordering::Equal
}

fn one_column() -> impl Strategy<Value = (Type, Direction, Value, Value)> {
    (key_type(), direction()).prop_flat_map(|(ty, dir)| {
        let a = nullable_of(&ty);
        let b = nullable_of(&ty);
        (Just(ty), Just(dir), a, b)
    })
}

type Schema = Vec<(Type, Direction)>;

fn multi_column() -> impl Strategy<Value = (Schema, Vec<Value>, Vec<Value>)> {
    prop::collection::vec((key_type(), direction()), 1..4).prop_flat_map(|schema| {
        let row = |schema: &Schema| {
            schema
                .iter()
                .map(|(ty, _)| nullable_of(ty))
                .collect::<Vec<_>>()
        };
        let a = row(&schema);
        let b = row(&schema);
        (Just(schema), a, b)
    })
}

fn encode_row_key(schema: &Schema, values: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    encode_object(&mut out, 7);
    for ((_, dir), v) in schema.iter().zip(values) {
        encode_key_value(&mut out, v, *dir).unwrap();
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn round_trip((ty, dir, a, _b) in one_column(), suffix in prop::collection::vec(any::<u8>(), 0..3)) {
        let mut bytes = encode(&a, dir);
        let first = bytes[0];
        prop_assert!((0x02..=0xFE).contains(&first));
        bytes.extend_from_slice(&suffix);
        let mut input = &bytes[..];
        let back = decode_key_value(&mut input, &ty, dir).unwrap();
        prop_assert!(key_eq(&a, &back), "{a:?} came back as {back:?}");
        prop_assert_eq!(input, &suffix[..], "decoder must stop at the end of the column");
    }

    #[test]
    fn byte_order_is_sql_order((_ty, dir, a, b) in one_column()) {
        let expected = directed(sql_cmp(&a, &b), dir);
        let actual = encode(&a, dir).cmp(&encode(&b, dir));
        prop_assert_eq!(actual, expected, "{:?} vs {:?} ({:?})", a, b, dir);
    }

    #[test]
    fn multi_column_order((schema, a, b) in multi_column()) {
        let expected = schema
            .iter()
            .zip(a.iter().zip(&b))
            .map(|((_, dir), (x, y))| directed(sql_cmp(x, y), *dir))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal);
        let ka = encode_row_key(&schema, &a);
        let kb = encode_row_key(&schema, &b);
        prop_assert_eq!(ka.cmp(&kb), expected);
        // Complete row keys sort in the same order.
        let mut ra = ka.clone();
        ra.push(ROW_END);
        let mut rb = kb.clone();
        rb.push(ROW_END);
        prop_assert_eq!(ra.cmp(&rb), expected);
    }

    #[test]
    fn parent_row_sorts_before_children_and_next_sibling(
        (schema, a, b) in multi_column(),
        child_id in any::<u32>(),
        child_key in any::<i64>(),
    ) {
        // A parent row (prefix ++ ROW_END) < its children (prefix ++ object ++ ..)
        // < any row with a greater key.
        let parent = encode_row_key(&schema, &a);
        let mut parent_row = parent.clone();
        parent_row.push(ROW_END);
        let mut child_row = parent.clone();
        encode_object(&mut child_row, child_id);
        encode_key_value(&mut child_row, &Value::Int64(child_key), Direction::Asc).unwrap();
        child_row.push(ROW_END);
        prop_assert!(parent_row < child_row);
        // Children of `a` sort like `a` relative to another parent `b`.
        let other = encode_row_key(&schema, &b);
        let mut other_row = other.clone();
        other_row.push(ROW_END);
        if parent != other {
            prop_assert_eq!(child_row.cmp(&other_row), parent.cmp(&other));
            prop_assert_eq!(parent_row.cmp(&other_row), parent.cmp(&other));
        }
    }
}
