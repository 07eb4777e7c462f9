//! A resolved commit's way to durability.
//!
//! Once a transaction's mutations are resolved and its locks are marked
//! committing, [`Resolved::submit`] hands its writes to the commit pipeline
//! (`database.rs`) and returns without waiting:
//!
//! 1. each write is charged to the split it lands in (one write request per
//!    split, rows and bytes: load-based splitting sees it); a commit that
//!    touches several splits is counted, as Spanner would run two-phase
//!    commit across their leaders;
//! 2. the pipeline gives the commit its timestamp and asks for its bytes:
//!    writes still holding `PENDING_COMMIT_TIMESTAMP` are encoded now, with
//!    the timestamp in place ([`PreparedWrite::finish`]);
//! 3. the pipeline writes the whole group of commits through the router in
//!    one batch with one fsync, and answers the commit's ticket once it is
//!    durable and visible; the transaction waits for that answer on a thread
//!    or awaits it in a task ([`crate::transaction::PendingCommit`]).
//!
//! A commit tagged for an outcome lookup ([`crate::outcome`]) also writes
//! its outcome in the same batch, and fails if its timestamp would come
//! after the tag's `not_after`.
//!
//! A commit with nothing to write (and no tag) touches neither the splits nor storage,
//! but still takes a timestamp of its own, in the pipeline's order
//! ([`rowtree_txn::CommitPipeline::submit_empty`]): greater than every
//! commit acknowledged before it, and visible before it is acknowledged.

use std::sync::atomic::Ordering;

use super::prepared::PreparedWrite;
use super::resolver::Resolved;
use crate::database::{CommitWrites, Inner};
use crate::outcome::OutcomeTag;

/// A commit on its way: the ticket that will hold its timestamp (already
/// answered for an empty commit when the pipeline is idle).
pub(crate) struct Submitted(pub rowtree_txn::CommitTicket);

impl Resolved {
    /// Queues the writes to be made durable at one commit timestamp, without
    /// waiting for it.
    ///
    /// With `to_lead` the pipeline thread is not woken: the caller waits for
    /// the ticket on its thread at once and commits the group itself if the
    /// pipeline is idle ([`rowtree_txn::CommitPipeline::submit_to_lead`]).
    ///
    /// With `elsewhere`, the transaction prepared writes at other nodes
    /// ([`crate::elsewhere`]): this commit decides them.
    pub fn submit(
        self,
        inner: &Inner,
        to_lead: bool,
        tag: Option<OutcomeTag>,
        elsewhere: Option<rowtree_kv::TxnRef>,
    ) -> Submitted {
        if self.writes.is_empty() && tag.is_none() && elsewhere.is_none() {
            return Submitted(inner.pipeline.submit_empty());
        }
        let accounted: Vec<(&[u8], Option<&[u8]>)> =
            self.writes.iter().map(|w| w.for_accounting()).collect();
        if !accounted.is_empty() && inner.router.charge_writes(&accounted).is_multi_split() {
            // Spanner would run two-phase commit across these splits' leaders.
            inner.multi_split_commits.fetch_add(1, Ordering::Relaxed);
        }
        drop(accounted);
        let writes = self.writes;
        let request = rowtree_txn::CommitRequest::new(move |ts: u64| {
            if let Some(tag) = &tag {
                if ts > tag.not_after {
                    // Whoever looks the outcome up after `not_after` is told
                    // it did not happen: it must not.
                    return Err(rowtree_txn::Error::Aborted {
                        reason: "the commit did not get its timestamp in time for the node \
                                 that forwarded it (it answers for the commit's outcome \
                                 only until then); retry the transaction"
                            .into(),
                    });
                }
            }
            let mut out = Vec::with_capacity(writes.len());
            for w in writes {
                out.push(
                    PreparedWrite::finish(w, ts)
                        .map_err(|e| rowtree_txn::Error::FailedPrecondition(e.to_string()))?,
                );
            }
            let mut commit = CommitWrites::data(ts, out);
            if let Some(txn) = elsewhere {
                commit.elsewhere = Some(rowtree_kv::ElsewhereCommit { ts, txn });
            }
            if let Some(tag) = &tag {
                commit.meta.push((tag.key(), Some(OutcomeTag::value(ts))));
            }
            Ok(commit)
        });
        let ticket = if to_lead {
            inner.pipeline.submit_to_lead(request)
        } else {
            inner.pipeline.submit(request)
        };
        Submitted(ticket)
    }
}
