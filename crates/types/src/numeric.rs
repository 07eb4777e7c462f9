//! `NUMERIC`: exact decimal with precision 38 and scale 9.

/// The value multiplied by 10^9, so `1.5` is `1_500_000_000`. The magnitude
/// never exceeds [`Numeric::MAX`] (38 nines with 9 after the point).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Numeric(i128);

impl Numeric {
    /// The scale: 9 digits after the decimal point.
    pub const SCALE: u32 = 9;
    /// 10^9, one unit.
    pub const ONE: i128 = 1_000_000_000;
    /// 99999999999999999999999999999.999999999.
    pub const MAX: Numeric = Numeric(99_999_999_999_999_999_999_999_999_999_999_999_999);
    /// -99999999999999999999999999999.999999999.
    pub const MIN: Numeric = Numeric(-99_999_999_999_999_999_999_999_999_999_999_999_999);

    /// A numeric from its scaled representation; `None` if out of range.
    pub fn from_scaled(scaled: i128) -> Option<Numeric> {
        (Self::MIN.0..=Self::MAX.0)
            .contains(&scaled)
            .then_some(Numeric(scaled))
    }

    /// The value times 10^9.
    pub fn scaled(self) -> i128 {
        self.0
    }
}
