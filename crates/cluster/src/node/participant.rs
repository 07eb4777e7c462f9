//! Serving the transactions of other nodes: the participant's side of
//! locking and two-phase commit across nodes (design §6, step 2; the
//! transaction's side is `raft::groups::spanning`).
//!
//! A transaction run by another node (the one whose session it is) locks
//! the keys of the splits this node leads here, in this database's own
//! lock table, so that its conflicts with this node's transactions and
//! with other nodes' are decided in one place, by wound-wait on the
//! priorities every node gives alike. Each such transaction has a
//! [`Proxy`] here: a lock handle of its priority, and the Raft term of
//! each split it locked in (a lease that moved, even if it came back, left
//! those locks behind on another node's table, so they no longer count).
//!
//! * `LockKeys` takes a lock under the proxy, waiting at most
//!   [`LOCK_CALL_WAIT`](super::api::LOCK_CALL_WAIT) before it answers
//!   that it still waits (the caller asks again). A wounded proxy (an
//!   older transaction wanted its lock) has lost its locks: the answer is
//!   ABORTED, and the caller's transaction aborts.
//! * `PrepareKeys` checks the proxy holds its locks in the same terms,
//!   marks them committing (no longer woundable), and prepares the writes
//!   in each split's log (`SplitGroups::prepare_for`). Without writes, it
//!   only confirms the locks (the transaction read here and commits
//!   elsewhere): checked and marked the same way, held until the
//!   transaction ends, answered with this node's clock.
//! * `ResolveKeys` resolves the prepared entries with the outcome and
//!   releases the locks; `ReleaseKeys` releases a proxy that did not
//!   prepare.
//! * `Settle` is answered by the leader of the database's first split,
//!   which decides every transaction that spans nodes.
//!
//! Every [`TEND_EVERY`] the node lets go of the proxies that did not
//! prepare and idled for [`IDLE`] (their node forgot them: Spanner aborts a
//! transaction idle for ten seconds too) or whose node is gone: started
//! again since, or silent to this node's heartbeats (a node killed under
//! load would otherwise leave its locks blocking others for the whole
//! [`IDLE`]). A transaction whose locks were let go learns it at its next
//! call here: it says it holds locks here, finds none, and is refused
//! ABORTED. The node then settles the transactions prepared here that
//! were not resolved: at once if their node is gone (started again, or
//! silent: a prepare holds its keys against reads too, so waiting would
//! stall every transaction that reads them), otherwise once prepared more
//! than [`SETTLE_AFTER`] ago; and it resolves those a previous leader of
//! its splits left prepared.

use std::collections::BTreeMap;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use rowtree_txn::{LockMode, LockTarget};
use tonic::Status;

use super::api::{
    txn_from_bytes, LockKeysRequest, PrepareKeysRequest, ReleaseKeysRequest, ResolveKeysRequest,
    SettleReply, SettleRequest, TxnReply, MAX_PREPARE_KEYS, MAX_SPLIT_KEY,
};
use super::api::{LOCK_CALL_WAIT, STILL_WAITING};
use super::proxies::Proxy;
use super::splits::DatabaseGroups;
use crate::raft::Refusal;
use crate::twophase::{GlobalTxnId, Outcome};

/// A proxy that did not prepare and has had no call for this long is let
/// go, its locks released.
pub const IDLE: Duration = Duration::from_secs(10);

/// A transaction prepared here and not resolved for this long is settled
/// with the first split's leader.
pub const SETTLE_AFTER: Duration = Duration::from_secs(3);

/// How often idle proxies are let go and old prepares settled: often
/// enough that the keys of a node killed under load are free within a
/// small part of an election timeout of learning it died.
const TEND_EVERY: Duration = Duration::from_millis(250);

/// The most proxies a database keeps at once: past it, new transactions
/// of other nodes are refused (UNAVAILABLE) until some end.
const MAX_PROXIES: usize = 100_000;

/// A refusal as the peer service answers it.
fn status(refusal: Refusal) -> Status {
    match refusal {
        Refusal::Aborted(why) => Status::aborted(why),
        Refusal::Moved(why) => Status::failed_precondition(why),
        Refusal::Waiting => Status::deadline_exceeded(STILL_WAITING),
        Refusal::Failed(why) => Status::unavailable(why),
    }
}

impl DatabaseGroups {
    fn database(&self) -> Result<rowtree_db::Database, Status> {
        self.db
            .upgrade()
            .ok_or_else(|| Status::unavailable("the database is closing on this node"))
    }

    /// Lets go of `txn`'s proxy: its locks released, forgotten.
    fn drop_proxy(&self, db: &rowtree_db::Database, txn: GlobalTxnId) {
        if let Some(proxy) = self.proxies.by_txn.lock().remove(&txn) {
            db.lock_table().release_all(&proxy.handle);
        }
    }

    /// `LockKeys`: see the module docs. Blocks while the lock is waited
    /// for.
    pub(super) fn lock_keys(&self, r: LockKeysRequest) -> Result<TxnReply, Status> {
        let longest = r.start.len().max(r.end.as_ref().map_or(0, Vec::len));
        if longest > MAX_SPLIT_KEY {
            return Err(Status::invalid_argument(format!(
                "a lock bound of {longest} bytes is above the limit of {MAX_SPLIT_KEY}"
            )));
        }
        let txn = GlobalTxnId(txn_from_bytes(&r.txn)?);
        let db = self.database()?;
        let splits = self
            .groups
            .serving(&r.start, r.end.as_deref(), r.point)
            .map_err(status)?;
        let made_at = self.shared.upgrade().map_or(0, |s| s.wall_nanos());
        let handle = {
            let mut proxies = self.proxies.by_txn.lock();
            if !proxies.contains_key(&txn) {
                if r.holds {
                    return Err(Status::aborted(
                        "the transaction's locks on this node were let go (its node went \
                         silent, or it idled): retry the transaction",
                    ));
                }
                if proxies.len() >= MAX_PROXIES {
                    return Err(Status::unavailable(format!(
                        "this node holds the locks of {MAX_PROXIES} transactions of other \
                         nodes; retry"
                    )));
                }
            }
            let proxy = proxies.entry(txn).or_insert_with(|| Proxy {
                handle: db.lock_table().begin(Some(r.priority)),
                terms: BTreeMap::new(),
                used: Instant::now(),
                prepared: false,
                confirmed: false,
                origin: (r.node, made_at),
            });
            if proxy.prepared {
                return Err(Status::aborted(
                    "the transaction is prepared here and takes no more locks",
                ));
            }
            for (split, term) in &splits {
                if *proxy.terms.entry(*split).or_insert(*term) != *term {
                    let handle = proxy.handle.clone();
                    proxies.remove(&txn);
                    db.lock_table().release_all(&handle);
                    return Err(Status::aborted(format!(
                        "the transaction's locks on {split} were lost: its leader changed"
                    )));
                }
            }
            proxy.used = Instant::now();
            proxy.handle.clone()
        };
        if handle.is_wounded() {
            self.drop_proxy(&db, txn);
            return Err(Status::aborted(
                "the transaction was wounded by an older conflicting transaction",
            ));
        }
        let target = if r.point {
            LockTarget::key(r.start)
        } else {
            LockTarget::range(r.start, r.end)
        };
        let mode = if r.exclusive {
            LockMode::Exclusive
        } else {
            LockMode::Shared
        };
        let locked =
            db.lock_table()
                .lock(&handle, target, mode, Some(Instant::now() + LOCK_CALL_WAIT));
        let kept = match self.proxies.by_txn.lock().get_mut(&txn) {
            Some(proxy) if Arc::ptr_eq(&proxy.handle, &handle) => {
                proxy.used = Instant::now();
                true
            }
            _ => false,
        };
        if !kept {
            // The proxy was let go while this call waited: what it was
            // granted is let go too, or nothing would release it.
            db.lock_table().release_all(&handle);
            return Err(Status::aborted(
                "the transaction's locks on this node were let go while it waited: retry the \
                 transaction",
            ));
        }
        match locked {
            Ok(()) => Ok(TxnReply {}),
            Err(rowtree_txn::Error::DeadlineExceeded) => {
                Err(Status::deadline_exceeded(STILL_WAITING))
            }
            Err(e) if e.is_retryable() => {
                self.drop_proxy(&db, txn);
                Err(Status::aborted(e.to_string()))
            }
            Err(e) => Err(Status::internal(e.to_string())),
        }
    }

    /// `PrepareKeys`: see the module docs. Blocks until the prepares are
    /// applied.
    pub(super) fn prepare_keys(&self, r: PrepareKeysRequest) -> Result<u64, Status> {
        if r.keys.len() > MAX_PREPARE_KEYS
            || r.values.len() != r.keys.len()
            || r.deletes.len() != r.keys.len()
        {
            return Err(Status::invalid_argument(format!(
                "a prepare carries {} keys, {} values and {} delete flags (at most {})",
                r.keys.len(),
                r.values.len(),
                r.deletes.len(),
                MAX_PREPARE_KEYS
            )));
        }
        if r.pending {
            // Templates are stamped when the commit is applied, where a
            // malformed one could only be refused: checked now instead.
            for (value, delete) in r.values.iter().zip(&r.deletes) {
                if !delete {
                    crate::twophase::stamp(value, 0).map_err(Status::invalid_argument)?;
                }
            }
        }
        let txn = GlobalTxnId(txn_from_bytes(&r.txn)?);
        let db = self.database()?;
        if r.keys.is_empty() {
            return self.confirm_keys(&db, txn);
        }
        let (handle, terms) = {
            let mut proxies = self.proxies.by_txn.lock();
            let Some(proxy) = proxies.get_mut(&txn) else {
                return Err(Status::aborted(
                    "the transaction holds no locks here (let go after idling, or lost when \
                     this node restarted)",
                ));
            };
            proxy.used = Instant::now();
            proxy.prepared = true;
            (proxy.handle.clone(), proxy.terms.clone())
        };
        // From here the transaction cannot be wounded; a wounded one has
        // lost its locks already.
        if let Err(e) = db.lock_table().mark_committing(&handle) {
            self.drop_proxy(&db, txn);
            return Err(Status::aborted(e.to_string()));
        }
        let writes = r
            .keys
            .into_iter()
            .zip(r.values)
            .zip(r.deletes)
            .map(|((k, v), delete)| (k, (!delete).then_some(v)))
            .collect();
        let participants: Vec<rowtree_kv::SplitId> = r
            .participants
            .iter()
            .map(|p| rowtree_kv::SplitId(*p))
            .collect();
        match self.groups.prepare_for(
            txn,
            rowtree_kv::SplitId(r.coordinator),
            &participants,
            writes,
            r.pending,
            &terms,
        ) {
            Ok(ts) => Ok(ts),
            Err(Refusal::Aborted(why)) => {
                // Nothing was proposed: the locks go now.
                self.groups.forget_held(txn);
                self.drop_proxy(&db, txn);
                Err(Status::aborted(why))
            }
            // A proposal not answered may still be applied: the locks stay
            // until the transaction is resolved or settled.
            Err(other) => Err(status(other)),
        }
    }

    /// `PrepareKeys` with no writes: the transaction only read here under
    /// its locks, and commits elsewhere. The proxy must still hold every
    /// lock, in the terms it took them; from now on it cannot be wounded,
    /// and it keeps its locks until the transaction ends (`ReleaseKeys` or
    /// `ResolveKeys`). Answers this node's clock.
    fn confirm_keys(&self, db: &rowtree_db::Database, txn: GlobalTxnId) -> Result<u64, Status> {
        let (handle, terms) = {
            let mut proxies = self.proxies.by_txn.lock();
            let Some(proxy) = proxies.get_mut(&txn) else {
                return Err(Status::aborted(
                    "the transaction holds no locks here (let go after idling or once its node \
                     went silent, or lost when this node restarted)",
                ));
            };
            proxy.used = Instant::now();
            proxy.confirmed = true;
            (proxy.handle.clone(), proxy.terms.clone())
        };
        if let Err(e) = db.lock_table().mark_committing(&handle) {
            self.drop_proxy(db, txn);
            return Err(Status::aborted(e.to_string()));
        }
        match self.groups.confirm_for(&terms) {
            Ok(ts) => Ok(ts),
            Err(refusal) => {
                self.drop_proxy(db, txn);
                Err(status(refusal))
            }
        }
    }

    /// `ResolveKeys`: the outcome of a transaction prepared here.
    pub(super) fn resolve_keys(&self, r: ResolveKeysRequest) -> Result<TxnReply, Status> {
        let txn = GlobalTxnId(txn_from_bytes(&r.txn)?);
        let db = self.database()?;
        let outcome = if r.commit {
            Outcome::Commit { ts: r.ts }
        } else {
            Outcome::Abort { at: r.ts }
        };
        self.resolve_held(&db, txn, outcome)
            .map_err(Status::unavailable)?;
        Ok(TxnReply {})
    }

    /// Resolves `txn` here and lets go of its proxy.
    fn resolve_held(
        &self,
        db: &rowtree_db::Database,
        txn: GlobalTxnId,
        outcome: Outcome,
    ) -> Result<(), String> {
        if let Outcome::Commit { ts } = outcome {
            // The next commit of these keys here comes after it.
            db.observe_timestamp(ts);
        }
        self.groups.resolve_for(txn, outcome)?;
        self.drop_proxy(db, txn);
        Ok(())
    }

    /// `ReleaseKeys`: a transaction that did not prepare here ended.
    pub(super) fn release_keys(&self, r: ReleaseKeysRequest) -> Result<TxnReply, Status> {
        let txn = GlobalTxnId(txn_from_bytes(&r.txn)?);
        let db = self.database()?;
        let prepared = self
            .proxies
            .by_txn
            .lock()
            .get(&txn)
            .is_some_and(|p| p.prepared);
        // A prepared transaction waits for its outcome (`ResolveKeys`, or
        // settling): its locks are not let go before.
        if !prepared && !self.groups.holds_for_other(txn) {
            self.drop_proxy(&db, txn);
        }
        Ok(TxnReply {})
    }

    /// `Settle`: the outcome of a transaction this node decides.
    pub(super) fn settle(&self, r: SettleRequest) -> Result<SettleReply, Status> {
        let txn = GlobalTxnId(txn_from_bytes(&r.txn)?);
        match self.groups.settle(txn).map_err(status)? {
            None => Ok(SettleReply::default()),
            Some(Outcome::Commit { ts }) => Ok(SettleReply {
                decided: true,
                commit: true,
                ts,
            }),
            Some(Outcome::Abort { at }) => Ok(SettleReply {
                decided: true,
                commit: false,
                ts: at,
            }),
        }
    }

    /// Why the locks of a proxy that did not prepare are let go now, if
    /// they are: it idled for [`IDLE`], or the node running it is gone
    /// (started again since the proxy was made) or has not answered this
    /// node's heartbeats for a while, and no call of it is in progress
    /// (each waits at most [`LOCK_CALL_WAIT`]). The transaction learns it
    /// at its next call here, refused as ABORTED (`LockKeysRequest::holds`,
    /// and a prepare without a proxy).
    fn let_go(&self, shared: Option<&super::Shared>, proxy: &Proxy) -> Option<&'static str> {
        if proxy.prepared {
            return None;
        }
        let idle = proxy.used.elapsed();
        // A confirmed proxy's transaction may be committing at its node,
        // on the strength of these locks: they go when it ends, or when
        // its node restarted, or after longer than a commit may take.
        let limit = if proxy.confirmed { 2 * IDLE } else { IDLE };
        if idle >= limit {
            return Some("idle");
        }
        let (origin, made_at) = proxy.origin;
        let shared = shared?;
        if origin == 0 || origin == shared.id {
            return None;
        }
        if shared.started_after(origin, made_at) {
            Some("its node restarted")
        } else if !proxy.confirmed && idle >= LOCK_CALL_WAIT && !shared.answering(origin) {
            Some("its node went silent")
        } else {
            None
        }
    }

    /// One round of tending (see the module docs).
    fn tend_proxies(&self) {
        let Ok(db) = self.database() else {
            return;
        };
        let shared = self.shared.upgrade();
        // Taken out under one hold of the table: a prepare that comes
        // meanwhile either marked its proxy first (kept) or finds none.
        let mut gone = Vec::new();
        self.proxies.by_txn.lock().retain(|txn, p| {
            let Some(why) = self.let_go(shared.as_deref(), p) else {
                return true;
            };
            gone.push((*txn, why, p.handle.clone()));
            false
        });
        for (txn, why, handle) in gone {
            tracing::debug!(%txn, why, "another node's transaction: its locks here let go");
            db.lock_table().release_all(&handle);
        }
        // A prepared transaction whose node is gone is settled now: it
        // would otherwise keep its keys locked, and reads of them waiting,
        // for the whole of SETTLE_AFTER.
        let orphaned: std::collections::BTreeSet<GlobalTxnId> = match shared.as_deref() {
            Some(shared) => self
                .proxies
                .by_txn
                .lock()
                .iter()
                .filter(|(_, p)| p.prepared && origin_gone(shared, p.origin))
                .map(|(txn, _)| *txn)
                .collect(),
            None => Default::default(),
        };
        for txn in self.groups.settle_held(SETTLE_AFTER, &orphaned) {
            self.drop_proxy(&db, txn);
        }
        self.groups.settle_orphans();
        // A prepared proxy whose transaction is resolved (by recovery, or
        // under another leader) is let go too.
        let resolved: Vec<GlobalTxnId> = self
            .proxies
            .by_txn
            .lock()
            .iter()
            .filter(|(txn, p)| {
                p.prepared
                    && p.used.elapsed() >= SETTLE_AFTER
                    && !self.groups.holds_for_other(**txn)
            })
            .map(|(txn, _)| *txn)
            .collect();
        for txn in resolved {
            self.drop_proxy(&db, txn);
        }
    }
}

/// Whether the node that runs a transaction (`origin`: its id, and when,
/// on its wall clock, the transaction's proxy was made here) is gone: it
/// started again since, or it does not answer this node's heartbeats.
fn origin_gone(shared: &super::Shared, (origin, made_at): (u64, i64)) -> bool {
    origin != 0
        && origin != shared.id
        && (shared.started_after(origin, made_at) || !shared.answering(origin))
}

/// Tends the proxies of a database every [`TEND_EVERY`] until it is
/// closed (see the module docs).
pub(super) fn tend(runtime: &tokio::runtime::Handle, hosted: &Arc<DatabaseGroups>) {
    let hosted: Weak<DatabaseGroups> = Arc::downgrade(hosted);
    runtime.spawn(async move {
        loop {
            tokio::time::sleep(TEND_EVERY).await;
            let Some(hosted) = hosted.upgrade() else {
                return;
            };
            if hosted.db.upgrade().is_none() {
                return;
            }
            let done = tokio::task::spawn_blocking(move || hosted.tend_proxies()).await;
            if done.is_err() {
                return;
            }
        }
    });
}
