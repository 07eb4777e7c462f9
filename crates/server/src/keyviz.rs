//! The key visualizer over HTTP (`rowtree serve --http-port`, 9020 by default).
//!
//! A small HTTP/1.1 server on the same tokio runtime as the gRPC services,
//! listening on 127.0.0.1 by default:
//!
//! - `GET /`: the instances and their databases, with links;
//! - `GET /keyviz/projects/P/instances/I/databases/D`: the database's key
//!   visualizer page (one self-contained HTML document, see `rowtree-keyviz`);
//! - `GET /keyviz/projects/P/instances/I/databases/D/data.json`: its data.
//!
//! Both keyviz paths take `?granularity=minute|10minute|hour` (default
//! `minute`). Everything is read-only.
//!
//! With [`Security::tls`] the same certificate serves HTTPS here; with
//! [`Security::token`] every request needs the token, as `Authorization:
//! Bearer <token>` or as the password of HTTP Basic authentication (any
//! user name): a browser asks for it after the first `401`, then sends it
//! with every page. See [`crate::security`].

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{header, Method, Request, Response, StatusCode};
use rowtree_db::Database;
use rowtree_keyviz::{escape_html, heatmap_from_load_history, parse_granularity};
use rowtree_kv::{Granularity, LoadHistory};

use crate::registry::Registry;
use crate::security::{Security, Token, HANDSHAKE_TIMEOUT};

/// The database's split load history (persisted in its data directory by
/// `rowtree_db`; minute rows are added while the database serves requests).
/// Every key visualizer (the HTTP pages and `rowtree keyviz`) goes through here.
pub fn split_history(db: &Database) -> LoadHistory {
    db.split_history()
}

/// The key visualizer heatmap of a database at granularity `g`, keys labelled
/// by the database's catalog (`Users(42)`).
pub fn database_heatmap(db: &Database, title: &str, g: Granularity) -> rowtree_keyviz::Heatmap {
    let history = split_history(db);
    let catalog = db.catalog();
    let mut heatmap = heatmap_from_load_history(&history, g, title, |key| {
        rowtree_db::keys::describe(&catalog, key)
    });
    // The schema advisor's findings, each linked to its table's rows.
    heatmap.advice = rowtree_sql::rowtree_sys::advice(&catalog)
        .findings
        .into_iter()
        .map(|f| rowtree_keyviz::Advice {
            severity: f.severity.as_str().to_string(),
            rule: f.rule.id().to_string(),
            object: f.object,
            message: f.message,
        })
        .collect();
    heatmap
}

/// The key visualizer page of a database.
pub fn database_html(db: &Database, title: &str, g: Granularity) -> String {
    rowtree_keyviz::render_html(&database_heatmap(db, title, g))
}

/// A running HTTP server.
pub(crate) struct HttpServer {
    pub local_addr: SocketAddr,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
    /// With TLS: resolves once the accepting task has closed the port.
    closed: Option<tokio::sync::oneshot::Receiver<()>>,
}

impl HttpServer {
    /// Binds `addr` (fails at once if it cannot).
    pub async fn bind(addr: SocketAddr) -> Result<tokio::net::TcpListener, String> {
        tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| format!("cannot listen on {addr} (key visualizer HTTP port): {e}"))
    }

    /// Serves the pages over `listener` until [`HttpServer::shutdown`],
    /// over TLS and behind the token when `security` has them.
    pub fn start(
        listener: tokio::net::TcpListener,
        registry: Arc<Registry>,
        security: &Security,
    ) -> Result<HttpServer, String> {
        let local_addr = listener.local_addr().map_err(|e| e.to_string())?;
        let token = security.token.clone();
        let app = axum::Router::new()
            .fallback(move |req: Request<Body>| {
                let registry = registry.clone();
                let token = token.clone();
                async move {
                    match refusal(token.as_ref(), &req) {
                        None => handle(registry, req).await,
                        Some(refusal) => refusal,
                    }
                }
            })
            .into_make_service();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let stopped = async {
            let _ = stopped.await;
        };
        // With TLS, the port is closed by the accepting task's end, which
        // shutdown waits for (see `TlsListener`).
        let mut closed = None;
        let task = match &security.tls {
            None => tokio::spawn(async move {
                axum::serve(listener, app)
                    .with_graceful_shutdown(stopped)
                    .await
            }),
            Some(tls) => {
                let (closed_tx, closed_rx) = tokio::sync::oneshot::channel();
                closed = Some(closed_rx);
                let listener = TlsListener::new(listener, local_addr, tls.http(), closed_tx);
                tokio::spawn(async move {
                    axum::serve(listener, app)
                        .with_graceful_shutdown(stopped)
                        .await
                })
            }
        };
        tracing::info!(
            %local_addr,
            tls = security.tls.is_some(),
            token = security.token.is_some(),
            "serving the key visualizer over HTTP"
        );
        Ok(HttpServer {
            local_addr,
            stop,
            task,
            closed,
        })
    }

    /// Stops accepting connections and waits for those in flight; when it
    /// returns, the port is closed.
    pub async fn shutdown(self) -> Result<(), String> {
        let _ = self.stop.send(());
        let outcome = match self.task.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        if let Some(closed) = self.closed {
            // Resolves (with an error: nothing is ever sent) once the
            // accepting task has dropped the listening socket.
            let _ = closed.await;
        }
        outcome
    }
}

/// Accepts TCP connections and completes each one's TLS handshake on a task
/// of its own, so one slow or silent client cannot hold up the others;
/// axum gets the connections whose handshake succeeded. Dropping it (axum
/// does at shutdown) aborts the accepting task; the task's end drops the
/// listening socket and then `closed`, which [`HttpServer::shutdown`]
/// waits for, so the port is closed when shutdown returns (an abort takes
/// effect only when the runtime next polls the task).
struct TlsListener {
    local_addr: SocketAddr,
    ready: tokio::sync::mpsc::Receiver<(
        tokio_rustls::server::TlsStream<tokio::net::TcpStream>,
        SocketAddr,
    )>,
    accepting: tokio::task::JoinHandle<()>,
}

impl TlsListener {
    fn new(
        listener: tokio::net::TcpListener,
        local_addr: SocketAddr,
        config: Arc<tokio_rustls::rustls::ServerConfig>,
        closed: tokio::sync::oneshot::Sender<()>,
    ) -> TlsListener {
        let acceptor = tokio_rustls::TlsAcceptor::from(config);
        let (tx, ready) = tokio::sync::mpsc::channel(64);
        let accepting = tokio::spawn(async move {
            // Fields drop in order: the socket first, then `closed`.
            let state = Accepting {
                listener,
                _closed: closed,
            };
            loop {
                let (tcp, peer) = match state.listener.accept().await {
                    Ok(c) => c,
                    Err(e) => {
                        // Out of file descriptors and the like: wait, retry.
                        tracing::warn!(error = %e, "key visualizer: cannot accept a connection");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                };
                let acceptor = acceptor.clone();
                let tx = tx.clone();
                tokio::spawn(async move {
                    match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
                        Ok(Ok(tls)) => {
                            let _ = tx.send((tls, peer)).await;
                        }
                        Ok(Err(e)) => {
                            tracing::debug!(%peer, error = %e, "key visualizer: TLS handshake failed")
                        }
                        Err(_) => tracing::debug!(%peer, "key visualizer: TLS handshake timed out"),
                    }
                });
            }
        });
        TlsListener {
            local_addr,
            ready,
            accepting,
        }
    }
}

/// What the accepting task owns, in the order it is dropped.
struct Accepting {
    listener: tokio::net::TcpListener,
    _closed: tokio::sync::oneshot::Sender<()>,
}

impl Drop for TlsListener {
    fn drop(&mut self) {
        self.accepting.abort();
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = tokio_rustls::server::TlsStream<tokio::net::TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, SocketAddr) {
        match self.ready.recv().await {
            Some(connection) => connection,
            // Only once `accepting` is gone, that is after drop.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        Ok(self.local_addr)
    }
}

/// With a token configured, a request without it is refused: `401` with a
/// challenge for both schemes (a browser answers the Basic one).
fn refusal(token: Option<&Token>, req: &Request<Body>) -> Option<Response<Body>> {
    let authorization = req
        .headers()
        .get(header::AUTHORIZATION)
        .map(|v| v.as_bytes());
    let denied = token?.admit_http(authorization).err()?;
    let mut page = error_page(StatusCode::UNAUTHORIZED, &denied.to_string());
    for challenge in [
        "Bearer realm=\"rowtree\"",
        "Basic realm=\"rowtree key visualizer\", charset=\"UTF-8\"",
    ] {
        page.headers_mut().append(
            header::WWW_AUTHENTICATE,
            header::HeaderValue::from_static(challenge),
        );
    }
    Some(page)
}

fn respond(status: StatusCode, content_type: &str, body: String) -> Response<Body> {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, content_type)
        .header(header::CACHE_CONTROL, "no-store")
        .header("x-content-type-options", "nosniff")
        .body(Body::from(body))
        .expect("a valid response")
}

fn error_page(status: StatusCode, message: &str) -> Response<Body> {
    respond(
        status,
        "text/html; charset=utf-8",
        format!(
            "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{code}</title>\
             </head><body><h1>{code}</h1><p>{}</p><p><a href=\"/\">All databases</a></p></body></html>\n",
            escape_html(message),
            code = status
        ),
    )
}

async fn handle(registry: Arc<Registry>, req: Request<Body>) -> Response<Body> {
    if req.method() != Method::GET && req.method() != Method::HEAD {
        return error_page(StatusCode::METHOD_NOT_ALLOWED, "only GET is served here");
    }
    let path = req.uri().path().to_string();
    let mut granularity = Granularity::Minute;
    if let Some(query) = req.uri().query() {
        for pair in query.split('&') {
            if let Some(value) = pair.strip_prefix("granularity=") {
                match parse_granularity(value) {
                    Some(g) => granularity = g,
                    None => {
                        return error_page(
                            StatusCode::BAD_REQUEST,
                            "granularity must be minute, 10minute or hour",
                        )
                    }
                }
            }
        }
    }
    if path == "/" || path == "/keyviz" || path == "/keyviz/" {
        return respond(StatusCode::OK, "text/html; charset=utf-8", index(&registry));
    }
    let Some(rest) = path.strip_prefix("/keyviz/") else {
        return error_page(StatusCode::NOT_FOUND, &format!("no page at {path}"));
    };
    let (name, json) = match rest.strip_suffix("/data.json") {
        Some(name) => (name.to_string(), true),
        None => (rest.trim_end_matches('/').to_string(), false),
    };
    let hosted = match registry.database(&name) {
        Ok(h) => h,
        Err(_) => {
            return error_page(StatusCode::NOT_FOUND, &format!("no database named {name}"));
        }
    };
    let title = format!("Key Visualizer: {name}");
    let built = tokio::task::spawn_blocking(move || {
        let h = database_heatmap(&hosted.db, &title, granularity);
        if json {
            rowtree_keyviz::render_json(&h)
        } else {
            rowtree_keyviz::render_html(&h)
        }
    })
    .await;
    match built {
        Ok(body) if json => respond(StatusCode::OK, "application/json", body),
        Ok(body) => respond(StatusCode::OK, "text/html; charset=utf-8", body),
        Err(e) => error_page(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

/// The list of databases.
fn index(registry: &Registry) -> String {
    let mut out = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\
         <title>Rowtree: key visualizer</title><style>body{font:14px/1.5 system-ui,sans-serif;\
         margin:20px;background:#15171c;color:#d8dbe2}a{color:#8ab4ff}code{font-size:13px}\
         li{margin:2px 0}.g{color:#9aa1ad;font-size:12px}</style></head><body>\
         <h1>Rowtree: key visualizer</h1>\n",
    );
    let instances = registry.instances();
    if instances.is_empty() {
        out.push_str("<p>No instances yet.</p>\n");
    }
    for inst in instances {
        out.push_str(&format!(
            "<h2><code>{}</code></h2>\n<ul>\n",
            escape_html(&inst.name)
        ));
        let dbs = registry.databases(&inst.name);
        if dbs.is_empty() {
            out.push_str("<li>No databases.</li>\n");
        }
        for db in dbs {
            let name = escape_html(&db.meta.name);
            out.push_str(&format!(
                "<li><a href=\"/keyviz/{name}\"><code>{name}</code></a> \
                 <span class=\"g\">(<a href=\"/keyviz/{name}?granularity=10minute\">10 minutes</a>, \
                 <a href=\"/keyviz/{name}?granularity=hour\">hour</a>, \
                 <a href=\"/keyviz/{name}/data.json\">data.json</a>)</span></li>\n"
            ));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</body></html>\n");
    out
}

#[cfg(test)]
mod advice_tests {
    #[test]
    fn the_page_lists_the_schema_advice_with_links() {
        let db = rowtree_db::Database::in_memory_with(rowtree_sql::database_options());
        db.apply_ddl(&[
            "CREATE TABLE Logs (LoggedAt TIMESTAMP NOT NULL, Host STRING(64) NOT NULL) \
             PRIMARY KEY (LoggedAt, Host)",
        ])
        .unwrap();
        let h =
            super::database_heatmap(&db, "Key Visualizer: logs", rowtree_kv::Granularity::Minute);
        assert_eq!(h.advice.len(), 1);
        assert_eq!(h.advice[0].rule, "monotonic-key");
        let html = rowtree_keyviz::render_html(&h);
        assert!(html.contains("<a href=\"#table-Logs\">Logs</a>"));
    }
}
