//! Rowtree as three systems: the embedded `Database` API and `rowtree
//! serve` over Spanner's gRPC API, both over one database, and `rowtree
//! serve`'s PostgreSQL port (the `pgwire` system), over a second database
//! in the PostgreSQL dialect that the same server holds.
//!
//! [`Host`] starts a server in this process (on a runtime of its own, as it
//! would have in its own process), creates the instance and the database
//! through the admin API, and keeps the server's handle on that database:
//! the embedded system calls it directly, the gRPC system goes through the
//! network stack, sessions, protobuf and the SQL-free `Read`/`Commit` RPCs.
//! Both see the same data, loaded once. Each gRPC client has its own HTTP/2
//! connection, session and single-threaded runtime.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use googleapis_tonic_google_spanner_admin_database_v1::google::spanner::admin::database::v1 as dpb;
use googleapis_tonic_google_spanner_admin_instance_v1::google::spanner::admin::instance::v1 as ipb;
use googleapis_tonic_google_spanner_v1::google::spanner::v1 as pb;
use pb::spanner_client::SpannerClient;
use rowtree_db::{Database, KeyRange, KeySet, Mutation, ReadRequest, Value};
use rowtree_server::coalesce::Coalescing;
use tonic::transport::{Channel, Endpoint};

use super::workload::{field_value, hashed_key, Op, FIELDS};
use super::{Client, Error, Result, System};

const TABLE: &str = "usertable";
const PROJECT: &str = "projects/ycsb";
const INSTANCE: &str = "projects/ycsb/instances/ycsb";
const DATABASE: &str = "projects/ycsb/instances/ycsb/databases/ycsb";
/// Records per load commit.
const LOAD_BATCH: u64 = 500;

fn columns() -> Vec<String> {
    std::iter::once("ycsb_key".to_string())
        .chain((0..FIELDS).map(|f| format!("field{f}")))
        .collect()
}

fn ddl() -> String {
    let fields: Vec<String> = (0..FIELDS)
        .map(|f| format!("field{f} STRING(100)"))
        .collect();
    format!(
        "CREATE TABLE {TABLE} (ycsb_key STRING(64) NOT NULL, {}) PRIMARY KEY (ycsb_key)",
        fields.join(", ")
    )
}

fn setup(message: impl std::fmt::Display) -> Error {
    Error::Setup {
        system: "rowtree",
        message: message.to_string(),
    }
}

/// The in-process server and the database both Rowtree systems use.
pub struct Host {
    runtime: Option<tokio::runtime::Runtime>,
    server: Option<rowtree_server::Server>,
    /// The PostgreSQL port, when the pgwire system runs.
    pg: Option<rowtree_pgwire::PgServer>,
    addr: SocketAddr,
    db: Database,
    _temp: Option<tempfile::TempDir>,
}

impl Host {
    /// Starts a server on a fresh data directory (a temporary one unless
    /// `dir` is given) with `event_loops` connection threads
    /// (`rowtree_server::Config::event_loops`), a block cache of
    /// `cache_bytes` per database, and its PostgreSQL port if `pgwire`, and
    /// creates the YCSB database.
    pub fn start(
        dir: Option<PathBuf>,
        event_loops: usize,
        cache_bytes: u64,
        pgwire: bool,
    ) -> Result<Host> {
        let (dir, temp) = match dir {
            Some(d) => (d, None),
            None => {
                let t = tempfile::Builder::new().prefix("ycsb-rowtree-").tempdir()?;
                (t.path().to_path_buf(), Some(t))
            }
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_name("server")
            .build()?;
        let config = rowtree_server::Config {
            data_dir: Some(dir),
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            event_loops,
            cache_bytes,
            ..Default::default()
        };
        let server = runtime
            .block_on(rowtree_server::Server::start(config))
            .map_err(setup)?;
        let addr = server.local_addr;
        // The PostgreSQL port creates the database a client names
        // (`PGWIRE_DATABASE`, in the PostgreSQL dialect) on connect.
        let pg = if pgwire {
            Some(
                runtime
                    .block_on(rowtree_pgwire::PgServer::start(
                        rowtree_pgwire::PgConfig {
                            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
                            create_databases: true,
                        },
                        server.registry().clone(),
                        &rowtree_server::security::Security::default(),
                    ))
                    .map_err(setup)?,
            )
        } else {
            None
        };
        client_runtime()?.block_on(create_database(addr))?;
        let db = server
            .registry()
            .database(DATABASE)
            .map_err(|s| setup(s.message()))?
            .db;
        Ok(Host {
            runtime: Some(runtime),
            server: Some(server),
            pg,
            addr,
            db,
            _temp: temp,
        })
    }

    /// The embedded system.
    pub fn embedded(&self) -> Embedded {
        Embedded {
            db: self.db.clone(),
        }
    }

    /// The gRPC system (reads with `Read`).
    pub fn grpc(&self) -> Grpc {
        Grpc {
            addr: self.addr,
            sql: false,
        }
    }

    /// The gRPC system reading with `ExecuteSql` (`grpc-sql`).
    pub fn grpc_sql(&self) -> Grpc {
        Grpc {
            addr: self.addr,
            sql: true,
        }
    }

    /// The PostgreSQL-protocol system, if the host was started with it.
    pub fn pgwire(&self) -> Option<PgWire> {
        self.pg.as_ref().map(|pg| PgWire {
            addr: pg.local_addr,
        })
    }
}

/// The PostgreSQL database the pgwire system uses.
const PGWIRE_DATABASE: &str = "ycsbpg";

/// `rowtree serve`'s PostgreSQL port, through the same driver and prepared
/// statements as the PostgreSQL system.
pub struct PgWire {
    addr: SocketAddr,
}

impl PgWire {
    fn connect(&self) -> Result<::postgres::Client> {
        ::postgres::Client::connect(
            &format!(
                "host={} port={} user=ycsb dbname={PGWIRE_DATABASE}",
                self.addr.ip(),
                self.addr.port()
            ),
            ::postgres::NoTls,
        )
        .map_err(|e| pg_setup(e.to_string()))
    }
}

fn pg_setup(message: String) -> Error {
    Error::Setup {
        system: "pgwire",
        message,
    }
}

impl System for PgWire {
    fn name(&self) -> &'static str {
        "pgwire"
    }

    fn load(&self, records: u64, progress: &(dyn Fn(u64) + Sync)) -> Result<()> {
        let mut conn = self.connect()?;
        super::postgres::load_usertable(&mut conn, records, progress, pg_setup)
    }

    fn client(&self) -> Result<Box<dyn Client>> {
        // No FOR UPDATE: a read in a read-write transaction locks the row.
        Ok(Box::new(super::postgres::PgClient::prepare(
            self.connect()?,
            false,
            pg_setup,
        )?))
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        if let Some(pg) = self.pg.take() {
            pg.shutdown();
        }
        if let (Some(rt), Some(server)) = (self.runtime.take(), self.server.take()) {
            let _ = rt.block_on(server.shutdown());
        }
    }
}

async fn create_database(addr: SocketAddr) -> Result<()> {
    let channel = connect(addr).await?;
    let mut instances = ipb::instance_admin_client::InstanceAdminClient::new(channel.clone());
    instances
        .create_instance(ipb::CreateInstanceRequest {
            parent: PROJECT.into(),
            instance_id: "ycsb".into(),
            instance: Some(ipb::Instance {
                name: INSTANCE.into(),
                config: format!("{PROJECT}/instanceConfigs/emulator-config"),
                display_name: "ycsb".into(),
                node_count: 1,
                ..Default::default()
            }),
        })
        .await
        .map_err(|s| setup(format!("CreateInstance: {}", s.message())))?;
    let mut admin = dpb::database_admin_client::DatabaseAdminClient::new(channel);
    admin
        .create_database(dpb::CreateDatabaseRequest {
            parent: INSTANCE.into(),
            create_statement: "CREATE DATABASE `ycsb`".into(),
            extra_statements: vec![ddl()],
            ..Default::default()
        })
        .await
        .map_err(|s| setup(format!("CreateDatabase: {}", s.message())))?;
    // The operation completes before CreateDatabase returns on Rowtree;
    // wait for the database to be listed in case that ever changes.
    for _ in 0..100 {
        let got = admin
            .get_database(dpb::GetDatabaseRequest {
                name: DATABASE.into(),
            })
            .await;
        if matches!(got, Ok(ref d) if d.get_ref().state == dpb::database::State::Ready as i32) {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Err(setup("the database did not become ready"))
}

/// A connection to `addr` whose writes go out together at each flush
/// ([`Coalescing`], as the server's do). tonic's client sends a unary
/// request as its headers and message, then an empty frame that ends the
/// stream, and flushes in between: two writes, where the official client
/// libraries (gRPC's C core, grpc-java, grpc-go) send the message with the
/// end-of-stream flag in one. Coalescing makes this client pay for one
/// write per request as theirs do, rather than for tonic's extra one
/// (checked with `perf stat`: 2.0 `sendto` per `ExecuteSql` read, client
/// and server together, against 2.9 with a single yield).
async fn connect(addr: SocketAddr) -> Result<Channel> {
    let connector = tower::service_fn(move |_: tonic::transport::Uri| async move {
        let stream =
            tokio::time::timeout(Duration::from_secs(5), tokio::net::TcpStream::connect(addr))
                .await
                .map_err(|_| std::io::Error::from(std::io::ErrorKind::TimedOut))??;
        stream.set_nodelay(true)?;
        // Two yields: the request's end-of-stream frame comes from the
        // HTTP/2 client's body task, which runs between them (with one, a
        // request over 256 bytes left in two writes).
        Ok::<_, std::io::Error>(hyper_util::rt::TokioIo::new(Coalescing::with_yields(
            stream, 2,
        )))
    });
    Endpoint::from_shared(format!("http://{addr}"))
        .map_err(setup)?
        .connect_with_connector(connector)
        .await
        .map_err(setup)
}

fn record(key: &str, version: u64) -> Vec<Value> {
    std::iter::once(Value::String(key.to_string()))
        .chain((0..FIELDS).map(|f| Value::String(field_value(key, f, version))))
        .collect()
}

fn op_error(e: impl std::fmt::Display) -> Error {
    Error::Op(e.to_string())
}

fn check_rows(rows: usize, at_least: usize, what: &str) -> Result<()> {
    if rows < at_least {
        return Err(Error::Op(format!("{what} returned {rows} rows")));
    }
    Ok(())
}

/// Rowtree's embedded API.
pub struct Embedded {
    db: Database,
}

impl System for Embedded {
    fn name(&self) -> &'static str {
        "embedded"
    }

    fn load(&self, records: u64, progress: &(dyn Fn(u64) + Sync)) -> Result<()> {
        let cols = columns();
        let cols: Vec<&str> = cols.iter().map(String::as_str).collect();
        let next = std::sync::atomic::AtomicU64::new(0);
        // Two loaders keep the group commit busy while the other encodes.
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..2)
                .map(|_| {
                    scope.spawn(|| -> Result<()> {
                        loop {
                            let lo =
                                next.fetch_add(LOAD_BATCH, std::sync::atomic::Ordering::Relaxed);
                            if lo >= records {
                                return Ok(());
                            }
                            let hi = (lo + LOAD_BATCH).min(records);
                            let rows = (lo..hi).map(|n| record(&hashed_key(n), 0)).collect();
                            self.db
                                .write(vec![Mutation::insert(TABLE, &cols, rows)])
                                .map_err(|e| setup(format!("load: {e}")))?;
                            progress(hi - lo);
                        }
                    })
                })
                .collect();
            handles
                .into_iter()
                .try_for_each(|h| h.join().expect("loader panicked"))
        })
    }

    fn client(&self) -> Result<Box<dyn Client>> {
        Ok(Box::new(EmbeddedClient {
            db: self.db.clone(),
            fields: columns(),
        }))
    }
}

struct EmbeddedClient {
    db: Database,
    fields: Vec<String>,
}

impl EmbeddedClient {
    fn field_columns(&self) -> Vec<&str> {
        self.fields[1..].iter().map(String::as_str).collect()
    }

    fn update(&self, key: &str, field: usize, version: u64) -> Mutation {
        Mutation::update(
            TABLE,
            &["ycsb_key", &self.fields[field + 1]],
            vec![vec![
                Value::String(key.to_string()),
                Value::String(field_value(key, field, version)),
            ]],
        )
    }
}

impl Client for EmbeddedClient {
    fn run(&mut self, op: &Op, version: u64) -> Result<()> {
        match op {
            Op::Read(key) => {
                let req = ReadRequest::new(
                    TABLE,
                    &self.field_columns(),
                    KeySet::key(vec![Value::String(key.clone())]),
                );
                let rows = self.db.read(&req).map_err(op_error)?;
                check_rows(rows.len(), 1, "read")?;
                if rows[0].len() != FIELDS {
                    return Err(Error::Op(format!("read returned {} fields", rows[0].len())));
                }
            }
            Op::Update { key, field } => {
                self.db
                    .write(vec![self.update(key, *field, version)])
                    .map_err(op_error)?;
            }
            Op::Insert { key, .. } => {
                let cols: Vec<&str> = self.fields.iter().map(String::as_str).collect();
                self.db
                    .write(vec![Mutation::insert(
                        TABLE,
                        &cols,
                        vec![record(key, version)],
                    )])
                    .map_err(op_error)?;
            }
            Op::Scan { start, count } => {
                let req = ReadRequest::new(
                    TABLE,
                    &self.field_columns(),
                    KeySet::range(KeyRange::closed(vec![Value::String(start.clone())], vec![])),
                )
                .with_limit(*count);
                let rows = self.db.read(&req).map_err(op_error)?;
                check_rows(rows.len(), 1, "scan")?;
            }
            Op::ReadModifyWrite { key, field } => {
                let cols = self.field_columns();
                let req =
                    ReadRequest::new(TABLE, &cols, KeySet::key(vec![Value::String(key.clone())]));
                let update = self.update(key, *field, version);
                self.db
                    .run_in_transaction(|txn| {
                        let rows = txn.read(&req)?;
                        if rows.len() != 1 {
                            return Err(rowtree_db::Error::NotFound {
                                message: format!("read-modify-write read {} rows", rows.len()),
                            });
                        }
                        txn.buffer(update.clone())
                    })
                    .map_err(op_error)?;
            }
        }
        Ok(())
    }
}

/// A client's own single-threaded runtime: the client thread drives its
/// connection while it waits for an answer, as the `postgres` driver does
/// for each PostgreSQL connection, so neither side pays for handing
/// requests to another thread.
fn client_runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

/// `rowtree serve` over Spanner's gRPC API: reads and scans with `Read`, or
/// with `ExecuteSql` (`sql`, the `grpc-sql` system); writes are mutations
/// either way.
pub struct Grpc {
    addr: SocketAddr,
    sql: bool,
}

impl System for Grpc {
    fn name(&self) -> &'static str {
        if self.sql {
            "grpc-sql"
        } else {
            "grpc"
        }
    }

    fn load(&self, _records: u64, _progress: &(dyn Fn(u64) + Sync)) -> Result<()> {
        // The embedded system loaded the same database.
        Ok(())
    }

    fn client(&self) -> Result<Box<dyn Client>> {
        let addr = self.addr;
        let runtime = client_runtime()?;
        let (client, session) = runtime.block_on(async move {
            let mut client = SpannerClient::new(connect(addr).await?);
            let session = client
                .create_session(pb::CreateSessionRequest {
                    database: DATABASE.into(),
                    session: None,
                })
                .await
                .map_err(|s| setup(format!("CreateSession: {}", s.message())))?
                .into_inner()
                .name;
            Ok::<_, Error>((client, session))
        })?;
        let fields = columns();
        let list = fields[1..].join(", ");
        Ok(Box::new(GrpcClient {
            runtime,
            client,
            session,
            sql: self.sql.then(|| Sql {
                point: format!("SELECT {list} FROM {TABLE} WHERE ycsb_key = @key"),
                scan: format!(
                    "SELECT {list} FROM {TABLE} WHERE ycsb_key >= @key ORDER BY ycsb_key LIMIT @n"
                ),
            }),
            fields,
        }))
    }
}

struct GrpcClient {
    runtime: tokio::runtime::Runtime,
    client: SpannerClient<Channel>,
    session: String,
    fields: Vec<String>,
    /// The queries, when reads go through `ExecuteSql`.
    sql: Option<Sql>,
}

/// The statements the `grpc-sql` system sends: the same text every time,
/// with parameters, as applications send them (the server's statement
/// cache sees each text once).
struct Sql {
    point: String,
    scan: String,
}

fn string_value(s: String) -> prost_types::Value {
    prost_types::Value {
        kind: Some(prost_types::value::Kind::StringValue(s)),
    }
}

fn key_list(key: &str) -> prost_types::ListValue {
    prost_types::ListValue {
        values: vec![string_value(key.to_string())],
    }
}

fn strong_single_use() -> pb::TransactionSelector {
    pb::TransactionSelector {
        selector: Some(pb::transaction_selector::Selector::SingleUse(
            pb::TransactionOptions {
                mode: Some(pb::transaction_options::Mode::ReadOnly(
                    pb::transaction_options::ReadOnly {
                        return_read_timestamp: false,
                        timestamp_bound: Some(
                            pb::transaction_options::read_only::TimestampBound::Strong(true),
                        ),
                    },
                )),
                ..Default::default()
            },
        )),
    }
}

fn read_write() -> pb::TransactionOptions {
    pb::TransactionOptions {
        mode: Some(pb::transaction_options::Mode::ReadWrite(Default::default())),
        ..Default::default()
    }
}

impl GrpcClient {
    fn write(&self, mutation: pb::mutation::Operation) -> pb::Mutation {
        pb::Mutation {
            operation: Some(mutation),
        }
    }

    fn update(&self, key: &str, field: usize, version: u64) -> pb::Mutation {
        self.write(pb::mutation::Operation::Update(pb::mutation::Write {
            table: TABLE.into(),
            columns: vec!["ycsb_key".into(), self.fields[field + 1].clone()],
            values: vec![prost_types::ListValue {
                values: vec![
                    string_value(key.to_string()),
                    string_value(field_value(key, field, version)),
                ],
            }],
        }))
    }

    fn read_request(
        &self,
        key_set: pb::KeySet,
        txn: pb::TransactionSelector,
        limit: i64,
    ) -> pb::ReadRequest {
        pb::ReadRequest {
            session: self.session.clone(),
            transaction: Some(txn),
            table: TABLE.into(),
            columns: self.fields[1..].to_vec(),
            key_set: Some(key_set),
            limit,
            ..Default::default()
        }
    }

    /// An `ExecuteSql` request of `sql` with `@key` (and `@n`, if given).
    fn sql_request(
        &self,
        sql: &str,
        key: &str,
        n: Option<i64>,
        txn: pb::TransactionSelector,
    ) -> pb::ExecuteSqlRequest {
        let string = pb::Type {
            code: pb::TypeCode::String as i32,
            ..Default::default()
        };
        let mut fields =
            std::collections::BTreeMap::from([("key".to_string(), string_value(key.to_string()))]);
        let mut types = std::collections::HashMap::from([("key".to_string(), string)]);
        if let Some(n) = n {
            // INT64 travels as a decimal string in Spanner's JSON-like values.
            fields.insert("n".into(), string_value(n.to_string()));
            types.insert(
                "n".into(),
                pb::Type {
                    code: pb::TypeCode::Int64 as i32,
                    ..Default::default()
                },
            );
        }
        pb::ExecuteSqlRequest {
            session: self.session.clone(),
            transaction: Some(txn),
            sql: sql.to_string(),
            params: Some(prost_types::Struct { fields }),
            param_types: types,
            ..Default::default()
        }
    }

    /// Reads one record (or, with `scan`, up to `n` records from `key` on)
    /// with `Read` or `ExecuteSql`, in the transaction `txn`; returns the
    /// rows and the transaction the read began, if any.
    async fn read_rows(
        client: &mut SpannerClient<Channel>,
        read: ReadCall,
    ) -> std::result::Result<(Vec<prost_types::ListValue>, Option<Vec<u8>>), tonic::Status> {
        let rs = match read {
            ReadCall::Read(req) => client.read(req).await?.into_inner(),
            ReadCall::Sql(req) => client.execute_sql(req).await?.into_inner(),
        };
        let id = rs.metadata.and_then(|m| m.transaction).map(|t| t.id);
        Ok((rs.rows, id))
    }

    /// The call reading `key` (a point read, or a scan of `scan` records).
    fn read_call(&self, key: &str, scan: Option<usize>, txn: pb::TransactionSelector) -> ReadCall {
        match (&self.sql, scan) {
            (Some(sql), None) => ReadCall::Sql(self.sql_request(&sql.point, key, None, txn)),
            (Some(sql), Some(n)) => {
                ReadCall::Sql(self.sql_request(&sql.scan, key, Some(n as i64), txn))
            }
            (None, None) => ReadCall::Read(self.read_request(Self::point(key), txn, 0)),
            (None, Some(n)) => {
                let range = pb::KeyRange {
                    start_key_type: Some(pb::key_range::StartKeyType::StartClosed(key_list(key))),
                    end_key_type: Some(pb::key_range::EndKeyType::EndClosed(
                        prost_types::ListValue { values: vec![] },
                    )),
                };
                let keys = pb::KeySet {
                    ranges: vec![range],
                    ..Default::default()
                };
                ReadCall::Read(self.read_request(keys, txn, n as i64))
            }
        }
    }

    fn point(key: &str) -> pb::KeySet {
        pb::KeySet {
            keys: vec![key_list(key)],
            ..Default::default()
        }
    }

    fn commit_single_use(&mut self, mutation: pb::Mutation) -> Result<()> {
        let request = pb::CommitRequest {
            session: self.session.clone(),
            mutations: vec![mutation],
            transaction: Some(pb::commit_request::Transaction::SingleUseTransaction(
                read_write(),
            )),
            ..Default::default()
        };
        let client = &mut self.client;
        self.runtime
            .block_on(client.commit(request))
            .map_err(|s| op_error(format!("Commit: {}", s.message())))?;
        Ok(())
    }
}

impl Client for GrpcClient {
    fn run(&mut self, op: &Op, version: u64) -> Result<()> {
        match op {
            Op::Read(key) => {
                let call = self.read_call(key, None, strong_single_use());
                let client = &mut self.client;
                let (rows, _) = self
                    .runtime
                    .block_on(Self::read_rows(client, call))
                    .map_err(|s| op_error(format!("read: {}", s.message())))?;
                check_rows(rows.len(), 1, "read")?;
                if rows[0].values.len() != FIELDS {
                    return Err(Error::Op("read returned a short row".into()));
                }
            }
            Op::Update { key, field } => {
                let m = self.update(key, *field, version);
                self.commit_single_use(m)?;
            }
            Op::Insert { key, .. } => {
                let m = self.write(pb::mutation::Operation::Insert(pb::mutation::Write {
                    table: TABLE.into(),
                    columns: self.fields.clone(),
                    values: vec![prost_types::ListValue {
                        values: std::iter::once(string_value(key.clone()))
                            .chain((0..FIELDS).map(|f| string_value(field_value(key, f, version))))
                            .collect(),
                    }],
                }));
                self.commit_single_use(m)?;
            }
            Op::Scan { start, count } => {
                let call = self.read_call(start, Some(*count), strong_single_use());
                let client = &mut self.client;
                let (rows, _) = self
                    .runtime
                    .block_on(Self::read_rows(client, call))
                    .map_err(|s| op_error(format!("scan: {}", s.message())))?;
                check_rows(rows.len(), 1, "scan")?;
            }
            Op::ReadModifyWrite { key, field } => {
                // Begin, read under the transaction's locks, commit the
                // update; retried from the start when aborted, as client
                // libraries do.
                let mut pause = Duration::from_millis(1);
                loop {
                    match self.read_modify_write(key, *field, version) {
                        Err(Retry::Aborted) => {
                            std::thread::sleep(pause);
                            pause = (pause * 2).min(Duration::from_millis(32));
                        }
                        Err(Retry::Failed(e)) => return Err(e),
                        Ok(()) => break,
                    }
                }
            }
        }
        Ok(())
    }
}

/// A read as one of the two RPCs.
enum ReadCall {
    Read(pb::ReadRequest),
    Sql(pb::ExecuteSqlRequest),
}

enum Retry {
    Aborted,
    Failed(Error),
}

impl From<tonic::Status> for Retry {
    fn from(s: tonic::Status) -> Retry {
        if s.code() == tonic::Code::Aborted {
            Retry::Aborted
        } else {
            Retry::Failed(op_error(s.message()))
        }
    }
}

impl GrpcClient {
    fn read_modify_write(
        &mut self,
        key: &str,
        field: usize,
        version: u64,
    ) -> std::result::Result<(), Retry> {
        let session = self.session.clone();
        let read = self.read_call(
            key,
            None,
            pb::TransactionSelector {
                selector: Some(pb::transaction_selector::Selector::Begin(read_write())),
            },
        );
        let update = self.update(key, field, version);
        let client = &mut self.client;
        self.runtime.block_on(async move {
            // The read begins the transaction (inline begin, as current
            // client libraries do): one round trip fewer.
            let (rows, id) = Self::read_rows(client, read).await?;
            let id = id.ok_or_else(|| {
                Retry::Failed(op_error("a read with Begin returned no transaction"))
            })?;
            if rows.len() != 1 {
                return Err(Retry::Failed(op_error("read-modify-write read no row")));
            }
            client
                .commit(pb::CommitRequest {
                    session,
                    mutations: vec![update],
                    transaction: Some(pb::commit_request::Transaction::TransactionId(id)),
                    ..Default::default()
                })
                .await?;
            Ok(())
        })
    }
}
