//! A forwarded Commit whose answer is lost: its outcome looked up, not
//! left unknown.
//!
//! On a cluster node, a Commit for a database another node leads is sent
//! on to that leader (`forward.rs`). If the leader dies, or the connection
//! to it breaks, after the commit reached the replicated log but before
//! the answer came back, the gateway sees only a broken call: the commit
//! may have happened or not. Told UNAVAILABLE, the client cannot know
//! whether to retry (a retried transfer might be applied twice).
//!
//! So the node that sends a Commit to the leader tags it first (if the
//! leader's clock heartbeat answers say it knows tags: a node of an older
//! version would ignore the tag, and a lookup would then wrongly settle as
//! "not committed")
//! ([`COMMIT_TAG`]: a random id and a deadline, `not_after`, at most
//! [`OUTCOME_WINDOW`] ahead and never past the client's own deadline). The
//! leader records the tag with the commit's writes and refuses to commit
//! after `not_after` ([`rowtree_db::outcome`]). When the call fails in a
//! way that leaves the outcome unknown, the gateway asks the database's
//! leader, whoever that is by then, for the tag's outcome: a Commit
//! carrying [`OUTCOME_OF`] instead of a transaction, forwarded like any
//! other. The leader answers
//!
//! * with the commit's timestamp as soon as its replica has the tag (a
//!   tag is only applied with its commit);
//! * ABORTED, "not committed", once the outcome is settled without it:
//!   at `not_after`, when it holds the lease there and every commit at or
//!   below it is applied; or earlier, when the process the commit was sent
//!   to is gone for good (its node restarted since), so that anything it
//!   proposed is applied here already or nowhere;
//! * UNAVAILABLE while neither holds (the gateway asks again).
//!
//! The gateway relays the first settled answer; if none comes by the
//! client's deadline (or shortly after `not_after`), it relays the original
//! failure, and the outcome stays unknown, as before. The cost is one
//! metadata key per forwarded commit, and a commit that waits for a lock
//! past [`OUTCOME_WINDOW`] being aborted (the client retries it).
//!
//! A client connected straight to the leader that dies is not helped: no
//! one is left to ask for it.

use std::time::{Duration, Instant};

use googleapis_tonic_google_spanner_v1::google::spanner::v1 as pb;
use googleapis_tonic_google_spanner_v1::google::spanner::v1::spanner_client::SpannerClient;
use rowtree_db::OutcomeTag;
use tonic::metadata::{MetadataMap, MetadataValue};
use tonic::{Code, Request, Status};

use super::limits::deadline_of;
use super::sessions::SpannerService;
use super::threads::blocking;
use crate::forward::{onward_from, Forwarder, Need};
use crate::registry::{now_nanos, timestamp_pb};
use crate::status;

/// The metadata key of a tagged Commit: `<id in hex>.<not_after>`.
pub const COMMIT_TAG: &str = "x-rowtree-commit-tag";

/// The metadata key of an outcome lookup:
/// `<id in hex>.<not_after>.<node sent to>.<sent at>`.
pub const OUTCOME_OF: &str = "x-rowtree-outcome-of";

/// How long after a gateway sends a Commit on the commit may still take
/// effect: the longest a lookup waits to say "not committed" when the
/// process it was sent to is still around (partitioned, paused).
pub const OUTCOME_WINDOW: Duration = Duration::from_secs(10);

/// How far past [`OUTCOME_WINDOW`] from now a tag's deadline may be when
/// it arrives (the sender's clock may be ahead).
const TAG_SLACK: Duration = Duration::from_secs(1);

/// How long past `not_after` a gateway keeps asking before it gives up.
const LOOKUP_GRACE: Duration = Duration::from_secs(5);

/// The pause between a gateway's lookups.
const RETRY_PAUSE: Duration = Duration::from_millis(100);

/// The pause between a leader's looks at an unsettled outcome.
const POLL: Duration = Duration::from_millis(50);

/// An outcome lookup: the tag, the node the commit was sent to, and when
/// (the gateway's wall clock, nanoseconds since the Unix epoch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Lookup {
    pub tag: OutcomeTag,
    pub sent_to: u64,
    pub sent_at: i64,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<[u8; 16]> {
    if text.len() != 32 {
        return None;
    }
    let mut out = [0u8; 16];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

fn encode_tag(tag: &OutcomeTag) -> String {
    format!("{}.{}", hex(&tag.id), tag.not_after)
}

fn encode_lookup(lookup: &Lookup) -> String {
    format!(
        "{}.{}.{}",
        encode_tag(&lookup.tag),
        lookup.sent_to,
        lookup.sent_at
    )
}

fn parse_tag(id: &str, not_after: &str) -> Option<OutcomeTag> {
    Some(OutcomeTag {
        id: unhex(id)?,
        not_after: not_after.parse().ok()?,
    })
}

fn parse_lookup(text: &str) -> Option<Lookup> {
    let mut parts = text.split('.');
    let tag = parse_tag(parts.next()?, parts.next()?)?;
    let sent_to = parts.next()?.parse().ok()?;
    let sent_at = parts.next()?.parse().ok()?;
    parts.next().is_none().then_some(Lookup {
        tag,
        sent_to,
        sent_at,
    })
}

fn value(metadata: &MetadataMap, key: &str) -> Result<Option<String>, Status> {
    match metadata.get(key) {
        None => Ok(None),
        Some(v) => v
            .to_str()
            .map(|s| Some(s.to_owned()))
            .map_err(|_| Status::invalid_argument(format!("{key} is not text"))),
    }
}

/// The tag a Commit carries, if a gateway tagged it.
pub(super) fn tag_of(metadata: &MetadataMap) -> Result<Option<OutcomeTag>, Status> {
    let Some(text) = value(metadata, COMMIT_TAG)? else {
        return Ok(None);
    };
    let parsed = text
        .split_once('.')
        .and_then(|(id, not_after)| parse_tag(id, not_after))
        .ok_or_else(|| Status::invalid_argument(format!("malformed {COMMIT_TAG}: {text:?}")))?;
    within_reach(COMMIT_TAG, &parsed)?;
    Ok(Some(parsed))
}

/// The lookup a Commit carries instead of a transaction, if it is one.
pub(super) fn lookup_of(metadata: &MetadataMap) -> Result<Option<Lookup>, Status> {
    let Some(text) = value(metadata, OUTCOME_OF)? else {
        return Ok(None);
    };
    let parsed = parse_lookup(&text)
        .ok_or_else(|| Status::invalid_argument(format!("malformed {OUTCOME_OF}: {text:?}")))?;
    within_reach(OUTCOME_OF, &parsed.tag)?;
    Ok(Some(parsed))
}

/// Refuses a tag whose deadline is further ahead than a gateway sets one
/// ([`OUTCOME_WINDOW`], plus [`TAG_SLACK`] for the clocks' difference):
/// anyone can send the metadata, and a far deadline would keep a lookup
/// waiting, or a recorded outcome from being pruned, for as long.
fn within_reach(key: &str, tag: &OutcomeTag) -> Result<(), Status> {
    let reach = (now_nanos() as u64).saturating_add((OUTCOME_WINDOW + TAG_SLACK).as_nanos() as u64);
    if tag.not_after > reach {
        return Err(Status::invalid_argument(format!(
            "{key}: its deadline is more than {} s ahead",
            (OUTCOME_WINDOW + TAG_SLACK).as_secs()
        )));
    }
    Ok(())
}

/// Whether a Commit is a client's, untouched by a gateway: neither tagged
/// nor a lookup.
pub(super) fn untagged(metadata: &MetadataMap) -> bool {
    !metadata.contains_key(COMMIT_TAG) && !metadata.contains_key(OUTCOME_OF)
}

/// Whether a failed call to the leader leaves the commit's outcome
/// unknown: the call broke (transport failure, reset stream), or the
/// leader could not finish it (UNAVAILABLE: it lost its leadership with
/// the commit proposed, which a later leader may still apply). Every other
/// answer is the commit's own.
fn outcome_unknown(status: &Status) -> bool {
    matches!(
        status.code(),
        Code::Unavailable | Code::Unknown | Code::Cancelled | Code::Internal
    )
}

fn committed(ts: u64) -> pb::CommitResponse {
    pb::CommitResponse {
        commit_timestamp: Some(timestamp_pb(ts as i64)),
        ..Default::default()
    }
}

impl SpannerService {
    /// Sends a client's Commit on to `leader`, the node leading
    /// `database`, tagged; if the answer is lost, asks for the outcome
    /// until it is settled (see the module docs).
    pub(super) async fn commit_at_leader(
        &self,
        forwarder: &Forwarder,
        database: &str,
        leader: u64,
        request: Request<pb::CommitRequest>,
    ) -> Result<pb::CommitResponse, Status> {
        let deadline = deadline_of(request.metadata());
        let window = deadline.map_or(OUTCOME_WINDOW, |d| {
            d.saturating_duration_since(Instant::now())
                .min(OUTCOME_WINDOW)
        });
        let sent_at = now_nanos();
        let tag = OutcomeTag {
            id: *uuid::Uuid::new_v4().as_bytes(),
            not_after: (sent_at as u64).saturating_add(window.as_nanos() as u64),
        };
        let session = request.get_ref().session.clone();
        let mut request = onward_from(request, forwarder.node_id());
        request.metadata_mut().insert(
            COMMIT_TAG,
            MetadataValue::try_from(encode_tag(&tag))
                .map_err(|e| Status::internal(e.to_string()))?,
        );
        let failure = match client(forwarder.channel(database, leader)?)
            .commit(request)
            .await
        {
            Ok(response) => return Ok(response.into_inner()),
            // A refusal did nothing: no outcome to look up.
            Err(e) if !outcome_unknown(&e) || crate::status::refused(&e) => return Err(e),
            Err(e) => e,
        };
        let lookup = Lookup {
            tag,
            sent_to: leader,
            sent_at,
        };
        let until = Instant::now() + window + LOOKUP_GRACE;
        let until = deadline.map_or(until, |d| d.min(until));
        tracing::info!(
            database,
            leader,
            error = %failure.message(),
            "a forwarded commit's answer was lost; looking up its outcome"
        );
        loop {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                tracing::warn!(
                    database,
                    leader,
                    "a forwarded commit's outcome stays unknown"
                );
                return Err(failure);
            }
            let answer = match forwarder.next_hop(database, &MetadataMap::new(), Need::Leader) {
                Ok(Some(hop)) => {
                    let mut ask = Request::new(pb::CommitRequest {
                        session: session.clone(),
                        ..Default::default()
                    });
                    ask.set_timeout(left);
                    ask.metadata_mut().insert(
                        OUTCOME_OF,
                        MetadataValue::try_from(encode_lookup(&lookup))
                            .map_err(|e| Status::internal(e.to_string()))?,
                    );
                    match forwarder.channel(database, hop.node) {
                        Ok(channel) => client(channel).commit(ask).await.map(|r| r.into_inner()),
                        Err(e) => Err(e),
                    }
                }
                // This node leads now, or no leader is known: ask here,
                // briefly, then see again who leads.
                Ok(None) => {
                    let briefly = (Instant::now() + Duration::from_millis(500)).min(until);
                    self.answer_lookup(database, lookup, Some(briefly)).await
                }
                Err(e) => Err(e),
            };
            match answer {
                Ok(response) => {
                    tracing::info!(database, leader, "a forwarded commit's outcome: committed");
                    return Ok(response);
                }
                Err(e) if e.code() == Code::Aborted => {
                    tracing::info!(
                        database,
                        leader,
                        "a forwarded commit's outcome: not committed"
                    );
                    return Err(e);
                }
                Err(_) => tokio::time::sleep(RETRY_PAUSE.min(left)).await,
            }
        }
    }

    /// Answers an outcome lookup for `database` on this node (see the
    /// module docs): the commit timestamp, ABORTED once settled without
    /// it, or UNAVAILABLE if not settled by `until` (default: shortly after
    /// `not_after`) or if this node cannot settle it (not the leader).
    pub(super) async fn answer_lookup(
        &self,
        database: &str,
        lookup: Lookup,
        until: Option<Instant>,
    ) -> Result<pb::CommitResponse, Status> {
        let db = self.registry.database(database)?.db;
        let tag = lookup.tag;
        let until = until.unwrap_or_else(|| {
            let left = tag.not_after.saturating_sub(now_nanos() as u64);
            Instant::now() + Duration::from_nanos(left) + LOOKUP_GRACE
        });
        loop {
            let found = {
                let db = db.clone();
                blocking(move || db.recorded_outcome(&tag).map_err(status::from_db)).await?
            };
            if let Some(ts) = found {
                return Ok(committed(ts));
            }
            let gone = self
                .forwarder
                .as_ref()
                .is_some_and(|f| f.process_gone_since(lookup.sent_to, lookup.sent_at));
            if gone || now_nanos() as u64 >= tag.not_after {
                let db = db.clone();
                let settled =
                    blocking(move || db.commit_outcome(&tag, gone).map_err(status::from_db))
                        .await?;
                return match settled {
                    Some(ts) => Ok(committed(ts)),
                    None => Err(status::aborted(format!(
                        "Transaction was not committed: node {} lost its commit before the \
                         commit took effect ({}); retry the transaction",
                        lookup.sent_to,
                        if gone {
                            "that node's process is gone"
                        } else {
                            "its time to take effect ran out"
                        }
                    ))),
                };
            }
            if Instant::now() >= until {
                return Err(Status::unavailable(
                    "the commit's outcome is not settled yet; ask again",
                ));
            }
            tokio::time::sleep(POLL).await;
        }
    }
}

pub(super) fn client(
    channel: tonic::transport::Channel,
) -> SpannerClient<tonic::transport::Channel> {
    SpannerClient::new(channel)
        .max_decoding_message_size(crate::MAX_MESSAGE)
        .max_encoding_message_size(crate::MAX_REQUEST)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_and_lookups_travel_as_text_and_come_back_whole() {
        let tag = OutcomeTag {
            id: *b"0123456789abcdef",
            not_after: 1_764_000_000_123_456_789,
        };
        let lookup = Lookup {
            tag,
            sent_to: 3,
            sent_at: 1_764_000_000_000_000_000,
        };
        let mut metadata = MetadataMap::new();
        assert!(untagged(&metadata));
        metadata.insert(COMMIT_TAG, encode_tag(&tag).parse().unwrap());
        metadata.insert(OUTCOME_OF, encode_lookup(&lookup).parse().unwrap());
        assert!(!untagged(&metadata));
        assert_eq!(tag_of(&metadata).unwrap(), Some(tag));
        assert_eq!(lookup_of(&metadata).unwrap(), Some(lookup));
        for bad in ["zz.1", "00.1", "3031323334353637383961626364656.1"] {
            metadata.insert(COMMIT_TAG, bad.parse().unwrap());
            assert_eq!(
                tag_of(&metadata).unwrap_err().code(),
                Code::InvalidArgument,
                "{bad}"
            );
        }
        metadata.insert(
            OUTCOME_OF,
            "30313233343536373839616263646566.1.2".parse().unwrap(),
        );
        assert_eq!(
            lookup_of(&metadata).unwrap_err().code(),
            Code::InvalidArgument
        );

        // A deadline a minute ahead is none a gateway sets: refused.
        let far = OutcomeTag {
            not_after: now_nanos() as u64 + 60_000_000_000,
            ..tag
        };
        metadata.insert(COMMIT_TAG, encode_tag(&far).parse().unwrap());
        let refused = tag_of(&metadata).unwrap_err();
        assert_eq!(refused.code(), Code::InvalidArgument);
        assert!(refused.message().contains("ahead"), "{refused:?}");
        let far_lookup = Lookup { tag: far, ..lookup };
        metadata.insert(OUTCOME_OF, encode_lookup(&far_lookup).parse().unwrap());
        assert_eq!(
            lookup_of(&metadata).unwrap_err().code(),
            Code::InvalidArgument
        );
        // One a gateway would set passes.
        let near = OutcomeTag {
            not_after: now_nanos() as u64 + OUTCOME_WINDOW.as_nanos() as u64,
            ..tag
        };
        metadata.insert(COMMIT_TAG, encode_tag(&near).parse().unwrap());
        assert_eq!(tag_of(&metadata).unwrap(), Some(near));
    }

    #[test]
    fn only_a_broken_call_or_an_unfinished_commit_leaves_the_outcome_unknown() {
        for code in [
            Code::Unavailable,
            Code::Unknown,
            Code::Cancelled,
            Code::Internal,
        ] {
            assert!(outcome_unknown(&Status::new(code, "x")), "{code:?}");
        }
        for code in [
            Code::Aborted,
            Code::NotFound,
            Code::InvalidArgument,
            Code::FailedPrecondition,
            Code::DeadlineExceeded,
        ] {
            assert!(!outcome_unknown(&Status::new(code, "x")), "{code:?}");
        }
    }
}
