//! [`Coalescing`]: a connection that sends what HTTP/2 writes in one burst
//! as one `write` system call.
//!
//! A unary gRPC response is three HTTP/2 frames: HEADERS, DATA and the
//! trailers (a second HEADERS frame with `grpc-status`). The HTTP/2
//! library copies small frames into its write buffer, but a DATA frame of
//! 256 bytes or more is kept aside and sent with a vectored write, and
//! while it is kept aside nothing else can be buffered. So a response
//! whose message is larger than that (a 1 KB row, for one) leaves in two
//! writes: headers and data, then the trailers. Each write is a system
//! call here and, with `TCP_NODELAY`, a TCP segment of its own, which the
//! client's HTTP/2 library reads and wakes up for separately.
//!
//! `Coalescing` sits between the HTTP/2 library and the socket. A write is
//! copied into its buffer and accepted at once; a flush goes out on the
//! next poll instead of this one (it wakes its task and answers `Pending`
//! once, or as many times as [`Coalescing::with_yields`] says), which lets
//! the HTTP/2 connection buffer the frames that were waiting behind the
//! large one, and then flushes them all with one `write`. The task is polled again at once (a wake-up within the same
//! thread, not across threads), so nothing waits for a timer or for more
//! traffic, unlike Nagle's algorithm.
//!
//! The buffer is bounded: past [`BUFFER_LIMIT`] bytes a write sends what
//! is buffered first (waiting for the socket if it is full), and a write
//! that is larger than the limit on its own goes straight to the socket.

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// The most bytes a connection holds back before it must write them out.
pub const BUFFER_LIMIT: usize = 64 * 1024;

/// A connection whose writes are buffered and sent together at the next
/// flush after one yield (or more, [`Coalescing::with_yields`]). See the
/// module docs.
#[derive(Debug)]
pub struct Coalescing<S> {
    inner: S,
    /// Bytes accepted and not yet written to `inner`; `buf[..sent]` have
    /// been written.
    buf: Vec<u8>,
    sent: usize,
    /// How many times `poll_flush` yields before it writes a burst out.
    yields: u8,
    /// How many of them are left for the burst being buffered.
    yields_left: u8,
}

impl<S> Coalescing<S> {
    /// Wraps `inner`.
    pub fn new(inner: S) -> Coalescing<S> {
        Coalescing::with_yields(inner, 1)
    }

    /// Wraps `inner`, yielding `yields` times (at least once) before each
    /// burst is written. A client needs more than one: its request's
    /// end-of-stream frame comes from another task (the HTTP/2 client's
    /// body pipe), which must run between the yields.
    pub fn with_yields(inner: S, yields: u8) -> Coalescing<S> {
        let yields = yields.max(1);
        Coalescing {
            inner,
            buf: Vec::new(),
            sent: 0,
            yields,
            yields_left: yields,
        }
    }

    fn pending(&self) -> usize {
        self.buf.len() - self.sent
    }
}

impl<S: AsyncWrite + Unpin> Coalescing<S> {
    /// Writes the whole buffer to `inner`.
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.sent < self.buf.len() {
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &self.buf[self.sent..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.sent += n;
        }
        self.buf.clear();
        self.sent = 0;
        self.yields_left = self.yields;
        // A connection that once sent a large burst does not keep its
        // buffer at that size.
        if self.buf.capacity() > BUFFER_LIMIT {
            self.buf.shrink_to(BUFFER_LIMIT);
        }
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Coalescing<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.pending() + data.len() > BUFFER_LIMIT {
            ready!(this.poll_drain(cx))?;
            if data.len() > BUFFER_LIMIT {
                return Pin::new(&mut this.inner).poll_write(cx, data);
            }
        }
        this.buf.extend_from_slice(data);
        Poll::Ready(Ok(data.len()))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let total: usize = bufs.iter().map(|b| b.len()).sum();
        if this.pending() + total > BUFFER_LIMIT {
            ready!(this.poll_drain(cx))?;
            if total > BUFFER_LIMIT {
                return Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
            }
        }
        for b in bufs {
            this.buf.extend_from_slice(b);
        }
        Poll::Ready(Ok(total))
    }

    fn is_write_vectored(&self) -> bool {
        // Slices are copied into the buffer, which costs no system call.
        true
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.pending() > 0 {
            if this.yields_left > 0 {
                // Let the task come back with what it has still to write
                // (see the module docs).
                this.yields_left -= 1;
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            ready!(this.poll_drain(cx))?;
        }
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_drain(cx))?;
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Coalescing<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl tonic::transport::server::Connected for Coalescing<TcpStream> {
    type ConnectInfo = tonic::transport::server::TcpConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.inner.connect_info()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// A sink that counts the writes it is given.
    #[derive(Default)]
    struct Counting {
        writes: Arc<AtomicUsize>,
        bytes: Vec<u8>,
        /// Accept at most this many bytes per write (0: all).
        short: usize,
    }

    impl AsyncWrite for Counting {
        fn poll_write(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            data: &[u8],
        ) -> Poll<io::Result<usize>> {
            let this = self.get_mut();
            this.writes.fetch_add(1, Ordering::Relaxed);
            let n = if this.short == 0 {
                data.len()
            } else {
                data.len().min(this.short)
            };
            this.bytes.extend_from_slice(&data[..n]);
            Poll::Ready(Ok(n))
        }
        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    fn poll_flush(c: &mut Coalescing<Counting>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(c).poll_flush(cx)
    }

    fn write(c: &mut Coalescing<Counting>, cx: &mut Context<'_>, data: &[u8]) {
        assert!(matches!(
            Pin::new(c).poll_write(cx, data),
            Poll::Ready(Ok(n)) if n == data.len()
        ));
    }

    #[test]
    fn a_flush_yields_once_and_then_sends_everything_in_one_write() {
        let waker = std::task::Waker::noop();
        let mut cx = Context::from_waker(waker);
        let mut c = Coalescing::new(Counting::default());
        let writes = c.inner.writes.clone();
        write(&mut c, &mut cx, b"headers+");
        let data = [io::IoSlice::new(b"data-"), io::IoSlice::new(b"payload+")];
        assert!(matches!(
            Pin::new(&mut c).poll_write_vectored(&mut cx, &data),
            Poll::Ready(Ok(13))
        ));
        assert!(
            poll_flush(&mut c, &mut cx).is_pending(),
            "the first flush yields"
        );
        assert_eq!(writes.load(Ordering::Relaxed), 0, "nothing written yet");
        write(&mut c, &mut cx, b"trailers");
        assert!(
            poll_flush(&mut c, &mut cx).is_ready(),
            "the second one writes"
        );
        assert_eq!(writes.load(Ordering::Relaxed), 1, "in one write");
        assert_eq!(c.inner.bytes, b"headers+data-payload+trailers");
        // Nothing buffered: a flush passes through without yielding.
        assert!(poll_flush(&mut c, &mut cx).is_ready());
        // And the next burst yields once again.
        write(&mut c, &mut cx, b"more");
        assert!(poll_flush(&mut c, &mut cx).is_pending());
        assert!(poll_flush(&mut c, &mut cx).is_ready());
        assert_eq!(c.inner.bytes, b"headers+data-payload+trailersmore");
    }

    #[test]
    fn a_client_connection_yields_as_often_as_it_was_told() {
        let waker = std::task::Waker::noop();
        let mut cx = Context::from_waker(waker);
        let mut c = Coalescing::with_yields(Counting::default(), 2);
        let writes = c.inner.writes.clone();
        for _ in 0..2 {
            write(&mut c, &mut cx, b"message+");
            assert!(poll_flush(&mut c, &mut cx).is_pending(), "first yield");
            assert!(poll_flush(&mut c, &mut cx).is_pending(), "second yield");
            write(&mut c, &mut cx, b"end;");
            assert!(poll_flush(&mut c, &mut cx).is_ready(), "then it writes");
        }
        assert_eq!(writes.load(Ordering::Relaxed), 2, "one write per burst");
        assert_eq!(c.inner.bytes, b"message+end;message+end;");
        // Zero yields would never coalesce: it yields at least once.
        let mut c = Coalescing::with_yields(Counting::default(), 0);
        write(&mut c, &mut cx, b"x");
        assert!(poll_flush(&mut c, &mut cx).is_pending());
        assert!(poll_flush(&mut c, &mut cx).is_ready());
    }

    #[test]
    fn short_writes_are_retried_and_the_buffer_is_bounded() {
        let waker = std::task::Waker::noop();
        let mut cx = Context::from_waker(waker);
        let mut c = Coalescing::new(Counting {
            short: 1000,
            ..Counting::default()
        });
        let big = vec![7u8; BUFFER_LIMIT - 10];
        write(&mut c, &mut cx, &big);
        assert_eq!(c.inner.bytes.len(), 0, "still within the limit");
        // Past the limit: what is buffered goes out first.
        write(&mut c, &mut cx, &[8u8; 100]);
        assert_eq!(c.inner.bytes.len(), BUFFER_LIMIT - 10);
        assert_eq!(c.pending(), 100);
        // Larger than the limit by itself: straight through (one short
        // write of 1000 bytes here), after the buffer.
        let huge = vec![9u8; BUFFER_LIMIT + 1];
        assert!(matches!(
            Pin::new(&mut c).poll_write(&mut cx, &huge),
            Poll::Ready(Ok(1000))
        ));
        assert_eq!(c.pending(), 0);
        assert_eq!(c.inner.bytes.len(), BUFFER_LIMIT - 10 + 100 + 1000);
        assert_eq!(
            &c.inner.bytes[BUFFER_LIMIT - 10..BUFFER_LIMIT + 90],
            &[8u8; 100]
        );
    }
}
