//! The gRPC service: `google.spanner.v1.Spanner` implemented for
//! [`SpannerService`], one thin method per RPC.
//!
//! Each method does the same few things and no more: reads the client's
//! deadline from the metadata for the calls that return rows, holds the
//! calls that carry statements, reads or batch writes to
//! [`MAX_REQUEST_BYTES`](super::MAX_REQUEST_BYTES) (a Commit may be larger),
//! finds the session, and hands the request to the file that does the
//! work, on the thread that should run it (`threads.rs`).
//! The work itself is synchronous and lives in `sessions.rs`,
//! `statements.rs`, `reads.rs` and `commits.rs`.

use tonic::{Request, Response, Status};

use googleapis_tonic_google_spanner_v1::google::spanner::v1 as pb;

use super::commits;
use super::follower;
use super::limits::{check_size, deadline_of};
use super::outcomes;
use super::reads;
use super::results::{self, Stream};
use super::routed;
use super::selectors::inline_snapshot;
use super::sessions::SpannerService;
use super::statements;
use super::threads::{blocking, guarded};
use crate::api::spanner::spanner_server::Spanner;
use crate::forward::{database_of, onward_from, relayed, Need};

/// Sends the request on to the node leading its database, if that is not
/// this one (a cluster node; `forward.rs`), and returns its answer.
macro_rules! forward {
    ($self:ident, $request:ident, $database:expr, $method:ident) => {
        if $self.forwarder.is_some() {
            let to = $self.forward_to($database, $request.metadata())?;
            if let Some(mut to) = to {
                let me = $self.forwarder.as_ref().map_or(0, |f| f.node_id());
                return relayed(to.$method(onward_from($request, me)).await);
            }
        }
    };
    ($self:ident, $request:ident, $database:expr, $method:ident, stream) => {
        if $self.forwarder.is_some() {
            let to = $self.forward_to($database, $request.metadata())?;
            if let Some(mut to) = to {
                let me = $self.forwarder.as_ref().map_or(0, |f| f.node_id());
                let response = relayed(to.$method(onward_from($request, me)).await)?;
                return Ok(response.map(|s| Box::pin(s) as Stream<_>));
            }
        }
    };
}

/// For a query or read: serves it here if it is a follower read
/// (`follower.rs`; the session found and the timestamp decided are the
/// value), else sends it on as [`forward!`] does.
macro_rules! forward_read {
    ($self:ident, $request:ident, $method:ident $(, $stream:ident)?) => {{
        let here = $self.follower_read_of(&$request).await;
        if here.is_none() {
            forward!(
                $self,
                $request,
                database_of(&$request.get_ref().session),
                $method
                $(, $stream)?
            );
        }
        here
    }};
}

#[tonic::async_trait]
impl Spanner for SpannerService {
    async fn create_session(
        &self,
        request: Request<pb::CreateSessionRequest>,
    ) -> Result<Response<pb::Session>, Status> {
        forward!(
            self,
            request,
            &request.get_ref().database.clone(),
            create_session
        );
        let via = crate::forward::via(request.metadata());
        let r = request.into_inner();
        Ok(Response::new(self.create_via(
            &r.database,
            r.session.as_ref(),
            via,
        )?))
    }

    async fn batch_create_sessions(
        &self,
        request: Request<pb::BatchCreateSessionsRequest>,
    ) -> Result<Response<pb::BatchCreateSessionsResponse>, Status> {
        forward!(
            self,
            request,
            &request.get_ref().database.clone(),
            batch_create_sessions
        );
        let via = crate::forward::via(request.metadata());
        let r = request.into_inner();
        let session = self.create_many(
            &r.database,
            r.session_count,
            r.session_template.as_ref(),
            via,
        )?;
        Ok(Response::new(pb::BatchCreateSessionsResponse { session }))
    }

    async fn get_session(
        &self,
        request: Request<pb::GetSessionRequest>,
    ) -> Result<Response<pb::Session>, Status> {
        forward!(
            self,
            request,
            database_of(&request.get_ref().name),
            get_session
        );
        Ok(Response::new(
            self.session(&request.get_ref().name)?.to_pb(),
        ))
    }

    async fn list_sessions(
        &self,
        request: Request<pb::ListSessionsRequest>,
    ) -> Result<Response<pb::ListSessionsResponse>, Status> {
        forward!(
            self,
            request,
            &request.get_ref().database.clone(),
            list_sessions
        );
        Ok(Response::new(self.list(request.get_ref())?))
    }

    async fn delete_session(
        &self,
        request: Request<pb::DeleteSessionRequest>,
    ) -> Result<Response<()>, Status> {
        forward!(
            self,
            request,
            database_of(&request.get_ref().name),
            delete_session
        );
        let txns = self.delete(&request.into_inner().name)?;
        // Dropping the transactions rolls back the read-write ones.
        blocking(move || {
            drop(txns);
            Ok(())
        })
        .await?;
        Ok(Response::new(()))
    }

    async fn execute_sql(
        &self,
        request: Request<pb::ExecuteSqlRequest>,
    ) -> Result<Response<pb::ResultSet>, Status> {
        let here = forward_read!(self, request, execute_sql);
        let deadline = deadline_of(request.metadata());
        let via = crate::forward::via(request.metadata());
        let mut r = request.into_inner();
        check_size(&r)?;
        let (session, follower) =
            self.reading_session(here, &r.session, &mut r.transaction, via)?;
        // Not on a database whose reads may wait (for simulated node
        // capacity, or a flush running late): that wait would stall the
        // event loop's other connections.
        let inline = inline_snapshot(r.transaction.as_ref(), &r.resume_token)
            && !session.db.reads_may_block();
        let response = results::unary(inline, deadline, move |rows| {
            statements::execute(&session, &r, rows)
        })
        .await?;
        Ok(self.mark_follower_read(follower, response))
    }

    type ExecuteStreamingSqlStream = Stream<pb::PartialResultSet>;

    async fn execute_streaming_sql(
        &self,
        request: Request<pb::ExecuteSqlRequest>,
    ) -> Result<Response<Self::ExecuteStreamingSqlStream>, Status> {
        let here = forward_read!(self, request, execute_streaming_sql, stream);
        let deadline = deadline_of(request.metadata());
        let via = crate::forward::via(request.metadata());
        let mut r = request.into_inner();
        check_size(&r)?;
        let (session, follower) =
            self.reading_session(here, &r.session, &mut r.transaction, via)?;
        let token = r.resume_token.clone();
        let response = Response::new(results::stream(&token, deadline, move |out| {
            statements::execute(&session, &r, out)
        }));
        Ok(self.mark_follower_read(follower, response))
    }

    async fn execute_batch_dml(
        &self,
        request: Request<pb::ExecuteBatchDmlRequest>,
    ) -> Result<Response<pb::ExecuteBatchDmlResponse>, Status> {
        forward!(
            self,
            request,
            database_of(&request.get_ref().session),
            execute_batch_dml
        );
        let via = crate::forward::via(request.metadata());
        let r = request.into_inner();
        check_size(&r)?;
        let session = self.session_via(&r.session, via)?;
        blocking(move || statements::batch_dml(&session, &r))
            .await
            .map(Response::new)
    }

    async fn read(
        &self,
        request: Request<pb::ReadRequest>,
    ) -> Result<Response<pb::ResultSet>, Status> {
        let here = forward_read!(self, request, read);
        let deadline = deadline_of(request.metadata());
        let via = crate::forward::via(request.metadata());
        let mut r = request.into_inner();
        check_size(&r)?;
        let (session, follower) =
            self.reading_session(here, &r.session, &mut r.transaction, via)?;
        // Not on a database whose reads may wait (for simulated node
        // capacity, or a flush running late): that wait would stall the
        // event loop's other connections.
        let inline = inline_snapshot(r.transaction.as_ref(), &r.resume_token)
            && !session.db.reads_may_block();
        let response = results::unary(inline, deadline, move |rows| {
            reads::read_rows(&session, &r, rows)
        })
        .await?;
        Ok(self.mark_follower_read(follower, response))
    }

    type StreamingReadStream = Stream<pb::PartialResultSet>;

    async fn streaming_read(
        &self,
        request: Request<pb::ReadRequest>,
    ) -> Result<Response<Self::StreamingReadStream>, Status> {
        let here = forward_read!(self, request, streaming_read, stream);
        let deadline = deadline_of(request.metadata());
        let via = crate::forward::via(request.metadata());
        let mut r = request.into_inner();
        check_size(&r)?;
        let (session, follower) =
            self.reading_session(here, &r.session, &mut r.transaction, via)?;
        let token = r.resume_token.clone();
        let response = Response::new(results::stream(&token, deadline, move |out| {
            reads::read_rows(&session, &r, out)
        }));
        Ok(self.mark_follower_read(follower, response))
    }

    async fn begin_transaction(
        &self,
        request: Request<pb::BeginTransactionRequest>,
    ) -> Result<Response<pb::Transaction>, Status> {
        // A stale read-only transaction begun here is served here, as its
        // reads will be (its id carries its timestamp).
        let begin = pb::TransactionSelector {
            selector: request
                .get_ref()
                .options
                .clone()
                .map(pb::transaction_selector::Selector::Begin),
        };
        let here = self
            .follower_read(
                &request.get_ref().session,
                Some(&begin),
                &[],
                request.metadata(),
            )
            .await;
        if here.is_none() {
            forward!(
                self,
                request,
                database_of(&request.get_ref().session),
                begin_transaction
            );
        }
        let via = crate::forward::via(request.metadata());
        let r = request.into_inner();
        let follower = here.is_some();
        let mut options = r.options.unwrap_or_default();
        let session = match here {
            Some((session, ts)) => {
                follower::pin_options(&mut options, ts);
                session
            }
            None => self.session_via(&r.session, via)?,
        };
        let response = blocking(move || {
            let (_, _, txn) = session.begin(&options)?;
            Ok(Response::new(txn))
        })
        .await?;
        Ok(self.mark_follower_read(follower, response))
    }

    async fn commit(
        &self,
        request: Request<pb::CommitRequest>,
    ) -> Result<Response<pb::CommitResponse>, Status> {
        if self.forwarder.is_some() {
            // A single-use Commit goes where its keys' splits are led, and
            // is sent again if refused there, having done nothing
            // (`routed.rs`).
            if routed::is_routed(request.metadata()) {
                return self.commit_routed(request).await.map(Response::new);
            }
            if routed::sent_again_if_refused(&request) {
                return self.commit_until_placed(request).await.map(Response::new);
            }
        }
        self.commit_once(request).await
    }

    async fn rollback(
        &self,
        request: Request<pb::RollbackRequest>,
    ) -> Result<Response<()>, Status> {
        forward!(
            self,
            request,
            database_of(&request.get_ref().session),
            rollback
        );
        let via = crate::forward::via(request.metadata());
        let r = request.into_inner();
        let session = self.session_via(&r.session, via)?;
        blocking(move || {
            commits::rollback(&session, &r);
            Ok(Response::new(()))
        })
        .await
    }

    async fn partition_query(
        &self,
        request: Request<pb::PartitionQueryRequest>,
    ) -> Result<Response<pb::PartitionResponse>, Status> {
        forward!(
            self,
            request,
            database_of(&request.get_ref().session),
            partition_query
        );
        let via = crate::forward::via(request.metadata());
        let r = request.into_inner();
        check_size(&r)?;
        let session = self.session_via(&r.session, via)?;
        blocking(move || statements::partition_query(&session, &r))
            .await
            .map(Response::new)
    }

    async fn partition_read(
        &self,
        request: Request<pb::PartitionReadRequest>,
    ) -> Result<Response<pb::PartitionResponse>, Status> {
        forward!(
            self,
            request,
            database_of(&request.get_ref().session),
            partition_read
        );
        let via = crate::forward::via(request.metadata());
        let r = request.into_inner();
        check_size(&r)?;
        let session = self.session_via(&r.session, via)?;
        blocking(move || reads::partition_read(&session, &r))
            .await
            .map(Response::new)
    }

    type BatchWriteStream = Stream<pb::BatchWriteResponse>;

    async fn batch_write(
        &self,
        request: Request<pb::BatchWriteRequest>,
    ) -> Result<Response<Self::BatchWriteStream>, Status> {
        forward!(
            self,
            request,
            database_of(&request.get_ref().session),
            batch_write,
            stream
        );
        let via = crate::forward::via(request.metadata());
        let r = request.into_inner();
        check_size(&r)?;
        let session = self.session_via(&r.session, via)?;
        Ok(Response::new(commits::batch_write(session, r)))
    }
}

impl SpannerService {
    /// One attempt at a Commit: by key (`routed.rs`), else at the leader
    /// of the database's first split, where the session lives (tagged,
    /// when sent there, so that its outcome can be looked up if the answer
    /// is lost: `outcomes.rs`), else here.
    pub(super) async fn commit_once(
        &self,
        request: Request<pb::CommitRequest>,
    ) -> Result<Response<pb::CommitResponse>, Status> {
        if let Some(f) = &self.forwarder {
            if let Some(answer) = self.commit_by_key(f, &request).await? {
                return Ok(Response::new(answer));
            }
            if outcomes::untagged(request.metadata()) {
                let database = database_of(&request.get_ref().session).to_owned();
                if let Some(hop) = f.next_hop(&database, request.metadata(), Need::Leader)? {
                    if hop.leader && f.settles_outcomes(hop.node) {
                        let f = f.clone();
                        return self
                            .commit_at_leader(&f, &database, hop.node, request)
                            .await
                            .map(Response::new);
                    }
                }
            }
        }
        forward!(
            self,
            request,
            database_of(&request.get_ref().session),
            commit
        );
        if let Some(lookup) = outcomes::lookup_of(request.metadata())? {
            let database = database_of(&request.get_ref().session).to_owned();
            return self
                .answer_lookup(&database, lookup, None)
                .await
                .map(Response::new);
        }
        let tag = outcomes::tag_of(request.metadata())?;
        let via = crate::forward::via(request.metadata());
        let r = request.into_inner();
        let session = self.session_via(&r.session, via)?;
        guarded(commits::commit(session, r, tag))
            .await
            .map(Response::new)
    }
}
