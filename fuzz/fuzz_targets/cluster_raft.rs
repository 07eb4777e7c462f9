//! `cluster_raft`: what a node reads back from its Raft log, or receives
//! from another node, on arbitrary bytes: log entries, memberships,
//! snapshot images installed on a replica, and the Raft messages of the
//! peer port (append, vote and snapshot requests and responses).
//!
//! The first byte picks the decoder. Any bytes must give a value or an
//! error, never a panic or an allocation larger than the input. A value
//! that decodes must survive its own binary form. A snapshot image that is
//! refused must leave the replica exactly as it was; one that installs
//! must copy whole to another replica.

#![no_main]

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use rowtree_cluster::raft::messages;
use rowtree_cluster::raft::{decode_entry, decode_membership, encode_entry, encode_membership};
use rowtree_cluster::{Descriptor, Replica, SnapshotImage};
use rowtree_kv::{Router, SplitId, SplitMap};
use rowtree_storage::{MemoryEngine, Mvcc};

fn replica() -> (Arc<Router>, Replica) {
    let router = Arc::new(Router::new(
        Mvcc::new(Arc::new(MemoryEngine::new())),
        SplitMap::new(),
    ));
    let descriptor = Descriptor {
        split: SplitId(7),
        start: b"k".to_vec(),
        limit: Some(b"l".to_vec()),
        epoch: 1,
    };
    let replica = Replica::create(router.clone(), descriptor).expect("a new replica");
    (router, replica)
}

fn stored(router: &Router) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut all: Vec<_> = router
        .scan_stored(b"", None)
        .map(|r| r.expect("memory engine scan"))
        .collect();
    all.extend(
        router
            .meta_scan(b"")
            .map(|r| r.expect("memory engine scan")),
    );
    all
}

/// A message that decodes must re-encode to a form that decodes to the
/// same form again (openraft's messages have no equality of their own).
macro_rules! round_trip {
    ($bytes:expr, $decode:path, $encode:expr) => {
        if let Ok(value) = $decode($bytes) {
            let again = $encode(&value);
            let back = $decode(&again).expect("a re-encoded message decodes");
            assert_eq!($encode(&back), again, "the message changed on a round trip");
        }
    };
}

fuzz_target!(|data: &[u8]| {
    let Some((&kind, bytes)) = data.split_first() else {
        return;
    };
    match kind % 9 {
        0 => {
            if let Ok(entry) = decode_entry(bytes) {
                let again = encode_entry(&entry);
                assert!(again.len() <= bytes.len(), "re-encoding grew the entry");
                assert_eq!(
                    decode_entry(&again).expect("re-encoded entry decodes"),
                    entry
                );
            }
        }
        1 => {
            if let Ok(membership) = decode_membership(bytes) {
                let again = encode_membership(&membership);
                assert_eq!(
                    decode_membership(&again).expect("re-encoded membership decodes"),
                    membership
                );
            }
        }
        3 => round_trip!(bytes, messages::decode_append, messages::encode_append),
        4 => round_trip!(
            bytes,
            messages::decode_append_response,
            messages::encode_append_response
        ),
        5 => round_trip!(
            bytes,
            messages::decode_vote_request,
            messages::encode_vote_request
        ),
        6 => round_trip!(
            bytes,
            messages::decode_vote_response,
            messages::encode_vote_response
        ),
        7 => round_trip!(bytes, messages::decode_snapshot, |(vote, snapshot): &(
            _,
            _
        )| {
            messages::encode_snapshot(vote, snapshot)
        }),
        8 => round_trip!(
            bytes,
            messages::decode_snapshot_response,
            messages::encode_snapshot_response
        ),
        _ => {
            let (router, mut target) = replica();
            let before = stored(&router);
            let image = SnapshotImage::from_bytes(bytes.to_vec());
            match target.install(&image) {
                Err(_) => assert_eq!(stored(&router), before, "a refused image wrote"),
                Ok(()) => {
                    let copy = target.image().expect("image of an installed replica");
                    let (other, mut second) = replica();
                    second
                        .install(&copy)
                        .expect("a replica's own image installs");
                    assert_eq!(stored(&other), stored(&router));
                }
            }
        }
    }
});
