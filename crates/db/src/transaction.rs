//! Read-write and read-only transactions, with Spanner's semantics.
//!
//! * A [`ReadWriteTransaction`] reads the latest data under shared locks and
//!   buffers its mutations; [`ReadWriteTransaction::commit`] resolves them
//!   under exclusive locks and makes them durable at one commit timestamp.
//!   Conflicts are settled by wound-wait: the older transaction wins, the
//!   younger gets [`Error::Aborted`] and should retry with the same priority
//!   ([`Database::run_in_transaction`] does).
//! * A [`ReadOnlyTransaction`] reads a snapshot at one timestamp, chosen by
//!   its [`TimestampBound`], without locks.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use rowtree_schema::Catalog;
use rowtree_txn::{CommitTicket, TxnHandle};
use rowtree_types::{Timestamp, Value};

use crate::database::Database;
use crate::error::{Error, Result};
use crate::gate::SharedPass;
use crate::mutation::Mutation;
use crate::outcome::OutcomeTag;
use crate::overlay::TxnWrites;
use crate::read::ReadRequest;
use crate::stream::{RowStream, ScanRequest, TreeScanRequest, TreeStream};
use crate::target::Span;
use crate::write::{Resolver, Submitted, WrittenRow};

/// How a read-only transaction picks its timestamp (Spanner's
/// `TransactionOptions.ReadOnly`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TimestampBound {
    /// See every transaction committed before the read started.
    #[default]
    Strong,
    /// Read exactly this long ago.
    ExactStaleness(Duration),
    /// Read at a timestamp no older than this (Rowtree picks the freshest).
    MaxStaleness(Duration),
    /// Read at this timestamp (nanoseconds since the epoch).
    ReadTimestamp(u64),
    /// Read at this timestamp or later (Rowtree picks the freshest).
    MinReadTimestamp(u64),
}

/// The outcome of a successful commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommitResult {
    /// The commit timestamp, nanoseconds since the epoch (a multiple of 1,000).
    pub commit_timestamp: u64,
    /// Mutations counted as Spanner counts them (commit stats).
    pub mutation_count: usize,
}

impl CommitResult {
    /// The commit timestamp as a SQL value.
    pub fn timestamp(&self) -> Timestamp {
        Timestamp::from_nanos(self.commit_timestamp as i128)
            .expect("commit timestamps are in range")
    }
}

/// What a read-write transaction's DML had written at one point, to go
/// back to with [`ReadWriteTransaction::restore`].
#[derive(Debug)]
pub struct Savepoint {
    writes: TxnWrites,
}

/// A read-write transaction. Dropping it without committing rolls it back.
pub struct ReadWriteTransaction {
    db: Database,
    handle: Arc<TxnHandle>,
    mutations: Vec<Mutation>,
    /// Rows written by DML so far (applied at once, visible to later scans).
    writes: TxnWrites,
    /// The schema the transaction's DML was resolved against; a commit
    /// after a schema change aborts.
    pinned: Option<Arc<Catalog>>,
    done: bool,
    /// A probe ([`Database::begin_probe`]): never waits for a lock, and
    /// may not commit.
    probe: bool,
    /// Recorded with the commit, so its outcome can be looked up
    /// ([`ReadWriteTransaction::record_outcome`]).
    outcome_tag: Option<OutcomeTag>,
}

impl ReadWriteTransaction {
    pub(crate) fn new(db: Database, priority: Option<u64>) -> ReadWriteTransaction {
        // In a cluster a transaction may lock keys at other nodes, whose
        // lock tables compare its priority with their own transactions':
        // every node draws priorities from its clock (older is smaller),
        // the low bits at random so that two nodes rarely tie.
        let priority = priority.or_else(|| {
            db.inner.router.replicated().then(|| {
                let now = db.inner.options.clock.now_nanos();
                (now & !0x3ff) | (rand::random::<u64>() & 0x3ff)
            })
        });
        let handle = db.inner.locks.begin(priority);
        ReadWriteTransaction {
            db,
            handle,
            mutations: Vec::new(),
            writes: TxnWrites::default(),
            pinned: None,
            done: false,
            probe: false,
            outcome_tag: None,
        }
    }

    /// Records the commit's outcome under `tag` with its writes, and makes
    /// the commit fail (aborted, nothing written) if it cannot get a
    /// timestamp at or before `tag.not_after` (see [`crate::outcome`]).
    /// A commit with nothing to write then writes the outcome alone.
    pub fn record_outcome(&mut self, tag: OutcomeTag) {
        self.outcome_tag = Some(tag);
    }

    /// How long a lock may be waited for: as long as wound-wait says,
    /// except in a probe, which does not wait at all.
    fn lock_deadline(&self) -> Option<std::time::Instant> {
        self.probe.then(std::time::Instant::now)
    }

    /// This transaction's wound-wait priority (smaller is older and wins);
    /// pass it to [`Database::begin_with_priority`] when retrying.
    pub fn priority(&self) -> u64 {
        self.handle.priority()
    }

    /// Fails if the transaction ended; a wounded transaction ends here (the
    /// lock manager already freed its locks when it was wounded while idle,
    /// or frees them now).
    fn check_open(&mut self) -> Result<()> {
        if self.done {
            return Err(Error::TransactionClosed {
                message: "Transaction has already been committed or rolled back".into(),
            });
        }
        if self.handle.is_wounded() {
            self.abort();
            return Err(Error::Aborted {
                reason: "the transaction was wounded by an older conflicting transaction".into(),
            });
        }
        Ok(())
    }

    /// Reads the latest committed rows, holding shared locks on what was
    /// read until the transaction ends. The transaction's DML is visible;
    /// buffered mutations are not (as in Spanner).
    pub fn read(&mut self, request: &ReadRequest) -> Result<Vec<Vec<Value>>> {
        self.guarded(|txn| {
            // Opening the stream checks the columns before any lock is taken.
            let stream = RowStream::open_read(
                txn.db.clone(),
                txn.catalog(),
                request,
                u64::MAX,
                Some(&txn.writes),
            )?;
            txn.lock_spans(stream.spans())?;
            stream.collect()
        })
    }

    /// The schema this transaction works with.
    pub fn catalog(&self) -> Arc<Catalog> {
        self.pinned.clone().unwrap_or_else(|| self.db.catalog())
    }

    /// The database the transaction belongs to.
    pub fn database(&self) -> &Database {
        &self.db
    }

    /// Runs `f` on an open transaction; an abort (a lost wound-wait
    /// conflict) ends the transaction and releases its locks at once.
    fn guarded<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        self.check_open()?;
        // In a cluster, only the leaseholder reads the latest rows.
        self.db.inner.router.check_read(None)?;
        let result = f(self);
        if matches!(result, Err(Error::Aborted { .. })) {
            self.abort();
        }
        result
    }

    /// Scans rows in key order, holding shared locks on the ranges read;
    /// the stream sees this transaction's earlier DML.
    pub fn scan(&mut self, request: &ScanRequest) -> Result<RowStream> {
        self.guarded(|txn| {
            let stream = RowStream::open(
                txn.db.clone(),
                txn.catalog(),
                request,
                u64::MAX,
                Some(&txn.writes),
            )?;
            txn.lock_spans(stream.spans())?;
            Ok(stream)
        })
    }

    /// Scans whole row trees in key order (see [`TreeScanRequest`]),
    /// holding shared locks on the ranges read; the stream sees this
    /// transaction's earlier DML.
    pub fn scan_tree(&mut self, request: &TreeScanRequest) -> Result<TreeStream> {
        self.guarded(|txn| {
            let stream = TreeStream::open(
                txn.db.clone(),
                txn.catalog(),
                request,
                u64::MAX,
                Some(&txn.writes),
            )?;
            txn.lock_spans(stream.spans())?;
            Ok(stream)
        })
    }

    /// Takes shared locks on the spans a scan reads.
    fn lock_spans<'s>(&self, spans: impl Iterator<Item = &'s Span>) -> Result<()> {
        for span in spans {
            let target = match span {
                Span::Point(k) => rowtree_txn::LockTarget::key(k.clone()),
                Span::Range((s, e)) => rowtree_txn::LockTarget::range(s.clone(), e.clone()),
            };
            crate::elsewhere::lock(
                &self.db.inner,
                &self.handle,
                target,
                rowtree_txn::LockMode::Shared,
                self.lock_deadline(),
            )?;
        }
        Ok(())
    }

    /// Applies DML mutations now: they are resolved (defaults, generated
    /// columns, constraints, parents, cascades) under exclusive locks into
    /// the transaction's writes, visible to its later scans and committed
    /// with it. All or nothing: on error the transaction's writes are as
    /// before the call. Returns the rows written directly.
    pub fn apply_dml(&mut self, mutations: Vec<Mutation>) -> Result<Vec<WrittenRow>> {
        self.check_open()?;
        let catalog = self.catalog();
        self.pinned = Some(catalog.clone());
        let inner = &self.db.inner;
        let now = Timestamp::from_nanos(inner.options.clock.now_nanos() as i128)
            .ok_or_else(|| Error::internal("clock out of range"))?;
        let before = self.writes.clone();
        let mut resolver = Resolver::new(inner, &catalog, &self.handle, &mut self.writes, now);
        if self.probe {
            resolver = resolver.without_waiting();
        }
        let outcome = resolver
            .apply(&mutations)
            .map(|()| resolver.written(&before));
        match outcome {
            Ok(rows) => Ok(rows),
            Err(e) => {
                // Keep the locks taken (they are harmless) but undo the writes.
                let locked = std::mem::take(&mut self.writes.locked);
                self.writes = before;
                self.writes.locked.extend(locked);
                if e.is_retryable() {
                    self.abort();
                }
                Err(e)
            }
        }
    }

    /// The mutations the transaction's DML has applied so far, counted as
    /// against the per-commit limit ([`crate::write::MAX_MUTATIONS`]), which
    /// [`apply_dml`](Self::apply_dml) checks them against (buffered
    /// mutations are counted when the commit applies them). DML reads it
    /// before it collects rows, so a statement that would cross the limit
    /// fails at the row that crosses it rather than after collecting all.
    pub fn mutation_count(&self) -> usize {
        self.writes.mutation_count
    }

    /// Marks what the transaction's DML has written so far. A statement
    /// that applies its mutations and then fails (its THEN RETURN) goes
    /// back to it with [`restore`](Self::restore), so the failed statement
    /// leaves nothing behind in the transaction.
    pub fn savepoint(&self) -> Savepoint {
        Savepoint {
            writes: self.writes.clone(),
        }
    }

    /// Undoes the DML applied since `savepoint` was taken. The locks taken
    /// since are kept (as when [`apply_dml`](Self::apply_dml) fails).
    pub fn restore(&mut self, savepoint: Savepoint) {
        let locked = std::mem::take(&mut self.writes.locked);
        self.writes = savepoint.writes;
        self.writes.locked.extend(locked);
    }

    /// Buffers a mutation; it is applied at commit.
    pub fn buffer(&mut self, mutation: Mutation) -> Result<()> {
        self.check_open()?;
        self.mutations.push(mutation);
        Ok(())
    }

    /// Buffers several mutations.
    pub fn buffer_all(&mut self, mutations: impl IntoIterator<Item = Mutation>) -> Result<()> {
        self.check_open()?;
        self.mutations.extend(mutations);
        Ok(())
    }

    /// The next value of a sequence (only read-write transactions may ask).
    pub fn next_sequence_value(&mut self, sequence: &str) -> Result<i64> {
        self.check_open()?;
        let catalog = self.db.catalog();
        self.db.inner.sequences.next_value(&catalog, sequence)
    }

    /// GET_INTERNAL_SEQUENCE_STATE: the last counter handed out, or `None`.
    pub fn sequence_state(&mut self, sequence: &str) -> Result<Option<i64>> {
        self.check_open()?;
        let catalog = self.catalog();
        self.db.inner.sequences.state(&catalog, sequence)
    }

    /// Applies the buffered mutations atomically and durably: resolves them
    /// ([`start_commit`](Self::start_commit)), then waits for durability
    /// ([`PendingCommit::wait`]).
    ///
    /// The commit is queued without waking the commit pipeline's thread: if
    /// no other group is being committed, this thread commits its own
    /// (one fsync, no hand-off to another thread and back).
    pub fn commit(self) -> Result<CommitResult> {
        self.start_commit_with(true)?.wait()
    }

    /// The first half of a commit: resolves the buffered mutations under
    /// exclusive locks (waiting for them under wound-wait if need be),
    /// checks the schema, and queues the writes in the commit pipeline.
    /// What is left is waiting for durability, which the returned
    /// [`PendingCommit`] does on a thread or in a task. Once this returns
    /// `Ok`, the commit happens whatever becomes of the `PendingCommit`.
    ///
    /// On error the transaction is over and its locks are released.
    pub fn start_commit(self) -> Result<PendingCommit> {
        self.start_commit_with(false)
    }

    /// [`start_commit`](Self::start_commit); with `to_lead`, for a caller
    /// that waits for the result on its thread at once (see
    /// [`begin_commit`](Self::begin_commit)).
    fn start_commit_with(mut self, to_lead: bool) -> Result<PendingCommit> {
        self.check_open()?;
        match self.begin_commit(false, to_lead) {
            Ok(Some(pending)) => Ok(pending),
            Ok(None) => unreachable!("a commit that may wait never reports that it would"),
            Err(e) => {
                self.abort();
                Err(e)
            }
        }
    }

    /// [`start_commit`](Self::start_commit) for callers that must not block
    /// (an asynchronous task): where resolving would wait (for a row lock
    /// held by another transaction, for a schema change to finish, or, on a
    /// database with simulated node capacity, for the nodes), it
    /// gives the transaction back instead ([`CommitStart::WouldWait`]) with
    /// its buffered mutations intact, to commit where waiting is allowed.
    /// Locks taken before it stopped are kept (it would take them again),
    /// and a younger holder is wounded as a waiting commit would wound it.
    ///
    /// It still reads the rows it writes from storage, as reads in the
    /// request's task do.
    pub fn try_start_commit(mut self) -> Result<CommitStart> {
        self.check_open()?;
        match self.begin_commit(true, false) {
            Ok(Some(pending)) => Ok(CommitStart::Started(pending)),
            Ok(None) => Ok(CommitStart::WouldWait(self)),
            Err(e) => {
                self.abort();
                Err(e)
            }
        }
    }

    /// Resolves and queues the commit; `Ok(None)` if `no_wait` and it would
    /// have waited (the transaction is left as it was, but for locks taken).
    /// On success the transaction is done and the [`PendingCommit`] owns
    /// the release of its locks.
    /// With `to_lead` the pipeline's thread is not woken: the caller must
    /// wait for the `PendingCommit` on its thread at once (it then commits
    /// the group itself when the pipeline is idle); dropping it instead wakes
    /// the pipeline.
    fn begin_commit(&mut self, no_wait: bool, to_lead: bool) -> Result<Option<PendingCommit>> {
        if self.probe {
            return Err(Error::FailedPrecondition {
                message: "a probe transaction cannot commit; roll it back".into(),
            });
        }
        let inner = &self.db.inner;
        if no_wait && inner.router.gated() {
            // Charging the writes waits for their splits' nodes (simulated
            // capacity): that is waiting.
            return Ok(None);
        }
        // Held until the commit is durable (in the PendingCommit, or in the
        // work it detaches when dropped): a schema change must not slip in
        // between the resolution against this schema and durability.
        let gate = if no_wait {
            match inner.schema_gate.try_shared() {
                Some(gate) => gate,
                None => return Ok(None),
            }
        } else {
            inner.schema_gate.shared()
        };
        let catalog: Arc<Catalog> = self.db.catalog();
        if let Some(pinned) = &self.pinned {
            if pinned.version() != catalog.version() {
                return Err(Error::Aborted {
                    reason: "the schema changed while the transaction was running".into(),
                });
            }
        }
        let now = Timestamp::from_nanos(inner.options.clock.now_nanos() as i128)
            .ok_or_else(|| Error::internal("clock out of range"))?;
        // A commit that may give up keeps the DML writes to start over from.
        let mut state = if no_wait {
            self.writes.clone()
        } else {
            std::mem::take(&mut self.writes)
        };
        let mut resolver = Resolver::new(inner, &catalog, &self.handle, &mut state, now);
        if no_wait {
            resolver = resolver.without_waiting();
        }
        let resolved = match resolver
            .apply(&self.mutations)
            .and_then(|()| resolver.finish())
        {
            Ok(resolved) => resolved,
            // Only a lock refused for want of waiting fails so: the
            // resolver sets no other deadline.
            Err(Error::DeadlineExceeded { .. }) if no_wait => {
                self.writes.locked.extend(std::mem::take(&mut state.locked));
                return Ok(None);
            }
            Err(e) => return Err(e),
        };
        // In a cluster, the writes whose split another node leads are
        // prepared there (two-phase commit, decided by this commit); this
        // node must lead the splits of the others.
        let mutation_count = resolved.mutation_count;
        let parted = crate::elsewhere::part(inner, &self.handle, resolved.writes)?;
        if !parted.elsewhere.is_empty() && no_wait {
            // Preparing asks other nodes: that is waiting.
            self.writes.locked.extend(std::mem::take(&mut state.locked));
            return Ok(None);
        }
        inner
            .router
            .check_writes(parted.here.iter().map(|w| w.for_accounting().0))?;
        inner.locks.mark_committing(&self.handle)?;
        let elsewhere = if parted.elsewhere.is_empty() {
            // Locks taken elsewhere for reads alone must still be held.
            crate::elsewhere::confirm(inner, &self.handle)?;
            None
        } else {
            crate::elsewhere::prepare(inner, &self.handle, parted.elsewhere)?;
            Some(crate::elsewhere::txn_ref(inner, &self.handle))
        };
        let resolved = crate::write::Resolved {
            writes: parted.here,
            mutation_count,
        };
        let Submitted(ticket) = resolved.submit(inner, to_lead, self.outcome_tag, elsewhere);
        let outcome = Outcome::Waiting(ticket);
        self.done = true;
        Ok(Some(PendingCommit {
            db: self.db.clone(),
            handle: self.handle.clone(),
            gate: Some(gate),
            outcome,
            mutation_count,
            kick_on_drop: to_lead,
        }))
    }

    /// Abandons the transaction, releasing its locks.
    pub fn rollback(mut self) {
        self.abort();
    }

    fn abort(&mut self) {
        if !self.done {
            self.done = true;
            self.db.inner.locks.release_all(&self.handle);
            crate::elsewhere::release(&self.db.inner, &self.handle);
        }
    }
}

impl Drop for ReadWriteTransaction {
    fn drop(&mut self) {
        self.abort();
    }
}

/// How [`ReadWriteTransaction::try_start_commit`] went.
pub enum CommitStart {
    /// Resolved and queued: wait for durability.
    Started(PendingCommit),
    /// Resolving would have waited: the transaction, to commit with
    /// [`ReadWriteTransaction::start_commit`] where waiting is allowed.
    WouldWait(ReadWriteTransaction),
}

enum Outcome {
    /// In the pipeline, not answered yet (as far as we know).
    Waiting(CommitTicket),
    /// Reported to the caller; the locks are released.
    Reported,
}

/// A commit resolved and queued, waiting to be durable: the second half of
/// [`ReadWriteTransaction::commit`]. Wait for it on a thread with
/// [`wait`](Self::wait) or await it in a task (it is a [`Future`]); it
/// needs no thread while it waits, and no particular async runtime.
///
/// The transaction's locks (and its hold on the schema gate) are released
/// once the commit is durable, before the result is returned. Dropping a
/// `PendingCommit` (a task cancelled because its client went away) does
/// not undo or stop the commit: it completes in the pipeline, which then
/// releases the locks.
#[must_use = "a commit's outcome is known only by waiting for it"]
pub struct PendingCommit {
    db: Database,
    handle: Arc<TxnHandle>,
    gate: Option<SharedPass>,
    outcome: Outcome,
    mutation_count: usize,
    /// Queued without waking the pipeline (to be led by the waiter): if
    /// dropped unanswered, wake it so the commit is not left waiting.
    kick_on_drop: bool,
}

impl PendingCommit {
    /// Blocks the thread until the commit is durable (or failed).
    pub fn wait(mut self) -> Result<CommitResult> {
        let result = match std::mem::replace(&mut self.outcome, Outcome::Reported) {
            // On this thread: lead the group if the pipeline is idle.
            Outcome::Waiting(ticket) => self.db.inner.pipeline.wait(ticket),
            Outcome::Reported => return Err(Error::internal("the commit was already reported")),
        };
        self.report(result)
    }

    /// Ends the transaction once its outcome is known: lets go of the
    /// schema gate and the locks, then reports.
    fn report(&mut self, result: rowtree_txn::Result<u64>) -> Result<CommitResult> {
        self.gate = None;
        self.db.inner.locks.release_all(&self.handle);
        crate::elsewhere::release(&self.db.inner, &self.handle);
        Ok(CommitResult {
            commit_timestamp: result?,
            mutation_count: self.mutation_count,
        })
    }
}

impl Future for PendingCommit {
    type Output = Result<CommitResult>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let result = match &mut self.outcome {
            Outcome::Waiting(ticket) => match Pin::new(ticket).poll(cx) {
                Poll::Ready(result) => result,
                Poll::Pending => return Poll::Pending,
            },
            Outcome::Reported => {
                return Poll::Ready(Err(Error::internal("the commit was already reported")))
            }
        };
        self.outcome = Outcome::Reported;
        Poll::Ready(self.report(result))
    }
}

impl Drop for PendingCommit {
    fn drop(&mut self) {
        match std::mem::replace(&mut self.outcome, Outcome::Reported) {
            Outcome::Reported => {}
            // Nobody waits any more, but the commit is queued and will
            // complete: release the gate and the locks when it does (on the
            // pipeline thread, or here if it already has). A weak reference:
            // the pipeline's own thread must not end up dropping the last
            // handle to the database it belongs to.
            Outcome::Waiting(ticket) => {
                if self.kick_on_drop {
                    self.db.inner.pipeline.kick();
                }
                let gate = self.gate.take();
                let inner = Arc::downgrade(&self.db.inner);
                let handle = self.handle.clone();
                ticket.detach(move |_| {
                    drop(gate);
                    if let Some(inner) = inner.upgrade() {
                        inner.locks.release_all(&handle);
                        crate::elsewhere::release(&inner, &handle);
                    }
                });
            }
        }
    }
}

/// A read-only transaction: a consistent snapshot at one timestamp.
pub struct ReadOnlyTransaction {
    db: Database,
    read_ts: u64,
}

impl ReadOnlyTransaction {
    pub(crate) fn new(db: Database, bound: TimestampBound) -> Result<ReadOnlyTransaction> {
        let inner = &db.inner;
        let now = inner.options.clock.now_nanos();
        let visible = inner.pipeline.visible_ts();
        // A cluster replica that does not hold the lease serves reads at
        // or below its safe time by itself (a follower read): a bounded
        // staleness read takes the safe time when the bound allows it.
        // Otherwise the read needs the lease (`check_read` below takes it,
        // or says which node has it).
        let safe = if inner.router.serves_fresh_reads() {
            None
        } else {
            inner.router.safe_ts()
        };
        let ts = match bound {
            // A strong read must see every commit acknowledged before it
            // began. While commits are in flight the visible timestamp
            // already does (and reading there waits for no group flush);
            // otherwise it reads at "now", as Spanner's do. A max-staleness
            // read takes the freshest timestamp without waiting.
            TimestampBound::Strong => inner.pipeline.strong_read_ts(now / 1_000 * 1_000),
            TimestampBound::MaxStaleness(d) => match safe {
                Some(safe) if safe.saturating_add(d.as_nanos() as u64) >= now => safe,
                Some(_) => visible.max(now.saturating_sub(d.as_nanos() as u64)),
                None => visible,
            },
            TimestampBound::MinReadTimestamp(t) => match safe {
                Some(safe) if safe >= t => safe,
                _ => visible.max(t),
            },
            TimestampBound::ExactStaleness(d) => now.saturating_sub(d.as_nanos() as u64),
            TimestampBound::ReadTimestamp(t) => t,
        };
        // In a cluster, only a node entitled to serve the timestamp (the
        // leaseholder) reads it; alone, always this one.
        inner.router.check_read(Some(ts))?;
        let oldest = db.oldest_readable_timestamp();
        if ts < oldest && ts < visible {
            return Err(Error::FailedPrecondition {
                message: format!(
                    "Read timestamp {} is older than the version retention period ({:?}); the oldest readable timestamp is {}",
                    fmt_ts(ts),
                    db.version_retention(),
                    fmt_ts(oldest)
                ),
            });
        }
        // A read at a timestamp past what is visible waits for the commits
        // that may still land at or below it.
        inner.pipeline.wait_visible(
            ts,
            Some(std::time::Instant::now() + Duration::from_secs(60)),
        )?;
        Ok(ReadOnlyTransaction { db, read_ts: ts })
    }

    /// The timestamp this transaction reads at.
    pub fn read_timestamp(&self) -> u64 {
        self.read_ts
    }

    /// The schema (the current one: Rowtree does not keep schema versions
    /// for past timestamps yet).
    pub fn catalog(&self) -> Arc<Catalog> {
        self.db.catalog()
    }

    /// The database the transaction belongs to.
    pub fn database(&self) -> &Database {
        &self.db
    }

    /// GET_INTERNAL_SEQUENCE_STATE: the last counter handed out, or `None`
    /// (sequence counters are not versioned: this is the current state).
    pub fn sequence_state(&self, sequence: &str) -> Result<Option<i64>> {
        self.db.inner.sequences.state(&self.db.catalog(), sequence)
    }

    /// Scans rows in key order as of the transaction's timestamp.
    pub fn scan(&self, request: &ScanRequest) -> Result<RowStream> {
        self.check_retention()?;
        RowStream::open(
            self.db.clone(),
            self.db.catalog(),
            request,
            self.read_ts,
            None,
        )
    }

    /// Scans whole row trees in key order (see [`TreeScanRequest`]) as of
    /// the transaction's timestamp.
    pub fn scan_tree(&self, request: &TreeScanRequest) -> Result<TreeStream> {
        self.check_retention()?;
        TreeStream::open(
            self.db.clone(),
            self.db.catalog(),
            request,
            self.read_ts,
            None,
        )
    }

    fn check_retention(&self) -> Result<()> {
        if self.read_ts < self.db.oldest_readable_timestamp()
            && self.read_ts < self.db.visible_timestamp()
        {
            return Err(Error::FailedPrecondition {
                message: format!(
                    "Read timestamp {} is older than the version retention period",
                    fmt_ts(self.read_ts)
                ),
            });
        }
        Ok(())
    }

    /// Reads rows as of the transaction's timestamp.
    pub fn read(&self, request: &ReadRequest) -> Result<Vec<Vec<Value>>> {
        self.check_retention()?;
        RowStream::open_read(
            self.db.clone(),
            self.db.catalog(),
            request,
            self.read_ts,
            None,
        )?
        .collect()
    }
}

fn fmt_ts(ts: u64) -> String {
    match Timestamp::from_nanos(ts as i128) {
        Some(t) => t.to_rfc3339(),
        None => ts.to_string(),
    }
}

impl Database {
    /// Starts a read-write transaction.
    pub fn begin(&self) -> ReadWriteTransaction {
        ReadWriteTransaction::new(self.clone(), None)
    }

    /// Starts a read-write transaction that keeps an earlier attempt's
    /// wound-wait priority (so a retried transaction ages and eventually wins).
    pub fn begin_with_priority(&self, priority: u64) -> ReadWriteTransaction {
        ReadWriteTransaction::new(self.clone(), Some(priority))
    }

    /// Starts a probe: a read-write transaction that tries statements out
    /// without waiting for, or disturbing, real transactions (the
    /// PostgreSQL port executes DML so to learn the types of its
    /// parameters). It is younger than every other transaction, so it
    /// never wounds one; where a lock it asks for is held, it fails at once
    /// with [`Error::DeadlineExceeded`] instead of waiting. It cannot
    /// commit: roll it back (or drop it), which releases its locks.
    pub fn begin_probe(&self) -> ReadWriteTransaction {
        let mut txn = ReadWriteTransaction::new(self.clone(), Some(u64::MAX));
        txn.probe = true;
        txn
    }

    /// Waits until every commit this node's pipeline may still give a
    /// timestamp at or below `ts` has been applied, and makes later ones
    /// take timestamps above it (at most 60 s): what a read at `ts` of this
    /// node's engine needs first, as [`Database::read_only`] does. A cluster
    /// node serving another node's read of its splits calls it: the reader
    /// waited only for its own node's commits.
    pub fn wait_visible(&self, ts: u64) -> Result<()> {
        self.inner.pipeline.wait_visible(
            ts,
            Some(std::time::Instant::now() + Duration::from_secs(60)),
        )?;
        Ok(())
    }

    /// Starts a read-only transaction.
    pub fn read_only(&self, bound: TimestampBound) -> Result<ReadOnlyTransaction> {
        ReadOnlyTransaction::new(self.clone(), bound)
    }

    /// The timestamp at which this node's replica would serve a read-only
    /// transaction with `bound` below its safe time, without the lease (a
    /// follower read on a cluster node; see
    /// [`rowtree_kv::Replication::safe_ts`]), if it would: an exact
    /// timestamp or staleness at or below the safe time (the timestamp
    /// itself), a bounded staleness or minimum timestamp the safe time
    /// satisfies (the safe time). Never a strong read, and never alone (a
    /// single process serves every read itself anyway). A caller that
    /// decides by this reads at the timestamp it returns
    /// ([`TimestampBound::ReadTimestamp`]): the bound read again a moment
    /// later could fall above the safe time. The timestamp stays servable:
    /// the safe time only rises.
    pub fn follower_read_timestamp(&self, bound: &TimestampBound) -> Option<u64> {
        let safe = self.inner.router.safe_ts()?;
        let now = self.inner.options.clock.now_nanos();
        let ts = match *bound {
            TimestampBound::Strong => return None,
            TimestampBound::ExactStaleness(d) => now.saturating_sub(d.as_nanos() as u64),
            TimestampBound::ReadTimestamp(t) => t,
            TimestampBound::MaxStaleness(d) if safe.saturating_add(d.as_nanos() as u64) >= now => {
                safe
            }
            TimestampBound::MinReadTimestamp(t) if t <= safe => safe,
            TimestampBound::MaxStaleness(_) | TimestampBound::MinReadTimestamp(_) => return None,
        };
        (ts <= safe).then_some(ts)
    }

    /// The settled outcome of the commit tagged `tag` (see
    /// [`crate::outcome`]): its timestamp if it committed, `None` if it did
    /// not and never will. Only the database's leaseholder can say (others
    /// fail as a read would, e.g. unavailable, naming the leader).
    ///
    /// Settles at `tag.not_after` (waiting until this node may read there),
    /// or, with `sender_gone`, at once: the caller knows that the process
    /// the commit was sent to is gone (dead, or stopped after giving up its
    /// lease for good), so whatever it proposed is either in the log before
    /// this node's lease, and applied here by now, or nowhere.
    pub fn commit_outcome(&self, tag: &OutcomeTag, sender_gone: bool) -> Result<Option<u64>> {
        let bound = if sender_gone {
            TimestampBound::Strong
        } else {
            TimestampBound::ReadTimestamp(tag.not_after)
        };
        // Being allowed to read there (the lease) and every commit at or
        // below the read's timestamp applied is the whole settlement.
        let _settled = self.read_only(bound)?;
        let found = self.recorded_outcome(tag)?;
        if found.is_none() && !self.inner.router.metadata_is_atomic() {
            // The key space is cut into groups: the tag was to be written
            // after the commit's rows, so a missing tag proves nothing.
            return Err(Error::Unavailable {
                message: "the database's splits are replicated in several groups, where a \
                              commit's outcome is recorded only once it took effect: a commit \
                              with no recorded outcome may still have taken effect, so its \
                              outcome stays unknown"
                    .into(),
            });
        }
        Ok(found)
    }

    /// A single strong read.
    pub fn read(&self, request: &ReadRequest) -> Result<Vec<Vec<Value>>> {
        self.read_only(TimestampBound::Strong)?.read(request)
    }

    /// Applies mutations in a transaction of their own (Spanner's
    /// single-use read-write transaction), retrying when aborted.
    pub fn write(&self, mutations: Vec<Mutation>) -> Result<CommitResult> {
        self.run_in_transaction(|txn| txn.buffer_all(mutations.clone()))
    }

    /// Runs `body` in a read-write transaction and commits, retrying the
    /// whole transaction (with its original priority) while it is aborted.
    pub fn run_in_transaction<T>(
        &self,
        mut body: impl FnMut(&mut ReadWriteTransaction) -> Result<T>,
    ) -> Result<CommitResult> {
        let mut priority = None;
        let mut backoff = AbortBackoff::default();
        loop {
            let mut txn = match priority {
                None => self.begin(),
                Some(p) => self.begin_with_priority(p),
            };
            priority = Some(txn.priority());
            let outcome = body(&mut txn).and_then(|_| txn.commit());
            match outcome {
                Err(e) if e.is_retryable() => std::thread::sleep(backoff.next_pause()),
                other => return other,
            }
        }
    }
}

/// The pauses between attempts of a transaction retried while it is
/// aborted ([`Database::run_in_transaction`], and the server's single-use
/// commits, which sleep without a thread): 200 µs, doubling, at most 50 ms.
#[derive(Debug, Clone)]
pub struct AbortBackoff {
    next: Duration,
}

impl Default for AbortBackoff {
    fn default() -> Self {
        AbortBackoff {
            next: Duration::from_micros(200),
        }
    }
}

impl AbortBackoff {
    /// The pause before the next attempt.
    pub fn next_pause(&mut self) -> Duration {
        let pause = self.next;
        self.next = (self.next * 2).min(Duration::from_millis(50));
        pause
    }
}

#[cfg(test)]
mod tests {
    use super::AbortBackoff;
    use std::time::Duration;

    #[test]
    fn abort_backoff_doubles_to_its_cap() {
        let mut b = AbortBackoff::default();
        let pauses: Vec<u64> = (0..10).map(|_| b.next_pause().as_micros() as u64).collect();
        assert_eq!(
            pauses,
            [200, 400, 800, 1_600, 3_200, 6_400, 12_800, 25_600, 50_000, 50_000]
        );
        assert_eq!(b.next_pause(), Duration::from_millis(50));
    }
}
