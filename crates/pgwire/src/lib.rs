//! PostgreSQL's wire protocol (v3) over Rowtree: `rowtree serve --pg-port`.
//!
//! Spanner's PostgreSQL interface is reached by PostgreSQL tools through
//! PGAdapter, a proxy that speaks PostgreSQL's protocol on one side and
//! Spanner's gRPC API on the other. Rowtree speaks the protocol itself, so
//! `psql`, `pgbench` and PostgreSQL drivers (psycopg, node-postgres, ...)
//! connect directly. This crate is that second door onto the *same*
//! databases the gRPC API serves: [`PgServer::start`] takes the server's
//! [`Registry`], and a connection is a session on one PostgreSQL-dialect
//! database of it (docs/design/postgresql.md, D8).
//!
//! The pieces, in the order a connection meets them:
//!
//! - [`conn`]: the message flow of one connection (startup, TLS, password,
//!   simple and extended query, COPY), every read bounded; message types and
//!   their encoding are the `pgwire` crate's;
//! - [`backend`]: the session behind it, with PostgreSQL's transaction
//!   rules mapped onto Rowtree's transactions, producing [`outcome`]s;
//! - [`infer`]: types for parameters the client left untyped;
//! - [`values`]: type OIDs and the text and binary forms of values;
//! - [`errors`]: SQLSTATEs for Rowtree's error codes;
//! - [`settings`]: `SET`/`SHOW` and the reported parameters;
//! - [`copy`]: `COPY ... FROM STDIN`;
//! - [`catalog`]: psql's describe queries (`\dt`, `\d name`).
//!
//! **Which database.** The startup message's `database` is either a full
//! name (`projects/p/instances/i/databases/d`) or a database id (`d`),
//! looked up across the server's instances (an id held by two instances
//! must be given in full). Connecting does not create a database unless the
//! server was started with `--pg-create-databases`: then an unknown id is
//! created as a PostgreSQL-dialect database in the instance
//! [`DEFAULT_INSTANCE`] (created too if missing), which is what test
//! scripts and `pgbench` against a fresh server want. A GoogleSQL database
//! is refused (`3D000`): its SQL is not PostgreSQL's.
//!
//! **Exposure** follows the gRPC port's rule (`rowtree_server::security`):
//! a loopback address needs nothing; any other address needs TLS and the
//! auth token (sent as the password), or `--insecure`.

pub mod backend;
pub mod catalog;
pub mod conn;
pub mod copy;
pub mod errors;
pub mod infer;
pub mod outcome;
pub mod settings;
pub mod values;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

use rowtree_db::Database;
use rowtree_server::registry::{InstanceMeta, Registry};
use rowtree_server::security::Security;

pub use errors::PgError;

/// The instance databases created on connect live in
/// (`--pg-create-databases`).
pub const DEFAULT_INSTANCE: &str = "projects/rowtree/instances/pg";

/// Connections served at once; one more is refused with `53300`.
pub const MAX_CONNECTIONS: usize = 1_000;

/// `DatabaseDialect::Postgresql` in the registry.
const POSTGRESQL: i32 = 2;

/// How the PostgreSQL port serves.
#[derive(Debug, Clone)]
pub struct PgConfig {
    /// Where to listen.
    pub addr: SocketAddr,
    /// Create an unknown database on connect (see the crate docs).
    pub create_databases: bool,
}

/// What every connection shares.
pub struct Shared {
    registry: Arc<Registry>,
    create_databases: bool,
    token: Option<rowtree_server::security::Token>,
    tls: Option<tokio_rustls::TlsAcceptor>,
    pids: AtomicI32,
}

impl Shared {
    fn next_pid(&self) -> i32 {
        self.pids.fetch_add(1, Ordering::Relaxed)
    }
}

/// The PostgreSQL port, listening.
pub struct PgServer {
    /// The address bound (port 0 picks a free one).
    pub local_addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl PgServer {
    /// Listens on `config.addr` and serves connections on `registry`'s
    /// databases. Refuses an address the exposure rule refuses.
    pub async fn start(
        config: PgConfig,
        registry: Arc<Registry>,
        security: &Security,
    ) -> Result<PgServer, String> {
        let exposure = rowtree_server::security::check_exposure(&[config.addr], security)
            .map_err(|e| e.to_string())?;
        if let Some(warning) = exposure.warning() {
            tracing::warn!("{warning}");
        }
        let tls = security.tls.as_ref().map(|t| {
            let mut cfg = (*t.rustls_config()).clone();
            cfg.alpn_protocols = vec![b"postgresql".to_vec()];
            tokio_rustls::TlsAcceptor::from(Arc::new(cfg))
        });
        let listener = tokio::net::TcpListener::bind(config.addr)
            .await
            .map_err(|e| format!("cannot listen on {}: {e}", config.addr))?;
        let local_addr = listener.local_addr().map_err(|e| e.to_string())?;
        let shared = Arc::new(Shared {
            registry,
            create_databases: config.create_databases,
            token: security.token.clone(),
            tls,
            pids: AtomicI32::new(1000),
        });
        let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
        let task = tokio::spawn(async move {
            loop {
                let (stream, _) = match listener.accept().await {
                    Ok(c) => c,
                    Err(e) => {
                        tracing::warn!(error = %e, "PostgreSQL port: accept failed");
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let shared = shared.clone();
                match slots.clone().try_acquire_owned() {
                    Ok(permit) => {
                        tokio::spawn(async move {
                            conn::serve(stream, shared).await;
                            drop(permit);
                        });
                    }
                    Err(_) => {
                        tokio::spawn(refuse(stream));
                    }
                }
            }
        });
        tracing::info!(%local_addr, "serving PostgreSQL's wire protocol");
        Ok(PgServer { local_addr, task })
    }

    /// Stops accepting connections (open ones end with the runtime).
    pub fn shutdown(self) {
        self.task.abort();
    }
}

/// Refuses a connection past [`MAX_CONNECTIONS`]: PostgreSQL's
/// `too_many_connections` after the startup packet.
async fn refuse(mut stream: tokio::net::TcpStream) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut len = [0u8; 4];
    if stream.read_exact(&mut len).await.is_err() {
        return;
    }
    let n = i32::from_be_bytes(len).clamp(4, 10_000) as usize - 4;
    let mut rest = vec![0u8; n];
    let _ = stream.read_exact(&mut rest).await;
    let e = PgError::fatal(
        "53300",
        format!("sorry, too many clients already (at most {MAX_CONNECTIONS})"),
    );
    let mut out = bytes::BytesMut::new();
    let _ = pgwire::messages::PgWireBackendMessage::ErrorResponse(
        pgwire::messages::response::ErrorResponse::new(e.fields()),
    )
    .encode(&mut out);
    let _ = stream.write_all(&out).await;
}

/// The database a startup message names; see the crate docs.
pub fn resolve_database(shared: &Shared, name: &str) -> Result<Database, PgError> {
    let missing = |why: String| PgError::fatal("3D000", why);
    let hosted = if name.contains('/') {
        shared
            .registry
            .database(name)
            .map_err(|_| missing(format!("database \"{name}\" does not exist")))?
    } else {
        let suffix = format!("/databases/{name}");
        let mut found: Vec<_> = shared
            .registry
            .all()
            .into_iter()
            .filter(|h| h.meta.name.ends_with(&suffix))
            .collect();
        match found.len() {
            1 => found.remove(0),
            0 if shared.create_databases => create(shared, name)?,
            0 => {
                return Err(missing(format!(
                    "database \"{name}\" does not exist (create it as a PostgreSQL-dialect \
                     database through the admin API, or start the server with \
                     --pg-create-databases)"
                )))
            }
            _ => {
                return Err(missing(format!(
                    "database \"{name}\" is ambiguous: {} instances hold one; give its full \
                     name (projects/P/instances/I/databases/{name})",
                    found.len()
                )))
            }
        }
    };
    if hosted.meta.dialect != POSTGRESQL {
        return Err(missing(format!(
            "database \"{name}\" is a GoogleSQL database; the PostgreSQL protocol serves \
             PostgreSQL-dialect databases only"
        )));
    }
    Ok(hosted.db)
}

fn create(shared: &Shared, id: &str) -> Result<rowtree_server::registry::Hosted, PgError> {
    let fail = |e: tonic::Status| PgError::fatal("3D000", e.message().to_string());
    if shared.registry.instance(DEFAULT_INSTANCE).is_err() {
        let now = chrono::Utc::now().timestamp_nanos_opt().unwrap_or(0);
        let r = shared.registry.create_instance(InstanceMeta {
            name: DEFAULT_INSTANCE.to_string(),
            config: "projects/rowtree/instanceConfigs/emulator-config".into(),
            display_name: "PostgreSQL connections".into(),
            node_count: 1,
            processing_units: 1000,
            labels: Default::default(),
            create_time: now,
            update_time: now,
            edition: 0,
        });
        // Another connection may have created it meanwhile.
        if let Err(e) = r {
            if shared.registry.instance(DEFAULT_INSTANCE).is_err() {
                return Err(fail(e));
            }
        }
    }
    let name = format!("{DEFAULT_INSTANCE}/databases/{id}");
    match shared.registry.create_database(&name, b"", POSTGRESQL) {
        Ok(h) => Ok(h),
        Err(e) => shared.registry.database(&name).map_err(|_| fail(e)),
    }
}
