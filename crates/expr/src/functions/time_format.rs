//! `FORMAT_TIMESTAMP`, `FORMAT_DATE`, `PARSE_TIMESTAMP` and `PARSE_DATE`:
//! GoogleSQL's strftime-style format strings, translated to chrono's (the
//! GoogleSQL-only specifiers such as `%E*S` and `%Q` are expanded here).

use chrono::{Datelike, NaiveDateTime, NaiveTime, Timelike};
use rowtree_types::{Date, TimeZone, Timestamp, Value};

use super::args::{internal, oor, string, timestamp};
use crate::datetime::{civil_of, zone_of};
use crate::{EvalContext, Result};

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

pub(super) fn eval_format_timestamp(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
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

pub(super) fn eval_format_date(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
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

pub(super) fn eval_parse_timestamp(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let (civil, offset) = strptime(string(&args[0])?, string(&args[1])?)?;
    let tz = match (offset, args.get(2)) {
        (Some(o), _) => TimeZone::fixed(o).ok_or_else(|| oor("Invalid offset"))?,
        (None, Some(z)) => zone_of(z)?,
        (None, None) => TimeZone::LOS_ANGELES,
    };
    Ok(Value::Timestamp(Timestamp::from_civil(civil, &tz)?))
}

pub(super) fn eval_parse_date(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let (civil, _) = strptime(string(&args[0])?, string(&args[1])?)?;
    Date::from_naive_date(civil.date())
        .map(Value::Date)
        .ok_or_else(|| oor(format!("Date is out of range: {}", civil.date())))
}
