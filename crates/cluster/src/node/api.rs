//! The node's own service on the peer port, `rowtree.peer.v1.Node`
//! (declared in `build.rs`): `Join`, `Status`, `Remove`, `Clock`,
//! `Announce`, `ReplaceRegistry`, `HostSplit`, `SplitHistory`, `Locate`,
//! `ReadRange` and `AddSplitPoint`; and, for transactions that reach
//! splits led by other nodes (`node::participant`), `LockKeys`,
//! `PrepareKeys`, `ResolveKeys`, `ReleaseKeys` and `Settle`; with
//! their messages as plain prost structs, and the calls a client makes.

use std::time::Duration;

use tonic::transport::Channel;

use super::status::ClusterStatus;

/// The generated service: server trait and router (`node_server`), and
/// the client (`node_client`).
#[allow(missing_docs, clippy::all)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/rowtree.peer.v1.Node.rs"));
}

pub use generated::node_client::NodeClient;
pub use generated::node_server::{Node as NodeService, NodeServer};

/// A node asks to join the cluster.
#[derive(Clone, PartialEq, prost::Message)]
pub struct JoinRequest {
    /// The cluster the node belongs to already (its `node.json`), or empty
    /// on its first join.
    #[prost(string, tag = "1")]
    pub cluster_id: String,
    #[prost(uint64, tag = "2")]
    pub node_id: u64,
    /// Where other nodes reach its peer port.
    #[prost(string, tag = "3")]
    pub peer_addr: String,
    /// Set by a node that forwards the request to the leader, so that a
    /// request travels at most one hop.
    #[prost(bool, tag = "4")]
    pub forwarded: bool,
}

/// The placement leader accepted the node.
#[derive(Clone, PartialEq, prost::Message)]
pub struct JoinReply {
    #[prost(string, tag = "1")]
    pub cluster_id: String,
    /// The placement leader that accepted it.
    #[prost(uint64, tag = "2")]
    pub leader: u64,
}

/// `rowtree cluster status` asks.
#[derive(Clone, PartialEq, prost::Message)]
pub struct StatusRequest {
    /// As in [`JoinRequest::forwarded`].
    #[prost(bool, tag = "1")]
    pub forwarded: bool,
    /// The placement leader asks each node for the database groups it
    /// holds: answer from this node's own replicas, asking no one.
    #[prost(bool, tag = "2")]
    pub groups_only: bool,
}

/// The answer: a [`ClusterStatus`] as JSON.
#[derive(Clone, PartialEq, prost::Message)]
pub struct StatusReply {
    #[prost(string, tag = "1")]
    pub json: String,
}

/// `rowtree cluster remove` asks to take a node out of the cluster.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RemoveRequest {
    #[prost(uint64, tag = "1")]
    pub node_id: u64,
    /// As in [`JoinRequest::forwarded`].
    #[prost(bool, tag = "2")]
    pub forwarded: bool,
}

/// The node is out: no longer a member of the placement group, its record
/// `removed`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RemoveReply {
    /// The placement leader that removed it.
    #[prost(uint64, tag = "1")]
    pub leader: u64,
}

/// The clock heartbeat: another node asks for this node's clock.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ClockRequest {
    /// The asking node.
    #[prost(uint64, tag = "1")]
    pub sender: u64,
    /// The asking node is stopping on purpose: it sends one round of
    /// heartbeats as it begins to stop, so that every node knows at once
    /// rather than at its own next heartbeat, which a quick restart can
    /// fall between.
    #[prost(bool, tag = "2")]
    pub stopping: bool,
    /// When the asking node's process started (its wall clock,
    /// microseconds since the Unix epoch; 0 from a node that does not
    /// say), so that a stopping mark names the process that set it.
    #[prost(uint64, tag = "3")]
    pub started_micros: u64,
}

/// This node's wall clock when it answered, and whether it is stopping.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ClockReply {
    /// Microseconds since the Unix epoch.
    #[prost(uint64, tag = "1")]
    pub micros: u64,
    /// The node is stopping on purpose (it began to hand its groups over):
    /// send it no more requests, and end what its clients left idle.
    #[prost(bool, tag = "2")]
    pub stopping: bool,
    /// When this node's process started, microseconds since the Unix
    /// epoch: a node that answers with a later start than before was
    /// restarted in between, however quickly.
    #[prost(uint64, tag = "3")]
    pub started_micros: u64,
    /// The node records the outcome of a commit a gateway tagged, and
    /// refuses to commit it past its deadline (see the server's
    /// `spanner/outcomes.rs`): a gateway tags only the commits it sends to
    /// such a node, so a node of an older version is never asked to settle
    /// an outcome it did not record.
    #[prost(bool, tag = "4")]
    pub settles_outcomes: bool,
    /// The node's utilization: the share of a node the splits it leads
    /// used lately (`node::leases`). Absent from an older node: zero.
    #[prost(double, tag = "5")]
    pub utilization: f64,
    /// The members this node has not heard from lately (they did not
    /// answer its own heartbeats), each with how long: a database's leader
    /// replaces a silent member only if a majority of the other members
    /// find it silent too, not when only the link between the leader and
    /// it is broken.
    #[prost(message, repeated, tag = "6")]
    pub silent: Vec<SilentPeer>,
    /// The node reports silent peers ([`ClockReply::silent`]): an empty
    /// list from it means it hears every member. An older node does not
    /// say, and defers to the leader's view.
    #[prost(bool, tag = "7")]
    pub reports_silence: bool,
    /// The asking node is recorded as removed from the cluster in this
    /// node's copy of the placement group. The leader may take a removed
    /// node out of the group before that node's own copy has the record
    /// (a learner is dropped at once), and this is how it learns then.
    #[prost(bool, tag = "8")]
    pub removed: bool,
}

/// A member a node has not heard from lately ([`ClockReply::silent`]).
#[derive(Clone, PartialEq, prost::Message)]
pub struct SilentPeer {
    #[prost(uint64, tag = "1")]
    pub node_id: u64,
    /// How long it has been silent, in milliseconds.
    #[prost(uint64, tag = "2")]
    pub silent_ms: u64,
}

/// A gateway replaces the registry's document (compare and set): the
/// placement leader stores it only if the stored version is still the one
/// the gateway read, and answers ABORTED otherwise.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RegistryRequest {
    /// The version the new document was made from.
    #[prost(uint64, tag = "1")]
    pub expected_version: u64,
    #[prost(bytes = "vec", tag = "2")]
    pub document: Vec<u8>,
    /// As in [`JoinRequest::forwarded`].
    #[prost(bool, tag = "3")]
    pub forwarded: bool,
}

/// The document is stored, under this version.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RegistryReply {
    #[prost(uint64, tag = "1")]
    pub version: u64,
}

/// A node tells where it serves Spanner's API, so that other nodes can
/// forward requests to it.
#[derive(Clone, PartialEq, prost::Message)]
pub struct AnnounceRequest {
    #[prost(uint64, tag = "1")]
    pub node_id: u64,
    /// `host:port` of its Spanner API.
    #[prost(string, tag = "2")]
    pub client_addr: String,
    /// As in [`JoinRequest::forwarded`].
    #[prost(bool, tag = "3")]
    pub forwarded: bool,
}

/// The address is recorded.
#[derive(Clone, PartialEq, prost::Message)]
pub struct AnnounceReply {}

/// A database's leader asks a node it is about to add to the group of one
/// of the database's splits (other than the first, which every replica
/// opens with the database) to hold a replica of that split: an empty one,
/// which the group's leader then fills with a snapshot image.
#[derive(Clone, PartialEq, prost::Message)]
pub struct HostSplitRequest {
    /// The database's group in the registry.
    #[prost(uint64, tag = "1")]
    pub database: u64,
    /// The split's id.
    #[prost(uint64, tag = "2")]
    pub split: u64,
    /// Its range, as the leader's replica holds it.
    #[prost(bytes = "vec", tag = "3")]
    pub start: Vec<u8>,
    #[prost(bytes = "vec", optional, tag = "4")]
    pub limit: Option<Vec<u8>>,
    #[prost(uint64, tag = "5")]
    pub epoch: u64,
    /// An index the group had committed when the leader asked (its
    /// applied index): the replica refuses an image older than that
    /// ([`crate::ImageView::floor`]).
    #[prost(uint64, tag = "6")]
    pub floor: u64,
}

/// Whether the node holds the replica now; if not, why (it does not serve
/// the database yet, or one of its replicas still covers the range until
/// it applies the split that cut it off).
#[derive(Clone, PartialEq, prost::Message)]
pub struct HostSplitReply {
    #[prost(bool, tag = "1")]
    pub hosted: bool,
    #[prost(string, tag = "2")]
    pub why: String,
}

/// The node serving a database's sessions asks another node for the split
/// load history of the requests that node served for the database (the
/// splits it led), to answer `SPANNER_SYS.SPLIT_STATS_TOP_*` and the key
/// visualizer for the whole cluster.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SplitHistoryRequest {
    /// The database's group in the registry.
    #[prost(uint64, tag = "1")]
    pub database: u64,
}

/// The node's history of the database, as `rowtree_kv::LoadHistory`
/// encodes it for its data directory; empty if the node does not serve
/// the database.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SplitHistoryReply {
    #[prost(bytes = "vec", tag = "1")]
    pub history: Vec<u8>,
}

/// Which group of a database holds a key: asked of the nodes serving the
/// database by one that holds no replica of it (`Locate`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct LocateRequest {
    /// The database, by its registry group.
    #[prost(uint64, tag = "1")]
    pub database: u64,
    #[prost(bytes = "vec", tag = "2")]
    pub key: Vec<u8>,
    /// The group holding the keys just below `key` instead (what a reverse
    /// scan ending at `key` reads first).
    #[prost(bool, tag = "3")]
    pub before: bool,
}

/// The answer: the split this node holds that covers the key, if any.
#[derive(Clone, PartialEq, prost::Message)]
pub struct LocateReply {
    /// Whether this node holds a replica covering the key; if not, the
    /// rest is empty.
    #[prost(bool, tag = "1")]
    pub found: bool,
    #[prost(uint64, tag = "2")]
    pub split: u64,
    #[prost(bytes = "vec", tag = "3")]
    pub start: Vec<u8>,
    #[prost(bytes = "vec", optional, tag = "4")]
    pub limit: Option<Vec<u8>>,
    /// The group's voters, as this node's replica knows them.
    #[prost(uint64, repeated, tag = "5")]
    pub voters: Vec<u64>,
    /// Its leader as this node knows it (0: none known).
    #[prost(uint64, tag = "6")]
    pub leader: u64,
    /// Its learners (members sent the log that do not vote yet).
    #[prost(uint64, repeated, tag = "7")]
    pub learners: Vec<u64>,
    /// Whether the replica here was made empty for an image of the split
    /// and has not installed one yet.
    #[prost(bool, tag = "8")]
    pub awaits_image: bool,
    /// The log id (term, index) of the last entry this node's replica
    /// applied (zeros: none): an answer from a node that applied less than
    /// the asker may be stale (a leader cut off that has not heard of the
    /// next one).
    #[prost(uint64, tag = "9")]
    pub applied_term: u64,
    #[prost(uint64, tag = "10")]
    pub applied_index: u64,
}

/// Rows a node holds, read at a timestamp for a node that holds no replica
/// of them (`ReadRange`): the range must lie within the splits this node
/// holds.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ReadRangeRequest {
    /// The database, by its registry group.
    #[prost(uint64, tag = "1")]
    pub database: u64,
    #[prost(bytes = "vec", tag = "2")]
    pub start: Vec<u8>,
    /// Whether `start` itself is excluded.
    #[prost(bool, tag = "3")]
    pub start_excluded: bool,
    /// No end: to the end of the key space.
    #[prost(bytes = "vec", optional, tag = "4")]
    pub end: Option<Vec<u8>>,
    /// Whether `end` itself is included.
    #[prost(bool, tag = "5")]
    pub end_included: bool,
    #[prost(uint64, tag = "6")]
    pub ts: u64,
    #[prost(bool, tag = "7")]
    pub reverse: bool,
    /// At most this many rows (the node caps it at [`MAX_READ_ROWS`]).
    #[prost(uint64, tag = "8")]
    pub max_rows: u64,
    /// Served only by a node leading every split of the range (a read
    /// sent to a split's leader); any other node refuses it at once with
    /// FAILED_PRECONDITION rather than wait for its replica to reach the
    /// timestamp.
    #[prost(bool, tag = "9")]
    pub led_only: bool,
}

/// One batch of rows, in the read's order.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ReadRangeReply {
    #[prost(bytes = "vec", repeated, tag = "1")]
    pub keys: Vec<Vec<u8>>,
    #[prost(bytes = "vec", repeated, tag = "2")]
    pub values: Vec<Vec<u8>>,
    /// The range has more rows after the last one returned (the batch
    /// stopped at its row or byte limit).
    #[prost(bool, tag = "3")]
    pub more: bool,
}

/// A manual split point a client asked for, sent by the node that took the
/// request (the leader of the database's first split) to the node leading
/// the split it falls in (`AddSplitPoint`): that node adds it to its own
/// split manager, which cuts its group there and keeps the boundary until
/// the expiry.
#[derive(Clone, PartialEq, prost::Message)]
pub struct AddSplitPointRequest {
    /// The database, by its registry group.
    #[prost(uint64, tag = "1")]
    pub database: u64,
    #[prost(bytes = "vec", tag = "2")]
    pub key: Vec<u8>,
    /// Kept until then (nanoseconds since the Unix epoch).
    #[prost(uint64, tag = "3")]
    pub expires_at: u64,
}

/// The answer: whether `key` is a boundary of the node's groups now.
#[derive(Clone, PartialEq, prost::Message)]
pub struct AddSplitPointReply {
    #[prost(bool, tag = "1")]
    pub made: bool,
}

/// A transaction run by another node takes a lock on keys this node
/// leads (`LockKeys`): a key, or a range, shared or exclusive, kept for the
/// transaction until it is resolved or released here.
#[derive(Clone, PartialEq, prost::Message)]
pub struct LockKeysRequest {
    /// The database, by its registry group.
    #[prost(uint64, tag = "1")]
    pub database: u64,
    /// The transaction's id, 16 bytes, big-endian.
    #[prost(bytes = "vec", tag = "2")]
    pub txn: Vec<u8>,
    /// Its wound-wait priority (smaller is older).
    #[prost(uint64, tag = "3")]
    pub priority: u64,
    #[prost(bytes = "vec", tag = "4")]
    pub start: Vec<u8>,
    /// The range's end (none: to the end of the key space); unused for a
    /// key.
    #[prost(bytes = "vec", optional, tag = "5")]
    pub end: Option<Vec<u8>>,
    /// The lock is on the key `start` alone.
    #[prost(bool, tag = "6")]
    pub point: bool,
    #[prost(bool, tag = "7")]
    pub exclusive: bool,
    /// The node running the transaction (0: not said). Its locks here are
    /// let go once that node's process is gone or stays silent
    /// (`node::participant`).
    #[prost(uint64, tag = "8")]
    pub node: u64,
    /// The transaction already took a lock here, as its node knows: if
    /// this node holds none for it any more (they were let go), the call
    /// is refused ABORTED instead of locking afresh, since what the
    /// transaction read under the lost locks may have changed.
    #[prost(bool, tag = "9")]
    pub holds: bool,
}

/// An answer with nothing to say but that the call was done.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TxnReply {}

/// The first phase of a two-phase commit at a participant (`PrepareKeys`):
/// the transaction's writes to the splits this node leads, whose keys it
/// locked here.
#[derive(Clone, PartialEq, prost::Message)]
pub struct PrepareKeysRequest {
    #[prost(uint64, tag = "1")]
    pub database: u64,
    #[prost(bytes = "vec", tag = "2")]
    pub txn: Vec<u8>,
    /// The split whose group decides (the database's first).
    #[prost(uint64, tag = "3")]
    pub coordinator: u64,
    /// The splits the sender knows the transaction writes (this node adds
    /// its own).
    #[prost(uint64, repeated, tag = "4")]
    pub participants: Vec<u64>,
    #[prost(bytes = "vec", repeated, tag = "5")]
    pub keys: Vec<Vec<u8>>,
    /// Each key's value (empty for a delete: see `deletes`).
    #[prost(bytes = "vec", repeated, tag = "6")]
    pub values: Vec<Vec<u8>>,
    /// Whether each key is deleted.
    #[prost(bool, repeated, tag = "7")]
    pub deletes: Vec<bool>,
    /// Some writes take the transaction's commit timestamp: every value is
    /// then a template (`twophase::template`), stamped at the commit.
    #[prost(bool, tag = "8")]
    pub pending: bool,
}

/// The writes are prepared: durable in each split's log, at these
/// timestamps (the commit's must be above the highest).
#[derive(Clone, PartialEq, prost::Message)]
pub struct PrepareKeysReply {
    #[prost(uint64, tag = "1")]
    pub ts: u64,
}

/// The outcome of a transaction prepared here (`ResolveKeys`): its
/// prepared writes are written at the commit timestamp, or dropped; its
/// locks here are released.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ResolveKeysRequest {
    #[prost(uint64, tag = "1")]
    pub database: u64,
    #[prost(bytes = "vec", tag = "2")]
    pub txn: Vec<u8>,
    #[prost(bool, tag = "3")]
    pub commit: bool,
    /// The commit timestamp, or when the abort was decided.
    #[prost(uint64, tag = "4")]
    pub ts: u64,
}

/// The transaction ended without preparing here (`ReleaseKeys`): its locks
/// here are released.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ReleaseKeysRequest {
    #[prost(uint64, tag = "1")]
    pub database: u64,
    #[prost(bytes = "vec", tag = "2")]
    pub txn: Vec<u8>,
}

/// A participant asks the node leading the database's first split (the
/// coordinator) for the outcome of a transaction prepared there long ago
/// (`Settle`): a transaction the coordinator is not committing is aborted
/// if it was not decided.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SettleRequest {
    #[prost(uint64, tag = "1")]
    pub database: u64,
    #[prost(bytes = "vec", tag = "2")]
    pub txn: Vec<u8>,
}

/// The outcome, if decided.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SettleReply {
    #[prost(bool, tag = "1")]
    pub decided: bool,
    #[prost(bool, tag = "2")]
    pub commit: bool,
    #[prost(uint64, tag = "3")]
    pub ts: u64,
}

/// A transaction id as the peer messages carry it.
pub fn txn_bytes(id: u128) -> Vec<u8> {
    id.to_be_bytes().to_vec()
}

/// A transaction id from the peer messages' form.
pub fn txn_from_bytes(bytes: &[u8]) -> Result<u128, tonic::Status> {
    let bytes: [u8; 16] = bytes.try_into().map_err(|_| {
        tonic::Status::invalid_argument(format!(
            "a transaction id is 16 bytes, not {}",
            bytes.len()
        ))
    })?;
    Ok(u128::from_be_bytes(bytes))
}

/// How long one `LockKeys` call waits at the node holding the lock before
/// it answers that it still waits (the caller asks again).
pub const LOCK_CALL_WAIT: Duration = Duration::from_secs(3);

/// How a node answering `LockKeys` says that the lock is still waited for
/// (with DEADLINE_EXCEEDED).
pub const STILL_WAITING: &str = "still waiting for the lock";

/// The most keys one `PrepareKeys` carries (a commit's mutations are
/// bounded far below it).
pub const MAX_PREPARE_KEYS: usize = 1 << 20;

/// The most rows one `ReadRange` answer carries.
pub const MAX_READ_ROWS: u64 = 256;

/// A `ReadRange` answer stops adding rows once it holds this many bytes
/// (it always carries at least one row, if there is one).
pub const MAX_READ_BYTES: usize = 1 << 20;

/// The longest split boundary a `HostSplit` request may carry: far above
/// any key the database writes (whose keys are bounded by the SQL layer's
/// limits), and far below what would let a request hold memory hostage.
pub const MAX_SPLIT_KEY: usize = 64 << 10;

/// The largest status answer a client accepts.
const MAX_STATUS: usize = 16 << 20;

/// A client of the node service at `addr` (`host:port` of a peer port),
/// dialled lazily over TCP.
pub fn client(addr: &str, timeout: Duration) -> Result<NodeClient<Channel>, String> {
    let endpoint = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .map_err(|e| format!("bad address {addr:?}: {e}"))?
        .connect_timeout(timeout)
        .timeout(timeout)
        .tcp_nodelay(true);
    Ok(NodeClient::new(endpoint.connect_lazy()).max_decoding_message_size(MAX_STATUS))
}

/// The cluster's status as the node at `addr` sees it.
pub async fn status(addr: &str, timeout: Duration) -> Result<ClusterStatus, String> {
    let mut client = client(addr, timeout)?;
    let reply = client
        .status(StatusRequest {
            forwarded: false,
            groups_only: false,
        })
        .await
        .map_err(|s| format!("node at {addr}: {:?}: {}", s.code(), s.message()))?;
    serde_json::from_str(&reply.into_inner().json)
        .map_err(|e| format!("node at {addr} answered with a malformed status: {e}"))
}

/// Asks the node at `addr` to take node `id` out of the cluster.
pub async fn remove(addr: &str, id: u64, timeout: Duration) -> Result<RemoveReply, String> {
    let mut client = client(addr, timeout)?;
    client
        .remove(RemoveRequest {
            node_id: id,
            forwarded: false,
        })
        .await
        .map(tonic::Response::into_inner)
        .map_err(|s| format!("node at {addr}: {:?}: {}", s.code(), s.message()))
}
