//! Reading the splits of a database that this node holds no replica of.
//!
//! A node serving a database holds its first split (the database's
//! metadata), and the replicas of its other splits may be placed on some
//! of the cluster's nodes only: a split's group then has no member here,
//! and its keys are a gap in this node's [`SplitGroups`]. Reads at a
//! timestamp of those keys (a session's queries, a read-only transaction,
//! the reads a commit makes to resolve its writes are not among them:
//! those run where the keys are led) are read from a node that holds
//! them, in the batches the router asks for:
//!
//! 1. **Where.** [`RemoteSplits`] keeps what it learned of where splits
//!    are, by start key. On a miss it asks the live nodes in turn
//!    (`Locate` over the peer port, each answering from its own replicas)
//!    for the split holding the key, with the split's range, its voters
//!    and its leader as that node knows them.
//! 2. **Read.** The batch is clipped to the split's range and sent
//!    (`ReadRange`) to its leader first, then to its other voters: the
//!    leader serves any timestamp under its lease, a follower once its
//!    closed timestamp reaches the read's (within a few seconds). The
//!    serving node reads its own engine through its router (charging its
//!    own splits, so the load shows where it is served), at most
//!    [`MAX_READ_ROWS`] rows or [`MAX_READ_BYTES`] bytes at once, and
//!    never goes to a third node for it ([`SplitGroups::locally`]).
//! 3. **Moved.** A node that no longer holds the range (the split was cut,
//!    or its replica moved) refuses with `FAILED_PRECONDITION`; the reader
//!    forgets what it knew of the split and looks it up again, at most
//!    [`ATTEMPTS`] times.
//!
//! The batch's resume point tells the router where the rest of its piece
//! continues: after the last row, or at the split's edge, where the next
//! lookup starts.
//!
//! [`MAX_READ_ROWS`]: super::api::MAX_READ_ROWS
//! [`MAX_READ_BYTES`]: super::api::MAX_READ_BYTES

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::ops::Bound;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use rowtree_kv::{RemoteBatch, RemoteRead, Replication};
use tonic::{Code, Status};

use super::api::{
    txn_bytes, AddSplitPointRequest, LocateReply, LocateRequest, LockKeysRequest, NodeClient,
    PrepareKeysRequest, ReadRangeReply, ReadRangeRequest, ReleaseKeysRequest, ResolveKeysRequest,
    SettleRequest, LOCK_CALL_WAIT, MAX_READ_BYTES, MAX_READ_ROWS, MAX_SPLIT_KEY, STILL_WAITING,
};
use super::splits::DatabaseGroups;
use super::Shared;
use crate::placement::NodeState;
use crate::raft::{Elsewhere, Located, Refusal, SplitGroups};

/// How long one `Locate` question may take.
const LOCATE_TIMEOUT: Duration = Duration::from_secs(2);

/// How long one `ReadRange` may take: a follower waits up to 3 s for its
/// closed timestamp to reach the read's.
const READ_TIMEOUT: Duration = Duration::from_secs(5);

/// How long one `AddSplitPoint` may take: the leader's cut waits up to
/// 10 s for the new group to be made.
const SPLIT_POINT_TIMEOUT: Duration = Duration::from_secs(15);

/// How many times a read looks its split up again after the node asked
/// no longer held it.
const ATTEMPTS: usize = 3;

/// The most splits remembered per database; past it, the oldest lookups
/// are dropped.
const MAX_FOUND: usize = 4096;

/// How long a split's leader, as learned, is used as it is to route a
/// commit; past it, it is asked again in the background
/// ([`Elsewhere::leader_of`]): leases move.
const LEADER_FRESH: Duration = Duration::from_secs(1);

/// The most lookups asked in the background at once.
const MAX_REFRESHING: usize = 64;

/// The largest `ReadRange` answer this node accepts: a batch stops adding
/// rows at 1 MiB, but always carries one row, which may be larger.
const MAX_READ_REPLY: usize = 64 << 20;

/// A split another node holds, as that node described it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Found {
    start: Vec<u8>,
    limit: Option<Vec<u8>>,
    voters: Vec<u64>,
    leader: Option<u64>,
    /// When it was asked.
    at: Instant,
}

impl Found {
    fn holds(&self, key: &[u8], before: bool) -> bool {
        if before {
            // The split holding the keys just below `key` (empty: the last).
            (key.is_empty() && self.limit.is_none())
                || (self.start.as_slice() < key && self.limit.as_deref().is_none_or(|l| key <= l))
        } else {
            self.start.as_slice() <= key && self.limit.as_deref().is_none_or(|l| key < l)
        }
    }
}

/// How a node reads the splits of one database it holds no replica of
/// (see the module docs); set on the database's [`SplitGroups`].
pub(super) struct RemoteSplits {
    shared: Weak<Shared>,
    runtime: tokio::runtime::Handle,
    /// The database, by its registry group.
    database: u64,
    /// What was found, by split start.
    found: Mutex<BTreeMap<Vec<u8>, Found>>,
    /// The keys being looked up in the background.
    refreshing: Mutex<BTreeSet<Vec<u8>>>,
    /// Itself, for the background lookups.
    this: Weak<RemoteSplits>,
}

impl RemoteSplits {
    pub(super) fn new(
        shared: Weak<Shared>,
        runtime: tokio::runtime::Handle,
        database: u64,
    ) -> Arc<RemoteSplits> {
        Arc::new_cyclic(|this| RemoteSplits {
            shared,
            runtime,
            database,
            found: Mutex::new(BTreeMap::new()),
            refreshing: Mutex::new(BTreeSet::new()),
            this: this.clone(),
        })
    }

    /// Looks the split holding `key` up again, on a blocking thread of
    /// the node's runtime (at most [`MAX_REFRESHING`] at once, one per
    /// key).
    fn refresh(&self, key: &[u8]) {
        {
            let mut refreshing = self.refreshing.lock();
            if refreshing.len() >= MAX_REFRESHING || !refreshing.insert(key.to_vec()) {
                return;
            }
        }
        let this = self.this.clone();
        let key = key.to_vec();
        self.runtime.spawn_blocking(move || {
            let Some(this) = this.upgrade() else { return };
            if let Err(e) = this.ask(&key, false) {
                tracing::debug!("looking a split up: {e}");
            }
            this.refreshing.lock().remove(&key);
        });
    }

    fn cached(&self, key: &[u8], before: bool) -> Option<Found> {
        self.found
            .lock()
            .values()
            .find(|f| f.holds(key, before))
            .cloned()
    }

    fn remember(&self, found: Found) {
        let mut all = self.found.lock();
        // Whatever it overlaps is out of date.
        all.retain(|_, f| {
            let below =
                |start: &[u8], limit: &Option<Vec<u8>>| limit.as_deref().is_none_or(|l| start < l);
            !(below(&f.start, &found.limit) && below(&found.start, &f.limit))
        });
        if all.len() >= MAX_FOUND {
            all.clear();
        }
        all.insert(found.start.clone(), found);
    }

    fn forget(&self, found: &Found) {
        self.found.lock().remove(&found.start);
    }

    /// Runs `future` on the node's runtime and waits for it here.
    fn block_on<T: Send + 'static>(
        &self,
        future: impl std::future::Future<Output = T> + Send + 'static,
        within: Duration,
    ) -> Option<T> {
        let (tx, rx) = std::sync::mpsc::channel();
        self.runtime.spawn(async move {
            let _ = tx.send(future.await);
        });
        rx.recv_timeout(within + Duration::from_millis(500)).ok()
    }

    /// A client of node `id`'s node service, over the peer port.
    fn client(&self, id: u64) -> Option<NodeClient<tonic::transport::Channel>> {
        let shared = self.shared.upgrade()?;
        let records = shared.records().ok()?;
        let channel = shared.peers.channel(&records.get(&id)?.peer_addr).ok()?;
        Some(NodeClient::new(channel).max_decoding_message_size(MAX_READ_REPLY))
    }

    /// The split holding `key` (or, `before`, the keys just below it):
    /// remembered, or asked of the live nodes ([`RemoteSplits::ask`]).
    fn locate(&self, key: &[u8], before: bool) -> Result<Found, String> {
        match self.cached(key, before) {
            Some(found) => Ok(found),
            None => self.ask(key, before),
        }
    }

    /// The split holding `key` (or, `before`, the keys just below it), as
    /// the live nodes say, those answering first; remembered.
    fn ask(&self, key: &[u8], before: bool) -> Result<Found, String> {
        let shared = self
            .shared
            .upgrade()
            .ok_or_else(|| "the node is stopping".to_string())?;
        let records = shared
            .records()
            .map_err(|s| format!("reading the cluster's nodes: {}", s.message()))?;
        let mut nodes: Vec<u64> = records
            .values()
            .filter(|r| r.state == NodeState::Live && r.id != shared.id)
            .map(|r| r.id)
            .collect();
        nodes.sort_by_key(|id| !shared.answering(*id));
        drop(shared);
        for node in nodes {
            let Some(mut client) = self.client(node) else {
                continue;
            };
            let request = LocateRequest {
                database: self.database,
                key: key.to_vec(),
                before,
            };
            let asked = self.block_on(
                async move {
                    let mut request = tonic::Request::new(request);
                    request.set_timeout(LOCATE_TIMEOUT);
                    client
                        .locate(request)
                        .await
                        .map(tonic::Response::into_inner)
                },
                LOCATE_TIMEOUT,
            );
            let Some(Ok(reply)) = asked else { continue };
            if !reply.found {
                continue;
            }
            let found = Found {
                start: reply.start,
                limit: reply.limit,
                voters: reply.voters,
                leader: (reply.leader != 0).then_some(reply.leader),
                at: Instant::now(),
            };
            if !found.holds(key, before) {
                continue;
            }
            self.remember(found.clone());
            return Ok(found);
        }
        Err(format!(
            "no node answered that it holds key {} of the database",
            crate::replica::hex(key)
        ))
    }

    /// One batch of `read` from the split `found`, asked of its leader,
    /// then of its other voters. `Ok(None)`: the node asked no longer
    /// holds the range (look it up again).
    fn read_from(&self, found: &Found, read: &RemoteRead) -> Result<Option<RemoteBatch>, String> {
        // The read, clipped to the split.
        let (clipped, edge) = read.clipped(&found.start, found.limit.as_deref());
        let request = read_request(self.database, &clipped, false);
        let mut order: Vec<u64> = found.leader.into_iter().collect();
        order.extend(found.voters.iter().filter(|v| Some(**v) != found.leader));
        // Every voter's refusal is reported: the leader's says most.
        let mut errors: Vec<String> = Vec::new();
        for node in order {
            let Some(mut client) = self.client(node) else {
                errors.push(format!("node {node} has no known address"));
                continue;
            };
            let request = request.clone();
            let answer = self.block_on(
                async move {
                    let mut request = tonic::Request::new(request);
                    request.set_timeout(READ_TIMEOUT);
                    client
                        .read_range(request)
                        .await
                        .map(tonic::Response::into_inner)
                },
                READ_TIMEOUT,
            );
            match answer {
                Some(Ok(reply)) => return Ok(Some(batch(reply, edge))),
                Some(Err(status)) if status.code() == Code::FailedPrecondition => return Ok(None),
                Some(Err(status)) => {
                    errors.push(format!("node {node}: {}", status.message()));
                }
                None => errors.push(format!("node {node} did not answer in time")),
            }
        }
        if errors.is_empty() {
            return Err("the split has no voters".into());
        }
        Err(errors.join("; "))
    }
}

/// A `ReadRange` request for `read` of database `database`.
fn read_request(database: u64, read: &RemoteRead, led_only: bool) -> ReadRangeRequest {
    let (start, start_excluded) = match &read.start {
        Bound::Included(k) => (k.clone(), false),
        Bound::Excluded(k) => (k.clone(), true),
        Bound::Unbounded => (Vec::new(), false),
    };
    let (end, end_included) = match &read.end {
        Bound::Included(k) => (Some(k.clone()), true),
        Bound::Excluded(k) => (Some(k.clone()), false),
        Bound::Unbounded => (None, false),
    };
    ReadRangeRequest {
        database,
        start,
        start_excluded,
        end,
        end_included,
        ts: read.ts,
        reverse: read.reverse,
        max_rows: read.max_rows as u64,
        led_only,
    }
}

/// A `ReadRange` answer as the router takes it: the read goes on after
/// its last row if the answer stopped at a limit, else at `edge` (where
/// the read was clipped to the split), else it is done.
fn batch(reply: ReadRangeReply, edge: Option<Bound<Vec<u8>>>) -> RemoteBatch {
    let rows: Vec<(Vec<u8>, Vec<u8>)> = reply.keys.into_iter().zip(reply.values).collect();
    let resume = match (reply.more, rows.last()) {
        (true, Some((last, _))) => Some(Bound::Excluded(last.clone())),
        _ => edge,
    };
    RemoteBatch { rows, resume }
}

/// How long one call of a two-phase commit (`PrepareKeys`, `ResolveKeys`,
/// `ReleaseKeys`, `Settle`) may take: a proposal waits up to the group's
/// timeout.
const TXN_CALL_TIMEOUT: Duration = Duration::from_secs(12);

/// A refused call of the transaction service, as [`Refusal`] says it.
fn refusal(node: u64, status: &Status) -> Refusal {
    let why = format!("node {node}: {}", status.message());
    match status.code() {
        Code::Aborted => Refusal::Aborted(why),
        Code::FailedPrecondition => Refusal::Moved(why),
        Code::DeadlineExceeded if status.message().starts_with(STILL_WAITING) => Refusal::Waiting,
        _ => Refusal::Failed(why),
    }
}

impl RemoteSplits {
    /// Runs one call of node `node`'s service and waits for it here, at
    /// most `within`.
    fn call<R, F, Fut>(&self, node: u64, within: Duration, f: F) -> Result<R, Refusal>
    where
        R: Send + 'static,
        F: FnOnce(NodeClient<tonic::transport::Channel>) -> Fut,
        Fut: std::future::Future<Output = Result<tonic::Response<R>, Status>> + Send + 'static,
    {
        // Channels are made inside the runtime they run on.
        let _runtime = self.runtime.enter();
        let Some(client) = self.client(node) else {
            return Err(Refusal::Failed(format!("node {node} has no known address")));
        };
        let call = f(client);
        match self.block_on(
            async move { call.await.map(tonic::Response::into_inner) },
            within,
        ) {
            Some(Ok(reply)) => Ok(reply),
            Some(Err(status)) => Err(refusal(node, &status)),
            None => Err(Refusal::Failed(format!(
                "node {node} did not answer in time"
            ))),
        }
    }
}

/// A request carrying `timeout`.
fn timed<T>(message: T, timeout: Duration) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    request.set_timeout(timeout);
    request
}

impl Elsewhere for RemoteSplits {
    fn locate(&self, key: &[u8], before: bool) -> rowtree_kv::Result<Located> {
        let found = match self.cached(key, before) {
            Some(found) if found.at.elapsed() < LEADER_FRESH && found.leader.is_some() => found,
            _ => self
                .ask(key, before)
                .map_err(rowtree_kv::Error::Replication)?,
        };
        Ok(Located {
            start: found.start,
            limit: found.limit,
            leader: found.leader,
        })
    }

    fn forget(&self, key: &[u8]) {
        if let Some(found) = self.cached(key, false) {
            self.forget(&found);
        }
    }

    fn lock_at(
        &self,
        node: u64,
        txn: rowtree_kv::TxnRef,
        start: &[u8],
        end: Option<&[u8]>,
        point: bool,
        exclusive: bool,
        holds: bool,
    ) -> Result<(), Refusal> {
        let request = LockKeysRequest {
            database: self.database,
            txn: txn_bytes(txn.id),
            priority: txn.priority,
            start: start.to_vec(),
            end: end.map(<[u8]>::to_vec),
            point,
            exclusive,
            node: self.shared.upgrade().map_or(0, |s| s.id),
            holds,
        };
        let within = LOCK_CALL_WAIT + Duration::from_secs(2);
        self.call(node, within, move |mut c| async move {
            c.lock_keys(timed(request, within)).await
        })
        .map(|_| ())
    }

    fn prepare_at(
        &self,
        node: u64,
        txn: rowtree_kv::TxnRef,
        coordinator: rowtree_kv::SplitId,
        participants: &[rowtree_kv::SplitId],
        writes: &[crate::command::Write],
        pending: bool,
    ) -> Result<u64, Refusal> {
        let request = PrepareKeysRequest {
            database: self.database,
            txn: txn_bytes(txn.id),
            coordinator: coordinator.0,
            participants: participants.iter().map(|p| p.0).collect(),
            keys: writes.iter().map(|(k, _)| k.clone()).collect(),
            values: writes
                .iter()
                .map(|(_, v)| v.clone().unwrap_or_default())
                .collect(),
            deletes: writes.iter().map(|(_, v)| v.is_none()).collect(),
            pending,
        };
        self.call(node, TXN_CALL_TIMEOUT, move |mut c| async move {
            c.prepare_keys(timed(request, TXN_CALL_TIMEOUT)).await
        })
        .map(|reply| reply.ts)
    }

    fn resolve_at(
        &self,
        node: u64,
        txn: crate::twophase::GlobalTxnId,
        outcome: crate::twophase::Outcome,
    ) -> Result<(), Refusal> {
        let (commit, ts) = match outcome {
            crate::twophase::Outcome::Commit { ts } => (true, ts),
            crate::twophase::Outcome::Abort { at } => (false, at),
        };
        let request = ResolveKeysRequest {
            database: self.database,
            txn: txn_bytes(txn.0),
            commit,
            ts,
        };
        self.call(node, TXN_CALL_TIMEOUT, move |mut c| async move {
            c.resolve_keys(timed(request, TXN_CALL_TIMEOUT)).await
        })
        .map(|_| ())
    }

    fn release_at(&self, node: u64, txn: crate::twophase::GlobalTxnId) -> Result<(), Refusal> {
        let request = ReleaseKeysRequest {
            database: self.database,
            txn: txn_bytes(txn.0),
        };
        self.call(node, TXN_CALL_TIMEOUT, move |mut c| async move {
            c.release_keys(timed(request, TXN_CALL_TIMEOUT)).await
        })
        .map(|_| ())
    }

    fn settle_at(
        &self,
        node: u64,
        txn: crate::twophase::GlobalTxnId,
    ) -> Result<Option<crate::twophase::Outcome>, Refusal> {
        let request = SettleRequest {
            database: self.database,
            txn: txn_bytes(txn.0),
        };
        let reply = self.call(node, TXN_CALL_TIMEOUT, move |mut c| async move {
            c.settle(timed(request, TXN_CALL_TIMEOUT)).await
        })?;
        Ok(reply.decided.then_some(if reply.commit {
            crate::twophase::Outcome::Commit { ts: reply.ts }
        } else {
            crate::twophase::Outcome::Abort { at: reply.ts }
        }))
    }

    fn read_at(&self, node: u64, read: &RemoteRead) -> Result<RemoteBatch, Refusal> {
        let request = read_request(self.database, read, true);
        let reply = self.call(node, READ_TIMEOUT, move |mut c| async move {
            c.read_range(timed(request, READ_TIMEOUT)).await
        })?;
        Ok(batch(reply, None))
    }

    fn read(&self, read: &RemoteRead) -> rowtree_kv::Result<RemoteBatch> {
        let (key, before) = read.first_key();
        let mut why = String::new();
        for _ in 0..ATTEMPTS {
            let found = self
                .locate(&key, before)
                .map_err(rowtree_kv::Error::Replication)?;
            match self.read_from(&found, read) {
                Ok(Some(batch)) => return Ok(batch),
                Ok(None) => {
                    why = "the nodes asked no longer hold the keys".into();
                    self.forget(&found);
                }
                Err(e) => {
                    self.forget(&found);
                    return Err(rowtree_kv::Error::Replication(format!(
                        "reading keys this node holds no replica of: {e}; retry"
                    )));
                }
            }
        }
        Err(rowtree_kv::Error::Replication(format!(
            "reading keys this node holds no replica of: {why} after {ATTEMPTS} lookups; retry"
        )))
    }

    /// The leader last learned; a lookup in the background if there is
    /// none, or if it is older than [`LEADER_FRESH`], so that a commit
    /// retried a moment later (the gateway retries commits another node
    /// refused) goes where the split is led now.
    fn replicas_of(&self, key: &[u8]) -> Vec<u64> {
        self.cached(key, false)
            .map(|f| f.voters)
            .unwrap_or_default()
    }

    fn split_of(&self, key: &[u8]) -> Option<(Vec<u64>, Option<Vec<u8>>)> {
        match self.cached(key, false) {
            Some(found) => Some((found.voters, found.limit)),
            None => {
                self.refresh(key);
                None
            }
        }
    }

    /// Asks `leader`, or the leader a fresh lookup finds, to add the split
    /// point. `Ok(false)` if no leader is known yet.
    fn add_split_point(
        &self,
        key: &[u8],
        expires_at: u64,
        leader: Option<u64>,
    ) -> rowtree_kv::Result<bool> {
        let leader = match leader {
            Some(leader) => leader,
            None => match self.ask(key, false) {
                Ok(Found {
                    leader: Some(leader),
                    ..
                }) => leader,
                Ok(_) => return Ok(false),
                Err(e) => return Err(rowtree_kv::Error::Replication(e)),
            },
        };
        let Some(mut client) = self.client(leader) else {
            return Err(rowtree_kv::Error::Replication(format!(
                "node {leader} has no known address"
            )));
        };
        let request = AddSplitPointRequest {
            database: self.database,
            key: key.to_vec(),
            expires_at,
        };
        let answer = self.block_on(
            async move {
                let mut request = tonic::Request::new(request);
                request.set_timeout(SPLIT_POINT_TIMEOUT);
                client
                    .add_split_point(request)
                    .await
                    .map(tonic::Response::into_inner)
            },
            SPLIT_POINT_TIMEOUT,
        );
        match answer {
            Some(Ok(reply)) => Ok(reply.made),
            Some(Err(status)) => Err(rowtree_kv::Error::Replication(format!(
                "node {leader} did not add the split point: {}",
                status.message()
            ))),
            None => Err(rowtree_kv::Error::Replication(format!(
                "node {leader} did not answer in time"
            ))),
        }
    }

    fn leader_of(&self, key: &[u8]) -> Option<u64> {
        let cached = self.cached(key, false);
        if cached
            .as_ref()
            .is_none_or(|f| f.at.elapsed() >= LEADER_FRESH)
        {
            self.refresh(key);
        }
        cached.and_then(|f| f.leader)
    }
}

impl DatabaseGroups {
    /// This node's answer to `Locate`: its replica covering `key` (or,
    /// `before`, the keys just below it), if it holds one.
    pub(super) fn locate(&self, key: &[u8], before: bool) -> LocateReply {
        let holder = self.groups.groups().into_iter().find(|g| {
            let d = g.descriptor();
            Found {
                start: d.start,
                limit: d.limit,
                voters: Vec::new(),
                leader: None,
                at: Instant::now(),
            }
            .holds(key, before)
        });
        let Some(group) = holder else {
            return LocateReply::default();
        };
        let d = group.descriptor();
        let (voters, members) = group.members();
        LocateReply {
            found: true,
            split: d.split.0,
            start: d.start,
            limit: d.limit,
            learners: members
                .into_keys()
                .filter(|id| !voters.contains(id))
                .collect(),
            voters: voters.into_iter().collect(),
            leader: group.current_leader().unwrap_or(0),
            awaits_image: group.awaits_image(),
            applied_term: group.last_applied().map_or(0, |a| a.0),
            applied_index: group.last_applied().map_or(0, |a| a.1),
        }
    }

    /// This node's answer to `AddSplitPoint`: the split point is added to
    /// the database's own split manager, which cuts the group if this node
    /// leads it (and asks no other node: [`SplitGroups::locally`]) and
    /// otherwise keeps it pending. Whether `key` is a boundary of this
    /// node's groups now. Blocks (the cut waits for the new group).
    pub(super) fn add_split_point(&self, key: &[u8], expires_at: u64) -> Result<bool, Status> {
        let db = self
            .db
            .upgrade()
            .ok_or_else(|| Status::unavailable("the database is closing on this node"))?;
        SplitGroups::locally(|| db.add_split_point_key(key, expires_at))
            .map_err(|e| Status::invalid_argument(e.to_string()))?;
        Ok(self
            .groups
            .groups()
            .iter()
            .any(|g| g.descriptor().start.as_slice() == key))
    }

    /// This node's answer to `ReadRange`: the rows of the range, which must
    /// lie within its replicas, read through the database's router (and
    /// charged to its splits). Blocks (a follower waits for its closed
    /// timestamp); call it from a thread that may.
    pub(super) fn read_range(&self, r: ReadRangeRequest) -> Result<ReadRangeReply, Status> {
        let longest = r.start.len().max(r.end.as_ref().map_or(0, Vec::len));
        if longest > MAX_SPLIT_KEY {
            return Err(Status::invalid_argument(format!(
                "a read bound of {longest} bytes is above the limit of {MAX_SPLIT_KEY}"
            )));
        }
        let start = if r.start_excluded {
            Bound::Excluded(r.start.as_slice())
        } else {
            Bound::Included(r.start.as_slice())
        };
        let end = match &r.end {
            Some(e) if r.end_included => Bound::Included(e.as_slice()),
            Some(e) => Bound::Excluded(e.as_slice()),
            None => Bound::Unbounded,
        };
        let limit = match &r.end {
            Some(e) if r.end_included => Some([e.as_slice(), &[0]].concat()),
            Some(e) => Some(e.clone()),
            None => None,
        };
        let node = self.shared.upgrade().map_or(0, |s| s.id);
        if !self
            .groups
            .held_elsewhere(&r.start, limit.as_deref())
            .is_empty()
        {
            return Err(Status::failed_precondition(format!(
                "node {node} holds no replica of part of the range read"
            )));
        }
        // The reader's node waited for its own commits at or below the
        // read's timestamp; this node's own, still in flight, are waited
        // for here (and later ones get timestamps above it): a commit here
        // at a lower timestamp must be seen.
        let db = self
            .db
            .upgrade()
            .ok_or_else(|| Status::unavailable(format!("node {node}: the database is closing")))?;
        if r.led_only && r.ts != u64::MAX && !self.groups.leads_all(&r.start, limit.as_deref()) {
            return Err(Status::failed_precondition(format!(
                "node {node} does not lead every split of the range read"
            )));
        }
        if r.ts == u64::MAX {
            // A read under locks (the reader's transaction locked the keys
            // here): only what this node leads, at the latest.
            if let Err(refusal) = self.groups.serving(&r.start, limit.as_deref(), false) {
                return Err(match refusal {
                    Refusal::Moved(why) => Status::failed_precondition(why),
                    other => Status::unavailable(other.to_string()),
                });
            }
        } else {
            db.wait_visible(r.ts)
                .map_err(|e| Status::unavailable(format!("node {node}: {e}")))?;
        }
        let max_rows = r.max_rows.clamp(1, MAX_READ_ROWS) as usize;
        let router = self.router.clone();
        SplitGroups::locally(|| {
            let mut reply = ReadRangeReply::default();
            let mut bytes = 0;
            for row in router
                .scan_bounds(start, end, r.ts, r.reverse)
                .limit(max_rows)
            {
                let (key, value) = row.map_err(|e| match e {
                    rowtree_kv::Error::LedElsewhere(m) => Status::unavailable(m),
                    e => Status::unavailable(format!("node {node}: {e}")),
                })?;
                bytes += key.len() + value.len();
                reply.keys.push(key);
                reply.values.push(value);
                if bytes >= MAX_READ_BYTES {
                    break;
                }
            }
            reply.more = reply.keys.len() >= max_rows || bytes >= MAX_READ_BYTES;
            Ok(reply)
        })
    }
}
