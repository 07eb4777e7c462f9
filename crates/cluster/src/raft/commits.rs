//! A database's commits through its split group's Raft log.
//!
//! [`GroupCommits`] is the [`Replication`] a cluster node installs on a
//! database's router (`rowtree_db::Options::replication`): each group of
//! commits the database's commit pipeline flushes becomes one `Write`
//! entry of the group's log, carrying the commits' row versions and the
//! metadata written with them. openraft answers a proposal once the entry
//! is committed (on a majority's disks) and applied to this node's
//! replica, which writes it to the very engine the database reads, through
//! the same router. So when the pipeline acknowledges a commit, a majority
//! holds it, and a read here sees it.
//!
//! Before proposing, the group is checked against the split, so that a
//! commit the replicas would refuse never reaches the log: every key
//! inside the split's range, and metadata only in the group of the first
//! split. A database of several groups goes through
//! [`crate::raft::SplitGroups`], which routes each commit to the instance
//! of its split and runs two-phase commit across them; a cluster node
//! still gives each database one group over the whole key space, whose
//! commits are all single-group commits.
//!
//! **Leases and commit wait** (design §5). A node commits and serves reads
//! only under the split's lease ([`crate::lease`]), which it takes and
//! extends here through the group's log as it needs it. Before the
//! database's commit pipeline issues a group's timestamps it asks
//! ([`Replication::ready_to_commit`], the pipeline's gate) for a lease that
//! has started on the node's clock and has more than half its length left,
//! taking or extending one if needed, so the timestamps fall inside it;
//! the group is checked against the lease again before it is proposed (a
//! group outside it fails, and the client retries with fresh timestamps).
//! After the entry is applied, the
//! commit is acknowledged only once the node's clock reads at least its
//! newest timestamp plus ε (commit wait): then every node's clock is past
//! it, and a transaction that starts anywhere afterwards takes a later
//! timestamp. A read is served ([`Replication::check_read`]) only while
//! the node holds a started lease whose expiry is above the read's
//! timestamp. A node that takes over waits until the old lease's expiry
//! plus ε, so a deposed leader that has not heard of its successor
//! stops serving before the successor starts.
//!
//! **Closed timestamps and follower reads** (design §5). The leader also
//! closes timestamps ([`GroupCommits::close_timestamp`], run every 200 ms
//! by the node's ticker): a `ClosedTs(c)` entry, `c` a second behind its
//! clock, proposed once a read at `c` under the lease has made sure that
//! every commit at or below `c` is applied and every later one is above
//! it. A replica that applies it may serve any read at or below `c` from
//! its own data: [`Replication::check_read`] accepts such a read on any
//! node at once, leaseholder or not, which is how a follower serves stale
//! reads without asking the leader, even while no leader can be reached.
//!
//! **Prepared transactions** (design §6). A transaction prepared in the
//! split (a `Prepare` entry applied, see [`crate::twophase`]) may commit at
//! or above its prepare timestamp, which is not known until it is
//! resolved. So a read at or above the lowest prepare timestamp waits for
//! the outcome ([`Replication::check_read`], at most the proposal
//! timeout), and closing keeps the closed timestamp below it.
//!
//! Only the group's leader can propose. On another node, or when the
//! leader cannot reach a majority within the timeout, the commit or read
//! fails with [`rowtree_kv::Error::Replication`] saying why (the database
//! reports it as UNAVAILABLE); a failed commit is not said to be lost,
//! only not acknowledged here (a later leader may still commit it).

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, OnceLock};
use std::time::Duration;

use openraft::error::{ClientWriteError, RaftError};
use openraft::type_config::async_runtime::WatchReceiver;
use openraft::Instant as _;
use parking_lot::Mutex;
use rowtree_kv::{CommitGroup, Replication, SplitId};
use rowtree_txn::Clock;

use crate::command::Command;
use crate::lease::{Lease, LeaseKeeper, LeaseRules, LeaseView, Renewal};
use crate::raft::{renew_lease, GroupRaft, TypeConfig};
use crate::replica::{hex, ClosedView, Descriptor, FrozenView, ImageView};
use crate::twophase::PreparedView;

/// The group this node runs, once started.
struct Started {
    raft: GroupRaft,
    /// The split's current lease, as this node's replica applied it.
    view: LeaseView,
    /// The split's closed timestamp, as this node's replica applied it:
    /// the node's safe time.
    closed: ClosedView,
    /// The lowest prepare timestamp of the transactions prepared in the
    /// split, as this node's replica applied them.
    prepared: PreparedView,
}

/// How far behind its clock a leaseholder closes timestamps
/// ([`GroupCommits::close_timestamp`]): far enough that no commit is still
/// in flight at or below it, so closing never waits.
pub const CLOSED_LAG: Duration = Duration::from_secs(1);

/// How long before its start a lease taken over from another holder is
/// proposed: about the time its entry takes to be committed and applied,
/// so that it is ready when it starts, and no replica applies a start
/// further ahead of its clock than this (plus the clocks' offset).
pub const TAKEOVER_LEAD: Duration = Duration::from_millis(25);

/// Commits proposed to one split group, under the split's lease (see the
/// module docs).
pub struct GroupCommits {
    node: u64,
    /// The group's split, as this node knows it (a split shrinks it).
    descriptor: parking_lot::RwLock<Descriptor>,
    split: SplitId,
    /// The group's instance on this node, once started (the database that
    /// uses this is opened first: its replica needs the database's router).
    started: OnceLock<Started>,
    /// The lease this process took; renewals are made one at a time, by
    /// whoever holds the lock.
    keeper: Mutex<LeaseKeeper>,
    rules: LeaseRules,
    /// The highest timestamp this node asked to serve at (a read's, or a
    /// commit's newest), recorded before its lease is checked: a lease
    /// given up ([`GroupCommits::hand_over`]) ends above it.
    highest: AtomicU64,
    /// The node's clock, which leases and commit timestamps are read on.
    clock: std::sync::Arc<dyn Clock>,
    /// How many groups of commits this node proposed (the closed
    /// timestamp ticker closes idle groups less often).
    proposed: AtomicU64,
    /// The runtime the group runs on; proposals are made there and waited
    /// for on the calling thread.
    runtime: tokio::runtime::Handle,
    timeout: Duration,
    /// Whether the split is frozen for a merge, as this node's replica
    /// applied it, if told ([`GroupCommits::watch_frozen`]).
    frozen: OnceLock<FrozenView>,
    /// Whether this node's replica awaits an image, if told
    /// ([`GroupCommits::watch_image`]).
    image: OnceLock<ImageView>,
    /// Set while [`GroupCommits::move_to`] hands the group to another node.
    moving: std::sync::atomic::AtomicBool,
    /// Prepare timestamps chosen for other nodes' transactions whose
    /// `Prepare` entry is not applied yet ([`GroupCommits::prepare_ts`]),
    /// and the timestamp last being closed: the two are chosen under this
    /// lock, so that a closed timestamp never reaches a prepare's.
    preparing: Mutex<Preparing>,
    /// The lowest of `preparing`'s timestamps (`u64::MAX`: none), read by
    /// readers without the lock.
    preparing_floor: AtomicU64,
}

/// See [`GroupCommits::prepare_ts`].
#[derive(Debug, Default)]
struct Preparing {
    /// Prepare timestamps by transaction.
    by_txn: std::collections::BTreeMap<crate::twophase::GlobalTxnId, u64>,
    /// The highest timestamp a `ClosedTs` entry was proposed for.
    closing: u64,
}

impl Preparing {
    fn floor(&self) -> u64 {
        self.by_txn.values().copied().min().unwrap_or(u64::MAX)
    }
}

impl std::fmt::Debug for GroupCommits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupCommits")
            .field("node", &self.node)
            .field("descriptor", &*self.descriptor.read())
            .field("started", &self.started.get().is_some())
            .field("rules", &self.rules)
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// A group is moved by load ([`GroupCommits::move_to`]) only to a voter
/// that answered its heartbeats (every 100 ms) this recently.
pub const RECEIVER_HEARD_WITHIN: Duration = Duration::from_millis(500);

/// How long [`GroupCommits::move_to`] waits, before giving anything up,
/// for the receiver's log to hold every entry of the leader's.
pub const RECEIVER_CATCH_UP: Duration = Duration::from_secs(1);

/// How long [`GroupCommits::transfer_to`] waits for the node it hands the
/// group to to lead it: long enough for a node a little behind to catch up
/// and win the election the transfer starts.
pub const TRANSFER_WAIT: Duration = Duration::from_secs(3);

impl GroupCommits {
    /// Commits of node `node` for the group of `descriptor`'s split, under
    /// leases by `rules` read on `clock` (the node's, as the database's
    /// timestamps are), proposed on `runtime`, each waiting at most
    /// `timeout` for a majority. Commits fail until [`GroupCommits::start`]
    /// is given the group.
    pub fn new(
        node: u64,
        descriptor: Descriptor,
        rules: LeaseRules,
        clock: std::sync::Arc<dyn Clock>,
        runtime: tokio::runtime::Handle,
        timeout: Duration,
    ) -> GroupCommits {
        GroupCommits {
            node,
            split: descriptor.split,
            descriptor: parking_lot::RwLock::new(descriptor),
            started: OnceLock::new(),
            keeper: Mutex::new(LeaseKeeper::new(node, rules)),
            rules,
            highest: AtomicU64::new(0),
            moving: std::sync::atomic::AtomicBool::new(false),
            clock,
            proposed: AtomicU64::new(0),
            runtime,
            timeout,
            frozen: OnceLock::new(),
            image: OnceLock::new(),
            preparing: Mutex::new(Preparing::default()),
            preparing_floor: AtomicU64::new(u64::MAX),
        }
    }

    /// A prepare timestamp for transaction `txn` of another node, about to
    /// be proposed in a `Prepare` entry: above every timestamp this node
    /// served a read at or proposed a closed timestamp for, and at or
    /// above the clock. Until [`GroupCommits::prepared_or_dropped`], reads
    /// at or above it wait (as for an applied prepare), and closing stays
    /// below it. A read records its timestamp before it looks at the
    /// floor, and this records the floor before it looks at the reads:
    /// one of the two sees the other.
    pub(crate) fn prepare_ts(&self, txn: crate::twophase::GlobalTxnId) -> u64 {
        let mut preparing = self.preparing.lock();
        let mut ts = self
            .clock
            .now_nanos()
            .max(preparing.closing.saturating_add(1))
            .max(self.safe_ts().unwrap_or(0).saturating_add(1));
        loop {
            preparing.by_txn.insert(txn, ts);
            self.preparing_floor
                .store(preparing.floor(), Ordering::SeqCst);
            let highest = self.highest.load(Ordering::SeqCst);
            if highest < ts {
                return ts;
            }
            ts = highest.saturating_add(1);
        }
    }

    /// The `Prepare` entry of `txn` was applied (the replica's prepared
    /// table now holds its timestamp back) or will not be.
    pub(crate) fn prepared_or_dropped(&self, txn: crate::twophase::GlobalTxnId) {
        let mut preparing = self.preparing.lock();
        preparing.by_txn.remove(&txn);
        self.preparing_floor
            .store(preparing.floor(), Ordering::SeqCst);
    }

    /// The lowest prepare timestamp a read must wait for: applied prepares
    /// and those on their way.
    fn prepared_floor(&self, started: &Started) -> u64 {
        started
            .prepared
            .floor()
            .min(self.preparing_floor.load(Ordering::SeqCst))
    }

    /// The group's current Raft term, as this node knows it (a leader
    /// that lost the group and won it back is in a later term).
    pub fn term(&self) -> u64 {
        self.started
            .get()
            .map_or(0, |s| s.raft.metrics().borrow_watched().current_term)
    }

    /// Refuses proposals once `view` (the replica's,
    /// [`crate::Replica::frozen_view`]) says the split is frozen for a
    /// merge: a frozen replica refuses every entry that writes (see
    /// [`crate::merge`]), and such an entry would stop the group.
    pub fn watch_frozen(&self, view: FrozenView) {
        let _ = self.frozen.set(view);
    }

    /// Follows `view` (the replica's, [`crate::Replica::image_view`]):
    /// whether this node's replica was made empty for an image and has not
    /// installed one yet.
    pub fn watch_image(&self, view: ImageView) {
        let _ = self.image.set(view);
    }

    /// Whether this node's replica of the split awaits an image.
    pub fn awaits_image(&self) -> bool {
        self.image.get().is_some_and(ImageView::awaits)
    }

    /// Raises the floor of the image this node's replica awaits
    /// ([`ImageView::raise_floor`]), if told of it.
    pub fn raise_image_floor(&self, index: u64) {
        if let Some(view) = self.image.get() {
            view.raise_floor(index);
        }
    }

    /// The split this one is frozen into for a merge, as this node's
    /// replica applied it.
    pub fn frozen(&self) -> Option<SplitId> {
        self.frozen.get().and_then(FrozenView::get)
    }

    /// The group's members as this node's instance knows them: its voters,
    /// and every member (voters and learners) with its peer address.
    pub fn members(
        &self,
    ) -> (
        std::collections::BTreeSet<u64>,
        std::collections::BTreeMap<u64, String>,
    ) {
        self.started.get().map_or_else(Default::default, |s| {
            let metrics = s.raft.metrics().borrow_watched().clone();
            let membership = metrics.membership_config.membership();
            (
                membership.voter_ids().collect(),
                membership
                    .nodes()
                    .map(|(id, node)| (*id, node.addr.clone()))
                    .collect(),
            )
        })
    }

    /// Refuses what a frozen split would refuse (checked under the lease,
    /// when every entry before it, a `Freeze` included, is applied here).
    fn check_frozen(&self, command: Option<&Command>) -> Result<(), String> {
        let allowed = matches!(
            command,
            Some(Command::ClosedTs(_) | Command::Lease(_) | Command::Freeze { .. })
        );
        match self.frozen() {
            Some(into) if !allowed => Err(format!(
                "{} is frozen for its merge into {into}: retry once the merge is done",
                self.split
            )),
            _ => Ok(()),
        }
    }

    /// Proposes to `raft` from now on, reading the split's lease from
    /// `view`, its closed timestamp from `closed` and its prepared
    /// transactions' lowest timestamp from `prepared` (the replica's,
    /// [`crate::Replica::lease_view`], [`crate::Replica::closed_view`] and
    /// [`crate::Replica::prepared_view`]). A second call is refused: a
    /// database commits through one group instance for its life.
    pub fn start(
        &self,
        raft: GroupRaft,
        view: LeaseView,
        closed: ClosedView,
        prepared: PreparedView,
    ) -> Result<(), GroupRaft> {
        self.started
            .set(Started {
                raft,
                view,
                closed,
                prepared,
            })
            .map_err(|started| started.raft)
    }

    /// How many groups of commits this node has proposed so far.
    pub fn proposed(&self) -> u64 {
        self.proposed.load(Ordering::Relaxed)
    }

    /// One round of closing timestamps (design §5, "Closed timestamps and
    /// follower reads"), made every 200 ms by the node's ticker: if this
    /// node leads the group, it closes `c`, [`CLOSED_LAG`] behind its
    /// clock, and returns it. `barrier` must be a read at `c` under the
    /// split's lease: it returns once this node holds the lease at `c`
    /// (taking or extending it as a read would), every commit at or below
    /// `c` is applied here, and every timestamp assigned from then on is
    /// above `c` (the database's read path at an exact timestamp does all
    /// three). Then the `ClosedTs(c)` entry follows every commit at or
    /// below `c` in the log, and no later one writes there: a later commit
    /// of this lease is above `c`, and a later lease starts above it
    /// (after this one's expiry, or above every timestamp this node was
    /// asked to serve at, `c` included, when handed over). Each replica
    /// that applies the entry may serve reads at or below `c` by itself.
    /// A transaction prepared in the split holds the closed timestamp
    /// below its prepare timestamp (its commit timestamp is not known yet,
    /// and will not be below it): `c` is lowered to just under the lowest
    /// one, before the barrier (whose read would wait for the outcome) and
    /// again after it, when every prepare at or below `c` is applied. `Ok(None)`: nothing to close (not the leader, or `c` is not
    /// above what is closed already).
    pub fn close_timestamp(
        &self,
        barrier: impl FnOnce(u64) -> Result<(), String>,
    ) -> Result<Option<u64>, String> {
        let started = self.group()?;
        if !started.raft.metrics().borrow_watched().state.is_leader() {
            return Ok(None);
        }
        let lag = u64::try_from(CLOSED_LAG.as_nanos()).unwrap_or(u64::MAX);
        let below_prepared = || self.prepared_floor(started).saturating_sub(1);
        let c = self
            .clock
            .now_nanos()
            .saturating_sub(lag)
            .min(below_prepared());
        if c <= started.closed.get() {
            return Ok(None);
        }
        barrier(c)?;
        let c = {
            // Under the lock prepare timestamps are chosen with: one chosen
            // after this is above `c`, one chosen before keeps `c` below it.
            let mut preparing = self.preparing.lock();
            let c = c.min(below_prepared());
            if c <= started.closed.get() {
                return Ok(None);
            }
            preparing.closing = preparing.closing.max(c);
            c
        };
        let raft = started.raft.clone();
        self.block_on(async move { raft.client_write(Command::ClosedTs(c)).await })?
            .map_err(|e| refusal(self.split(), e))?;
        Ok(Some(c))
    }

    fn split(&self) -> SplitId {
        self.split
    }

    fn group(&self) -> Result<&Started, String> {
        self.started
            .get()
            .ok_or_else(|| format!("{}'s group is not started", self.split()))
    }

    /// Runs `future` on the group's runtime and waits for it on this
    /// thread, at most the proposal timeout.
    fn block_on<F>(&self, future: F) -> Result<F::Output, String>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let timeout = self.timeout;
        let (answer, answered) = mpsc::sync_channel(1);
        self.runtime.spawn(async move {
            let result = tokio::time::timeout(timeout, future).await;
            // The caller may have gone; what was proposed is the log's.
            let _ = answer.send(result);
        });
        match answered.recv() {
            Ok(Ok(output)) => Ok(output),
            Ok(Err(_)) => Err(format!(
                "{}'s group did not answer within {timeout:?} (no majority reachable?); \
                 what was proposed may still commit",
                self.split()
            )),
            Err(_) => Err("the runtime stopped before the proposal was answered".into()),
        }
    }

    /// The lease to serve under at a timestamp up to `ts` (`None`: now):
    /// the held lease if it has started, has more than half its length
    /// left and ends after `ts`; else a new or extended one, proposed
    /// through the group and waited for until it starts. Errors say why
    /// the node cannot serve (it does not lead, no majority, no lease in
    /// time).
    fn lease(&self, ts: Option<u64>) -> Result<Lease, String> {
        let started = self.group()?;
        if let Some(ts) = ts {
            self.highest.fetch_max(ts, Ordering::SeqCst);
        }
        let deadline = std::time::Instant::now() + self.timeout;
        let mut keeper = self.keeper.lock();
        loop {
            if keeper.released() {
                return Err(format!(
                    "this node is handing {}'s group over and serves it no more",
                    self.split()
                ));
            }
            let now = self.clock.now_nanos();
            let current = started.view.get();
            // Keep: the held lease is valid with more than half its length
            // left, or taken and not started yet.
            if keeper.proposal(current, now) == Renewal::Keep {
                match (keeper.serving(current, now), keeper.held()) {
                    (Some(lease), _) => {
                        return match ts {
                            Some(ts) if ts >= lease.expiry => Err(format!(
                                "the timestamp {ts} is past this node's lease on {} ({lease}), \
                                 which has more than half its length left",
                                self.split()
                            )),
                            _ => Ok(lease),
                        };
                    }
                    (None, Some(held)) if now < held.start => {
                        // Taken, not started: wait for the clock to reach it.
                        let wait = Duration::from_nanos(held.start - now);
                        if std::time::Instant::now() + wait > deadline {
                            return Err(format!(
                                "this node's lease on {} starts in {wait:?}, after the \
                                 request's {:?} (clock offsets above the maximum?)",
                                self.split(),
                                self.timeout
                            ));
                        }
                        std::thread::sleep(wait);
                        continue;
                    }
                    _ => {}
                }
            }
            // A lease taken over from another holder (or retaken after it
            // ran out) starts at the old one's expiry plus ε, which may be
            // seconds away. Proposed now, its entry would carry that start
            // to every replica, and each, applying it, makes everything
            // below the start visible on its node, moving the node's
            // timestamps ahead of its clock and past the leases it holds
            // on other splits. So it is proposed only once the start is
            // near ([`TAKEOVER_LEAD`]). Only by the group's leader: another
            // node cannot propose, and learns so at once below.
            if let (Renewal::Propose(next), true) = (keeper.proposal(current, now), self.leads()) {
                if next.start > now.saturating_add(TAKEOVER_LEAD.as_nanos() as u64) {
                    let wait = Duration::from_nanos(next.start - now) - TAKEOVER_LEAD;
                    if std::time::Instant::now() + wait > deadline {
                        return Err(format!(
                            "the lease on {} can be taken over in {wait:?}, after the \
                             request's {:?} (clock offsets above the maximum?)",
                            self.split(),
                            self.timeout
                        ));
                    }
                    std::thread::sleep(wait);
                    continue;
                }
            }
            let (raft, view) = (started.raft.clone(), started.view.clone());
            let mut renewing = keeper.clone();
            let renewed = self.block_on(async move {
                let result = renew_lease(&raft, &mut renewing, &view, now).await;
                (result, renewing)
            })?;
            let (result, renewing) = renewed;
            let before = keeper.held();
            *keeper = renewing;
            match result {
                Ok(Some(taken)) => {
                    // A lease taken, not extended: the split is served from
                    // this node from its start (a leader change or a
                    // restart), which operators look for in the log.
                    if before.is_none_or(|b| b.start != taken.start) {
                        tracing::info!(
                            split = %self.split(),
                            lease = %taken,
                            after = ?current,
                            starts_in = ?Duration::from_nanos(taken.start.saturating_sub(now)),
                            "this node took a split's lease"
                        );
                    }
                }
                Ok(None) => {
                    // Another proposal won the race in the log; look again.
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(e) if leaderless(&e) && std::time::Instant::now() < deadline => {
                    // An election is on: wait for its outcome.
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(e) => {
                    // Still serving under the lease held, if it covers the
                    // timestamp; else the node cannot serve.
                    let now = self.clock.now_nanos();
                    if let Some(lease) = keeper.serving(started.view.get(), now) {
                        if ts.is_none_or(|ts| ts < lease.expiry) {
                            return Ok(lease);
                        }
                    }
                    return Err(refusal(self.split(), e.0));
                }
            }
            if std::time::Instant::now() > deadline {
                return Err(format!(
                    "this node could not take the lease on {} within {:?}",
                    self.split(),
                    self.timeout
                ));
            }
        }
    }

    /// Hands the group over to node `to`, as a node that is stopping
    /// does: gives up this node's lease, ending it now (above every
    /// timestamp it was asked to serve at), so that the next leader can
    /// take the lease after ε instead of waiting out the rest of it; then
    /// asks Raft to make `to` the leader and waits until it leads. Each
    /// step waits at most `wait`. From the start this instance serves
    /// nothing more. A node that does not lead hands nothing over and only
    /// stops serving; with no `to` (no voter answers) it does nothing.
    pub async fn hand_over(
        self: &Arc<Self>,
        to: Option<u64>,
        wait: Duration,
    ) -> Result<(), String> {
        // Without a node to take over, none answers: this one goes on
        // serving while it can, and the group elects a leader once it has
        // stopped (a lease given up now would leave the group with nobody
        // to serve it until then).
        let Some(to) = to else { return Ok(()) };
        let started = self.group()?;
        let (raft, view) = (started.raft.clone(), started.view.clone());
        // The keeper's lock is held while a renewal is proposed: take it
        // off the runtime's threads.
        let commits = self.clone();
        let lease_view = view.clone();
        let released = tokio::task::spawn_blocking(move || {
            let mut keeper = commits.keeper.lock();
            let until = commits
                .clock
                .now_nanos()
                .max(commits.highest.load(Ordering::SeqCst).saturating_add(1));
            keeper.release(lease_view.get(), until)
        })
        .await
        .map_err(|e| format!("giving up the lease: {e}"))?;
        if !raft.metrics().borrow_watched().state.is_leader() {
            return Ok(());
        }
        let split = self.split();
        if let Some(lease) = released {
            tokio::time::timeout(wait, raft.client_write(Command::Lease(lease)))
                .await
                .map_err(|_| format!("giving up the lease on {split} took over {wait:?}"))?
                .map_err(|e| refusal(split, e))?;
            self.keeper.lock().applied(lease, view.get());
        }
        super::transfer_leadership(&raft, to, wait)
            .await
            .map_err(|e| format!("handing {split}'s group to node {to}: {e}"))
    }

    /// The voters other than this node that answered the group's
    /// heartbeats within [`RECEIVER_HEARD_WITHIN`] and have a replicated
    /// log position, as this node (its leader) sees them: the ones a lease
    /// may move to. Empty unless this node leads the group.
    pub fn answering_voters(&self) -> std::collections::BTreeSet<u64> {
        let Ok(started) = self.group() else {
            return Default::default();
        };
        let m = started.raft.metrics().borrow_watched().clone();
        if !m.state.is_leader() {
            return Default::default();
        }
        let heard = m.heartbeat.clone().unwrap_or_default();
        let matched = m.replication.clone().unwrap_or_default();
        m.membership_config
            .membership()
            .voter_ids()
            .filter(|id| *id != self.node)
            .filter(|id| {
                heard
                    .get(id)
                    .cloned()
                    .flatten()
                    .is_some_and(|at| at.elapsed() <= RECEIVER_HEARD_WITHIN)
                    && matched.get(id).copied().flatten().is_some()
            })
            .collect()
    }

    /// Moves the group's lease to node `to` while this node goes on
    /// serving its other groups (a move by load, `node::leases`): as
    /// [`GroupCommits::hand_over`], gives up the lease now (so that `to`
    /// takes it after ε, not after the rest of it) and asks Raft to make
    /// `to` the leader, waiting at most `wait` for each step; meanwhile
    /// [`GroupCommits::serves`] is false, so commits and reads under locks
    /// of the split are refused here having done nothing, and are sent to
    /// the new leader. Unlike `hand_over`, this instance serves again if
    /// it leads again later (a failed move leaves it leading: it takes a
    /// new lease). Refused, having given nothing up, if `to` has not
    /// answered the group's heartbeats within [`RECEIVER_HEARD_WITHIN`],
    /// or if its log does not catch up with this node's within
    /// [`RECEIVER_CATCH_UP`].
    pub async fn move_to(self: &Arc<Self>, to: u64, wait: Duration) -> Result<(), String> {
        let started = self.group()?;
        if to == self.node || !self.leads() {
            return Ok(());
        }
        // The receiver must be answering this group's heartbeats: a node
        // restarted a moment ago may not have opened the group yet, and a
        // move to it would leave the split unserved for the whole wait.
        if !self.answering_voters().contains(&to) {
            return Err(format!(
                "node {to} has not answered {}'s heartbeats within {RECEIVER_HEARD_WITHIN:?}: \
                 the group stays here",
                self.split()
            ));
        }
        // Nor is the split given up while the receiver's log is behind:
        // it could not take the group until it caught up.
        super::caught_up(&started.raft, to, RECEIVER_CATCH_UP)
            .await
            .map_err(|e| format!("{e}: {}'s group stays here", self.split()))?;
        self.moving.store(true, Ordering::SeqCst);
        let began = std::time::Instant::now();
        let (raft, view) = (started.raft.clone(), started.view.clone());
        let split = self.split();
        let commits = self.clone();
        let result = async {
            let lease_view = view.clone();
            let moving = commits.clone();
            let released = tokio::task::spawn_blocking(move || {
                let mut keeper = moving.keeper.lock();
                let until = moving
                    .clock
                    .now_nanos()
                    .max(moving.highest.load(Ordering::SeqCst).saturating_add(1));
                keeper.release(lease_view.get(), until)
            })
            .await
            .map_err(|e| format!("giving up the lease: {e}"))?;
            if let Some(lease) = released {
                tokio::time::timeout(wait, raft.client_write(Command::Lease(lease)))
                    .await
                    .map_err(|_| format!("giving up the lease on {split} took over {wait:?}"))?
                    .map_err(|e| refusal(split, e))?;
                commits.keeper.lock().applied(lease, view.get());
            }
            super::transfer_leadership(&raft, to, wait)
                .await
                .map_err(|e| format!("moving {split}'s group to node {to}: {e}"))
        }
        .await;
        let resumed = self.clone();
        let _ = tokio::task::spawn_blocking(move || resumed.keeper.lock().resume()).await;
        self.moving.store(false, Ordering::SeqCst);
        // While it moved, the split was served by neither node.
        tracing::info!(
            %split,
            to,
            took = ?began.elapsed(),
            moved = result.is_ok(),
            "a move of the group ended"
        );
        result
    }

    /// Waits (at most the proposal timeout) until no transaction prepared
    /// in the split has a prepare timestamp at or below `ts`: its commit
    /// timestamp may be at or below `ts`, and a read there must see its
    /// writes or know they come later.
    fn wait_for_prepared(&self, ts: u64) -> Result<(), String> {
        let started = self.group()?;
        let deadline = std::time::Instant::now() + self.timeout;
        loop {
            let floor = self.prepared_floor(started);
            if floor > ts {
                return Ok(());
            }
            if std::time::Instant::now() >= deadline {
                return Err(format!(
                    "a transaction prepared at {floor} in {} was not resolved within {:?}, \
                     and a read at {ts} must wait for its outcome",
                    self.split(),
                    self.timeout
                ));
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// The checks the replicas make on an entry's keys, made before
    /// proposing (see the module docs).
    fn check(&self, group: &CommitGroup) -> Result<(), String> {
        let d = &*self.descriptor.read();
        for commit in &group.commits {
            if let Some((key, _)) = commit.writes.iter().find(|(k, _)| !d.contains(k)) {
                return Err(format!(
                    "a commit writes the key {} outside {}'s range {d}; commits that \
                     span several split groups need two-phase commit, which is not built yet",
                    hex(key),
                    d.split
                ));
            }
        }
        if !group.meta.is_empty() && !d.carries_meta() {
            return Err(format!(
                "a commit writes database metadata, which only the group of the first split \
                 carries, and {}'s range is {d}",
                d.split
            ));
        }
        Ok(())
    }

    fn replicate_group(&self, group: CommitGroup) -> Result<(), String> {
        let newest = group.newest_ts();
        self.propose_group(group)?;
        self.commit_wait(newest);
        Ok(())
    }

    /// The split this instance commits to, as this node knows it.
    pub fn descriptor(&self) -> Descriptor {
        self.descriptor.read().clone()
    }

    /// The split's id.
    pub fn split_id(&self) -> SplitId {
        self.split
    }

    /// Whether this node leads the group now, by its Raft instance's
    /// account.
    pub fn leads(&self) -> bool {
        self.started
            .get()
            .is_some_and(|s| s.raft.metrics().borrow_watched().state.is_leader())
    }

    /// Whether this node serves the group's commits and reads under locks:
    /// it leads the group and is not handing it to another node
    /// ([`GroupCommits::move_to`]).
    pub fn serves(&self) -> bool {
        self.leads() && !self.moving.load(Ordering::SeqCst)
    }

    /// The node this node's Raft instance knows as the group's leader.
    pub fn current_leader(&self) -> Option<u64> {
        self.started
            .get()
            .and_then(|s| s.raft.metrics().borrow_watched().current_leader)
    }

    /// The log id (term, index) of the last entry this node's replica
    /// applied, if the group runs here and applied any.
    pub fn last_applied(&self) -> Option<(u64, u64)> {
        self.started.get().and_then(|s| {
            s.raft
                .metrics()
                .borrow_watched()
                .last_applied
                .map(|l| (l.leader_id.term, l.index))
        })
    }

    /// This node's id.
    pub fn node_id(&self) -> u64 {
        self.node
    }

    /// Makes node `to` the group's leader, if this node leads it, waiting
    /// (at most [`TRANSFER_WAIT`]) until it does
    /// ([`super::transfer_leadership`]). Unlike [`GroupCommits::hand_over`],
    /// the lease is kept (the next leader waits for it to run out) and this
    /// instance goes on serving if it leads again later.
    pub async fn transfer_to(&self, to: u64) -> Result<(), String> {
        let started = self.group()?;
        if to == self.node || !self.leads() {
            return Ok(());
        }
        super::transfer_leadership(&started.raft, to, TRANSFER_WAIT)
            .await
            .map_err(|e| format!("handing {}'s group to node {to}: {e}", self.split))
    }

    /// Adopts the split's new descriptor (its replica here applied a
    /// `SplitAt`): commits for keys it no longer holds are refused before
    /// they are proposed.
    pub fn set_descriptor(&self, descriptor: Descriptor) {
        *self.descriptor.write() = descriptor;
    }

    /// The runtime the group runs on.
    pub(crate) fn runtime(&self) -> &tokio::runtime::Handle {
        &self.runtime
    }

    /// The node's clock.
    pub(crate) fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// The transactions prepared in the split, as this node's replica
    /// applied them (empty before [`GroupCommits::start`]).
    pub(crate) fn prepared(&self) -> Vec<crate::twophase::PreparedSummary> {
        self.started
            .get()
            .map(|s| s.prepared.list())
            .unwrap_or_default()
    }

    /// Proposes `command` under the split's lease at timestamp `ts` (the
    /// timestamp it writes at, if any, must fall inside the lease) and
    /// waits until it is applied here.
    pub(crate) fn propose(&self, ts: Option<u64>, command: Command) -> Result<(), String> {
        let lease = self.lease(ts)?;
        self.check_frozen(Some(&command))?;
        if let Some(ts) = ts {
            if ts < lease.start || ts >= lease.expiry {
                return Err(format!(
                    "the timestamp {ts} is not inside this node's lease on {} ([{}, {})): retry",
                    self.split(),
                    lease.start,
                    lease.expiry
                ));
            }
        }
        let raft = self.group()?.raft.clone();
        self.proposed.fetch_add(1, Ordering::Relaxed);
        self.block_on(async move { raft.client_write(command).await })?
            .map_err(|e| refusal(self.split(), e))?;
        Ok(())
    }

    /// Proposes a group of commits as one `Write` entry, under the lease,
    /// and waits until it is applied here (without commit wait).
    pub(crate) fn propose_group(&self, group: CommitGroup) -> Result<(), String> {
        self.admits(&group)?;
        let raft = self.group()?.raft.clone();
        self.proposed.fetch_add(1, Ordering::Relaxed);
        let command = Command::Write {
            commits: group.commits,
            closed_ts: None,
            meta: group.meta,
        };
        self.block_on(async move { raft.client_write(command).await })?
            .map_err(|e| refusal(self.split(), e))?;
        Ok(())
    }

    /// Whether `group` may be proposed now: this node's lease on the split
    /// covers every timestamp in it (a lease being renewed late leaves a
    /// moment between two, and a timestamp drawn in it is refused), the
    /// split is not frozen for a merge, and every key is in its range. A
    /// refusal here proposed nothing.
    pub(crate) fn admits(&self, group: &CommitGroup) -> Result<(), String> {
        let oldest = group.commits.iter().map(|c| c.ts).min();
        let newest = group.newest_ts();
        // The lease first: a node holding it has applied every entry of
        // the log before its lease's, a `SplitAt` included, so the range
        // checked next is the one the entry will be applied against.
        let lease = self.lease(newest)?;
        self.check_frozen(None)?;
        self.check(group)?;
        if let (Some(oldest), Some(newest)) = (oldest, newest) {
            // A holder assigns timestamps only inside its lease.
            if oldest < lease.start || newest >= lease.expiry {
                return Err(format!(
                    "the commit timestamps [{oldest}, {newest}] are not inside this node's \
                     lease on {} ([{}, {})): retry",
                    self.split(),
                    lease.start,
                    lease.expiry
                ));
            }
        }
        Ok(())
    }

    /// Commit wait: returns once this node's clock is past `newest` plus
    /// the maximum clock offset, so that every node's clock is past it.
    pub(crate) fn commit_wait(&self, newest: Option<u64>) {
        if let Some(newest) = newest {
            let until = newest.saturating_add(
                u64::try_from(self.rules.max_offset.as_nanos()).unwrap_or(u64::MAX),
            );
            loop {
                let now = self.clock.now_nanos();
                if now >= until {
                    break;
                }
                std::thread::sleep(Duration::from_nanos(until - now));
            }
        }
    }

    /// This node's lease on the split, taken or extended if needed (see
    /// [`Replication::ready_to_commit`]).
    pub(crate) fn ready(&self) -> Result<(), String> {
        self.lease(None).map(|_| ())
    }
}

impl Replication for GroupCommits {
    fn replicate(&self, group: CommitGroup) -> rowtree_kv::Result<()> {
        self.replicate_group(group)
            .map_err(rowtree_kv::Error::Replication)
    }

    fn leader_of_keys(&self, keys: &mut dyn Iterator<Item = &[u8]>) -> Option<u64> {
        keys.next()?;
        self.current_leader()
    }

    fn ready_to_commit(&self) -> rowtree_kv::Result<()> {
        self.lease(None)
            .map(|_| ())
            .map_err(rowtree_kv::Error::Replication)
    }

    fn check_read(&self, ts: Option<u64>) -> rowtree_kv::Result<()> {
        // At or below the safe time any replica serves, leaseholder or
        // not (a follower read).
        if let (Some(ts), Some(safe)) = (ts, self.safe_ts()) {
            if ts <= safe {
                return Ok(());
            }
        }
        self.lease(ts).map_err(rowtree_kv::Error::Replication)?;
        match ts {
            Some(ts) => self
                .wait_for_prepared(ts)
                .map_err(rowtree_kv::Error::Replication),
            // The latest, under locks: a prepared transaction holds its
            // locks until it is resolved.
            None => Ok(()),
        }
    }

    fn safe_ts(&self) -> Option<u64> {
        self.started.get().map(|s| s.closed.get())
    }

    fn serves_fresh_reads(&self) -> bool {
        let Some(started) = self.started.get() else {
            return false;
        };
        // A renewal in progress holds the keeper: not now, as far as this
        // answer goes (the read then takes the safe time if its bound
        // allows, else asks for the lease and waits for the renewal).
        let Some(keeper) = self.keeper.try_lock() else {
            return false;
        };
        !keeper.released()
            && keeper
                .serving(started.view.get(), self.clock.now_nanos())
                .is_some()
    }
}

/// Why openraft did not take a proposal, in words.
fn refusal(split: SplitId, e: RaftError<TypeConfig, ClientWriteError<TypeConfig>>) -> String {
    match e {
        RaftError::APIError(ClientWriteError::ForwardToLeader(f)) => match f.leader_id {
            Some(leader) => format!("this node does not lead {split}'s group; node {leader} does"),
            None => format!("{split}'s group has no leader at the moment"),
        },
        other => format!("{split}'s group refused the entry: {other}"),
    }
}

/// Whether a lease proposal failed because the group has no leader at the
/// moment (an election is on), rather than because another node leads.
fn leaderless(e: &crate::raft::LeaseProposalError) -> bool {
    matches!(
        &e.0,
        RaftError::APIError(ClientWriteError::ForwardToLeader(f)) if f.leader_id.is_none()
    )
}
