//! On a cluster node: a single-use Commit made where its keys' splits are
//! led, not where its session lives.
//!
//! A session lives on the node that led its database's first split when
//! the session was made, and a request naming it goes there
//! (`forward.rs`). Once a database's splits are led by different nodes,
//! that node can commit only to the splits it leads: a split's keys are
//! locked only by its leader. A Commit of mutations in a single-use
//! read-write transaction names every key it writes, so the node a client
//! calls can tell where it belongs before anything runs
//! ([`rowtree_db::Database::commit_leader`]):
//!
//! * this node leads all its splits: it commits here, with no session;
//! * another node does, not the session's: the Commit goes there, marked
//!   [`ROUTED`], and that node commits it without looking for the session;
//! * otherwise (the session's node leads them, the leaders differ, a key
//!   is known only at commit, this node holds no replica): the Commit takes
//!   the session's way, as before.
//!
//! The node that commits checks every key again before the commit is
//! queued, and once more before it proposes it. If it does not lead them
//! all after all (an update's old index entries, a lease moved meanwhile),
//! it refuses with UNAVAILABLE marked [`REFUSED`](crate::status::REFUSED), having done nothing, and
//! the gateway sends the Commit the session's way instead. The client's
//! own gateway sends a refused single-use Commit again, a few times with a
//! growing pause, looking the leaders up afresh each time, so a lease that
//! moves under load costs its commits a pause, not an error. A routed Commit is not tagged for an outcome
//! lookup (`outcomes.rs`: tags are recorded with the first split's
//! metadata, which the committing node does not lead), so if the routed
//! call breaks mid-way its outcome is unknown to the client, as it is for
//! a client connected straight to a leader that dies.

use googleapis_tonic_google_spanner_v1::google::spanner::v1 as pb;
use pb::transaction_options::Mode;
use tonic::metadata::MetadataMap;
use tonic::{Request, Status};

use super::commits;
use super::outcomes::{self, client};
use super::sessions::SpannerService;
use crate::convert;
use crate::forward::{database_of, onward_from, Forwarder, MAX_HOPS};
use crate::status::refused;

/// The metadata key of a Commit a gateway sent to the node leading its
/// keys: commit it without the session.
pub const ROUTED: &str = "x-rowtree-routed";

/// Whether a Commit was routed here by key.
pub(super) fn is_routed(metadata: &MetadataMap) -> bool {
    metadata.contains_key(ROUTED)
}

/// How many times a gateway sends a single-use Commit again after a
/// refusal (a lease moved between the gateway's look and the commit).
const REFUSED_RETRIES: u32 = 6;

/// The pause before the first of those, doubled each time.
const REFUSED_PAUSE: std::time::Duration = std::time::Duration::from_millis(25);

/// Whether `r` is a Commit of mutations in a single-use read-write
/// transaction.
fn single_use_write(r: &pb::CommitRequest) -> bool {
    use pb::commit_request::Transaction as T;
    matches!(
        &r.transaction,
        Some(T::SingleUseTransaction(options)) if matches!(options.mode, Some(Mode::ReadWrite(_)))
    )
}

/// Whether a client's Commit is one a gateway sends again when it is
/// refused: a single-use write, not yet tagged or sent on by another
/// gateway, nor an outcome lookup.
pub(super) fn sent_again_if_refused(request: &Request<pb::CommitRequest>) -> bool {
    single_use_write(request.get_ref())
        && outcomes::untagged(request.metadata())
        && crate::forward::hops(request.metadata()) == 0
}

impl SpannerService {
    /// A client's single-use Commit, made by key or through its session
    /// ([`SpannerService::commit_once`]), and sent again, a few times
    /// with a growing pause, while it is refused having done nothing: the
    /// split it writes changed leaders meanwhile, and the next attempt
    /// looks the leaders up again.
    pub(super) async fn commit_until_placed(
        &self,
        request: Request<pb::CommitRequest>,
    ) -> Result<pb::CommitResponse, Status> {
        let mut pause = REFUSED_PAUSE;
        for _ in 0..REFUSED_RETRIES {
            let again = Request::from_parts(
                request.metadata().clone(),
                Default::default(),
                request.get_ref().clone(),
            );
            match self.commit_once(again).await {
                Err(e) if refused(&e) => {
                    tracing::debug!(error = %e.message(), "a refused commit is sent again");
                    tokio::time::sleep(pause).await;
                    pause *= 2;
                }
                other => return other.map(tonic::Response::into_inner),
            }
        }
        self.commit_once(request)
            .await
            .map(tonic::Response::into_inner)
    }

    /// A Commit routed here by key: committed on the database's replica
    /// here, without the session.
    pub(super) async fn commit_routed(
        &self,
        request: Request<pb::CommitRequest>,
    ) -> Result<pb::CommitResponse, Status> {
        let r = request.into_inner();
        if !single_use_write(&r) {
            return Err(Status::invalid_argument(
                "only a single-use read-write Commit is routed by key",
            ));
        }
        let hosted = self.registry.database(database_of(&r.session))?;
        let mutations = convert::mutations_from_proto(&r.mutations, &hosted.db.catalog())?;
        let result = commits::write(&hosted.db, mutations, None).await?;
        Ok(commits::response(&r, result))
    }

    /// A client's Commit made by key, if it is one that can be (see the
    /// module docs): `Some` with the answer, `None` to go the session's
    /// way.
    pub(super) async fn commit_by_key(
        &self,
        forwarder: &Forwarder,
        request: &Request<pb::CommitRequest>,
    ) -> Result<Option<pb::CommitResponse>, Status> {
        let r = request.get_ref();
        if !single_use_write(r)
            || !outcomes::untagged(request.metadata())
            || crate::forward::hops(request.metadata()) >= MAX_HOPS
        {
            return Ok(None);
        }
        let database = database_of(&r.session);
        let Ok(hosted) = self.registry.database(database) else {
            return Ok(None);
        };
        let Ok(mutations) = convert::mutations_from_proto(&r.mutations, &hosted.db.catalog())
        else {
            return Ok(None);
        };
        let Some(leader) = hosted.db.commit_leader(&mutations) else {
            return Ok(None);
        };
        let me = forwarder.node_id();
        if Some(leader) == forwarder.database_leader(database) {
            return Ok(None);
        }
        let answer = if leader == me {
            match commits::write(&hosted.db, mutations, None).await {
                Ok(result) => Ok(commits::response(r, result)),
                Err(e) => Err(e),
            }
        } else {
            let mut routed =
                Request::from_parts(request.metadata().clone(), Default::default(), r.clone());
            routed
                .metadata_mut()
                .insert(ROUTED, "1".parse().expect("ascii"));
            match client(forwarder.channel(database, leader)?)
                .commit(onward_from(routed, me))
                .await
            {
                Ok(response) => Ok(response.into_inner()),
                Err(e) => Err(e),
            }
        };
        match answer {
            Err(e) if refused(&e) => Ok(None),
            other => other.map(Some),
        }
    }
}
