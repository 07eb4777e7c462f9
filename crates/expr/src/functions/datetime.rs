//! DATE and TIMESTAMP functions: construction (`DATE`, `TIMESTAMP`,
//! `TIMESTAMP_SECONDS`...), arithmetic (`DATE_ADD`, `TIMESTAMP_DIFF`...),
//! truncation, `CURRENT_DATE` and the Unix epoch conversions. Formatting and
//! parsing with format strings are in [`time_format`](super::time_format).
//!
//! Date-part arguments (`DATE_TRUNC(d, MONTH)`, `INTERVAL 3 DAY`) reach
//! these functions as upper-case STRING arguments: the binder rewrites
//! `INTERVAL n unit` into the two arguments `n, 'UNIT'` and a part name
//! into `'PART'`. Without a time zone argument, civil time is
//! America/Los_Angeles, Spanner's default.

use chrono::{Datelike, Duration, NaiveDate, NaiveTime, Timelike};
use rowtree_types::{Date, TimeZone, Timestamp, Value};

use super::args::{date, int, internal, oor, string, timestamp};
use crate::datetime::{zone_of, DatePart};
use crate::{Error, EvalContext, Result};

pub(super) fn eval_timestamp(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let zone = match args.get(1) {
        None => TimeZone::LOS_ANGELES,
        Some(Value::String(z)) => TimeZone::parse(z)?,
        Some(_) => return Err(internal("TIMESTAMP")),
    };
    match &args[0] {
        Value::Date(d) => Ok(Value::Timestamp(Timestamp::from_date(*d, &zone)?)),
        Value::String(s) => Ok(Value::Timestamp(Timestamp::parse(s, &zone)?)),
        _ => Err(internal("TIMESTAMP")),
    }
}

pub(super) fn part_of(v: &Value, function: &str) -> Result<DatePart> {
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

pub(super) fn date_add(d: Date, n: i64, unit: DatePart) -> Result<Date> {
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

pub(super) fn eval_date_add(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    Ok(Value::Date(date_add(
        date(&args[0])?,
        int(&args[1])?,
        part_of(&args[2], "DATE_ADD")?,
    )?))
}

pub(super) fn eval_date_sub(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
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

pub(super) fn eval_date_trunc(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let d = trunc_date(
        date(&args[0])?.to_naive_date(),
        part_of(&args[1], "DATE_TRUNC")?,
    )?;
    Date::from_naive_date(d)
        .map(Value::Date)
        .ok_or_else(|| oor("DATE_TRUNC result out of range"))
}

pub(super) fn eval_date_diff(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
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

pub(super) fn timestamp_add(args: &[Value], sign: i128, function: &str) -> Result<Value> {
    let t = timestamp(&args[0])?;
    let n = int(&args[1])? as i128 * sign;
    let unit = nanos_per(part_of(&args[2], function)?, function)?;
    t.checked_add_nanos(n * unit)
        .map(Value::Timestamp)
        .ok_or_else(|| oor(format!("TIMESTAMP overflow in {function}")))
}

pub(super) fn eval_timestamp_diff(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let (a, b) = (timestamp(&args[0])?, timestamp(&args[1])?);
    let unit = nanos_per(part_of(&args[2], "TIMESTAMP_DIFF")?, "TIMESTAMP_DIFF")?;
    i64::try_from((a.nanos() - b.nanos()) / unit)
        .map(Value::Int64)
        .map_err(|_| oor("int64 overflow in TIMESTAMP_DIFF"))
}

pub(super) fn eval_timestamp_trunc(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
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

pub(super) fn eval_current_date(args: &[Value], ctx: &mut dyn EvalContext) -> Result<Value> {
    let tz = match args.first() {
        Some(z) => zone_of(z)?,
        None => TimeZone::LOS_ANGELES,
    };
    Ok(Value::Date(ctx.now().to_date(&tz)?))
}

pub(super) fn unix(args: &[Value], per: i128) -> Result<Value> {
    Ok(Value::Int64(
        timestamp(&args[0])?.nanos().div_euclid(per) as i64
    ))
}

pub(super) fn from_unix(args: &[Value], per: i128, name: &str) -> Result<Value> {
    let n = int(&args[0])?;
    (n as i128)
        .checked_mul(per)
        .and_then(Timestamp::from_nanos)
        .map(Value::Timestamp)
        .ok_or_else(|| oor(format!("Timestamp is out of range: {name}({n})")))
}

/// `DATE(timestamp[, zone])`, `DATE(year, month, day)` or `DATE(date)`.
pub(super) fn eval_date(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    match args {
        [Value::Date(d)] => Ok(Value::Date(*d)),
        [Value::Int64(y), Value::Int64(m), Value::Int64(d)] => {
            let date = (|| {
                Date::from_ymd(
                    i32::try_from(*y).ok()?,
                    u32::try_from(*m).ok()?,
                    u32::try_from(*d).ok()?,
                )
            })();
            date.map(Value::Date)
                .ok_or_else(|| Error::out_of_range(format!("Invalid date: DATE({y}, {m}, {d})")))
        }
        [Value::Timestamp(t)] => Ok(Value::Date(t.to_date(&TimeZone::LOS_ANGELES)?)),
        [Value::Timestamp(t), Value::String(zone)] => {
            Ok(Value::Date(t.to_date(&TimeZone::parse(zone)?)?))
        }
        _ => Err(internal("DATE")),
    }
}

pub(super) fn eval_unix_date(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    Ok(Value::Int64(date(&args[0])?.days() as i64))
}

pub(super) fn eval_date_from_unix_date(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let n = int(&args[0])?;
    i32::try_from(n)
        .ok()
        .and_then(Date::from_days)
        .map(Value::Date)
        .ok_or_else(|| oor(format!("Date is out of range: DATE_FROM_UNIX_DATE({n})")))
}
