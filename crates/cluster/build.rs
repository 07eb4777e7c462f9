//! Declares the peer port's gRPC service, `rowtree.peer.v1.Peer`, with
//! `tonic_build::manual` over the prost messages of `src/raft/peer.rs`, as
//! the server crate declares Spanner's: no `.proto` file is compiled. Each
//! method carries one Raft message of one group in this crate's own binary
//! form (`raft::messages`), so the gRPC layer only frames bytes. A second
//! service, `rowtree.peer.v1.Node`, on the same port, lets a node join the
//! cluster, takes one out, answers `rowtree cluster status`, reads the
//! node's clock for the others' offset guard, asks a node to hold a
//! replica of a database's split, reads the splits a node holds no
//! replica of from one that does, and carries the locks and two-phase
//! commits of transactions that reach splits led by other nodes.

use tonic_build::manual::{Builder, Method, Service};

fn main() {
    let mut peer = Service::builder().name("Peer").package("rowtree.peer.v1");
    for (method, route) in [
        ("append_entries", "AppendEntries"),
        ("vote", "Vote"),
        ("install_snapshot", "InstallSnapshot"),
        ("transfer_leader", "TransferLeader"),
    ] {
        peer = peer.method(
            Method::builder()
                .name(method)
                .route_name(route)
                .input_type("crate::raft::peer::PeerRequest")
                .output_type("crate::raft::peer::PeerReply")
                .codec_path("::tonic_prost::ProstCodec")
                .build(),
        );
    }
    // The node's own service on the same port: joining the cluster and
    // reading its status (`crate::node`).
    let mut node = Service::builder().name("Node").package("rowtree.peer.v1");
    for (method, route, input, output) in [
        ("join", "Join", "JoinRequest", "JoinReply"),
        ("status", "Status", "StatusRequest", "StatusReply"),
        ("remove", "Remove", "RemoveRequest", "RemoveReply"),
        ("clock", "Clock", "ClockRequest", "ClockReply"),
        ("announce", "Announce", "AnnounceRequest", "AnnounceReply"),
        (
            "replace_registry",
            "ReplaceRegistry",
            "RegistryRequest",
            "RegistryReply",
        ),
        (
            "host_split",
            "HostSplit",
            "HostSplitRequest",
            "HostSplitReply",
        ),
        (
            "split_history",
            "SplitHistory",
            "SplitHistoryRequest",
            "SplitHistoryReply",
        ),
        ("locate", "Locate", "LocateRequest", "LocateReply"),
        (
            "read_range",
            "ReadRange",
            "ReadRangeRequest",
            "ReadRangeReply",
        ),
        (
            "add_split_point",
            "AddSplitPoint",
            "AddSplitPointRequest",
            "AddSplitPointReply",
        ),
        ("lock_keys", "LockKeys", "LockKeysRequest", "TxnReply"),
        (
            "prepare_keys",
            "PrepareKeys",
            "PrepareKeysRequest",
            "PrepareKeysReply",
        ),
        (
            "resolve_keys",
            "ResolveKeys",
            "ResolveKeysRequest",
            "TxnReply",
        ),
        (
            "release_keys",
            "ReleaseKeys",
            "ReleaseKeysRequest",
            "TxnReply",
        ),
        ("settle", "Settle", "SettleRequest", "SettleReply"),
    ] {
        node = node.method(
            Method::builder()
                .name(method)
                .route_name(route)
                .input_type(format!("crate::node::api::{input}"))
                .output_type(format!("crate::node::api::{output}"))
                .codec_path("::tonic_prost::ProstCodec")
                .build(),
        );
    }
    Builder::new().compile(&[peer.build(), node.build()]);
}
