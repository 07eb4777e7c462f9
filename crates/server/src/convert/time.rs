//! Timestamps and durations as `google.protobuf` messages: TIMESTAMP values,
//! the database's `u64` nanosecond timestamps (commit and read timestamps),
//! and staleness bounds.

use rowtree_types::Timestamp;
use tonic::Status;

use super::describe::invalid;

const NANOS_PER_SECOND: i128 = 1_000_000_000;

/// A TIMESTAMP as `google.protobuf.Timestamp`. [`Timestamp::PENDING_COMMIT`]
/// never reaches a client; if it does it is sent as [`Timestamp::MAX`].
pub fn timestamp_to_proto(ts: Timestamp) -> prost_types::Timestamp {
    let ts = if ts == Timestamp::PENDING_COMMIT {
        Timestamp::MAX
    } else {
        ts
    };
    let (seconds, nanos) = ts.to_seconds_nanos();
    prost_types::Timestamp {
        seconds,
        nanos: nanos as i32,
    }
}

/// A `google.protobuf.Timestamp` as a TIMESTAMP: `INVALID_ARGUMENT` if
/// `nanos` is outside `0..1e9` or the instant outside
/// 0001-01-01..9999-12-31.
pub fn timestamp_from_proto(ts: &prost_types::Timestamp) -> Result<Timestamp, Status> {
    if !(0..NANOS_PER_SECOND as i32).contains(&ts.nanos) {
        return Err(invalid(format!(
            "Invalid timestamp: nanos must be in [0, 999999999], found {}",
            ts.nanos
        )));
    }
    Timestamp::from_seconds_nanos(ts.seconds, ts.nanos as u32).ok_or_else(|| {
        invalid(format!(
            "Timestamp out of range: {} seconds since the epoch. Timestamps must be within [0001-01-01T00:00:00Z, 9999-12-31T23:59:59.999999999Z]",
            ts.seconds
        ))
    })
}

/// A database timestamp — `CommitResult::commit_timestamp`,
/// `ReadOnlyTransaction::read_timestamp`: `u64` nanoseconds since the epoch —
/// as `google.protobuf.Timestamp`.
pub fn commit_ts_to_proto(nanos: u64) -> prost_types::Timestamp {
    prost_types::Timestamp {
        seconds: (nanos / NANOS_PER_SECOND as u64) as i64,
        nanos: (nanos % NANOS_PER_SECOND as u64) as i32,
    }
}

/// A `google.protobuf.Timestamp` as a database timestamp (`u64` nanoseconds
/// since the epoch), e.g. for `TimestampBound::ReadTimestamp` and
/// `MinReadTimestamp`. Instants before 1970 are `INVALID_ARGUMENT`.
pub fn commit_ts_from_proto(ts: &prost_types::Timestamp) -> Result<u64, Status> {
    let t = timestamp_from_proto(ts)?;
    u64::try_from(t.nanos()).map_err(|_| {
        invalid(format!(
            "Invalid timestamp {}: read timestamps must not be before 1970-01-01T00:00:00Z",
            t.to_rfc3339()
        ))
    })
}

/// A `google.protobuf.Duration` (staleness bounds) as a `std` duration;
/// negative durations become zero.
pub fn duration_from_proto(d: &prost_types::Duration) -> std::time::Duration {
    let total = d.seconds as i128 * NANOS_PER_SECOND + d.nanos as i128;
    if total <= 0 {
        return std::time::Duration::ZERO;
    }
    std::time::Duration::new(
        (total / NANOS_PER_SECOND) as u64,
        (total % NANOS_PER_SECOND) as u32,
    )
}
