//! Follower reads: a stale read served by a cluster node that holds a
//! replica of the database without leading its group.
//!
//! Every replica of a database group has a *safe time*, the closed
//! timestamp it last applied: the leader promises in the log that no
//! commit will come at or below it, after every commit that did (design
//! §5, `GroupCommits::close_timestamp`). So a replica may serve a read at
//! or below its safe time from its own data, without asking the leader;
//! that is what Spanner calls a follower read, and what keeps stale reads
//! working on the minority side of a partition. The leader closes a
//! timestamp one second behind its clock five times a second, so a read
//! at an exact staleness of a few seconds (or a bounded staleness of as
//! much) is served by whichever replica's node the client talks to.
//!
//! [`SpannerService::follower_read`] decides, before a read request is
//! forwarded to the leader, whether this node serves it instead, and at
//! which timestamp (the request's bound is then pinned to it, [`pin`]: an
//! exact staleness evaluated again a moment later could fall above the
//! safe time): the
//! request is a read-only snapshot at a timestamp this node's replica
//! covers (a single-use or newly begun read-only transaction with a
//! staleness bound, or a read-only transaction's id, which carries its
//! timestamp), and it starts no stream over again (a resumed stream keeps
//! the timestamp of its first part, wherever that was served). Anything
//! else goes to the leader as before, and so does a read whose timestamp
//! the safe time does not reach yet.
//!
//! Sessions live on the node that led the database when they were made,
//! so the node serving a follower read usually does not hold the
//! session. It asks that node once whether the session exists (a
//! GetSession, forwarded to the leader, which also keeps the session from
//! being reaped as idle) and remembers the answer for [`VERIFIED_FOR`](super::VERIFIED_FOR):
//! a deleted session may still be served stale reads here for that long.
//! At most [`MAX_VERIFIED`](super::MAX_VERIFIED) sessions are remembered; past that, each
//! follower read asks again.
//!
//! A response served this way carries [`SERVED_HERE`] with this node's
//! id, so that a client (and the tests) can tell.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicU64};
use std::sync::Arc;
use std::time::Duration;

use googleapis_tonic_google_spanner_v1::google::spanner::v1 as pb;
use parking_lot::Mutex;
use pb::transaction_options::Mode;
use pb::transaction_selector::Selector;
use rowtree_db::TimestampBound;
use tonic::metadata::MetadataMap;
use tonic::{Request, Response};

use super::selectors::bound_from_proto;
use super::sessions::{SessionState, SpannerService};
use super::transactions::read_only_timestamp;
use crate::forward::{database_of, onward_from, Need};

/// The metadata key of a response served by a follower read: the id of
/// the node whose replica served it.
pub const SERVED_HERE: &str = "x-rowtree-follower-read";

/// How long asking the leader about a session may take; past it, the read
/// is forwarded as if this node could not serve it.
const VERIFY_TIMEOUT: Duration = Duration::from_secs(2);

/// The timestamp bound of a request's snapshot, when the request reads in
/// a read-only snapshot that is not strong (strong reads need the
/// leader): a single-use one, one begun by the request, or one named by
/// its id.
pub(super) fn stale_bound(selector: Option<&pb::TransactionSelector>) -> Option<TimestampBound> {
    use pb::transaction_options::read_only::TimestampBound as B;
    let options = match selector?.selector.as_ref()? {
        Selector::Id(id) => return read_only_timestamp(id).map(TimestampBound::ReadTimestamp),
        Selector::SingleUse(options) | Selector::Begin(options) => options,
    };
    match &options.mode {
        Some(Mode::ReadOnly(ro)) if !matches!(ro.timestamp_bound, None | Some(B::Strong(_))) => {
            bound_from_proto(ro).ok()
        }
        _ => None,
    }
}

impl SpannerService {
    /// The session to serve a read request with on this node, though
    /// another node leads the database, and the timestamp to read at: when
    /// the request (in session `session`, with `selector`, resuming at
    /// `resume_token`) is a stale snapshot read at or below this node's
    /// safe time (see the module docs). `None`: the request goes where it
    /// would go anyway (to the leader, or it is served here because this
    /// node leads).
    pub(super) async fn follower_read(
        &self,
        session: &str,
        selector: Option<&pb::TransactionSelector>,
        resume_token: &[u8],
        metadata: &MetadataMap,
    ) -> Option<(Arc<SessionState>, u64)> {
        let forwarder = self.forwarder.as_ref()?;
        if !resume_token.is_empty() {
            return None;
        }
        let bound = stale_bound(selector)?;
        let database = database_of(session);
        // Another node leads it (else nothing is forwarded anyway), and
        // this node holds a replica whose safe time covers the read.
        forwarder
            .next_hop(database, metadata, Need::Leader)
            .ok()??;
        let hosted = self.registry.database(database).ok()?;
        let ts = hosted.db.follower_read_timestamp(&bound)?;
        // A session known here, of the database as it is now (not of one
        // dropped and made again under the same name).
        let known = self
            .sessions
            .lock()
            .get(session)
            .cloned()
            .or_else(|| self.verified.lock().get(session))
            .filter(|s| s.db.same_database(&hosted.db));
        if let Some(known) = known {
            return Some((known, ts));
        }
        // Ask the node that holds the session whether it exists.
        let mut leader = self.forward_to(database, metadata).ok()??;
        let mut ask = Request::new(pb::GetSessionRequest {
            name: session.to_string(),
        });
        ask.set_timeout(VERIFY_TIMEOUT);
        let found = tokio::time::timeout(
            VERIFY_TIMEOUT,
            leader.get_session(onward_from(ask, forwarder.node_id())),
        )
        .await
        .ok()?
        .ok()?
        .into_inner();
        if found.name != session {
            return None;
        }
        let now = crate::registry::now_nanos();
        let state = Arc::new(SessionState {
            name: found.name,
            database: database.to_string(),
            db: hosted.db,
            create_time: found
                .create_time
                .map_or(now, |t| t.seconds * 1_000_000_000 + i64::from(t.nanos)),
            multiplexed: found.multiplexed,
            creator_role: found.creator_role,
            last_use: AtomicI64::new(now),
            txns: Mutex::new(HashMap::new()),
            via: AtomicU64::new(0),
            adopted: false,
        });
        self.verified.lock().insert(state.clone());
        Some((state, ts))
    }

    /// The session a query or read runs in, and whether it is a follower
    /// read: the one [`follower_read`](Self::follower_read) found, with
    /// the request's bound in `selector` pinned to the timestamp it decided
    /// on; otherwise the session `name` as every request finds it (through
    /// node `via`, if it was forwarded).
    pub(super) fn reading_session(
        &self,
        here: Option<(Arc<SessionState>, u64)>,
        name: &str,
        selector: &mut Option<pb::TransactionSelector>,
        via: Option<u64>,
    ) -> Result<(Arc<SessionState>, bool), tonic::Status> {
        match here {
            Some((session, ts)) => {
                pin(selector, ts);
                Ok((session, true))
            }
            None => Ok((self.session_via(name, via)?, false)),
        }
    }

    /// Marks `response` as served by this node's replica ([`SERVED_HERE`])
    /// when `follower` says it was.
    pub(super) fn mark_follower_read<T>(
        &self,
        follower: bool,
        mut response: Response<T>,
    ) -> Response<T> {
        if let (true, Some(f)) = (follower, &self.forwarder) {
            response
                .metadata_mut()
                .insert(SERVED_HERE, f.node_id().into());
        }
        response
    }
}

/// Pins a read-only snapshot's bound in `selector` (single-use or begun)
/// to the timestamp `ts` a follower read decided on; a transaction named
/// by id reads at its own timestamp already.
pub(super) fn pin(selector: &mut Option<pb::TransactionSelector>, ts: u64) {
    if let Some(Selector::SingleUse(options) | Selector::Begin(options)) =
        selector.as_mut().and_then(|s| s.selector.as_mut())
    {
        pin_options(options, ts);
    }
}

/// [`pin`] for a read-only transaction's options.
pub(super) fn pin_options(options: &mut pb::TransactionOptions, ts: u64) {
    use pb::transaction_options::read_only::TimestampBound as B;
    if let Some(Mode::ReadOnly(ro)) = &mut options.mode {
        ro.timestamp_bound = Some(B::ReadTimestamp(crate::registry::timestamp_pb(ts as i64)));
    }
}

/// A request that reads in a session, under a transaction selector.
pub(super) trait ReadsInSession {
    fn session(&self) -> &str;
    fn selector(&self) -> Option<&pb::TransactionSelector>;
    fn resume_token(&self) -> &[u8];
}

/// Both read requests name their session, selector and resume token alike.
macro_rules! reads_in_session {
    ($($request:ty),*) => {$(
        impl ReadsInSession for $request {
            fn session(&self) -> &str {
                &self.session
            }
            fn selector(&self) -> Option<&pb::TransactionSelector> {
                self.transaction.as_ref()
            }
            fn resume_token(&self) -> &[u8] {
                &self.resume_token
            }
        }
    )*};
}

reads_in_session!(pb::ExecuteSqlRequest, pb::ReadRequest);

impl SpannerService {
    /// [`follower_read`](Self::follower_read) for a query or read request.
    pub(super) async fn follower_read_of<R: ReadsInSession>(
        &self,
        request: &Request<R>,
    ) -> Option<(Arc<SessionState>, u64)> {
        // Alone, nothing to decide (and nothing to pay for).
        self.forwarder.as_ref()?;
        let r = request.get_ref();
        self.follower_read(
            r.session(),
            r.selector(),
            r.resume_token(),
            request.metadata(),
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pb::transaction_options::read_only::TimestampBound as B;
    use pb::transaction_options::{ReadOnly, ReadWrite};

    fn read_only(bound: B) -> pb::TransactionOptions {
        pb::TransactionOptions {
            mode: Some(Mode::ReadOnly(ReadOnly {
                timestamp_bound: Some(bound),
                return_read_timestamp: true,
            })),
            ..Default::default()
        }
    }

    fn selector(s: Selector) -> Option<pb::TransactionSelector> {
        Some(pb::TransactionSelector { selector: Some(s) })
    }

    fn stale() -> B {
        B::ExactStaleness(prost_types::Duration {
            seconds: 5,
            nanos: 0,
        })
    }

    #[test]
    fn only_stale_snapshots_may_be_follower_reads() {
        let five = Duration::from_secs(5);
        let single = selector(Selector::SingleUse(read_only(stale())));
        assert_eq!(
            stale_bound(single.as_ref()),
            Some(TimestampBound::ExactStaleness(five))
        );
        let begun = selector(Selector::Begin(read_only(stale())));
        assert_eq!(
            stale_bound(begun.as_ref()),
            Some(TimestampBound::ExactStaleness(five))
        );
        let id = super::super::transactions::read_only_id(42);
        assert_eq!(
            stale_bound(selector(Selector::Id(id)).as_ref()),
            Some(TimestampBound::ReadTimestamp(42))
        );
        // Strong reads, read-write transactions, held ids and no selector
        // at all (a strong read) need the leader.
        for s in [
            None,
            selector(Selector::SingleUse(read_only(B::Strong(true)))),
            selector(Selector::Begin(pb::TransactionOptions {
                mode: Some(Mode::ReadWrite(ReadWrite::default())),
                ..Default::default()
            })),
            selector(Selector::Id(vec![0x57; 16])),
        ] {
            assert_eq!(stale_bound(s.as_ref()), None, "{s:?}");
        }
    }

    #[test]
    fn a_follower_read_is_pinned_to_the_timestamp_it_was_decided_at() {
        let ts = 1_700_000_000_123_456_000;
        let want = selector(Selector::SingleUse(read_only(B::ReadTimestamp(
            crate::registry::timestamp_pb(ts as i64),
        ))));
        let mut single = selector(Selector::SingleUse(read_only(stale())));
        pin(&mut single, ts);
        assert_eq!(single, want);
        assert_eq!(
            stale_bound(single.as_ref()),
            Some(TimestampBound::ReadTimestamp(ts))
        );
        // A transaction by id keeps its own timestamp.
        let id = super::super::transactions::read_only_id(42);
        let mut by_id = selector(Selector::Id(id.clone()));
        pin(&mut by_id, ts);
        assert_eq!(by_id, selector(Selector::Id(id)));
    }
}
