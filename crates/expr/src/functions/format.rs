//! GoogleSQL `FORMAT(format_string, ...)`: printf-style formatting of any
//! argument types. It is generic (any argument after the first) and
//! NULL-aware: `%t` and `%T` print a NULL argument as `NULL`; under any
//! other specifier a NULL argument, like a NULL format, makes the result
//! NULL.

use rowtree_types::{format_f64, Type, Value};

use super::args::{float, oor, string};
use crate::{EvalContext, Result};

/// GoogleSQL `FORMAT`: `%d %i %s %f %e %g %x %X %o %t %T %%` with optional
/// `-`/`0` flags, width and precision.
pub(super) fn eval_format(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
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

/// `FORMAT(STRING, ANY, ...)`: the format is a STRING (or an untyped
/// NULL), every other argument keeps its type (an untyped NULL is INT64).
pub(super) fn check_format(args: &[Option<Type>]) -> Option<(Vec<Type>, Type)> {
    match args.first()? {
        None | Some(Type::String) => {}
        _ => return None,
    }
    let mut params = vec![Type::String];
    params.extend(args[1..].iter().map(|a| a.clone().unwrap_or(Type::Int64)));
    Some((params, Type::String))
}
