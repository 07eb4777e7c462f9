//! The peer port: how a node's Raft groups talk to their replicas on other
//! nodes.
//!
//! One gRPC service, `rowtree.peer.v1.Peer` (declared in `build.rs`), with
//! one method per Raft message: `AppendEntries`, `Vote`, `InstallSnapshot`
//! and `TransferLeader` (a leader handing its group to another voter). A request names its group and carries the message in
//! this crate's binary form ([`super::messages`]); gRPC only frames it.
//! So a node serves every group it holds on one port, and reaches each
//! other node over one HTTP/2 connection that all of its groups share
//! (a [`Peers`] per node: channels by node id, opened lazily and kept).
//!
//! ```text
//!  node 1                                     node 2
//!  Raft(group 7) ── GroupNetwork(7) ─┐        PeerPort ── Groups ─┬─ Raft(group 7)
//!  Raft(group 9) ── GroupNetwork(9) ─┴ Peers ══ HTTP/2 ══>        └─ Raft(group 9)
//! ```
//!
//! What crosses the port is bounded: a message larger than
//! [`MAX_PEER_MESSAGE`] is refused by both ends' codecs before it is
//! buffered whole, and a decoded message is checked as the log store checks
//! what it reads back (malformed bytes are an `INVALID_ARGUMENT`, never a
//! panic). A snapshot travels as one message for now, so a replica whose
//! image exceeds the bound cannot be copied this way; chunked snapshots
//! come with moving replicas (design §7).
//!
//! The port listens on TCP ([`PeerPort::start`]) or serves any stream of
//! connections ([`PeerPort::serve`]), and [`Peers`] dials over TCP or
//! through any connector ([`Peers::with_connector`]): the deterministic
//! simulator runs the same service over its simulated network. Both ends
//! ping over HTTP/2 every second and close a connection whose ping goes
//! unanswered, so that a connection that died without a word is replaced
//! rather than waited on.
//!
//! Failures map onto what openraft expects of a network: a peer that
//! cannot be reached (no connection, or the call timed out) is
//! `Unreachable`, so openraft backs off before trying it again; a peer
//! that answered with an error, or with bytes that do not decode, is a
//! `NetworkError`.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use futures_util::{Stream, StreamExt};
use openraft::error::{NetworkError, RPCError, ReplicationClosed, StreamingError, Unreachable};
use openraft::network::{RPCOption, RaftNetworkFactory, RaftNetworkV2};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, SnapshotResponse, TransferLeaderRequest,
    TransferLeaderResponse, VoteRequest, VoteResponse,
};
use openraft::BasicNode;
use parking_lot::{Mutex, RwLock};
use tonic::transport::{Channel, Endpoint};
use tonic::{Request, Response, Status};

use super::messages::{self, SnapshotOf};
use super::{GroupId, ReplicaMachine, TypeConfig, Vote};
use crate::error::DecodeError;
use crate::replica::{ImageView, SnapshotImage};

/// The generated service: server trait and router (`peer_server`), and
/// the client (`peer_client`) [`Peers`] uses.
#[allow(missing_docs, clippy::all)]
pub mod api {
    include!(concat!(env!("OUT_DIR"), "/rowtree.peer.v1.Peer.rs"));
}

use api::peer_client::PeerClient;
use api::peer_server::{Peer, PeerServer};

/// The largest message either end of the peer port sends or accepts.
pub const MAX_PEER_MESSAGE: usize = 64 << 20;

/// How long connecting to a peer may take before the call fails as
/// unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);

/// How often each end of a peer connection pings the other over HTTP/2,
/// and how long it waits for the answer before closing the connection. A
/// connection can die without a word (a peer's machine loses power, a
/// firewall forgets the flow, the network drops what was in flight); a
/// dead connection that nobody notices would hold a group's messages to
/// that peer forever, and the pings are how it is noticed. The next call
/// then opens a new one.
const KEEPALIVE: Duration = Duration::from_secs(1);

/// How long [`PeerPort::shutdown`] lets open connections finish.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(1);

/// A Raft group's running instance on this node.
pub type GroupRaft = openraft::Raft<TypeConfig, ReplicaMachine>;

/// One Raft message for one group.
#[derive(Clone, PartialEq, prost::Message)]
pub struct PeerRequest {
    /// The group the message is for.
    #[prost(uint64, tag = "1")]
    pub group: u64,
    /// The message in its binary form ([`super::messages`]).
    #[prost(bytes = "vec", tag = "2")]
    pub payload: Vec<u8>,
    /// The sender's cluster id, once it has one: a node refuses messages
    /// from another cluster's nodes (empty on either side: not checked,
    /// as for a node still joining).
    #[prost(string, tag = "3")]
    pub cluster: String,
}

/// The answer to a [`PeerRequest`], in its binary form.
#[derive(Clone, PartialEq, prost::Message)]
pub struct PeerReply {
    /// The response in its binary form ([`super::messages`]).
    #[prost(bytes = "vec", tag = "1")]
    pub payload: Vec<u8>,
}

/// The groups a node serves, by id: what its peer port dispatches to.
#[derive(Clone, Default)]
pub struct Groups {
    groups: Arc<RwLock<HashMap<GroupId, GroupRaft>>>,
    /// Whether the replica of a group here awaits an image
    /// ([`Groups::watch_image`]).
    images: Arc<RwLock<HashMap<GroupId, ImageView>>>,
    /// This node's cluster id (empty: not known yet, nothing checked).
    cluster: Arc<RwLock<String>>,
}

impl Groups {
    /// No groups yet.
    pub fn new() -> Groups {
        Groups::default()
    }

    /// Serves `raft` as group `group` (replacing an earlier instance).
    pub fn insert(&self, group: GroupId, raft: GroupRaft) {
        self.groups.write().insert(group, raft);
    }

    /// Stops serving `group`; messages for it are answered `NOT_FOUND`.
    pub fn remove(&self, group: GroupId) -> Option<GroupRaft> {
        self.images.write().remove(&group);
        self.groups.write().remove(&group)
    }

    /// Follows `view`, whether the replica of `group` here awaits an image
    /// ([`crate::Replica::create_for_image`]): while it does, entries from
    /// the start of the group's log are refused (`FAILED_PRECONDITION`),
    /// so its leader keeps failing to send them until it sends an image
    /// instead (it does once its own log is purged, which its node's
    /// replica placement sees to); and so are requests for its vote. A
    /// node placed in a group it once left starts with an empty log, its
    /// votes of then forgotten: a candidate whose log still counts it a
    /// voter (one that missed its removal) could otherwise win an election
    /// with its vote and overwrite what the group committed since. Once it
    /// installs an image of the group as it is now, its log is as new as
    /// the removal, and it votes for no such candidate.
    ///
    /// For the same reason an image older than the view's floor
    /// ([`ImageView::floor`]) is refused: a leader whose snapshot predates
    /// the node's removal (one deposed since, or elected since and not
    /// yet snapshotted again) would send an image that counts the node a
    /// voter, and once installed the node would vote again, in that old
    /// configuration.
    pub fn watch_image(&self, group: GroupId, view: ImageView) {
        self.images.write().insert(group, view);
    }

    /// The floor of the image `group`'s replica here awaits, if it awaits
    /// one.
    pub fn image_floor(&self, group: GroupId) -> Option<u64> {
        self.images
            .read()
            .get(&group)
            .filter(|v| v.awaits())
            .map(ImageView::floor)
    }

    /// Whether `group`'s replica here awaits an image.
    pub fn awaits_image(&self, group: GroupId) -> bool {
        self.images
            .read()
            .get(&group)
            .is_some_and(ImageView::awaits)
    }

    /// Sets the cluster id the messages must carry.
    pub fn set_cluster(&self, cluster: &str) {
        *self.cluster.write() = cluster.to_string();
    }

    /// The group a message is for, if this node holds it and the message
    /// comes from this node's cluster.
    fn for_message(&self, request: &PeerRequest) -> Result<GroupRaft, Status> {
        let ours = self.cluster.read();
        if !ours.is_empty() && !request.cluster.is_empty() && *ours != request.cluster {
            return Err(Status::failed_precondition(format!(
                "a message from a node of cluster {}; this node belongs to cluster {ours}",
                request.cluster
            )));
        }
        drop(ours);
        self.get(request.group)
    }

    fn get(&self, group: u64) -> Result<GroupRaft, Status> {
        self.groups
            .read()
            .get(&GroupId(group))
            .cloned()
            .ok_or_else(|| {
                Status::not_found(format!("this node holds no replica of group {group}"))
            })
    }
}

impl std::fmt::Debug for Groups {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut ids: Vec<GroupId> = self.groups.read().keys().copied().collect();
        ids.sort();
        f.debug_struct("Groups").field("ids", &ids).finish()
    }
}

fn bad_message(e: DecodeError) -> Status {
    Status::invalid_argument(e.to_string())
}

fn raft_failed(e: impl std::fmt::Display) -> Status {
    Status::unavailable(format!("the group cannot take the message: {e}"))
}

/// The server side of the peer port.
struct PeerService {
    groups: Groups,
}

#[tonic::async_trait]
impl Peer for PeerService {
    async fn append_entries(
        &self,
        request: Request<PeerRequest>,
    ) -> Result<Response<PeerReply>, Status> {
        let request = request.into_inner();
        let raft = self.groups.for_message(&request)?;
        let rpc = messages::decode_append(&request.payload).map_err(bad_message)?;
        if rpc.prev_log_id.is_none()
            && !rpc.entries.is_empty()
            && self.groups.awaits_image(GroupId(request.group))
        {
            return Err(Status::failed_precondition(format!(
                "group {}'s replica here was made empty for an image and takes no entry from \
                 the start of the group's log before it installs one",
                request.group
            )));
        }
        let response = raft.append_entries(rpc).await.map_err(raft_failed)?;
        Ok(Response::new(PeerReply {
            payload: messages::encode_append_response(&response),
        }))
    }

    async fn vote(&self, request: Request<PeerRequest>) -> Result<Response<PeerReply>, Status> {
        let request = request.into_inner();
        let raft = self.groups.for_message(&request)?;
        let rpc = messages::decode_vote_request(&request.payload).map_err(bad_message)?;
        if self.groups.awaits_image(GroupId(request.group)) {
            return Err(Status::failed_precondition(format!(
                "group {}'s replica here was made empty for an image and votes in no \
                 election before it installs one",
                request.group
            )));
        }
        let response = raft.vote(rpc).await.map_err(raft_failed)?;
        Ok(Response::new(PeerReply {
            payload: messages::encode_vote_response(&response),
        }))
    }

    async fn install_snapshot(
        &self,
        request: Request<PeerRequest>,
    ) -> Result<Response<PeerReply>, Status> {
        let request = request.into_inner();
        let raft = self.groups.for_message(&request)?;
        let (vote, snapshot) = messages::decode_snapshot(&request.payload).map_err(bad_message)?;
        let index = snapshot.meta.last_log_id.map_or(0, |id| id.index);
        if let Some(floor) = self
            .groups
            .image_floor(GroupId(request.group))
            .filter(|floor| index < *floor)
        {
            return Err(Status::failed_precondition(format!(
                "group {}'s replica here awaits an image at least as new as index {floor},                  which the group had committed when it was placed here; this one ends at                  index {index}, and may count this node a voter from before it left the group",
                request.group
            )));
        }
        let response = raft
            .install_full_snapshot(vote, snapshot)
            .await
            .map_err(raft_failed)?;
        Ok(Response::new(PeerReply {
            payload: messages::encode_snapshot_response(&response),
        }))
    }

    async fn transfer_leader(
        &self,
        request: Request<PeerRequest>,
    ) -> Result<Response<PeerReply>, Status> {
        let request = request.into_inner();
        let raft = self.groups.for_message(&request)?;
        let rpc = messages::decode_transfer(&request.payload).map_err(bad_message)?;
        let response = raft
            .handle_transfer_leader(rpc)
            .await
            .map_err(raft_failed)?;
        Ok(Response::new(PeerReply {
            payload: messages::encode_transfer_response(&response),
        }))
    }
}

/// A node's peer port, serving its [`Groups`] until shut down (or
/// dropped).
pub struct PeerPort {
    /// The address it listens on (the port is chosen when asked for 0).
    pub local_addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl PeerPort {
    /// Listens on `addr` and serves `groups` there, on the current tokio
    /// runtime.
    ///
    /// Errors: the address cannot be bound.
    pub async fn start(addr: SocketAddr, groups: Groups) -> std::io::Result<PeerPort> {
        PeerPort::start_routes(addr, PeerPort::routes(groups)).await
    }

    /// The Raft service over `groups`, as routes to which a node adds its
    /// own service ([`crate::node`]).
    pub fn routes(groups: Groups) -> tonic::service::Routes {
        tonic::service::Routes::new(
            PeerServer::new(PeerService { groups })
                .max_decoding_message_size(MAX_PEER_MESSAGE)
                .max_encoding_message_size(MAX_PEER_MESSAGE),
        )
    }

    /// Listens on `addr` and serves `routes` there (the Raft service and
    /// whatever else the node adds), on the current tokio runtime.
    ///
    /// Errors: the address cannot be bound.
    pub async fn start_routes(
        addr: SocketAddr,
        routes: tonic::service::Routes,
    ) -> std::io::Result<PeerPort> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let local_addr = listener.local_addr()?;
        let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener).map(|stream| {
            let stream = stream?;
            stream.set_nodelay(true)?;
            Ok::<_, std::io::Error>(stream)
        });
        Ok(PeerPort::serve_routes(local_addr, incoming, routes))
    }

    /// Serves `groups` on the connections `incoming` yields, on the current
    /// tokio runtime; `local_addr` is only reported. [`PeerPort::start`]
    /// passes a TCP listener's; the simulator passes its simulated
    /// network's.
    pub fn serve<I, IO, E>(local_addr: SocketAddr, incoming: I, groups: Groups) -> PeerPort
    where
        I: Stream<Item = Result<IO, E>> + Send + 'static,
        IO: tokio::io::AsyncRead
            + tokio::io::AsyncWrite
            + tonic::transport::server::Connected
            + Unpin
            + Send
            + 'static,
        IO::ConnectInfo: Clone + Send + Sync + 'static,
        E: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        PeerPort::serve_routes(local_addr, incoming, PeerPort::routes(groups))
    }

    /// [`PeerPort::serve`] with any routes.
    pub fn serve_routes<I, IO, E>(
        local_addr: SocketAddr,
        incoming: I,
        routes: tonic::service::Routes,
    ) -> PeerPort
    where
        I: Stream<Item = Result<IO, E>> + Send + 'static,
        IO: tokio::io::AsyncRead
            + tokio::io::AsyncWrite
            + tonic::transport::server::Connected
            + Unpin
            + Send
            + 'static,
        IO::ConnectInfo: Clone + Send + Sync + 'static,
        E: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let served = tonic::transport::Server::builder()
                .http2_keepalive_interval(Some(KEEPALIVE))
                .http2_keepalive_timeout(Some(KEEPALIVE))
                .add_routes(routes)
                .serve_with_incoming_shutdown(incoming, async {
                    let _ = stopped.await;
                })
                .await;
            if let Err(e) = served {
                eprintln!("rowtree: the peer port stopped: {e}");
            }
        });
        PeerPort {
            local_addr,
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// Stops listening and tells the open connections to close (HTTP/2
    /// GOAWAY: what they carry finishes, nothing new starts); returns once
    /// they have closed, or after [`SHUTDOWN_GRACE`], when the server is
    /// stopped without waiting further.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(mut task) = self.task.take() {
            if tokio::time::timeout(SHUTDOWN_GRACE, &mut task)
                .await
                .is_err()
            {
                task.abort();
                let _ = task.await;
            }
        }
    }
}

impl Drop for PeerPort {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

/// Opens the channel to one peer from its endpoint (address, timeouts
/// set): lazily, so that nothing is dialled until the first call.
pub type Connect = Arc<dyn Fn(Endpoint) -> Channel + Send + Sync>;

/// Addresses a node dials in place of others (`rowtree serve --route
/// FROM=TO`): where another node announced `FROM`, this one connects to
/// `TO`. For networks where the address a node is known by is not the one
/// every other node reaches it at (a tunnel, a NAT, a proxy on each link as
/// the partition checks put there). Applies to peer addresses and to the
/// Spanner addresses requests are forwarded to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Routes(Arc<BTreeMap<String, String>>);

impl Routes {
    /// The routes in `specs`, each `FROM=TO` (both `HOST:PORT`).
    pub fn parse(specs: &[String]) -> Result<Routes, String> {
        let mut routes = BTreeMap::new();
        for spec in specs {
            let Some((from, to)) = spec.split_once('=') else {
                return Err(format!("route {spec:?} is not FROM=TO"));
            };
            for addr in [from, to] {
                let ok = addr
                    .rsplit_once(':')
                    .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok());
                if !ok {
                    return Err(format!("route {spec:?}: {addr:?} is not HOST:PORT"));
                }
            }
            if routes.insert(from.to_string(), to.to_string()).is_some() {
                return Err(format!("{from} is routed twice"));
            }
        }
        Ok(Routes(Arc::new(routes)))
    }

    /// The address to dial for `addr`.
    pub fn dial<'a>(&'a self, addr: &'a str) -> &'a str {
        self.0.get(addr).map_or(addr, String::as_str)
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A node's connections to its peers, shared by all of its groups: one
/// channel (one HTTP/2 connection) per peer address.
#[derive(Clone)]
pub struct Peers {
    channels: Arc<Mutex<HashMap<String, Channel>>>,
    connect: Connect,
    routes: Routes,
    /// The cluster id every message carries (empty until known).
    cluster: Arc<RwLock<String>>,
}

impl Default for Peers {
    fn default() -> Peers {
        Peers::with_connector(Arc::new(|endpoint: Endpoint| {
            endpoint.tcp_nodelay(true).connect_lazy()
        }))
    }
}

impl Peers {
    /// No connections yet; each is opened over TCP on first use.
    pub fn new() -> Peers {
        Peers::default()
    }

    /// No connections yet; each is opened by `connect` on first use (the
    /// simulator's connects over its simulated network).
    pub fn with_connector(connect: Connect) -> Peers {
        Peers {
            channels: Arc::default(),
            connect,
            routes: Routes::default(),
            cluster: Arc::default(),
        }
    }

    /// These peers, dialled through `routes`.
    pub fn routed(mut self, routes: Routes) -> Peers {
        self.routes = routes;
        self
    }

    /// The routes this node dials through.
    pub fn routes(&self) -> &Routes {
        &self.routes
    }

    /// Sets the cluster id every message from now on carries.
    pub fn set_cluster(&self, cluster: &str) {
        *self.cluster.write() = cluster.to_string();
    }

    /// The network of one group, for its `Raft` instance.
    pub fn group(&self, group: GroupId) -> GroupNetwork {
        GroupNetwork {
            group,
            peers: self.clone(),
        }
    }

    /// The channel to the peer port at `addr` (`host:port`, dialled
    /// through the node's [`Routes`]): the one open already, or a new one
    /// (dialled on first use). Every group and the node's own calls share
    /// it.
    pub fn channel(&self, addr: &str) -> Result<Channel, tonic::transport::Error> {
        let mut channels = self.channels.lock();
        if let Some(channel) = channels.get(addr) {
            return Ok(channel.clone());
        }
        let endpoint = Endpoint::from_shared(format!("http://{}", self.routes.dial(addr)))?
            .connect_timeout(CONNECT_TIMEOUT)
            .http2_keep_alive_interval(KEEPALIVE)
            .keep_alive_timeout(KEEPALIVE)
            .keep_alive_while_idle(true);
        let channel = (self.connect)(endpoint);
        channels.insert(addr.to_string(), channel.clone());
        Ok(channel)
    }

    fn client(&self, addr: &str) -> Result<PeerClient<Channel>, Unreachable<TypeConfig>> {
        let channel = self.channel(addr).map_err(|e| Unreachable::new(&e))?;
        Ok(PeerClient::new(channel)
            .max_decoding_message_size(MAX_PEER_MESSAGE)
            .max_encoding_message_size(MAX_PEER_MESSAGE))
    }
}

impl std::fmt::Debug for Peers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut addrs: Vec<String> = self.channels.lock().keys().cloned().collect();
        addrs.sort();
        f.debug_struct("Peers").field("addrs", &addrs).finish()
    }
}

/// One group's view of the network: openraft's network factory.
#[derive(Clone, Debug)]
pub struct GroupNetwork {
    group: GroupId,
    peers: Peers,
}

impl RaftNetworkFactory<TypeConfig> for GroupNetwork {
    type Network = PeerConnection;

    async fn new_client(&mut self, target: u64, node: &BasicNode) -> PeerConnection {
        PeerConnection {
            group: self.group,
            target,
            addr: node.addr.clone(),
            peers: self.peers.clone(),
        }
    }
}

/// What went wrong with one call, before it is cast into the error type
/// of the openraft method that made it.
enum CallError {
    Unreachable(Unreachable<TypeConfig>),
    Network(NetworkError<TypeConfig>),
}

impl From<CallError> for RPCError<TypeConfig> {
    fn from(e: CallError) -> Self {
        match e {
            CallError::Unreachable(e) => RPCError::Unreachable(e),
            CallError::Network(e) => RPCError::Network(e),
        }
    }
}

impl From<CallError> for StreamingError<TypeConfig> {
    fn from(e: CallError) -> Self {
        match e {
            CallError::Unreachable(e) => StreamingError::Unreachable(e),
            CallError::Network(e) => StreamingError::Network(e),
        }
    }
}

/// Which method a call goes to.
#[derive(Clone, Copy)]
enum Method {
    Append,
    Vote,
    Snapshot,
    Transfer,
}

/// A group's connection to one of its peers.
pub struct PeerConnection {
    group: GroupId,
    target: u64,
    addr: String,
    peers: Peers,
}

impl PeerConnection {
    /// Sends one message and returns the reply's bytes.
    async fn call(
        &self,
        method: Method,
        payload: Vec<u8>,
        timeout: Duration,
    ) -> Result<Vec<u8>, CallError> {
        let mut client = self
            .peers
            .client(&self.addr)
            .map_err(CallError::Unreachable)?;
        let mut request = Request::new(PeerRequest {
            group: self.group.0,
            payload,
            cluster: self.peers.cluster.read().clone(),
        });
        request.set_timeout(timeout);
        let reply = match method {
            Method::Append => client.append_entries(request).await,
            Method::Vote => client.vote(request).await,
            Method::Snapshot => client.install_snapshot(request).await,
            Method::Transfer => client.transfer_leader(request).await,
        };
        match reply {
            Ok(reply) => Ok(reply.into_inner().payload),
            // No connection, or no answer in time: openraft backs off.
            Err(status)
                if matches!(
                    status.code(),
                    tonic::Code::Unavailable | tonic::Code::DeadlineExceeded
                ) =>
            {
                Err(CallError::Unreachable(Unreachable::new(&PeerFailure {
                    target: self.target,
                    status,
                })))
            }
            Err(status) => Err(CallError::Network(NetworkError::new(&PeerFailure {
                target: self.target,
                status,
            }))),
        }
    }

    fn undecodable(&self, e: DecodeError) -> CallError {
        CallError::Network(NetworkError::new(&std::io::Error::other(format!(
            "node {} answered with a malformed message: {e}",
            self.target
        ))))
    }
}

/// A call to a peer that failed, with the peer's id.
#[derive(Debug)]
struct PeerFailure {
    target: u64,
    status: Status,
}

impl std::fmt::Display for PeerFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "node {}: {:?}: {}",
            self.target,
            self.status.code(),
            self.status.message()
        )
    }
}

impl std::error::Error for PeerFailure {}

impl RaftNetworkV2<TypeConfig> for PeerConnection {
    type SnapshotData = SnapshotImage;

    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<AppendEntriesResponse<TypeConfig>, RPCError<TypeConfig>> {
        let reply = self
            .call(
                Method::Append,
                messages::encode_append(&rpc),
                option.hard_ttl(),
            )
            .await?;
        messages::decode_append_response(&reply).map_err(|e| self.undecodable(e).into())
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<VoteResponse<TypeConfig>, RPCError<TypeConfig>> {
        let reply = self
            .call(
                Method::Vote,
                messages::encode_vote_request(&rpc),
                option.hard_ttl(),
            )
            .await?;
        messages::decode_vote_response(&reply).map_err(|e| self.undecodable(e).into())
    }

    async fn transfer_leader(
        &mut self,
        rpc: TransferLeaderRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<TransferLeaderResponse<TypeConfig>, RPCError<TypeConfig>> {
        let reply = self
            .call(
                Method::Transfer,
                messages::encode_transfer(&rpc),
                option.hard_ttl(),
            )
            .await?;
        messages::decode_transfer_response(&reply).map_err(|e| self.undecodable(e).into())
    }

    async fn full_snapshot(
        &mut self,
        vote: Vote,
        snapshot: SnapshotOf,
        cancel: impl Future<Output = ReplicationClosed> + openraft::OptionalSend + 'static,
        option: RPCOption,
    ) -> Result<SnapshotResponse<TypeConfig>, StreamingError<TypeConfig>> {
        let payload = messages::encode_snapshot(&vote, &snapshot);
        let call = self.call(Method::Snapshot, payload, option.hard_ttl());
        tokio::select! {
            reply = call => {
                let reply = reply?;
                messages::decode_snapshot_response(&reply).map_err(|e| self.undecodable(e).into())
            }
            closed = cancel => Err(StreamingError::Closed(closed)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Routes;

    #[test]
    fn routes_send_an_address_elsewhere_and_leave_the_rest() {
        let routes = Routes::parse(&["127.0.0.1:9031=127.0.0.1:40001".to_string()]).unwrap();
        assert_eq!(routes.dial("127.0.0.1:9031"), "127.0.0.1:40001");
        assert_eq!(routes.dial("127.0.0.1:9032"), "127.0.0.1:9032");
        assert!(Routes::parse(&[]).unwrap().is_empty());
        for (bad, why) in [
            ("127.0.0.1:9031", "is not FROM=TO"),
            ("127.0.0.1=127.0.0.1:1", "is not HOST:PORT"),
            ("h:1=:2", "is not HOST:PORT"),
            ("h:1=h:99999", "is not HOST:PORT"),
        ] {
            let err = Routes::parse(&[bad.to_string()]).unwrap_err();
            assert!(err.contains(why), "{bad}: {err}");
        }
        let twice = ["a:1=b:2".to_string(), "a:1=c:3".to_string()];
        assert!(Routes::parse(&twice).unwrap_err().contains("routed twice"));
    }
}
