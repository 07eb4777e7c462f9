//! Integration tests over real gRPC: each test starts a server on a free
//! port (port 0) over a temporary data directory, talks to it through the
//! client modules of the `googleapis-tonic-*` crates, and stops it.
//!
//! - [`restart`]: instances, databases, schemas, rows and indexes survive a
//!   restart; dropped databases stay dropped;
//! - [`admin`]: instance and database admin, long-running operations;
//! - [`transactions`]: sessions, inline begin, concurrency, conflicts, DML,
//!   batch DML, read timestamps, commit responses;
//! - [`streaming`]: `PartialResultSet` chunking and resumption;
//! - [`errors`]: error codes and positions, and serving on afterwards;
//! - [`plans`]: query plans and their stats in the PLAN and PROFILE modes;
//! - [`uuid`]: the UUID type through mutations, reads, parameters and DDL;
//! - [`proto`]: PROTO and ENUM columns, values and parameters, with the
//!   proto descriptors given to CreateDatabase;
//! - [`client_gaps`]: NUMERIC values refused rather than rounded on write,
//!   NULL parameters sent without a type;
//! - [`postgresql`]: PostgreSQL-dialect databases: their DDL, the dialect
//!   reported, mutations and reads, queries refused for now.

mod admin;
mod client_gaps;
mod errors;
mod plans;
mod postgresql;
mod proto;
mod restart;
mod streaming;
mod transactions;
mod uuid;

use std::path::Path;
use std::time::Duration;

pub use googleapis_tonic_google_longrunning::google::longrunning as lro;
pub use googleapis_tonic_google_rpc::google::rpc;
pub use googleapis_tonic_google_spanner_admin_database_v1::google::spanner::admin::database::v1 as dpb;
pub use googleapis_tonic_google_spanner_admin_instance_v1::google::spanner::admin::instance::v1 as ipb;
pub use googleapis_tonic_google_spanner_v1::google::spanner::v1 as pb;

use dpb::database_admin_client::DatabaseAdminClient;
use ipb::instance_admin_client::InstanceAdminClient;
use lro::operations_client::OperationsClient;
use pb::spanner_client::SpannerClient;
use prost::Message;
use prost_types::value::Kind;
use rowtree_server::{Config, Server};
use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Status};

pub const PROJECT: &str = "projects/test-project";
const MAX_MESSAGE: usize = 64 << 20;

/// A running server and a channel to it.
pub struct Env {
    pub server: Server,
    pub channel: Channel,
    /// The data directory, when the test does not keep it itself.
    _dir: Option<tempfile::TempDir>,
}

/// Starts a server over `dir` (a restart when it holds data already).
pub async fn start_in(dir: &Path) -> Env {
    let server = Server::start(Config {
        data_dir: Some(dir.to_path_buf()),
        addr: "127.0.0.1:0".parse().unwrap(),
        cache_bytes: 8 << 20,
        http_addr: None,
        ..Config::default()
    })
    .await
    .expect("the server starts");
    let channel = Endpoint::from_shared(format!("http://{}", server.local_addr))
        .unwrap()
        .connect()
        .await
        .expect("connects");
    Env {
        server,
        channel,
        _dir: None,
    }
}

/// Starts a server over a fresh temporary directory.
pub async fn start() -> Env {
    let dir = tempfile::tempdir().unwrap();
    let mut env = start_in(dir.path()).await;
    env._dir = Some(dir);
    env
}

impl Env {
    pub fn spanner(&self) -> SpannerClient<Channel> {
        SpannerClient::new(self.channel.clone())
            .max_decoding_message_size(MAX_MESSAGE)
            .max_encoding_message_size(MAX_MESSAGE)
    }

    pub fn dbs(&self) -> DatabaseAdminClient<Channel> {
        DatabaseAdminClient::new(self.channel.clone())
    }

    pub fn instances(&self) -> InstanceAdminClient<Channel> {
        InstanceAdminClient::new(self.channel.clone())
    }

    pub fn operations(&self) -> OperationsClient<Channel> {
        OperationsClient::new(self.channel.clone())
    }

    /// Stops the server; it must not hang.
    pub async fn stop(self) {
        drop(self.channel);
        tokio::time::timeout(Duration::from_secs(15), self.server.shutdown())
            .await
            .expect("shutdown finishes")
            .expect("shutdown succeeds");
    }

    pub async fn try_create_instance(&self, id: &str) -> Result<lro::Operation, Status> {
        self.instances()
            .create_instance(ipb::CreateInstanceRequest {
                parent: PROJECT.into(),
                instance_id: id.into(),
                instance: Some(ipb::Instance {
                    config: format!("{PROJECT}/instanceConfigs/emulator-config"),
                    display_name: id.into(),
                    node_count: 1,
                    ..Default::default()
                }),
            })
            .await
            .map(|r| r.into_inner())
    }

    /// Creates an instance and returns its name.
    pub async fn instance(&self, id: &str) -> String {
        let op = self.try_create_instance(id).await.unwrap();
        let op = self.finish(op).await;
        assert!(op_error(&op).is_none(), "{op:?}");
        format!("{PROJECT}/instances/{id}")
    }

    pub async fn try_create_database(
        &self,
        instance: &str,
        id: &str,
        ddl: &[&str],
    ) -> Result<lro::Operation, Status> {
        self.dbs()
            .create_database(dpb::CreateDatabaseRequest {
                parent: instance.into(),
                create_statement: format!("CREATE DATABASE `{id}`"),
                extra_statements: ddl.iter().map(|s| s.to_string()).collect(),
                ..Default::default()
            })
            .await
            .map(|r| r.into_inner())
    }

    /// Creates a database with a schema and returns its name.
    pub async fn database(&self, instance: &str, id: &str, ddl: &[&str]) -> String {
        let op = self.try_create_database(instance, id, ddl).await.unwrap();
        let op = self.finish(op).await;
        assert!(op_error(&op).is_none(), "{op:?}");
        format!("{instance}/databases/{id}")
    }

    /// Sends a schema change and waits for its operation to finish.
    pub async fn ddl(
        &self,
        database: &str,
        statements: &[&str],
        operation_id: &str,
    ) -> Result<lro::Operation, Status> {
        let op = self
            .dbs()
            .update_database_ddl(dpb::UpdateDatabaseDdlRequest {
                database: database.into(),
                statements: statements.iter().map(|s| s.to_string()).collect(),
                operation_id: operation_id.into(),
                ..Default::default()
            })
            .await?
            .into_inner();
        Ok(self.finish(op).await)
    }

    /// Waits for an operation to be done.
    pub async fn finish(&self, mut op: lro::Operation) -> lro::Operation {
        for _ in 0..30 {
            if op.done {
                return op;
            }
            op = self
                .operations()
                .wait_operation(lro::WaitOperationRequest {
                    name: op.name.clone(),
                    timeout: Some(prost_types::Duration {
                        seconds: 1,
                        nanos: 0,
                    }),
                })
                .await
                .unwrap()
                .into_inner();
        }
        panic!("operation {} does not finish", op.name)
    }

    pub async fn ddl_of(&self, database: &str) -> Vec<String> {
        self.dbs()
            .get_database_ddl(dpb::GetDatabaseDdlRequest {
                database: database.into(),
            })
            .await
            .unwrap()
            .into_inner()
            .statements
    }

    pub async fn session(&self, database: &str) -> String {
        self.spanner()
            .create_session(pb::CreateSessionRequest {
                database: database.into(),
                session: None,
            })
            .await
            .unwrap()
            .into_inner()
            .name
    }

    pub async fn execute(
        &self,
        session: &str,
        sql: &str,
        transaction: Option<pb::TransactionSelector>,
    ) -> Result<pb::ResultSet, Status> {
        self.spanner()
            .execute_sql(pb::ExecuteSqlRequest {
                session: session.into(),
                sql: sql.into(),
                transaction,
                ..Default::default()
            })
            .await
            .map(|r| r.into_inner())
    }

    /// A strong single-use query; each row's values joined with `|`.
    pub async fn query(&self, session: &str, sql: &str) -> Vec<String> {
        rows(&self.execute(session, sql, None).await.unwrap())
    }

    /// DML in transaction `id`; returns the exact row count.
    pub async fn dml(&self, session: &str, id: &[u8], sql: &str) -> i64 {
        let rs = self
            .execute(session, sql, Some(use_id(id)))
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e:?}"));
        row_count(&rs)
    }

    pub async fn begin(&self, session: &str, options: pb::TransactionOptions) -> pb::Transaction {
        self.spanner()
            .begin_transaction(pb::BeginTransactionRequest {
                session: session.into(),
                options: Some(options),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner()
    }

    pub async fn begin_rw(&self, session: &str) -> Vec<u8> {
        self.begin(session, read_write()).await.id
    }

    pub async fn commit(
        &self,
        session: &str,
        transaction: pb::commit_request::Transaction,
        mutations: Vec<pb::Mutation>,
        return_commit_stats: bool,
    ) -> Result<pb::CommitResponse, Status> {
        self.spanner()
            .commit(pb::CommitRequest {
                session: session.into(),
                mutations,
                return_commit_stats,
                transaction: Some(transaction),
                ..Default::default()
            })
            .await
            .map(|r| r.into_inner())
    }

    /// Commits transaction `id` with `mutations`.
    pub async fn commit_id(
        &self,
        session: &str,
        id: &[u8],
        mutations: Vec<pb::Mutation>,
    ) -> Result<pb::CommitResponse, Status> {
        let t = pb::commit_request::Transaction::TransactionId(id.to_vec());
        self.commit(session, t, mutations, false).await
    }

    /// Applies `mutations` in a single-use read-write transaction.
    pub async fn write(&self, session: &str, mutations: Vec<pb::Mutation>) -> pb::CommitResponse {
        let t = pb::commit_request::Transaction::SingleUseTransaction(read_write());
        self.commit(session, t, mutations, false).await.unwrap()
    }

    /// All the messages of an ExecuteStreamingSql call.
    pub async fn stream(
        &self,
        request: pb::ExecuteSqlRequest,
    ) -> Result<Vec<pb::PartialResultSet>, Status> {
        let mut stream = self
            .spanner()
            .execute_streaming_sql(request)
            .await?
            .into_inner();
        let mut out = Vec::new();
        while let Some(m) = stream.message().await? {
            out.push(m);
        }
        Ok(out)
    }
}

pub fn read_write() -> pb::TransactionOptions {
    pb::TransactionOptions {
        mode: Some(pb::transaction_options::Mode::ReadWrite(Default::default())),
        ..Default::default()
    }
}

pub fn read_only(
    bound: pb::transaction_options::read_only::TimestampBound,
) -> pb::TransactionOptions {
    pb::TransactionOptions {
        mode: Some(pb::transaction_options::Mode::ReadOnly(
            pb::transaction_options::ReadOnly {
                timestamp_bound: Some(bound),
                return_read_timestamp: true,
            },
        )),
        ..Default::default()
    }
}

pub fn begin_with(options: pb::TransactionOptions) -> pb::TransactionSelector {
    pb::TransactionSelector {
        selector: Some(pb::transaction_selector::Selector::Begin(options)),
    }
}

pub fn use_id(id: &[u8]) -> pb::TransactionSelector {
    pb::TransactionSelector {
        selector: Some(pb::transaction_selector::Selector::Id(id.to_vec())),
    }
}

pub fn single_use(options: pb::TransactionOptions) -> pb::TransactionSelector {
    pb::TransactionSelector {
        selector: Some(pb::transaction_selector::Selector::SingleUse(options)),
    }
}

/// A wire value: numbers as INT64 strings, `None` as NULL.
pub fn val(v: impl Into<Option<String>>) -> prost_types::Value {
    prost_types::Value {
        kind: Some(match v.into() {
            Some(s) => Kind::StringValue(s),
            None => Kind::NullValue(0),
        }),
    }
}

/// An insert-or-update mutation; each row given as strings.
pub fn upsert(table: &str, columns: &[&str], rows: Vec<Vec<String>>) -> pb::Mutation {
    pb::Mutation {
        operation: Some(pb::mutation::Operation::InsertOrUpdate(
            pb::mutation::Write {
                table: table.into(),
                columns: columns.iter().map(|c| c.to_string()).collect(),
                values: rows
                    .into_iter()
                    .map(|r| prost_types::ListValue {
                        values: r.into_iter().map(val).collect(),
                    })
                    .collect(),
            },
        )),
    }
}

/// Shorthand for a row of string-encoded values.
#[macro_export]
macro_rules! row {
    ($($v:expr),* $(,)?) => { vec![$($v.to_string()),*] };
}

pub fn text(v: &prost_types::Value) -> String {
    match &v.kind {
        Some(Kind::StringValue(s)) => s.clone(),
        Some(Kind::BoolValue(b)) => b.to_string(),
        Some(Kind::NumberValue(n)) => n.to_string(),
        Some(Kind::NullValue(_)) | None => "NULL".into(),
        Some(Kind::ListValue(l)) => {
            format!(
                "[{}]",
                l.values.iter().map(text).collect::<Vec<_>>().join(",")
            )
        }
        Some(Kind::StructValue(s)) => format!("{s:?}"),
    }
}

/// A result set's rows, each row's values joined with `|`.
/// A `Read` of every row of `table` (through `index` unless it is empty).
pub fn read_all(session: &str, table: &str, index: &str, columns: &[&str]) -> pb::ReadRequest {
    pb::ReadRequest {
        session: session.into(),
        table: table.into(),
        index: index.into(),
        columns: columns.iter().map(|c| c.to_string()).collect(),
        key_set: Some(pb::KeySet {
            all: true,
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The id of the transaction a request began inline (`begin_with`), from
/// its result's metadata.
pub fn begun_id(rs: &pb::ResultSet) -> Vec<u8> {
    rs.metadata
        .as_ref()
        .and_then(|m| m.transaction.as_ref())
        .expect("the begun transaction")
        .id
        .clone()
}

pub fn rows(rs: &pb::ResultSet) -> Vec<String> {
    rs.rows
        .iter()
        .map(|r| r.values.iter().map(text).collect::<Vec<_>>().join("|"))
        .collect()
}

pub fn row_count(rs: &pb::ResultSet) -> i64 {
    match rs.stats.as_ref().and_then(|s| s.row_count) {
        Some(pb::result_set_stats::RowCount::RowCountExact(n)) => n,
        other => panic!("no exact row count: {other:?}"),
    }
}

/// The error an operation finished with.
pub fn op_error(op: &lro::Operation) -> Option<rpc::Status> {
    match &op.result {
        Some(lro::operation::Result::Error(e)) => Some(e.clone()),
        _ => None,
    }
}

/// The `google.rpc.Status` a status carries in `grpc-status-details-bin`.
pub fn details(status: &Status) -> rpc::Status {
    rpc::Status::decode(status.details()).expect("the details are a google.rpc.Status")
}

/// Asserts `r` failed with `code` and a message containing `needle`.
#[track_caller]
pub fn expect_err<T: std::fmt::Debug>(r: Result<T, Status>, code: Code, needle: &str) -> Status {
    match r {
        Ok(v) => panic!("expected {code:?} ({needle}), got {v:?}"),
        Err(e) => {
            assert_eq!(e.code(), code, "{e:?}");
            assert!(e.message().contains(needle), "{needle:?} not in {e:?}");
            e
        }
    }
}

/// Reassembles streamed values: a chunked last value continues in the next
/// message's first value (strings are concatenated, lists merged).
pub fn assemble(messages: &[pb::PartialResultSet]) -> Vec<prost_types::Value> {
    let mut values: Vec<prost_types::Value> = Vec::new();
    let mut pending = false;
    for m in messages {
        let mut it = m.values.iter().cloned();
        if pending {
            let next = it.next().expect("a chunked value continues");
            let last = values.last_mut().unwrap();
            merge(last, next);
        }
        values.extend(it);
        pending = m.chunked_value;
    }
    assert!(!pending, "the stream ended inside a chunked value");
    values
}

fn merge(into: &mut prost_types::Value, next: prost_types::Value) {
    match (&mut into.kind, next.kind) {
        (Some(Kind::StringValue(a)), Some(Kind::StringValue(b))) => a.push_str(&b),
        (Some(Kind::ListValue(a)), Some(Kind::ListValue(b))) => {
            let mut rest = b.values.into_iter();
            if let (Some(last), Some(first)) = (a.values.last_mut(), rest.next()) {
                if matches!(
                    (&last.kind, &first.kind),
                    (Some(Kind::StringValue(_)), Some(Kind::StringValue(_)))
                        | (Some(Kind::ListValue(_)), Some(Kind::ListValue(_)))
                ) {
                    merge(last, first);
                } else {
                    a.values.push(first);
                }
            }
            a.values.extend(rest);
        }
        (a, b) => panic!("cannot merge chunks {a:?} and {b:?}"),
    }
}

/// The number of columns in a stream's metadata.
pub fn width(messages: &[pb::PartialResultSet]) -> usize {
    messages[0]
        .metadata
        .as_ref()
        .and_then(|m| m.row_type.as_ref())
        .map(|t| t.fields.len())
        .expect("the first message carries the row type")
}

/// Runs `f` with a deadline, so a hang fails the test instead of the run.
pub async fn within<F: std::future::Future>(secs: u64, f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(secs), f)
        .await
        .expect("timed out")
}
