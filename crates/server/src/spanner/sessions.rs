//! Sessions: the service's store of live sessions, each with the
//! transactions it holds.
//!
//! [`SpannerService`] is the registry (which databases exist) and this
//! store. A session names its database and keeps its read-write and
//! partitioned DML transactions by id ([`SessionState::slot`] also opens the
//! snapshot a read-only id stands for). The store counts sessions per
//! database to refuse one past [`MAX_SESSIONS`]; [`SpannerService::reap_idle`],
//! run every few seconds by the server, deletes sessions and rolls back
//! transactions left idle. The session RPCs (create, get, list, delete)
//! are answered here; the service only hands them over.
//!
//! **Sessions on a cluster.** Sessions live in memory on the node that
//! leads their database, and that leadership moves: a leader dies, a
//! node joins and takes a replica, a stopping node hands its groups over.
//! So that a client's sessions outlive such a move, as they do on Spanner,
//! a session made on a cluster node has a name any node serving the
//! database can check ([`issued_id`]): its id holds the session's creation
//! time and whether it is multiplexed, and a code made from those, the
//! database's name, the cluster's id and the database's group with
//! HMAC-SHA256. A node that is asked for a session it does not hold
//! *adopts* it if the code checks out ([`SpannerService::session`]): it
//! makes the session under that name, with no transactions. A transaction
//! the session held on the old leader is gone with that leader's locks: a
//! request naming it is answered ABORTED, and the client retries it, as
//! after any abort. A session deleted on this node (by DeleteSession, or
//! for being idle) stays deleted here ([`MAX_DELETED`] remembered); one
//! deleted on a node that has since stopped leading may come back if the
//! leadership moves again. A session with a creator role is not adopted
//! (its name does not say the role): after a move it is NOT_FOUND, as every
//! session was before. A database dropped and made again under the same
//! name has another group, so its old sessions stay NOT_FOUND. ListSessions
//! lists the sessions this node holds.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use googleapis_tonic_google_spanner_v1::google::spanner::v1 as pb;
use googleapis_tonic_google_spanner_v1::google::spanner::v1::spanner_client::SpannerClient;
use parking_lot::Mutex;
use rowtree_db::{Database, TimestampBound};
use tonic::Status;

use super::limits::{
    IDLE_OTHER, IDLE_READ_WRITE, IDLE_SESSION, MAX_HELD_TRANSACTIONS, MAX_SESSIONS,
};
use super::transactions::{end_aborted, read_only_timestamp, TxnSlot, TxnState, HELD_TAG};
use crate::registry::{now_nanos, Registry};
use crate::status;

/// The data service: the registry of databases and the live sessions.
/// Clones share both (the server keeps one for the reaper).
#[derive(Clone)]
pub struct SpannerService {
    pub(super) registry: Arc<Registry>,
    pub(super) sessions: Arc<Mutex<Sessions>>,
    /// On a cluster node: where requests for databases other nodes lead
    /// go (`forward.rs`).
    pub(super) forwarder: Option<Arc<crate::forward::Forwarder>>,
    /// On a cluster node: the sessions of other nodes it serves follower
    /// reads in (`follower.rs`).
    pub(super) verified: Arc<Mutex<Verified>>,
}

/// A live session: its name, its database, and the transactions it holds.
pub(super) struct SessionState {
    pub(super) name: String,
    pub(super) database: String,
    pub(super) db: Database,
    pub(super) create_time: i64,
    pub(super) multiplexed: bool,
    pub(super) creator_role: String,
    pub(super) last_use: AtomicI64,
    pub(super) txns: Mutex<HashMap<Vec<u8>, Arc<TxnSlot>>>,
    /// On a cluster node: the node the session's latest request came in
    /// through (`forward::VIA`), 0 if this one. A transaction begun here
    /// keeps the value of the request that began it ([`TxnSlot::via`]).
    pub(super) via: AtomicU64,
    /// Made on another node and adopted here (see the module docs): a
    /// read-write transaction id it does not hold is one the other node
    /// held, and is answered ABORTED.
    pub(super) adopted: bool,
}

impl SessionState {
    /// The session as the API returns it.
    pub(super) fn to_pb(&self) -> pb::Session {
        pb::Session {
            name: self.name.clone(),
            create_time: Some(crate::registry::timestamp_pb(self.create_time)),
            approximate_last_use_time: Some(crate::registry::timestamp_pb(
                self.last_use.load(Ordering::Relaxed),
            )),
            creator_role: self.creator_role.clone(),
            multiplexed: self.multiplexed,
            ..Default::default()
        }
    }

    /// The transaction `id` names: a snapshot at the timestamp a read-only
    /// id carries, or a held transaction (NOT_FOUND if it is not held).
    pub(super) fn slot(&self, id: &[u8]) -> Result<Arc<TxnSlot>, Status> {
        if let Some(ts) = read_only_timestamp(id) {
            let snapshot = self
                .db
                .read_only(TimestampBound::ReadTimestamp(ts))
                .map_err(status::from_db)?;
            return Ok(TxnSlot::new(TxnState::ReadOnly(snapshot)));
        }
        let slot = self.txns.lock().get(id).cloned().ok_or_else(|| {
            if self.adopted && id.first() == Some(&HELD_TAG) {
                return status::aborted(format!(
                    "Transaction was aborted: {} was begun on the node that led the database \
                     before its leadership moved, and ended with it; retry the transaction",
                    hex(id)
                ));
            }
            Status::not_found(format!(
                "Transaction not found: {} (it ended, or was never begun in session {})",
                hex(id),
                self.name
            ))
        })?;
        slot.touch();
        Ok(slot)
    }

    /// The transaction `id` names if the session holds it, without waiting
    /// for anything (a read-only id's snapshot may wait for its timestamp:
    /// `None`, as for an id that is not held; use [`slot`](Self::slot)).
    pub(super) fn held_slot(&self, id: &[u8]) -> Option<Arc<TxnSlot>> {
        if read_only_timestamp(id).is_some() {
            return None;
        }
        let slot = self.txns.lock().get(id).cloned()?;
        slot.touch();
        Some(slot)
    }

    /// Holds a read-write or partitioned DML transaction under a new id.
    pub(super) fn register(&self, state: TxnState) -> Result<(Vec<u8>, Arc<TxnSlot>), Status> {
        let mut id = uuid::Uuid::new_v4().as_bytes().to_vec();
        id[0] = HELD_TAG;
        let slot = TxnSlot::begun_via(state, self.via.load(Ordering::Relaxed));
        let mut txns = self.txns.lock();
        if txns.len() >= MAX_HELD_TRANSACTIONS {
            return Err(Status::resource_exhausted(format!(
                "Session {} holds {MAX_HELD_TRANSACTIONS} transactions, the most it may; commit \
                 or roll back some, or use more sessions",
                self.name
            )));
        }
        txns.insert(id.clone(), slot.clone());
        Ok((id, slot))
    }

    /// Stops holding a transaction (ended, or begun by a failed request).
    pub(super) fn forget(&self, id: &[u8]) {
        self.txns.lock().remove(id);
    }
}

/// How long a session another node holds, once that node confirmed it,
/// is served follower reads here without asking again (`follower.rs`).
pub const VERIFIED_FOR: Duration = Duration::from_secs(10);

/// The most sessions of other nodes remembered at once.
pub const MAX_VERIFIED: usize = 10_000;

/// Sessions other nodes hold that this node serves follower reads for,
/// with when they were last confirmed.
#[derive(Default)]
pub(super) struct Verified {
    by_name: HashMap<String, (Arc<SessionState>, Instant)>,
}

impl Verified {
    pub(super) fn get(&self, name: &str) -> Option<Arc<SessionState>> {
        let (session, at) = self.by_name.get(name)?;
        (at.elapsed() < VERIFIED_FOR).then(|| session.clone())
    }

    /// Remembers `session`, dropping what expired first; when that frees
    /// no room, it is not remembered.
    pub(super) fn insert(&mut self, session: Arc<SessionState>) {
        if self.by_name.len() >= MAX_VERIFIED {
            self.by_name
                .retain(|_, (_, at)| at.elapsed() < VERIFIED_FOR);
        }
        if self.by_name.len() < MAX_VERIFIED {
            self.by_name
                .insert(session.name.clone(), (session, Instant::now()));
        }
    }
}

/// An id in hexadecimal, for messages.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The most deleted session names a cluster node remembers, so as not
/// to adopt them again (see the module docs); the oldest are forgotten.
pub const MAX_DELETED: usize = 10_000;

/// The flag bit of an issued session id (see [`issued_id`]) that says
/// the session is multiplexed.
const MULTIPLEXED: u8 = 1;

/// How many hexadecimal digits an issued session id has: 32 of a random
/// UUID, 1 of flags, 16 of the creation time (nanoseconds since the Unix
/// epoch), 16 of the code (the first 8 bytes of the HMAC).
const ISSUED_LEN: usize = 32 + 1 + 16 + 16;

/// The id of a new session of `database` on a cluster node, whose session
/// key (`Registry::session_key`) is `key`: a random UUID, the flags
/// (whether it is `multiplexed`), the `create_time`, and the code:
/// HMAC-SHA256 under `key` of the database's name and everything before
/// the code, its first 8 bytes; all in lowercase hexadecimal.
pub(super) fn issued_id(key: &[u8], database: &str, multiplexed: bool, create_time: i64) -> String {
    let flags = if multiplexed { MULTIPLEXED } else { 0 };
    let body = format!(
        "{}{flags:x}{:016x}",
        uuid::Uuid::new_v4().simple(),
        create_time as u64
    );
    let code = session_code(key, database, &body);
    format!("{body}{code}")
}

/// The code [`issued_id`] ends with, for the id's `body`.
fn session_code(key: &[u8], database: &str, body: &str) -> String {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, key);
    let mut context = ring::hmac::Context::with_key(&key);
    context.update(database.as_bytes());
    context.update(&[0]);
    context.update(body.as_bytes());
    hex(&context.sign().as_ref()[..8])
}

/// What an issued session id says, if its code checks out under `key`
/// for `database`: whether the session is multiplexed, and its creation
/// time. `None` for any other id (a UUID alone, a forged or mangled one,
/// one issued for another database or cluster).
pub(super) fn read_issued(key: &[u8], database: &str, id: &str) -> Option<(bool, i64)> {
    if id.len() != ISSUED_LEN
        || !id
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return None;
    }
    let (body, code) = id.split_at(ISSUED_LEN - 16);
    let expected = session_code(key, database, body);
    if !bool::from(subtle::ConstantTimeEq::ct_eq(
        expected.as_bytes(),
        code.as_bytes(),
    )) {
        return None;
    }
    let flags = u8::from_str_radix(&body[32..33], 16).ok()?;
    let create_time = u64::from_str_radix(&body[33..], 16).ok()? as i64;
    Some((flags & MULTIPLEXED != 0, create_time))
}

/// Every live session by name, and how many each database holds (kept
/// beside the map so that the [`MAX_SESSIONS`] check costs nothing); on
/// a cluster node, also the names of the sessions deleted here, newest
/// last, at most [`MAX_DELETED`].
#[derive(Default)]
pub(super) struct Sessions {
    pub(super) by_name: HashMap<String, Arc<SessionState>>,
    per_database: HashMap<String, usize>,
    deleted: HashSet<String>,
    deleted_order: VecDeque<String>,
}

impl Sessions {
    pub(super) fn get(&self, name: &str) -> Option<&Arc<SessionState>> {
        self.by_name.get(name)
    }

    pub(super) fn values(&self) -> impl Iterator<Item = &Arc<SessionState>> {
        self.by_name.values()
    }

    /// Adds `session` unless its database holds [`MAX_SESSIONS`] already.
    fn insert(&mut self, session: Arc<SessionState>) -> Result<(), Status> {
        let count = self
            .per_database
            .entry(session.database.clone())
            .or_default();
        if *count >= MAX_SESSIONS {
            return Err(Status::resource_exhausted(format!(
                "Database {} has {MAX_SESSIONS} sessions, the most it may hold; delete \
                 sessions that are no longer used (sessions unused for an hour are deleted)",
                session.database
            )));
        }
        *count += 1;
        self.by_name.insert(session.name.clone(), session);
        Ok(())
    }

    /// Remembers that session `name` was deleted here, forgetting the
    /// oldest such name beyond [`MAX_DELETED`].
    fn mark_deleted(&mut self, name: &str) {
        if self.deleted.insert(name.to_string()) {
            self.deleted_order.push_back(name.to_string());
            while self.deleted_order.len() > MAX_DELETED {
                if let Some(oldest) = self.deleted_order.pop_front() {
                    self.deleted.remove(&oldest);
                }
            }
        }
    }

    fn was_deleted(&self, name: &str) -> bool {
        self.deleted.contains(name)
    }

    fn remove(&mut self, name: &str) -> Option<Arc<SessionState>> {
        let session = self.by_name.remove(name)?;
        if let Some(count) = self.per_database.get_mut(&session.database) {
            *count -= 1;
            if *count == 0 {
                self.per_database.remove(&session.database);
            }
        }
        Some(session)
    }
}

impl SpannerService {
    /// A service over `registry`'s databases, with no sessions yet.
    pub fn new(registry: Arc<Registry>) -> SpannerService {
        SpannerService {
            registry,
            sessions: Arc::new(Mutex::new(Sessions::default())),
            forwarder: None,
            verified: Arc::default(),
        }
    }

    /// The service of a cluster node: requests for a database whose group
    /// another node leads are forwarded to it (see `forward.rs`).
    pub(crate) fn forwarding(
        registry: Arc<Registry>,
        forwarder: Arc<crate::forward::Forwarder>,
    ) -> SpannerService {
        SpannerService {
            forwarder: Some(forwarder),
            ..SpannerService::new(registry)
        }
    }

    /// Where a request for `database` goes if not here (a cluster node's
    /// database that another node leads).
    pub(super) fn forward_to(
        &self,
        database: &str,
        metadata: &tonic::metadata::MetadataMap,
    ) -> Result<Option<SpannerClient<tonic::transport::Channel>>, Status> {
        let Some(f) = &self.forwarder else {
            return Ok(None);
        };
        Ok(f.target(database, metadata, crate::forward::Need::Leader)?
            .map(|channel| {
                SpannerClient::new(channel)
                    .max_decoding_message_size(crate::MAX_MESSAGE)
                    .max_encoding_message_size(crate::MAX_REQUEST)
            }))
    }

    /// [`session`](Self::session), for a request that came in through
    /// node `via` (forwarded; `None`: sent here by the client), which the
    /// session then remembers as its way in.
    pub(super) fn session_via(
        &self,
        name: &str,
        via: Option<u64>,
    ) -> Result<Arc<SessionState>, Status> {
        let session = self.session(name)?;
        session.via.store(via.unwrap_or(0), Ordering::Relaxed);
        Ok(session)
    }

    /// The session `name`, marked used: NOT_FOUND if it is gone, or if its
    /// database was dropped (the session goes too), even if a database was
    /// made again under the same name since: the session belonged to the
    /// dropped one.
    pub(super) fn session(&self, name: &str) -> Result<Arc<SessionState>, Status> {
        let held = self.sessions.lock().get(name).cloned();
        let session = match held {
            Some(session) => session,
            None => self.adopt(name)?,
        };
        if !self.registry.has_database(&session.database) {
            self.sessions.lock().remove(name);
            return Err(status::not_found(
                "google.spanner.admin.database.v1.Database",
                &session.database,
            ));
        }
        let current = self
            .registry
            .database(&session.database)
            .is_ok_and(|hosted| hosted.db.same_database(&session.db));
        if !current {
            // Made over a replica of the database this node has closed
            // since (moved away and back): adopted again over the one open
            // now, if it may be.
            self.sessions.lock().remove(name);
            return self.adopt(name);
        }
        session.last_use.store(now_nanos(), Ordering::Relaxed);
        Ok(session)
    }

    /// The session `name`, which this node does not hold, made here as a
    /// session another node made (see the module docs): on a cluster node,
    /// if its id is one issued for its database under the database's
    /// session key and it was not deleted here. NOT_FOUND otherwise.
    fn adopt(&self, name: &str) -> Result<Arc<SessionState>, Status> {
        let not_found = || status::not_found("google.spanner.v1.Session", name);
        let Some((database, id)) = name.split_once("/sessions/") else {
            return Err(not_found());
        };
        let Some(key) = self.registry.session_key(database) else {
            return Err(not_found());
        };
        let Some((multiplexed, create_time)) = read_issued(&key, database, id) else {
            return Err(not_found());
        };
        let hosted = self.registry.database(database)?;
        let state = Arc::new(SessionState {
            name: name.to_string(),
            database: database.to_string(),
            db: hosted.db,
            create_time,
            multiplexed,
            creator_role: String::new(),
            last_use: AtomicI64::new(now_nanos()),
            txns: Mutex::new(HashMap::new()),
            via: AtomicU64::new(0),
            adopted: true,
        });
        let mut sessions = self.sessions.lock();
        if sessions.was_deleted(name) {
            return Err(not_found());
        }
        if let Some(raced) = sessions.get(name) {
            return Ok(raced.clone());
        }
        sessions.insert(state.clone())?;
        drop(sessions);
        tracing::debug!(session = name, "a session made on another node is adopted");
        Ok(state)
    }

    /// [`create_via`](Self::create_via) for a client of this node.
    #[cfg(test)]
    pub(super) fn create(
        &self,
        database: &str,
        template: Option<&pb::Session>,
    ) -> Result<pb::Session, Status> {
        self.create_via(database, template, None)
    }

    /// CreateSession: a new session in `database`, multiplexed or with a
    /// creator role as `template` asks; `via` is the node the client sent
    /// the request to, if another node forwarded it here.
    pub(super) fn create_via(
        &self,
        database: &str,
        template: Option<&pb::Session>,
        via: Option<u64>,
    ) -> Result<pb::Session, Status> {
        let hosted = self.registry.database(database)?;
        let now = now_nanos();
        let multiplexed = template.is_some_and(|t| t.multiplexed);
        let creator_role = template.map(|t| t.creator_role.clone()).unwrap_or_default();
        // On a cluster, a name other nodes can adopt (see the module docs),
        // unless it has a role the name cannot carry.
        let id = match self.registry.session_key(database) {
            Some(key) if creator_role.is_empty() => issued_id(&key, database, multiplexed, now),
            _ => uuid::Uuid::new_v4().simple().to_string(),
        };
        let name = format!("{database}/sessions/{id}");
        let state = Arc::new(SessionState {
            name: name.clone(),
            database: database.to_string(),
            db: hosted.db,
            create_time: now,
            multiplexed,
            creator_role,
            last_use: AtomicI64::new(now),
            txns: Mutex::new(HashMap::new()),
            via: AtomicU64::new(via.unwrap_or(0)),
            adopted: false,
        });
        let out = state.to_pb();
        self.sessions.lock().insert(state)?;
        Ok(out)
    }

    /// BatchCreateSessions: `count` sessions (at most 100 per request, as
    /// Spanner returns), each like `template`.
    pub(super) fn create_many(
        &self,
        database: &str,
        count: i32,
        template: Option<&pb::Session>,
        via: Option<u64>,
    ) -> Result<Vec<pb::Session>, Status> {
        if count <= 0 {
            return Err(Status::invalid_argument("session_count must be positive"));
        }
        let count = count.min(100);
        let mut session = Vec::with_capacity(count as usize);
        for _ in 0..count {
            session.push(self.create_via(database, template, via)?);
        }
        Ok(session)
    }

    /// ListSessions: a database's sessions by name, a page at a time (the
    /// page token is the index of the next one).
    pub(super) fn list(
        &self,
        r: &pb::ListSessionsRequest,
    ) -> Result<pb::ListSessionsResponse, Status> {
        self.registry.database(&r.database)?;
        let mut sessions: Vec<pb::Session> = self
            .sessions
            .lock()
            .values()
            .filter(|s| s.database == r.database)
            .map(|s| s.to_pb())
            .collect();
        sessions.sort_by(|a, b| a.name.cmp(&b.name));
        let start: usize = r.page_token.parse().unwrap_or(0);
        let size = if r.page_size <= 0 {
            usize::MAX
        } else {
            r.page_size as usize
        };
        let total = sessions.len();
        let page: Vec<pb::Session> = sessions.into_iter().skip(start).take(size).collect();
        let next = if start + page.len() < total {
            (start + page.len()).to_string()
        } else {
            String::new()
        };
        Ok(pb::ListSessionsResponse {
            sessions: page,
            next_page_token: next,
        })
    }

    /// DeleteSession: removes the session and returns the transactions it
    /// held, for the caller to drop on a blocking thread (dropping a
    /// read-write transaction rolls it back).
    pub(super) fn delete(&self, name: &str) -> Result<Vec<Arc<TxnSlot>>, Status> {
        // One another node made is adopted first (NOT_FOUND if it may not
        // be), so that deleting it here keeps it deleted here.
        let held = self.sessions.lock().get(name).is_some();
        if !held {
            self.adopt(name)?;
        }
        let mut sessions = self.sessions.lock();
        let removed = sessions.remove(name);
        if self.forwarder.is_some() {
            sessions.mark_deleted(name);
        }
        drop(sessions);
        match removed {
            Some(s) => Ok(s.txns.lock().drain().map(|(_, v)| v).collect()),
            None => Err(status::not_found("google.spanner.v1.Session", name)),
        }
    }

    /// Rolls back read-write transactions idle longer than
    /// [`IDLE_READ_WRITE`], forgets other transactions idle longer than
    /// [`IDLE_OTHER`], and deletes sessions (not multiplexed) unused for
    /// [`IDLE_SESSION`]; returns how many transactions and sessions were
    /// ended. Called periodically by the server.
    pub fn reap_idle(&self) -> usize {
        self.reap(
            IDLE_READ_WRITE,
            "Transaction was aborted because it was idle too long",
        )
    }

    /// Rolls back every read-write transaction that is not running a
    /// request right now, so that requests in flight waiting for their
    /// locks can finish: the server is stopping and accepts no further
    /// request, so these transactions could never commit. Returns how many
    /// were ended.
    pub fn end_idle_read_write(&self) -> usize {
        self.reap(
            Duration::ZERO,
            "Transaction was aborted because the server is stopping",
        )
    }

    /// [`reap_idle`](Self::reap_idle) with read-write transactions idle for
    /// `read_write_idle` ended with `message`.
    fn reap(&self, read_write_idle: Duration, message: &str) -> usize {
        let now = now_nanos();
        let idle_since = |nanos: i64| Duration::from_nanos((now - nanos).max(0) as u64);
        let mut ended = 0;
        let expired: Vec<Arc<SessionState>> = {
            let mut sessions = self.sessions.lock();
            let names: Vec<String> = sessions
                .values()
                .filter(|s| {
                    !s.multiplexed && idle_since(s.last_use.load(Ordering::Relaxed)) >= IDLE_SESSION
                })
                .map(|s| s.name.clone())
                .collect();
            if self.forwarder.is_some() {
                for n in &names {
                    sessions.mark_deleted(n);
                }
            }
            names.iter().filter_map(|n| sessions.remove(n)).collect()
        };
        for s in expired {
            // Dropping a read-write transaction rolls it back.
            let txns: Vec<Arc<TxnSlot>> = s.txns.lock().drain().map(|(_, v)| v).collect();
            ended += 1 + txns.len();
        }
        let sessions: Vec<Arc<SessionState>> = self.sessions.lock().values().cloned().collect();
        for s in sessions {
            // A transaction whose client came through a node that stopped
            // answering: its client is cut off, it is an orphan. So is one
            // begun through a process of that node that has since been
            // replaced, however quickly it came back. (Asked once per node
            // and pass.)
            let mut answering: HashMap<u64, bool> = HashMap::new();
            let mut txns = s.txns.lock();
            txns.retain(|_, slot| {
                let idle = idle_since(slot.last_use.load(Ordering::Relaxed));
                let (gone, restarted) = match (&self.forwarder, slot.via) {
                    (Some(f), via) if via != 0 && slot.read_write => {
                        let gone = !*answering.entry(via).or_insert_with(|| f.answering(via));
                        (gone, !gone && f.started_after(via, slot.created))
                    }
                    _ => (false, false),
                };
                let orphan_message;
                let (limit, message) = if !slot.read_write {
                    (IDLE_OTHER, message)
                } else if gone || restarted {
                    orphan_message = format!(
                        "Transaction was aborted because node {} (its way in) {}",
                        slot.via,
                        if gone {
                            "stopped answering"
                        } else {
                            "restarted since it began"
                        }
                    );
                    (Duration::ZERO, orphan_message.as_str())
                } else {
                    (read_write_idle, message)
                };
                if idle < limit {
                    return true;
                }
                if let Some(mut state) = slot.state.try_lock() {
                    ended += 1;
                    if slot.read_write {
                        end_aborted(&mut state, message);
                        // Keep the ended slot a while so the client hears ABORTED.
                        return idle < limit + IDLE_READ_WRITE;
                    }
                    return false;
                }
                true
            });
        }
        ended
    }
}
