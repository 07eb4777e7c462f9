//! Event loops: the threads that serve the gRPC connections.
//!
//! A unary gRPC call is a handful of small steps on one connection: the
//! connection's task reads the request's frames, the stream's task runs the
//! handler, queues the response's headers, data and trailers, and the
//! connection's task writes them out. On tokio's multi-threaded runtime those
//! tasks may run on different worker threads, and every hand-over between
//! them is a cross-thread wake-up (a futex and a context switch), several per
//! request. Profiles of point reads over gRPC show those wake-ups and the
//! scheduler as a large share of the CPU per request.
//!
//! So `rowtree serve` runs its connections on *event loops*: one thread per
//! core, each with a single-threaded tokio runtime. One accept loop (on the
//! caller's runtime) hands each new connection to the next event loop in
//! turn, and the connection lives there until it closes: its tasks never
//! leave that thread, and a request's steps follow one another without a
//! wake-up across threads. Work that may wait (commits, queries that take
//! locks) still goes to that runtime's blocking threads, as before, so one
//! slow request does not hold up the loop's other connections.
//!
//! With `event_loops == 0` the connections are served on the caller's
//! runtime instead, as an embedding program may prefer (one runtime for
//! everything).
//!
//! ```text
//!   caller's runtime            event loop 0 (thread)      event loop 1 (thread)
//!   ──────────────────          ─────────────────────      ─────────────────────
//!   accept ── conn 1 ─────────▶ conn 1: h2 + requests
//!          ── conn 2 ────────────────────────────────────▶ conn 2: h2 + requests
//!          ── conn 3 ─────────▶ conn 3 ...
//! ```

use std::future::Future;
use std::net::TcpStream as StdTcpStream;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot, watch};
use tokio_stream::wrappers::UnboundedReceiverStream;
use tokio_stream::StreamExt as _;

use crate::coalesce::Coalescing;

/// What one event loop ends with: tonic's transport error, or why the loop
/// could not run.
pub(crate) type LoopResult = Result<(), String>;

/// The connections one loop serves, as tonic's `serve_with_incoming` takes
/// them.
pub(crate) type Incoming = std::pin::Pin<
    Box<dyn tokio_stream::Stream<Item = std::io::Result<Coalescing<TcpStream>>> + Send>,
>;

/// Serves `listener`'s connections on `loops` event-loop threads (see the
/// module docs), each running `serve(incoming, shutdown)`. Returns once the
/// threads are started; the returned future ends when every loop has ended,
/// which they do once `stop` changes or is dropped.
///
/// `serve` is tonic's `serve_with_incoming_shutdown` over a clone of the
/// router: called once per loop, on that loop's thread.
pub(crate) fn start<S, F>(
    listener: TcpListener,
    loops: usize,
    stop: watch::Receiver<()>,
    serve: S,
) -> Result<impl Future<Output = LoopResult> + Send + 'static, String>
where
    S: Fn(Incoming, watch::Receiver<()>) -> F + Clone + Send + 'static,
    F: Future<Output = LoopResult> + 'static,
{
    let mut senders = Vec::with_capacity(loops);
    let mut ended = Vec::with_capacity(loops);
    for index in 0..loops {
        let (conns, conn_rx) = mpsc::unbounded_channel::<StdTcpStream>();
        let (done, done_rx) = oneshot::channel::<LoopResult>();
        let serve = serve.clone();
        let stop = stop.clone();
        std::thread::Builder::new()
            .name(format!("rowtree-loop-{index}"))
            .stack_size(rowtree_types::stack::THREAD_STACK)
            .spawn(move || {
                let _ = done.send(run_loop(conn_rx, stop, serve));
            })
            .map_err(|e| format!("cannot start event loop {index}: {e}"))?;
        senders.push(conns);
        ended.push(done_rx);
    }
    let accept = accept(listener, senders, stop);
    Ok(async move {
        // The accept loop ends with the stop signal, or when every loop is
        // gone; the loops end with the stop signal.
        let accepted = tokio::spawn(accept);
        let mut result = Ok(());
        for done in ended {
            let r = done
                .await
                .unwrap_or_else(|_| Err("an event loop ended without a result".into()));
            if result.is_ok() {
                result = r;
            }
        }
        accepted.abort();
        result
    })
}

/// One event loop's thread: a single-threaded runtime serving the
/// connections it is handed until `stop` fires.
fn run_loop<S, F>(
    conns: mpsc::UnboundedReceiver<StdTcpStream>,
    stop: watch::Receiver<()>,
    serve: S,
) -> LoopResult
where
    S: Fn(Incoming, watch::Receiver<()>) -> F,
    F: Future<Output = LoopResult>,
{
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .thread_stack_size(rowtree_types::stack::THREAD_STACK)
        .build()
        .map_err(|e| format!("cannot start an event loop's runtime: {e}"))?;
    // Registering the socket with this runtime's reactor must happen on it,
    // so the conversion runs as the stream is polled here.
    let incoming: Incoming = Box::pin(
        UnboundedReceiverStream::new(conns)
            .map(|conn| TcpStream::from_std(conn).map(Coalescing::new)),
    );
    runtime.block_on(serve(incoming, stop))
}

/// Accepts connections and deals them out to the loops in turn, with
/// `TCP_NODELAY` set: a unary response leaves as more than one write, and
/// with Nagle's algorithm a later one waits for the client's delayed ACK
/// (about 40 ms).
async fn accept(
    listener: TcpListener,
    loops: Vec<mpsc::UnboundedSender<StdTcpStream>>,
    mut stop: watch::Receiver<()>,
) {
    let mut next = 0usize;
    loop {
        let conn = tokio::select! {
            _ = stop.changed() => return,
            conn = listener.accept() => conn,
        };
        let stream = match conn {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of file descriptors and the like: wait a little rather
                // than spin, and keep serving the connections already open.
                tracing::warn!(error = %e, "cannot accept a connection");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        if let Err(e) = stream.set_nodelay(true) {
            tracing::warn!(error = %e, "cannot set TCP_NODELAY");
        }
        let stream = match stream.into_std() {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(error = %e, "cannot hand a connection to an event loop");
                continue;
            }
        };
        // A loop whose thread ended drops its receiver: try the next ones.
        let mut stream = Some(stream);
        for _ in 0..loops.len() {
            let target = &loops[next % loops.len()];
            next = next.wrapping_add(1);
            match target.send(stream.take().expect("stream")) {
                Ok(()) => break,
                Err(mpsc::error::SendError(s)) => stream = Some(s),
            }
        }
        if stream.is_some() {
            tracing::error!("every event loop has stopped; no longer accepting connections");
            return;
        }
    }
}
