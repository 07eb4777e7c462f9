//! Commit outcomes that outlive a lost answer.
//!
//! A commit's answer can be lost after the commit was made durable: in a
//! cluster, the node that forwarded a client's Commit to the database's
//! leader sees the connection break when the leader dies, and cannot tell
//! whether the commit got into the replicated log first. Without help its
//! outcome is unknown, and the client cannot know whether to retry.
//!
//! A commit that carries an [`OutcomeTag`] helps: the tag's id is written
//! with the commit's rows, in the same atomic batch (a metadata key under
//! [`OUTCOME_PREFIX`], its value the commit timestamp), so every replica
//! that has the commit has its outcome too; and the commit must get its
//! timestamp by the tag's `not_after` time, or it fails, having written
//! nothing. Whoever holds the tag can later ask the database's current
//! leader (`Database::commit_outcome`): once that leader may read at
//! `not_after` (it holds the lease and every commit at or below it is
//! applied), a missing key means the commit did not happen and never will.
//! Before then a found key already answers: a key is only ever applied
//! with its commit.
//!
//! Where a cluster has cut the key space into groups, a commit's rows may
//! be replicated by other groups than the metadata: the tag is then
//! written only after the rows took effect, so a found key is still
//! proof, but a missing one is not (the leader may have died in between).
//! The router says which case holds
//! ([`rowtree_kv::Router::metadata_is_atomic`]), and a lookup that finds
//! no key there stays unsettled (unavailable) instead of answering "not
//! committed".
//!
//! Outcomes are kept for [`OUTCOME_RETENTION`] after their `not_after`
//! and then deleted by each replica on its own, as versions are collected
//! (the keys start with `not_after`, so the expired ones come first).

use std::time::Duration;

/// The metadata key prefix of recorded outcomes.
pub const OUTCOME_PREFIX: &[u8] = b"outcome/";

/// How long an outcome stays recorded after its tag's `not_after` time.
pub const OUTCOME_RETENTION: Duration = Duration::from_secs(600);

/// The name of a commit whose outcome may have to be looked up: an id
/// unique to the commit and the latest commit timestamp it may get.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OutcomeTag {
    /// Chosen at random by whoever sends the commit.
    pub id: [u8; 16],
    /// The latest commit timestamp the commit may take (nanoseconds since
    /// the Unix epoch, as commit timestamps are).
    pub not_after: u64,
}

impl OutcomeTag {
    /// The metadata key the outcome is recorded under: the prefix, then
    /// `not_after` (big-endian, so expired outcomes sort first), then the
    /// id.
    pub fn key(&self) -> Vec<u8> {
        let mut key = Vec::with_capacity(OUTCOME_PREFIX.len() + 8 + 16);
        key.extend_from_slice(OUTCOME_PREFIX);
        key.extend_from_slice(&self.not_after.to_be_bytes());
        key.extend_from_slice(&self.id);
        key
    }

    /// The recorded value: the commit timestamp.
    pub(crate) fn value(ts: u64) -> Vec<u8> {
        ts.to_be_bytes().to_vec()
    }
}

/// The commit timestamp a recorded outcome holds, or `None` for bytes
/// that are not one.
pub(crate) fn recorded_ts(value: &[u8]) -> Option<u64> {
    Some(u64::from_be_bytes(value.try_into().ok()?))
}

/// The `not_after` time of a recorded outcome's key.
pub(crate) fn key_not_after(key: &[u8]) -> Option<u64> {
    let rest = key.strip_prefix(OUTCOME_PREFIX)?;
    Some(u64::from_be_bytes(rest.get(..8)?.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_sort_by_their_deadline_and_give_it_back() {
        let early = OutcomeTag {
            id: [0xff; 16],
            not_after: 1_000,
        };
        let late = OutcomeTag {
            id: [0; 16],
            not_after: 1_001,
        };
        assert!(early.key() < late.key());
        assert_eq!(key_not_after(&early.key()), Some(1_000));
        assert_eq!(key_not_after(b"outcome/short"), None);
        assert_eq!(recorded_ts(&OutcomeTag::value(42)), Some(42));
        assert_eq!(recorded_ts(b"bad"), None);
    }
}
