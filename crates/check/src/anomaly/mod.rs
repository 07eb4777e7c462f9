//! Isolation checks over the gRPC API: workloads whose histories prove or
//! refute serializability and external consistency, while the server is
//! killed and restarted under them.
//!
//! Two workloads run concurrent clients against a real `rowtree serve`
//! (started by [`crate::server`]) and record what each transaction did and
//! how it ended:
//!
//! - [`list_append`]: read-write transactions read lists and append unique
//!   elements, read-only transactions read them at the latest timestamp or
//!   in the past; [`history::check`] finds every anomaly the history shows
//!   (dependency cycles, aborted and intermediate reads, lost appends,
//!   timestamps out of real-time order, stale reads that are not snapshots);
//! - [`bank`]: transfers between accounts, each logged in the same
//!   transaction, with strong and stale reads of the total and partitioned
//!   DML running beside them: every read sees the same total, and the
//!   balances match the logged transfers exactly.
//!
//! A *nemesis* task SIGKILLs the server every `kill_every` and starts it
//! again; clients whose calls fail while it is down record the outcome as
//! failed (the transaction never reached its commit) or unknown (the
//! commit was sent and no answer came back), open new sessions and go on.

pub mod bank;
pub mod history;
pub mod list_append;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{Mutex, RwLock};

use crate::client::{Client, PROJECT};
use crate::error::{Error, Result};
use crate::server::{Options as ServerOptions, Server};

/// How a workload runs.
#[derive(Debug, Clone)]
pub struct Options {
    /// The `rowtree` binary.
    pub binary: PathBuf,
    /// Concurrent clients.
    pub clients: usize,
    /// How long the clients run.
    pub duration: Duration,
    /// Kill and restart the server this often (`None`: never).
    pub kill_every: Option<Duration>,
    /// Seed of the clients' random choices.
    pub seed: u64,
}

/// The server under test and a client connected to its current address,
/// replaced after every restart.
pub(crate) struct Target {
    server: Mutex<Server>,
    client: RwLock<Client>,
    /// Where the data directory lives; removed when the run ends.
    _dir: tempfile::TempDir,
    pub database: String,
    /// Restarts done by the nemesis.
    pub kills: std::sync::atomic::AtomicU32,
}

impl Target {
    /// Starts a server over a fresh directory and creates a database with
    /// `ddl` in it.
    pub(crate) async fn start(binary: &PathBuf, ddl: &[&str]) -> Result<Arc<Target>> {
        let dir = tempfile::tempdir()?;
        let server = Server::start(ServerOptions::new(binary, dir.path().join("data"))).await?;
        let client = server.client().await?;
        let instance = client.create_instance("anomalies").await?;
        let database = client.create_database(&instance, "db", ddl).await?;
        debug_assert!(database.starts_with(PROJECT));
        Ok(Arc::new(Target {
            server: Mutex::new(server),
            client: RwLock::new(client),
            _dir: dir,
            database,
            kills: Default::default(),
        }))
    }

    /// A client for the server as it runs now.
    pub(crate) async fn client(&self) -> Client {
        self.client.read().await.clone()
    }

    /// SIGKILLs the server and starts it again over the same directory.
    pub(crate) async fn kill_and_restart(&self) -> Result<()> {
        let mut server = self.server.lock().await;
        server.kill()?;
        server.restart().await?;
        *self.client.write().await = server.client().await?;
        self.kills
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    /// Stops the server gracefully (the end of a run).
    pub(crate) async fn stop(&self) -> Result<()> {
        self.server.lock().await.stop().await
    }
}

/// Kills and restarts the server every `every` until `until`.
pub(crate) async fn nemesis(
    target: Arc<Target>,
    every: Option<Duration>,
    until: Instant,
) -> Result<()> {
    let Some(every) = every else {
        return Ok(());
    };
    loop {
        let next = Instant::now() + every;
        if next >= until {
            return Ok(());
        }
        tokio::time::sleep_until(next.into()).await;
        target.kill_and_restart().await?;
    }
}

/// A session of `client` on the target database, created anew when the
/// server lost it (a restart) or the client changed.
pub(crate) struct SessionSlot {
    session: Option<(Client, String)>,
}

impl SessionSlot {
    pub(crate) fn new() -> SessionSlot {
        SessionSlot { session: None }
    }

    /// The client and session to use for the next transaction.
    pub(crate) async fn get(&mut self, target: &Target) -> Result<(Client, String)> {
        if let Some(s) = &self.session {
            return Ok(s.clone());
        }
        let client = target.client().await;
        let session = client.create_session(&target.database).await?;
        self.session = Some((client.clone(), session.clone()));
        Ok((client, session))
    }

    /// [`SessionSlot::get`] for a client's loop: on failure (the server is
    /// down, being restarted) waits a little and answers `None`, so the
    /// loop goes round again.
    pub(crate) async fn next(&mut self, target: &Target) -> Option<(Client, String)> {
        match self.get(target).await {
            Ok(s) => Some(s),
            Err(e) => {
                self.reset_after(&e);
                tokio::time::sleep(Duration::from_millis(50)).await;
                None
            }
        }
    }

    /// Forgets the session after an error that may mean it is gone.
    pub(crate) fn reset_after(&mut self, error: &Error) {
        if error.is_unavailable()
            || matches!(
                error.code(),
                Some(tonic::Code::NotFound | tonic::Code::DeadlineExceeded)
            )
            || matches!(error, Error::Timeout(_))
        {
            self.session = None;
        }
    }
}

/// Runs `call` with a deadline: a call to a server that was killed may
/// otherwise wait for a connection that never comes back.
pub(crate) async fn bounded<T>(
    what: &str,
    call: impl std::future::Future<Output = Result<T>>,
) -> Result<T> {
    match tokio::time::timeout(Duration::from_secs(20), call).await {
        Ok(r) => r,
        Err(_) => Err(Error::Timeout(what.to_string())),
    }
}

/// Nanoseconds on the client's monotonic clock since `epoch`.
pub(crate) fn since(epoch: Instant) -> i128 {
    epoch.elapsed().as_nanos() as i128
}
