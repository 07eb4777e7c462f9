//! `DATE`: a calendar day, 0001-01-01 to 9999-12-31.
//!
//! Stored as days since 1970-01-01 so that ordering, equality and day
//! arithmetic are integer operations; chrono does the calendar (leap years)
//! when a date meets text.

use std::fmt;

use chrono::{Datelike, NaiveDate};

use crate::{Error, Result};

/// Days since 1970-01-01 (negative before).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date(i32);

/// Days from 0001-01-01 (day 1 of the common era) to 1970-01-01.
const EPOCH_DAYS_FROM_CE: i32 = 719_163;

impl Date {
    /// 0001-01-01.
    pub const MIN: Date = Date(-719_162);
    /// 9999-12-31.
    pub const MAX: Date = Date(2_932_896);

    /// A date from days since the epoch; `None` outside Spanner's range.
    pub fn from_days(days: i32) -> Option<Date> {
        (Self::MIN.0..=Self::MAX.0)
            .contains(&days)
            .then_some(Date(days))
    }

    /// Days since 1970-01-01.
    pub fn days(self) -> i32 {
        self.0
    }

    /// The date of a year, month (1-12) and day (1-31); `None` if no such
    /// day exists or it is outside 0001-01-01..=9999-12-31.
    pub fn from_ymd(year: i32, month: u32, day: u32) -> Option<Date> {
        NaiveDate::from_ymd_opt(year, month, day).and_then(Date::from_naive)
    }

    /// The year, month (1-12) and day (1-31).
    pub fn ymd(self) -> (i32, u32, u32) {
        let d = self.to_naive();
        (d.year(), d.month(), d.day())
    }

    /// Parses GoogleSQL's date text, `YYYY-[M]M-[D]D` (e.g. `2024-02-29`,
    /// `2024-2-9`), surrounding whitespace allowed.
    pub fn parse(text: &str) -> Result<Date> {
        let bad = || Error::InvalidArgument(format!("Invalid date: '{text}'"));
        let (year, month, day) = parse_ymd(text.trim()).ok_or_else(bad)?;
        match NaiveDate::from_ymd_opt(year, month, day) {
            None => Err(bad()),
            Some(d) => Date::from_naive(d)
                .ok_or_else(|| Error::OutOfRange(format!("Date is out of range: '{text}'"))),
        }
    }

    /// The date of a chrono [`NaiveDate`]; `None` outside Spanner's range.
    pub fn from_naive_date(d: NaiveDate) -> Option<Date> {
        Date::from_naive(d)
    }

    /// This date as a chrono [`NaiveDate`] (for calendar computations).
    pub fn to_naive_date(self) -> NaiveDate {
        self.to_naive()
    }

    pub(crate) fn from_naive(d: NaiveDate) -> Option<Date> {
        Date::from_days(d.num_days_from_ce() - EPOCH_DAYS_FROM_CE)
    }

    pub(crate) fn to_naive(self) -> NaiveDate {
        naive_from_epoch_days(self.0 as i64).unwrap_or(NaiveDate::MIN)
    }
}

/// The civil date `days` after 1970-01-01, for any day chrono can represent
/// (wider than [`Date`]'s range, which time zone shifts can leave).
pub(crate) fn naive_from_epoch_days(days: i64) -> Option<NaiveDate> {
    let from_ce = i32::try_from(days + EPOCH_DAYS_FROM_CE as i64).ok()?;
    NaiveDate::from_num_days_from_ce_opt(from_ce)
}

/// Parses `YYYY-[M]M-[D]D` into numbers, without calendar validation.
pub(crate) fn parse_ymd(text: &str) -> Option<(i32, u32, u32)> {
    let mut parts = text.splitn(3, '-');
    let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
    let digits = |s: &str, min: usize, max: usize| {
        (min..=max).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit())
    };
    if !digits(y, 4, 4) || !digits(m, 1, 2) || !digits(d, 1, 2) {
        return None;
    }
    Some((y.parse().ok()?, m.parse().ok()?, d.parse().ok()?))
}

impl fmt::Display for Date {
    /// `YYYY-MM-DD`, the form of `CAST(date AS STRING)` and of the wire.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (y, m, d) = self.ymd();
        write!(f, "{y:04}-{m:02}-{d:02}")
    }
}
