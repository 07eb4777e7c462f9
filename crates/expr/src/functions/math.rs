//! Numeric functions over INT64, NUMERIC and FLOAT64: `ABS`, `MOD`, `DIV`,
//! `SIGN`, rounding (`ROUND`, `TRUNC`, `CEIL`, `FLOOR`), `SQRT`, `POW`,
//! `EXP`, logarithms, the `SAFE_` arithmetic that gives NULL instead of an
//! error, and the generic `GREATEST`/`LEAST`.
//!
//! Integer overflow and a finite input giving an infinite FLOAT64 are
//! OUT_OF_RANGE errors, as in GoogleSQL; NaN and infinities given as
//! inputs propagate.

use std::cmp::Ordering;

use rowtree_types::{format_f64, Numeric, Type, Value};

use super::args::{float, float_result, int, internal, oor};
use super::signature::common_type;
use crate::compare::compare;
use crate::{Error, EvalContext, Result};

pub(super) fn eval_mod(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    match (&args[0], &args[1]) {
        (Value::Int64(_), Value::Int64(0)) => Err(Error::out_of_range(format!(
            "division by zero: MOD({}, 0)",
            args[0]
        ))),
        // `i64::MIN % -1` is 0 mathematically; wrapping_rem gives exactly that.
        (Value::Int64(a), Value::Int64(b)) => Ok(Value::Int64(a.wrapping_rem(*b))),
        (Value::Numeric(a), Value::Numeric(b)) => Ok(Value::Numeric(a.checked_rem(*b)?)),
        _ => Err(internal("MOD")),
    }
}

pub(super) fn eval_abs(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    match &args[0] {
        Value::Int64(v) => v
            .checked_abs()
            .map(Value::Int64)
            .ok_or_else(|| Error::out_of_range(format!("int64 overflow: ABS({v})"))),
        Value::Numeric(n) => Ok(Value::Numeric(n.abs())),
        Value::Float64(f) => Ok(Value::Float64(f.abs())),
        _ => Err(internal("ABS")),
    }
}

pub(super) fn eval_sign(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    Ok(match &args[0] {
        Value::Int64(v) => Value::Int64(v.signum()),
        Value::Numeric(n) => Value::Numeric(Numeric::from_i64(n.scaled().signum() as i64)),
        Value::Float64(f) if f.is_nan() => Value::Float64(f64::NAN),
        Value::Float64(f) if *f == 0.0 => Value::Float64(0.0),
        Value::Float64(f) => Value::Float64(f.signum()),
        _ => return Err(internal("SIGN")),
    })
}

pub(super) fn eval_div(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    match (&args[0], &args[1]) {
        (Value::Int64(a), Value::Int64(0)) => Err(oor(format!("division by zero: DIV({a}, 0)"))),
        (Value::Int64(a), Value::Int64(b)) => a
            .checked_div(*b)
            .map(Value::Int64)
            .ok_or_else(|| oor(format!("int64 overflow: DIV({a}, {b})"))),
        (Value::Numeric(a), Value::Numeric(b)) => {
            if b.scaled() == 0 {
                return Err(oor(format!("division by zero: DIV({a}, {b})")));
            }
            let q = a.scaled() / b.scaled();
            Numeric::from_scaled(
                q.checked_mul(Numeric::ONE)
                    .ok_or_else(|| oor("numeric overflow"))?,
            )
            .map(Value::Numeric)
            .ok_or_else(|| oor(format!("numeric overflow: DIV({a}, {b})")))
        }
        _ => Err(internal("DIV")),
    }
}

/// Rounding of ROUND / TRUNC / CEIL / FLOOR to `digits` decimals.
#[derive(Clone, Copy, PartialEq)]
enum Rounding {
    HalfAway,
    Trunc,
    Ceil,
    Floor,
}

fn round_f64(v: f64, digits: i64, mode: Rounding) -> f64 {
    let digits = digits.clamp(-400, 400) as i32;
    let scale = 10f64.powi(digits);
    let scaled = v * scale;
    let r = match mode {
        Rounding::HalfAway => scaled.round(),
        Rounding::Trunc => scaled.trunc(),
        Rounding::Ceil => scaled.ceil(),
        Rounding::Floor => scaled.floor(),
    };
    if !scaled.is_finite() {
        return v;
    }
    r / scale
}

fn round_numeric(n: Numeric, digits: i64, mode: Rounding) -> Result<Numeric> {
    let digits = digits.clamp(-38, 9);
    let unit = 10i128.pow((9 - digits) as u32);
    let s = n.scaled();
    let (q, r) = (s / unit, s % unit);
    let q = match mode {
        Rounding::HalfAway if r.abs() * 2 >= unit => q + s.signum(),
        Rounding::Ceil if r > 0 => q + 1,
        Rounding::Floor if r < 0 => q - 1,
        _ => q,
    };
    q.checked_mul(unit)
        .and_then(Numeric::from_scaled)
        .ok_or_else(|| oor(format!("numeric overflow: ROUND({n}, {digits})")))
}

fn rounder(mode: Rounding, name: &'static str) -> impl Fn(&[Value]) -> Result<Value> {
    move |args: &[Value]| {
        let digits = match args.get(1) {
            Some(d) => int(d)?,
            None => 0,
        };
        match &args[0] {
            Value::Float64(f) => {
                let r = round_f64(*f, digits, mode);
                float_result(name, r, f.is_finite())
            }
            Value::Numeric(n) => Ok(Value::Numeric(round_numeric(*n, digits, mode)?)),
            _ => Err(internal(name)),
        }
    }
}

pub(super) fn eval_round(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    rounder(Rounding::HalfAway, "ROUND")(args)
}
pub(super) fn eval_trunc(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    rounder(Rounding::Trunc, "TRUNC")(args)
}
pub(super) fn eval_ceil(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    rounder(Rounding::Ceil, "CEIL")(args)
}
pub(super) fn eval_floor(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    rounder(Rounding::Floor, "FLOOR")(args)
}

pub(super) fn eval_sqrt(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let x = float(&args[0])?;
    if x < 0.0 {
        return Err(oor(format!(
            "Argument to SQRT cannot be negative: {}",
            format_f64(x)
        )));
    }
    Ok(Value::Float64(x.sqrt()))
}

pub(super) fn eval_pow(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    match (&args[0], &args[1]) {
        (Value::Numeric(a), Value::Numeric(b)) => {
            let r = a.to_f64().powf(b.to_f64());
            if !r.is_finite() {
                return Err(oor(format!("numeric overflow: POW({a}, {b})")));
            }
            Ok(Value::Numeric(Numeric::from_f64(r)?))
        }
        (a, b) => {
            let (x, y) = (float(a)?, float(b)?);
            if x == 0.0 && y < 0.0 {
                return Err(oor(format!(
                    "Floating point error in function: POW({}, {})",
                    format_f64(x),
                    format_f64(y)
                )));
            }
            if x < 0.0 && y.fract() != 0.0 && y.is_finite() {
                return Err(oor(format!(
                    "Floating point error in function: POW({}, {})",
                    format_f64(x),
                    format_f64(y)
                )));
            }
            float_result("POW", x.powf(y), x.is_finite() && y.is_finite())
        }
    }
}

pub(super) fn eval_exp(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let x = float(&args[0])?;
    float_result("EXP", x.exp(), x.is_finite())
}

fn log_of(name: &str, x: f64) -> Result<f64> {
    if x <= 0.0 {
        return Err(oor(format!(
            "Argument to {name} must be positive: {}",
            format_f64(x)
        )));
    }
    Ok(x.ln())
}

pub(super) fn eval_ln(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    Ok(Value::Float64(log_of("LN", float(&args[0])?)?))
}

pub(super) fn eval_log10(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let x = float(&args[0])?;
    log_of("LOG10", x)?;
    Ok(Value::Float64(x.log10()))
}

pub(super) fn eval_log(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let x = log_of("LOG", float(&args[0])?)?;
    match args.get(1) {
        None => Ok(Value::Float64(x)),
        Some(b) => {
            let b = float(b)?;
            if b <= 0.0 || b == 1.0 {
                return Err(oor(format!("Invalid base for LOG: {}", format_f64(b))));
            }
            Ok(Value::Float64(x / b.ln()))
        }
    }
}

pub(super) fn eval_ieee_divide(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    Ok(Value::Float64(float(&args[0])? / float(&args[1])?))
}

pub(super) fn eval_safe_divide(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    match (&args[0], &args[1]) {
        (Value::Numeric(a), Value::Numeric(b)) => {
            Ok(a.checked_div(*b).map_or(Value::Null, Value::Numeric))
        }
        (a, b) => {
            let (x, y) = (float(a)?, float(b)?);
            let r = x / y;
            Ok(if y == 0.0 || (r.is_infinite() && x.is_finite()) {
                Value::Null
            } else {
                Value::Float64(r)
            })
        }
    }
}

pub(super) fn safe_arith(op: char, args: &[Value]) -> Result<Value> {
    Ok(match (&args[0], args.get(1)) {
        (Value::Int64(a), Some(Value::Int64(b))) => match op {
            '+' => a.checked_add(*b),
            '-' => a.checked_sub(*b),
            _ => a.checked_mul(*b),
        }
        .map_or(Value::Null, Value::Int64),
        (Value::Numeric(a), Some(Value::Numeric(b))) => match op {
            '+' => a.checked_add(*b),
            '-' => a.checked_sub(*b),
            _ => a.checked_mul(*b),
        }
        .map_or(Value::Null, Value::Numeric),
        (Value::Float64(a), Some(Value::Float64(b))) => {
            let r = match op {
                '+' => a + b,
                '-' => a - b,
                _ => a * b,
            };
            if r.is_infinite() && a.is_finite() && b.is_finite() {
                Value::Null
            } else {
                Value::Float64(r)
            }
        }
        (Value::Int64(a), None) => a.checked_neg().map_or(Value::Null, Value::Int64),
        (Value::Numeric(a), None) => Value::Numeric(-*a),
        (Value::Float64(a), None) => Value::Float64(-a),
        _ => return Err(internal("SAFE arithmetic")),
    })
}

pub(super) fn greatest_least(args: &[Value], greatest: bool) -> Result<Value> {
    let mut best: Option<&Value> = None;
    for v in args {
        if let Value::Float64(f) = v {
            if f.is_nan() {
                return Ok(Value::Float64(f64::NAN));
            }
        }
        best = Some(match best {
            None => v,
            Some(b) => {
                let o = compare(v, b).ok_or_else(|| internal("GREATEST/LEAST"))?;
                if (greatest && o == Ordering::Greater) || (!greatest && o == Ordering::Less) {
                    v
                } else {
                    b
                }
            }
        });
    }
    Ok(best.cloned().unwrap_or(Value::Null))
}

/// All arguments coerce to one orderable supertype.
pub(super) fn check_same_orderable(args: &[Option<Type>]) -> Option<(Vec<Type>, Type)> {
    let t = common_type(args)?;
    if !t.is_orderable() || args.is_empty() {
        return None;
    }
    Some((vec![t.clone(); args.len()], t))
}

pub(super) fn eval_is_nan(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    Ok(Value::Bool(float(&args[0])?.is_nan()))
}

pub(super) fn eval_is_inf(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    Ok(Value::Bool(float(&args[0])?.is_infinite()))
}
