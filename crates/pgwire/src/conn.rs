//! One client connection: the protocol's message flow.
//!
//! [`serve`] runs a connection from its first byte to its end:
//!
//! 1. **Startup.** An `SSLRequest` is answered `S` and the stream becomes
//!    TLS when the server has a certificate, `N` otherwise (`GSSENCRequest`
//!    is always `N`); with a certificate, a connection that did not ask for
//!    TLS is refused; then the StartupMessage names the user and database.
//!    With an auth token configured the client must send it as its password
//!    (cleartext, which is why a non-loopback port also needs TLS). The
//!    database is looked up in the registry (`crate::resolve_database`); a
//!    missing or GoogleSQL database ends the connection with a FATAL
//!    `3D000`. Then AuthenticationOk, the ParameterStatus messages,
//!    BackendKeyData and the first ReadyForQuery.
//! 2. **Simple query** (`Q`): the text is split into statements, each run in
//!    turn with its results sent in text format; the first error stops the
//!    rest. Outside a block, a message of several queries and DML statements
//!    runs them in one implicit transaction, committed after the last (all
//!    or nothing, as PostgreSQL does). One ReadyForQuery ends the message.
//! 3. **Extended query** (`P`arse, `B`ind, `D`escribe, `E`xecute, `S`ync,
//!    `C`lose, `H` flush): named and unnamed prepared statements and portals;
//!    parameters typed by the client or inferred (`crate::infer`); results in
//!    text or binary as the Bind asked, `max_rows` honoured with
//!    PortalSuspended. After an error, messages are skipped until Sync, as
//!    PostgreSQL does.
//! 4. **COPY FROM STDIN**: CopyData until CopyDone or CopyFail.
//!
//! Every read is bounded: a message longer than [`MAX_MESSAGE_BYTES`] ends
//! the connection with a FATAL `54000` before its body is buffered, and a
//! connection holds at most [`MAX_STATEMENTS`] prepared statements and
//! [`MAX_PORTALS`] portals. Statements run on blocking threads (the SQL
//! layer is synchronous); a panic there ends that connection only.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;

use bytes::{Buf, BufMut, BytesMut};
use pgwire::messages::data::{DataRow, FieldDescription, ParameterDescription, RowDescription};
use pgwire::messages::extendedquery::{Bind, Describe, Execute, Parse};
use pgwire::messages::response::{
    CommandComplete, ErrorResponse, ReadyForQuery, TransactionStatus,
};
use pgwire::messages::startup::{Authentication, BackendKeyData, ParameterStatus, SecretKey};
use pgwire::messages::{
    DecodeContext, PgWireBackendMessage, PgWireFrontendMessage, ProtocolVersion,
};
use rowtree_sql::Params;
use rowtree_types::{Type, Value};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::backend::{leading_words, Backend, Outcome, Status};
use crate::errors::PgError;
use crate::settings::Settings;
use crate::{infer, values, Shared};

/// The longest frontend message accepted (a Query, Bind or CopyData).
pub const MAX_MESSAGE_BYTES: usize = 64 << 20;
/// The longest startup packet.
const MAX_STARTUP_BYTES: usize = 10_000;
/// Prepared statements one connection may hold.
pub const MAX_STATEMENTS: usize = 10_000;
/// Portals one connection may hold.
pub const MAX_PORTALS: usize = 1_000;
/// Output buffered before it is written without waiting for a flush point.
const FLUSH_BYTES: usize = 64 << 10;

const SSL_REQUEST: i32 = 80_877_103;
const GSSENC_REQUEST: i32 = 80_877_104;
const CANCEL_REQUEST: i32 = 80_877_102;
const PROTOCOL_3_0: i32 = 196_608;

/// A connection failed at the transport level (nothing more can be sent).
#[derive(Debug, thiserror::Error)]
pub enum ConnError {
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
    #[error("protocol: {0}")]
    Protocol(String),
    #[error("closed")]
    Closed,
}

type Stream = Box<dyn Io>;

/// A byte stream a connection runs over (TCP or TLS over TCP).
pub trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

struct Prepared {
    sql: String,
    /// The OIDs the client gave (0: unspecified).
    oids: Vec<u32>,
    given: Vec<Option<Type>>,
}

/// A bound statement, and its rows once run (by Describe or a first
/// Execute that hit `max_rows`).
struct Portal {
    sql: String,
    params: Params,
    formats: Vec<i16>,
    pending: Option<Pending>,
}

struct Pending {
    columns: Vec<(String, Type)>,
    rows: VecDeque<Vec<Value>>,
    tag: String,
    /// A statement without rows, run by Execute (or early, by Describe):
    /// its outcome, sent once.
    command: Option<Outcome>,
}

struct Conn {
    stream: Stream,
    input: BytesMut,
    out: BytesMut,
    backend: Option<Backend>,
    statements: HashMap<String, Prepared>,
    portals: HashMap<String, Portal>,
    /// After an error in the extended protocol: skip until Sync.
    skipping: bool,
}

/// Serves one connection until it ends.
pub async fn serve(stream: tokio::net::TcpStream, shared: Arc<Shared>) {
    let _ = stream.set_nodelay(true);
    let peer = stream.peer_addr().ok();
    let result = run(Box::new(stream), shared).await;
    if let Err(e) = result {
        tracing::debug!(?peer, error = %e, "PostgreSQL connection ended");
    }
}

async fn run(stream: Stream, shared: Arc<Shared>) -> Result<(), ConnError> {
    let mut conn = Conn {
        stream,
        input: BytesMut::with_capacity(8 << 10),
        out: BytesMut::with_capacity(8 << 10),
        backend: None,
        statements: HashMap::new(),
        portals: HashMap::new(),
        skipping: false,
    };
    // Startup, with the SSL negotiation before it.
    let mut secure = false;
    let startup = loop {
        let packet = conn.read_startup_packet().await?;
        let mut b = &packet[..];
        let code = b.get_i32();
        match code {
            SSL_REQUEST => match &shared.tls {
                Some(acceptor) if conn.input.is_empty() => {
                    conn.stream.write_all(b"S").await?;
                    let tls = acceptor.clone();
                    let plain = std::mem::replace(&mut conn.stream, Box::new(tokio::io::empty()));
                    let tls_stream =
                        tokio::time::timeout(std::time::Duration::from_secs(10), tls.accept(plain))
                            .await
                            .map_err(|_| ConnError::Protocol("TLS handshake timed out".into()))??;
                    conn.stream = Box::new(tls_stream);
                    secure = true;
                }
                _ => conn.stream.write_all(b"N").await?,
            },
            GSSENC_REQUEST => conn.stream.write_all(b"N").await?,
            CANCEL_REQUEST => return Ok(()),
            PROTOCOL_3_0 => break parse_startup(b)?,
            other => {
                let e = PgError::fatal(
                    "08P01",
                    format!(
                        "unsupported frontend protocol {}.{}: this server speaks 3.0",
                        other >> 16,
                        other & 0xffff
                    ),
                );
                conn.send_error(&e);
                conn.flush().await?;
                return Ok(());
            }
        }
    };
    let user = startup.get("user").cloned().unwrap_or_default();
    if shared.tls.is_some() && !secure {
        // With a certificate the port is TLS only, like the gRPC port: the
        // password (the token) never crosses in clear.
        conn.send_error(&PgError::fatal(
            "28000",
            "this server accepts TLS connections only: connect with sslmode=require",
        ));
        conn.flush().await?;
        return Ok(());
    }
    if let Some(token) = &shared.token {
        conn.send(PgWireBackendMessage::Authentication(
            Authentication::CleartextPassword,
        ));
        conn.flush().await?;
        let (kind, body) = conn.read_message().await?;
        let password = if kind == b'p' {
            body.as_ref()
                .split(|&b| b == 0)
                .next()
                .unwrap_or_default()
                .to_vec()
        } else {
            Vec::new()
        };
        if !token.matches(&password) {
            conn.send_error(&PgError::fatal(
                "28P01",
                format!(
                    "password authentication failed for user \"{user}\": send the server's \
                     auth token (--auth-token-file) as the password"
                ),
            ));
            conn.flush().await?;
            return Ok(());
        }
    }
    let database = startup
        .get("database")
        .cloned()
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| user.clone());
    let shared2 = shared.clone();
    let resolved =
        tokio::task::spawn_blocking(move || crate::resolve_database(&shared2, &database))
            .await
            .map_err(|e| ConnError::Protocol(e.to_string()))?;
    let db = match resolved {
        Ok(db) => db,
        Err(e) => {
            conn.send_error(&e);
            conn.flush().await?;
            return Ok(());
        }
    };
    let settings = Settings::new(&user, &startup);
    let reported = settings.reported();
    conn.backend = Some(Backend::new(db, settings));
    conn.send(PgWireBackendMessage::Authentication(Authentication::Ok));
    for (name, value) in reported {
        conn.send(PgWireBackendMessage::ParameterStatus(ParameterStatus::new(
            name, value,
        )));
    }
    let pid = shared.next_pid();
    conn.send(PgWireBackendMessage::BackendKeyData(BackendKeyData::new(
        pid,
        SecretKey::I32(pid.wrapping_mul(0x5bd1_e995)),
    )));
    conn.ready();
    conn.flush().await?;
    loop {
        let (kind, body) = conn.read_message().await?;
        if kind == b'X' {
            return Ok(());
        }
        if conn.skipping && kind != b'S' {
            continue;
        }
        let message = decode(kind, body)?;
        match message {
            PgWireFrontendMessage::Query(q) => conn.simple_query(&q.query).await?,
            PgWireFrontendMessage::Parse(p) => {
                let r = conn.parse(p);
                conn.extended_result(r);
            }
            PgWireFrontendMessage::Bind(b) => {
                let r = conn.bind(b).await;
                conn.extended_result(r);
            }
            PgWireFrontendMessage::Describe(d) => {
                let r = conn.describe(d).await;
                conn.extended_result(r);
            }
            PgWireFrontendMessage::Execute(e) => {
                let r = conn.execute(e).await;
                conn.extended_result(r);
                if matches!(conn.mode_copy(), Some(true)) {
                    conn.flush().await?;
                    let r = conn.copy_in().await?;
                    conn.extended_result(r.map(|_| ()));
                }
            }
            PgWireFrontendMessage::Close(c) => {
                let name = c.name.clone().unwrap_or_default();
                if c.target_type == b'S' {
                    conn.statements.remove(&name);
                } else {
                    conn.portals.remove(&name);
                }
                conn.send(PgWireBackendMessage::CloseComplete(
                    pgwire::messages::extendedquery::CloseComplete::new(),
                ));
            }
            PgWireFrontendMessage::Flush(_) => conn.flush().await?,
            PgWireFrontendMessage::Sync(_) => {
                conn.skipping = false;
                conn.portals.remove("");
                conn.ready();
                conn.flush().await?;
            }
            PgWireFrontendMessage::CopyData(_)
            | PgWireFrontendMessage::CopyDone(_)
            | PgWireFrontendMessage::CopyFail(_) => {
                // Stray COPY messages outside a COPY are ignored, as
                // PostgreSQL does.
            }
            _ => {
                conn.send_error(&PgError::fatal("08P01", "unexpected message"));
                conn.flush().await?;
                return Ok(());
            }
        }
        if conn.backend.is_none() {
            // The session was lost to an internal error (reported): end the
            // connection rather than answer without one.
            conn.flush().await?;
            return Ok(());
        }
        if conn.out.len() >= FLUSH_BYTES {
            conn.flush().await?;
        }
    }
}

fn parse_startup(mut b: &[u8]) -> Result<BTreeMap<String, String>, ConnError> {
    let mut out = BTreeMap::new();
    loop {
        let Some(end) = b.iter().position(|&c| c == 0) else {
            return Err(ConnError::Protocol("unterminated startup parameter".into()));
        };
        if end == 0 {
            return Ok(out);
        }
        let key = String::from_utf8_lossy(&b[..end]).into_owned();
        b = &b[end + 1..];
        let Some(vend) = b.iter().position(|&c| c == 0) else {
            return Err(ConnError::Protocol("unterminated startup value".into()));
        };
        let value = String::from_utf8_lossy(&b[..vend]).into_owned();
        b = &b[vend + 1..];
        out.insert(key, value);
    }
}

/// Decodes a complete message (type byte and body) with pgwire's codec.
fn decode(kind: u8, body: BytesMut) -> Result<PgWireFrontendMessage, ConnError> {
    let mut buf = BytesMut::with_capacity(body.len() + 5);
    buf.put_u8(kind);
    buf.put_i32(body.len() as i32 + 4);
    buf.put_slice(&body);
    let mut ctx = DecodeContext::new(ProtocolVersion::PROTOCOL3_0);
    ctx.awaiting_frontend_ssl = false;
    ctx.awaiting_frontend_startup = false;
    match PgWireFrontendMessage::decode(&mut buf, &ctx) {
        Ok(Some(m)) => Ok(m),
        Ok(None) => Err(ConnError::Protocol("incomplete message".into())),
        Err(e) => Err(ConnError::Protocol(e.to_string())),
    }
}

fn status_byte(s: Status) -> TransactionStatus {
    match s {
        Status::Idle => TransactionStatus::Idle,
        Status::InBlock => TransactionStatus::Transaction,
        Status::Failed => TransactionStatus::Error,
    }
}

/// Whether a statement returns rows (so Describe runs it to learn its
/// columns).
fn returns_rows(sql: &str) -> bool {
    let w = leading_words(sql, 1);
    matches!(
        w.first().map(String::as_str),
        Some("select" | "with" | "values" | "show" | "table")
    ) || sql.to_ascii_lowercase().contains("returning")
}

impl Conn {
    fn backend(&mut self) -> &mut Backend {
        // Set at startup; `blocking` puts it back after each statement, and
        // the message loop ends the connection if a panic lost it.
        self.backend.as_mut().expect("set after startup")
    }

    fn send(&mut self, m: PgWireBackendMessage) {
        if let Err(e) = m.encode(&mut self.out) {
            tracing::warn!(error = %e, "cannot encode a PostgreSQL message");
        }
    }

    fn send_error(&mut self, e: &PgError) {
        self.send(PgWireBackendMessage::ErrorResponse(ErrorResponse::new(
            e.fields(),
        )));
    }

    fn ready(&mut self) {
        let status = self.backend.as_ref().map_or(Status::Idle, |b| b.status());
        self.send(PgWireBackendMessage::ReadyForQuery(ReadyForQuery::new(
            status_byte(status),
        )));
    }

    fn mode_copy(&self) -> Option<bool> {
        self.backend.as_ref().map(|b| b.copy_format().is_some())
    }

    async fn flush(&mut self) -> Result<(), ConnError> {
        if !self.out.is_empty() {
            self.stream.write_all(&self.out).await?;
            self.out.clear();
        }
        self.stream.flush().await?;
        Ok(())
    }

    async fn fill(&mut self, n: usize) -> Result<(), ConnError> {
        while self.input.len() < n {
            self.input.reserve(n - self.input.len());
            let read = self.stream.read_buf(&mut self.input).await?;
            if read == 0 {
                return Err(ConnError::Closed);
            }
        }
        Ok(())
    }

    async fn read_startup_packet(&mut self) -> Result<BytesMut, ConnError> {
        self.fill(4).await?;
        let len = i32::from_be_bytes(self.input[..4].try_into().unwrap_or_default());
        if !(8..=MAX_STARTUP_BYTES as i32).contains(&len) {
            return Err(ConnError::Protocol(format!("bad startup length {len}")));
        }
        self.fill(len as usize).await?;
        let mut packet = self.input.split_to(len as usize);
        packet.advance(4);
        Ok(packet)
    }

    /// Reads one message: its type byte and body. A declared length past
    /// [`MAX_MESSAGE_BYTES`] ends the connection before the body is read.
    async fn read_message(&mut self) -> Result<(u8, BytesMut), ConnError> {
        self.fill(5).await?;
        let kind = self.input[0];
        let len = i32::from_be_bytes(self.input[1..5].try_into().unwrap_or_default());
        if len < 4 || len as usize > MAX_MESSAGE_BYTES {
            let e = PgError::fatal(
                "54000",
                format!("message of {len} bytes refused: the limit is {MAX_MESSAGE_BYTES} bytes"),
            );
            self.send_error(&e);
            let _ = self.flush().await;
            return Err(ConnError::Protocol(e.message));
        }
        self.fill(len as usize + 1).await?;
        let mut message = self.input.split_to(len as usize + 1);
        message.advance(5);
        Ok((kind, message))
    }

    /// Runs `f` with the backend in this task when `inline`, else on a
    /// blocking thread ([`Conn::blocking`]). Inline is for work that cannot
    /// wait long: planning and type inference, and a query outside a
    /// transaction block, which is a strong single-use read (it takes no
    /// locks and waits at most for a commit group in flight, see
    /// `rowtree_txn::CommitPipeline::strong_read_ts`). Handing each of those
    /// to the blocking pool costs two thread switches per message, more
    /// than a point read itself. A panic inline loses the session, as on a
    /// blocking thread.
    async fn run<T: Send + 'static>(
        &mut self,
        inline: bool,
        f: impl FnOnce(&mut Backend) -> T + Send + 'static,
    ) -> Result<T, PgError> {
        if !inline {
            return self.blocking(f).await;
        }
        let Some(mut backend) = self.backend.take() else {
            return Err(PgError::fatal(
                "XX000",
                "the session was lost to an internal error",
            ));
        };
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&mut backend))) {
            Ok(r) => {
                self.backend = Some(backend);
                Ok(r)
            }
            Err(_) => {
                tracing::error!("a statement panicked; its connection is closed");
                Err(PgError::fatal(
                    "XX000",
                    "internal error, the connection is closed: a statement failed unexpectedly",
                ))
            }
        }
    }

    /// Whether `sql` may run inline ([`Conn::run`]): a query (`SELECT`,
    /// `VALUES`) outside a transaction block, on a database whose reads do
    /// not wait now (`Database::reads_may_block`: for simulated node
    /// capacity, or for a flush running late; that wait would stall the
    /// runtime's other connections).
    fn runs_inline(&self, sql: &str) -> bool {
        let idle = self
            .backend
            .as_ref()
            .is_some_and(|b| matches!(b.status(), Status::Idle) && !b.database().reads_may_block());
        idle && matches!(
            leading_words(sql, 1).first().map(String::as_str),
            Some("select" | "values")
        )
    }

    /// The parameter types of `sql` when known without probing
    /// ([`infer::known`]).
    fn inferred(
        &self,
        sql: &str,
        given: &[Option<Type>],
        shapes: &[u8],
    ) -> Option<Vec<Option<Type>>> {
        infer::known(self.backend.as_ref()?, sql, given, shapes)
    }

    /// Runs `f` with the backend on a blocking thread.
    async fn blocking<T: Send + 'static>(
        &mut self,
        f: impl FnOnce(&mut Backend) -> T + Send + 'static,
    ) -> Result<T, PgError> {
        let Some(mut backend) = self.backend.take() else {
            return Err(PgError::fatal(
                "XX000",
                "the session was lost to an internal error",
            ));
        };
        let joined = tokio::task::spawn_blocking(move || {
            let r = f(&mut backend);
            (backend, r)
        })
        .await;
        match joined {
            Ok((backend, r)) => {
                self.backend = Some(backend);
                Ok(r)
            }
            Err(e) => Err(PgError::fatal(
                "XX000",
                format!("internal error, the connection is closed: {e}"),
            )),
        }
    }

    /// Sends the ParameterStatus messages of parameters a SET changed.
    fn send_changed(&mut self) {
        let Some(backend) = self.backend.as_mut() else {
            return;
        };
        let changed = backend.settings.take_changed();
        for (name, value) in changed {
            self.send(PgWireBackendMessage::ParameterStatus(ParameterStatus::new(
                name, value,
            )));
        }
    }

    fn row_description(&mut self, columns: &[(String, Type)], formats: &[i16]) {
        let fields = columns
            .iter()
            .enumerate()
            .map(|(i, (name, ty))| {
                // An expression without a name is PostgreSQL's `?column?`.
                let name = if name.is_empty() {
                    "?column?".to_string()
                } else {
                    name.clone()
                };
                FieldDescription::new(
                    name,
                    0,
                    0,
                    values::type_oid(ty),
                    values::type_size(ty),
                    -1,
                    format_of(formats, i),
                )
            })
            .collect();
        self.send(PgWireBackendMessage::RowDescription(RowDescription::new(
            fields,
        )));
    }

    fn data_row(&mut self, columns: &[(String, Type)], row: &[Value], formats: &[i16]) {
        let mut data = BytesMut::new();
        let mut text = String::new();
        for (i, v) in row.iter().enumerate() {
            if v.is_null() {
                data.put_i32(-1);
                continue;
            }
            let at = data.len();
            data.put_i32(0);
            if format_of(formats, i) == 1 {
                let ty = columns.get(i).map_or(Type::String, |c| c.1.clone());
                values::to_binary(&ty, v, &mut data);
            } else {
                text.clear();
                values::to_text(v, &mut text);
                data.put_slice(text.as_bytes());
            }
            let len = (data.len() - at - 4) as i32;
            data[at..at + 4].copy_from_slice(&len.to_be_bytes());
        }
        self.send(PgWireBackendMessage::DataRow(DataRow::new(
            data,
            row.len() as i16,
        )));
    }

    async fn simple_query(&mut self, text: &str) -> Result<(), ConnError> {
        let statements: Vec<(String, usize)> =
            rowtree_parser::split_statements_in(rowtree_types::Dialect::PostgreSql, text)
                .into_iter()
                .map(|s| (s.text.to_string(), s.offset))
                .collect();
        if statements.is_empty() {
            self.send(PgWireBackendMessage::EmptyQueryResponse(
                pgwire::messages::response::EmptyQueryResponse::new(),
            ));
        }
        // Several DML statements in one message form one implicit
        // transaction, as in PostgreSQL: all of them or none. (Messages with
        // DDL or transaction statements run statement by statement.)
        let implicit = statements.len() > 1
            && statements.iter().all(|(s, _)| {
                matches!(
                    leading_words(s, 1).first().map(String::as_str),
                    Some("select" | "insert" | "update" | "delete" | "with" | "values")
                )
            })
            && statements.iter().any(|(s, _)| {
                matches!(
                    leading_words(s, 1).first().map(String::as_str),
                    Some("insert" | "update" | "delete")
                )
            });
        let implicit = implicit
            && self
                .run(true, |b| b.begin_implicit())
                .await
                .unwrap_or(false);
        let mut failed = false;
        for (sql, offset) in statements {
            let char_offset = text[..offset.min(text.len())].chars().count();
            let run_sql = sql.clone();
            let inline = self.runs_inline(&sql);
            let r = self
                .run(inline, move |b| {
                    let r = b.execute(&run_sql, &Params::new(), char_offset);
                    fallback(b, &run_sql, r)
                })
                .await;
            let r = match r {
                Ok(r) => r,
                Err(fatal) => {
                    self.send_error(&fatal);
                    self.flush().await?;
                    return Err(ConnError::Protocol(fatal.message));
                }
            };
            match r {
                Ok(Outcome::Rows { columns, rows, tag }) => {
                    self.row_description(&columns, &[]);
                    for row in &rows {
                        self.data_row(&columns, row, &[]);
                        if self.out.len() >= FLUSH_BYTES {
                            self.flush().await?;
                        }
                    }
                    self.complete(tag);
                }
                Ok(Outcome::Command(tag)) => {
                    self.complete(tag);
                    self.send_changed();
                }
                Ok(Outcome::Empty) => self.send(PgWireBackendMessage::EmptyQueryResponse(
                    pgwire::messages::response::EmptyQueryResponse::new(),
                )),
                Ok(Outcome::CopyIn { columns }) => {
                    self.copy_in_response(columns);
                    self.flush().await?;
                    if self.copy_in().await?.is_err() {
                        break;
                    }
                }
                Err(e) => {
                    self.send_error(&e);
                    failed = true;
                    break;
                }
            }
        }
        if implicit {
            let ended = self.blocking(move |b| b.end_implicit(!failed)).await;
            if let Err(e) = ended.and_then(|r| r) {
                self.send_error(&e);
            }
        }
        self.ready();
        self.flush().await
    }

    fn complete(&mut self, tag: String) {
        self.send(PgWireBackendMessage::CommandComplete(CommandComplete::new(
            tag,
        )));
    }

    /// CopyInResponse: the overall format is textual (0) for both text and
    /// CSV COPY, as are the columns.
    fn copy_in_response(&mut self, columns: usize) {
        self.send(PgWireBackendMessage::CopyInResponse(
            pgwire::messages::copy::CopyInResponse::new(0, columns as i16, vec![0; columns]),
        ));
    }

    /// Reads CopyData until CopyDone or CopyFail; sends the CommandComplete
    /// or the error. `Ok(Err(_))` is a COPY that failed (already reported).
    async fn copy_in(&mut self) -> Result<Result<(), PgError>, ConnError> {
        let mut failed: Option<PgError> = None;
        loop {
            let (kind, body) = self.read_message().await?;
            match kind {
                b'd' => {
                    if failed.is_some() {
                        continue;
                    }
                    let data = body.freeze();
                    let r = self
                        .blocking(move |b| b.copy_data(&data))
                        .await
                        .and_then(|r| r);
                    if let Err(e) = r {
                        failed = Some(e);
                    }
                }
                b'c' => {
                    if let Some(e) = failed {
                        self.send_error(&e);
                        return Ok(Err(e));
                    }
                    let r = self.blocking(|b| b.copy_done()).await.and_then(|r| r);
                    return Ok(match r {
                        Ok(Outcome::Command(tag)) => {
                            self.complete(tag);
                            Ok(())
                        }
                        Ok(_) => Ok(()),
                        Err(e) => {
                            self.send_error(&e);
                            Err(e)
                        }
                    });
                }
                b'f' => {
                    let message = String::from_utf8_lossy(
                        body.as_ref().split(|&b| b == 0).next().unwrap_or_default(),
                    )
                    .into_owned();
                    let e = match failed {
                        Some(e) => e,
                        None => self.backend().copy_fail(&message),
                    };
                    self.send_error(&e);
                    return Ok(Err(e));
                }
                b'H' | b'S' => {}
                b'X' => return Err(ConnError::Closed),
                _ => {
                    let e = PgError::new("08P01", "unexpected message during COPY");
                    self.backend().copy_fail("protocol violation");
                    self.send_error(&e);
                    return Ok(Err(e));
                }
            }
        }
    }

    /// An extended-protocol step's error: reported, and messages skipped
    /// until Sync.
    fn extended_result(&mut self, r: Result<(), PgError>) {
        if let Err(e) = r {
            if let Some(b) = self.backend.as_mut() {
                b.fail_block();
            }
            self.send_error(&e);
            self.skipping = true;
        }
    }

    fn parse(&mut self, p: Parse) -> Result<(), PgError> {
        let name = p.name.clone().unwrap_or_default();
        if !name.is_empty() && self.statements.contains_key(&name) {
            return Err(PgError::new(
                "42P05",
                format!("prepared statement \"{name}\" already exists"),
            ));
        }
        if self.statements.len() >= MAX_STATEMENTS && !self.statements.contains_key(&name) {
            return Err(PgError::new(
                "54000",
                format!("a connection may hold at most {MAX_STATEMENTS} prepared statements"),
            ));
        }
        let given = p
            .type_oids
            .iter()
            .map(|&o| values::type_of_oid(o))
            .collect::<Result<Vec<_>, _>>()?;
        self.statements.insert(
            name,
            Prepared {
                sql: p.query.clone(),
                oids: p.type_oids.clone(),
                given,
            },
        );
        self.send(PgWireBackendMessage::ParseComplete(
            pgwire::messages::extendedquery::ParseComplete::new(),
        ));
        Ok(())
    }

    async fn bind(&mut self, b: Bind) -> Result<(), PgError> {
        let stmt_name = b.statement_name.clone().unwrap_or_default();
        let portal_name = b.portal_name.clone().unwrap_or_default();
        let Some(stmt) = self.statements.get(&stmt_name) else {
            return Err(PgError::new(
                "26000",
                format!("prepared statement \"{stmt_name}\" does not exist"),
            ));
        };
        if self.portals.len() >= MAX_PORTALS && !self.portals.contains_key(&portal_name) {
            return Err(PgError::new(
                "54000",
                format!("a connection may hold at most {MAX_PORTALS} portals"),
            ));
        }
        let sql = stmt.sql.clone();
        let oids = stmt.oids.clone();
        let given = stmt.given.clone();
        let n = b.parameters.len();
        let format = |i: usize| -> i16 {
            match b.parameter_format_codes.len() {
                0 => 0,
                1 => b.parameter_format_codes[0],
                _ => b.parameter_format_codes.get(i).copied().unwrap_or(0),
            }
        };
        // Untyped parameters are typed from the statement (by what a text
        // value looks like; a binary one, whose type the client took from
        // our ParameterDescription, by the statement alone).
        let shapes: Vec<u8> = (0..n)
            .map(|i| match (&b.parameters[i], format(i)) {
                (None, _) => b'n',
                (Some(v), 0) => infer::shape(Some(&String::from_utf8_lossy(v))),
                (Some(_), _) => b'?',
            })
            .collect();
        let needs_inference = (0..n).any(|i| given.get(i).cloned().flatten().is_none());
        let types: Vec<Option<Type>> = if !needs_inference {
            given.clone()
        } else if let Some(types) = self.inferred(&sql, &given, &shapes) {
            types
        } else {
            // Probing may execute DML (and so read storage): never in the
            // event loop, which serves other connections too.
            let sql2 = sql.clone();
            let given2 = given.clone();
            self.blocking(move |be| infer::infer(be, &sql2, &given2, &shapes))
                .await?
        };
        let mut params = Params::new();
        for i in 0..n {
            let name = format!("p{}", i + 1);
            let Some(raw) = &b.parameters[i] else {
                match types.get(i).cloned().flatten() {
                    Some(t) if given.get(i).cloned().flatten().is_some() => {
                        params.insert(name, (t, Value::Null));
                    }
                    _ => params.insert_untyped_null(name),
                }
                continue;
            };
            let ty = types.get(i).cloned().flatten().unwrap_or(Type::String);
            let value = if format(i) == 1 {
                let oid = match oids.get(i).copied().unwrap_or(0) {
                    0 => values::type_oid(&ty),
                    o => o,
                };
                values::from_binary(&ty, oid, raw)?
            } else {
                values::from_text(&ty, &String::from_utf8_lossy(raw))?
            };
            params.insert(name, (ty, value));
        }
        self.portals.insert(
            portal_name,
            Portal {
                sql,
                params,
                formats: b.result_column_format_codes.clone(),
                pending: None,
            },
        );
        self.send(PgWireBackendMessage::BindComplete(
            pgwire::messages::extendedquery::BindComplete::new(),
        ));
        Ok(())
    }

    async fn describe(&mut self, d: Describe) -> Result<(), PgError> {
        let name = d.name.clone().unwrap_or_default();
        if d.target_type == b'S' {
            let Some(stmt) = self.statements.get(&name) else {
                return Err(PgError::new(
                    "26000",
                    format!("prepared statement \"{name}\" does not exist"),
                ));
            };
            let sql = stmt.sql.clone();
            let given = stmt.given.clone();
            let oids = stmt.oids.clone();
            // Planning a query for its columns is quick; probing for
            // parameter types may execute DML: that goes to a blocking
            // thread (see `bind`).
            let inline = self.inferred(&sql, &given, &[]).is_some();
            let (types, columns) = self
                .run(inline, move |be| {
                    let types = infer::infer(be, &sql, &given, &[]);
                    let mut params = Params::new();
                    for (i, t) in types.iter().enumerate() {
                        let name = format!("p{}", i + 1);
                        match t {
                            Some(t) => {
                                params.insert(name, (t.clone(), Value::Null));
                            }
                            None => params.insert_untyped_null(name),
                        }
                    }
                    for (i, t) in types.iter().enumerate() {
                        if let Some(t) = t {
                            params.insert(format!("p{}", i + 1), (t.clone(), infer::sample(t)));
                        }
                    }
                    let columns = be.describe(&sql, &params);
                    (types, columns)
                })
                .await?;
            // As in PostgreSQL, the types described are the statement's from
            // now on: Binds send values of these types.
            if let Some(stmt) = self.statements.get_mut(&name) {
                stmt.given = types.clone();
            }
            let param_oids: Vec<u32> = types
                .iter()
                .enumerate()
                .map(|(i, t)| match oids.get(i) {
                    Some(&o) if o != values::oid::UNSPECIFIED && o != values::oid::UNKNOWN => o,
                    _ => t.as_ref().map_or(values::oid::TEXT, values::type_oid),
                })
                .collect();
            self.send(PgWireBackendMessage::ParameterDescription(
                ParameterDescription::new(param_oids),
            ));
            match columns {
                Some(c) => self.row_description(&c, &[]),
                None => self.send(PgWireBackendMessage::NoData(
                    pgwire::messages::data::NoData::new(),
                )),
            }
            return Ok(());
        }
        let Some(portal) = self.portals.get(&name) else {
            return Err(PgError::new(
                "34000",
                format!("portal \"{name}\" does not exist"),
            ));
        };
        if let Some(p) = &portal.pending {
            let columns = p.columns.clone();
            let formats = portal.formats.clone();
            if p.command.is_none() {
                self.row_description(&columns, &formats);
            } else {
                self.send(PgWireBackendMessage::NoData(
                    pgwire::messages::data::NoData::new(),
                ));
            }
            return Ok(());
        }
        if !returns_rows(&portal.sql) {
            self.send(PgWireBackendMessage::NoData(
                pgwire::messages::data::NoData::new(),
            ));
            return Ok(());
        }
        // Run it now to learn its columns; Execute sends the rows.
        let outcome = self.run_portal(&name).await?;
        let formats = self
            .portals
            .get(&name)
            .map(|p| p.formats.clone())
            .unwrap_or_default();
        let pending = match outcome {
            Outcome::Rows { columns, rows, tag } => {
                self.row_description(&columns, &formats);
                Pending {
                    columns,
                    rows: rows.into(),
                    tag,
                    command: None,
                }
            }
            other => {
                self.send(PgWireBackendMessage::NoData(
                    pgwire::messages::data::NoData::new(),
                ));
                Pending {
                    columns: Vec::new(),
                    rows: VecDeque::new(),
                    tag: String::new(),
                    command: Some(other),
                }
            }
        };
        if let Some(p) = self.portals.get_mut(&name) {
            p.pending = Some(pending);
        }
        Ok(())
    }

    async fn run_portal(&mut self, name: &str) -> Result<Outcome, PgError> {
        let portal = self
            .portals
            .get(name)
            .ok_or_else(|| PgError::new("34000", format!("portal \"{name}\" does not exist")))?;
        let sql = portal.sql.clone();
        let params = portal.params.clone();
        let inline = self.runs_inline(&sql);
        let r = self
            .run(inline, move |b| {
                let r = b.execute(&sql, &params, 0);
                fallback(b, &sql, r)
            })
            .await?;
        self.send_changed();
        r
    }

    async fn execute(&mut self, e: Execute) -> Result<(), PgError> {
        let name = e.name.clone().unwrap_or_default();
        let max_rows = if e.max_rows <= 0 {
            usize::MAX
        } else {
            e.max_rows as usize
        };
        let has_pending = self
            .portals
            .get(&name)
            .ok_or_else(|| PgError::new("34000", format!("portal \"{name}\" does not exist")))?
            .pending
            .is_some();
        if !has_pending {
            let outcome = self.run_portal(&name).await?;
            let pending = match outcome {
                Outcome::Rows { columns, rows, tag } => Pending {
                    columns,
                    rows: rows.into(),
                    tag,
                    command: None,
                },
                other => Pending {
                    columns: Vec::new(),
                    rows: VecDeque::new(),
                    tag: String::new(),
                    command: Some(other),
                },
            };
            if let Some(p) = self.portals.get_mut(&name) {
                p.pending = Some(pending);
            }
        }
        let Some(portal) = self.portals.get_mut(&name) else {
            return Ok(());
        };
        let formats = portal.formats.clone();
        let Some(pending) = portal.pending.as_mut() else {
            return Ok(());
        };
        if let Some(command) = pending.command.take() {
            // A command runs once; executing its portal again does nothing.
            pending.command = Some(Outcome::Command(String::new()));
            match command {
                Outcome::Command(tag) if tag.is_empty() => {
                    self.send(PgWireBackendMessage::EmptyQueryResponse(
                        pgwire::messages::response::EmptyQueryResponse::new(),
                    ))
                }
                Outcome::Command(tag) => self.complete(tag),
                Outcome::Empty => self.send(PgWireBackendMessage::EmptyQueryResponse(
                    pgwire::messages::response::EmptyQueryResponse::new(),
                )),
                Outcome::CopyIn { columns } => {
                    self.copy_in_response(columns);
                }
                Outcome::Rows { .. } => {}
            }
            return Ok(());
        }
        let take = max_rows.min(pending.rows.len());
        let batch: Vec<Vec<Value>> = pending.rows.drain(..take).collect();
        let done = pending.rows.is_empty();
        let columns = pending.columns.clone();
        let tag = pending.tag.clone();
        for row in &batch {
            self.data_row(&columns, row, &formats);
        }
        if done {
            // A finished portal executes again as empty, like PostgreSQL's.
            let tag = if tag.starts_with("SELECT") {
                format!("SELECT {}", batch.len())
            } else {
                tag
            };
            self.complete(tag);
            if let Some(p) = self.portals.get_mut(&name) {
                if let Some(pending) = p.pending.as_mut() {
                    pending.tag = "SELECT 0".into();
                }
            }
        } else {
            self.send(PgWireBackendMessage::PortalSuspended(
                pgwire::messages::extendedquery::PortalSuspended::new(),
            ));
        }
        Ok(())
    }
}

/// psql's other describe queries (those `crate::catalog` does not answer)
/// are answered with no rows when the engine cannot run them; see the
/// catalog module. Only for psql (its `application_name`), so that another
/// client's failing catalog query still gets its error.
fn fallback(b: &mut Backend, sql: &str, r: Result<Outcome, PgError>) -> Result<Outcome, PgError> {
    match r {
        Err(e)
            if sql.contains("FROM pg_catalog.")
                && e.sqlstate != "25P02"
                && b.status() == Status::Idle
                && b.settings.application_name() == "psql" =>
        {
            Ok(crate::catalog::empty())
        }
        other => other,
    }
}

fn format_of(formats: &[i16], i: usize) -> i16 {
    match formats.len() {
        0 => 0,
        1 => formats[0],
        _ => formats.get(i).copied().unwrap_or(0),
    }
}
