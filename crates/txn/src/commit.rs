//! The group-commit pipeline: durable commits at the price of one fsync per *group*.
//!
//! # Why group commit
//!
//! A commit may be acknowledged only once it is durable, and making data durable costs an
//! fsync of about a millisecond or more. One fsync per commit would cap a database at a
//! few hundred commits a second however many clients it has. Instead, commits queue up
//! while the previous flush is running, and the next flush writes all of them at once:
//!
//! ```text
//! committers:  c1 c2 c3        c4 c5 c6 c7 c8         c9
//!               \  |  /          \  \ | /  /           |
//! queue:        [c1 c2 c3]       [c4 .. c8]           [c9]
//! pipeline:     ts, build, ──fsync──> publish, wake  ts, build, ──fsync──> ...
//! ```
//!
//! The busier the system, the larger the groups, so throughput grows with the number of
//! committers while each one still waits for at most about two flushes.
//!
//! # The pipeline thread
//!
//! One background thread owns the order of commits. For each group it:
//!
//! 1. takes everything queued (up to [`CommitOptions::max_group_size`]), and runs the
//!    pipeline's gate if it has one ([`CommitPipeline::gated`]: a cluster node makes sure it
//!    holds the split's lease there); a failing gate fails the whole group;
//! 2. assigns each request the next commit timestamp, in queue order, from the
//!    [`TimestampOracle`];
//! 3. calls each request's builder with its timestamp to get the write set (this is where
//!    the database substitutes `PENDING_COMMIT_TIMESTAMP()`); a failing builder fails only
//!    its own request;
//! 4. calls the flush function once with every write set of the group (one fsync);
//! 5. publishes [`CommitPipeline::visible_ts`] = the group's last timestamp, then answers each
//!    committer with its timestamp (or, if the flush failed, with the flush's error:
//!    [`Error::Storage`], or [`Error::Unavailable`] from a cluster's replicated log).
//!
//! # A waiting committer may lead
//!
//! Handing a commit to the pipeline thread and being woken when it is done costs two
//! thread wake-ups, which on an idle machine (one client) are a large part of a commit's
//! latency besides the fsync: the pipeline thread must be scheduled to take the request,
//! and the committer again to take the answer. So a committer that waits on its thread
//! ([`CommitPipeline::wait`], [`CommitPipeline::commit`]) first tries to *lead*: if no group
//! is being committed, it takes the queued requests (its own among them) and commits them
//! as one group itself, exactly as the pipeline thread would, then lets the pipeline thread
//! take whatever queued meanwhile. Under load a group is nearly always in flight, the
//! attempt fails at once, and the committer waits as before; group commit is unchanged.
//! Committers that await their ticket in an asynchronous task never lead (an fsync must not
//! block an event loop).
//!
//! Only one group is committed at a time, by the pipeline thread or by one leader (the
//! `busy` flag of the queue), so timestamps are still issued and groups flushed in order.
//! Because groups are committed one at a time, in order, every commit with a
//! timestamp at or below `visible_ts` is durable, and every later commit gets a greater
//! timestamp: a strong read at `visible_ts` sees a consistent snapshot that includes every
//! acknowledged commit. When nothing is queued but someone waits for a future timestamp
//! ([`CommitPipeline::wait_visible`]), the thread advances `visible_ts` with the clock.
//!
//! The pipeline knows nothing about storage: the write set `W` is whatever the caller
//! chooses, and the flush closure decides how to write a group (the database merges the
//! sets into one storage batch written with a synchronous sync).

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::error::{Error, Result};
use crate::ticket::{self, CommitTicket, Reply};
use crate::timestamp::TimestampOracle;

/// How often an idle pipeline re-reads the clock while someone waits for a future timestamp,
/// and how often `wait_visible` re-checks without a wake-up.
const TICK: Duration = Duration::from_millis(1);

/// How far behind the clock a strong read may read while commits are in flight (see
/// [`CommitPipeline::strong_read_ts`]); beyond it the read takes the clock and waits.
pub const MAX_STRONG_LAG: Duration = Duration::from_millis(250);

/// Turns a commit timestamp into the write set to make durable.
pub type WriteSetBuilder<W> = Box<dyn FnOnce(u64) -> Result<W> + Send>;

thread_local! {
    /// This thread is committing a group as a leader (see the module docs).
    static LEADING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The flush function: writes a group's write sets durably (one fsync).
type FlushFn<W> = Box<dyn FnMut(Vec<W>) -> Result<()> + Send>;

/// A check run by whoever commits a group, before the group's timestamps are issued (see
/// [`CommitPipeline::gated`]); an error fails every request of the group with it.
pub type CommitGate = Arc<dyn Fn() -> Result<()> + Send + Sync>;

/// One transaction's request to commit.
pub struct CommitRequest<W> {
    build: WriteSetBuilder<W>,
}

impl<W> CommitRequest<W> {
    /// A request whose write set `build` produces once the commit timestamp is known. The
    /// builder runs on the pipeline thread: keep it to CPU work, no I/O or locking.
    pub fn new(build: impl FnOnce(u64) -> Result<W> + Send + 'static) -> Self {
        CommitRequest {
            build: Box::new(build),
        }
    }
}

impl<W> std::fmt::Debug for CommitRequest<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommitRequest").finish_non_exhaustive()
    }
}

/// Tuning of a [`CommitPipeline`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommitOptions {
    /// The most requests flushed together; bounds the size of one storage batch.
    pub max_group_size: usize,
}

impl Default for CommitOptions {
    fn default() -> Self {
        CommitOptions {
            max_group_size: 512,
        }
    }
}

/// Counters of a [`CommitPipeline`] since it started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CommitStats {
    /// Requests that were made durable.
    pub commits: u64,
    /// Calls of the flush function (successful or not).
    pub flushes: u64,
    /// Requests waiting to be picked up by the pipeline thread right now.
    pub queued: usize,
}

struct Pending<W> {
    /// `None` for an empty commit: it takes its place in the order and a timestamp, and
    /// writes nothing.
    build: Option<WriteSetBuilder<W>>,
    reply: Reply,
}

struct Queue<W> {
    pending: VecDeque<Pending<W>>,
    shutdown: bool,
    /// A group is being committed (its timestamps issued or its flush running), by the
    /// pipeline thread or by a leading committer: no one else may start one.
    busy: bool,
}

struct Shared<W> {
    queue: Mutex<Queue<W>>,
    /// Signals the pipeline thread: work queued, shutdown, or a new `wanted_ts`.
    work: Condvar,
    /// Invariant: every commit with a timestamp <= `visible_ts` is durable, and every commit
    /// not yet durable will get a greater timestamp.
    visible_ts: AtomicU64,
    /// Guards nothing but pairs with `visible_changed` for `wait_visible`.
    visible_lock: Mutex<()>,
    visible_changed: Condvar,
    /// The largest timestamp a `wait_visible` caller waits for.
    wanted_ts: AtomicU64,
    /// The newest timestamp [`CommitPipeline::observe_applied`] was told of while a group
    /// was being committed (0: none): published with that group, not before, since the
    /// group's commits have lower timestamps and are not durable yet.
    deferred_visible: AtomicU64,
    /// Commits queued or being committed (incremented before a request is queued, decremented
    /// once it is answered): [`CommitPipeline::strong_read_ts`] reads it without the queue lock.
    in_flight: AtomicU64,
    stopped: AtomicBool,
    commits: AtomicU64,
    flushes: AtomicU64,
    oracle: TimestampOracle,
    options: CommitOptions,
    /// The flush function, called by whoever commits a group (only one at a time: `busy`).
    flush: Mutex<FlushFn<W>>,
    /// Run before a group's timestamps are issued.
    gate: Option<CommitGate>,
}

/// Commits write sets of type `W` durably, in timestamp order, sharing one flush per group.
/// See the [module docs](self).
pub struct CommitPipeline<W: Send + 'static> {
    shared: Arc<Shared<W>>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl<W: Send + 'static> CommitPipeline<W> {
    /// Starts the pipeline thread.
    ///
    /// `oracle` issues the commit timestamps; its [`TimestampOracle::last`] is the initial
    /// `visible_ts` (resume it from the highest durable commit timestamp after a restart).
    /// `flush` must write every set it is given, each set atomically, and return only once
    /// they are durable (one fsync); an `Err` fails every commit of the group.
    ///
    /// Fails with [`Error::Internal`] if the thread cannot be spawned.
    pub fn new<F>(oracle: TimestampOracle, options: CommitOptions, flush: F) -> Result<Self>
    where
        F: FnMut(Vec<W>) -> Result<()> + Send + 'static,
    {
        Self::gated(oracle, options, None, flush)
    }

    /// [`CommitPipeline::new`], with `gate` run by whoever commits a group before the group's
    /// timestamps are issued (on a thread, never in a task, so it may block): a cluster node
    /// takes or extends its lease there, so that the timestamps fall inside it. A gate that
    /// fails fails every request of the group with its error; nothing is written.
    pub fn gated<F>(
        oracle: TimestampOracle,
        options: CommitOptions,
        gate: Option<CommitGate>,
        flush: F,
    ) -> Result<Self>
    where
        F: FnMut(Vec<W>) -> Result<()> + Send + 'static,
    {
        let flush: FlushFn<W> = Box::new(flush);
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue {
                pending: VecDeque::new(),
                shutdown: false,
                busy: false,
            }),
            work: Condvar::new(),
            visible_ts: AtomicU64::new(oracle.last()),
            visible_lock: Mutex::new(()),
            visible_changed: Condvar::new(),
            wanted_ts: AtomicU64::new(0),
            deferred_visible: AtomicU64::new(0),
            in_flight: AtomicU64::new(0),
            stopped: AtomicBool::new(false),
            commits: AtomicU64::new(0),
            flushes: AtomicU64::new(0),
            oracle,
            options: CommitOptions {
                max_group_size: options.max_group_size.max(1),
            },
            flush: Mutex::new(flush),
            gate,
        });
        let thread_shared = shared.clone();
        let thread = std::thread::Builder::new()
            .name("rowtree-commit".into())
            .spawn(move || run(&thread_shared))
            .map_err(|e| Error::Internal(format!("cannot spawn the commit thread: {e}")))?;
        Ok(CommitPipeline {
            shared,
            thread: Mutex::new(Some(thread)),
        })
    }

    /// Commits one request and blocks until it is durable; returns its commit timestamp.
    /// The same as `self.wait(self.submit_to_lead(request))`: on an idle pipeline the
    /// request is committed on this thread.
    ///
    /// Errors: whatever the request's builder returned (nothing was written);
    /// the flush's error ([`Error::Storage`], [`Error::Unavailable`]) or the gate's if the
    /// group failed; [`Error::Shutdown`] if the pipeline
    /// was shut down before the request was queued.
    pub fn commit(&self, request: CommitRequest<W>) -> Result<u64> {
        self.wait(self.submit_to_lead(request))
    }

    /// Blocks until `ticket` (of a request submitted to this pipeline) is answered, first
    /// committing the queued requests on this thread if no group is being committed (see
    /// the module docs on leading). The result is the ticket's.
    pub fn wait(&self, ticket: CommitTicket) -> Result<u64> {
        self.try_lead();
        ticket.wait()
    }

    /// Commits one group of queued requests on this thread if no group is being
    /// committed now; returns whether it did.
    fn try_lead(&self) -> bool {
        let shared = &*self.shared;
        let group = {
            let mut queue = shared.queue.lock();
            if queue.busy || queue.pending.is_empty() {
                return false;
            }
            queue.busy = true;
            let n = queue.pending.len().min(shared.options.max_group_size);
            queue.pending.drain(..n).collect::<Vec<_>>()
        };
        LEADING.with(|l| l.set(true));
        run_group(shared, group);
        LEADING.with(|l| l.set(false));
        // Whatever queued meanwhile is the pipeline thread's (it may be waiting for the
        // group to end, or for a shutdown to finish it).
        shared.work.notify_one();
        true
    }

    /// Queues one request and returns at once with the [`CommitTicket`] that will hold its
    /// outcome (the errors are those of [`commit`](Self::commit)). Wait for the ticket on a
    /// thread or await it in a task; once queued, the commit completes whether or not
    /// anyone waits for it.
    pub fn submit(&self, request: CommitRequest<W>) -> CommitTicket {
        let (ticket, queued) = self.enqueue(Some(request.build));
        if queued {
            self.shared.work.notify_one();
        }
        ticket
    }

    /// Queues one request without waking the pipeline thread, for a caller that goes on
    /// at once to [`wait`](Self::wait) for the ticket on its thread: it will most likely
    /// commit the request itself (the module docs, on leading), and waking the pipeline
    /// thread would only have it race the caller for the work. If the caller may not
    /// wait after all, it must call [`kick`](Self::kick), or the request waits for the
    /// next commit to wake the pipeline.
    pub fn submit_to_lead(&self, request: CommitRequest<W>) -> CommitTicket {
        self.enqueue(Some(request.build)).0
    }

    /// Wakes the pipeline thread to take queued requests (after
    /// [`submit_to_lead`](Self::submit_to_lead) when the caller will not wait).
    pub fn kick(&self) {
        self.shared.work.notify_one();
    }

    /// Queues one request (`None`: an empty commit); wakes no one. Returns the ticket and
    /// whether the request was queued: an empty commit on an idle pipeline is answered at
    /// once with a fresh timestamp, published on the spot (no commit holds a timestamp now,
    /// and the next one takes its own under this lock), as
    /// [`wait_visible`](Self::wait_visible)'s fast path does; a refused one is answered
    /// with [`Error::Shutdown`].
    fn enqueue(&self, build: Option<WriteSetBuilder<W>>) -> (CommitTicket, bool) {
        let (ticket, reply) = ticket::pair();
        let mut queue = self.shared.queue.lock();
        if queue.shutdown {
            drop(queue);
            reply.send(Err(Error::Shutdown));
            return (ticket, false);
        }
        // (A gated pipeline has no fast path: the gate may block, and only whoever commits
        // a group runs it.)
        if build.is_none() && self.shared.gate.is_none() && queue.pending.is_empty() && !queue.busy
        {
            let ts = self.shared.oracle.next();
            publish(&self.shared, ts);
            drop(queue);
            reply.send(Ok(ts));
            return (ticket, false);
        }
        self.shared.in_flight.fetch_add(1, Ordering::AcqRel);
        queue.pending.push_back(Pending { build, reply });
        (ticket, true)
    }

    /// Commits nothing, at a timestamp of its own: greater than that of every commit
    /// acknowledged before the call, and visible (at or below
    /// [`visible_ts`](Self::visible_ts)) by the time the ticket is answered, so a strong read
    /// that starts afterwards is ordered after it. A transaction that wrote nothing commits
    /// so.
    ///
    /// With no commit queued or in flight, and no gate, the ticket is answered at once (a fresh
    /// timestamp, published on the spot, as [`wait_visible`](Self::wait_visible)'s fast path
    /// does); otherwise the empty commit joins the queue, takes the next timestamp in order,
    /// and is answered with its group, without adding anything to the group's flush. Reusing
    /// `visible_ts` instead would be cheaper but wrong: it can equal the previous commit's
    /// timestamp, so a later transaction would report the same commit timestamp as an
    /// earlier one.
    ///
    /// Errors: [`Error::Shutdown`] if the pipeline was shut down.
    pub fn submit_empty(&self) -> CommitTicket {
        let (ticket, queued) = self.enqueue(None);
        if queued {
            self.shared.work.notify_one();
        }
        ticket
    }

    /// The timestamp up to which every commit is durable: strong reads read at it.
    pub fn visible_ts(&self) -> u64 {
        self.shared.visible_ts.load(Ordering::Acquire)
    }

    /// Makes every commit timestamp issued from now on greater than `ts`, a timestamp
    /// learnt from elsewhere (another node's prepare timestamp, which a commit deciding it
    /// must exceed), without saying anything about what is visible.
    pub fn observe(&self, ts: u64) {
        self.shared.oracle.observe(ts);
    }

    /// Records that commits up to `ts`, made elsewhere, are durable and applied to the
    /// storage this pipeline's readers read (a cluster replica applied them from its log):
    /// timestamps issued from now on are greater (the hybrid clock's receive rule), and reads
    /// at `visible_ts` see them. Only for commits that are applied in full: everything at or
    /// below `ts` becomes visible, except this pipeline's own commits in flight. While a
    /// group is being committed, its commits have timestamps that may be below `ts` (a
    /// cluster node writing several split groups applies one group's entry while another's,
    /// or a two-phase commit of the same group of commits, is still on its way), so `ts` is
    /// published with that group, once it is durable.
    pub fn observe_applied(&self, ts: u64) {
        self.shared.oracle.observe(ts);
        let queue = self.shared.queue.lock();
        if queue.busy {
            self.shared.deferred_visible.fetch_max(ts, Ordering::AcqRel);
        } else {
            // Under the queue lock: no group takes timestamps meanwhile, and the next one
            // takes timestamps above `ts`.
            publish(&self.shared, ts);
        }
    }

    /// The timestamp a strong read starting now should read at, given the clock's `now`.
    ///
    /// Every acknowledged commit has a timestamp at or below `visible_ts` (a group is
    /// published before its committers are woken), so reading at `visible_ts` is already
    /// strong: it sees every commit acknowledged before the read began. While commits are in
    /// flight, that is the timestamp to take: reading at `now` instead would make the reader
    /// wait for the flush of a group it does not care about (a few hundred microseconds to
    /// milliseconds of fsync). With nothing in flight, the read takes `now` (the fast path of
    /// [`wait_visible`](Self::wait_visible) publishes it at once), so an idle database
    /// reports a current read timestamp, not the one of its last commit; so does a busy one
    /// whose `visible_ts` lags `now` by more than [`MAX_STRONG_LAG`], which keeps strong
    /// read timestamps close to the clock whatever happens to the flushes.
    pub fn strong_read_ts(&self, now: u64) -> u64 {
        let visible = self.visible_ts();
        let busy = self.shared.in_flight.load(Ordering::Acquire) > 0;
        if busy && now.saturating_sub(visible) <= MAX_STRONG_LAG.as_nanos() as u64 {
            visible
        } else {
            visible.max(now)
        }
    }

    /// Whether a strong read starting at the clock's `now` would wait for a flush:
    /// commits are in flight and `visible_ts` lags `now` by more than [`MAX_STRONG_LAG`]
    /// (a group's fsync is that slow), so [`strong_read_ts`](Self::strong_read_ts) gives
    /// `now` and the read waits until the pipeline gets there. A caller that must not block
    /// (an event loop) sends such a read to a thread that may.
    pub fn strong_read_waits(&self, now: u64) -> bool {
        let busy = self.shared.in_flight.load(Ordering::Acquire) > 0;
        busy && now.saturating_sub(self.visible_ts()) > MAX_STRONG_LAG.as_nanos() as u64
    }

    /// Blocks until [`visible_ts`](Self::visible_ts) `>= ts`, for reads at a given (possibly
    /// future) timestamp. With no commits queued, `visible_ts` follows the clock.
    ///
    /// Errors: [`Error::DeadlineExceeded`] if `deadline` passes first; [`Error::Shutdown`]
    /// if the pipeline stops first.
    pub fn wait_visible(&self, ts: u64, deadline: Option<Instant>) -> Result<()> {
        let shared = &self.shared;
        if shared.visible_ts.load(Ordering::Acquire) >= ts {
            return Ok(());
        }
        {
            let queue = shared.queue.lock();
            // Fast path: nothing is queued or being committed, so no commit holds a
            // timestamp yet; issuing one here (under the queue lock, which the pipeline
            // needs to take work) makes every later commit's timestamp greater, so it is
            // safe to publish at once, without waking the pipeline thread.
            if queue.pending.is_empty()
                && !queue.busy
                && !queue.shutdown
                && shared.oracle.now() >= ts
            {
                publish(shared, shared.oracle.next());
                return Ok(());
            }
            // Otherwise tell the pipeline to advance with the clock once it is idle; set
            // under the queue lock so the thread cannot miss it between its check and its
            // wait.
            shared.wanted_ts.fetch_max(ts, Ordering::AcqRel);
        }
        shared.work.notify_one();
        let mut guard = shared.visible_lock.lock();
        loop {
            if shared.visible_ts.load(Ordering::Acquire) >= ts {
                return Ok(());
            }
            if shared.stopped.load(Ordering::Acquire) {
                return Err(Error::Shutdown);
            }
            let now = Instant::now();
            let mut wake_at = now + TICK * 50;
            if let Some(deadline) = deadline {
                if now >= deadline {
                    return Err(Error::DeadlineExceeded);
                }
                wake_at = wake_at.min(deadline);
            }
            shared.visible_changed.wait_until(&mut guard, wake_at);
        }
    }

    /// Counters since the pipeline started.
    pub fn stats(&self) -> CommitStats {
        CommitStats {
            commits: self.shared.commits.load(Ordering::Relaxed),
            flushes: self.shared.flushes.load(Ordering::Relaxed),
            queued: self.shared.queue.lock().pending.len(),
        }
    }

    /// Stops accepting commits, finishes the ones already queued, and stops the thread.
    /// Later commits fail with [`Error::Shutdown`]. Idempotent; also run on drop.
    pub fn shutdown(&self) {
        self.shared.queue.lock().shutdown = true;
        self.shared.work.notify_all();
        let Some(thread) = self.thread.lock().take() else {
            return;
        };
        if thread.thread().id() == std::thread::current().id() || LEADING.with(|l| l.get()) {
            // Called from the flush function, a builder or code run when a commit is
            // answered, on the pipeline thread or a leading committer: joining would
            // deadlock (the thread waits for this group to end); it exits on its own after
            // this group.
            return;
        }
        // `run` catches panics of user code, so a join error would be a bug of ours;
        // there is nothing left to clean up either way.
        let _ = thread.join();
    }
}

impl<W: Send + 'static> Drop for CommitPipeline<W> {
    fn drop(&mut self) {
        self.shutdown();
    }
}

impl<W: Send + 'static> std::fmt::Debug for CommitPipeline<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommitPipeline")
            .field("visible_ts", &self.visible_ts())
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

/// What the pipeline thread should do next.
enum Next<W> {
    Group(Vec<Pending<W>>),
    /// Nothing queued, but a reader waits for a timestamp the clock has reached.
    AdvanceIdle,
    Stop,
}

/// The pipeline thread's loop.
fn run<W>(shared: &Shared<W>) {
    loop {
        match next_work(shared) {
            Next::Group(group) => run_group(shared, group),
            Next::AdvanceIdle => {
                // Nothing is queued or in flight, so every later commit gets a greater
                // timestamp than this one: it is safe to publish.
                publish(shared, shared.oracle.next());
            }
            Next::Stop => break,
        }
    }
    shared.stopped.store(true, Ordering::Release);
    let _guard = shared.visible_lock.lock();
    shared.visible_changed.notify_all();
}

fn next_work<W>(shared: &Shared<W>) -> Next<W> {
    let mut queue = shared.queue.lock();
    loop {
        if queue.busy {
            // A leading committer holds the pipeline (and timestamps not yet published):
            // nothing may start, not even an idle advance, until it ends its group.
            shared.work.wait(&mut queue);
            continue;
        }
        if !queue.pending.is_empty() {
            let n = queue.pending.len().min(shared.options.max_group_size);
            queue.busy = true;
            return Next::Group(queue.pending.drain(..n).collect());
        }
        if queue.shutdown {
            return Next::Stop;
        }
        let wanted = shared.wanted_ts.load(Ordering::Acquire);
        if wanted > shared.visible_ts.load(Ordering::Acquire) {
            if shared.oracle.now() >= wanted {
                return Next::AdvanceIdle;
            }
            shared.work.wait_for(&mut queue, TICK);
        } else {
            shared.work.wait(&mut queue);
        }
    }
}

/// Commits a group taken from the queue (with `busy` set by the taker), then frees the
/// pipeline for the next group.
fn run_group<W>(shared: &Shared<W>, group: Vec<Pending<W>>) {
    {
        let mut flush = shared.flush.lock();
        commit_group(shared, &mut *flush, group);
    }
    shared.queue.lock().busy = false;
}

fn commit_group<W>(shared: &Shared<W>, flush: &mut FlushFn<W>, group: Vec<Pending<W>>) {
    let answered = group.len() as u64;
    let _in_flight = InFlight { shared, answered };
    if let Some(gate) = &shared.gate {
        let passed = catch_unwind(AssertUnwindSafe(|| gate()))
            .unwrap_or_else(|_| Err(Error::Internal("the commit gate panicked".into())));
        if let Err(e) = passed {
            for Pending { reply, .. } in group {
                reply.send(Err(e.clone()));
            }
            return;
        }
    }
    let mut writes = Vec::with_capacity(group.len());
    let mut waiting = Vec::with_capacity(group.len());
    let mut last_ts = 0;
    for Pending { build, reply } in group {
        let ts = shared.oracle.next();
        last_ts = ts;
        let Some(build) = build else {
            // An empty commit: answered with the group, once its timestamp is visible.
            waiting.push((ts, reply));
            continue;
        };
        let built = catch_unwind(AssertUnwindSafe(|| build(ts)))
            .unwrap_or_else(|_| Err(Error::Internal("the write-set builder panicked".into())));
        match built {
            Ok(write) => {
                writes.push(write);
                waiting.push((ts, reply));
            }
            // Only this request fails; its timestamp is simply never used.
            Err(e) => reply.send(Err(e)),
        }
    }
    if writes.is_empty() {
        // Nothing was written at these timestamps; publishing them is still correct, and
        // the group's empty commits are done once they are published.
        publish(
            shared,
            last_ts.max(shared.deferred_visible.swap(0, Ordering::AcqRel)),
        );
        for (ts, reply) in waiting {
            reply.send(Ok(ts));
        }
        return;
    }
    shared.flushes.fetch_add(1, Ordering::Relaxed);
    let written = writes.len() as u64;
    let flushed = catch_unwind(AssertUnwindSafe(|| flush(writes)))
        .unwrap_or_else(|_| Err(Error::Storage("the flush function panicked".into())));
    match flushed {
        Ok(()) => {
            shared.commits.fetch_add(written, Ordering::Relaxed);
            // Publish before acknowledging: a committer that then reads at `visible_ts`
            // must see its own write. What replicas applied meanwhile is visible too now.
            publish(
                shared,
                last_ts.max(shared.deferred_visible.swap(0, Ordering::AcqRel)),
            );
            for (ts, reply) in waiting {
                // A committer that went away is not our problem: its write is durable.
                reply.send(Ok(ts));
            }
        }
        Err(e) => {
            for (_, reply) in waiting {
                reply.send(Err(e.clone()));
            }
        }
    }
}

/// Takes a group's requests off the in-flight count once they are answered (on every path
/// out of [`commit_group`], so a failure cannot leave the count high).
struct InFlight<'a, W> {
    shared: &'a Shared<W>,
    answered: u64,
}

impl<W> Drop for InFlight<'_, W> {
    fn drop(&mut self) {
        self.shared
            .in_flight
            .fetch_sub(self.answered, Ordering::AcqRel);
    }
}

/// Raises `visible_ts` to `ts` and wakes `wait_visible` callers.
fn publish<W>(shared: &Shared<W>, ts: u64) {
    shared.visible_ts.fetch_max(ts, Ordering::AcqRel);
    let _guard = shared.visible_lock.lock();
    shared.visible_changed.notify_all();
}
