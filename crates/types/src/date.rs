//! `DATE`: a calendar day, 0001-01-01 to 9999-12-31.

/// Days since 1970-01-01 (negative before).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date(i32);

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
}
