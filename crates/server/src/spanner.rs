//! The data API (`google.spanner.v1.Spanner`): sessions, transactions,
//! queries, reads and commits.
//!
//! **Sessions** belong to a database. A client may create many (a pool) or
//! one multiplexed session that carries any number of transactions at once;
//! both are the same here: a session is a name, its database, and the
//! transactions started in it, each under a 16-byte id. A session no request
//! names for [`IDLE_SESSION`] is deleted, as Spanner may do (later requests
//! answer NOT_FOUND and the client makes a new one), and a database holds at
//! most [`MAX_SESSIONS`] sessions.
//!
//! A read-only transaction keeps nothing here: its id carries its read
//! timestamp (`read_only_id`), and every request that names it reads at that
//! timestamp, as long as the version retention period still reaches back to
//! it. Clients never end read-only transactions, so anything kept for them
//! would only grow. Read-write and partitioned DML transactions are held in
//! their session (at most [`MAX_HELD_TRANSACTIONS`] at once) under a random id.
//!
//! **Transactions** are chosen per request by a `TransactionSelector`:
//! - `single_use`: a read-only snapshot for one query or read (no selector
//!   at all means a strong one), or, in `Commit`, a read-write transaction
//!   that applies the mutations and commits at once (retried here while it
//!   is aborted by a conflict, since nothing was returned to the client);
//! - `begin`: starts a transaction and returns its id in the first result
//!   (inline begin, used by every client library to save a round trip); if
//!   that first statement fails, the transaction is dropped and the client
//!   begins explicitly;
//! - `id`: a transaction begun earlier.
//!
//! Read-write transactions are the embedded engine's: shared locks for
//! reads, wound-wait between conflicting transactions, DML applied at once
//! and visible to later statements, mutations buffered until `Commit`. Many
//! run at once (the emulator allows one). A transaction aborted by wound-wait
//! answers ABORTED with a `RetryInfo`, which makes the client retry the
//! whole transaction function. A read-write transaction left idle for
//! [`IDLE_READ_WRITE`] is rolled back so its locks do not block others.
//!
//! **Results** of streaming calls are `PartialResultSet`s: the first carries
//! the metadata (row type and the begun transaction), values are flattened
//! across messages, a string longer than [`CHUNK_BYTES`] is split across
//! messages with `chunked_value`, each message that ends on a row boundary
//! carries a resume token (the number of rows sent so far) and the last
//! carries the statistics. A request with a resume token runs the statement
//! again and skips the rows already sent.
//!
//! Work runs on tokio's blocking threads: the engine and the SQL executor
//! are synchronous, and a panic in one request ends only that request.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use googleapis_tonic_google_spanner_v1::google::spanner::v1 as pb;
use parking_lot::Mutex;
use pb::transaction_options::Mode;
use pb::transaction_selector::Selector;
use rowtree_db::{Database, ReadOnlyTransaction, ReadWriteTransaction, TimestampBound};
use rowtree_sql::{ExecuteResult, QueryMode, TxnRef};
use rowtree_types::{Code, Type, Value};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use crate::api::spanner::spanner_server::Spanner;
use crate::convert;
use crate::registry::{now_nanos, Registry};
use crate::status;

/// A string value longer than this is split across `PartialResultSet`s.
pub const CHUNK_BYTES: usize = 1 << 20;
/// A `PartialResultSet` is sent once its values reach about this size.
const FLUSH_BYTES: usize = 256 << 10;
/// A read-write transaction idle this long is rolled back.
pub const IDLE_READ_WRITE: Duration = Duration::from_secs(60);
/// A session (not multiplexed) unused this long is deleted.
pub const IDLE_SESSION: Duration = Duration::from_secs(3600);
/// The most sessions one database holds; creating another answers
/// RESOURCE_EXHAUSTED.
pub const MAX_SESSIONS: usize = 10_000;
/// The most read-write and partitioned DML transactions one session holds
/// at once; beginning another answers RESOURCE_EXHAUSTED.
pub const MAX_HELD_TRANSACTIONS: usize = 10_000;

/// The first byte of a read-only transaction's id; held transactions' ids
/// start with [`HELD_TAG`], so the two never collide.
const READ_ONLY_TAG: u8 = 0x52;
const HELD_TAG: u8 = 0x57;

/// A read-only transaction's id: the tag, the read timestamp (nanoseconds,
/// big-endian) and 7 random bytes so that two transactions begun at the same
/// timestamp still have different ids.
fn read_only_id(read_ts: u64) -> Vec<u8> {
    let mut id = Vec::with_capacity(16);
    id.push(READ_ONLY_TAG);
    id.extend_from_slice(&read_ts.to_be_bytes());
    id.extend_from_slice(&uuid::Uuid::new_v4().as_bytes()[..7]);
    id
}

/// The read timestamp in a read-only transaction's id, if `id` is one.
fn read_only_timestamp(id: &[u8]) -> Option<u64> {
    match id {
        [READ_ONLY_TAG, rest @ ..] if rest.len() == 15 => {
            Some(u64::from_be_bytes(rest[..8].try_into().ok()?))
        }
        _ => None,
    }
}

type Stream<T> = Pin<Box<dyn tokio_stream::Stream<Item = Result<T, Status>> + Send + 'static>>;

/// A transaction's state between requests.
enum TxnState {
    ReadOnly(ReadOnlyTransaction),
    ReadWrite(ReadWriteTransaction),
    /// A partitioned DML transaction: each statement runs in transactions of
    /// its own.
    PartitionedDml,
    /// Ended: the message to answer later uses with, and its code.
    Ended(Code, String),
}

struct TxnSlot {
    state: Mutex<TxnState>,
    last_use: AtomicI64,
    read_write: bool,
}

impl TxnSlot {
    fn new(state: TxnState) -> Arc<TxnSlot> {
        let read_write = matches!(state, TxnState::ReadWrite(_));
        Arc::new(TxnSlot {
            state: Mutex::new(state),
            last_use: AtomicI64::new(now_nanos()),
            read_write,
        })
    }

    fn touch(&self) {
        self.last_use.store(now_nanos(), Ordering::Relaxed);
    }
}

struct SessionState {
    name: String,
    database: String,
    db: Database,
    create_time: i64,
    multiplexed: bool,
    creator_role: String,
    last_use: AtomicI64,
    txns: Mutex<HashMap<Vec<u8>, Arc<TxnSlot>>>,
}

impl SessionState {
    fn to_pb(&self) -> pb::Session {
        pb::Session {
            name: self.name.clone(),
            create_time: Some(crate::registry::timestamp_pb(self.create_time)),
            approximate_last_use_time: Some(crate::registry::timestamp_pb(
                self.last_use.load(Ordering::Relaxed),
            )),
            creator_role: self.creator_role.clone(),
            multiplexed: self.multiplexed,
            ..Default::default()
        }
    }

    fn slot(&self, id: &[u8]) -> Result<Arc<TxnSlot>, Status> {
        if let Some(ts) = read_only_timestamp(id) {
            let snapshot = self
                .db
                .read_only(TimestampBound::ReadTimestamp(ts))
                .map_err(status::from_db)?;
            return Ok(TxnSlot::new(TxnState::ReadOnly(snapshot)));
        }
        let slot = self.txns.lock().get(id).cloned().ok_or_else(|| {
            Status::not_found(format!(
                "Transaction not found: {} (it ended, or was never begun in session {})",
                hex(id),
                self.name
            ))
        })?;
        slot.touch();
        Ok(slot)
    }

    /// Holds a read-write or partitioned DML transaction under a new id.
    fn register(&self, state: TxnState) -> Result<(Vec<u8>, Arc<TxnSlot>), Status> {
        let mut id = uuid::Uuid::new_v4().as_bytes().to_vec();
        id[0] = HELD_TAG;
        let slot = TxnSlot::new(state);
        let mut txns = self.txns.lock();
        if txns.len() >= MAX_HELD_TRANSACTIONS {
            return Err(Status::resource_exhausted(format!(
                "Session {} holds {MAX_HELD_TRANSACTIONS} transactions, the most it may; commit \
                 or roll back some, or use more sessions",
                self.name
            )));
        }
        txns.insert(id.clone(), slot.clone());
        Ok((id, slot))
    }

    fn forget(&self, id: &[u8]) {
        self.txns.lock().remove(id);
    }
}

/// Whether a selector asks for a single-use read-only snapshot (or nothing,
/// which means a strong one).
fn single_use_snapshot(selector: Option<&pb::TransactionSelector>) -> bool {
    match selector.and_then(|s| s.selector.as_ref()) {
        None => true,
        Some(Selector::SingleUse(options)) => {
            matches!(options.mode, None | Some(Mode::ReadOnly(_)))
        }
        _ => false,
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The data service.
#[derive(Clone)]
pub struct SpannerService {
    registry: Arc<Registry>,
    sessions: Arc<Mutex<Sessions>>,
}

/// Every live session by name, and how many each database holds (kept
/// beside the map so that the [`MAX_SESSIONS`] check costs nothing).
#[derive(Default)]
struct Sessions {
    by_name: HashMap<String, Arc<SessionState>>,
    per_database: HashMap<String, usize>,
}

impl Sessions {
    fn get(&self, name: &str) -> Option<&Arc<SessionState>> {
        self.by_name.get(name)
    }

    fn values(&self) -> impl Iterator<Item = &Arc<SessionState>> {
        self.by_name.values()
    }

    /// Adds `session` unless its database holds [`MAX_SESSIONS`] already.
    fn insert(&mut self, session: Arc<SessionState>) -> Result<(), Status> {
        let count = self
            .per_database
            .entry(session.database.clone())
            .or_default();
        if *count >= MAX_SESSIONS {
            return Err(Status::resource_exhausted(format!(
                "Database {} has {MAX_SESSIONS} sessions, the most it may hold; delete \
                 sessions that are no longer used (sessions unused for an hour are deleted)",
                session.database
            )));
        }
        *count += 1;
        self.by_name.insert(session.name.clone(), session);
        Ok(())
    }

    fn remove(&mut self, name: &str) -> Option<Arc<SessionState>> {
        let session = self.by_name.remove(name)?;
        if let Some(count) = self.per_database.get_mut(&session.database) {
            *count -= 1;
            if *count == 0 {
                self.per_database.remove(&session.database);
            }
        }
        Some(session)
    }
}

/// The transaction a request runs in, once its selector is resolved.
enum Selected {
    /// A single-use read-only snapshot; `report` is set when the client asked
    /// for its read timestamp (returned in the result's metadata).
    Snapshot {
        ro: ReadOnlyTransaction,
        report: Option<pb::Transaction>,
    },
    /// A transaction held by the session; `begun` is set when this request
    /// began it (the response returns it, a failure forgets it).
    Held {
        id: Vec<u8>,
        slot: Arc<TxnSlot>,
        begun: Option<pb::Transaction>,
    },
}

fn bound_from_proto(ro: &pb::transaction_options::ReadOnly) -> Result<TimestampBound, Status> {
    use pb::transaction_options::read_only::TimestampBound as B;
    Ok(match &ro.timestamp_bound {
        None | Some(B::Strong(_)) => TimestampBound::Strong,
        Some(B::ExactStaleness(d)) => {
            TimestampBound::ExactStaleness(convert::duration_from_proto(d))
        }
        Some(B::MaxStaleness(d)) => TimestampBound::MaxStaleness(convert::duration_from_proto(d)),
        Some(B::ReadTimestamp(t)) => TimestampBound::ReadTimestamp(nanos_u64(t)?),
        Some(B::MinReadTimestamp(t)) => TimestampBound::MinReadTimestamp(nanos_u64(t)?),
    })
}

fn nanos_u64(t: &prost_types::Timestamp) -> Result<u64, Status> {
    let n = t.seconds as i128 * 1_000_000_000 + t.nanos as i128;
    u64::try_from(n).map_err(|_| Status::invalid_argument("The read timestamp is before 1970"))
}

fn transaction_pb(id: Vec<u8>, read_ts: Option<u64>) -> pb::Transaction {
    pb::Transaction {
        id,
        read_timestamp: read_ts.map(|t| crate::registry::timestamp_pb(t as i64)),
        ..Default::default()
    }
}

impl SessionState {
    /// Starts a transaction with `options`, returning its id and slot.
    fn begin(
        &self,
        options: &pb::TransactionOptions,
    ) -> Result<(Vec<u8>, Arc<TxnSlot>, pb::Transaction), Status> {
        match &options.mode {
            Some(Mode::ReadOnly(ro)) => {
                let snapshot = self
                    .db
                    .read_only(bound_from_proto(ro)?)
                    .map_err(status::from_db)?;
                let ts = snapshot.read_timestamp();
                let id = read_only_id(ts);
                let slot = TxnSlot::new(TxnState::ReadOnly(snapshot));
                Ok((id.clone(), slot, transaction_pb(id, Some(ts))))
            }
            Some(Mode::ReadWrite(_)) => {
                let txn = self.db.begin();
                let (id, slot) = self.register(TxnState::ReadWrite(txn))?;
                Ok((id.clone(), slot, transaction_pb(id, None)))
            }
            Some(Mode::PartitionedDml(_)) => {
                let (id, slot) = self.register(TxnState::PartitionedDml)?;
                Ok((id.clone(), slot, transaction_pb(id, None)))
            }
            None => Err(Status::invalid_argument(
                "TransactionOptions must set a mode",
            )),
        }
    }

    /// Resolves a request's transaction selector.
    fn select(&self, selector: Option<&pb::TransactionSelector>) -> Result<Selected, Status> {
        self.select_pinned(selector, None)
    }

    /// [`SessionState::select`]; a single-use snapshot reads at `pinned`
    /// when given (a resumed stream continues in its first snapshot).
    fn select_pinned(
        &self,
        selector: Option<&pb::TransactionSelector>,
        pinned: Option<u64>,
    ) -> Result<Selected, Status> {
        let pin = |bound: TimestampBound| match pinned {
            Some(ts) => TimestampBound::ReadTimestamp(ts),
            None => bound,
        };
        match selector.and_then(|s| s.selector.as_ref()) {
            None => Ok(Selected::Snapshot {
                ro: self
                    .db
                    .read_only(pin(TimestampBound::Strong))
                    .map_err(status::from_db)?,
                report: None,
            }),
            Some(Selector::SingleUse(options)) => {
                let (bound, report) = match &options.mode {
                    Some(Mode::ReadOnly(ro)) => (bound_from_proto(ro)?, ro.return_read_timestamp),
                    None => (TimestampBound::Strong, false),
                    Some(_) => {
                        return Err(Status::invalid_argument(
                            "DML statements may not be performed in single-use transactions, to \
                             avoid replay; begin a read-write transaction",
                        ))
                    }
                };
                let ro = self.db.read_only(pin(bound)).map_err(status::from_db)?;
                let report = report.then(|| transaction_pb(Vec::new(), Some(ro.read_timestamp())));
                Ok(Selected::Snapshot { ro, report })
            }
            Some(Selector::Begin(options)) => {
                let (id, slot, txn) = self.begin(options)?;
                Ok(Selected::Held {
                    id,
                    slot,
                    begun: Some(txn),
                })
            }
            Some(Selector::Id(id)) => Ok(Selected::Held {
                id: id.clone(),
                slot: self.slot(id)?,
                begun: None,
            }),
        }
    }
}

/// What a statement produced, ready to encode.
struct Outcome {
    columns: Vec<(String, Type)>,
    stats: Option<pb::ResultSetStats>,
}

fn query_mode(mode: i32) -> QueryMode {
    match pb::execute_sql_request::QueryMode::try_from(mode) {
        Ok(pb::execute_sql_request::QueryMode::Plan) => QueryMode::Plan,
        Ok(pb::execute_sql_request::QueryMode::Profile)
        | Ok(pb::execute_sql_request::QueryMode::WithStats)
        | Ok(pb::execute_sql_request::QueryMode::WithPlanAndStats) => QueryMode::Profile,
        _ => QueryMode::Normal,
    }
}

/// A described plan as Spanner's plan nodes (see [`crate::query_plan`]).
fn plan_pb(tree: &rowtree_sql::PlanTree) -> pb::QueryPlan {
    crate::query_plan::to_pb(tree)
}

fn query_stats_pb(stats: &rowtree_sql::QueryStats) -> prost_types::Struct {
    let s = |v: String| prost_types::Value {
        kind: Some(prost_types::value::Kind::StringValue(v)),
    };
    let mut fields = std::collections::BTreeMap::new();
    fields.insert(
        "rows_returned".to_string(),
        s(stats.rows_returned.to_string()),
    );
    fields.insert(
        "rows_scanned".to_string(),
        s(stats.rows_scanned.to_string()),
    );
    fields.insert(
        "splits_touched".to_string(),
        s(stats.splits_touched.to_string()),
    );
    fields.insert(
        "elapsed_time".to_string(),
        s(format!("{:.2} msecs", stats.elapsed.as_secs_f64() * 1000.0)),
    );
    fields.insert(
        "cpu_time".to_string(),
        s(format!("{:.2} msecs", stats.elapsed.as_secs_f64() * 1000.0)),
    );
    prost_types::Struct {
        fields: fields.into_iter().collect(),
    }
}

/// Where rows go as they are produced.
trait RowOut {
    fn row(&mut self, columns: &[(String, Type)], row: Vec<Value>) -> Result<(), Status>;
    /// The transaction this request began, for the result's metadata.
    fn begun(&mut self, _txn: Option<&pb::Transaction>) {}
    /// The read timestamp of the single-use snapshot the statement reads in
    /// (resume tokens carry it).
    fn snapshot(&mut self, _read_ts: u64) {}
}

/// A resume token: the rows already sent, and for a single-use snapshot its
/// read timestamp, so that the resumed request reads the same data.
fn encode_token(rows: u64, snapshot: Option<u64>) -> Vec<u8> {
    let mut t = rows.to_be_bytes().to_vec();
    if let Some(ts) = snapshot {
        t.extend_from_slice(&ts.to_be_bytes());
    }
    t
}

/// The rows to skip and the snapshot to read at, from a resume token.
fn decode_token(token: &[u8]) -> Result<(u64, Option<u64>), Status> {
    let word = |b: &[u8]| u64::from_be_bytes(b.try_into().expect("8 bytes"));
    match token.len() {
        0 => Ok((0, None)),
        8 => Ok((word(token), None)),
        16 => Ok((word(&token[..8]), Some(word(&token[8..])))),
        _ => Err(Status::invalid_argument("Invalid resume token")),
    }
}

/// Collects rows for a unary `ResultSet`.
#[derive(Default)]
struct Collect {
    rows: Vec<prost_types::ListValue>,
    deadline: Option<Instant>,
}

/// Largest request other than a commit, in bytes (Spanner: "Request size
/// other than for commits: 10 MiB"). The transport admits messages up to
/// the commit limit ([`crate::MAX_REQUEST`]); the other requests are held to
/// this one here.
pub const MAX_REQUEST_BYTES: usize = 10 << 20;

/// Refuses a non-commit request larger than [`MAX_REQUEST_BYTES`].
fn check_size(request: &impl prost::Message) -> Result<(), Status> {
    let size = request.encoded_len();
    if size > MAX_REQUEST_BYTES {
        return Err(Status::invalid_argument(format!(
            "Request is too large: {size} bytes; requests other than commits may be at most \
             {MAX_REQUEST_BYTES} bytes"
        )));
    }
    Ok(())
}

/// The deadline a client set on its request (the `grpc-timeout` header:
/// digits and a unit, H M S m u n), so long statements stop when the client
/// has given up.
fn deadline_of(metadata: &tonic::metadata::MetadataMap) -> Option<Instant> {
    let v = metadata.get("grpc-timeout")?.to_str().ok()?;
    let (digits, unit) = v.split_at(v.len().checked_sub(1)?);
    let n: u64 = digits.parse().ok()?;
    let d = match unit {
        "H" => Duration::from_secs(n.saturating_mul(3600)),
        "M" => Duration::from_secs(n.saturating_mul(60)),
        "S" => Duration::from_secs(n),
        "m" => Duration::from_millis(n),
        "u" => Duration::from_micros(n),
        "n" => Duration::from_nanos(n),
        _ => return None,
    };
    Instant::now().checked_add(d)
}

/// DEADLINE_EXCEEDED once `deadline` has passed (checked every 1,024 rows).
fn check_deadline(deadline: Option<Instant>, rows: u64) -> Result<(), Status> {
    match deadline {
        Some(d) if rows % 1024 == 0 && Instant::now() > d => Err(Status::deadline_exceeded(
            "Deadline exceeded while the statement was running",
        )),
        _ => Ok(()),
    }
}

impl RowOut for Collect {
    fn row(&mut self, columns: &[(String, Type)], row: Vec<Value>) -> Result<(), Status> {
        check_deadline(self.deadline, self.rows.len() as u64)?;
        self.rows.push(prost_types::ListValue {
            values: convert::row_to_proto(&row, columns),
        });
        Ok(())
    }
}

/// Builds `PartialResultSet`s and sends them down a stream.
struct Chunker {
    tx: mpsc::Sender<Result<pb::PartialResultSet, Status>>,
    /// The row type, known from the first row (or the end).
    columns: Option<Vec<(String, Type)>>,
    txn: Option<pb::Transaction>,
    metadata_sent: bool,
    values: Vec<prost_types::Value>,
    bytes: usize,
    rows_sent: u64,
    /// Rows to skip (a resumed request).
    skip: u64,
    /// The single-use snapshot's read timestamp, for resume tokens.
    snapshot: Option<u64>,
    seen: u64,
    chunk_bytes: usize,
    deadline: Option<Instant>,
}

fn approx_size(v: &prost_types::Value) -> usize {
    use prost_types::value::Kind;
    match &v.kind {
        Some(Kind::StringValue(s)) => s.len() + 2,
        Some(Kind::ListValue(l)) => l.values.iter().map(approx_size).sum::<usize>() + 2,
        _ => 8,
    }
}

impl Chunker {
    fn new(tx: mpsc::Sender<Result<pb::PartialResultSet, Status>>, skip: u64) -> Chunker {
        Chunker {
            tx,
            columns: None,
            txn: None,
            metadata_sent: false,
            values: Vec::new(),
            bytes: 0,
            rows_sent: 0,
            skip,
            snapshot: None,
            seen: 0,
            chunk_bytes: CHUNK_BYTES,
            deadline: None,
        }
    }

    /// The metadata, in the first message only.
    fn metadata(&mut self) -> Option<pb::ResultSetMetadata> {
        if self.metadata_sent {
            return None;
        }
        self.metadata_sent = true;
        let columns = self.columns.clone().unwrap_or_default();
        Some(pb::ResultSetMetadata {
            transaction: self.txn.clone(),
            ..convert::metadata(&columns)
        })
    }

    fn send(&mut self, message: pb::PartialResultSet) -> Result<(), Status> {
        self.tx
            .blocking_send(Ok(message))
            .map_err(|_| Status::cancelled("The client cancelled the request"))
    }

    /// Sends the buffered values; `row_boundary` says whether they end a row
    /// (then the message carries a resume token).
    fn flush(&mut self, row_boundary: bool, chunked: bool) -> Result<(), Status> {
        let message = pb::PartialResultSet {
            metadata: self.metadata(),
            values: std::mem::take(&mut self.values),
            chunked_value: chunked,
            resume_token: if row_boundary && !chunked {
                encode_token(self.skip + self.rows_sent, self.snapshot)
            } else {
                Vec::new()
            },
            ..Default::default()
        };
        self.bytes = 0;
        self.send(message)
    }

    fn push_value(&mut self, v: prost_types::Value) -> Result<(), Status> {
        use prost_types::value::Kind;
        if let Some(Kind::StringValue(s)) = &v.kind {
            if s.len() > self.chunk_bytes {
                let mut rest = s.as_str();
                while rest.len() > self.chunk_bytes {
                    let mut cut = self.chunk_bytes;
                    while !rest.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    let (piece, tail) = rest.split_at(cut);
                    self.values.push(prost_types::Value {
                        kind: Some(Kind::StringValue(piece.to_string())),
                    });
                    self.flush(false, true)?;
                    rest = tail;
                }
                self.bytes += rest.len();
                self.values.push(prost_types::Value {
                    kind: Some(Kind::StringValue(rest.to_string())),
                });
                return Ok(());
            }
        }
        self.bytes += approx_size(&v);
        self.values.push(v);
        Ok(())
    }

    /// The last message: remaining values and the statistics.
    fn finish(mut self, stats: Option<pb::ResultSetStats>) -> Result<(), Status> {
        let message = pb::PartialResultSet {
            metadata: self.metadata(),
            values: std::mem::take(&mut self.values),
            resume_token: encode_token(self.skip + self.rows_sent, self.snapshot),
            stats,
            last: true,
            ..Default::default()
        };
        self.send(message)
    }
}

impl RowOut for Chunker {
    fn begun(&mut self, txn: Option<&pb::Transaction>) {
        self.txn = txn.cloned();
    }

    fn snapshot(&mut self, read_ts: u64) {
        self.snapshot = Some(read_ts);
    }

    fn row(&mut self, columns: &[(String, Type)], row: Vec<Value>) -> Result<(), Status> {
        if self.columns.is_none() {
            self.columns = Some(columns.to_vec());
        }
        self.seen += 1;
        check_deadline(self.deadline, self.seen)?;
        if self.seen <= self.skip {
            return Ok(());
        }
        for v in convert::row_to_proto(&row, columns) {
            self.push_value(v)?;
        }
        self.rows_sent += 1;
        if self.bytes >= FLUSH_BYTES {
            self.flush(true, false)?;
        }
        Ok(())
    }
}

/// Runs a statement in `selected`, sending rows to `out`.
fn run_statement(
    session: &SessionState,
    selected: &mut Selected,
    sql: &str,
    params: &rowtree_sql::Params,
    mode: QueryMode,
    out: &mut dyn RowOut,
) -> Result<Outcome, Status> {
    let mut failed: Option<Status> = None;
    let mut sink = |columns: &[(String, Type)], row: Vec<Value>| {
        if failed.is_none() {
            if let Err(e) = out.row(columns, row) {
                failed = Some(e);
            }
        }
        failed.is_none()
    };
    let result = match selected {
        Selected::Snapshot { ro, .. } => {
            rowtree_sql::execute_in(TxnRef::ReadOnly(ro), sql, params, mode, Some(&mut sink))
        }
        Selected::Held { id, slot, .. } => {
            let mut state = slot.state.lock();
            match &mut *state {
                TxnState::ReadOnly(ro) => rowtree_sql::execute_in(
                    TxnRef::ReadOnly(ro),
                    sql,
                    params,
                    mode,
                    Some(&mut sink),
                ),
                TxnState::ReadWrite(txn) => {
                    let r = rowtree_sql::execute_in(
                        TxnRef::ReadWrite(txn),
                        sql,
                        params,
                        mode,
                        Some(&mut sink),
                    );
                    if let Err(e) = &r {
                        if e.code == Code::Aborted {
                            end_aborted(&mut state, &e.message);
                        }
                    }
                    r
                }
                TxnState::PartitionedDml => {
                    drop(state);
                    return run_partitioned_dml(&session.db, sql, params).map(|count| Outcome {
                        columns: Vec::new(),
                        stats: Some(pb::ResultSetStats {
                            row_count: Some(pb::result_set_stats::RowCount::RowCountLowerBound(
                                count as i64,
                            )),
                            ..Default::default()
                        }),
                    });
                }
                TxnState::Ended(code, message) => {
                    let _ = id;
                    return Err(status::status(*code, message.clone()));
                }
            }
        }
    };
    if let Some(e) = failed {
        return Err(e);
    }
    let executed = result.map_err(status::from_sql)?;
    let plan = executed.plan.as_ref().map(plan_pb);
    Ok(match executed.result {
        ExecuteResult::Query(q) => Outcome {
            columns: q.columns,
            stats: Some(pb::ResultSetStats {
                query_plan: plan,
                query_stats: (mode == QueryMode::Profile).then(|| query_stats_pb(&q.stats)),
                row_count: None,
            }),
        },
        ExecuteResult::Dml {
            row_count,
            returning,
        } => {
            let columns = match returning {
                Some(r) => {
                    for row in r.rows {
                        out.row(&r.columns, row)?;
                    }
                    r.columns
                }
                None => Vec::new(),
            };
            Outcome {
                columns,
                stats: Some(pb::ResultSetStats {
                    query_plan: plan,
                    query_stats: None,
                    row_count: Some(pb::result_set_stats::RowCount::RowCountExact(
                        row_count as i64,
                    )),
                }),
            }
        }
        ExecuteResult::Ddl | ExecuteResult::Transaction(_) => {
            return Err(Status::invalid_argument(
                "Only queries and DML are allowed here",
            ))
        }
    })
}

/// Ends a read-write transaction that was aborted (its locks are freed).
fn end_aborted(state: &mut TxnState, message: &str) {
    if let TxnState::ReadWrite(_) = state {
        let old = std::mem::replace(state, TxnState::Ended(Code::Aborted, message.to_string()));
        if let TxnState::ReadWrite(txn) = old {
            txn.rollback();
        }
    }
}

/// Partitioned DML: the statement runs in a read-write transaction of its
/// own, retried while aborted, and commits; the row count is a lower bound,
/// as Spanner reports it.
fn run_partitioned_dml(
    db: &Database,
    sql: &str,
    params: &rowtree_sql::Params,
) -> Result<u64, Status> {
    let mut backoff = Duration::from_millis(1);
    let deadline = Instant::now() + Duration::from_secs(600);
    loop {
        let mut txn = db.begin();
        let r = rowtree_sql::execute_in(
            TxnRef::ReadWrite(&mut txn),
            sql,
            params,
            QueryMode::Normal,
            None,
        )
        .map_err(status::from_sql)
        .and_then(|e| match e.result {
            ExecuteResult::Dml {
                row_count,
                returning: None,
            } => Ok(row_count),
            ExecuteResult::Dml { .. } => Err(Status::invalid_argument(
                "THEN RETURN is not supported in partitioned DML",
            )),
            _ => Err(Status::invalid_argument(
                "Partitioned DML runs UPDATE and DELETE statements only",
            )),
        });
        let r = r.and_then(|count| txn.commit().map(|_| count).map_err(status::from_db));
        match r {
            Err(e) if e.code() == tonic::Code::Aborted && Instant::now() < deadline => {
                std::thread::sleep(backoff);
                backoff = (backoff * 2).min(Duration::from_millis(100));
            }
            other => return other,
        }
    }
}

impl SpannerService {
    pub fn new(registry: Arc<Registry>) -> SpannerService {
        SpannerService {
            registry,
            sessions: Arc::new(Mutex::new(Sessions::default())),
        }
    }

    fn session(&self, name: &str) -> Result<Arc<SessionState>, Status> {
        let session = self
            .sessions
            .lock()
            .get(name)
            .cloned()
            .ok_or_else(|| status::not_found("google.spanner.v1.Session", name))?;
        if !self.registry.has_database(&session.database) {
            self.sessions.lock().remove(name);
            return Err(status::not_found(
                "google.spanner.admin.database.v1.Database",
                &session.database,
            ));
        }
        session.last_use.store(now_nanos(), Ordering::Relaxed);
        Ok(session)
    }

    fn create(
        &self,
        database: &str,
        template: Option<&pb::Session>,
    ) -> Result<pb::Session, Status> {
        let hosted = self.registry.database(database)?;
        let name = format!("{database}/sessions/{}", uuid::Uuid::new_v4().simple());
        let now = now_nanos();
        let state = Arc::new(SessionState {
            name: name.clone(),
            database: database.to_string(),
            db: hosted.db,
            create_time: now,
            multiplexed: template.is_some_and(|t| t.multiplexed),
            creator_role: template.map(|t| t.creator_role.clone()).unwrap_or_default(),
            last_use: AtomicI64::new(now),
            txns: Mutex::new(HashMap::new()),
        });
        let out = state.to_pb();
        self.sessions.lock().insert(state)?;
        Ok(out)
    }

    /// Rolls back read-write transactions idle longer than
    /// [`IDLE_READ_WRITE`], forgets partitioned DML transactions as idle, and
    /// deletes sessions (not multiplexed) unused for [`IDLE_SESSION`];
    /// returns how many transactions and sessions were ended. Called
    /// periodically by the server.
    pub fn reap_idle(&self) -> usize {
        let now = now_nanos();
        let idle_since = |nanos: i64| Duration::from_nanos((now - nanos).max(0) as u64);
        let mut ended = 0;
        let expired: Vec<Arc<SessionState>> = {
            let mut sessions = self.sessions.lock();
            let names: Vec<String> = sessions
                .values()
                .filter(|s| {
                    !s.multiplexed && idle_since(s.last_use.load(Ordering::Relaxed)) >= IDLE_SESSION
                })
                .map(|s| s.name.clone())
                .collect();
            names.iter().filter_map(|n| sessions.remove(n)).collect()
        };
        for s in expired {
            // Dropping a read-write transaction rolls it back.
            let txns: Vec<Arc<TxnSlot>> = s.txns.lock().drain().map(|(_, v)| v).collect();
            ended += 1 + txns.len();
        }
        let sessions: Vec<Arc<SessionState>> = self.sessions.lock().values().cloned().collect();
        for s in sessions {
            let mut txns = s.txns.lock();
            txns.retain(|_, slot| {
                let idle = idle_since(slot.last_use.load(Ordering::Relaxed));
                if idle < IDLE_READ_WRITE {
                    return true;
                }
                if let Some(mut state) = slot.state.try_lock() {
                    ended += 1;
                    if slot.read_write {
                        end_aborted(
                            &mut state,
                            "Transaction was aborted because it was idle too long",
                        );
                        // Keep the ended slot a while so the client hears ABORTED.
                        return idle < IDLE_READ_WRITE * 2;
                    }
                    return false;
                }
                true
            });
        }
        ended
    }

    /// A unary ExecuteSql or Read: `work` fills a [`Collect`] (stopping at
    /// the client's deadline) and the rows become one `ResultSet`.
    async fn unary(
        inline: bool,
        deadline: Option<Instant>,
        work: impl FnOnce(&mut Collect) -> Result<(Outcome, Option<pb::Transaction>), Status>
            + Send
            + 'static,
    ) -> Result<Response<pb::ResultSet>, Status> {
        Self::run(inline, move || {
            let mut rows = Collect {
                deadline,
                ..Collect::default()
            };
            let (outcome, begun) = work(&mut rows)?;
            Ok(Response::new(pb::ResultSet {
                metadata: Some(pb::ResultSetMetadata {
                    transaction: begun,
                    ..convert::metadata(&outcome.columns)
                }),
                rows: rows.rows,
                stats: outcome.stats,
                ..Default::default()
            }))
        })
        .await
    }

    /// Runs `f` in the request's own task when it cannot wait long (a
    /// single-use read-only snapshot takes no locks; a strong one waits at most
    /// for a group commit in flight), else on a blocking thread. Handing every
    /// small read to the blocking pool would cost two thread switches per
    /// request, most of a point read's time. A panic fails only the request.
    async fn run<T: Send + 'static>(
        inline: bool,
        f: impl FnOnce() -> Result<T, Status> + Send + 'static,
    ) -> Result<T, Status> {
        if inline {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|_| {
                tracing::error!("a request panicked");
                Err(Status::internal("The request failed unexpectedly"))
            })
        } else {
            Self::blocking(f).await
        }
    }

    async fn blocking<T: Send + 'static>(
        f: impl FnOnce() -> Result<T, Status> + Send + 'static,
    ) -> Result<T, Status> {
        tokio::task::spawn_blocking(f).await.map_err(|e| {
            if e.is_panic() {
                tracing::error!("a request panicked: {e}");
            }
            Status::internal(format!("The request failed unexpectedly: {e}"))
        })?
    }

    /// Runs a statement for ExecuteSql / ExecuteStreamingSql: resolves the
    /// transaction, executes, and on failure forgets a transaction this
    /// request began.
    fn execute(
        session: &SessionState,
        r: &pb::ExecuteSqlRequest,
        out: &mut dyn RowOut,
    ) -> Result<(Outcome, Option<pb::Transaction>), Status> {
        let params = convert::params_from_proto(r.params.as_ref(), &r.param_types)?;
        let (_, pinned) = decode_token(&r.resume_token)?;
        let mut selected = session.select_pinned(r.transaction.as_ref(), pinned)?;
        match &selected {
            Selected::Held { begun, .. } => out.begun(begun.as_ref()),
            Selected::Snapshot { report, ro } => {
                out.begun(report.as_ref());
                out.snapshot(ro.read_timestamp());
            }
        }
        let result = run_statement(
            session,
            &mut selected,
            &r.sql,
            &params,
            query_mode(r.query_mode),
            out,
        );
        match selected {
            Selected::Held { id, begun, slot } => match result {
                Ok(o) => Ok((o, begun)),
                Err(e) => {
                    if begun.is_some() {
                        if let TxnState::ReadWrite(_) = &*slot.state.lock() {
                            session.forget(&id);
                        }
                    }
                    Err(e)
                }
            },
            Selected::Snapshot { report, .. } => result.map(|o| (o, report)),
        }
    }

    fn read_rows(
        session: &SessionState,
        r: &pb::ReadRequest,
        out: &mut dyn RowOut,
    ) -> Result<(Outcome, Option<pb::Transaction>), Status> {
        let (_, pinned) = decode_token(&r.resume_token)?;
        let mut selected = session.select_pinned(r.transaction.as_ref(), pinned)?;
        match &selected {
            Selected::Held { begun, .. } => out.begun(begun.as_ref()),
            Selected::Snapshot { report, ro } => {
                out.begun(report.as_ref());
                out.snapshot(ro.read_timestamp());
            }
        }
        let result = (|| {
            let catalog = session.db.catalog();
            let table = catalog
                .table(&r.table)
                .ok_or_else(|| Status::not_found(format!("Table not found: {}", r.table)))?;
            let index = (!r.index.is_empty()).then_some(r.index.as_str());
            let key_types = convert::key_types(&catalog, &table.name, index)?;
            let key_set = match (&r.key_set, index) {
                (Some(ks), None) => convert::key_set_from_proto(ks, &key_types)?,
                (Some(ks), Some(_)) => convert::index_key_set_from_proto(ks, &key_types)?,
                (None, _) => return Err(Status::invalid_argument("A read needs a key set")),
            };
            let mut columns = Vec::with_capacity(r.columns.len());
            for c in &r.columns {
                let (_, col) = table.column(c).ok_or_else(|| {
                    Status::not_found(format!("Column not found in table {}: {c}", table.name))
                })?;
                columns.push((col.name.clone(), col.ty.clone()));
            }
            let names: Vec<&str> = r.columns.iter().map(String::as_str).collect();
            let mut request = rowtree_db::ReadRequest::new(&table.name, &names, key_set);
            if let Some(ix) = index {
                request = request.with_index(ix);
            }
            if r.limit > 0 {
                request = request.with_limit(r.limit as usize);
            }
            let rows = match &mut selected {
                Selected::Snapshot { ro, .. } => ro.read(&request).map_err(status::from_db)?,
                Selected::Held { slot, .. } => {
                    let mut state = slot.state.lock();
                    match &mut *state {
                        TxnState::ReadOnly(ro) => ro.read(&request).map_err(status::from_db)?,
                        TxnState::ReadWrite(txn) => match txn.read(&request) {
                            Ok(rows) => rows,
                            Err(e) => {
                                if e.is_retryable() {
                                    end_aborted(&mut state, &e.to_string());
                                }
                                return Err(status::from_db(e));
                            }
                        },
                        TxnState::PartitionedDml => {
                            return Err(Status::invalid_argument(
                                "Reads are not allowed in partitioned DML transactions",
                            ))
                        }
                        TxnState::Ended(code, message) => {
                            return Err(status::status(*code, message.clone()))
                        }
                    }
                }
            };
            for row in rows {
                out.row(&columns, row)?;
            }
            Ok(Outcome {
                columns,
                stats: None,
            })
        })();
        match selected {
            Selected::Held { id, begun, .. } => match result {
                Ok(o) => Ok((o, begun)),
                Err(e) => {
                    if begun.is_some() {
                        session.forget(&id);
                    }
                    Err(e)
                }
            },
            Selected::Snapshot { report, .. } => result.map(|o| (o, report)),
        }
    }

    /// Runs `work` on a blocking thread that streams `PartialResultSet`s.
    fn stream(
        session: Arc<SessionState>,
        resume_token: &[u8],
        deadline: Option<Instant>,
        work: impl FnOnce(
                &SessionState,
                &mut Chunker,
            ) -> Result<(Outcome, Option<pb::Transaction>), Status>
            + Send
            + 'static,
    ) -> Stream<pb::PartialResultSet> {
        let (tx, rx) = mpsc::channel(4);
        let skip = decode_token(resume_token)
            .map(|(rows, _)| rows)
            .unwrap_or(0);
        let err_tx = tx.clone();
        tokio::task::spawn_blocking(move || {
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let mut chunker = Chunker::new(tx, skip);
                chunker.deadline = deadline;
                // The metadata goes with the first message: the row type is
                // known from the first row, or from the outcome if none.
                let r = work(&session, &mut chunker);
                match r {
                    Ok((outcome, _)) => {
                        if chunker.columns.is_none() {
                            chunker.columns = Some(outcome.columns);
                        }
                        chunker.finish(outcome.stats)
                    }
                    Err(e) => Err(e),
                }
            }));
            let result = outcome
                .unwrap_or_else(|_| Err(Status::internal("The request failed unexpectedly")));
            if let Err(e) = result {
                let _ = err_tx.blocking_send(Err(e));
            }
        });
        Box::pin(ReceiverStream::new(rx))
    }
}

#[tonic::async_trait]
impl Spanner for SpannerService {
    async fn create_session(
        &self,
        request: Request<pb::CreateSessionRequest>,
    ) -> Result<Response<pb::Session>, Status> {
        let r = request.into_inner();
        Ok(Response::new(self.create(&r.database, r.session.as_ref())?))
    }

    async fn batch_create_sessions(
        &self,
        request: Request<pb::BatchCreateSessionsRequest>,
    ) -> Result<Response<pb::BatchCreateSessionsResponse>, Status> {
        let r = request.into_inner();
        if r.session_count <= 0 {
            return Err(Status::invalid_argument("session_count must be positive"));
        }
        let count = r.session_count.min(100);
        let mut session = Vec::with_capacity(count as usize);
        for _ in 0..count {
            session.push(self.create(&r.database, r.session_template.as_ref())?);
        }
        Ok(Response::new(pb::BatchCreateSessionsResponse { session }))
    }

    async fn get_session(
        &self,
        request: Request<pb::GetSessionRequest>,
    ) -> Result<Response<pb::Session>, Status> {
        Ok(Response::new(
            self.session(&request.get_ref().name)?.to_pb(),
        ))
    }

    async fn list_sessions(
        &self,
        request: Request<pb::ListSessionsRequest>,
    ) -> Result<Response<pb::ListSessionsResponse>, Status> {
        let r = request.get_ref();
        self.registry.database(&r.database)?;
        let mut sessions: Vec<pb::Session> = self
            .sessions
            .lock()
            .values()
            .filter(|s| s.database == r.database)
            .map(|s| s.to_pb())
            .collect();
        sessions.sort_by(|a, b| a.name.cmp(&b.name));
        let start: usize = r.page_token.parse().unwrap_or(0);
        let size = if r.page_size <= 0 {
            usize::MAX
        } else {
            r.page_size as usize
        };
        let total = sessions.len();
        let page: Vec<pb::Session> = sessions.into_iter().skip(start).take(size).collect();
        let next = if start + page.len() < total {
            (start + page.len()).to_string()
        } else {
            String::new()
        };
        Ok(Response::new(pb::ListSessionsResponse {
            sessions: page,
            next_page_token: next,
        }))
    }

    async fn delete_session(
        &self,
        request: Request<pb::DeleteSessionRequest>,
    ) -> Result<Response<()>, Status> {
        let name = request.into_inner().name;
        let removed = self.sessions.lock().remove(&name);
        match removed {
            Some(s) => {
                // Dropping the transactions rolls back the read-write ones.
                let txns: Vec<Arc<TxnSlot>> = s.txns.lock().drain().map(|(_, v)| v).collect();
                Self::blocking(move || {
                    drop(txns);
                    Ok(())
                })
                .await?;
                Ok(Response::new(()))
            }
            None => Err(status::not_found("google.spanner.v1.Session", &name)),
        }
    }

    async fn execute_sql(
        &self,
        request: Request<pb::ExecuteSqlRequest>,
    ) -> Result<Response<pb::ResultSet>, Status> {
        let deadline = deadline_of(request.metadata());
        let r = request.into_inner();
        check_size(&r)?;
        let session = self.session(&r.session)?;
        let inline = single_use_snapshot(r.transaction.as_ref());
        Self::unary(inline, deadline, move |rows| {
            Self::execute(&session, &r, rows)
        })
        .await
    }

    type ExecuteStreamingSqlStream = Stream<pb::PartialResultSet>;

    async fn execute_streaming_sql(
        &self,
        request: Request<pb::ExecuteSqlRequest>,
    ) -> Result<Response<Self::ExecuteStreamingSqlStream>, Status> {
        let deadline = deadline_of(request.metadata());
        let r = request.into_inner();
        check_size(&r)?;
        let session = self.session(&r.session)?;
        let token = r.resume_token.clone();
        Ok(Response::new(Self::stream(
            session,
            &token,
            deadline,
            move |s, out| Self::execute(s, &r, out),
        )))
    }

    async fn execute_batch_dml(
        &self,
        request: Request<pb::ExecuteBatchDmlRequest>,
    ) -> Result<Response<pb::ExecuteBatchDmlResponse>, Status> {
        let r = request.into_inner();
        check_size(&r)?;
        let session = self.session(&r.session)?;
        if r.statements.is_empty() {
            return Err(Status::invalid_argument(
                "No statements in batch DML request",
            ));
        }
        Self::blocking(move || {
            let mut selected = session.select(r.transaction.as_ref())?;
            let (id, begun) = match &selected {
                Selected::Held { id, begun, slot } => {
                    if !matches!(&*slot.state.lock(), TxnState::ReadWrite(_) | TxnState::Ended(..)) {
                        return Err(Status::invalid_argument(
                            "Batch DML runs in read-write transactions only",
                        ));
                    }
                    (id.clone(), begun.clone())
                }
                Selected::Snapshot { .. } => {
                    return Err(Status::invalid_argument(
                        "DML statements may not be performed in single-use transactions, to avoid replay",
                    ))
                }
            };
            let mut result_sets = Vec::new();
            let mut failure = None;
            for (i, st) in r.statements.iter().enumerate() {
                let outcome = convert::params_from_proto(st.params.as_ref(), &st.param_types).and_then(|params| {
                    let mut rows = Collect::default();
                    run_statement(&session, &mut selected, &st.sql, &params, QueryMode::Normal, &mut rows)
                        .map(|o| (o, rows))
                });
                match outcome {
                    Ok((o, rows)) => {
                        let metadata = if i == 0 {
                            Some(pb::ResultSetMetadata {
                                transaction: begun.clone(),
                                ..convert::metadata(&o.columns)
                            })
                        } else {
                            Some(convert::metadata(&o.columns))
                        };
                        result_sets.push(pb::ResultSet {
                            metadata,
                            rows: rows.rows,
                            stats: o.stats,
                            ..Default::default()
                        });
                    }
                    Err(e) => {
                        failure = Some(e);
                        break;
                    }
                }
            }
            if failure.is_some() && result_sets.is_empty() && begun.is_some() {
                // The transaction this request began is not returned: the
                // client begins one explicitly when it retries.
                session.forget(&id);
            }
            Ok(Response::new(pb::ExecuteBatchDmlResponse {
                result_sets,
                status: Some(failure.as_ref().map(status::to_rpc).unwrap_or_else(status::rpc_ok)),
                precommit_token: None,
            }))
        })
        .await
    }

    async fn read(
        &self,
        request: Request<pb::ReadRequest>,
    ) -> Result<Response<pb::ResultSet>, Status> {
        let deadline = deadline_of(request.metadata());
        let r = request.into_inner();
        check_size(&r)?;
        let session = self.session(&r.session)?;
        let inline = single_use_snapshot(r.transaction.as_ref());
        Self::unary(inline, deadline, move |rows| {
            Self::read_rows(&session, &r, rows)
        })
        .await
    }

    type StreamingReadStream = Stream<pb::PartialResultSet>;

    async fn streaming_read(
        &self,
        request: Request<pb::ReadRequest>,
    ) -> Result<Response<Self::StreamingReadStream>, Status> {
        let deadline = deadline_of(request.metadata());
        let r = request.into_inner();
        check_size(&r)?;
        let session = self.session(&r.session)?;
        let token = r.resume_token.clone();
        Ok(Response::new(Self::stream(
            session,
            &token,
            deadline,
            move |s, out| Self::read_rows(s, &r, out),
        )))
    }

    async fn begin_transaction(
        &self,
        request: Request<pb::BeginTransactionRequest>,
    ) -> Result<Response<pb::Transaction>, Status> {
        let r = request.into_inner();
        let session = self.session(&r.session)?;
        let options = r.options.unwrap_or_default();
        Self::blocking(move || {
            let (_, _, txn) = session.begin(&options)?;
            Ok(Response::new(txn))
        })
        .await
    }

    async fn commit(
        &self,
        request: Request<pb::CommitRequest>,
    ) -> Result<Response<pb::CommitResponse>, Status> {
        let r = request.into_inner();
        let session = self.session(&r.session)?;
        Self::blocking(move || {
            use pb::commit_request::Transaction as T;
            let result = match &r.transaction {
                Some(T::TransactionId(id)) => {
                    let slot = session.slot(id)?;
                    let state = std::mem::replace(
                        &mut *slot.state.lock(),
                        TxnState::Ended(
                            Code::FailedPrecondition,
                            "Cannot use a transaction after Commit() or Rollback() has been called"
                                .into(),
                        ),
                    );
                    session.forget(id);
                    match state {
                        TxnState::ReadWrite(mut txn) => {
                            let mutations =
                                convert::mutations_from_proto(&r.mutations, &txn.catalog())?;
                            txn.buffer_all(mutations).map_err(status::from_db)?;
                            txn.commit().map_err(status::from_db)?
                        }
                        TxnState::ReadOnly(_) => {
                            return Err(Status::failed_precondition(
                                "Cannot commit a read-only transaction",
                            ))
                        }
                        TxnState::PartitionedDml => {
                            return Err(Status::failed_precondition(
                                "Cannot commit a partitioned DML transaction",
                            ))
                        }
                        TxnState::Ended(code, message) => {
                            return Err(status::status(code, message))
                        }
                    }
                }
                Some(T::SingleUseTransaction(options)) => {
                    if !matches!(options.mode, Some(Mode::ReadWrite(_))) {
                        return Err(Status::invalid_argument(
                            "A single-use transaction in Commit must be read-write",
                        ));
                    }
                    // Retried inside while aborted: nothing reached the client yet.
                    let mutations =
                        convert::mutations_from_proto(&r.mutations, &session.db.catalog())?;
                    session.db.write(mutations).map_err(status::from_db)?
                }
                None => {
                    return Err(Status::invalid_argument(
                        "Commit needs a transaction id or a single-use transaction",
                    ))
                }
            };
            Ok(Response::new(pb::CommitResponse {
                commit_timestamp: Some(crate::registry::timestamp_pb(
                    result.commit_timestamp as i64,
                )),
                commit_stats: r
                    .return_commit_stats
                    .then_some(pb::commit_response::CommitStats {
                        mutation_count: result.mutation_count as i64,
                    }),
                ..Default::default()
            }))
        })
        .await
    }

    async fn rollback(
        &self,
        request: Request<pb::RollbackRequest>,
    ) -> Result<Response<()>, Status> {
        let r = request.into_inner();
        let session = self.session(&r.session)?;
        Self::blocking(move || {
            if let Ok(slot) = session.slot(&r.transaction_id) {
                let state = std::mem::replace(
                    &mut *slot.state.lock(),
                    TxnState::Ended(
                        Code::FailedPrecondition,
                        "Cannot use a transaction after Commit() or Rollback() has been called"
                            .into(),
                    ),
                );
                if let TxnState::ReadWrite(txn) = state {
                    txn.rollback();
                }
                session.forget(&r.transaction_id);
            }
            Ok(Response::new(()))
        })
        .await
    }

    async fn partition_query(
        &self,
        request: Request<pb::PartitionQueryRequest>,
    ) -> Result<Response<pb::PartitionResponse>, Status> {
        let r = request.into_inner();
        check_size(&r)?;
        let session = self.session(&r.session)?;
        Self::blocking(move || {
            // Validate the statement by planning it in the transaction.
            let params = convert::params_from_proto(r.params.as_ref(), &r.param_types)?;
            let mut selected = session.select(r.transaction.as_ref())?;
            let (txn, begun) = match &selected {
                Selected::Held { id, begun, .. } => (id.clone(), begun.clone()),
                Selected::Snapshot { .. } => {
                    return Err(Status::invalid_argument(
                        "PartitionQuery needs a read-only transaction id or begin",
                    ))
                }
            };
            run_statement(
                &session,
                &mut selected,
                &r.sql,
                &params,
                QueryMode::Plan,
                &mut Collect::default(),
            )?;
            // One partition: the whole query (Spanner may return any number).
            Ok(Response::new(pb::PartitionResponse {
                partitions: vec![pb::Partition {
                    partition_token: [b"q".as_slice(), &txn].concat(),
                }],
                transaction: begun,
            }))
        })
        .await
    }

    async fn partition_read(
        &self,
        request: Request<pb::PartitionReadRequest>,
    ) -> Result<Response<pb::PartitionResponse>, Status> {
        let r = request.into_inner();
        check_size(&r)?;
        let session = self.session(&r.session)?;
        Self::blocking(move || {
            let selected = session.select(r.transaction.as_ref())?;
            let (txn, begun) = match &selected {
                Selected::Held { id, begun, .. } => (id.clone(), begun.clone()),
                Selected::Snapshot { .. } => {
                    return Err(Status::invalid_argument(
                        "PartitionRead needs a read-only transaction id or begin",
                    ))
                }
            };
            let catalog = session.db.catalog();
            if catalog.table(&r.table).is_none() {
                return Err(Status::not_found(format!("Table not found: {}", r.table)));
            }
            Ok(Response::new(pb::PartitionResponse {
                partitions: vec![pb::Partition {
                    partition_token: [b"r".as_slice(), &txn].concat(),
                }],
                transaction: begun,
            }))
        })
        .await
    }

    type BatchWriteStream = Stream<pb::BatchWriteResponse>;

    async fn batch_write(
        &self,
        request: Request<pb::BatchWriteRequest>,
    ) -> Result<Response<Self::BatchWriteStream>, Status> {
        let r = request.into_inner();
        check_size(&r)?;
        let session = self.session(&r.session)?;
        let (tx, rx) = mpsc::channel(16);
        tokio::task::spawn_blocking(move || {
            for (i, group) in r.mutation_groups.iter().enumerate() {
                let result = (|| {
                    let mutations =
                        convert::mutations_from_proto(&group.mutations, &session.db.catalog())?;
                    session.db.write(mutations).map_err(status::from_db)
                })();
                let response = match result {
                    Ok(c) => pb::BatchWriteResponse {
                        indexes: vec![i as i32],
                        status: Some(status::rpc_ok()),
                        commit_timestamp: Some(crate::registry::timestamp_pb(
                            c.commit_timestamp as i64,
                        )),
                    },
                    Err(e) => pb::BatchWriteResponse {
                        indexes: vec![i as i32],
                        status: Some(status::to_rpc(&e)),
                        commit_timestamp: None,
                    },
                };
                if tx.blocking_send(Ok(response)).is_err() {
                    return;
                }
            }
        });
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grpc_timeouts_become_deadlines() {
        let mut m = tonic::metadata::MetadataMap::new();
        assert!(deadline_of(&m).is_none());
        m.insert("grpc-timeout", "250m".parse().unwrap());
        let d = deadline_of(&m).unwrap();
        let left = d.saturating_duration_since(Instant::now());
        assert!(left <= Duration::from_millis(250) && left > Duration::from_millis(100));
        m.insert("grpc-timeout", "2x".parse().unwrap());
        assert!(deadline_of(&m).is_none());
        let past = Some(Instant::now() - Duration::from_secs(1));
        assert!(check_deadline(past, 1024).is_err());
        assert!(check_deadline(past, 1023).is_ok());
    }

    /// A service over an in-memory registry with one database.
    fn service() -> (SpannerService, String) {
        let registry = Arc::new(Registry::open(None, rowtree_db::Options::default()).unwrap());
        registry
            .create_instance(crate::registry::InstanceMeta {
                name: "projects/p/instances/i".into(),
                config: String::new(),
                display_name: "i".into(),
                node_count: 1,
                processing_units: 1000,
                labels: Default::default(),
                create_time: 0,
                update_time: 0,
                edition: 0,
            })
            .unwrap();
        let db = "projects/p/instances/i/databases/db".to_string();
        registry.create_database(&db, &[], 0).unwrap();
        (SpannerService::new(registry), db)
    }

    fn read_only_options() -> pb::TransactionOptions {
        pb::TransactionOptions {
            mode: Some(Mode::ReadOnly(Default::default())),
            ..Default::default()
        }
    }

    #[test]
    fn read_only_transactions_hold_nothing() {
        let (service, db) = service();
        let session = service.create(&db, None).unwrap();
        let state = service.session(&session.name).unwrap();
        let mut ids = Vec::new();
        for _ in 0..1000 {
            let (id, _, txn) = state.begin(&read_only_options()).unwrap();
            assert_eq!(txn.id, id);
            ids.push((id, txn.read_timestamp.unwrap()));
        }
        assert!(
            state.txns.lock().is_empty(),
            "read-only transactions are not held"
        );
        // Every id still reads at its own timestamp.
        for (id, ts) in ids.iter().step_by(97) {
            let slot = state.slot(id).unwrap();
            let TxnState::ReadOnly(ro) = &*slot.state.lock() else {
                panic!("a read-only slot");
            };
            let want = ts.seconds as u64 * 1_000_000_000 + ts.nanos as u64;
            assert_eq!(ro.read_timestamp(), want);
        }
        // Ids at the same timestamp differ; made-up ids are not found.
        assert_ne!(read_only_id(7), read_only_id(7));
        let mut forged = ids[0].0.clone();
        forged[0] = HELD_TAG;
        let e = state.slot(&forged).err().expect("not found");
        assert_eq!(e.code(), tonic::Code::NotFound);
        assert!(state.slot(&[READ_ONLY_TAG, 1, 2]).is_err());
        // A read timestamp older than the retention period is refused.
        let e = state.slot(&read_only_id(1)).err().expect("too old");
        assert_eq!(e.code(), tonic::Code::FailedPrecondition, "{e:?}");
    }

    #[test]
    fn idle_sessions_and_transactions_are_reaped() {
        let (service, db) = service();
        let old = service.create(&db, None).unwrap().name;
        let fresh = service.create(&db, None).unwrap().name;
        let multiplexed = service
            .create(
                &db,
                Some(&pb::Session {
                    multiplexed: true,
                    ..Default::default()
                }),
            )
            .unwrap()
            .name;
        let rw = pb::TransactionOptions {
            mode: Some(Mode::ReadWrite(Default::default())),
            ..Default::default()
        };
        let (held, _, _) = service.session(&fresh).unwrap().begin(&rw).unwrap();
        let (idle, idle_slot, _) = service.session(&fresh).unwrap().begin(&rw).unwrap();
        let long_ago = now_nanos() - IDLE_SESSION.as_nanos() as i64 - 1;
        for name in [&old, &multiplexed] {
            let s = service.sessions.lock().get(name.as_str()).cloned().unwrap();
            s.last_use.store(long_ago, Ordering::Relaxed);
        }
        idle_slot.last_use.store(
            now_nanos() - IDLE_READ_WRITE.as_nanos() as i64 - 1,
            Ordering::Relaxed,
        );
        // The old session and the idle transaction end; the rest stay.
        assert_eq!(service.reap_idle(), 2);
        assert_eq!(
            service.session(&old).err().map(|e| e.code()),
            Some(tonic::Code::NotFound)
        );
        let fresh = service.session(&fresh).unwrap();
        assert!(service.session(&multiplexed).is_ok());
        assert!(fresh.slot(&held).is_ok());
        let ended = fresh.slot(&idle).unwrap();
        assert!(matches!(
            &*ended.state.lock(),
            TxnState::Ended(Code::Aborted, _)
        ));
    }

    #[test]
    fn sessions_and_held_transactions_are_bounded() {
        let (service, db) = service();
        for _ in 0..MAX_SESSIONS {
            service.create(&db, None).unwrap();
        }
        let e = service.create(&db, None).expect_err("one too many");
        assert_eq!(e.code(), tonic::Code::ResourceExhausted, "{e:?}");
        let name = service
            .sessions
            .lock()
            .by_name
            .keys()
            .next()
            .cloned()
            .unwrap();
        let session = service.session(&name).unwrap();
        for _ in 0..MAX_HELD_TRANSACTIONS {
            session.register(TxnState::PartitionedDml).unwrap();
        }
        let e = session
            .register(TxnState::PartitionedDml)
            .err()
            .expect("full");
        assert_eq!(e.code(), tonic::Code::ResourceExhausted, "{e:?}");
        // Read-only transactions need no room.
        assert!(session.begin(&read_only_options()).is_ok());
    }

    #[test]
    fn long_strings_are_chunked_with_resume_tokens_on_row_boundaries() {
        let (tx, mut rx) = mpsc::channel(100);
        let mut c = Chunker::new(tx, 0);
        c.chunk_bytes = 4;
        let cols = vec![("s".to_string(), Type::String)];
        c.row(&cols, vec![Value::String("abcdefghij".into())])
            .unwrap();
        c.finish(None).unwrap();
        let mut messages = Vec::new();
        while let Ok(m) = rx.try_recv() {
            messages.push(m.unwrap());
        }
        assert_eq!(messages.len(), 3);
        assert!(messages[0].metadata.is_some());
        assert!(messages[1].metadata.is_none() && messages[2].metadata.is_none());
        assert!(messages[0].chunked_value && messages[1].chunked_value);
        assert!(messages[0].resume_token.is_empty());
        let text: String = messages
            .iter()
            .flat_map(|m| m.values.iter())
            .map(|v| match &v.kind {
                Some(prost_types::value::Kind::StringValue(s)) => s.clone(),
                _ => String::new(),
            })
            .collect();
        assert_eq!(text, "abcdefghij");
        assert_eq!(messages[2].resume_token, 1u64.to_be_bytes().to_vec());
        assert!(messages[2].last);
    }
}
