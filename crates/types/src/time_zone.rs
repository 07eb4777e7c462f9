//! Time zones: how a `TIMESTAMP` (an absolute instant) meets civil time.
//!
//! A GoogleSQL `TIMESTAMP` has no zone; a zone only matters when text is
//! turned into an instant (`TIMESTAMP '2016-01-25 10:10:10'` means 10:10:10
//! *in the default zone*) or an instant into text (`CAST(ts AS STRING)`).
//! Spanner's default zone is `America/Los_Angeles`, so the same literal means
//! a different instant in summer and in winter.
//!
//! A [`TimeZone`] is either a fixed offset (`+05:30`, `UTC-8`, `Z`) or an IANA
//! zone name resolved with chrono-tz (`America/Los_Angeles`, `UTC`).

use chrono::{NaiveDateTime, Offset, TimeZone as _};

use crate::{Error, Result};

/// A time zone as GoogleSQL accepts it: an IANA name or a fixed UTC offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeZone(Zone);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Zone {
    /// Seconds east of UTC.
    Fixed(i32),
    Named(chrono_tz::Tz),
}

impl TimeZone {
    /// UTC.
    pub const UTC: TimeZone = TimeZone(Zone::Fixed(0));
    /// `America/Los_Angeles`, Spanner's default zone: used when a timestamp
    /// string names no zone and by `CAST(TIMESTAMP AS STRING)`.
    pub const LOS_ANGELES: TimeZone = TimeZone(Zone::Named(chrono_tz::Tz::America__Los_Angeles));

    /// Spanner's default time zone ([`TimeZone::LOS_ANGELES`]).
    pub fn spanner_default() -> TimeZone {
        TimeZone::LOS_ANGELES
    }

    /// A fixed offset in seconds east of UTC; `None` beyond ±24 hours.
    pub fn fixed(offset_seconds: i32) -> Option<TimeZone> {
        (offset_seconds.abs() < 24 * 3600).then_some(TimeZone(Zone::Fixed(offset_seconds)))
    }

    /// Parses a zone name (`America/Los_Angeles`, `UTC`), `Z`, or an offset
    /// `{+|-}H[H][[:]MM]`, optionally after `UTC` (`UTC+3`, `UTC-08:00`).
    pub fn parse(text: &str) -> Result<TimeZone> {
        let bad = || Error::InvalidArgument(format!("Invalid time zone: {text}"));
        if text == "Z" || text == "z" {
            return Ok(TimeZone::UTC);
        }
        let offset_text = text
            .strip_prefix("UTC")
            .filter(|rest| rest.starts_with(['+', '-']))
            .unwrap_or(text);
        if offset_text.starts_with(['+', '-']) {
            return parse_offset(offset_text)
                .and_then(TimeZone::fixed)
                .ok_or_else(bad);
        }
        text.parse::<chrono_tz::Tz>()
            .map(|tz| TimeZone(Zone::Named(tz)))
            .map_err(|_| bad())
    }

    /// The offset from UTC, in seconds, in effect at the UTC instant `utc`.
    pub(crate) fn offset_at_utc(self, utc: &NaiveDateTime) -> i32 {
        match self.0 {
            Zone::Fixed(secs) => secs,
            Zone::Named(tz) => tz.offset_from_utc_datetime(utc).fix().local_minus_utc(),
        }
    }

    /// The offset from UTC, in seconds, for the civil time `local`.
    ///
    /// An ambiguous time (the repeated hour when clocks go back) takes the
    /// earlier instant; a skipped time (clocks go forward) is read with the
    /// offset in effect before the transition, as absl (and so GoogleSQL)
    /// does: `02:30` on a spring-forward day becomes `03:30` daylight time.
    pub(crate) fn offset_for_local(self, local: &NaiveDateTime) -> i32 {
        match self.0 {
            Zone::Fixed(secs) => secs,
            Zone::Named(tz) => match tz.offset_from_local_datetime(local) {
                chrono::LocalResult::Single(o) => o.fix().local_minus_utc(),
                chrono::LocalResult::Ambiguous(a, b) => {
                    // The earlier instant has the larger offset.
                    a.fix().local_minus_utc().max(b.fix().local_minus_utc())
                }
                chrono::LocalResult::None => {
                    let before = *local - chrono::Duration::hours(12);
                    tz.offset_from_utc_datetime(&before).fix().local_minus_utc()
                }
            },
        }
    }
}

impl std::fmt::Display for TimeZone {
    /// The IANA name, or the offset as `+hh:mm`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Zone::Named(tz) => f.write_str(tz.name()),
            Zone::Fixed(secs) => {
                let sign = if secs < 0 { '-' } else { '+' };
                let secs = secs.unsigned_abs();
                write!(f, "{sign}{:02}:{:02}", secs / 3600, secs / 60 % 60)
            }
        }
    }
}

/// Parses `{+|-}H[H][[:]MM]` into seconds east of UTC.
pub(crate) fn parse_offset(text: &str) -> Option<i32> {
    let (sign, rest) = match text.as_bytes().first()? {
        b'+' => (1, &text[1..]),
        b'-' => (-1, &text[1..]),
        _ => return None,
    };
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let (hours, minutes) = match rest.split_once(':') {
        Some((h, m)) => (h, m),
        // `+0530`: hours are the first two of four digits.
        None if rest.len() == 4 => rest.split_at(2),
        None => (rest, "0"),
    };
    if !all_digits(hours) || !all_digits(minutes) || hours.len() > 2 || minutes.len() > 2 {
        return None;
    }
    let hours: i32 = hours.parse().ok()?;
    let minutes: i32 = minutes.parse().ok()?;
    if hours > 14 || minutes > 59 {
        return None;
    }
    Some(sign * (hours * 3600 + minutes * 60))
}
