//! The lock manager: pessimistic two-phase locking with wound-wait, as in Spanner.
//!
//! # What is locked
//!
//! A read-write transaction takes a **shared** (S) lock on everything it reads and an
//! **exclusive** (X) lock on everything it writes (writes are buffered, so X locks are taken
//! at commit; an S lock already held by the same transaction is upgraded). All locks are
//! held until the transaction ends ([`LockManager::release_all`]), which makes the schedule
//! serializable (strict two-phase locking).
//!
//! A lock covers either one key or a key range `[start, end)`. Range reads lock the range,
//! so a concurrent insert of a key inside it, which needs X on that key, must wait: no
//! phantoms. Compatibility is the classic matrix, applied to overlapping targets:
//!
//! ```text
//!            held S   held X
//! want S       ok      wait
//! want X      wait     wait        (a transaction never conflicts with itself)
//! ```
//!
//! # Wound-wait: why nobody deadlocks
//!
//! Every transaction has a priority: its begin sequence number, smaller = older = stronger.
//! A retried transaction keeps its first priority, so it only gets older and eventually wins.
//! When T asks for a lock held in a conflicting mode by H:
//!
//! ```text
//!   T older than H  ──>  T *wounds* H (H is aborted), then waits for H to let go
//!   T younger than H ──>  T waits for H
//!
//!   time ─────────────────────────────────────────────────────────────────────>
//!   T1 (old)   S(a) ................ X(b)? wounds T2 ~~~~ wait ~~~~ X(b) commit
//!   T2 (young)       S(b) .... X(a)? waits for T1 ~~ Aborted  release_all
//! ```
//!
//! A transaction only ever waits for an older one (or for one that is already committing,
//! which takes no more locks and so waits for nobody), so the waits-for graph has no cycle.
//! A wounded transaction can never commit: its next lock request and its
//! [`LockManager::mark_committing`] fail with [`Error::Aborted`]. What happens to its locks
//! depends on where the victim is when it is wounded:
//!
//! - **idle** (between calls, not blocked in [`LockManager::lock`]): as in Spanner, the
//!   lock manager aborts it on the spot, releasing all its locks at wound time and waking
//!   their waiters, so the older transaction proceeds without waiting for the victim's
//!   client to make another call. The owner's later [`LockManager::release_all`] is a
//!   harmless no-op (it only marks the handle done).
//! - **blocked in `lock`**: its pending request is woken and fails with
//!   [`Error::Aborted`]; its caller then calls `release_all`. (Should another conflicting
//!   request find it idle and wounded before that, the locks are released then.)
//!
//! The victim cannot slip a new lock in while its locks are being released: wounding and
//! releasing happen under the tables mutex, and `lock` checks the wounded bit under the
//! same mutex before granting. A holder that is already *committing* cannot be wounded:
//! the requester waits for it to finish.
//!
//! # Commit protocol for callers
//!
//! ```text
//! begin -> lock(S) on reads ... -> lock(X) on writes -> mark_committing -> write -> release_all
//!                                   (any Aborted: release_all, then retry with the same priority)
//! ```
//!
//! A transaction that has not reached `mark_committing` may lose its locks at any time
//! (when it is wounded while idle), so nothing it read counts until `mark_committing`
//! succeeds; from then on it holds its locks until `release_all`.
//!
//! # Data structures
//!
//! One mutex guards all lock tables; each critical section is a lookup plus a grant, and no
//! I/O happens under it. Key locks live in an ordered map (a `BTreeMap` rather than a hash
//! map, because a range request must find the locked keys inside its range; point lookups
//! stay O(log n)). Range locks, which are rarer, sit in a plain list that key requests scan.
//! Each transaction waits on its own condition variable; a release wakes exactly the
//! transactions that found the releaser in their way, and wounding wakes the victim.

use std::cmp::Ordering as CmpOrdering;
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::error::{Error, Result};

/// How long a waiter sleeps before re-checking its locks even without a wake-up. Wake-ups
/// are targeted, so this is only a safety net; it bounds the cost of a missed one.
const RECHECK_INTERVAL: Duration = Duration::from_millis(50);

/// Identifies a transaction within one [`LockManager`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TxnId(pub u64);

impl fmt::Display for TxnId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "txn#{}", self.0)
    }
}

/// The mode of a lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LockMode {
    /// Taken on reads; compatible with other shared locks.
    Shared,
    /// Taken on writes (at commit); compatible with nothing held by another transaction.
    Exclusive,
}

impl LockMode {
    /// Whether a lock in `self` mode can coexist with another transaction's lock in `other`.
    pub fn is_compatible_with(self, other: LockMode) -> bool {
        self == LockMode::Shared && other == LockMode::Shared
    }
}

/// A key range `[start, end)`; `end: None` means unbounded above.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KeyRange {
    /// First key in the range (inclusive).
    pub start: Vec<u8>,
    /// Key after the range (exclusive), or `None` for no upper bound.
    pub end: Option<Vec<u8>>,
}

impl KeyRange {
    /// The range `[start, end)`.
    pub fn new(start: impl Into<Vec<u8>>, end: Option<Vec<u8>>) -> Self {
        KeyRange {
            start: start.into(),
            end,
        }
    }

    /// Whether the range holds no key at all (`end <= start`).
    pub fn is_empty(&self) -> bool {
        self.end
            .as_deref()
            .is_some_and(|end| end <= &self.start[..])
    }

    /// Whether `key` lies inside the range.
    pub fn contains(&self, key: &[u8]) -> bool {
        key >= &self.start[..] && self.end.as_deref().is_none_or(|end| key < end)
    }

    /// Whether the two ranges share at least one key.
    pub fn overlaps(&self, other: &KeyRange) -> bool {
        let below = |start: &[u8], end: &Option<Vec<u8>>| end.as_deref().is_none_or(|e| start < e);
        !self.is_empty()
            && !other.is_empty()
            && below(&self.start, &other.end)
            && below(&other.start, &self.end)
    }

    fn bounds(&self) -> (Bound<&[u8]>, Bound<&[u8]>) {
        let end = match &self.end {
            Some(end) => Bound::Excluded(&end[..]),
            None => Bound::Unbounded,
        };
        (Bound::Included(&self.start[..]), end)
    }
}

/// What a lock covers.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum LockTarget {
    /// One key.
    Key(Vec<u8>),
    /// Every key in a range, including keys not yet written (phantom protection).
    Range(KeyRange),
}

impl LockTarget {
    /// A lock on one key.
    pub fn key(key: impl Into<Vec<u8>>) -> Self {
        LockTarget::Key(key.into())
    }

    /// A lock on `[start, end)`; `end: None` means unbounded.
    pub fn range(start: impl Into<Vec<u8>>, end: Option<Vec<u8>>) -> Self {
        LockTarget::Range(KeyRange::new(start, end))
    }
}

/// The life-cycle of a transaction as the lock manager sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnState {
    /// Reading and locking; can be wounded.
    Active,
    /// Past [`LockManager::mark_committing`]: takes no more locks and cannot be wounded.
    Committing,
    /// Its locks were released; the handle is dead.
    Done,
}

// `TxnHandle::flags` packs the state and the wounded bit into one atomic, so that "wound
// only if still active" and "start committing only if not wounded" are each a single
// compare-and-swap and can never both succeed.
const STATE_ACTIVE: u8 = 0;
const STATE_COMMITTING: u8 = 1;
const STATE_DONE: u8 = 2;
const STATE_MASK: u8 = 0b11;
const WOUNDED: u8 = 0b100;

/// One transaction's identity and status, shared (`Arc`) between its owner and the lock
/// tables. Obtained from [`LockManager::begin`].
pub struct TxnHandle {
    id: TxnId,
    priority: u64,
    flags: AtomicU8,
    /// Who wounded this transaction (0 = nobody yet), for the abort message.
    wounded_by: AtomicU64,
    /// Signalled when a lock this transaction waits for may have been released, or when it
    /// is wounded. Always used with the manager's state mutex.
    wake: Condvar,
}

impl TxnHandle {
    /// The transaction's id.
    pub fn id(&self) -> TxnId {
        self.id
    }

    /// The priority: the begin sequence number of the first attempt. Smaller is older and
    /// wins conflicts. Pass it to [`LockManager::begin`] when retrying.
    pub fn priority(&self) -> u64 {
        self.priority
    }

    /// Whether an older transaction has wounded this one (it must abort).
    pub fn is_wounded(&self) -> bool {
        self.flags.load(Ordering::Acquire) & WOUNDED != 0
    }

    /// The current state.
    pub fn state(&self) -> TxnState {
        match self.flags.load(Ordering::Acquire) & STATE_MASK {
            STATE_ACTIVE => TxnState::Active,
            STATE_COMMITTING => TxnState::Committing,
            _ => TxnState::Done,
        }
    }

    /// Whether `self` is older (stronger) than `other`. Ties in priority (a caller reusing a
    /// priority) are broken by id so that the order is total.
    fn is_older_than(&self, other: &TxnHandle) -> bool {
        (self.priority, self.id).cmp(&(other.priority, other.id)) == CmpOrdering::Less
    }

    /// Wounds the transaction if it is active and not yet wounded; returns whether it did.
    fn wound(&self, by: TxnId) -> bool {
        // Record the wounder first: the CAS below publishes it (release) to whoever sees the
        // wounded bit. If the CAS fails the transaction is committing or done and can never
        // be wounded, so the stale value is never read.
        let _ = self
            .wounded_by
            .compare_exchange(0, by.0, Ordering::Relaxed, Ordering::Relaxed);
        self.flags
            .compare_exchange(
                STATE_ACTIVE,
                STATE_ACTIVE | WOUNDED,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_ok()
    }

    fn aborted(&self) -> Error {
        Error::Aborted {
            reason: format!(
                "{} was wounded by older transaction txn#{} (wound-wait)",
                self.id,
                self.wounded_by.load(Ordering::Relaxed)
            ),
        }
    }

    /// Fails if the transaction may not take locks any more.
    fn check_can_lock(&self) -> Result<()> {
        if self.is_wounded() {
            return Err(self.aborted());
        }
        match self.state() {
            TxnState::Active => Ok(()),
            state => Err(Error::FailedPrecondition(format!(
                "{} requested a lock while {state:?}",
                self.id
            ))),
        }
    }
}

impl fmt::Debug for TxnHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TxnHandle")
            .field("id", &self.id)
            .field("priority", &self.priority)
            .field("state", &self.state())
            .field("wounded", &self.is_wounded())
            .finish()
    }
}

/// A transaction's hold on a key.
struct Holder {
    txn: Arc<TxnHandle>,
    mode: LockMode,
}

/// A transaction's hold on a range.
struct RangeLock {
    range: KeyRange,
    txn: Arc<TxnHandle>,
    mode: LockMode,
}

/// What one transaction holds, so `release_all` need not scan the tables.
#[derive(Default)]
struct Held {
    keys: Vec<Vec<u8>>,
    has_ranges: bool,
}

#[derive(Default)]
struct Tables {
    /// Locked keys and their holders (usually one, several when shared).
    keys: BTreeMap<Vec<u8>, Vec<Holder>>,
    /// All range locks.
    ranges: Vec<RangeLock>,
    held: HashMap<TxnId, Held>,
    /// For each holder, the transactions that are waiting because of it: its release wakes
    /// them. Entries may be stale (the waiter moved on); a stale wake-up is harmless.
    waiters_by_holder: HashMap<TxnId, HashMap<TxnId, Arc<TxnHandle>>>,
    /// Requests currently blocked.
    waiting: usize,
    /// How many requests of each transaction are blocked in [`LockManager::lock`] right now
    /// (absent = none). A wounded transaction that is not blocked is idle: its locks are
    /// released at once.
    blocked: HashMap<TxnId, usize>,
}

impl Tables {
    /// Whether `txn` has a request blocked in [`LockManager::lock`] (it is then woken and
    /// fails by itself when wounded).
    fn is_blocked(&self, txn: TxnId) -> bool {
        self.blocked.contains_key(&txn)
    }

    fn enter_wait(&mut self, txn: TxnId) {
        self.waiting += 1;
        *self.blocked.entry(txn).or_default() += 1;
    }

    fn leave_wait(&mut self, txn: TxnId) {
        self.waiting -= 1;
        if let Entry::Occupied(mut blocked) = self.blocked.entry(txn) {
            *blocked.get_mut() -= 1;
            if *blocked.get() == 0 {
                blocked.remove();
            }
        }
    }

    /// The other transactions whose locks conflict with `txn` taking `mode` on `target`,
    /// each listed once.
    fn conflicts(
        &self,
        txn: &TxnHandle,
        target: &LockTarget,
        mode: LockMode,
    ) -> Vec<Arc<TxnHandle>> {
        let mut out: Vec<Arc<TxnHandle>> = Vec::new();
        let mut add = |other: &Arc<TxnHandle>, other_mode: LockMode| {
            if other.id != txn.id
                && !mode.is_compatible_with(other_mode)
                && !out.iter().any(|t| t.id == other.id)
            {
                out.push(other.clone());
            }
        };
        match target {
            LockTarget::Key(key) => {
                for h in self.keys.get(key).into_iter().flatten() {
                    add(&h.txn, h.mode);
                }
                for r in self.ranges.iter().filter(|r| r.range.contains(key)) {
                    add(&r.txn, r.mode);
                }
            }
            LockTarget::Range(range) => {
                if range.is_empty() {
                    // Also keeps `BTreeMap::range` from panicking on start > end.
                    return out;
                }
                for (_, holders) in self.keys.range::<[u8], _>(range.bounds()) {
                    for h in holders {
                        add(&h.txn, h.mode);
                    }
                }
                for r in self.ranges.iter().filter(|r| r.range.overlaps(range)) {
                    add(&r.txn, r.mode);
                }
            }
        }
        out
    }

    /// Records the lock; the caller checked there is no conflict.
    fn grant(&mut self, txn: &Arc<TxnHandle>, target: LockTarget, mode: LockMode) {
        match target {
            LockTarget::Key(key) => {
                let holder = Holder {
                    txn: txn.clone(),
                    mode,
                };
                match self.keys.get_mut(&key) {
                    Some(holders) => {
                        if let Some(h) = holders.iter_mut().find(|h| h.txn.id == txn.id) {
                            // Re-request or upgrade S -> X; never downgrade.
                            h.mode = h.mode.max(mode);
                            return;
                        }
                        holders.push(holder);
                    }
                    None => {
                        self.keys.insert(key.clone(), vec![holder]);
                    }
                }
                self.held.entry(txn.id).or_default().keys.push(key);
            }
            LockTarget::Range(range) => {
                let already = self
                    .ranges
                    .iter()
                    .any(|r| r.txn.id == txn.id && r.range == range && r.mode >= mode);
                if !already {
                    self.ranges.push(RangeLock {
                        range,
                        txn: txn.clone(),
                        mode,
                    });
                    self.held.entry(txn.id).or_default().has_ranges = true;
                }
            }
        }
    }

    /// Drops every lock of `txn` and returns the transactions to wake.
    fn release(&mut self, txn: &TxnHandle) -> Vec<Arc<TxnHandle>> {
        if let Some(held) = self.held.remove(&txn.id) {
            for key in held.keys {
                if let Some(holders) = self.keys.get_mut(&key) {
                    holders.retain(|h| h.txn.id != txn.id);
                    if holders.is_empty() {
                        self.keys.remove(&key);
                    }
                }
            }
            if held.has_ranges {
                self.ranges.retain(|r| r.txn.id != txn.id);
            }
        }
        self.waiters_by_holder
            .remove(&txn.id)
            .map(|waiters| waiters.into_values().collect())
            .unwrap_or_default()
    }
}

/// Grants and tracks the locks of read-write transactions. See the [module docs](self).
///
/// Share it between threads by reference or `Arc`; every method takes `&self`.
#[derive(Default)]
pub struct LockManager {
    tables: Mutex<Tables>,
    next_id: AtomicU64,
}

impl LockManager {
    /// An empty lock manager.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts a transaction. `priority: None` gives it a fresh priority (younger than every
    /// transaction begun before); a retry should pass the [`TxnHandle::priority`] of its
    /// first attempt so that it ages and eventually wins.
    pub fn begin(&self, priority: Option<u64>) -> Arc<TxnHandle> {
        // Ids start at 1: 0 means "nobody" in `TxnHandle::wounded_by`.
        let seq = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        Arc::new(TxnHandle {
            id: TxnId(seq),
            priority: priority.unwrap_or(seq),
            flags: AtomicU8::new(STATE_ACTIVE),
            wounded_by: AtomicU64::new(0),
            wake: Condvar::new(),
        })
    }

    /// Takes `mode` on `target` for `txn`, waiting as wound-wait says (see the
    /// [module docs](self)). Holding S and asking X upgrades; asking again is a no-op.
    ///
    /// A conflicting younger holder that is idle (not blocked in `lock` itself) is wounded
    /// and loses all its locks at once, so the request does not wait for it.
    ///
    /// Errors: [`Error::Aborted`] if `txn` is or gets wounded (the caller must
    /// [`release_all`](Self::release_all) and retry); [`Error::DeadlineExceeded`] if
    /// `deadline` passes first (the transaction keeps its locks and stays active);
    /// [`Error::FailedPrecondition`] if `txn` is committing or done.
    pub fn lock(
        &self,
        txn: &Arc<TxnHandle>,
        target: LockTarget,
        mode: LockMode,
        deadline: Option<Instant>,
    ) -> Result<()> {
        let mut tables = self.tables.lock();
        loop {
            // Checked under the mutex: wounding (and the release of an idle victim's locks)
            // also happens under it, so a wound cannot slip in between this check and the
            // grant or the wait below unnoticed, and a victim whose locks were released can
            // never take a new one.
            txn.check_can_lock()?;
            let conflicts = tables.conflicts(txn, &target, mode);
            if conflicts.is_empty() {
                tables.grant(txn, target, mode);
                return Ok(());
            }
            let mut freed = false;
            for holder in &conflicts {
                if txn.is_older_than(holder) && holder.wound(txn.id) {
                    // Interrupt the victim if it is blocked in `lock`.
                    holder.wake.notify_all();
                }
                // A wounded holder can never commit. If it is idle, abort it here and now
                // (as Spanner does): drop its locks and wake whoever waits for them. If it is
                // blocked in `lock`, it wakes, fails with Aborted and its owner releases.
                if holder.is_wounded() && !tables.is_blocked(holder.id) {
                    for waiter in tables.release(holder) {
                        // Waking ourselves is harmless: we are not waiting.
                        waiter.wake.notify_all();
                    }
                    freed = true;
                }
            }
            if freed {
                // Something was released: look again before deciding to wait.
                continue;
            }
            for holder in &conflicts {
                // Wounded or not, we wait until the holder lets go.
                tables
                    .waiters_by_holder
                    .entry(holder.id)
                    .or_default()
                    .insert(txn.id, txn.clone());
            }
            let now = Instant::now();
            let mut wake_at = now + RECHECK_INTERVAL;
            if let Some(deadline) = deadline {
                if now >= deadline {
                    return Err(Error::DeadlineExceeded);
                }
                wake_at = wake_at.min(deadline);
            }
            tables.enter_wait(txn.id);
            txn.wake.wait_until(&mut tables, wake_at);
            tables.leave_wait(txn.id);
        }
    }

    /// Moves `txn` from active to committing, after which it takes no more locks and can no
    /// longer be wounded. Fails with [`Error::Aborted`] if it was wounded first: the check
    /// and the transition are one atomic step, so a wounded transaction never commits.
    /// Calling it again while committing is a no-op.
    pub fn mark_committing(&self, txn: &TxnHandle) -> Result<()> {
        match txn.flags.compare_exchange(
            STATE_ACTIVE,
            STATE_COMMITTING,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => Ok(()),
            Err(flags) if flags & WOUNDED != 0 => Err(txn.aborted()),
            Err(flags) if flags & STATE_MASK == STATE_COMMITTING => Ok(()),
            Err(_) => Err(Error::FailedPrecondition(format!(
                "{} is done and cannot commit",
                txn.id
            ))),
        }
    }

    /// Drops every lock `txn` holds, marks it done and wakes the transactions waiting for
    /// it. Call it when the transaction ends, whether it committed or aborted. If the
    /// transaction was wounded while idle its locks are already gone, and this only marks
    /// it done; calling it again is a no-op too.
    pub fn release_all(&self, txn: &TxnHandle) {
        let to_wake = {
            let mut tables = self.tables.lock();
            // Keep the wounded bit for diagnostics; the state becomes Done.
            let _ = txn
                .flags
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |f| {
                    Some((f & WOUNDED) | STATE_DONE)
                });
            tables.release(txn)
        };
        // Waiters re-take the mutex when they wake, so notify after dropping it.
        for waiter in to_wake {
            waiter.wake.notify_all();
        }
    }

    /// The mode in which `txn` holds exactly `target`, if it does (range locks must match
    /// the range exactly).
    pub fn held_mode(&self, txn: &TxnHandle, target: &LockTarget) -> Option<LockMode> {
        let tables = self.tables.lock();
        match target {
            LockTarget::Key(key) => tables
                .keys
                .get(key)?
                .iter()
                .find(|h| h.txn.id == txn.id)
                .map(|h| h.mode),
            LockTarget::Range(range) => tables
                .ranges
                .iter()
                .filter(|r| r.txn.id == txn.id && &r.range == range)
                .map(|r| r.mode)
                .max(),
        }
    }

    /// A snapshot of the lock tables' size, for observability and tests.
    pub fn stats(&self) -> LockStats {
        let tables = self.tables.lock();
        LockStats {
            locked_keys: tables.keys.len(),
            range_locks: tables.ranges.len(),
            transactions: tables.held.len(),
            waiting: tables.waiting,
        }
    }
}

impl fmt::Debug for LockManager {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LockManager")
            .field("stats", &self.stats())
            .finish()
    }
}

/// Sizes of the lock tables at one instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LockStats {
    /// Keys with at least one lock.
    pub locked_keys: usize,
    /// Range locks held.
    pub range_locks: usize,
    /// Transactions holding at least one lock.
    pub transactions: usize,
    /// Lock requests blocked right now.
    pub waiting: usize,
}
