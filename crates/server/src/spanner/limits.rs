//! The data API's resource limits, in one place: how many sessions and
//! held transactions there may be, how long they may sit idle, how large a
//! request may be, and how long a statement may run (the client's
//! deadline).
//!
//! A leaf: it uses no other file of the module. The table in
//! `docs/reliability.md` lists these with the rest of the server's limits.

use std::time::{Duration, Instant};

use tonic::Status;

/// A read-write transaction idle this long is rolled back (Spanner's own
/// limit: an idle transaction holds its locks against everyone, and the
/// client that would end it may be gone, as when the node it talked
/// through died).
pub const IDLE_READ_WRITE: Duration = Duration::from_secs(10);
/// A read-only or partitioned DML transaction idle this long is forgotten
/// (it holds no locks).
pub const IDLE_OTHER: Duration = Duration::from_secs(60);
/// A session (not multiplexed) unused this long is deleted.
pub const IDLE_SESSION: Duration = Duration::from_secs(3600);
/// The most sessions one database holds; creating another answers
/// RESOURCE_EXHAUSTED.
pub const MAX_SESSIONS: usize = 10_000;
/// The most read-write and partitioned DML transactions one session holds
/// at once; beginning another answers RESOURCE_EXHAUSTED.
pub const MAX_HELD_TRANSACTIONS: usize = 10_000;

/// Largest request other than a commit, in bytes (Spanner: "Request size
/// other than for commits: 10 MiB"). The transport admits messages up to
/// the commit limit ([`crate::MAX_REQUEST`]); the other requests are held to
/// this one here.
pub const MAX_REQUEST_BYTES: usize = 10 << 20;

/// Refuses a non-commit request larger than [`MAX_REQUEST_BYTES`].
pub(super) fn check_size(request: &impl prost::Message) -> Result<(), Status> {
    let size = request.encoded_len();
    if size > MAX_REQUEST_BYTES {
        return Err(Status::invalid_argument(format!(
            "Request is too large: {size} bytes; requests other than commits may be at most \
             {MAX_REQUEST_BYTES} bytes"
        )));
    }
    Ok(())
}

/// The deadline a client set on its request (the `grpc-timeout` header:
/// digits and a unit, H M S m u n), so long statements stop when the client
/// has given up.
pub(super) fn deadline_of(metadata: &tonic::metadata::MetadataMap) -> Option<Instant> {
    let v = metadata.get("grpc-timeout")?.to_str().ok()?;
    let (digits, unit) = v.split_at(v.len().checked_sub(1)?);
    let n: u64 = digits.parse().ok()?;
    let d = match unit {
        "H" => Duration::from_secs(n.saturating_mul(3600)),
        "M" => Duration::from_secs(n.saturating_mul(60)),
        "S" => Duration::from_secs(n),
        "m" => Duration::from_millis(n),
        "u" => Duration::from_micros(n),
        "n" => Duration::from_nanos(n),
        _ => return None,
    };
    Instant::now().checked_add(d)
}

/// DEADLINE_EXCEEDED once `deadline` has passed (checked every 1,024 rows).
pub(super) fn check_deadline(deadline: Option<Instant>, rows: u64) -> Result<(), Status> {
    match deadline {
        Some(d) if rows % 1024 == 0 && Instant::now() > d => Err(Status::deadline_exceeded(
            "Deadline exceeded while the statement was running",
        )),
        _ => Ok(()),
    }
}
