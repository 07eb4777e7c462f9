//! Round trip of the row codec for arbitrary rows, bit-exact for floats.

use proptest::prelude::*;
use rowtree_encoding::{decode_row, encode_row};
use rowtree_types::{Date, Numeric, Timestamp, Uuid, Value};

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::Int64),
        any::<u32>().prop_map(|b| Value::Float32(f32::from_bits(b))),
        any::<u64>().prop_map(|b| Value::Float64(f64::from_bits(b))),
        (Numeric::MIN.scaled()..=Numeric::MAX.scaled())
            .prop_map(|s| Value::Numeric(Numeric::from_scaled(s).unwrap())),
        ".*".prop_map(Value::String),
        prop::collection::vec(any::<u8>(), 0..20).prop_map(Value::Bytes),
        (Date::MIN.days()..=Date::MAX.days())
            .prop_map(|d| Value::Date(Date::from_days(d).unwrap())),
        (Timestamp::MIN.nanos()..=Timestamp::MAX.nanos())
            .prop_map(|n| Value::Timestamp(Timestamp::from_nanos(n).unwrap())),
        prop_oneof![
            Just(serde_json::json!(null)),
            Just(serde_json::json!({"b": [1, 2.5, "x"], "a": {"c": true}})),
            "[a-z]{0,5}".prop_map(serde_json::Value::String),
            any::<i64>().prop_map(|i| serde_json::json!(i)),
        ]
        .prop_map(Value::Json),
        any::<u128>().prop_map(|u| Value::Uuid(Uuid::from_u128(u))),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => scalar(),
        1 => prop::collection::vec(scalar(), 0..5).prop_map(Value::Array),
    ]
}

/// Structural equality with floats compared by their bits (so NaN == NaN when
/// the payload is identical, and -0.0 != +0.0).
fn bit_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Float32(x), Value::Float32(y)) => x.to_bits() == y.to_bits(),
        (Value::Float64(x), Value::Float64(y)) => x.to_bits() == y.to_bits(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| bit_eq(x, y))
        }
        _ => a == b,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn round_trip(cols in prop::collection::vec((any::<u32>(), value()), 0..8)) {
        let bytes = encode_row(cols.iter().map(|(id, v)| (*id, v))).unwrap();
        let back = decode_row(&bytes).unwrap();
        prop_assert_eq!(back.len(), cols.len());
        for ((id, v), (id2, v2)) in cols.iter().zip(&back) {
            prop_assert_eq!(id, id2);
            prop_assert!(bit_eq(v, v2), "{v:?} came back as {v2:?}");
        }
    }

    #[test]
    fn truncation_never_panics(cols in prop::collection::vec((any::<u32>(), value()), 1..4), cut in any::<prop::sample::Index>()) {
        let bytes = encode_row(cols.iter().map(|(id, v)| (*id, v))).unwrap();
        let cut = cut.index(bytes.len());
        // Either an error or a shorter valid row; never a panic.
        let _ = decode_row(&bytes[..cut]);
    }
}
