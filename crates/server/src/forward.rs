//! Forwarding on a cluster node: a request for a database whose group
//! another node leads goes to that node (the data API's requests, and the
//! admin requests that change a database's schema or split points, or ask
//! after such a change's operation).
//!
//! On a node of a cluster a database is served by the leader of its Raft
//! group (the leaseholder: it assigns timestamps and serves strong reads).
//! Any node accepts every request: when the request's database (named by
//! its session, or by the request itself) is led by another node, the
//! gateway sends the request on, with the client's metadata (its deadline
//! included), to the Spanner port that node announced, and relays the
//! answer, streams included. A node that holds no replica of the database
//! (a cluster larger than its replica count) does not know the leader, and
//! sends the request to one of the replicas' nodes (each attempt the next
//! one that answers the node's clock heartbeats), which sends it on to the leader if that is another node. A
//! request carries its hop count in [`FORWARDED`] and travels at most
//! [`MAX_HOPS`]: a node that stopped leading meanwhile answers it itself,
//! with UNAVAILABLE naming the leader, and the client retries. So sessions
//! live on the node that led their database when they were made; after a
//! leader change the new leader adopts them (`spanner/sessions.rs`).
//!
//! Requests that read what every replica holds (a database's metadata and
//! schema) need a replica, not the leader ([`Need::Replica`]). So does a
//! stale read below the safe time of a replica this node holds: the data
//! service serves it here before asking where to forward it
//! (`spanner/follower.rs`).
//!
//! With no leader known (an election) the gateway serves the request
//! itself, which waits for the election's outcome within its bound.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use rowtree_cluster::node::databases::Hosting;
use tonic::metadata::MetadataMap;
use tonic::transport::Channel;
use tonic::{Request, Status};

use crate::registry::Registry;

/// The metadata key a forwarded request carries: how many nodes sent it
/// on so far.
pub const FORWARDED: &str = "x-rowtree-forwarded";

/// The metadata key a forwarded request carries: the node the client sent
/// it to (the first to send it on). A session made through another node
/// remembers it, so that its transactions can be rolled back when that
/// node dies (the client, cut off with it, will not end them).
pub const VIA: &str = "x-rowtree-via";

/// The most times a request is sent on: from a node without a replica to
/// one with, and from there to the leader.
pub const MAX_HOPS: u32 = 2;

/// What a request needs of the node that answers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Need {
    /// The database's leader: reads and writes of its data, schema
    /// changes.
    Leader,
    /// Any replica: the database's metadata and schema.
    Replica,
}

/// How many times the request was sent on already.
pub(crate) fn hops(metadata: &MetadataMap) -> u32 {
    metadata
        .get(FORWARDED)
        .and_then(|v| v.to_str().ok()?.parse().ok())
        .unwrap_or(0)
}

/// How long dialling another node may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// How often a connection to another node is pinged (busy or idle), and
/// how long a ping may go unanswered before the connection is closed.
const KEEPALIVE: Duration = Duration::from_secs(3);

/// Where a cluster node's requests go (see the module docs).
pub(crate) struct Forwarder {
    hosting: Hosting,
    registry: Arc<Registry>,
    /// One channel per node address, dialled lazily and kept.
    channels: Mutex<HashMap<String, Channel>>,
    /// Which replica a request for a database held elsewhere goes to next.
    turn: std::sync::atomic::AtomicUsize,
}

impl Forwarder {
    pub(crate) fn new(hosting: Hosting, registry: Arc<Registry>) -> Forwarder {
        Forwarder {
            hosting,
            registry,
            channels: Mutex::new(HashMap::new()),
            turn: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// This node's id.
    pub(crate) fn node_id(&self) -> u64 {
        self.hosting.node_id()
    }

    /// Whether node `id` answers its clock heartbeats (see
    /// [`Hosting::answering`]).
    pub(crate) fn answering(&self, id: u64) -> bool {
        self.hosting.answering(id)
    }

    /// Whether node `id`'s process started after `wall_nanos` (see
    /// [`Hosting::started_after`]).
    pub(crate) fn started_after(&self, id: u64, wall_nanos: i64) -> bool {
        self.hosting.started_after(id, wall_nanos)
    }

    /// A channel to the node a request for `database` goes to, if not
    /// this one (see the module docs): the leader of the database's group,
    /// when the request needs it, this node knows it and it is another
    /// node; a node holding a replica, when this one holds none. `None`
    /// for a request sent on [`MAX_HOPS`] times already, a database this
    /// node does not know (answered here: NOT_FOUND), or no known leader.
    pub(crate) fn target(
        &self,
        database: &str,
        metadata: &MetadataMap,
        need: Need,
    ) -> Result<Option<Channel>, Status> {
        match self.next_hop(database, metadata, need)? {
            Some(hop) => Ok(Some(self.channel(database, hop.node)?)),
            None => Ok(None),
        }
    }

    /// The node a request for `database` goes to next, as
    /// [`target`](Self::target) chooses it, and whether that node leads the
    /// database's group (else it holds a replica and sends the request on).
    pub(crate) fn next_hop(
        &self,
        database: &str,
        metadata: &MetadataMap,
        need: Need,
    ) -> Result<Option<Hop>, Status> {
        let hops = hops(metadata);
        if hops >= MAX_HOPS {
            return Ok(None);
        }
        let me = self.hosting.node_id();
        // A database other nodes hold is known from memory; asking
        // `Registry::database` first would miss and read the stored
        // document on every such request.
        if let Some(group) = self.registry.placed_elsewhere(database) {
            // A replica's node, in turn, skipping those that stopped
            // answering; a request forwarded here already is answered here.
            if hops > 0 || group.members.is_empty() {
                return Ok(None);
            }
            let turn = self.turn.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let n = group.members.len();
            let node = (0..n)
                .map(|i| group.members[(turn + i) % n])
                .find(|id| self.hosting.answering(*id))
                .unwrap_or(group.members[turn % n]);
            return Ok(Some(Hop {
                node,
                leader: false,
            }));
        }
        let Ok(hosted) = self.registry.database(database) else {
            return Ok(None);
        };
        let Some(group) = &hosted.meta.group else {
            return Ok(None);
        };
        match (need, self.hosting.leader_of(group.id)) {
            (Need::Leader, Some(leader)) if leader != me => Ok(Some(Hop {
                node: leader,
                leader: true,
            })),
            _ => Ok(None),
        }
    }

    /// A channel to the Spanner port of node `node`, which serves
    /// `database` (named in the error if the node has not said where its
    /// port is).
    pub(crate) fn channel(&self, database: &str, node: u64) -> Result<Channel, Status> {
        let addr = self.hosting.client_addr(node)?.ok_or_else(|| {
            Status::unavailable(format!(
                "node {node} serves {database}, but has not said where yet; try again"
            ))
        })?;
        let mut channels = self.channels.lock();
        if let Some(channel) = channels.get(&addr) {
            return Ok(channel.clone());
        }
        let dial = self.hosting.dial_addr(&addr);
        let channel = tonic::transport::Endpoint::from_shared(format!("http://{dial}"))
            .map_err(|e| Status::internal(format!("node {node}'s address {addr:?}: {e}")))?
            .connect_timeout(CONNECT_TIMEOUT)
            .tcp_nodelay(true)
            // A node whose process hangs (paused, swapping) keeps its
            // connections open and answers nothing: pinged, it is found
            // out within seconds, and the calls waiting on it fail (as
            // UNAVAILABLE, or a commit's outcome is looked up) instead of
            // waiting as long as their callers do.
            .http2_keep_alive_interval(KEEPALIVE)
            .keep_alive_timeout(KEEPALIVE)
            .keep_alive_while_idle(true)
            .connect_lazy();
        channels.insert(addr, channel.clone());
        Ok(channel)
    }

    /// The node leading `database`'s group (its first split's), as this
    /// node knows it: where its sessions live. `None` for a database this
    /// node holds no replica of, or during an election.
    pub(crate) fn database_leader(&self, database: &str) -> Option<u64> {
        let hosted = self.registry.database(database).ok()?;
        self.hosting.leader_of(hosted.meta.group.as_ref()?.id)
    }

    /// Whether node `id` settles the outcome of a tagged commit (see
    /// [`Hosting::settles_outcomes`]).
    pub(crate) fn settles_outcomes(&self, id: u64) -> bool {
        self.hosting.settles_outcomes(id)
    }

    /// Whether the process of node `id` that was running at `wall_nanos`
    /// (this node's wall clock) is gone for good, as far as this node
    /// knows: the node restarted since (see
    /// [`Hosting::process_gone_since`]). This node itself counts if its own
    /// process started after `wall_nanos`.
    pub(crate) fn process_gone_since(&self, id: u64, wall_nanos: i64) -> bool {
        self.hosting.process_gone_since(id, wall_nanos)
    }
}

/// Where [`Forwarder::next_hop`] sends a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Hop {
    /// The node.
    pub node: u64,
    /// Whether it leads the request's database (else it holds a replica
    /// and sends the request on to the leader).
    pub leader: bool,
}

/// The answer to relay of a call sent on to another node. A call that
/// broke on the way (the node died or the connection dropped before an
/// answer came: tonic's `Unknown` status with the transport's error behind
/// it) becomes UNAVAILABLE, which the client libraries retry, as they
/// would if they had called that node themselves; every status the other
/// node sent is its answer, relayed as it is. (Commits are the exception,
/// and do not come through here: a broken commit's outcome is unknown, and
/// the gateway finds it out, `spanner/outcomes.rs`.)
pub(crate) fn relayed<T>(answer: Result<T, Status>) -> Result<T, Status> {
    answer.map_err(|status| {
        let broke =
            status.code() == tonic::Code::Unknown && std::error::Error::source(&status).is_some();
        if !broke {
            return status;
        }
        let cause = std::error::Error::source(&status)
            .map(|e| format!(": {e}"))
            .unwrap_or_default();
        Status::unavailable(format!(
            "the node serving this database stopped answering before it replied ({}{cause}); \
             try again",
            status.message()
        ))
    })
}

/// `request` as it is sent on: the client's metadata (its deadline
/// included) and [`FORWARDED`], one more.
pub(crate) fn onward<T>(request: Request<T>) -> Request<T> {
    let (mut metadata, _, message) = request.into_parts();
    let hops = hops(&metadata) + 1;
    metadata.insert(FORWARDED, hops.into());
    Request::from_parts(metadata, Default::default(), message)
}

/// [`onward`] from node `me`, which becomes the request's [`VIA`] if the
/// client sent it here.
pub(crate) fn onward_from<T>(request: Request<T>, me: u64) -> Request<T> {
    let mut request = onward(request);
    if !request.metadata().contains_key(VIA) {
        request.metadata_mut().insert(VIA, me.into());
    }
    request
}

/// The node a forwarded request came in through, if it was forwarded.
pub(crate) fn via(metadata: &MetadataMap) -> Option<u64> {
    metadata.get(VIA)?.to_str().ok()?.parse().ok()
}

/// The database a session or operation name belongs to
/// (`.../databases/D/sessions/S`, `.../databases/D/operations/O`).
pub(crate) fn database_of(name: &str) -> &str {
    let end = name
        .find("/sessions/")
        .or_else(|| name.find("/operations/"));
    end.map_or(name, |at| &name[..at])
}

#[cfg(test)]
mod tests {
    use super::relayed;
    use tonic::{Code, Status};

    #[test]
    fn a_call_that_broke_on_the_way_is_relayed_as_unavailable() {
        // What tonic makes of a connection that dropped mid-call.
        let broke = Status::from_error(Box::new(std::io::Error::new(
            std::io::ErrorKind::ConnectionReset,
            "connection reset by peer",
        )));
        assert_eq!(broke.code(), Code::Unknown);
        let relayed = relayed::<()>(Err(broke)).unwrap_err();
        assert_eq!(relayed.code(), Code::Unavailable);
        assert!(
            relayed.message().contains("connection reset by peer"),
            "{}",
            relayed.message()
        );
    }

    #[test]
    fn the_other_nodes_answers_are_relayed_as_they_are() {
        for sent in [
            Status::unknown("an answer the other node sent"),
            Status::not_found("Database not found: d"),
            Status::aborted("Transaction was aborted."),
            Status::unavailable("node 2 leads this database now"),
        ] {
            let relayed = relayed::<()>(Err(sent.clone())).unwrap_err();
            assert_eq!(relayed.code(), sent.code());
            assert_eq!(relayed.message(), sent.message());
        }
        assert_eq!(relayed(Ok::<u32, Status>(7)).unwrap(), 7);
    }
}
