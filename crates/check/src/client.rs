//! A small async client for Spanner's gRPC API, enough for the checks.
//!
//! It is a thin layer over the generated tonic clients: each method is one
//! RPC (or one RPC and the polling of its long-running operation), takes
//! names as strings and values as [`Value`]s, and returns decoded
//! [`ResultSet`]s. Nothing is retried and nothing is cached: a check sees
//! exactly what the server did, which is the point. The raw clients stay
//! reachable ([`Client::spanner`], [`Client::database_admin`]) for requests
//! this layer does not cover.
//!
//! A typical read-write transaction:
//!
//! ```no_run
//! # async fn f(addr: std::net::SocketAddr) -> rowtree_check::Result<()> {
//! use rowtree_check::client::{Client, Selector, Statement, TxnMode};
//! use rowtree_check::wire::{insert, Value};
//! let client = Client::connect(addr).await?;
//! let instance = client.create_instance("i").await?;
//! let db = client
//!     .create_database(&instance, "d", &["CREATE TABLE T (K INT64, V STRING(MAX)) PRIMARY KEY (K)"])
//!     .await?;
//! let session = client.create_session(&db).await?;
//! let txn = client.begin(&session, TxnMode::ReadWrite).await?;
//! let rows = client
//!     .execute_sql(&session, &Statement::new("SELECT V FROM T WHERE K = @k").param("k", 1), Selector::Id(txn.clone()))
//!     .await?;
//! let ts = client
//!     .commit(&session, Selector::Id(txn), vec![insert("T", &["K", "V"], vec![vec![2.into(), "b".into()]])])
//!     .await?;
//! # Ok(()) }
//! ```

use std::net::SocketAddr;
use std::time::Duration;

pub use crate::proto::{dpb, ipb, lro, pb};

use dpb::database_admin_client::DatabaseAdminClient;
use ipb::instance_admin_client::InstanceAdminClient;
use lro::operations_client::OperationsClient;
use pb::spanner_client::SpannerClient;
use tonic::transport::{Channel, Endpoint};

use crate::error::{Error, Result};
use crate::wire::{self, KeySet, Type, Value};

/// The project every name lives under.
pub const PROJECT: &str = "projects/rowtree-check";

/// Largest message either way (results of full-table reads are big).
const MAX_MESSAGE: usize = 256 << 20;

/// A connection to one server; cheap to clone (one HTTP/2 channel,
/// multiplexed).
#[derive(Clone, Debug)]
pub struct Client {
    channel: Channel,
    /// The server's address, if it was dialled by [`Client::connect`].
    addr: Option<SocketAddr>,
}

/// How a transaction reads and writes.
#[derive(Debug, Clone, PartialEq)]
pub enum TxnMode {
    /// Read-write, with locks; committed with [`Client::commit`].
    ReadWrite,
    /// Read-only at the latest timestamp.
    ReadOnlyStrong,
    /// Read-only this far in the past.
    ReadOnlyStale(Duration),
}

impl TxnMode {
    /// The API's transaction options.
    pub fn to_pb(&self) -> pb::TransactionOptions {
        use pb::transaction_options::{read_only::TimestampBound, Mode, ReadOnly, ReadWrite};
        let read_only = |bound| {
            Mode::ReadOnly(ReadOnly {
                timestamp_bound: Some(bound),
                return_read_timestamp: true,
            })
        };
        let mode = match self {
            TxnMode::ReadWrite => Mode::ReadWrite(ReadWrite::default()),
            TxnMode::ReadOnlyStrong => read_only(TimestampBound::Strong(true)),
            TxnMode::ReadOnlyStale(d) => read_only(TimestampBound::ExactStaleness(duration(*d))),
        };
        pb::TransactionOptions {
            mode: Some(mode),
            ..Default::default()
        }
    }
}

/// Which transaction a request runs in.
#[derive(Debug, Clone, PartialEq)]
pub enum Selector {
    /// A transaction of its own, finished with the request.
    SingleUse(TxnMode),
    /// Begins a transaction with the request (inline begin); its id comes
    /// back in [`ResultSet::transaction_id`].
    Begin(TxnMode),
    /// A transaction begun before.
    Id(Vec<u8>),
}

impl Selector {
    /// A strong single-use read-only transaction: the default for reads.
    pub fn strong() -> Selector {
        Selector::SingleUse(TxnMode::ReadOnlyStrong)
    }

    /// The API's transaction selector.
    pub fn to_pb(&self) -> pb::TransactionSelector {
        use pb::transaction_selector::Selector as S;
        pb::TransactionSelector {
            selector: Some(match self {
                Selector::SingleUse(m) => S::SingleUse(m.to_pb()),
                Selector::Begin(m) => S::Begin(m.to_pb()),
                Selector::Id(id) => S::Id(id.clone()),
            }),
        }
    }
}

/// A SQL statement with its parameters (`@name` in the text).
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    /// The text.
    pub sql: String,
    /// Parameters: name (without `@`), declared type (`None` leaves it
    /// to the server), value.
    pub params: Vec<(String, Option<Type>, Value)>,
}

impl Statement {
    /// A statement without parameters.
    pub fn new(sql: impl Into<String>) -> Statement {
        Statement {
            sql: sql.into(),
            params: Vec::new(),
        }
    }

    /// Adds a parameter typed after its value ([`Value::type_of`]).
    pub fn param(mut self, name: &str, value: impl Into<Value>) -> Statement {
        let value = value.into();
        self.params.push((name.to_string(), value.type_of(), value));
        self
    }

    /// Adds a parameter of an explicit type (for NULLs and empty arrays).
    pub fn param_typed(mut self, name: &str, t: Type, value: Value) -> Statement {
        self.params.push((name.to_string(), Some(t), value));
        self
    }

    /// An ExecuteSql request for this statement.
    pub fn to_request(
        &self,
        session: &str,
        selector: &Selector,
        seqno: i64,
    ) -> pb::ExecuteSqlRequest {
        let params = (!self.params.is_empty()).then(|| prost_types::Struct {
            fields: self
                .params
                .iter()
                .map(|(n, _, v)| (n.clone(), v.encode()))
                .collect(),
        });
        pb::ExecuteSqlRequest {
            session: session.to_string(),
            transaction: Some(selector.to_pb()),
            sql: self.sql.clone(),
            params,
            param_types: self
                .params
                .iter()
                .filter_map(|(n, t, _)| Some((n.clone(), t.as_ref()?.to_pb())))
                .collect(),
            seqno,
            ..Default::default()
        }
    }
}

/// The response metadata key of a query served by a follower read.
pub const FOLLOWER_READ: &str = "x-rowtree-follower-read";

/// A decoded result: rows of a query or read, or the count of a DML.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResultSet {
    /// Column names and types.
    pub columns: Vec<(String, Type)>,
    /// The rows.
    pub rows: Vec<Vec<Value>>,
    /// Rows changed, for DML.
    pub row_count: Option<i64>,
    /// The transaction an inline begin started.
    pub transaction_id: Option<Vec<u8>>,
    /// The node whose replica served the query below its safe time,
    /// without the leader (a cluster's follower read, which the response
    /// says in `x-rowtree-follower-read`); set by [`Client::execute_sql`].
    pub follower_read: Option<u64>,
}

impl ResultSet {
    /// The first column of every row as INT64 (NULLs and other types
    /// skipped): `SELECT Id FROM ...`.
    pub fn ints(&self) -> Vec<i64> {
        self.rows
            .iter()
            .filter_map(|r| r.first()?.as_i64())
            .collect()
    }

    /// The single INT64 of a one-row, one-column result (`SELECT COUNT(*)`).
    pub fn single_int(&self) -> Result<i64> {
        match self.rows.as_slice() {
            [row] => row
                .first()
                .and_then(Value::as_i64)
                .ok_or_else(|| Error::Protocol(format!("not an INT64: {row:?}"))),
            rows => Err(Error::Protocol(format!("{} rows, not one", rows.len()))),
        }
    }

    fn from_parts(
        metadata: Option<pb::ResultSetMetadata>,
        values: Vec<prost_types::Value>,
        stats: Option<pb::ResultSetStats>,
    ) -> Result<ResultSet> {
        let metadata = metadata.unwrap_or_default();
        let columns = wire::fields(metadata.row_type.as_ref());
        let mut rows = Vec::new();
        if !columns.is_empty() {
            if values.len() % columns.len() != 0 {
                return Err(Error::Protocol(format!(
                    "{} values for {} columns",
                    values.len(),
                    columns.len()
                )));
            }
            for chunk in values.chunks(columns.len()) {
                rows.push(
                    columns
                        .iter()
                        .zip(chunk)
                        .map(|((_, t), v)| wire::decode(t, v))
                        .collect::<Result<_>>()?,
                );
            }
        }
        let row_count = stats.and_then(|s| s.row_count).map(|c| match c {
            pb::result_set_stats::RowCount::RowCountExact(n)
            | pb::result_set_stats::RowCount::RowCountLowerBound(n) => n,
        });
        Ok(ResultSet {
            follower_read: None,
            columns,
            rows,
            row_count,
            transaction_id: metadata
                .transaction
                .map(|t| t.id)
                .filter(|id| !id.is_empty()),
        })
    }

    /// Decodes a unary `ResultSet`.
    pub fn from_pb(rs: pb::ResultSet) -> Result<ResultSet> {
        let values = rs.rows.into_iter().flat_map(|r| r.values).collect();
        ResultSet::from_parts(rs.metadata, values, rs.stats)
    }
}

impl Client {
    /// Connects to a server (plain HTTP/2; loopback servers need no TLS).
    pub async fn connect(addr: SocketAddr) -> Result<Client> {
        let channel = Endpoint::from_shared(format!("http://{addr}"))
            .map_err(Error::Connect)?
            .connect_timeout(Duration::from_secs(5))
            .tcp_nodelay(true)
            .connect()
            .await?;
        Ok(Client {
            channel,
            addr: Some(addr),
        })
    }

    /// A client over an existing channel.
    pub fn from_channel(channel: Channel) -> Client {
        Client {
            channel,
            addr: None,
        }
    }

    /// The server's address, if this client dialled it.
    pub fn addr(&self) -> Option<SocketAddr> {
        self.addr
    }

    /// The raw data API client.
    pub fn spanner(&self) -> SpannerClient<Channel> {
        SpannerClient::new(self.channel.clone())
            .max_decoding_message_size(MAX_MESSAGE)
            .max_encoding_message_size(MAX_MESSAGE)
    }

    /// The raw database admin client.
    pub fn database_admin(&self) -> DatabaseAdminClient<Channel> {
        DatabaseAdminClient::new(self.channel.clone())
    }

    /// The raw instance admin client.
    pub fn instance_admin(&self) -> InstanceAdminClient<Channel> {
        InstanceAdminClient::new(self.channel.clone())
    }

    /// The raw long-running operations client.
    pub fn operations(&self) -> OperationsClient<Channel> {
        OperationsClient::new(self.channel.clone())
    }

    // ---- admin ----

    /// The instances of [`PROJECT`] (also the readiness probe).
    pub async fn list_instances(&self) -> Result<Vec<String>> {
        let r = self
            .instance_admin()
            .list_instances(ipb::ListInstancesRequest {
                parent: PROJECT.into(),
                ..Default::default()
            })
            .await?
            .into_inner();
        Ok(r.instances.into_iter().map(|i| i.name).collect())
    }

    /// Creates an instance and waits for it; returns its name.
    pub async fn create_instance(&self, id: &str) -> Result<String> {
        let op = self
            .instance_admin()
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
            .await?
            .into_inner();
        self.wait(op, Duration::from_secs(60)).await?;
        Ok(format!("{PROJECT}/instances/{id}"))
    }

    /// Creates a database with a schema and waits for it; returns its name.
    pub async fn create_database(&self, instance: &str, id: &str, ddl: &[&str]) -> Result<String> {
        let op = self
            .database_admin()
            .create_database(dpb::CreateDatabaseRequest {
                parent: instance.into(),
                create_statement: format!("CREATE DATABASE `{id}`"),
                extra_statements: ddl.iter().map(|s| s.to_string()).collect(),
                ..Default::default()
            })
            .await?
            .into_inner();
        self.wait(op, Duration::from_secs(300)).await?;
        Ok(format!("{instance}/databases/{id}"))
    }

    /// Starts a schema change; the operation may come back done already
    /// (small changes) or running (index backfills).
    pub async fn start_ddl(&self, database: &str, statements: &[&str]) -> Result<lro::Operation> {
        Ok(self
            .database_admin()
            .update_database_ddl(dpb::UpdateDatabaseDdlRequest {
                database: database.into(),
                statements: statements.iter().map(|s| s.to_string()).collect(),
                ..Default::default()
            })
            .await?
            .into_inner())
    }

    /// Changes a schema and waits up to `timeout` for it to finish.
    pub async fn update_ddl(
        &self,
        database: &str,
        statements: &[&str],
        timeout: Duration,
    ) -> Result<()> {
        let op = self.start_ddl(database, statements).await?;
        self.wait(op, timeout).await
    }

    /// The schema as DDL statements.
    pub async fn get_ddl(&self, database: &str) -> Result<Vec<String>> {
        Ok(self
            .database_admin()
            .get_database_ddl(dpb::GetDatabaseDdlRequest {
                database: database.into(),
            })
            .await?
            .into_inner()
            .statements)
    }

    /// Asks that `table` be split at each of `keys` (AddSplitPoints, a
    /// key being the leading values of the table's primary key), with
    /// Spanner's default expiry.
    pub async fn add_split_points(
        &self,
        database: &str,
        table: &str,
        keys: &[Vec<Value>],
    ) -> Result<()> {
        self.add_split_points_until(database, table, keys, None)
            .await
    }

    /// [`Client::add_split_points`] with an expiry: after `expire_time`
    /// the split points may be merged away (`None`: Spanner's default).
    pub async fn add_split_points_until(
        &self,
        database: &str,
        table: &str,
        keys: &[Vec<Value>],
        expire_time: Option<std::time::SystemTime>,
    ) -> Result<()> {
        let expire_time = expire_time.map(|t| {
            let since = t.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
            prost_types::Timestamp {
                seconds: i64::try_from(since.as_secs()).unwrap_or(i64::MAX),
                nanos: i32::try_from(since.subsec_nanos()).unwrap_or(0),
            }
        });
        let keys = keys
            .iter()
            .map(|k| dpb::split_points::Key {
                key_parts: Some(wire::list(k)),
            })
            .collect();
        self.database_admin()
            .add_split_points(dpb::AddSplitPointsRequest {
                database: database.into(),
                split_points: vec![dpb::SplitPoints {
                    table: table.into(),
                    index: String::new(),
                    keys,
                    expire_time,
                }],
                initiator: String::new(),
            })
            .await?;
        Ok(())
    }

    /// Polls an operation (WaitOperation, one second at a time) until it is
    /// done; an operation that finished with an error is an
    /// [`Error::Operation`].
    pub async fn wait(&self, mut op: lro::Operation, timeout: Duration) -> Result<()> {
        let deadline = tokio::time::Instant::now() + timeout;
        while !op.done {
            if tokio::time::Instant::now() > deadline {
                return Err(Error::Timeout(format!("operation {}", op.name)));
            }
            op = self
                .operations()
                .wait_operation(lro::WaitOperationRequest {
                    name: op.name.clone(),
                    timeout: Some(duration(Duration::from_secs(1))),
                })
                .await?
                .into_inner();
        }
        match op.result {
            Some(lro::operation::Result::Error(e)) => Err(Error::Operation {
                name: op.name,
                code: e.code,
                message: e.message,
            }),
            _ => Ok(()),
        }
    }

    /// One look at an operation.
    pub async fn get_operation(&self, name: &str) -> Result<lro::Operation> {
        Ok(self
            .operations()
            .get_operation(lro::GetOperationRequest { name: name.into() })
            .await?
            .into_inner())
    }

    // ---- sessions ----

    /// Creates a session; returns its name.
    pub async fn create_session(&self, database: &str) -> Result<String> {
        Ok(self
            .spanner()
            .create_session(pb::CreateSessionRequest {
                database: database.into(),
                session: None,
            })
            .await?
            .into_inner()
            .name)
    }

    /// Creates `count` sessions (in batches of at most 100, the API's limit).
    pub async fn create_sessions(&self, database: &str, count: usize) -> Result<Vec<String>> {
        let mut names = Vec::with_capacity(count);
        while names.len() < count {
            let batch = (count - names.len()).min(100) as i32;
            let r = self
                .spanner()
                .batch_create_sessions(pb::BatchCreateSessionsRequest {
                    database: database.into(),
                    session_count: batch,
                    ..Default::default()
                })
                .await?
                .into_inner();
            if r.session.is_empty() {
                return Err(Error::Protocol("BatchCreateSessions created none".into()));
            }
            names.extend(r.session.into_iter().map(|s| s.name));
        }
        Ok(names)
    }

    /// Every session of a database (all pages).
    pub async fn list_sessions(&self, database: &str) -> Result<Vec<String>> {
        let mut names = Vec::new();
        let mut page_token = String::new();
        loop {
            let r = self
                .spanner()
                .list_sessions(pb::ListSessionsRequest {
                    database: database.into(),
                    page_size: 500,
                    page_token,
                    ..Default::default()
                })
                .await?
                .into_inner();
            names.extend(r.sessions.into_iter().map(|s| s.name));
            if r.next_page_token.is_empty() {
                return Ok(names);
            }
            page_token = r.next_page_token;
        }
    }

    /// Deletes a session (rolling back its read-write transactions).
    pub async fn delete_session(&self, session: &str) -> Result<()> {
        self.spanner()
            .delete_session(pb::DeleteSessionRequest {
                name: session.into(),
            })
            .await?;
        Ok(())
    }

    // ---- transactions ----

    /// Begins a transaction; returns its id.
    pub async fn begin(&self, session: &str, mode: TxnMode) -> Result<Vec<u8>> {
        Ok(self.begin_transaction(session, mode.to_pb()).await?.id)
    }

    /// Begins a transaction with any options (partitioned DML too) and
    /// returns it whole: its id and, for a read-only one, its read
    /// timestamp.
    pub async fn begin_transaction(
        &self,
        session: &str,
        options: pb::TransactionOptions,
    ) -> Result<pb::Transaction> {
        Ok(self
            .spanner()
            .begin_transaction(pb::BeginTransactionRequest {
                session: session.into(),
                options: Some(options),
                ..Default::default()
            })
            .await?
            .into_inner())
    }

    /// Commits: the transaction `Selector::Id`, or the mutations alone in a
    /// single-use read-write transaction (`Selector::SingleUse`). Returns
    /// the commit timestamp. `Selector::Begin` is refused.
    pub async fn commit(
        &self,
        session: &str,
        transaction: Selector,
        mutations: Vec<pb::Mutation>,
    ) -> Result<prost_types::Timestamp> {
        use pb::commit_request::Transaction as T;
        let transaction = match transaction {
            Selector::Id(id) => T::TransactionId(id),
            Selector::SingleUse(mode) => T::SingleUseTransaction(mode.to_pb()),
            Selector::Begin(_) => {
                return Err(Error::Protocol(
                    "a commit names a transaction or is single-use".into(),
                ))
            }
        };
        let r = self
            .spanner()
            .commit(pb::CommitRequest {
                session: session.into(),
                mutations,
                transaction: Some(transaction),
                ..Default::default()
            })
            .await?
            .into_inner();
        r.commit_timestamp
            .ok_or_else(|| Error::Protocol("a commit without a timestamp".into()))
    }

    /// Rolls a transaction back.
    pub async fn rollback(&self, session: &str, transaction_id: &[u8]) -> Result<()> {
        self.spanner()
            .rollback(pb::RollbackRequest {
                session: session.into(),
                transaction_id: transaction_id.to_vec(),
            })
            .await?;
        Ok(())
    }

    // ---- reads and queries ----

    /// Runs a query or DML statement (ExecuteSql, one response).
    pub async fn execute_sql(
        &self,
        session: &str,
        statement: &Statement,
        transaction: Selector,
    ) -> Result<ResultSet> {
        self.execute_sql_seq(session, statement, transaction, 0)
            .await
    }

    /// [`Client::execute_sql`] with a sequence number, which DML in a
    /// read-write transaction must carry (increasing per transaction) for
    /// replays to be recognised.
    pub async fn execute_sql_seq(
        &self,
        session: &str,
        statement: &Statement,
        transaction: Selector,
        seqno: i64,
    ) -> Result<ResultSet> {
        let response = self
            .spanner()
            .execute_sql(statement.to_request(session, &transaction, seqno))
            .await?;
        let follower_read = response
            .metadata()
            .get(FOLLOWER_READ)
            .and_then(|v| v.to_str().ok()?.parse().ok());
        let mut rs = ResultSet::from_pb(response.into_inner())?;
        rs.follower_read = follower_read;
        Ok(rs)
    }

    /// Runs a query through ExecuteStreamingSql and collects the stream,
    /// joining chunked values.
    pub async fn execute_streaming_sql(
        &self,
        session: &str,
        statement: &Statement,
        transaction: Selector,
    ) -> Result<ResultSet> {
        let stream = self
            .spanner()
            .execute_streaming_sql(statement.to_request(session, &transaction, 0))
            .await?
            .into_inner();
        collect(stream).await
    }

    /// Reads rows by key (Read), from `table` or through `index` when given.
    pub async fn read(
        &self,
        session: &str,
        table: &str,
        index: Option<&str>,
        columns: &[&str],
        keys: &KeySet,
        transaction: Selector,
    ) -> Result<ResultSet> {
        let rs = self
            .spanner()
            .read(read_request(
                session,
                table,
                index,
                columns,
                keys,
                transaction,
            ))
            .await?
            .into_inner();
        ResultSet::from_pb(rs)
    }

    /// [`Client::read`] through StreamingRead (for large reads).
    pub async fn streaming_read(
        &self,
        session: &str,
        table: &str,
        index: Option<&str>,
        columns: &[&str],
        keys: &KeySet,
        transaction: Selector,
    ) -> Result<ResultSet> {
        let stream = self
            .spanner()
            .streaming_read(read_request(
                session,
                table,
                index,
                columns,
                keys,
                transaction,
            ))
            .await?
            .into_inner();
        collect(stream).await
    }
}

fn read_request(
    session: &str,
    table: &str,
    index: Option<&str>,
    columns: &[&str],
    keys: &KeySet,
    transaction: Selector,
) -> pb::ReadRequest {
    pb::ReadRequest {
        session: session.into(),
        transaction: Some(transaction.to_pb()),
        table: table.into(),
        index: index.unwrap_or_default().into(),
        columns: columns.iter().map(|c| c.to_string()).collect(),
        key_set: Some(keys.to_pb()),
        ..Default::default()
    }
}

/// Collects a stream of `PartialResultSet`s into one result.
async fn collect(mut stream: tonic::Streaming<pb::PartialResultSet>) -> Result<ResultSet> {
    let mut metadata = None;
    let mut stats = None;
    let mut values: Vec<prost_types::Value> = Vec::new();
    let mut pending_chunk = false;
    while let Some(part) = stream.message().await? {
        if part.metadata.is_some() && metadata.is_none() {
            metadata = part.metadata;
        }
        if part.stats.is_some() {
            stats = part.stats;
        }
        if part.values.is_empty() {
            // A message of stats alone leaves a pending chunk pending.
            continue;
        }
        let mut incoming = part.values.into_iter();
        if pending_chunk {
            if let (Some(last), Some(first)) = (values.pop(), incoming.next()) {
                values.push(wire::merge_chunks(last, first)?);
            }
        }
        values.extend(incoming);
        pending_chunk = part.chunked_value;
    }
    ResultSet::from_parts(metadata, values, stats)
}

fn duration(d: Duration) -> prost_types::Duration {
    prost_types::Duration {
        seconds: d.as_secs() as i64,
        nanos: d.subsec_nanos() as i32,
    }
}

/// A commit timestamp in nanoseconds since the Unix epoch.
pub fn timestamp_nanos(ts: &prost_types::Timestamp) -> i128 {
    i128::from(ts.seconds) * 1_000_000_000 + i128::from(ts.nanos)
}
