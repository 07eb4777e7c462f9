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
//! answer, streams included. A forwarded request carries [`FORWARDED`]
//! and is never forwarded again (one hop): a node that stopped leading
//! meanwhile answers it itself, with UNAVAILABLE naming the leader, and the
//! client retries. So sessions live on the node that led their database
//! when they were made; after a leader change the new leader does not know
//! them and answers NOT_FOUND, and the client makes new ones.
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

/// The metadata key a forwarded request carries.
pub const FORWARDED: &str = "x-rowtree-forwarded";

/// How long dialling another node may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// Where a cluster node's requests go (see the module docs).
pub(crate) struct Forwarder {
    hosting: Hosting,
    registry: Arc<Registry>,
    /// One channel per node address, dialled lazily and kept.
    channels: Mutex<HashMap<String, Channel>>,
}

impl Forwarder {
    pub(crate) fn new(hosting: Hosting, registry: Arc<Registry>) -> Forwarder {
        Forwarder {
            hosting,
            registry,
            channels: Mutex::new(HashMap::new()),
        }
    }

    /// A channel to the node a request for `database` goes to, if not
    /// this one: the leader of the database's group, when this node knows
    /// it and it is another node. `None` for a forwarded request, a
    /// database this node does not know (answered here: NOT_FOUND), or no
    /// known leader.
    pub(crate) fn target(
        &self,
        database: &str,
        metadata: &MetadataMap,
    ) -> Result<Option<Channel>, Status> {
        if metadata.contains_key(FORWARDED) {
            return Ok(None);
        }
        let Ok(hosted) = self.registry.database(database) else {
            return Ok(None);
        };
        let Some(group) = &hosted.meta.group else {
            return Ok(None);
        };
        let leader = match self.hosting.leader_of(group.id) {
            Some(leader) if leader != self.hosting.node_id() => leader,
            _ => return Ok(None),
        };
        let addr = self.hosting.client_addr(leader)?.ok_or_else(|| {
            Status::unavailable(format!(
                "node {leader} leads {database}, but has not said where it serves yet; try again"
            ))
        })?;
        let mut channels = self.channels.lock();
        if let Some(channel) = channels.get(&addr) {
            return Ok(Some(channel.clone()));
        }
        let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
            .map_err(|e| Status::internal(format!("node {leader}'s address {addr:?}: {e}")))?
            .connect_timeout(CONNECT_TIMEOUT)
            .tcp_nodelay(true)
            .connect_lazy();
        channels.insert(addr, channel.clone());
        Ok(Some(channel))
    }
}

/// `request` as it is sent on: the client's metadata (its deadline
/// included) and [`FORWARDED`].
pub(crate) fn onward<T>(request: Request<T>) -> Request<T> {
    let (mut metadata, _, message) = request.into_parts();
    metadata.insert(FORWARDED, tonic::metadata::MetadataValue::from_static("1"));
    Request::from_parts(metadata, Default::default(), message)
}

/// The database a session or operation name belongs to
/// (`.../databases/D/sessions/S`, `.../databases/D/operations/O`).
pub(crate) fn database_of(name: &str) -> &str {
    let end = name
        .find("/sessions/")
        .or_else(|| name.find("/operations/"));
    end.map_or(name, |at| &name[..at])
}
