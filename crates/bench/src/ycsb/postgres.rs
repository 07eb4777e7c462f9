//! PostgreSQL as a system: a throwaway cluster the tool starts and stops.
//!
//! The binaries come from Debian's package (`apt-get install postgresql`,
//! found under `/usr/lib/postgresql/<version>/bin`). The cluster lives in a
//! temporary directory, listens on 127.0.0.1 only, on a free port, with the
//! package's defaults except what the comparison needs: `fsync=on` and
//! `synchronous_commit=on` (every commit durable before it is
//! acknowledged, as in Rowtree), and enough connections for the largest
//! client count. PostgreSQL refuses to run as root, so when the tool runs as
//! root the cluster runs as the package's `postgres` user.
//!
//! The cluster must not outlive the tool, however the tool ends: `pg_ctl`
//! starts the server in a session of its own (so a Ctrl-C at the terminal
//! does not reach it), and a tool that is killed runs no destructor. So a
//! small watcher process holds the read end of a pipe whose write end only
//! the tool holds: when the tool exits, by any path, the pipe closes and
//! the watcher stops the server (`pg_ctl stop -m fast`) and removes its
//! directory. The watcher ignores SIGINT and runs in its own process
//! group, so a Ctrl-C that ends the tool does not end it first.
//!
//! Each client is one connection of the `postgres` crate (the synchronous
//! face of `tokio-postgres`), with its statements prepared once: the
//! equivalent of `pgbench -M prepared`.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use postgres::{Client as PgConn, NoTls, Statement};

use super::workload::{field_list, field_value, hashed_key, Op, FIELDS};
use super::{Client, Error, Result, System};

fn setup(message: impl std::fmt::Display) -> Error {
    Error::Setup {
        system: "postgres",
        message: message.to_string(),
    }
}

/// [`setup`] as a plain function, for the helpers shared with the pgwire
/// system.
fn setup_message(message: String) -> Error {
    setup(message)
}

/// The driver's error with the server's message (its `Display` alone says
/// only "db error").
fn described(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} ({}): {}", e, db.code().code(), db.message()),
        None => e.to_string(),
    }
}

fn pg_setup(e: postgres::Error) -> Error {
    setup(described(&e))
}

fn op_error(e: postgres::Error) -> Error {
    Error::Op(described(&e))
}

/// The newest `/usr/lib/postgresql/<version>/bin` with `initdb` in it.
fn bin_dir() -> Result<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .map_err(|_| setup("PostgreSQL is not installed (apt-get install postgresql)"))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let version: u32 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, b)| b).ok_or_else(|| {
        setup("no initdb under /usr/lib/postgresql/*/bin (apt-get install postgresql)")
    })
}

fn free_port() -> Result<u16> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(l.local_addr()?.port())
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// A running throwaway cluster; stopped when dropped, or by its watcher
/// when the process ends without dropping it (see the module docs).
pub struct Postgres {
    bin: PathBuf,
    data: PathBuf,
    port: u16,
    as_postgres: bool,
    /// Stops the server and removes `_temp` once this process is gone.
    watcher: Option<Child>,
    _temp: tempfile::TempDir,
}

impl Postgres {
    /// Initialises and starts a cluster for up to `max_clients` clients.
    pub fn start(max_clients: usize) -> Result<Postgres> {
        let bin = bin_dir()?;
        let temp = tempfile::Builder::new()
            .prefix("ycsb-postgres-")
            .tempdir()?;
        let data = temp.path().join("data");
        let as_postgres = is_root();
        if as_postgres {
            let status = Command::new("chown")
                .args(["-R", "postgres"])
                .arg(temp.path())
                .status()?;
            if !status.success() {
                return Err(setup(
                    "running as root, and chown to the postgres user failed",
                ));
            }
        }
        let port = free_port()?;
        let mut pg = Postgres {
            bin,
            data,
            port,
            as_postgres,
            watcher: None,
            _temp: temp,
        };
        pg.run(
            "initdb",
            &[
                "-D",
                &pg.data.to_string_lossy(),
                "-U",
                "ycsb",
                "--auth=trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ],
        )?;
        let options = format!(
            "-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={} \
             -c fsync=on -c synchronous_commit=on -c max_connections={}",
            pg._temp.path().display(),
            max_clients + 20
        );
        let log = pg._temp.path().join("postgres.log");
        pg.run(
            "pg_ctl",
            &[
                "-D",
                &pg.data.to_string_lossy(),
                "-l",
                &log.to_string_lossy(),
                "-w",
                "-o",
                &options,
                "start",
            ],
        )?;
        pg.watcher = Some(pg.watch()?);
        Ok(pg)
    }

    /// Starts the watcher (see the module docs): a shell that waits for
    /// its standard input, a pipe from this process, to close, then stops
    /// the server and removes the cluster's directory.
    fn watch(&self) -> Result<Child> {
        let pg_ctl = self.bin.join("pg_ctl");
        let mut stop: Vec<std::ffi::OsString> = Vec::new();
        if self.as_postgres {
            stop.extend(["runuser", "-u", "postgres", "--"].map(Into::into));
        }
        stop.push(pg_ctl.into());
        stop.extend(["-D".into(), self.data.clone().into()]);
        stop.extend(["-m", "fast", "-w", "stop"].map(Into::into));
        // $1 is the directory to remove, the rest the stop command.
        let script = "trap '' INT; read -r _; dir=$1; shift; \"$@\" >/dev/null 2>&1; \
                      stopped=$?; rm -rf \"$dir\"; exit $stopped";
        Command::new("sh")
            .args(["-c", script, "ycsb-postgres-watcher"])
            .arg(self._temp.path())
            .args(stop)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .map_err(|e| setup(format!("starting the server's watcher: {e}")))
    }

    fn run(&self, tool: &str, args: &[&str]) -> Result<()> {
        let exe = self.bin.join(tool);
        let output = if self.as_postgres {
            Command::new("runuser")
                .args(["-u", "postgres", "--"])
                .arg(&exe)
                .args(args)
                .current_dir(self._temp.path())
                .output()?
        } else {
            Command::new(&exe).args(args).output()?
        };
        if !output.status.success() {
            return Err(setup(format!(
                "{tool} failed: {}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            )));
        }
        Ok(())
    }

    fn connect(&self) -> Result<PgConn> {
        PgConn::connect(
            &format!(
                "host=127.0.0.1 port={} user=ycsb dbname=postgres",
                self.port
            ),
            NoTls,
        )
        .map_err(pg_setup)
    }

    /// The data directory (for reports).
    pub fn data_dir(&self) -> &Path {
        &self.data
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        // The watcher stops the server: closing its pipe tells it to.
        if let Some(mut watcher) = self.watcher.take() {
            drop(watcher.stdin.take());
            if watcher.wait().is_ok_and(|status| status.success()) {
                return;
            }
        }
        let _ = self.run(
            "pg_ctl",
            &[
                "-D",
                &self.data.to_string_lossy(),
                "-m",
                "fast",
                "-w",
                "stop",
            ],
        );
    }
}

impl System for Postgres {
    fn name(&self) -> &'static str {
        "postgres"
    }

    fn load(&self, records: u64, progress: &(dyn Fn(u64) + Sync)) -> Result<()> {
        let mut conn = self.connect()?;
        load_usertable(&mut conn, records, progress, setup_message)?;
        // Statistics for the planner and hint bits set, as after any bulk
        // load; then a checkpoint, so the run does not start with one.
        // (Separate messages: several statements in one run as one
        // transaction, and VACUUM may not.)
        conn.batch_execute("VACUUM ANALYZE usertable")
            .map_err(pg_setup)?;
        conn.batch_execute("CHECKPOINT").map_err(pg_setup)?;
        Ok(())
    }

    fn client(&self) -> Result<Box<dyn Client>> {
        let conn = self.connect()?;
        Ok(Box::new(PgClient::prepare(conn, true, setup_message)?))
    }
}

/// Creates YCSB's `usertable` over a PostgreSQL-protocol connection and
/// loads `records` records with `COPY ... FROM STDIN` (PostgreSQL's text
/// format), reporting progress every 10,000 records. `setup` names the
/// system in errors.
pub(super) fn load_usertable(
    conn: &mut PgConn,
    records: u64,
    progress: &(dyn Fn(u64) + Sync),
    setup: fn(String) -> Error,
) -> Result<()> {
    use std::io::Write;
    let failed = |e: postgres::Error| setup(described(&e));
    let fields: Vec<String> = (0..FIELDS)
        .map(|f| format!("field{f} varchar(100)"))
        .collect();
    conn.batch_execute(&format!(
        "CREATE TABLE usertable (ycsb_key varchar(64) PRIMARY KEY, {})",
        fields.join(", ")
    ))
    .map_err(failed)?;
    let mut writer = conn.copy_in("COPY usertable FROM STDIN").map_err(failed)?;
    let mut line = String::with_capacity(1200);
    for n in 0..records {
        let key = hashed_key(n);
        line.clear();
        line.push_str(&key);
        for f in 0..FIELDS {
            line.push('\t');
            line.push_str(&field_value(&key, f, 0));
        }
        line.push('\n');
        writer.write_all(line.as_bytes())?;
        if (n + 1) % 10_000 == 0 {
            progress(10_000);
        }
    }
    writer.finish().map_err(failed)?;
    if !records.is_multiple_of(10_000) {
        progress(records % 10_000);
    }
    Ok(())
}

/// One client over a PostgreSQL-protocol connection, its statements
/// prepared once (`pgbench -M prepared`).
pub(super) struct PgClient {
    conn: PgConn,
    read: Statement,
    /// The read of a read-modify-write: `FOR UPDATE` where the server needs
    /// it to lock the row (PostgreSQL); a plain read where every read in a
    /// read-write transaction locks what it reads (Rowtree).
    read_for_update: Statement,
    scan: Statement,
    insert: Statement,
    updates: Vec<Statement>,
}

impl PgClient {
    /// Prepares the workload's statements on `conn`; `for_update` adds
    /// `FOR UPDATE` to the read-modify-write's read.
    pub(super) fn prepare(
        mut conn: PgConn,
        for_update: bool,
        setup: fn(String) -> Error,
    ) -> Result<PgClient> {
        let failed = |e: postgres::Error| setup(described(&e));
        let fields = field_list();
        let read = conn
            .prepare(&format!(
                "SELECT {fields} FROM usertable WHERE ycsb_key = $1"
            ))
            .map_err(failed)?;
        let lock = if for_update { " FOR UPDATE" } else { "" };
        let read_for_update = conn
            .prepare(&format!(
                "SELECT {fields} FROM usertable WHERE ycsb_key = $1{lock}"
            ))
            .map_err(failed)?;
        let scan = conn
            .prepare(&format!(
                "SELECT {fields} FROM usertable WHERE ycsb_key >= $1 ORDER BY ycsb_key LIMIT $2"
            ))
            .map_err(failed)?;
        let placeholders: Vec<String> = (1..=FIELDS + 1).map(|i| format!("${i}")).collect();
        let insert = conn
            .prepare(&format!(
                "INSERT INTO usertable (ycsb_key, {fields}) VALUES ({})",
                placeholders.join(", ")
            ))
            .map_err(failed)?;
        let mut updates = Vec::with_capacity(FIELDS);
        for f in 0..FIELDS {
            updates.push(
                conn.prepare(&format!(
                    "UPDATE usertable SET field{f} = $2 WHERE ycsb_key = $1"
                ))
                .map_err(failed)?,
            );
        }
        Ok(PgClient {
            conn,
            read,
            read_for_update,
            scan,
            insert,
            updates,
        })
    }
}

impl PgClient {
    /// One read-modify-write transaction: read the record (locking it),
    /// then update one field. `Ok(false)`: the record was not there (and
    /// nothing was written).
    fn read_modify_write(
        &mut self,
        key: &String,
        field: usize,
        value: &String,
    ) -> std::result::Result<bool, postgres::Error> {
        let mut txn = self.conn.transaction()?;
        let rows = txn.query(&self.read_for_update, &[key])?;
        if rows.len() != 1 {
            txn.rollback()?;
            return Ok(false);
        }
        txn.execute(&self.updates[field], &[key, value])?;
        txn.commit()?;
        Ok(true)
    }
}

impl Client for PgClient {
    fn run(&mut self, op: &Op, version: u64) -> Result<()> {
        match op {
            Op::Read(key) => {
                let rows = self.conn.query(&self.read, &[key]).map_err(op_error)?;
                if rows.len() != 1 || rows[0].len() != FIELDS {
                    return Err(Error::Op(format!("read returned {} rows", rows.len())));
                }
            }
            Op::Update { key, field } => {
                let value = field_value(key, *field, version);
                let n = self
                    .conn
                    .execute(&self.updates[*field], &[key, &value])
                    .map_err(op_error)?;
                if n != 1 {
                    return Err(Error::Op(format!("update changed {n} rows")));
                }
            }
            Op::Insert { key, .. } => {
                let values: Vec<String> =
                    (0..FIELDS).map(|f| field_value(key, f, version)).collect();
                let mut params: Vec<&(dyn postgres::types::ToSql + Sync)> = vec![key];
                params.extend(
                    values
                        .iter()
                        .map(|v| v as &(dyn postgres::types::ToSql + Sync)),
                );
                self.conn.execute(&self.insert, &params).map_err(op_error)?;
            }
            Op::Scan { start, count } => {
                let limit = *count as i64;
                let rows = self
                    .conn
                    .query(&self.scan, &[start, &limit])
                    .map_err(op_error)?;
                if rows.is_empty() {
                    return Err(Error::Op("scan returned no row".into()));
                }
            }
            Op::ReadModifyWrite { key, field } => {
                let value = field_value(key, *field, version);
                // A serialization failure (40001: Rowtree's wound-wait
                // aborts one of two transactions that want the same row)
                // is retried, as applications retry it; it is latency, not
                // an error.
                let mut backoff = std::time::Duration::from_micros(100);
                loop {
                    match self.read_modify_write(key, *field, &value) {
                        Err(e)
                            if e.code()
                                == Some(&postgres::error::SqlState::T_R_SERIALIZATION_FAILURE) =>
                        {
                            std::thread::sleep(backoff);
                            backoff = (backoff * 2).min(std::time::Duration::from_millis(20));
                        }
                        Err(e) => return Err(op_error(e)),
                        Ok(true) => break,
                        Ok(false) => return Err(Error::Op("read-modify-write read no row".into())),
                    }
                }
            }
        }
        Ok(())
    }
}
