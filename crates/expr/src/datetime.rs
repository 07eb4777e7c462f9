//! Date and time parts: `EXTRACT`, and the parts of `DATE_TRUNC` and
//! friends.
//!
//! A `TIMESTAMP` is an instant; its parts are those of its civil time in a
//! zone (the `AT TIME ZONE` argument, else Spanner's default
//! `America/Los_Angeles`). A `DATE` has only calendar parts.

use chrono::{Datelike, NaiveDateTime, Timelike};
use rowtree_types::{Date, TimeZone, Value};

use crate::{Error, Result};

/// A date or time part, as written in `EXTRACT(part FROM ..)` or as the
/// unit of `DATE_TRUNC`, `TIMESTAMP_DIFF`, ...
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum DatePart {
    Nanosecond,
    Microsecond,
    Millisecond,
    Second,
    Minute,
    Hour,
    DayOfWeek,
    Day,
    DayOfYear,
    Week,
    IsoWeek,
    Month,
    Quarter,
    Year,
    IsoYear,
    /// `EXTRACT(DATE FROM ts)`.
    Date,
}

impl DatePart {
    /// Parses an upper-case part name.
    pub(crate) fn parse(upper: &str) -> Option<DatePart> {
        Some(match upper {
            "NANOSECOND" => DatePart::Nanosecond,
            "MICROSECOND" => DatePart::Microsecond,
            "MILLISECOND" => DatePart::Millisecond,
            "SECOND" => DatePart::Second,
            "MINUTE" => DatePart::Minute,
            "HOUR" => DatePart::Hour,
            "DAYOFWEEK" => DatePart::DayOfWeek,
            "DAY" => DatePart::Day,
            "DAYOFYEAR" => DatePart::DayOfYear,
            "WEEK" => DatePart::Week,
            "ISOWEEK" => DatePart::IsoWeek,
            "MONTH" => DatePart::Month,
            "QUARTER" => DatePart::Quarter,
            "YEAR" => DatePart::Year,
            "ISOYEAR" => DatePart::IsoYear,
            "DATE" => DatePart::Date,
            _ => return None,
        })
    }

    /// The name as written in SQL.
    #[allow(dead_code)]
    pub(crate) fn name(self) -> &'static str {
        match self {
            DatePart::Nanosecond => "NANOSECOND",
            DatePart::Microsecond => "MICROSECOND",
            DatePart::Millisecond => "MILLISECOND",
            DatePart::Second => "SECOND",
            DatePart::Minute => "MINUTE",
            DatePart::Hour => "HOUR",
            DatePart::DayOfWeek => "DAYOFWEEK",
            DatePart::Day => "DAY",
            DatePart::DayOfYear => "DAYOFYEAR",
            DatePart::Week => "WEEK",
            DatePart::IsoWeek => "ISOWEEK",
            DatePart::Month => "MONTH",
            DatePart::Quarter => "QUARTER",
            DatePart::Year => "YEAR",
            DatePart::IsoYear => "ISOYEAR",
            DatePart::Date => "DATE",
        }
    }

    /// Whether `EXTRACT(part FROM date)` is defined.
    pub(crate) fn applies_to_date(self) -> bool {
        matches!(
            self,
            DatePart::DayOfWeek
                | DatePart::Day
                | DatePart::DayOfYear
                | DatePart::Week
                | DatePart::IsoWeek
                | DatePart::Month
                | DatePart::Quarter
                | DatePart::Year
                | DatePart::IsoYear
        )
    }
}

/// The zone of an `AT TIME ZONE` / zone argument; the empty string means
/// Spanner's default zone.
pub(crate) fn zone_of(v: &Value) -> Result<TimeZone> {
    match v {
        Value::String(s) if s.is_empty() => Ok(TimeZone::LOS_ANGELES),
        Value::String(s) => Ok(TimeZone::parse(s)?),
        _ => Err(Error::invalid("internal error: time zone is not a string")),
    }
}

/// The civil date-time of a DATE or TIMESTAMP value (a DATE at midnight).
pub(crate) fn civil_of(v: &Value, tz: &TimeZone) -> Result<NaiveDateTime> {
    match v {
        Value::Date(d) => Ok(d.to_naive_date().and_time(chrono::NaiveTime::MIN)),
        Value::Timestamp(t) => Ok(t.to_civil(tz).0),
        _ => Err(Error::invalid(
            "internal error: EXTRACT of a value that is not DATE or TIMESTAMP",
        )),
    }
}

/// Week of the year with weeks starting on Sunday; days before the year's
/// first Sunday are in week 0.
pub(crate) fn sunday_week(d: &chrono::NaiveDate) -> u32 {
    let yday0 = d.ordinal0();
    let wday0 = d.weekday().num_days_from_sunday();
    (yday0 + 7 - wday0) / 7
}

/// `EXTRACT(part FROM v [AT TIME ZONE tz])` for non-NULL `v` and `tz`.
pub(crate) fn extract(part: DatePart, v: &Value, tz: &Value) -> Result<Value> {
    let zone = zone_of(tz)?;
    let civil = civil_of(v, &zone)?;
    let d = civil.date();
    let n = match part {
        DatePart::Nanosecond => civil.nanosecond() as i64,
        DatePart::Microsecond => (civil.nanosecond() / 1_000) as i64,
        DatePart::Millisecond => (civil.nanosecond() / 1_000_000) as i64,
        DatePart::Second => civil.second() as i64,
        DatePart::Minute => civil.minute() as i64,
        DatePart::Hour => civil.hour() as i64,
        DatePart::DayOfWeek => d.weekday().number_from_sunday() as i64,
        DatePart::Day => d.day() as i64,
        DatePart::DayOfYear => d.ordinal() as i64,
        DatePart::Week => sunday_week(&d) as i64,
        DatePart::IsoWeek => d.iso_week().week() as i64,
        DatePart::Month => d.month() as i64,
        DatePart::Quarter => (d.month() as i64 - 1) / 3 + 1,
        DatePart::Year => d.year() as i64,
        DatePart::IsoYear => d.iso_week().year() as i64,
        DatePart::Date => {
            return Date::from_naive_date(d)
                .map(Value::Date)
                .ok_or_else(|| Error::out_of_range(format!("Date is out of range: {d}")))
        }
    };
    Ok(Value::Int64(n))
}
