//! `time.rs`: timestamps, database timestamps and durations.

use super::*;
use crate::convert::{
    commit_ts_from_proto, commit_ts_to_proto, duration_from_proto, timestamp_from_proto,
    timestamp_to_proto,
};

#[test]
fn timestamps_and_durations() {
    for t in [
        Timestamp::MIN,
        Timestamp::MAX,
        Timestamp::UNIX_EPOCH,
        ts("1969-12-31T23:59:59.5Z"),
        ts("2024-02-29T12:34:56.123456789Z"),
    ] {
        let p = timestamp_to_proto(t);
        assert!((0..1_000_000_000).contains(&p.nanos));
        assert_eq!(timestamp_from_proto(&p).unwrap(), t);
    }
    let p = timestamp_to_proto(ts("1969-12-31T23:59:59.5Z"));
    assert_eq!((p.seconds, p.nanos), (-1, 500_000_000));
    let p = timestamp_to_proto(Timestamp::MAX);
    assert_eq!((p.seconds, p.nanos), (253_402_300_799, 999_999_999));
    let bad = |seconds: i64, nanos: i32| {
        timestamp_from_proto(&prost_types::Timestamp { seconds, nanos })
            .unwrap_err()
            .code()
    };
    assert_eq!(bad(0, -1), Code::InvalidArgument);
    assert_eq!(bad(0, 1_000_000_000), Code::InvalidArgument);
    assert_eq!(bad(253_402_300_800, 0), Code::InvalidArgument);
    assert_eq!(bad(-62_135_596_801, 0), Code::InvalidArgument);

    let p = commit_ts_to_proto(1_700_000_000_123_456_000);
    assert_eq!((p.seconds, p.nanos), (1_700_000_000, 123_456_000));
    assert_eq!(commit_ts_from_proto(&p).unwrap(), 1_700_000_000_123_456_000);
    assert_eq!(
        commit_ts_from_proto(&prost_types::Timestamp {
            seconds: -1,
            nanos: 0
        })
        .unwrap_err()
        .code(),
        Code::InvalidArgument
    );

    let d =
        |seconds: i64, nanos: i32| duration_from_proto(&prost_types::Duration { seconds, nanos });
    assert_eq!(d(10, 500), std::time::Duration::new(10, 500));
    assert_eq!(d(0, 250_000_000), std::time::Duration::from_millis(250));
    assert_eq!(d(-5, 0), std::time::Duration::ZERO);
    assert_eq!(d(0, -1), std::time::Duration::ZERO);
    assert_eq!(
        d(315_576_000_000, 0),
        std::time::Duration::from_secs(315_576_000_000)
    );
}
