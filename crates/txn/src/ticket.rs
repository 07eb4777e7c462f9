//! Commit tickets: the answer to one queued commit, waited for by a thread or awaited by a
//! task.
//!
//! # Why a ticket
//!
//! A committer used to block its thread on a channel until the pipeline thread answered.
//! An asynchronous server would then need a spare thread per commit in flight, and pay a
//! wake-up of that thread and another of the task waiting for it. A [`CommitTicket`] is a
//! one-shot slot the pipeline thread fills: a thread can [`wait`](CommitTicket::wait) on it,
//! a task can `.await` it (it is a [`Future`]), and the pipeline wakes whichever kind
//! waits, directly. [`CommitPipeline::commit`](crate::CommitPipeline::commit) is
//! `submit(..).wait()`, so both forms share one path.
//!
//! # Who waits is not who commits
//!
//! Once queued, a commit completes whatever happens to its ticket: dropping the ticket (a
//! task cancelled mid-commit) abandons only the waiting. A caller that must act on the
//! outcome even then (release the transaction's locks once the write is durable) hands that
//! work to [`CommitTicket::detach`], which runs it with the outcome as soon as it is known.
//!
//! No runtime is involved: the slot is a mutex, a condition variable for threads and a
//! [`Waker`] for tasks.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use parking_lot::{Condvar, Mutex};

use crate::error::{Error, Result};

/// Work to run with a commit's outcome once the ticket's owner stopped waiting.
type Detached = Box<dyn FnOnce(Result<u64>) + Send>;

enum State {
    /// Not answered yet; who to tell when it is.
    Waiting {
        waker: Option<Waker>,
        detached: Option<Detached>,
    },
    /// Answered, not yet taken.
    Done(Result<u64>),
    /// Answered and taken (a future polled again after it completed sees this).
    Taken,
}

struct Slot {
    state: Mutex<State>,
    /// Signals a thread blocked in [`CommitTicket::wait`].
    answered: Condvar,
}

/// The outcome of one queued commit: its commit timestamp once durable, or why it failed.
///
/// Wait for it with [`wait`](Self::wait), await it as a [`Future`], or
/// [`detach`](Self::detach) work to run with it. Dropping it abandons the waiting, never
/// the commit.
#[must_use = "a ticket is the only way to learn whether the commit succeeded"]
pub struct CommitTicket {
    slot: Arc<Slot>,
}

/// The pipeline's end of a ticket. Dropping it unanswered answers [`Error::Shutdown`], so
/// a ticket is always answered exactly once.
pub(crate) struct Reply {
    slot: Option<Arc<Slot>>,
}

/// A new ticket and the reply that answers it.
pub(crate) fn pair() -> (CommitTicket, Reply) {
    let slot = Arc::new(Slot {
        state: Mutex::new(State::Waiting {
            waker: None,
            detached: None,
        }),
        answered: Condvar::new(),
    });
    (
        CommitTicket { slot: slot.clone() },
        Reply { slot: Some(slot) },
    )
}

impl CommitTicket {
    /// Whether the outcome is known (waiting for it would not block).
    pub fn is_done(&self) -> bool {
        matches!(*self.slot.state.lock(), State::Done(_) | State::Taken)
    }

    /// Blocks the thread until the commit is answered and returns the outcome.
    pub fn wait(self) -> Result<u64> {
        let mut state = self.slot.state.lock();
        loop {
            match std::mem::replace(&mut *state, State::Taken) {
                State::Done(result) => return result,
                State::Taken => return Err(taken()),
                waiting @ State::Waiting { .. } => {
                    *state = waiting;
                    self.slot.answered.wait(&mut state);
                }
            }
        }
    }

    /// Stops waiting, but runs `f` with the outcome: at once (on this thread) if it is
    /// known, else on the pipeline thread right after the commit is answered. Keep `f`
    /// short: the pipeline thread answers the rest of its group after it.
    pub fn detach(self, f: impl FnOnce(Result<u64>) + Send + 'static) {
        let mut state = self.slot.state.lock();
        match std::mem::replace(&mut *state, State::Taken) {
            State::Done(result) => {
                drop(state);
                f(result);
            }
            State::Taken => {
                drop(state);
                f(Err(taken()));
            }
            State::Waiting { .. } => {
                *state = State::Waiting {
                    waker: None,
                    detached: Some(Box::new(f)),
                };
            }
        }
    }
}

/// The outcome was already taken: a future polled after it completed.
fn taken() -> Error {
    Error::Internal("the commit's outcome was already taken".into())
}

impl Future for CommitTicket {
    type Output = Result<u64>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<u64>> {
        let mut state = self.slot.state.lock();
        match &mut *state {
            State::Waiting { waker, .. } => {
                match waker {
                    Some(w) if w.will_wake(cx.waker()) => {}
                    _ => *waker = Some(cx.waker().clone()),
                }
                Poll::Pending
            }
            done => match std::mem::replace(done, State::Taken) {
                State::Done(result) => Poll::Ready(result),
                _ => Poll::Ready(Err(taken())),
            },
        }
    }
}

impl std::fmt::Debug for CommitTicket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommitTicket")
            .field("done", &self.is_done())
            .finish()
    }
}

impl Reply {
    /// Answers the ticket: wakes the thread or task waiting for it, or runs its detached
    /// work. Never blocks on the waiter.
    pub(crate) fn send(mut self, result: Result<u64>) {
        if let Some(slot) = self.slot.take() {
            answer(&slot, result);
        }
    }
}

impl Drop for Reply {
    fn drop(&mut self) {
        if let Some(slot) = self.slot.take() {
            answer(&slot, Err(Error::Shutdown));
        }
    }
}

fn answer(slot: &Slot, result: Result<u64>) {
    let mut state = slot.state.lock();
    match std::mem::replace(&mut *state, State::Taken) {
        State::Waiting {
            detached: Some(f), ..
        } => {
            drop(state);
            f(result);
        }
        State::Waiting { waker, .. } => {
            *state = State::Done(result);
            drop(state);
            slot.answered.notify_all();
            if let Some(waker) = waker {
                waker.wake();
            }
        }
        // Answered twice cannot happen (`Reply` is consumed by `send`); keep the first.
        other => *state = other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Wake;
    use std::time::Duration;

    struct CountingWaker(AtomicUsize);

    impl Wake for CountingWaker {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn poll(ticket: &mut CommitTicket, waker: &Arc<CountingWaker>) -> Poll<Result<u64>> {
        let waker = Waker::from(waker.clone());
        Pin::new(ticket).poll(&mut Context::from_waker(&waker))
    }

    #[test]
    fn wait_returns_the_answer_sent_from_another_thread() {
        let (ticket, reply) = pair();
        let sender = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            reply.send(Ok(7));
        });
        assert_eq!(ticket.wait().unwrap(), 7);
        sender.join().unwrap();
    }

    #[test]
    fn wait_after_the_answer_does_not_block() {
        let (ticket, reply) = pair();
        reply.send(Ok(3));
        assert!(ticket.is_done());
        assert_eq!(ticket.wait().unwrap(), 3);
    }

    #[test]
    fn polling_registers_the_waker_and_the_answer_wakes_it() {
        let (mut ticket, reply) = pair();
        let waker = Arc::new(CountingWaker(AtomicUsize::new(0)));
        assert!(poll(&mut ticket, &waker).is_pending());
        assert!(poll(&mut ticket, &waker).is_pending());
        assert_eq!(waker.0.load(Ordering::SeqCst), 0);
        reply.send(Ok(11));
        assert_eq!(waker.0.load(Ordering::SeqCst), 1);
        match poll(&mut ticket, &waker) {
            Poll::Ready(Ok(11)) => {}
            other => panic!("expected Ready(Ok(11)), got {other:?}"),
        }
        // Polled again after completing: an error, not a panic or a hang.
        assert!(matches!(poll(&mut ticket, &waker), Poll::Ready(Err(_))));
    }

    #[test]
    fn a_dropped_reply_answers_shutdown() {
        let (ticket, reply) = pair();
        drop(reply);
        assert!(matches!(ticket.wait(), Err(Error::Shutdown)));
    }

    #[test]
    fn a_dropped_ticket_does_not_disturb_the_answer() {
        let (ticket, reply) = pair();
        drop(ticket);
        reply.send(Ok(1));
    }

    #[test]
    fn detached_work_runs_with_the_answer_whenever_it_comes() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        // Detached before the answer: runs when it is sent.
        let (ticket, reply) = pair();
        let log = seen.clone();
        ticket.detach(move |r| log.lock().push(r.unwrap()));
        assert!(seen.lock().is_empty());
        reply.send(Ok(5));
        // Detached after the answer: runs at once.
        let (ticket, reply) = pair();
        reply.send(Ok(6));
        let log = seen.clone();
        ticket.detach(move |r| log.lock().push(r.unwrap()));
        // Detached, then the pipeline went away: runs with Shutdown.
        let (ticket, reply) = pair();
        let log = seen.clone();
        ticket.detach(move |r| {
            assert!(matches!(r, Err(Error::Shutdown)));
            log.lock().push(0);
        });
        drop(reply);
        assert_eq!(*seen.lock(), vec![5, 6, 0]);
    }

    #[test]
    fn a_polled_then_detached_ticket_runs_the_work_not_the_waker() {
        let (mut ticket, reply) = pair();
        let waker = Arc::new(CountingWaker(AtomicUsize::new(0)));
        assert!(poll(&mut ticket, &waker).is_pending());
        let ran = Arc::new(AtomicUsize::new(0));
        let r = ran.clone();
        ticket.detach(move |_| {
            r.fetch_add(1, Ordering::SeqCst);
        });
        reply.send(Ok(2));
        assert_eq!(ran.load(Ordering::SeqCst), 1);
        assert_eq!(waker.0.load(Ordering::SeqCst), 0);
    }
}
