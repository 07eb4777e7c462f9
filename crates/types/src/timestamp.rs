//! `TIMESTAMP`: an instant with nanosecond precision over Spanner's full range.
//!
//! The value is an absolute instant (nanoseconds since the Unix epoch, UTC),
//! held in an `i128` because 0001-01-01..9999-12-31 in nanoseconds does not fit
//! an `i64`. Zones only enter when text is involved (see [`TimeZone`]):
//!
//! | text form | produced by | example |
//! |---|---|---|
//! | GoogleSQL literal / string | [`Timestamp::parse`] | `2016-01-25 10:10:10.555555-05:00` |
//! | RFC 3339, UTC (wire, REST, commit timestamps) | [`Timestamp::to_rfc3339`] | `2016-01-25T15:10:10.555555Z` |
//! | `CAST(ts AS STRING)` | [`Timestamp::format_sql`] | `2016-01-25 07:10:10.555555-08` |

use std::fmt;

use chrono::{Datelike, NaiveDateTime, NaiveTime};

use crate::date::{naive_from_epoch_days, parse_ymd};
use crate::time_zone::parse_offset;
use crate::{Date, Error, Result, TimeZone};

const NANOS_PER_SECOND: i128 = 1_000_000_000;
const SECONDS_PER_DAY: i128 = 86_400;
const NANOS_PER_DAY: i128 = SECONDS_PER_DAY * NANOS_PER_SECOND;

/// Nanoseconds since 1970-01-01T00:00:00Z. Always within
/// [`Timestamp::MIN`]..=[`Timestamp::MAX`] when built through the checked
/// constructors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(i128);

impl Timestamp {
    /// 0001-01-01T00:00:00Z.
    pub const MIN: Timestamp = Timestamp(-62_135_596_800 * 1_000_000_000);
    /// 9999-12-31T23:59:59.999999999Z.
    pub const MAX: Timestamp = Timestamp(253_402_300_799 * 1_000_000_000 + 999_999_999);
    /// 1970-01-01T00:00:00Z.
    pub const UNIX_EPOCH: Timestamp = Timestamp(0);
    /// A marker outside the valid range that stands for "the commit
    /// timestamp of this transaction" (Spanner's `PENDING_COMMIT_TIMESTAMP()`
    /// and `spanner.commit_timestamp()`) until the commit timestamp is
    /// known. No parse or arithmetic produces it; the database replaces it
    /// before anything is stored.
    pub const PENDING_COMMIT: Timestamp = Timestamp(i128::MAX);

    /// A timestamp from nanoseconds since the Unix epoch; `None` outside
    /// Spanner's range.
    pub fn from_nanos(nanos: i128) -> Option<Timestamp> {
        (Self::MIN.0..=Self::MAX.0)
            .contains(&nanos)
            .then_some(Timestamp(nanos))
    }

    /// Nanoseconds since the Unix epoch.
    pub fn nanos(self) -> i128 {
        self.0
    }

    /// Whole seconds since the epoch (floor) and the nanosecond remainder
    /// (0..1e9), as protobuf's `Timestamp` wants them.
    pub fn to_seconds_nanos(self) -> (i64, u32) {
        let secs = self.0.div_euclid(1_000_000_000) as i64;
        let nanos = self.0.rem_euclid(1_000_000_000) as u32;
        (secs, nanos)
    }

    /// The inverse of [`Timestamp::to_seconds_nanos`].
    pub fn from_seconds_nanos(secs: i64, nanos: u32) -> Option<Timestamp> {
        Self::from_nanos(secs as i128 * 1_000_000_000 + nanos as i128)
    }

    /// The current time of the system clock. Statement evaluation should get
    /// its clock from its context instead, so tests can fix it.
    pub fn now() -> Timestamp {
        let nanos = match std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
            Ok(d) => d.as_nanos() as i128,
            Err(before) => -(before.duration().as_nanos() as i128),
        };
        Timestamp(nanos.clamp(Self::MIN.0, Self::MAX.0))
    }

    /// This instant moved by `nanos`; `None` if that leaves the range.
    pub fn checked_add_nanos(self, nanos: i128) -> Option<Timestamp> {
        self.0.checked_add(nanos).and_then(Timestamp::from_nanos)
    }

    /// Midnight starting `date` in `tz` (GoogleSQL `TIMESTAMP(date)` and
    /// `CAST(date AS TIMESTAMP)`, which use the default zone).
    pub fn from_date(date: Date, tz: &TimeZone) -> Result<Timestamp> {
        let local = date.to_naive().and_time(NaiveTime::MIN);
        let offset = tz.offset_for_local(&local) as i128;
        let nanos = date.days() as i128 * NANOS_PER_DAY - offset * NANOS_PER_SECOND;
        Timestamp::from_nanos(nanos).ok_or_else(|| out_of_range(&date.to_string()))
    }

    /// The civil date of this instant in `tz` (GoogleSQL `DATE(ts)`).
    pub fn to_date(self, tz: &TimeZone) -> Result<Date> {
        let (local, _) = self.local(tz);
        Date::from_naive(local.date())
            .ok_or_else(|| Error::OutOfRange(format!("Date is out of range: {local}")))
    }

    /// Parses a GoogleSQL timestamp string or literal:
    ///
    /// ```text
    /// YYYY-[M]M-[D]D[( |T)[H]H:[M]M:[S]S[.F{1,9}]][zone]
    /// zone: Z | {+|-}H[H][[:]MM] | <space> IANA name (America/Los_Angeles, UTC)
    /// ```
    ///
    /// Without a zone the civil time is read in `default_tz` (Spanner's default
    /// is [`TimeZone::LOS_ANGELES`]). A numeric offset must follow the time
    /// directly: like Spanner, `12:34:56 -07:00` is refused.
    pub fn parse(text: &str, default_tz: &TimeZone) -> Result<Timestamp> {
        let bad = || Error::InvalidArgument(format!("Invalid timestamp: '{text}'"));
        let s = text.trim();
        let date_end = s
            .find(|c: char| !(c.is_ascii_digit() || c == '-'))
            .unwrap_or(s.len());
        let (year, month, day) = parse_ymd(&s[..date_end]).ok_or_else(bad)?;
        let date = chrono::NaiveDate::from_ymd_opt(year, month, day).ok_or_else(bad)?;
        let mut rest = &s[date_end..];

        // Optional time of day.
        let mut time = NaiveTime::MIN;
        let starts_time = rest.len() > 1
            && matches!(rest.as_bytes()[0], b'T' | b't' | b' ')
            && rest.as_bytes()[1].is_ascii_digit();
        if starts_time {
            let body = &rest[1..];
            let end = body
                .find(|c: char| !(c.is_ascii_digit() || c == ':' || c == '.'))
                .unwrap_or(body.len());
            time = parse_time(&body[..end]).ok_or_else(bad)?;
            rest = &body[end..];
        }

        // Optional zone.
        let tz = if rest.is_empty() {
            *default_tz
        } else if let Some(name) = rest.strip_prefix([' ', '\t']) {
            let name = name.trim_start();
            if name.starts_with(['+', '-']) || name.is_empty() {
                return Err(bad());
            }
            TimeZone::parse(name).map_err(|_| bad())?
        } else if rest == "Z" || rest == "z" {
            TimeZone::UTC
        } else {
            parse_offset(rest)
                .and_then(TimeZone::fixed)
                .ok_or_else(bad)?
        };

        let local = date.and_time(time);
        let offset = tz.offset_for_local(&local) as i128;
        let days = Date::from_naive(date)
            .ok_or_else(|| out_of_range(text))?
            .days() as i128;
        let secs_of_day = chrono::Timelike::num_seconds_from_midnight(&time) as i128;
        let nanos = (days * SECONDS_PER_DAY + secs_of_day - offset) * NANOS_PER_SECOND
            + chrono::Timelike::nanosecond(&time) as i128;
        Timestamp::from_nanos(nanos).ok_or_else(|| out_of_range(text))
    }

    /// RFC 3339 in UTC, the form of Spanner's wire protocol and REST API:
    /// `2016-01-25T15:10:10.555555Z`.
    ///
    /// The fraction keeps only the digits it needs (all trailing zeros
    /// trimmed, so 0 to 9 digits: `...10Z`, `...10.5Z`, `...10.000001Z`), as
    /// Spanner and its emulator print commit timestamps. Every client parses
    /// any number of digits.
    pub fn to_rfc3339(self) -> String {
        if self == Timestamp::PENDING_COMMIT {
            return "spanner.commit_timestamp()".to_string();
        }
        let (local, _) = self.local(&TimeZone::UTC);
        let mut out = format_civil(&local);
        let frac = self.0.rem_euclid(NANOS_PER_SECOND) as u32;
        if frac != 0 {
            let digits = format!("{frac:09}");
            out.push('.');
            out.push_str(digits.trim_end_matches('0'));
        }
        out.replace_range(10..11, "T");
        out.push('Z');
        out
    }

    /// GoogleSQL's `CAST(ts AS STRING)` in zone `tz`:
    /// `2016-01-25 07:10:10.555555-08`.
    ///
    /// The fraction is trimmed in groups of three digits (0, 3, 6 or 9); the
    /// offset is `±hh` when whole hours, else `±hh:mm` (an offset with
    /// seconds, such as Los Angeles' 1883 local mean time, is truncated to
    /// minutes in the text, as absl does).
    pub fn format_sql(self, tz: &TimeZone) -> String {
        if self == Timestamp::PENDING_COMMIT {
            return "PENDING_COMMIT_TIMESTAMP()".to_string();
        }
        let (local, offset) = self.local(tz);
        let mut out = format_civil(&local);
        let frac = self.0.rem_euclid(NANOS_PER_SECOND) as u32;
        if frac != 0 {
            // Keep the significant digits, rounded up to a group of three.
            let all = format!("{frac:09}");
            let significant = all.trim_end_matches('0').len();
            let digits = &all[..significant.div_ceil(3) * 3];
            out.push('.');
            out.push_str(digits);
        }
        let sign = if offset < 0 { '-' } else { '+' };
        let abs = offset.unsigned_abs();
        let (hours, minutes) = (abs / 3600, abs / 60 % 60);
        if minutes == 0 {
            out.push_str(&format!("{sign}{hours:02}"));
        } else {
            out.push_str(&format!("{sign}{hours:02}:{minutes:02}"));
        }
        out
    }

    /// The civil date-time of this instant in `tz`, with its nanoseconds,
    /// and the offset from UTC in seconds in effect there (for `EXTRACT`,
    /// `FORMAT_TIMESTAMP`, `TIMESTAMP_TRUNC`).
    pub fn to_civil(self, tz: &TimeZone) -> (NaiveDateTime, i32) {
        let (local, offset) = self.local(tz);
        let frac = self.0.rem_euclid(NANOS_PER_SECOND) as u32;
        (
            chrono::Timelike::with_nanosecond(&local, frac).unwrap_or(local),
            offset,
        )
    }

    /// The instant of the civil date-time `local` in `tz` (a skipped or
    /// repeated local time resolves as [`Timestamp::parse`] does); an error
    /// outside Spanner's range.
    pub fn from_civil(local: NaiveDateTime, tz: &TimeZone) -> Result<Timestamp> {
        let offset = tz.offset_for_local(&local) as i128;
        let days = local.date().num_days_from_ce() as i128 - 719_163;
        let time = local.time();
        let secs_of_day = chrono::Timelike::num_seconds_from_midnight(&time) as i128;
        let nanos = (days * SECONDS_PER_DAY + secs_of_day - offset) * NANOS_PER_SECOND
            + chrono::Timelike::nanosecond(&time).min(999_999_999) as i128;
        Timestamp::from_nanos(nanos).ok_or_else(|| out_of_range(&format_civil(&local)))
    }

    /// The civil date-time (nanoseconds dropped) of this instant in `tz`,
    /// and the offset in seconds used.
    fn local(self, tz: &TimeZone) -> (NaiveDateTime, i32) {
        let utc = civil_from_nanos(self.0.div_euclid(NANOS_PER_SECOND) * NANOS_PER_SECOND);
        let offset = tz.offset_at_utc(&utc);
        let local_secs = self.0.div_euclid(NANOS_PER_SECOND) + offset as i128;
        (civil_from_nanos(local_secs * NANOS_PER_SECOND), offset)
    }
}

impl fmt::Display for Timestamp {
    /// RFC 3339 in UTC ([`Timestamp::to_rfc3339`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_rfc3339())
    }
}

fn out_of_range(text: &str) -> Error {
    Error::OutOfRange(format!("Timestamp is out of range: '{text}'"))
}

/// `[H]H:[M]M:[S]S[.F{1,9}]`.
fn parse_time(text: &str) -> Option<NaiveTime> {
    let (hms, frac) = match text.split_once('.') {
        Some((hms, frac)) => (hms, Some(frac)),
        None => (text, None),
    };
    let mut parts = hms.split(':');
    let mut field = |max: u32| -> Option<u32> {
        let p = parts.next()?;
        if p.is_empty() || p.len() > 2 || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        p.parse().ok().filter(|v| *v <= max)
    };
    let (h, m, s) = (field(23)?, field(59)?, field(59)?);
    if parts.next().is_some() {
        return None;
    }
    let nanos = match frac {
        None => 0,
        Some(f) if (1..=9).contains(&f.len()) && f.bytes().all(|b| b.is_ascii_digit()) => {
            f.parse::<u32>().ok()? * 10u32.pow(9 - f.len() as u32)
        }
        Some(_) => return None,
    };
    NaiveTime::from_hms_nano_opt(h, m, s, nanos)
}

/// The civil (UTC-less) date-time `nanos` after the epoch; whole seconds are
/// kept. Works a little beyond [`Timestamp`]'s range, as zone shifts need.
fn civil_from_nanos(nanos: i128) -> NaiveDateTime {
    let days = nanos.div_euclid(NANOS_PER_DAY) as i64;
    let secs = (nanos.rem_euclid(NANOS_PER_DAY) / NANOS_PER_SECOND) as u32;
    let date = naive_from_epoch_days(days).unwrap_or(chrono::NaiveDate::MIN);
    let time = NaiveTime::from_num_seconds_from_midnight_opt(secs, 0).unwrap_or(NaiveTime::MIN);
    date.and_time(time)
}

/// `YYYY-MM-DD HH:MM:SS`, with a four-digit year (year 0 can appear when a
/// zone shifts 0001-01-01 backwards).
fn format_civil(t: &NaiveDateTime) -> String {
    use chrono::{Datelike, Timelike};
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        t.year(),
        t.month(),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    )
}
