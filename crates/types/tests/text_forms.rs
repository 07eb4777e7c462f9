//! Text forms of timestamps and dates: parsing, RFC 3339, CAST AS STRING.

use rowtree_types::{Date, Error, TimeZone, Timestamp};

fn utc(text: &str) -> Timestamp {
    Timestamp::parse(text, &TimeZone::UTC).unwrap_or_else(|e| panic!("{text}: {e}"))
}

#[test]
fn parses_googlesql_timestamp_forms() {
    let expected = "2016-01-25T15:10:10.555555Z";
    for text in [
        "2016-01-25 10:10:10.555555-05:00",
        "2016-01-25T15:10:10.555555Z",
        "2016-01-25t15:10:10.555555z",
        "2016-01-25 15:10:10.555555+00",
        "2016-1-25 20:40:10.555555+05:30",
        "2016-01-25 20:40:10.555555+0530",
        "2016-01-25 07:10:10.555555 America/Los_Angeles",
        "  2016-01-25 15:10:10.555555 UTC  ",
    ] {
        assert_eq!(utc(text).to_rfc3339(), expected, "{text}");
    }
    // No zone: read in the default zone.
    let la = Timestamp::parse("2016-01-25 07:10:10.555555", &TimeZone::LOS_ANGELES).unwrap();
    assert_eq!(la.to_rfc3339(), expected);
    // Summer time in Los Angeles is UTC-7.
    let summer = Timestamp::parse("2016-07-01 00:00:00", &TimeZone::LOS_ANGELES).unwrap();
    assert_eq!(summer.to_rfc3339(), "2016-07-01T07:00:00Z");
    // Date only: midnight.
    assert_eq!(utc("2016-01-25").to_rfc3339(), "2016-01-25T00:00:00Z");
    assert_eq!(
        Timestamp::parse("2016-01-25", &TimeZone::LOS_ANGELES)
            .unwrap()
            .to_rfc3339(),
        "2016-01-25T08:00:00Z"
    );
    // Nine fractional digits.
    assert_eq!(
        utc("2016-01-25 00:00:00.000000001").nanos() % 1_000_000_000,
        1
    );
}

#[test]
fn refuses_malformed_timestamps() {
    for text in [
        "",
        "2016-01-25 10:10",
        "2016-13-01",
        "2016-02-30",
        "16-01-25",
        "2016-01-25 24:00:00",
        "2016-01-25 10:10:10.1234567890",
        "2016-01-25 10:10:10.",
        "2016-01-25 10:10:10 -07:00",
        "2016-01-25 10:10:10+15",
        "2016-01-25 10:10:10 Mars/Olympus",
        "2016-01-25X",
    ] {
        let err = Timestamp::parse(text, &TimeZone::UTC).unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{text}: {err:?}");
    }
}

#[test]
fn range_ends_round_trip() {
    let min = utc("0001-01-01T00:00:00Z");
    let max = utc("9999-12-31T23:59:59.999999999Z");
    assert_eq!(min, Timestamp::MIN);
    assert_eq!(max, Timestamp::MAX);
    assert_eq!(min.to_rfc3339(), "0001-01-01T00:00:00Z");
    assert_eq!(max.to_rfc3339(), "9999-12-31T23:59:59.999999999Z");
    assert_eq!(utc(&min.to_rfc3339()), min);
    assert_eq!(utc(&max.to_rfc3339()), max);
    assert_eq!(
        max.format_sql(&TimeZone::UTC),
        "9999-12-31 23:59:59.999999999+00"
    );
    assert_eq!(utc(&max.format_sql(&TimeZone::UTC)), max);
    assert_eq!(min.format_sql(&TimeZone::UTC), "0001-01-01 00:00:00+00");
    // One step past either end is out of range, not malformed.
    for text in ["0001-01-01 00:00:00+01", "9999-12-31 23:59:59.999999999-01"] {
        let err = Timestamp::parse(text, &TimeZone::UTC).unwrap_err();
        assert!(matches!(err, Error::OutOfRange(_)), "{text}: {err:?}");
    }
    assert_eq!(Timestamp::MAX.checked_add_nanos(1), None);
}

#[test]
fn rfc3339_trims_trailing_zeros() {
    assert_eq!(
        utc("2016-01-25 10:10:10.500").to_rfc3339(),
        "2016-01-25T10:10:10.5Z"
    );
    assert_eq!(
        utc("2016-01-25 10:10:10.000001").to_rfc3339(),
        "2016-01-25T10:10:10.000001Z"
    );
    assert_eq!(
        utc("1969-12-31 23:59:59.9").to_rfc3339(),
        "1969-12-31T23:59:59.9Z"
    );
}

#[test]
fn cast_to_string_form() {
    let ts = utc("2016-01-25 10:10:10.555555-05:00");
    assert_eq!(
        ts.format_sql(&TimeZone::LOS_ANGELES),
        "2016-01-25 07:10:10.555555-08"
    );
    assert_eq!(
        ts.format_sql(&TimeZone::parse("+05:30").unwrap()),
        "2016-01-25 20:40:10.555555+05:30"
    );
    assert_eq!(
        utc("2016-01-25 10:10:10.5").format_sql(&TimeZone::UTC),
        "2016-01-25 10:10:10.500+00"
    );
    assert_eq!(
        utc("2016-01-25 10:10:10.1234").format_sql(&TimeZone::UTC),
        "2016-01-25 10:10:10.123400+00"
    );
    assert_eq!(
        utc("2016-01-25 10:10:10.1234567").format_sql(&TimeZone::UTC),
        "2016-01-25 10:10:10.123456700+00"
    );
    assert_eq!(
        utc("2016-07-01 12:00:00").format_sql(&TimeZone::LOS_ANGELES),
        "2016-07-01 05:00:00-07"
    );
}

#[test]
fn dates() {
    let d = Date::parse("2024-02-29").unwrap();
    assert_eq!(d.to_string(), "2024-02-29");
    assert_eq!(Date::parse("1970-1-2").unwrap().days(), 1);
    assert_eq!(Date::parse("0001-01-01").unwrap(), Date::MIN);
    assert_eq!(Date::parse("9999-12-31").unwrap(), Date::MAX);
    assert_eq!(Date::MIN.to_string(), "0001-01-01");
    assert!(Date::parse("2023-02-29").is_err());
    assert!(Date::parse("0000-12-31").is_err());
    assert!(Date::parse("2024-02-29 00:00:00").is_err());
    let ts = Timestamp::from_date(d, &TimeZone::LOS_ANGELES).unwrap();
    assert_eq!(ts.to_rfc3339(), "2024-02-29T08:00:00Z");
    assert_eq!(ts.to_date(&TimeZone::LOS_ANGELES).unwrap(), d);
    assert_eq!(
        ts.to_date(&TimeZone::parse("Asia/Tokyo").unwrap()).unwrap(),
        Date::parse("2024-02-29").unwrap()
    );
}

#[test]
fn time_zones() {
    assert_eq!(TimeZone::parse("UTC+3").unwrap().to_string(), "+03:00");
    assert_eq!(TimeZone::parse("-8").unwrap().to_string(), "-08:00");
    assert_eq!(
        TimeZone::parse("America/Los_Angeles").unwrap(),
        TimeZone::LOS_ANGELES
    );
    assert!(TimeZone::parse("Nowhere/Special").is_err());
    assert!(TimeZone::parse("+25").is_err());
}
