//! ARRAY functions: `ARRAY_LENGTH`, `ARRAY_CONCAT`, `ARRAY_REVERSE`,
//! `ARRAY_TO_STRING`, `ARRAY_INCLUDES`, `ARRAY_MIN`/`ARRAY_MAX` and the
//! generators `GENERATE_ARRAY` and `GENERATE_DATE_ARRAY`.
//!
//! Most are generic over the element type, so instead of a signature list
//! each has a `check_*` function (a [`GenericCheck`](super::signature::GenericCheck)):
//! given the argument types it returns the types to coerce them to and the
//! result type, or `None` if the call does not fit.

use rowtree_types::{Numeric, Type, Value};

use super::args::{array, bytes_of, date, float, int, oor, same_kind};
use super::datetime::{date_add, part_of};
use super::math::greatest_least;
use super::signature::{common_type, is_number};
use crate::compare::sql_compare;
use crate::datetime::DatePart;
use crate::operator::CmpOp;
use crate::{EvalContext, Result};

fn check_array(args: &[Option<Type>]) -> Option<Type> {
    match args.first()? {
        Some(t @ Type::Array(_)) => Some(t.clone()),
        None => Some(Type::Array(Box::new(Type::Int64))),
        _ => None,
    }
}

pub(super) fn check_array_length(args: &[Option<Type>]) -> Option<(Vec<Type>, Type)> {
    let t = check_array(args).filter(|_| args.len() == 1)?;
    Some((vec![t], Type::Int64))
}

pub(super) fn check_array_same(args: &[Option<Type>]) -> Option<(Vec<Type>, Type)> {
    let t = check_array(args).filter(|_| args.len() == 1)?;
    Some((vec![t.clone()], t))
}

pub(super) fn check_array_concat(args: &[Option<Type>]) -> Option<(Vec<Type>, Type)> {
    let elems: Vec<Option<Type>> = args
        .iter()
        .map(|a| match a {
            None => Some(None),
            Some(Type::Array(e)) => Some(Some((**e).clone())),
            _ => None,
        })
        .collect::<Option<_>>()?;
    if args.is_empty() || elems.iter().all(Option::is_none) {
        return None;
    }
    let t = Type::Array(Box::new(common_type(&elems)?));
    Some((vec![t.clone(); args.len()], t))
}

pub(super) fn check_array_element(args: &[Option<Type>]) -> Option<(Vec<Type>, Type)> {
    let t = check_array(args).filter(|_| args.len() == 1)?;
    let Type::Array(e) = &t else { return None };
    if !e.is_orderable() {
        return None;
    }
    let e = (**e).clone();
    Some((vec![t], e))
}

pub(super) fn check_array_includes(args: &[Option<Type>]) -> Option<(Vec<Type>, Type)> {
    let t = check_array(args).filter(|_| args.len() == 2)?;
    let Type::Array(e) = &t else { return None };
    let e = common_type(&[Some((**e).clone()), args[1].clone()])?;
    Some((vec![Type::Array(Box::new(e.clone())), e], Type::Bool))
}

pub(super) fn check_array_to_string(args: &[Option<Type>]) -> Option<(Vec<Type>, Type)> {
    let t = check_array(args)?;
    let e = match &t {
        Type::Array(e) if matches!(**e, Type::String | Type::Bytes) => (**e).clone(),
        _ => return None,
    };
    if !(2..=3).contains(&args.len()) || args[1..].iter().flatten().any(|a| *a != e) {
        return None;
    }
    let mut params = vec![t];
    params.extend(std::iter::repeat_n(e.clone(), args.len() - 1));
    Some((params, e))
}

pub(super) fn eval_array_to_string(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let items = array(&args[0])?;
    let delim = bytes_of(&args[1])?;
    let null_text = args.get(2).map(bytes_of).transpose()?;
    let mut out = Vec::new();
    let mut first = true;
    for item in items {
        let piece = match (item, null_text) {
            (Value::Null, None) => continue,
            (Value::Null, Some(t)) => t,
            (v, _) => bytes_of(v)?,
        };
        if !first {
            out.extend_from_slice(delim);
        }
        first = false;
        out.extend_from_slice(piece);
    }
    same_kind(&args[1], out)
}

pub(super) fn check_generate_array(args: &[Option<Type>]) -> Option<(Vec<Type>, Type)> {
    if !(2..=3).contains(&args.len()) {
        return None;
    }
    let t = common_type(args).filter(is_number)?;
    let t = if t == Type::Float32 { Type::Float64 } else { t };
    Some((vec![t.clone(); args.len()], Type::Array(Box::new(t))))
}

pub(super) fn eval_generate_array(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    const MAX: usize = 16_000;
    let too_many = || oor("GENERATE_ARRAY would produce more than 16000 elements");
    let mut out = Vec::new();
    match (&args[0], &args[1]) {
        (Value::Int64(a), Value::Int64(b)) => {
            let step = match args.get(2) {
                Some(s) => int(s)?,
                None => 1,
            };
            if step == 0 {
                return Err(oor("Sequence step cannot be 0."));
            }
            let mut x = *a as i128;
            while (step > 0 && x <= *b as i128) || (step < 0 && x >= *b as i128) {
                if out.len() >= MAX {
                    return Err(too_many());
                }
                out.push(Value::Int64(x as i64));
                x += step as i128;
            }
        }
        (Value::Numeric(a), Value::Numeric(b)) => {
            let step = match args.get(2) {
                Some(Value::Numeric(s)) => *s,
                _ => Numeric::from_i64(1),
            };
            if step.scaled() == 0 {
                return Err(oor("Sequence step cannot be 0."));
            }
            let mut x = *a;
            while (step.scaled() > 0 && x <= *b) || (step.scaled() < 0 && x >= *b) {
                if out.len() >= MAX {
                    return Err(too_many());
                }
                out.push(Value::Numeric(x));
                match x.checked_add(step) {
                    Ok(n) => x = n,
                    Err(_) => break,
                }
            }
        }
        (a, b) => {
            let (a, b) = (float(a)?, float(b)?);
            let step = match args.get(2) {
                Some(s) => float(s)?,
                None => 1.0,
            };
            if step == 0.0 || step.is_nan() {
                return Err(oor("Sequence step cannot be 0."));
            }
            if a.is_nan() || b.is_nan() {
                return Ok(Value::Array(vec![]));
            }
            let mut i = 0.0;
            loop {
                let x = a + i * step;
                if (step > 0.0 && x > b) || (step < 0.0 && x < b) {
                    break;
                }
                if out.len() >= MAX {
                    return Err(too_many());
                }
                out.push(Value::Float64(x));
                i += 1.0;
            }
        }
    }
    Ok(Value::Array(out))
}

pub(super) fn eval_generate_date_array(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let (start, end) = (date(&args[0])?, date(&args[1])?);
    let (n, unit) = match (args.get(2), args.get(3)) {
        (Some(n), Some(u)) => (int(n)?, part_of(u, "GENERATE_DATE_ARRAY")?),
        _ => (1, DatePart::Day),
    };
    if n == 0 {
        return Err(oor("Sequence step cannot be 0."));
    }
    let mut out = Vec::new();
    let mut i: i64 = 0;
    while let Some(step) = i.checked_mul(n) {
        let d = match date_add(start, step, unit) {
            Ok(d) => d,
            Err(_) => break,
        };
        if (n > 0 && d > end) || (n < 0 && d < end) {
            break;
        }
        if out.len() >= 16_000 {
            return Err(oor(
                "GENERATE_DATE_ARRAY would produce more than 16000 elements",
            ));
        }
        out.push(Value::Date(d));
        i += 1;
    }
    Ok(Value::Array(out))
}

pub(super) fn eval_array_length(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    Ok(Value::Int64(array(&args[0])?.len() as i64))
}

pub(super) fn eval_array_concat(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let elements = args
        .iter()
        .map(|v| array(v).map_or(0, |items| items.len()))
        .sum();
    crate::check_output("ARRAY_CONCAT", 0, elements)?;
    let mut out = Vec::new();
    for v in args {
        out.extend(array(v)?.iter().cloned());
    }
    Ok(Value::Array(out))
}

pub(super) fn eval_array_reverse(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    Ok(Value::Array(
        array(&args[0])?.iter().rev().cloned().collect(),
    ))
}

pub(super) fn eval_array_includes(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    Ok(Value::Bool(array(&args[0])?.iter().any(|v| {
        sql_compare(CmpOp::Eq, v, &args[1]) == Some(true)
    })))
}

/// `ARRAY_MIN` and `ARRAY_MAX`: NULL elements are skipped.
pub(super) fn array_min_max(args: &[Value], max: bool) -> Result<Value> {
    let items: Vec<Value> = array(&args[0])?
        .iter()
        .filter(|v| !v.is_null())
        .cloned()
        .collect();
    greatest_least(&items, max)
}
