//! `TIMESTAMP`: an instant with nanosecond precision over Spanner's full range.

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
}
