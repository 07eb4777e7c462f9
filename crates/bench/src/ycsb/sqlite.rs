//! SQLite as a system: one database file, WAL journal, `synchronous=FULL`.
//!
//! In WAL mode with `synchronous=FULL` every commit syncs the log before it
//! returns, so commits are as durable as Rowtree's. The table is a
//! `WITHOUT ROWID` table: rows are stored in the primary key's B-tree, as
//! Rowtree stores rows in key order, rather than behind a hidden rowid.
//! Each client opens its own connection (SQLite is a library, so that is
//! how a multi-threaded application uses it); writers take SQLite's single
//! write lock in turn, waiting in its busy handler, and a read-modify-write
//! takes it up front with `BEGIN IMMEDIATE`. The load inserts the records
//! in key order, 10,000 to a transaction, as one bulk-loads a B-tree.

use std::path::PathBuf;
use std::time::Duration;

use rusqlite::{params, Connection};

use super::workload::{field_list, field_value, fnv1a, key_of_hash, Op, FIELDS};
use super::{Client, Error, Result, System};

fn setup(message: impl std::fmt::Display) -> Error {
    Error::Setup {
        system: "sqlite",
        message: message.to_string(),
    }
}

fn op_error(e: impl std::fmt::Display) -> Error {
    Error::Op(e.to_string())
}

/// A SQLite database file in a temporary directory.
pub struct Sqlite {
    path: PathBuf,
    _temp: tempfile::TempDir,
}

impl Sqlite {
    /// A new, empty database.
    pub fn create() -> Result<Sqlite> {
        let temp = tempfile::Builder::new().prefix("ycsb-sqlite-").tempdir()?;
        let sqlite = Sqlite {
            path: temp.path().join("ycsb.db"),
            _temp: temp,
        };
        let conn = sqlite.open()?;
        let fields: Vec<String> = (0..FIELDS).map(|f| format!("field{f} TEXT")).collect();
        conn.execute_batch(&format!(
            "CREATE TABLE usertable (ycsb_key TEXT PRIMARY KEY, {}) WITHOUT ROWID",
            fields.join(", ")
        ))
        .map_err(setup)?;
        Ok(sqlite)
    }

    fn open(&self) -> Result<Connection> {
        let conn = Connection::open(&self.path).map_err(setup)?;
        conn.busy_timeout(Duration::from_secs(60)).map_err(setup)?;
        let mode: String = conn
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .map_err(setup)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(setup(format!("journal_mode is {mode}, not WAL")));
        }
        conn.execute_batch("PRAGMA synchronous=FULL")
            .map_err(setup)?;
        Ok(conn)
    }
}

impl System for Sqlite {
    fn name(&self) -> &'static str {
        "sqlite"
    }

    fn load(&self, records: u64, progress: &(dyn Fn(u64) + Sync)) -> Result<()> {
        let mut conn = self.open()?;
        let placeholders: Vec<String> = (1..=FIELDS + 1).map(|i| format!("?{i}")).collect();
        let sql = format!(
            "INSERT INTO usertable (ycsb_key, {}) VALUES ({})",
            field_list(),
            placeholders.join(", ")
        );
        // The rows go in in key order, as a bulk load into a B-tree should:
        // each insert lands on the tree's right edge, so a transaction
        // dirties (and the WAL receives) only the pages it fills, instead
        // of one random leaf page per row. In hashed order the load took
        // 280 s beside the other systems' loads, in key order 130 s
        // (docs/performance.md, "SQLite loads in key order").
        // The hashes are sorted rather than the keys: 8 bytes a record
        // instead of a string each, and the same order.
        let mut hashes: Vec<u64> = (0..records).map(fnv1a).collect();
        hashes.sort_unstable();
        for chunk in hashes.chunks(10_000) {
            let txn = conn.transaction().map_err(setup)?;
            {
                let mut stmt = txn.prepare_cached(&sql).map_err(setup)?;
                for &hash in chunk {
                    let key = key_of_hash(hash);
                    let values: Vec<String> =
                        (0..FIELDS).map(|f| field_value(&key, f, 0)).collect();
                    let mut row: Vec<&dyn rusqlite::ToSql> = vec![&key];
                    row.extend(values.iter().map(|v| v as &dyn rusqlite::ToSql));
                    stmt.execute(row.as_slice()).map_err(setup)?;
                }
            }
            txn.commit().map_err(setup)?;
            progress(chunk.len() as u64);
        }
        conn.execute_batch("ANALYZE; PRAGMA wal_checkpoint(TRUNCATE)")
            .map_err(setup)?;
        Ok(())
    }

    fn client(&self) -> Result<Box<dyn Client>> {
        Ok(Box::new(SqliteClient {
            conn: self.open()?,
            fields: field_list(),
        }))
    }
}

struct SqliteClient {
    conn: Connection,
    fields: String,
}

impl SqliteClient {
    fn read(&self, key: &str) -> Result<()> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {} FROM usertable WHERE ycsb_key = ?1",
                self.fields
            ))
            .map_err(op_error)?;
        let mut rows = stmt.query(params![key]).map_err(op_error)?;
        let row = rows
            .next()
            .map_err(op_error)?
            .ok_or_else(|| Error::Op("read returned no row".into()))?;
        let last: String = row.get(FIELDS - 1).map_err(op_error)?;
        if last.is_empty() {
            return Err(Error::Op("read returned an empty field".into()));
        }
        Ok(())
    }

    fn update(&self, key: &str, field: usize, version: u64) -> Result<()> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "UPDATE usertable SET field{field} = ?2 WHERE ycsb_key = ?1"
            ))
            .map_err(op_error)?;
        let n = stmt
            .execute(params![key, field_value(key, field, version)])
            .map_err(op_error)?;
        if n != 1 {
            return Err(Error::Op(format!("update changed {n} rows")));
        }
        Ok(())
    }
}

impl Client for SqliteClient {
    fn run(&mut self, op: &Op, version: u64) -> Result<()> {
        match op {
            Op::Read(key) => self.read(key)?,
            Op::Update { key, field } => self.update(key, *field, version)?,
            Op::Insert { key, .. } => {
                let placeholders: Vec<String> = (1..=FIELDS + 1).map(|i| format!("?{i}")).collect();
                let mut stmt = self
                    .conn
                    .prepare_cached(&format!(
                        "INSERT INTO usertable (ycsb_key, {}) VALUES ({})",
                        self.fields,
                        placeholders.join(", ")
                    ))
                    .map_err(op_error)?;
                let values: Vec<String> =
                    (0..FIELDS).map(|f| field_value(key, f, version)).collect();
                let mut row: Vec<&dyn rusqlite::ToSql> = vec![key];
                row.extend(values.iter().map(|v| v as &dyn rusqlite::ToSql));
                stmt.execute(row.as_slice()).map_err(op_error)?;
            }
            Op::Scan { start, count } => {
                let mut stmt = self
                    .conn
                    .prepare_cached(&format!(
                        "SELECT {} FROM usertable WHERE ycsb_key >= ?1 ORDER BY ycsb_key LIMIT ?2",
                        self.fields
                    ))
                    .map_err(op_error)?;
                let mut rows = stmt
                    .query(params![start, *count as i64])
                    .map_err(op_error)?;
                let mut n = 0;
                while rows.next().map_err(op_error)?.is_some() {
                    n += 1;
                }
                if n == 0 {
                    return Err(Error::Op("scan returned no row".into()));
                }
            }
            Op::ReadModifyWrite { key, field } => {
                self.conn
                    .execute_batch("BEGIN IMMEDIATE")
                    .map_err(op_error)?;
                let outcome = self
                    .read(key)
                    .and_then(|()| self.update(key, *field, version));
                match outcome {
                    Ok(()) => self.conn.execute_batch("COMMIT").map_err(op_error)?,
                    Err(e) => {
                        let _ = self.conn.execute_batch("ROLLBACK");
                        return Err(e);
                    }
                }
            }
        }
        Ok(())
    }
}
