//! The scalar function library beyond the DDL essentials in
//! [`crate::functions`]: strings, math, dates and times, arrays, JSON and
//! hashes. Each function is one [`Function`] entry in [`LIBRARY`];
//! `SAFE.f(..)` turns their runtime errors into NULL (see
//! [`crate::eval`]).
//!
//! Date-part arguments (`DATE_TRUNC(d, MONTH)`, `INTERVAL 3 DAY`) reach
//! these functions as upper-case STRING arguments: the binder rewrites
//! `INTERVAL n unit` into the two arguments `n, 'UNIT'` and a part name
//! into `'PART'`.

use std::cmp::Ordering;

use base64::Engine as _;
use chrono::{Datelike, Duration, NaiveDate, NaiveDateTime, NaiveTime, Timelike};
use rowtree_types::{format_f64, Date, Numeric, TimeZone, Timestamp, Type, Value};

use crate::compare::compare;
use crate::datetime::{civil_of, zone_of, DatePart};
use crate::functions::{
    bytes_of, deterministic, internal, sig, Function, Param, Scalar, Volatility,
};
use crate::{Error, EvalContext, Result};

use Param::Value as V;
use Scalar::{
    ArrayBytes as AB, ArrayInt64 as AI, ArrayJson as AJ, ArrayString as AS, Bool as BO, Bytes as B,
    Date as D, Float64 as F, Int64 as I, Json as J, Numeric as N, String as S, Timestamp as TS,
};

type Eval = fn(&[Value], &mut dyn EvalContext) -> Result<Value>;

const fn generic(
    name: &'static str,
    described: &'static str,
    check: crate::functions::GenericCheck,
    eval: Eval,
) -> Function {
    Function {
        name,
        signatures: &[],
        volatility: Volatility::Deterministic,
        advances_sequence: false,
        eval,
        generic: Some((check, described)),
        handles_null: false,
    }
}

const fn null_aware(f: Function) -> Function {
    Function {
        handles_null: true,
        ..f
    }
}

fn oor(message: impl Into<String>) -> Error {
    Error::out_of_range(message)
}

fn int(v: &Value) -> Result<i64> {
    match v {
        Value::Int64(i) => Ok(*i),
        _ => Err(internal("integer argument")),
    }
}

fn float(v: &Value) -> Result<f64> {
    match v {
        Value::Float64(f) => Ok(*f),
        Value::Float32(f) => Ok(*f as f64),
        Value::Int64(i) => Ok(*i as f64),
        _ => Err(internal("FLOAT64 argument")),
    }
}

fn string(v: &Value) -> Result<&str> {
    match v {
        Value::String(s) => Ok(s),
        _ => Err(internal("STRING argument")),
    }
}

fn date(v: &Value) -> Result<Date> {
    match v {
        Value::Date(d) => Ok(*d),
        _ => Err(internal("DATE argument")),
    }
}

fn timestamp(v: &Value) -> Result<Timestamp> {
    match v {
        Value::Timestamp(t) => Ok(*t),
        _ => Err(internal("TIMESTAMP argument")),
    }
}

fn array(v: &Value) -> Result<&[Value]> {
    match v {
        Value::Array(items) => Ok(items),
        _ => Err(internal("ARRAY argument")),
    }
}

/// A STRING result for STRING inputs, BYTES for BYTES.
fn same_kind(like: &Value, bytes: Vec<u8>) -> Result<Value> {
    match like {
        Value::String(_) => String::from_utf8(bytes)
            .map(Value::String)
            .map_err(|_| oor("Result is not valid UTF-8")),
        _ => Ok(Value::Bytes(bytes)),
    }
}

/// Units of a STRING (characters) or BYTES (bytes) value, as strings of
/// bytes, so one implementation serves both.
fn units(v: &Value) -> Result<Vec<Vec<u8>>> {
    Ok(match v {
        Value::String(s) => s.chars().map(|c| c.to_string().into_bytes()).collect(),
        Value::Bytes(b) => b.iter().map(|x| vec![*x]).collect(),
        _ => return Err(internal("string function")),
    })
}

fn float_result(name: &str, r: f64, inputs_finite: bool) -> Result<Value> {
    if r.is_infinite() && inputs_finite {
        return Err(oor(format!("Floating point overflow in function {name}")));
    }
    Ok(Value::Float64(r))
}

// ---------------------------------------------------------------- strings

fn eval_strpos(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let (hay, needle) = (bytes_of(&args[0])?, bytes_of(&args[1])?);
    let pos = if needle.is_empty() {
        Some(0)
    } else {
        hay.windows(needle.len()).position(|w| w == needle)
    };
    Ok(Value::Int64(match (pos, &args[0]) {
        (None, _) => 0,
        (Some(p), Value::String(s)) => s[..p].chars().count() as i64 + 1,
        (Some(p), _) => p as i64 + 1,
    }))
}

fn eval_trim(kind: u8, args: &[Value]) -> Result<Value> {
    let items = units(&args[0])?;
    let set: Vec<Vec<u8>> = match args.get(1) {
        Some(v) => units(v)?,
        None => vec![b" ".to_vec()],
    };
    let (mut start, mut end) = (0, items.len());
    if kind != b'R' {
        while start < end && set.contains(&items[start]) {
            start += 1;
        }
    }
    if kind != b'L' {
        while end > start && set.contains(&items[end - 1]) {
            end -= 1;
        }
    }
    let out: Vec<u8> = match (&args[0], args.get(1)) {
        // TRIM(s) removes all Unicode whitespace.
        (Value::String(s), None) => {
            let t = match kind {
                b'L' => s.trim_start(),
                b'R' => s.trim_end(),
                _ => s.trim(),
            };
            return Ok(Value::String(t.to_string()));
        }
        _ => items[start..end].concat(),
    };
    same_kind(&args[0], out)
}

fn eval_pad(left: bool, args: &[Value]) -> Result<Value> {
    let items = units(&args[0])?;
    let len = int(&args[1])?;
    if len < 0 {
        return Err(oor(format!(
            "Second argument (length) of {} cannot be negative: {len}",
            if left { "LPAD" } else { "RPAD" }
        )));
    }
    if len > 1 << 20 {
        return Err(oor("Output of LPAD/RPAD exceeds the maximum allowed size"));
    }
    let pattern = match args.get(2) {
        Some(p) => units(p)?,
        None => vec![b" ".to_vec()],
    };
    let len = len as usize;
    if len <= items.len() {
        return same_kind(&args[0], items[..len].concat());
    }
    if pattern.is_empty() {
        return Err(oor("Third argument (pattern) of LPAD/RPAD cannot be empty"));
    }
    let fill: Vec<Vec<u8>> = pattern
        .iter()
        .cycle()
        .take(len - items.len())
        .cloned()
        .collect();
    let out = if left {
        [fill, items].concat()
    } else {
        [items, fill].concat()
    };
    same_kind(&args[0], out.concat())
}

fn eval_repeat(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let n = int(&args[1])?;
    if n < 0 {
        return Err(oor(format!(
            "Second argument of REPEAT cannot be negative: {n}"
        )));
    }
    let b = bytes_of(&args[0])?;
    if b.len().saturating_mul(n as usize) > crate::MAX_OUTPUT_BYTES {
        return Err(oor("Output of REPEAT exceeds the maximum allowed size"));
    }
    same_kind(&args[0], b.repeat(n as usize))
}

fn eval_replace(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    match (&args[0], &args[1], &args[2]) {
        (Value::String(s), Value::String(from), Value::String(to)) => {
            Ok(Value::String(if from.is_empty() {
                s.clone()
            } else {
                s.replace(from.as_str(), to)
            }))
        }
        (Value::Bytes(s), Value::Bytes(from), Value::Bytes(to)) => {
            if from.is_empty() {
                return Ok(Value::Bytes(s.clone()));
            }
            let mut out = Vec::new();
            let mut i = 0;
            while i < s.len() {
                if s[i..].starts_with(from) {
                    out.extend_from_slice(to);
                    i += from.len();
                } else {
                    out.push(s[i]);
                    i += 1;
                }
            }
            Ok(Value::Bytes(out))
        }
        _ => Err(internal("REPLACE")),
    }
}

fn eval_split(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    match (&args[0], args.get(1)) {
        (Value::String(s), delim) => {
            let delim = match delim {
                Some(d) => string(d)?,
                None => ",",
            };
            let parts: Vec<Value> = if delim.is_empty() {
                if s.is_empty() {
                    vec![Value::String(String::new())]
                } else {
                    s.chars().map(|c| Value::String(c.to_string())).collect()
                }
            } else {
                s.split(delim)
                    .map(|p| Value::String(p.to_string()))
                    .collect()
            };
            Ok(Value::Array(parts))
        }
        (Value::Bytes(b), Some(Value::Bytes(delim))) => {
            let mut parts = Vec::new();
            if delim.is_empty() {
                parts = b.iter().map(|x| Value::Bytes(vec![*x])).collect();
            } else {
                let mut start = 0;
                let mut i = 0;
                while i + delim.len() <= b.len() {
                    if b[i..].starts_with(delim) {
                        parts.push(Value::Bytes(b[start..i].to_vec()));
                        i += delim.len();
                        start = i;
                    } else {
                        i += 1;
                    }
                }
                parts.push(Value::Bytes(b[start..].to_vec()));
            }
            Ok(Value::Array(parts))
        }
        _ => Err(internal("SPLIT")),
    }
}

fn regex(pattern: &str) -> Result<regex::Regex> {
    regex::Regex::new(pattern).map_err(|e| {
        let detail = match &e {
            regex::Error::Syntax(text) => text.lines().last().unwrap_or("").to_string(),
            other => other.to_string(),
        };
        oor(format!("Cannot parse regular expression: {detail}"))
    })
}

fn eval_regexp_contains(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    Ok(Value::Bool(
        regex(string(&args[1])?)?.is_match(string(&args[0])?),
    ))
}

fn eval_regexp_extract(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let re = regex(string(&args[1])?)?;
    if re.captures_len() > 2 {
        return Err(oor(
            "Regular expressions passed into extraction functions must not have more than 1 capturing group",
        ));
    }
    Ok(match re.captures(string(&args[0])?) {
        None => Value::Null,
        Some(c) => match c.get(if re.captures_len() == 2 { 1 } else { 0 }) {
            Some(m) => Value::String(m.as_str().to_string()),
            None => Value::Null,
        },
    })
}

fn eval_regexp_extract_all(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let re = regex(string(&args[1])?)?;
    if re.captures_len() > 2 {
        return Err(oor(
            "Regular expressions passed into extraction functions must not have more than 1 capturing group",
        ));
    }
    let group = if re.captures_len() == 2 { 1 } else { 0 };
    Ok(Value::Array(
        re.captures_iter(string(&args[0])?)
            .map(|c| Value::String(c.get(group).map_or("", |m| m.as_str()).to_string()))
            .collect(),
    ))
}

fn eval_regexp_replace(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let re = regex(string(&args[1])?)?;
    // GoogleSQL writes group references as \1; the regex crate as ${1}.
    let mut replacement = String::new();
    let mut chars = string(&args[2])?.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('\\', Some(d)) if d.is_ascii_digit() => {
                replacement.push_str(&format!("${{{d}}}"));
                chars.next();
            }
            ('\\', Some('\\')) => {
                replacement.push('\\');
                chars.next();
            }
            ('$', _) => replacement.push_str("$$"),
            (c, _) => replacement.push(c),
        }
    }
    Ok(Value::String(
        re.replace_all(string(&args[0])?, replacement.as_str())
            .into_owned(),
    ))
}

fn eval_code_points_to_string(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let mut out = String::new();
    for v in array(&args[0])? {
        match v {
            Value::Null => return Ok(Value::Null),
            Value::Int64(c) => out.push(
                u32::try_from(*c)
                    .ok()
                    .and_then(char::from_u32)
                    .ok_or_else(|| oor(format!("Invalid code point: {c}")))?,
            ),
            _ => return Err(internal("CODE_POINTS_TO_STRING")),
        }
    }
    Ok(Value::String(out))
}

fn eval_to_code_points(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    Ok(Value::Array(match &args[0] {
        Value::String(s) => s.chars().map(|c| Value::Int64(c as i64)).collect(),
        Value::Bytes(b) => b.iter().map(|c| Value::Int64(*c as i64)).collect(),
        _ => return Err(internal("TO_CODE_POINTS")),
    }))
}

fn eval_from_hex(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let s = string(&args[0])?;
    let padded = if s.len() % 2 == 1 {
        format!("0{s}")
    } else {
        s.to_string()
    };
    let bad = || {
        oor(format!(
            "Failed to decode invalid hexadecimal string: \"{s}\""
        ))
    };
    let digits = padded.as_bytes();
    let mut out = Vec::with_capacity(digits.len() / 2);
    for pair in digits.chunks(2) {
        let text = std::str::from_utf8(pair).map_err(|_| bad())?;
        out.push(u8::from_str_radix(text, 16).map_err(|_| bad())?);
    }
    Ok(Value::Bytes(out))
}

/// GoogleSQL `FORMAT`: `%d %i %s %f %e %g %x %X %o %t %T %%` with optional
/// `-`/`0` flags, width and precision.
fn eval_format(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let fmt = match &args[0] {
        Value::Null => return Ok(Value::Null),
        v => string(v)?,
    };
    let mut out = String::new();
    let mut next = 1;
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut flags = String::new();
        while let Some(f @ ('-' | '0' | '+' | ' ' | '#' | '\'')) = chars.peek().copied() {
            flags.push(f);
            chars.next();
        }
        let mut width = String::new();
        while let Some(d) = chars.peek().copied().filter(char::is_ascii_digit) {
            width.push(d);
            chars.next();
        }
        let mut precision: Option<usize> = None;
        if chars.peek() == Some(&'.') {
            chars.next();
            let mut p = String::new();
            while let Some(d) = chars.peek().copied().filter(char::is_ascii_digit) {
                p.push(d);
                chars.next();
            }
            precision = Some(format_size(&p)?);
        }
        let spec = chars
            .next()
            .ok_or_else(|| oor(format!("Invalid format specifier at the end of: {fmt}")))?;
        if spec == '%' {
            out.push('%');
            continue;
        }
        let arg = args
            .get(next)
            .ok_or_else(|| oor(format!("Too few arguments to FORMAT for pattern \"{fmt}\"")))?;
        next += 1;
        let text = match (spec, arg) {
            ('t', Value::Null) | ('T', Value::Null) => "NULL".to_string(),
            (_, Value::Null) => return Ok(Value::Null),
            ('d' | 'i', Value::Int64(v)) => {
                let s = v.to_string();
                if flags.contains('+') && *v >= 0 {
                    format!("+{s}")
                } else {
                    s
                }
            }
            ('x', Value::Int64(v)) => format!("{v:x}"),
            ('X', Value::Int64(v)) => format!("{v:X}"),
            ('o', Value::Int64(v)) => format!("{v:o}"),
            ('f' | 'F', v) => format!("{:.*}", precision.unwrap_or(6), number(v)?),
            ('e', v) => format_exp(number(v)?, precision.unwrap_or(6), false),
            ('E', v) => format_exp(number(v)?, precision.unwrap_or(6), true),
            ('g' | 'G', v) => format_f64(number(v)?),
            ('s', v) => {
                let s = crate::cast(v.clone(), &Type::String)
                    .map(|v| match v {
                        Value::String(s) => s,
                        other => other.to_string(),
                    })
                    .map_err(|_| oor("Invalid type for argument to FORMAT %s"))?;
                match precision {
                    Some(p) => s.chars().take(p).collect(),
                    None => s,
                }
            }
            ('t', Value::String(s)) => s.clone(),
            ('t', v) => crate::cast(v.clone(), &Type::String)
                .map(|v| match v {
                    Value::String(s) => s,
                    other => other.sql_literal(),
                })
                .unwrap_or_else(|_| v.sql_literal()),
            ('T', v) => v.sql_literal(),
            (spec, v) => {
                return Err(oor(format!(
                    "Invalid type for argument {} to FORMAT; %{spec} does not accept {}",
                    next - 1,
                    v.sql_literal()
                )))
            }
        };
        let width = format_size(&width)?;
        let len = text.chars().count();
        if len >= width {
            out.push_str(&text);
        } else if flags.contains('-') {
            out.push_str(&text);
            out.push_str(&" ".repeat(width - len));
        } else if flags.contains('0') && matches!(spec, 'd' | 'i' | 'f' | 'F' | 'e' | 'E') {
            let (sign, digits) = match text.strip_prefix(['-', '+']) {
                Some(rest) => (&text[..1], rest),
                None => ("", text.as_str()),
            };
            out.push_str(sign);
            out.push_str(&"0".repeat(width - len));
            out.push_str(digits);
        } else {
            out.push_str(&" ".repeat(width - len));
            out.push_str(&text);
        }
        crate::check_output("FORMAT", out.len(), 0)?;
    }
    Ok(Value::String(out))
}

/// A width or precision in a FORMAT pattern (empty is 0). Each pads or
/// prints that many characters, so one larger than the largest output is
/// refused before anything is allocated.
fn format_size(digits: &str) -> Result<usize> {
    if digits.is_empty() {
        return Ok(0);
    }
    digits
        .parse::<usize>()
        .ok()
        .filter(|&n| n <= crate::MAX_OUTPUT_BYTES)
        .ok_or_else(|| {
            oor(format!(
                "Width or precision {digits} in FORMAT exceeds the maximum allowed size ({} bytes)",
                crate::MAX_OUTPUT_BYTES
            ))
        })
}

fn number(v: &Value) -> Result<f64> {
    match v {
        Value::Numeric(n) => Ok(n.to_f64()),
        v => float(v).map_err(|_| oor("FORMAT: %f, %e and %g need a numeric argument")),
    }
}

fn format_exp(v: f64, precision: usize, upper: bool) -> String {
    let s = format!("{v:.precision$e}");
    // Rust writes 1.5e2; C writes 1.5e+02.
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let sign = if exp < 0 { '-' } else { '+' };
    let e = if upper { 'E' } else { 'e' };
    format!("{mantissa}{e}{sign}{:02}", exp.abs())
}

// ---------------------------------------------------------------- math

fn eval_sign(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    Ok(match &args[0] {
        Value::Int64(v) => Value::Int64(v.signum()),
        Value::Numeric(n) => Value::Numeric(Numeric::from_i64(n.scaled().signum() as i64)),
        Value::Float64(f) if f.is_nan() => Value::Float64(f64::NAN),
        Value::Float64(f) if *f == 0.0 => Value::Float64(0.0),
        Value::Float64(f) => Value::Float64(f.signum()),
        _ => return Err(internal("SIGN")),
    })
}

fn eval_div(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
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

fn eval_round(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    rounder(Rounding::HalfAway, "ROUND")(args)
}
fn eval_trunc(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    rounder(Rounding::Trunc, "TRUNC")(args)
}
fn eval_ceil(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    rounder(Rounding::Ceil, "CEIL")(args)
}
fn eval_floor(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    rounder(Rounding::Floor, "FLOOR")(args)
}

fn eval_sqrt(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let x = float(&args[0])?;
    if x < 0.0 {
        return Err(oor(format!(
            "Argument to SQRT cannot be negative: {}",
            format_f64(x)
        )));
    }
    Ok(Value::Float64(x.sqrt()))
}

fn eval_pow(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
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

fn eval_exp(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
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

fn eval_ln(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    Ok(Value::Float64(log_of("LN", float(&args[0])?)?))
}

fn eval_log10(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let x = float(&args[0])?;
    log_of("LOG10", x)?;
    Ok(Value::Float64(x.log10()))
}

fn eval_log(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
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

fn eval_ieee_divide(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    Ok(Value::Float64(float(&args[0])? / float(&args[1])?))
}

fn eval_safe_divide(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
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

fn safe_arith(op: char, args: &[Value]) -> Result<Value> {
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

fn greatest_least(args: &[Value], greatest: bool) -> Result<Value> {
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
fn check_same_orderable(args: &[Option<Type>]) -> Option<(Vec<Type>, Type)> {
    let t = common_type(args)?;
    if !t.is_orderable() || args.is_empty() {
        return None;
    }
    Some((vec![t.clone(); args.len()], t))
}

/// The common supertype of argument types (untyped NULLs fit anything).
pub(crate) fn common_type(args: &[Option<Type>]) -> Option<Type> {
    let mut result: Option<Type> = None;
    for t in args.iter().flatten() {
        result = Some(match result {
            None => t.clone(),
            Some(r) if r == *t => r,
            Some(r) => match (&r, t) {
                (Type::Int64, Type::Numeric) | (Type::Numeric, Type::Int64) => Type::Numeric,
                (a, b) if is_number(a) && is_number(b) => Type::Float64,
                _ => return None,
            },
        });
    }
    Some(result.unwrap_or(Type::Int64))
}

fn is_number(t: &Type) -> bool {
    matches!(
        t,
        Type::Int64 | Type::Numeric | Type::Float64 | Type::Float32
    )
}

// ---------------------------------------------------------------- dates and times

fn part_of(v: &Value, function: &str) -> Result<DatePart> {
    let name = string(v)?;
    DatePart::parse(name).ok_or_else(|| {
        Error::invalid(format!(
            "A valid date part name is required but found {name} in {function}"
        ))
    })
}

fn add_months(d: NaiveDate, months: i64) -> Option<NaiveDate> {
    let total = d.year() as i64 * 12 + d.month0() as i64 + months;
    let (y, m0) = (total.div_euclid(12), total.rem_euclid(12) as u32);
    let y = i32::try_from(y).ok()?;
    // The last day of the month when the day does not exist (Jan 31 + 1 MONTH).
    let last = (28..=31)
        .rev()
        .find(|day| NaiveDate::from_ymd_opt(y, m0 + 1, *day).is_some())?;
    NaiveDate::from_ymd_opt(y, m0 + 1, d.day().min(last))
}

fn date_add(d: Date, n: i64, unit: DatePart) -> Result<Date> {
    let naive = d.to_naive_date();
    let out = match unit {
        DatePart::Day => n
            .checked_mul(1)
            .and_then(|n| naive.checked_add_signed(Duration::try_days(n)?)),
        DatePart::Week => n
            .checked_mul(7)
            .and_then(|n| naive.checked_add_signed(Duration::try_days(n)?)),
        DatePart::Month => add_months(naive, n),
        DatePart::Quarter => n.checked_mul(3).and_then(|n| add_months(naive, n)),
        DatePart::Year => n.checked_mul(12).and_then(|n| add_months(naive, n)),
        other => {
            return Err(Error::invalid(format!(
                "Unsupported date part {} in DATE_ADD/DATE_SUB",
                other.name()
            )))
        }
    };
    out.and_then(Date::from_naive_date).ok_or_else(|| {
        oor(format!(
            "DATE_ADD/DATE_SUB overflow: {d} + {n} {}",
            unit.name()
        ))
    })
}

fn eval_date_add(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    Ok(Value::Date(date_add(
        date(&args[0])?,
        int(&args[1])?,
        part_of(&args[2], "DATE_ADD")?,
    )?))
}

fn eval_date_sub(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let n = int(&args[1])?
        .checked_neg()
        .ok_or_else(|| oor("int64 overflow in DATE_SUB"))?;
    Ok(Value::Date(date_add(
        date(&args[0])?,
        n,
        part_of(&args[2], "DATE_SUB")?,
    )?))
}

fn week_start(d: NaiveDate) -> NaiveDate {
    d - Duration::days(d.weekday().num_days_from_sunday() as i64)
}

fn trunc_date(d: NaiveDate, part: DatePart) -> Result<NaiveDate> {
    Ok(match part {
        DatePart::Day => d,
        DatePart::Week => week_start(d),
        DatePart::IsoWeek => d - Duration::days(d.weekday().num_days_from_monday() as i64),
        DatePart::Month => d.with_day(1).unwrap_or(d),
        DatePart::Quarter => {
            NaiveDate::from_ymd_opt(d.year(), (d.month0() / 3) * 3 + 1, 1).unwrap_or(d)
        }
        DatePart::Year => NaiveDate::from_ymd_opt(d.year(), 1, 1).unwrap_or(d),
        DatePart::IsoYear => {
            NaiveDate::from_isoywd_opt(d.iso_week().year(), 1, chrono::Weekday::Mon).unwrap_or(d)
        }
        other => {
            return Err(Error::invalid(format!(
                "Unsupported date part {} for a DATE",
                other.name()
            )))
        }
    })
}

fn eval_date_trunc(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let d = trunc_date(
        date(&args[0])?.to_naive_date(),
        part_of(&args[1], "DATE_TRUNC")?,
    )?;
    Date::from_naive_date(d)
        .map(Value::Date)
        .ok_or_else(|| oor("DATE_TRUNC result out of range"))
}

fn eval_date_diff(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let (a, b) = (
        date(&args[0])?.to_naive_date(),
        date(&args[1])?.to_naive_date(),
    );
    let months = |x: NaiveDate| x.year() as i64 * 12 + x.month0() as i64;
    Ok(Value::Int64(match part_of(&args[2], "DATE_DIFF")? {
        DatePart::Day => (a - b).num_days(),
        DatePart::Week => (week_start(a) - week_start(b)).num_days() / 7,
        DatePart::IsoWeek => {
            (trunc_date(a, DatePart::IsoWeek)? - trunc_date(b, DatePart::IsoWeek)?).num_days() / 7
        }
        DatePart::Month => months(a) - months(b),
        DatePart::Quarter => months(a).div_euclid(3) - months(b).div_euclid(3),
        DatePart::Year => a.year() as i64 - b.year() as i64,
        DatePart::IsoYear => a.iso_week().year() as i64 - b.iso_week().year() as i64,
        other => {
            return Err(Error::invalid(format!(
                "Unsupported date part {} in DATE_DIFF",
                other.name()
            )))
        }
    }))
}

fn nanos_per(part: DatePart, function: &str) -> Result<i128> {
    Ok(match part {
        DatePart::Nanosecond => 1,
        DatePart::Microsecond => 1_000,
        DatePart::Millisecond => 1_000_000,
        DatePart::Second => 1_000_000_000,
        DatePart::Minute => 60_000_000_000,
        DatePart::Hour => 3_600_000_000_000,
        DatePart::Day => 86_400_000_000_000,
        other => {
            return Err(Error::invalid(format!(
                "Unsupported date part {} in {function}",
                other.name()
            )))
        }
    })
}

fn timestamp_add(args: &[Value], sign: i128, function: &str) -> Result<Value> {
    let t = timestamp(&args[0])?;
    let n = int(&args[1])? as i128 * sign;
    let unit = nanos_per(part_of(&args[2], function)?, function)?;
    t.checked_add_nanos(n * unit)
        .map(Value::Timestamp)
        .ok_or_else(|| oor(format!("TIMESTAMP overflow in {function}")))
}

fn eval_timestamp_diff(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let (a, b) = (timestamp(&args[0])?, timestamp(&args[1])?);
    let unit = nanos_per(part_of(&args[2], "TIMESTAMP_DIFF")?, "TIMESTAMP_DIFF")?;
    i64::try_from((a.nanos() - b.nanos()) / unit)
        .map(Value::Int64)
        .map_err(|_| oor("int64 overflow in TIMESTAMP_DIFF"))
}

fn eval_timestamp_trunc(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let t = timestamp(&args[0])?;
    let part = part_of(&args[1], "TIMESTAMP_TRUNC")?;
    let tz = match args.get(2) {
        Some(z) => zone_of(z)?,
        None => TimeZone::LOS_ANGELES,
    };
    let fixed = match part {
        DatePart::Nanosecond => Some(1i128),
        DatePart::Microsecond => Some(1_000),
        DatePart::Millisecond => Some(1_000_000),
        DatePart::Second => Some(1_000_000_000),
        DatePart::Minute | DatePart::Hour => None,
        _ => None,
    };
    if let Some(unit) = fixed {
        return Ok(Value::Timestamp(
            Timestamp::from_nanos(t.nanos().div_euclid(unit) * unit).unwrap_or(t),
        ));
    }
    let (civil, _) = t.to_civil(&tz);
    let local = match part {
        DatePart::Minute => civil.with_second(0).and_then(|c| c.with_nanosecond(0)),
        DatePart::Hour => civil
            .with_minute(0)
            .and_then(|c| c.with_second(0))
            .and_then(|c| c.with_nanosecond(0)),
        part => Some(trunc_date(civil.date(), part)?.and_time(NaiveTime::MIN)),
    }
    .ok_or_else(|| internal("TIMESTAMP_TRUNC"))?;
    Ok(Value::Timestamp(Timestamp::from_civil(local, &tz)?))
}

fn eval_current_date(args: &[Value], ctx: &mut dyn EvalContext) -> Result<Value> {
    let tz = match args.first() {
        Some(z) => zone_of(z)?,
        None => TimeZone::LOS_ANGELES,
    };
    Ok(Value::Date(ctx.now().to_date(&tz)?))
}

/// Expands GoogleSQL-only specifiers into chrono's: `%E*S`, `%E<n>S`,
/// `%F`, `%T`, `%Q`; `%Z` gets the zone text.
fn chrono_format(fmt: &str, zone: &str, civil: &NaiveDateTime) -> String {
    let mut out = String::new();
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            if c == '%' {
                out.push_str("%%");
            } else {
                out.push(c);
            }
            continue;
        }
        match chars.next() {
            Some('E') => {
                let mut spec = String::new();
                while let Some(&n) = chars.peek() {
                    chars.next();
                    if n == 'S' || n == 'z' || n == 'Y' {
                        spec.push(n);
                        break;
                    }
                    spec.push(n);
                }
                match spec.as_str() {
                    "*S" => {
                        out.push_str("%S");
                        let frac = civil.nanosecond();
                        if frac != 0 {
                            let digits = format!("{frac:09}");
                            out.push('.');
                            out.push_str(digits.trim_end_matches('0'));
                        }
                    }
                    "4Y" => out.push_str("%Y"),
                    "z" => out.push_str("%:z"),
                    s if s.ends_with('S') => {
                        let n: usize = s[..s.len() - 1].parse().unwrap_or(0).min(9);
                        out.push_str("%S");
                        if n > 0 {
                            let digits = format!("{:09}", civil.nanosecond());
                            out.push('.');
                            out.push_str(&digits[..n]);
                        }
                    }
                    s => {
                        out.push_str("%E");
                        out.push_str(s);
                    }
                }
            }
            Some('Z') => out.push_str(&zone.replace('%', "%%")),
            Some('Q') => out.push_str(&((civil.month0() / 3) + 1).to_string()),
            Some(other) => {
                out.push('%');
                out.push(other);
            }
            None => out.push('%'),
        }
    }
    out
}

fn strftime(fmt: &str, civil: &NaiveDateTime, offset: i32, zone: &str) -> Result<String> {
    use chrono::format::{Item, StrftimeItems};
    let expanded = chrono_format(fmt, zone, civil);
    let items: Vec<Item> = StrftimeItems::new(&expanded).collect();
    if items.iter().any(|i| matches!(i, Item::Error)) {
        return Err(oor(format!("Invalid format string: {fmt}")));
    }
    let fixed =
        chrono::FixedOffset::east_opt(offset).ok_or_else(|| internal("FORMAT_TIMESTAMP"))?;
    let dt = chrono::TimeZone::from_local_datetime(&fixed, civil)
        .single()
        .ok_or_else(|| internal("FORMAT_TIMESTAMP"))?;
    Ok(dt.format_with_items(items.into_iter()).to_string())
}

fn eval_format_timestamp(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let t = timestamp(&args[1])?;
    let tz = match args.get(2) {
        Some(z) => zone_of(z)?,
        None => TimeZone::LOS_ANGELES,
    };
    let (civil, offset) = t.to_civil(&tz);
    let zone = if offset == 0 {
        "UTC".to_string()
    } else {
        tz.to_string()
    };
    Ok(Value::String(strftime(
        string(&args[0])?,
        &civil,
        offset,
        &zone,
    )?))
}

fn eval_format_date(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let civil = civil_of(&args[1], &TimeZone::UTC)?;
    Ok(Value::String(strftime(
        string(&args[0])?,
        &civil,
        0,
        "UTC",
    )?))
}

/// Parses `text` with a GoogleSQL format; missing fields default to
/// 1970-01-01 00:00:00. Returns the civil time and the offset if the text
/// had one.
fn strptime(fmt: &str, text: &str) -> Result<(NaiveDateTime, Option<i32>)> {
    use chrono::format::{parse, Parsed, StrftimeItems};
    let fmt = fmt
        .replace("%E*S", "%S%.f")
        .replace("%E3S", "%S%.3f")
        .replace("%E6S", "%S%.6f")
        .replace("%E9S", "%S%.9f")
        .replace("%Ez", "%:z")
        .replace("%E4Y", "%Y");
    let bad = || oor(format!("Failed to parse input string \"{text}\""));
    let mut parsed = Parsed::new();
    parse(&mut parsed, text, StrftimeItems::new(&fmt)).map_err(|_| bad())?;
    if parsed.year().is_none()
        && parsed.year_div_100().is_none()
        && parsed.year_mod_100().is_none()
        && parsed.isoyear().is_none()
    {
        parsed.set_year(1970).map_err(|_| bad())?;
    }
    if parsed.month().is_none()
        && parsed.ordinal().is_none()
        && parsed.week_from_sun().is_none()
        && parsed.isoweek().is_none()
    {
        parsed.set_month(1).map_err(|_| bad())?;
    }
    if parsed.day().is_none() && parsed.ordinal().is_none() && parsed.weekday().is_none() {
        parsed.set_day(1).map_err(|_| bad())?;
    }
    let date = parsed.to_naive_date().map_err(|_| bad())?;
    let time = if parsed.hour_div_12().is_none() && parsed.hour_mod_12().is_none() {
        NaiveTime::MIN
    } else {
        if parsed.minute().is_none() {
            parsed.set_minute(0).map_err(|_| bad())?;
        }
        parsed.to_naive_time().map_err(|_| bad())?
    };
    Ok((date.and_time(time), parsed.offset()))
}

fn eval_parse_timestamp(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let (civil, offset) = strptime(string(&args[0])?, string(&args[1])?)?;
    let tz = match (offset, args.get(2)) {
        (Some(o), _) => TimeZone::fixed(o).ok_or_else(|| oor("Invalid offset"))?,
        (None, Some(z)) => zone_of(z)?,
        (None, None) => TimeZone::LOS_ANGELES,
    };
    Ok(Value::Timestamp(Timestamp::from_civil(civil, &tz)?))
}

fn eval_parse_date(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let (civil, _) = strptime(string(&args[0])?, string(&args[1])?)?;
    Date::from_naive_date(civil.date())
        .map(Value::Date)
        .ok_or_else(|| oor(format!("Date is out of range: {}", civil.date())))
}

fn unix(args: &[Value], per: i128) -> Result<Value> {
    Ok(Value::Int64(
        timestamp(&args[0])?.nanos().div_euclid(per) as i64
    ))
}

fn from_unix(args: &[Value], per: i128, name: &str) -> Result<Value> {
    let n = int(&args[0])?;
    (n as i128)
        .checked_mul(per)
        .and_then(Timestamp::from_nanos)
        .map(Value::Timestamp)
        .ok_or_else(|| oor(format!("Timestamp is out of range: {name}({n})")))
}

// ---------------------------------------------------------------- arrays

fn check_array(args: &[Option<Type>]) -> Option<Type> {
    match args.first()? {
        Some(t @ Type::Array(_)) => Some(t.clone()),
        None => Some(Type::Array(Box::new(Type::Int64))),
        _ => None,
    }
}

fn check_array_length(args: &[Option<Type>]) -> Option<(Vec<Type>, Type)> {
    let t = check_array(args).filter(|_| args.len() == 1)?;
    Some((vec![t], Type::Int64))
}

fn check_array_same(args: &[Option<Type>]) -> Option<(Vec<Type>, Type)> {
    let t = check_array(args).filter(|_| args.len() == 1)?;
    Some((vec![t.clone()], t))
}

fn check_array_concat(args: &[Option<Type>]) -> Option<(Vec<Type>, Type)> {
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

fn check_array_element(args: &[Option<Type>]) -> Option<(Vec<Type>, Type)> {
    let t = check_array(args).filter(|_| args.len() == 1)?;
    let Type::Array(e) = &t else { return None };
    if !e.is_orderable() {
        return None;
    }
    let e = (**e).clone();
    Some((vec![t], e))
}

fn check_array_includes(args: &[Option<Type>]) -> Option<(Vec<Type>, Type)> {
    let t = check_array(args).filter(|_| args.len() == 2)?;
    let Type::Array(e) = &t else { return None };
    let e = common_type(&[Some((**e).clone()), args[1].clone()])?;
    Some((vec![Type::Array(Box::new(e.clone())), e], Type::Bool))
}

fn check_array_to_string(args: &[Option<Type>]) -> Option<(Vec<Type>, Type)> {
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

fn eval_array_to_string(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
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

fn check_generate_array(args: &[Option<Type>]) -> Option<(Vec<Type>, Type)> {
    if !(2..=3).contains(&args.len()) {
        return None;
    }
    let t = common_type(args).filter(is_number)?;
    let t = if t == Type::Float32 { Type::Float64 } else { t };
    Some((vec![t.clone(); args.len()], Type::Array(Box::new(t))))
}

fn eval_generate_array(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
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

fn eval_generate_date_array(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
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

// ---------------------------------------------------------------- JSON

enum PathStep {
    Key(String),
    Index(usize),
}

fn json_path(path: &str) -> Result<Vec<PathStep>> {
    let bad = || oor(format!("Invalid JSONPath: {path}"));
    let rest = path.strip_prefix('$').ok_or_else(bad)?;
    let chars: Vec<char> = rest.chars().collect();
    let mut steps = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '.' => {
                i += 1;
                if i < chars.len() && chars[i] == '"' {
                    let end = chars[i + 1..]
                        .iter()
                        .position(|c| *c == '"')
                        .ok_or_else(bad)?;
                    steps.push(PathStep::Key(chars[i + 1..i + 1 + end].iter().collect()));
                    i += end + 2;
                } else {
                    let start = i;
                    while i < chars.len() && chars[i] != '.' && chars[i] != '[' {
                        i += 1;
                    }
                    if start == i {
                        return Err(bad());
                    }
                    steps.push(PathStep::Key(chars[start..i].iter().collect()));
                }
            }
            '[' => {
                let end = chars[i..].iter().position(|c| *c == ']').ok_or_else(bad)? + i;
                let inner: String = chars[i + 1..end].iter().collect();
                let inner = inner.trim();
                if let Some(q) = inner
                    .strip_prefix('\'')
                    .and_then(|s| s.strip_suffix('\''))
                    .or_else(|| inner.strip_prefix('"').and_then(|s| s.strip_suffix('"')))
                {
                    steps.push(PathStep::Key(q.to_string()));
                } else {
                    steps.push(PathStep::Index(inner.parse().map_err(|_| bad())?));
                }
                i = end + 1;
            }
            _ => return Err(bad()),
        }
    }
    Ok(steps)
}

fn json_at<'a>(json: &'a serde_json::Value, path: &str) -> Result<Option<&'a serde_json::Value>> {
    let mut cur = json;
    for step in json_path(path)? {
        let next = match (&step, cur) {
            (PathStep::Key(k), serde_json::Value::Object(m)) => m.get(k),
            (PathStep::Index(n), serde_json::Value::Array(a)) => a.get(*n),
            _ => None,
        };
        match next {
            Some(n) => cur = n,
            None => return Ok(None),
        }
    }
    Ok(Some(cur))
}

fn json_input(v: &Value) -> Result<serde_json::Value> {
    match v {
        Value::Json(j) => Ok(j.clone()),
        Value::String(s) => Ok(rowtree_types::parse_json(s)?),
        _ => Err(internal("JSON argument")),
    }
}

fn path_arg(args: &[Value]) -> Result<&str> {
    match args.get(1) {
        Some(p) => string(p),
        None => Ok("$"),
    }
}

fn json_scalar_text(j: &serde_json::Value) -> Option<String> {
    match j {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn eval_json_value(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let j = json_input(&args[0])?;
    Ok(json_at(&j, path_arg(args)?)?
        .and_then(json_scalar_text)
        .map_or(Value::Null, Value::String))
}

fn eval_json_query(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let j = json_input(&args[0])?;
    Ok(match (json_at(&j, path_arg(args)?)?, &args[0]) {
        (None, _) => Value::Null,
        (Some(v), Value::Json(_)) => Value::Json(v.clone()),
        (Some(v), _) => Value::String(v.to_string()),
    })
}

fn eval_json_query_array(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let j = json_input(&args[0])?;
    Ok(match (json_at(&j, path_arg(args)?)?, &args[0]) {
        (Some(serde_json::Value::Array(items)), Value::Json(_)) => {
            Value::Array(items.iter().cloned().map(Value::Json).collect())
        }
        (Some(serde_json::Value::Array(items)), _) => {
            Value::Array(items.iter().map(|i| Value::String(i.to_string())).collect())
        }
        _ => Value::Null,
    })
}

fn eval_json_value_array(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let j = json_input(&args[0])?;
    Ok(match json_at(&j, path_arg(args)?)? {
        Some(serde_json::Value::Array(items)) => {
            let mut out = Vec::new();
            for i in items {
                match i {
                    serde_json::Value::Null => out.push(Value::Null),
                    i => match json_scalar_text(i) {
                        Some(t) => out.push(Value::String(t)),
                        None => return Ok(Value::Null),
                    },
                }
            }
            Value::Array(out)
        }
        _ => Value::Null,
    })
}

fn eval_json_type(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let j = json_input(&args[0])?;
    Ok(Value::String(
        match j {
            serde_json::Value::Null => "null",
            serde_json::Value::Bool(_) => "boolean",
            serde_json::Value::Number(_) => "number",
            serde_json::Value::String(_) => "string",
            serde_json::Value::Array(_) => "array",
            serde_json::Value::Object(_) => "object",
        }
        .into(),
    ))
}

fn json_convert(args: &[Value], to: &str) -> Result<Value> {
    let j = json_input(&args[0])?;
    let bad = || oor(format!("The provided JSON input is not {to}"));
    Ok(match (to, &j) {
        ("a boolean", serde_json::Value::Bool(b)) => Value::Bool(*b),
        ("an integer", serde_json::Value::Number(n)) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => Value::Int64(i),
            (None, Some(f)) if f.fract() == 0.0 && f.abs() < 9.2e18 => Value::Int64(f as i64),
            _ => return Err(bad()),
        },
        ("a number", serde_json::Value::Number(n)) => Value::Float64(n.as_f64().ok_or_else(bad)?),
        ("a string", serde_json::Value::String(s)) => Value::String(s.clone()),
        _ => return Err(bad()),
    })
}

/// A JSON value for `TO_JSON`: structs become objects with positional
/// keys when their field names are not known to the value.
pub(crate) fn to_json(v: &Value, ty: Option<&Type>) -> Result<serde_json::Value> {
    let json = json_of(v, ty)?;
    // A JSON value inside an array or struct comes out one level deeper.
    rowtree_types::check_json_depth(&json)?;
    Ok(json)
}

fn json_of(v: &Value, ty: Option<&Type>) -> Result<serde_json::Value> {
    use serde_json::Value as J;
    Ok(match v {
        Value::Null => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Int64(i) => J::from(*i),
        Value::Float64(f) if !f.is_finite() => J::String(format_f64(*f)),
        Value::Float64(f) => J::from(*f),
        Value::Float32(f) => J::from(*f as f64),
        Value::Numeric(n) => {
            serde_json::from_str(&n.to_string()).unwrap_or(J::String(n.to_string()))
        }
        Value::String(s) => J::String(s.clone()),
        Value::Bytes(b) => J::String(base64::engine::general_purpose::STANDARD.encode(b)),
        Value::Date(d) => J::String(d.to_string()),
        Value::Timestamp(t) => J::String(t.to_rfc3339()),
        Value::Json(j) => j.clone(),
        Value::Array(items) => {
            let elem = match ty {
                Some(Type::Array(e)) => Some(&**e),
                _ => None,
            };
            J::Array(
                items
                    .iter()
                    .map(|i| json_of(i, elem))
                    .collect::<Result<_>>()?,
            )
        }
        Value::Struct(fields) => {
            let names: Vec<(String, Option<&Type>)> = match ty {
                Some(Type::Struct(f)) => f.iter().map(|(n, t)| (n.clone(), Some(t))).collect(),
                _ => (0..fields.len()).map(|_| (String::new(), None)).collect(),
            };
            let mut map = serde_json::Map::new();
            for (i, (v, (name, t))) in fields.iter().zip(names).enumerate() {
                let key = if name.is_empty() {
                    format!("_field_{}", i + 1)
                } else {
                    name
                };
                if !map.contains_key(&key) {
                    map.insert(key, json_of(v, t)?);
                }
            }
            J::Object(map)
        }
    })
}

fn check_any_one(args: &[Option<Type>], result: Type) -> Option<(Vec<Type>, Type)> {
    if args.len() != 1 {
        return None;
    }
    Some((vec![args[0].clone().unwrap_or(Type::Int64)], result))
}

// ---------------------------------------------------------------- hashes and bits

fn eval_hash(args: &[Value], algorithm: &str) -> Result<Value> {
    use sha2::Digest;
    let input = bytes_of(&args[0])?;
    Ok(Value::Bytes(match algorithm {
        "MD5" => md5::Md5::digest(input).to_vec(),
        "SHA1" => sha1::Sha1::digest(input).to_vec(),
        "SHA256" => sha2::Sha256::digest(input).to_vec(),
        _ => sha2::Sha512::digest(input).to_vec(),
    }))
}

fn eval_bit_count(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    Ok(Value::Int64(match &args[0] {
        Value::Int64(v) => v.count_ones() as i64,
        Value::Bytes(b) => b.iter().map(|x| x.count_ones() as i64).sum(),
        _ => return Err(internal("BIT_COUNT")),
    }))
}

/// `STRING(json)` (a JSON string's value) or `STRING(timestamp[,
/// time_zone])` (the timestamp as `CAST(... AS STRING)` writes it, in the
/// zone, by default America/Los_Angeles).
fn eval_string(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    match &args[0] {
        Value::Timestamp(t) => {
            let tz = match args.get(1) {
                Some(z) => zone_of(z)?,
                None => TimeZone::LOS_ANGELES,
            };
            Ok(Value::String(t.format_sql(&tz)))
        }
        _ => json_convert(args, "a string"),
    }
}

/// The JSON subscript and field access operators (`json['a']`, `json[0]`,
/// `json.a`), bound by the binder rather than looked up by name: the
/// member of an object by name, or the element of an array by position
/// from 0; SQL NULL when there is no such member or element.
pub(crate) static JSON_SUBSCRIPT: Function = deterministic(
    "JSON subscript",
    &[sig(&[V(J), V(S)], J), sig(&[V(J), V(I)], J)],
    eval_json_subscript,
);

fn eval_json_subscript(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let found = match (&args[0], &args[1]) {
        (Value::Json(serde_json::Value::Object(members)), Value::String(name)) => {
            members.get(name.as_str())
        }
        (Value::Json(serde_json::Value::Array(items)), Value::Int64(i)) => {
            usize::try_from(*i).ok().and_then(|i| items.get(i))
        }
        (Value::Json(_), Value::String(_) | Value::Int64(_)) => None,
        _ => return Err(internal("JSON subscript")),
    };
    Ok(found.map_or(Value::Null, |j| Value::Json(j.clone())))
}

// ---------------------------------------------------------------- the table

macro_rules! f {
    ($name:expr, [$($sig:expr),* $(,)?], $eval:expr) => {
        deterministic($name, &[$($sig),*], $eval)
    };
}

/// The library's functions (looked up after [`crate::functions::FUNCTIONS`]).
pub(crate) static LIBRARY: &[Function] = &[
    // strings
    f!("CHAR_LENGTH", [sig(&[V(S)], I)], |a, _| Ok(Value::Int64(string(&a[0])?.chars().count() as i64))),
    f!("CHARACTER_LENGTH", [sig(&[V(S)], I)], |a, _| Ok(Value::Int64(string(&a[0])?.chars().count() as i64))),
    f!("BYTE_LENGTH", [sig(&[V(S)], I), sig(&[V(B)], I)], |a, _| Ok(Value::Int64(bytes_of(&a[0])?.len() as i64))),
    f!("STRPOS", [sig(&[V(S), V(S)], I), sig(&[V(B), V(B)], I)], eval_strpos),
    f!("TRIM", [sig(&[V(S)], S), sig(&[V(S), V(S)], S), sig(&[V(B), V(B)], B)], |a, _| eval_trim(b'B', a)),
    f!("LTRIM", [sig(&[V(S)], S), sig(&[V(S), V(S)], S), sig(&[V(B), V(B)], B)], |a, _| eval_trim(b'L', a)),
    f!("RTRIM", [sig(&[V(S)], S), sig(&[V(S), V(S)], S), sig(&[V(B), V(B)], B)], |a, _| eval_trim(b'R', a)),
    f!("LPAD", [sig(&[V(S), V(I)], S), sig(&[V(S), V(I), V(S)], S), sig(&[V(B), V(I), V(B)], B)], |a, _| eval_pad(true, a)),
    f!("RPAD", [sig(&[V(S), V(I)], S), sig(&[V(S), V(I), V(S)], S), sig(&[V(B), V(I), V(B)], B)], |a, _| eval_pad(false, a)),
    f!("REPEAT", [sig(&[V(S), V(I)], S), sig(&[V(B), V(I)], B)], eval_repeat),
    f!("REPLACE", [sig(&[V(S), V(S), V(S)], S), sig(&[V(B), V(B), V(B)], B)], eval_replace),
    f!("REVERSE", [sig(&[V(S)], S), sig(&[V(B)], B)], |a, _| match &a[0] {
        Value::String(s) => Ok(Value::String(s.chars().rev().collect())),
        Value::Bytes(b) => Ok(Value::Bytes(b.iter().rev().copied().collect())),
        _ => Err(internal("REVERSE")),
    }),
    f!("SPLIT", [sig(&[V(S)], AS), sig(&[V(S), V(S)], AS), sig(&[V(B), V(B)], AB)], eval_split),
    f!("REGEXP_CONTAINS", [sig(&[V(S), V(S)], BO)], eval_regexp_contains),
    f!("REGEXP_EXTRACT", [sig(&[V(S), V(S)], S)], eval_regexp_extract),
    f!("REGEXP_EXTRACT_ALL", [sig(&[V(S), V(S)], AS)], eval_regexp_extract_all),
    f!("REGEXP_REPLACE", [sig(&[V(S), V(S), V(S)], S)], eval_regexp_replace),
    null_aware(generic("FORMAT", "FORMAT(STRING, ANY, ...)", |args| {
        match args.first()? {
            None | Some(Type::String) => {}
            _ => return None,
        }
        let mut params = vec![Type::String];
        params.extend(args[1..].iter().map(|a| a.clone().unwrap_or(Type::Int64)));
        Some((params, Type::String))
    }, eval_format)),
    f!("TO_BASE64", [sig(&[V(B)], S)], |a, _| Ok(Value::String(base64::engine::general_purpose::STANDARD.encode(bytes_of(&a[0])?)))),
    f!("FROM_BASE64", [sig(&[V(S)], B)], |a, _| {
        let s = string(&a[0])?;
        base64::engine::general_purpose::STANDARD
            .decode(s.trim())
            .map(Value::Bytes)
            .map_err(|_| oor(format!("Failed to decode invalid base64 string: \"{s}\"")))
    }),
    f!("TO_HEX", [sig(&[V(B)], S)], |a, _| Ok(Value::String(bytes_of(&a[0])?.iter().map(|b| format!("{b:02x}")).collect()))),
    f!("FROM_HEX", [sig(&[V(S)], B)], eval_from_hex),
    f!("SAFE_CONVERT_BYTES_TO_STRING", [sig(&[V(B)], S)], |a, _| Ok(Value::String(String::from_utf8_lossy(bytes_of(&a[0])?).into_owned()))),
    f!("CODE_POINTS_TO_STRING", [sig(&[V(AI)], S)], eval_code_points_to_string),
    f!("CODE_POINTS_TO_BYTES", [sig(&[V(AI)], B)], |a, _| {
        let mut out = Vec::new();
        for v in array(&a[0])? {
            match v {
                Value::Null => return Ok(Value::Null),
                Value::Int64(c) => out.push(u8::try_from(*c).map_err(|_| oor(format!("Invalid code point: {c}")))?),
                _ => return Err(internal("CODE_POINTS_TO_BYTES")),
            }
        }
        Ok(Value::Bytes(out))
    }),
    f!("TO_CODE_POINTS", [sig(&[V(S)], AI), sig(&[V(B)], AI)], eval_to_code_points),
    // math
    f!("SIGN", [sig(&[V(I)], I), sig(&[V(N)], N), sig(&[V(F)], F)], eval_sign),
    f!("DIV", [sig(&[V(I), V(I)], I), sig(&[V(N), V(N)], N)], eval_div),
    f!("ROUND", [sig(&[V(F)], F), sig(&[V(N)], N), sig(&[V(F), V(I)], F), sig(&[V(N), V(I)], N)], eval_round),
    f!("TRUNC", [sig(&[V(F)], F), sig(&[V(N)], N), sig(&[V(F), V(I)], F), sig(&[V(N), V(I)], N)], eval_trunc),
    f!("CEIL", [sig(&[V(F)], F), sig(&[V(N)], N)], eval_ceil),
    f!("CEILING", [sig(&[V(F)], F), sig(&[V(N)], N)], eval_ceil),
    f!("FLOOR", [sig(&[V(F)], F), sig(&[V(N)], N)], eval_floor),
    f!("SQRT", [sig(&[V(F)], F)], eval_sqrt),
    f!("POW", [sig(&[V(F), V(F)], F), sig(&[V(N), V(N)], N)], eval_pow),
    f!("POWER", [sig(&[V(F), V(F)], F), sig(&[V(N), V(N)], N)], eval_pow),
    f!("EXP", [sig(&[V(F)], F)], eval_exp),
    f!("LN", [sig(&[V(F)], F)], eval_ln),
    f!("LOG", [sig(&[V(F)], F), sig(&[V(F), V(F)], F)], eval_log),
    f!("LOG10", [sig(&[V(F)], F)], eval_log10),
    generic("GREATEST", "GREATEST(ANY, ...)", check_same_orderable, |a, _| greatest_least(a, true)),
    generic("LEAST", "LEAST(ANY, ...)", check_same_orderable, |a, _| greatest_least(a, false)),
    f!("IEEE_DIVIDE", [sig(&[V(F), V(F)], F)], eval_ieee_divide),
    f!("SAFE_DIVIDE", [sig(&[V(F), V(F)], F), sig(&[V(N), V(N)], N)], eval_safe_divide),
    f!("SAFE_ADD", [sig(&[V(I), V(I)], I), sig(&[V(N), V(N)], N), sig(&[V(F), V(F)], F)], |a, _| safe_arith('+', a)),
    f!("SAFE_SUBTRACT", [sig(&[V(I), V(I)], I), sig(&[V(N), V(N)], N), sig(&[V(F), V(F)], F)], |a, _| safe_arith('-', a)),
    f!("SAFE_MULTIPLY", [sig(&[V(I), V(I)], I), sig(&[V(N), V(N)], N), sig(&[V(F), V(F)], F)], |a, _| safe_arith('*', a)),
    f!("SAFE_NEGATE", [sig(&[V(I)], I), sig(&[V(N)], N), sig(&[V(F)], F)], |a, _| safe_arith('-', a)),
    f!("IS_NAN", [sig(&[V(F)], BO)], |a, _| Ok(Value::Bool(float(&a[0])?.is_nan()))),
    f!("IS_INF", [sig(&[V(F)], BO)], |a, _| Ok(Value::Bool(float(&a[0])?.is_infinite()))),
    // dates and times
    Function {
        name: "CURRENT_DATE",
        signatures: &[sig(&[], D), sig(&[V(S)], D)],
        volatility: Volatility::Volatile,
        advances_sequence: false,
        eval: eval_current_date,
        generic: None,
        handles_null: false,
    },
    f!("DATE_ADD", [sig(&[V(D), V(I), V(S)], D)], eval_date_add),
    f!("DATE_SUB", [sig(&[V(D), V(I), V(S)], D)], eval_date_sub),
    f!("DATE_DIFF", [sig(&[V(D), V(D), V(S)], I)], eval_date_diff),
    f!("DATE_TRUNC", [sig(&[V(D), V(S)], D)], eval_date_trunc),
    f!("TIMESTAMP_ADD", [sig(&[V(TS), V(I), V(S)], TS)], |a, _| timestamp_add(a, 1, "TIMESTAMP_ADD")),
    f!("TIMESTAMP_SUB", [sig(&[V(TS), V(I), V(S)], TS)], |a, _| timestamp_add(a, -1, "TIMESTAMP_SUB")),
    f!("TIMESTAMP_DIFF", [sig(&[V(TS), V(TS), V(S)], I)], eval_timestamp_diff),
    f!("TIMESTAMP_TRUNC", [sig(&[V(TS), V(S)], TS), sig(&[V(TS), V(S), V(S)], TS)], eval_timestamp_trunc),
    f!("FORMAT_TIMESTAMP", [sig(&[V(S), V(TS)], S), sig(&[V(S), V(TS), V(S)], S)], eval_format_timestamp),
    f!("FORMAT_DATE", [sig(&[V(S), V(D)], S)], eval_format_date),
    f!("PARSE_TIMESTAMP", [sig(&[V(S), V(S)], TS), sig(&[V(S), V(S), V(S)], TS)], eval_parse_timestamp),
    f!("PARSE_DATE", [sig(&[V(S), V(S)], D)], eval_parse_date),
    f!("UNIX_SECONDS", [sig(&[V(TS)], I)], |a, _| unix(a, 1_000_000_000)),
    f!("UNIX_MILLIS", [sig(&[V(TS)], I)], |a, _| unix(a, 1_000_000)),
    f!("UNIX_MICROS", [sig(&[V(TS)], I)], |a, _| unix(a, 1_000)),
    f!("TIMESTAMP_SECONDS", [sig(&[V(I)], TS)], |a, _| from_unix(a, 1_000_000_000, "TIMESTAMP_SECONDS")),
    f!("TIMESTAMP_MILLIS", [sig(&[V(I)], TS)], |a, _| from_unix(a, 1_000_000, "TIMESTAMP_MILLIS")),
    f!("TIMESTAMP_MICROS", [sig(&[V(I)], TS)], |a, _| from_unix(a, 1_000, "TIMESTAMP_MICROS")),
    f!("UNIX_DATE", [sig(&[V(D)], I)], |a, _| Ok(Value::Int64(date(&a[0])?.days() as i64))),
    f!("DATE_FROM_UNIX_DATE", [sig(&[V(I)], D)], |a, _| {
        let n = int(&a[0])?;
        i32::try_from(n)
            .ok()
            .and_then(Date::from_days)
            .map(Value::Date)
            .ok_or_else(|| oor(format!("Date is out of range: DATE_FROM_UNIX_DATE({n})")))
    }),
    // arrays
    generic("ARRAY_LENGTH", "ARRAY_LENGTH(ARRAY)", check_array_length, |a, _| Ok(Value::Int64(array(&a[0])?.len() as i64))),
    generic("ARRAY_CONCAT", "ARRAY_CONCAT(ARRAY, ...)", check_array_concat, |a, _| {
        let elements = a.iter().map(|v| array(v).map_or(0, |items| items.len())).sum();
        crate::check_output("ARRAY_CONCAT", 0, elements)?;
        let mut out = Vec::new();
        for v in a {
            out.extend(array(v)?.iter().cloned());
        }
        Ok(Value::Array(out))
    }),
    generic("ARRAY_REVERSE", "ARRAY_REVERSE(ARRAY)", check_array_same, |a, _| Ok(Value::Array(array(&a[0])?.iter().rev().cloned().collect()))),
    generic("ARRAY_TO_STRING", "ARRAY_TO_STRING(ARRAY<STRING>, STRING[, STRING]); ARRAY_TO_STRING(ARRAY<BYTES>, BYTES[, BYTES])", check_array_to_string, eval_array_to_string),
    generic("ARRAY_INCLUDES", "ARRAY_INCLUDES(ARRAY<T>, T)", check_array_includes, |a, _| {
        Ok(Value::Bool(array(&a[0])?.iter().any(|v| {
            crate::compare::sql_compare(crate::bound::CmpOp::Eq, v, &a[1]) == Some(true)
        })))
    }),
    generic("ARRAY_MIN", "ARRAY_MIN(ARRAY)", check_array_element, |a, _| {
        let items: Vec<Value> = array(&a[0])?.iter().filter(|v| !v.is_null()).cloned().collect();
        greatest_least(&items, false)
    }),
    generic("ARRAY_MAX", "ARRAY_MAX(ARRAY)", check_array_element, |a, _| {
        let items: Vec<Value> = array(&a[0])?.iter().filter(|v| !v.is_null()).cloned().collect();
        greatest_least(&items, true)
    }),
    generic("GENERATE_ARRAY", "GENERATE_ARRAY(INT64, INT64[, INT64]); GENERATE_ARRAY(NUMERIC, NUMERIC[, NUMERIC]); GENERATE_ARRAY(FLOAT64, FLOAT64[, FLOAT64])", check_generate_array, eval_generate_array),
    f!("GENERATE_DATE_ARRAY", [sig(&[V(D), V(D)], Scalar::ArrayDate), sig(&[V(D), V(D), V(I), V(S)], Scalar::ArrayDate)], eval_generate_date_array),
    // JSON
    f!("JSON_VALUE", [sig(&[V(J)], S), sig(&[V(J), V(S)], S), sig(&[V(S)], S), sig(&[V(S), V(S)], S)], eval_json_value),
    f!("JSON_QUERY", [sig(&[V(J), V(S)], J), sig(&[V(S), V(S)], S)], eval_json_query),
    f!("JSON_QUERY_ARRAY", [sig(&[V(J)], AJ), sig(&[V(J), V(S)], AJ), sig(&[V(S)], AS), sig(&[V(S), V(S)], AS)], eval_json_query_array),
    f!("JSON_VALUE_ARRAY", [sig(&[V(J)], AS), sig(&[V(J), V(S)], AS), sig(&[V(S)], AS), sig(&[V(S), V(S)], AS)], eval_json_value_array),
    f!("PARSE_JSON", [sig(&[V(S)], J)], |a, _| Ok(Value::Json(rowtree_types::parse_json(string(&a[0])?)?))),
    f!("JSON_TYPE", [sig(&[V(J)], S)], eval_json_type),
    f!("BOOL", [sig(&[V(J)], BO)], |a, _| json_convert(a, "a boolean")),
    f!("INT64", [sig(&[V(J)], I)], |a, _| json_convert(a, "an integer")),
    f!("FLOAT64", [sig(&[V(J)], F)], |a, _| json_convert(a, "a number")),
    f!("STRING", [sig(&[V(J)], S), sig(&[V(TS)], S), sig(&[V(TS), V(S)], S)], eval_string),
    null_aware(generic("TO_JSON", "TO_JSON(ANY)", |a| check_any_one(a, Type::Json), |a, _| Ok(Value::Json(to_json(&a[0], None)?)))),
    null_aware(generic("TO_JSON_STRING", "TO_JSON_STRING(ANY)", |a| check_any_one(a, Type::String), |a, _| Ok(Value::String(to_json(&a[0], None)?.to_string())))),
    // hashes and bits
    f!("MD5", [sig(&[V(S)], B), sig(&[V(B)], B)], |a, _| eval_hash(a, "MD5")),
    f!("SHA1", [sig(&[V(S)], B), sig(&[V(B)], B)], |a, _| eval_hash(a, "SHA1")),
    f!("SHA256", [sig(&[V(S)], B), sig(&[V(B)], B)], |a, _| eval_hash(a, "SHA256")),
    f!("SHA512", [sig(&[V(S)], B), sig(&[V(B)], B)], |a, _| eval_hash(a, "SHA512")),
    f!("BIT_COUNT", [sig(&[V(I)], I), sig(&[V(B)], I)], eval_bit_count),
];
