//! How values compare: ORDER BY's total order and SQL's `=`/`<`.
//!
//! Two orders exist because NaN and NULL behave differently in each:
//!
//! * [`compare`] is ORDER BY's total order: NULL sorts first, then NaN, then
//!   `-inf` and the other numbers; NaN equals NaN. It is `None` only for
//!   values that cannot be ordered at all (JSON, mismatched types).
//! * The comparison operators (`sql_compare`) follow three-valued logic: a
//!   NULL operand gives NULL, and any comparison with NaN is false (`!=` is
//!   true).
//!
//! `INT64`, `NUMERIC`, `FLOAT32` and `FLOAT64` compare with each other by
//! numeric value, exactly where possible.

use std::cmp::Ordering;

use rowtree_types::{Numeric, Value};

use crate::operator::CmpOp;

/// SQL ordering used by ORDER BY: NULL first, NaN before `-inf`.
pub fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    use Value::*;
    Some(match (a, b) {
        (Null, Null) => Ordering::Equal,
        (Null, _) => Ordering::Less,
        (_, Null) => Ordering::Greater,
        (Bool(x), Bool(y)) => x.cmp(y),
        (Int64(x), Int64(y)) => x.cmp(y),
        (Numeric(x), Numeric(y)) => x.cmp(y),
        (String(x), String(y)) => x.cmp(y),
        (Bytes(x), Bytes(y)) => x.cmp(y),
        (Date(x), Date(y)) => x.cmp(y),
        (Timestamp(x), Timestamp(y)) => x.cmp(y),
        // As unsigned 128-bit numbers: the order of the canonical text.
        (Uuid(x), Uuid(y)) => x.cmp(y),
        (Int64(x), Numeric(y)) => rowtree_types::Numeric::from_i64(*x).cmp(y),
        (Numeric(x), Int64(y)) => x.cmp(&rowtree_types::Numeric::from_i64(*y)),
        (Array(x), Array(y)) | (Struct(x), Struct(y)) => {
            for (p, q) in x.iter().zip(y) {
                match compare(p, q)? {
                    Ordering::Equal => continue,
                    other => return Some(other),
                }
            }
            x.len().cmp(&y.len())
        }
        _ => {
            let (x, y) = (as_float(a)?, as_float(b)?);
            // Integers beyond 2^53 lose precision as floats; compare those
            // exactly when the float is finite and in range.
            if let Int64(i) = a {
                if let Some(o) = cmp_int_float(*i, y) {
                    return Some(o);
                }
            }
            if let Int64(i) = b {
                if let Some(o) = cmp_int_float(*i, x) {
                    return Some(o.reverse());
                }
            }
            total_float_cmp(x, y)
        }
    })
}

/// The comparison operators' result: `None` for NULL (unknown).
pub(crate) fn sql_compare(op: CmpOp, a: &Value, b: &Value) -> Option<bool> {
    if a.is_null() || b.is_null() {
        return None;
    }
    if is_nan(a) || is_nan(b) {
        return Some(op == CmpOp::NotEq);
    }
    if let (Value::Array(x), Value::Array(y)) = (a, b) {
        // Arrays only support equality; element NULLs make it unknown.
        let eq = array_equal(x, y)?;
        return Some(if op == CmpOp::NotEq { !eq } else { eq });
    }
    let ord = compare(a, b)?;
    Some(match op {
        CmpOp::Eq => ord == Ordering::Equal,
        CmpOp::NotEq => ord != Ordering::Equal,
        CmpOp::Lt => ord == Ordering::Less,
        CmpOp::LtEq => ord != Ordering::Greater,
        CmpOp::Gt => ord == Ordering::Greater,
        CmpOp::GtEq => ord != Ordering::Less,
    })
}

fn array_equal(x: &[Value], y: &[Value]) -> Option<bool> {
    if x.len() != y.len() {
        return Some(false);
    }
    let mut unknown = false;
    for (p, q) in x.iter().zip(y) {
        match sql_compare(CmpOp::Eq, p, q) {
            Some(false) => return Some(false),
            None => unknown = true,
            Some(true) => {}
        }
    }
    (!unknown).then_some(true)
}

fn is_nan(v: &Value) -> bool {
    match v {
        Value::Float64(f) => f.is_nan(),
        Value::Float32(f) => f.is_nan(),
        _ => false,
    }
}

fn as_float(v: &Value) -> Option<f64> {
    match v {
        Value::Int64(i) => Some(*i as f64),
        Value::Float32(f) => Some(*f as f64),
        Value::Float64(f) => Some(*f),
        Value::Numeric(n) => Some(Numeric::to_f64(*n)),
        _ => None,
    }
}

/// Exact comparison of an integer with a float; `None` for NaN (which the
/// caller orders first).
fn cmp_int_float(i: i64, f: f64) -> Option<Ordering> {
    const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
    if f.is_nan() {
        return None;
    }
    if f >= TWO_POW_63 {
        return Some(Ordering::Less);
    }
    if f < -TWO_POW_63 {
        return Some(Ordering::Greater);
    }
    // Now -2^63 <= f < 2^63, so floor(f) converts exactly.
    let floor = f.floor();
    match i.cmp(&(floor as i64)) {
        Ordering::Equal if f > floor => Some(Ordering::Less),
        other => Some(other),
    }
}

/// NaN first (and equal to itself), then the usual order; -0 equals 0.
fn total_float_cmp(x: f64, y: f64) -> Ordering {
    match (x.is_nan(), y.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        (false, false) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
    }
}
