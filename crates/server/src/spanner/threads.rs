//! Where request work runs. The engine and the SQL executor are
//! synchronous, so a request's work runs on one of tokio's blocking threads
//! ([`blocking`]), or in the request's own task when it cannot wait long
//! ([`run`]); a request that is itself asynchronous (Commit: it resolves in
//! its task and awaits durability) runs under [`guarded`]. Either way a
//! panic fails that request only.
//!
//! A leaf, like `limits.rs`: it knows nothing of sessions or statements.

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::task::Poll;

use tonic::Status;

/// Runs `f` in the request's own task when it cannot wait long (a
/// single-use read-only snapshot takes no locks; a strong one waits at most
/// for a group commit in flight), else on a blocking thread. Handing every
/// small read to the blocking pool would cost two thread switches per
/// request, most of a point read's time. A panic fails only the request.
pub(super) async fn run<T: Send + 'static>(
    inline: bool,
    f: impl FnOnce() -> Result<T, Status> + Send + 'static,
) -> Result<T, Status> {
    if inline {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|_| {
            tracing::error!("a request panicked");
            Err(Status::internal("The request failed unexpectedly"))
        })
    } else {
        blocking(f).await
    }
}

/// Runs `f` on a blocking thread; a panic is INTERNAL.
pub(super) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, Status> + Send + 'static,
) -> Result<T, Status> {
    tokio::task::spawn_blocking(f).await.map_err(|e| {
        if e.is_panic() {
            tracing::error!("a request panicked: {e}");
        }
        Status::internal(format!("The request failed unexpectedly: {e}"))
    })?
}

/// Runs a request's future in its own task, failing only the request
/// (INTERNAL) if a poll of it panics, as [`run`] does for a closure.
pub(super) async fn guarded<T>(
    future: impl Future<Output = Result<T, Status>>,
) -> Result<T, Status> {
    let mut future = std::pin::pin!(future);
    std::future::poll_fn(move |cx| {
        catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))).unwrap_or_else(|_| {
            tracing::error!("a request panicked");
            Poll::Ready(Err(Status::internal("The request failed unexpectedly")))
        })
    })
    .await
}
