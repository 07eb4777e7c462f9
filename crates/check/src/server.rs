//! A real `rowtree serve` child process.
//!
//! The checks test the binary users run, not the library: [`Server`] starts
//! `rowtree serve --data-dir D --port P --http-port 0` on 127.0.0.1, waits
//! until it answers gRPC, and can stop it gracefully (SIGTERM), kill it
//! (SIGKILL, the crash the kill check is about) and start it again over the
//! same data directory. Its standard output and error go to one log file
//! beside the data directory (`<parent of D>/rowtree-serve.log`), each
//! start marked with a header line, so a failure can be read afterwards.
//!
//! Invariant: while a [`Server`] value lives it owns at most one child, and
//! dropping it kills and reaps that child, so a failed check or a panic
//! never leaves a server running.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::client::Client;
use crate::error::{Error, Result};

/// How to run the server.
#[derive(Debug, Clone)]
pub struct Options {
    /// The `rowtree` binary.
    pub binary: PathBuf,
    /// Its `--data-dir`; created by the server if missing.
    pub data_dir: PathBuf,
    /// More `rowtree serve` flags (split experiment flags, `--cache-mib`).
    pub extra_args: Vec<String>,
    /// How long a start may take before it counts as failed (opening a
    /// database replays its log, which takes longer after a crash).
    pub start_timeout: Duration,
    /// How long a graceful stop may take before the child is killed.
    pub stop_timeout: Duration,
    /// The server's `RUST_LOG`: `info`, with each garbage-collection pass's
    /// start and end (`rowtree_db::gc=debug`) so the log shows whether a
    /// kill came in the middle of one.
    pub log_filter: String,
    /// The gRPC port (`None`: a free one, and another one if it is taken
    /// by the time of a restart). A fixed port is kept across restarts, as
    /// proxies in front of it need.
    pub port: Option<u16>,
}

impl Options {
    /// Defaults for `binary` over `data_dir`: 60 s to start, 20 s to stop.
    pub fn new(binary: impl Into<PathBuf>, data_dir: impl Into<PathBuf>) -> Options {
        Options {
            binary: binary.into(),
            data_dir: data_dir.into(),
            extra_args: Vec::new(),
            start_timeout: Duration::from_secs(60),
            stop_timeout: Duration::from_secs(20),
            log_filter: "info,rowtree_db::gc=debug".into(),
            port: None,
        }
    }

    /// Adds `rowtree serve` flags.
    pub fn args<I: IntoIterator<Item = S>, S: Into<String>>(mut self, args: I) -> Options {
        self.extra_args.extend(args.into_iter().map(Into::into));
        self
    }
}

/// A `rowtree serve` child process (see the module docs).
pub struct Server {
    options: Options,
    child: Option<Child>,
    addr: SocketAddr,
    log_path: PathBuf,
    starts: u32,
}

impl Server {
    /// Starts the server on a free port and waits until it answers gRPC.
    pub async fn start(options: Options) -> Result<Server> {
        let parent = options
            .data_dir
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        std::fs::create_dir_all(&parent)?;
        let log_path = parent.join("rowtree-serve.log");
        let mut server = Server {
            options,
            child: None,
            addr: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            log_path,
            starts: 0,
        };
        let port = match server.options.port {
            Some(port) => port,
            None => free_port()?,
        };
        server.addr.set_port(port);
        server.spawn_and_wait().await?;
        Ok(server)
    }

    /// The gRPC address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The child's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The log file (both output streams of every start).
    pub fn log_path(&self) -> &Path {
        &self.log_path
    }

    /// The options it runs with.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// How many times the process has been started.
    pub fn starts(&self) -> u32 {
        self.starts
    }

    /// A new client connected to it.
    pub async fn client(&self) -> Result<Client> {
        Client::connect(self.addr).await
    }

    /// The server's resident set size in KiB (`VmRSS` in
    /// `/proc/<pid>/status`), while it runs.
    pub fn rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()?)).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|n| n.parse().ok())
    }

    /// Whether the child is running (it has not exited on its own).
    pub fn is_running(&mut self) -> bool {
        match self.child.as_mut() {
            Some(c) => matches!(c.try_wait(), Ok(None)),
            None => false,
        }
    }

    /// SIGKILLs the child and reaps it: a crash, nothing flushed.
    pub fn kill(&mut self) -> Result<()> {
        if let Some(mut child) = self.child.take() {
            if let Some(status) = child.try_wait()? {
                self.note(&format!("had exited by itself: {status}"))?;
                return Ok(());
            }
            // An error here means it exited just now; wait reaps it either way.
            let _ = child.kill();
            child.wait()?;
            self.note("killed with SIGKILL")?;
        }
        Ok(())
    }

    /// Freezes the child (SIGSTOP) or lets it go on (SIGCONT): a process
    /// that stops answering without dying, as in a long GC pause or a VM
    /// stall, and comes back believing what it believed before.
    pub fn pause(&mut self, paused: bool) -> Result<()> {
        let Some(child) = self.child.as_ref() else {
            return Ok(());
        };
        let signal = if paused { libc::SIGSTOP } else { libc::SIGCONT };
        // SAFETY: kill(2) with a pid we own and have not reaped yet, so the
        // pid cannot have been reused.
        unsafe {
            libc::kill(child.id() as libc::pid_t, signal);
        }
        self.note(if paused {
            "paused with SIGSTOP"
        } else {
            "resumed with SIGCONT"
        })
    }

    /// Stops the child gracefully (SIGTERM), killing it if it does not exit
    /// within the stop timeout. Errors if it had to be killed or exited
    /// with a failure.
    pub async fn stop(&mut self) -> Result<()> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        // SAFETY: kill(2) with a pid we own and have not reaped yet, so the
        // pid cannot have been reused.
        unsafe {
            libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
        }
        let deadline = Instant::now() + self.options.stop_timeout;
        loop {
            if let Some(status) = child.try_wait()? {
                self.note(&format!("stopped: {status}"))?;
                return if status.success() {
                    Ok(())
                } else {
                    Err(Error::Server(format!(
                        "exited with {status} on SIGTERM (log: {})",
                        self.log_path.display()
                    )))
                };
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                child.wait()?;
                self.note("did not stop on SIGTERM; killed")?;
                return Err(Error::Timeout(format!(
                    "the server did not stop within {:?} of SIGTERM",
                    self.options.stop_timeout
                )));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Replaces the extra `rowtree serve` flags for the next start.
    pub fn set_args(&mut self, args: Vec<String>) {
        self.options.extra_args = args;
    }

    /// Starts the child again over the same data directory (after
    /// [`Server::kill`] or [`Server::stop`]; kills a running one first).
    /// It keeps its port when the port is still free.
    pub async fn restart(&mut self) -> Result<()> {
        self.kill()?;
        self.spawn_and_wait().await
    }

    /// Spawns the child and waits until it answers gRPC. A child that exits
    /// because its port was taken meanwhile is started again: on another
    /// port when the check chose its gRPC port and that one was taken, else
    /// (a port the child must keep, such as a cluster node's peer port)
    /// after a second, for as long as [`PORT_WAIT_ATTEMPTS`] allows, in
    /// case what held it lets go.
    async fn spawn_and_wait(&mut self) -> Result<()> {
        let mut attempts = 0;
        loop {
            attempts += 1;
            self.spawn()?;
            match self.wait_ready().await {
                Ok(()) => return Ok(()),
                Err(e)
                    if attempts < PORT_WAIT_ATTEMPTS
                        && !self.is_running()
                        && self.port_was_taken() =>
                {
                    self.child = None;
                    let ours = format!("cannot listen on {}:", self.addr);
                    if self.options.port.is_none() && self.log_tail().contains(&ours) {
                        self.note(&format!("port {} taken ({e}); another", self.addr.port()))?;
                        self.addr.set_port(free_port()?);
                    } else {
                        self.note(&format!("a port it keeps is taken ({e}); again in 1 s"))?;
                        tokio::time::sleep(Duration::from_secs(1)).await;
                    }
                }
                Err(e) => {
                    let _ = self.kill();
                    return Err(e);
                }
            }
        }
    }

    fn spawn(&mut self) -> Result<()> {
        self.starts += 1;
        let mut log = self.open_log()?;
        writeln!(
            log,
            "=== rowtree-check: start {} on {} ===",
            self.starts, self.addr
        )?;
        let stderr = log.try_clone()?;
        let child = Command::new(&self.options.binary)
            .arg("serve")
            .arg("--data-dir")
            .arg(&self.options.data_dir)
            .args(["--host", "127.0.0.1", "--http-port", "0", "--port"])
            .arg(self.addr.port().to_string())
            .args(&self.options.extra_args)
            .env("RUST_LOG", &self.options.log_filter)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(stderr)
            .spawn()
            .map_err(|e| {
                Error::Server(format!("cannot run {}: {e}", self.options.binary.display()))
            })?;
        self.child = Some(child);
        Ok(())
    }

    /// Polls until a gRPC call succeeds, the child exits, or the start
    /// timeout passes.
    async fn wait_ready(&mut self) -> Result<()> {
        let deadline = Instant::now() + self.options.start_timeout;
        let mut last = String::from("no attempt");
        while Instant::now() < deadline {
            if !self.is_running() {
                return Err(Error::Server(format!(
                    "exited during start: {}",
                    self.log_tail()
                )));
            }
            let attempt = async {
                let client = Client::connect(self.addr).await?;
                client.list_instances().await
            };
            match tokio::time::timeout(Duration::from_secs(5), attempt).await {
                Ok(Ok(_)) => return Ok(()),
                Ok(Err(e)) => last = e.to_string(),
                Err(_) => last = "a probe took over 5 s".into(),
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Err(Error::Timeout(format!(
            "the server did not answer within {:?} ({last}); log: {}",
            self.options.start_timeout,
            self.log_tail()
        )))
    }

    fn port_was_taken(&self) -> bool {
        self.log_tail().contains("cannot listen on")
    }

    /// The last lines of the log, for error messages.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log_path).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(15)..].join("\n")
    }

    fn open_log(&self) -> Result<File> {
        Ok(OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log_path)?)
    }

    /// Adds a line of our own to the log.
    fn note(&self, what: &str) -> Result<()> {
        let mut log = self.open_log()?;
        writeln!(log, "=== rowtree-check: {what} ===")?;
        Ok(())
    }
}

/// The directory a check keeps its data directory and server log in:
/// the one given, or a fresh temporary one that [`WorkDir::finish`]
/// removes after a passing run and keeps (saying where) otherwise.
#[derive(Debug)]
pub struct WorkDir {
    path: PathBuf,
    temp: Option<tempfile::TempDir>,
}

impl WorkDir {
    /// `given` (created if missing), or a temporary directory named
    /// `prefix...`.
    pub fn new(given: Option<&Path>, prefix: &str) -> Result<WorkDir> {
        Ok(match given {
            Some(d) => {
                std::fs::create_dir_all(d)?;
                WorkDir {
                    path: d.to_path_buf(),
                    temp: None,
                }
            }
            None => {
                let t = tempfile::Builder::new().prefix(prefix).tempdir()?;
                WorkDir {
                    path: t.path().to_path_buf(),
                    temp: Some(t),
                }
            }
        })
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Removes a temporary directory after a pass; keeps it otherwise and
    /// says where on standard error. A given directory is always kept.
    pub fn finish(self, passed: bool) {
        if let Some(t) = self.temp {
            if passed {
                drop(t);
            } else {
                let kept = t.keep();
                eprintln!("data and server log kept in {}", kept.display());
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A port nothing listens on now (bound to port 0 and released; the server
/// binds it moments later, and [`Server`] retries if someone was faster).
pub fn free_port() -> Result<u16> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
    Ok(listener.local_addr()?.port())
}

/// How often [`Server`] starts a child that exited because a port it needs
/// was taken.
const PORT_WAIT_ATTEMPTS: u32 = 10;

/// The lowest port [`lasting_port`] hands out.
const LASTING_FROM: u16 = 10_000;

/// A free port for a server that must be found on it again after a restart,
/// such as a cluster node's peer port, which the cluster's membership
/// records.
///
/// [`free_port`] is not enough for that. The ports the system picks by
/// itself, for a bind to port 0 and for the local end of every outgoing
/// connection, all come from its ephemeral range (32768–60999 on Linux by
/// default). While a node is down, any connection made on the machine may
/// take its port, and the node cannot start again. So this picks from below
/// that range, where a port is only ever taken by a program asking for it
/// by number: it tries ports in turn from a place chosen at random (two
/// checks running at once rarely meet) and hands out each one once per
/// process.
pub fn lasting_port() -> Result<u16> {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(u32::MAX);
    let below = ephemeral_start();
    if below <= LASTING_FROM + 1_000 {
        // A system whose own range reaches this low: nowhere is safe.
        return free_port();
    }
    let span = u32::from(below - LASTING_FROM);
    let _ = NEXT.compare_exchange(
        u32::MAX,
        rand::random::<u32>() % span,
        Ordering::Relaxed,
        Ordering::Relaxed,
    );
    for _ in 0..span {
        let offset = NEXT.fetch_add(1, Ordering::Relaxed) % span;
        // `offset < span <= u16::MAX`, so the sum stays below `below`.
        let port = LASTING_FROM + offset as u16;
        if TcpListener::bind((Ipv4Addr::LOCALHOST, port)).is_ok() {
            return Ok(port);
        }
    }
    Err(Error::Server(format!(
        "no free port between {LASTING_FROM} and {below}"
    )))
}

/// Where the system's ephemeral port range starts (Linux reports it; other
/// systems get the usual IANA start, 49152).
fn ephemeral_start() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|text| text.split_whitespace().next()?.parse().ok())
        .unwrap_or(49_152)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lasting_ports_are_below_the_ephemeral_range_and_never_repeat() {
        let below = ephemeral_start();
        let ports: Vec<u16> = (0..50).map(|_| lasting_port().unwrap()).collect();
        let mut distinct = ports.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), ports.len(), "{ports:?}");
        if below > LASTING_FROM + 1_000 {
            assert!(
                ports.iter().all(|p| (LASTING_FROM..below).contains(p)),
                "{ports:?} outside {LASTING_FROM}..{below}"
            );
        }
        for port in ports {
            TcpListener::bind((Ipv4Addr::LOCALHOST, port)).expect("still free");
        }
    }
}
