//! The sqllogictest suite: the SQL contract of `rowtree-sql`.
//!
//! Every `tests/slt/*.slt` file runs twice, each time on a fresh database:
//! once on `Database::in_memory()` and once on `Database::open(dir)` (the
//! disk engine, in a directory under Cargo's `CARGO_TARGET_TMPDIR`, removed
//! afterwards). Files named `pending_*.slt` hold cases of features that are
//! not implemented yet: they are parsed (so they stay well-formed) but not
//! run, and the harness prints a note for each. Rename a file (or move its
//! cases) when its feature lands.
//!
//! ```text
//! cargo test -p rowtree-sql --test slt                       # every file, both engines
//! cargo test -p rowtree-sql --test slt -- joins types        # files whose name contains a word
//! UPDATE_GOLDENFILES=1 cargo test -p rowtree-sql --test slt  # rewrite expectations, review with git diff
//! SLT_ENGINE=memory|disk                                     # one engine only
//! SLT_PENDING=1                                              # also run the pending_* files
//! ```
//!
//! Unlike `sqllogictest`'s own `run_file`, a file does not stop at its first
//! failing record: every record runs, and every failure is reported (the
//! engine's panics included, as failures of their record). The process exits
//! non-zero if any record failed.
//!
//! # Dialect
//!
//! A file whose first line (blank lines and `#` comments aside) is
//! `dialect postgresql` runs on a PostgreSQL-dialect database: its
//! statements are parsed as PostgreSQL (`docs/design/postgresql.md`, D7).
//! Such files are named `pg_*.slt`. Every other file is GoogleSQL. The
//! `@set` records of a PostgreSQL file evaluate `SELECT <expression>` in
//! PostgreSQL, and parameters are named `p1`, `p2`, ... as `$1`, `$2`, ...
//! refer to them.
//!
//! # Records
//!
//! * `statement ok` / `statement count N` / `statement error <regex>`: DDL,
//!   DML (the count is the DML's exact row count; DDL and transaction
//!   statements count 0) and queries whose rows are not checked.
//! * `query <types> [rowsort|valuesort]` with `----` and the rows. Use
//!   `rowsort` whenever the query has no ORDER BY fixing the row order.
//! * `query error <regex>`. Errors display as `CODE: message`, the message
//!   ending in ` [at line:column]` when GoogleSQL gives a position, so a
//!   regex may check the code too: `NOT_FOUND: Table not found: T`. The
//!   regex is unanchored; escape `[`, `]`, `(`, `)`, `.`, `*`, `+`, `?`.
//! * DML with `THEN RETURN` is a `query`: its rows are the returned rows.
//! * Query parameters: a record whose SQL is `@set name = <expression>`
//!   evaluates `SELECT <expression>` (with the parameters set so far) and
//!   binds its value to `@name` for the following records of the file;
//!   `@null name` binds `@name` to a NULL without a type (as drivers send
//!   one: the statement types it); `@clear` unbinds them all. All three are
//!   `statement ok` records.
//! * `@ddl` is a `query T` record: the schema as GetDatabaseDdl prints it,
//!   one statement per row (each statement's lines trimmed and joined with
//!   one space). `@roundtrip` is a `query T` record with one row: `ok` when
//!   that DDL applies to a fresh database and prints the same again, or
//!   what went wrong.
//! * `@protos <DDL statement>` applies the statement with the proto
//!   descriptors of `examples.spanner.music` (`rowtree_testkit::protos`),
//!   as UpdateDatabaseDdl with `proto_descriptors` does: a `statement ok`
//!   or `statement error` record. Messages are PROTO
//!   columns, shown as `Y` (their bytes); enums are ENUM, shown as `I`.
//!
//! # Column types (checked strictly; `?` in an expectation matches any)
//!
//! | letter | type | letter | type |
//! |---|---|---|---|
//! | `I` | INT64 | `Y` | BYTES |
//! | `R` | FLOAT64 | `D` | DATE |
//! | `F` | FLOAT32 | `S` | TIMESTAMP |
//! | `T` | STRING | `J` | JSON |
//! | `B` | BOOL | `A` | ARRAY<...> |
//! | `N` | NUMERIC | `U` | STRUCT<...> |
//! | `G` | UUID ("GUID") | | |
//!
//! # Value formatting
//!
//! GoogleSQL's `CAST(x AS STRING)` text where it is unambiguous; the column
//! type letter says which type a cell has.
//!
//! * NULL (of any type) is `NULL`.
//! * BOOL `true` / `false`; INT64 decimal; NUMERIC the shortest exact
//!   decimal (`1.5`, `100`, `-0.000000001`).
//! * FLOAT64 / FLOAT32: shortest round-trip digits laid out as GoogleSQL's
//!   CAST does (`1`, `0.5`, `1e+20`, `1e-05`, `inf`, `-inf`, `nan`).
//! * STRING as is, unquoted; the empty string is `(empty)`.
//! * BYTES as a GoogleSQL bytes literal: `b"abc"`, `b"\x00\xff"`.
//! * DATE `YYYY-MM-DD`; TIMESTAMP RFC 3339 in UTC with the fraction trimmed
//!   of trailing zeros: `2020-01-01T08:00:00Z`, `2020-01-01T00:00:00.5Z`.
//! * JSON compact, object keys sorted: `{"a":1,"b":[true,null]}`.
//! * UUID canonical, lowercase `8-4-4-4-12`, unquoted also inside arrays.
//! * ARRAY `[a, b]`, STRUCT `(a, b)`; inside them STRING and BYTES elements
//!   are quoted literals (`["a", NULL, "b c"]`), everything else as above.
//!   An empty array is `[]`.
//!
//! Cells are compared after sqllogictest's default normalization (runs of
//! whitespace become one space).

use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use rowtree_db::{Database, Dialect};
use rowtree_sql::{ExecuteResult, Params, Session};
use rowtree_types::{format_f32, format_f64, Type, Value};
use sqllogictest::{default_normalizer, default_validator, ColumnType, DBOutput, Record, Runner};

// ---------------------------------------------------------------------------
// Column types

#[derive(Debug, Clone, PartialEq, Eq)]
enum Col {
    Int64,
    Float64,
    Float32,
    String,
    Bool,
    Numeric,
    Bytes,
    Date,
    Timestamp,
    Json,
    Uuid,
    Array,
    Struct,
    Any,
}

impl ColumnType for Col {
    fn from_char(c: char) -> Option<Self> {
        Some(match c {
            'I' => Col::Int64,
            'R' => Col::Float64,
            'F' => Col::Float32,
            'T' => Col::String,
            'B' => Col::Bool,
            'N' => Col::Numeric,
            'Y' => Col::Bytes,
            'D' => Col::Date,
            'S' => Col::Timestamp,
            'J' => Col::Json,
            'G' => Col::Uuid,
            'A' => Col::Array,
            'U' => Col::Struct,
            '?' => Col::Any,
            _ => return None,
        })
    }

    fn to_char(&self) -> char {
        match self {
            Col::Int64 => 'I',
            Col::Float64 => 'R',
            Col::Float32 => 'F',
            Col::String => 'T',
            Col::Bool => 'B',
            Col::Numeric => 'N',
            Col::Bytes => 'Y',
            Col::Date => 'D',
            Col::Timestamp => 'S',
            Col::Json => 'J',
            Col::Uuid => 'G',
            Col::Array => 'A',
            Col::Struct => 'U',
            Col::Any => '?',
        }
    }
}

fn col_of(ty: &Type) -> Col {
    match ty {
        Type::Bool => Col::Bool,
        Type::Int64 => Col::Int64,
        Type::Float32 => Col::Float32,
        Type::Float64 => Col::Float64,
        Type::Numeric => Col::Numeric,
        Type::String => Col::String,
        Type::Bytes => Col::Bytes,
        Type::Date => Col::Date,
        Type::Timestamp => Col::Timestamp,
        Type::Json => Col::Json,
        Type::Uuid => Col::Uuid,
        Type::Array(_) => Col::Array,
        Type::Struct(_) => Col::Struct,
        // As they are stored: a message as its bytes, an enum as its number.
        Type::Proto(_) => Col::Bytes,
        Type::Enum(_) => Col::Int64,
    }
}

/// Strict, except that `?` in the expectation matches any column type.
fn column_validator(actual: &[Col], expected: &[Col]) -> bool {
    actual.len() == expected.len()
        && actual
            .iter()
            .zip(expected)
            .all(|(a, e)| *e == Col::Any || a == e)
}

// ---------------------------------------------------------------------------
// Value formatting (see the module docs)

fn format_value(v: &Value, nested: bool) -> String {
    match v {
        Value::Null => "NULL".into(),
        Value::Bool(b) => b.to_string(),
        Value::Int64(i) => i.to_string(),
        Value::Float64(f) => format_f64(*f),
        Value::Float32(f) => format_f32(*f),
        Value::Numeric(n) => n.to_string(),
        Value::String(_) if nested => v.sql_literal(),
        Value::String(s) if s.is_empty() => "(empty)".into(),
        Value::String(s) => s.clone(),
        Value::Bytes(_) => v.sql_literal(),
        Value::Date(d) => d.to_string(),
        Value::Timestamp(t) => t.to_rfc3339(),
        Value::Json(j) => j.to_string(),
        Value::Uuid(u) => u.to_string(),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(|x| format_value(x, true)).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Struct(fields) => {
            let fields: Vec<String> = fields.iter().map(|x| format_value(x, true)).collect();
            format!("({})", fields.join(", "))
        }
    }
}

// ---------------------------------------------------------------------------
// The DB under test

/// An error as the tests see it: `CODE: message`.
#[derive(Debug)]
struct SltError(String);

impl std::fmt::Display for SltError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SltError {}

struct SltDb {
    session: Session,
    params: Params,
}

impl SltDb {
    fn new(db: Database) -> SltDb {
        SltDb {
            session: Session::new(db),
            params: Params::default(),
        }
    }

    fn execute(&mut self, sql: &str) -> Result<ExecuteResult, SltError> {
        self.session
            .execute(sql, &self.params)
            .map_err(|e| SltError(format!("{}: {}", e.code, e.message)))
    }

    /// `@ddl` and `@roundtrip` (see the module docs).
    fn ddl_command(&mut self, sql: &str) -> Option<DBOutput<Col>> {
        let rows: Vec<String> = match sql.trim() {
            "@ddl" => self
                .session
                .database()
                .ddl()
                .iter()
                .map(|s| s.lines().map(str::trim).collect::<Vec<_>>().join(" "))
                .collect(),
            "@roundtrip" => {
                let original = self.session.database().ddl();
                let fresh = Database::in_memory_with(rowtree_db::Options {
                    dialect: self.session.database().dialect(),
                    ..rowtree_sql::database_options()
                });
                let texts: Vec<&str> = original.iter().map(String::as_str).collect();
                let catalog = self.session.database().catalog();
                let protos = catalog.proto_descriptors().map(|p| p.bytes());
                let verdict = match fresh.apply_ddl_with_protos(&texts, protos) {
                    Err(e) => format!("re-apply failed at {}: {e}", texts[e.statement]),
                    Ok(_) if fresh.ddl() == original => "ok".to_string(),
                    Ok(_) => format!("mismatch: {:?}", fresh.ddl()),
                };
                vec![verdict]
            }
            _ => return None,
        };
        Some(DBOutput::Rows {
            types: vec![Col::String],
            rows: rows.into_iter().map(|r| vec![r]).collect(),
        })
    }

    /// `@set name = expr`, `@null name` and `@clear` (see the module docs).
    fn param_command(&mut self, sql: &str) -> Option<Result<DBOutput<Col>, SltError>> {
        let sql = sql.trim();
        if sql == "@clear" {
            self.params = Params::default();
            return Some(Ok(DBOutput::StatementComplete(0)));
        }
        if let Some(name) = sql.strip_prefix("@null ") {
            self.params
                .insert_untyped_null(name.trim().trim_start_matches('@'));
            return Some(Ok(DBOutput::StatementComplete(0)));
        }
        let rest = sql.strip_prefix("@set ")?;
        let Some((name, expr)) = rest.split_once('=') else {
            return Some(Err(SltError("harness: expected `@set name = expr`".into())));
        };
        let name = name.trim().trim_start_matches('@').to_string();
        let result = match self.execute(&format!("SELECT {}", expr.trim())) {
            Ok(r) => r,
            Err(e) => return Some(Err(e)),
        };
        let (ty, value) = match result {
            ExecuteResult::Query(q) if q.rows.len() == 1 && q.rows[0].len() == 1 => {
                (q.columns[0].1.clone(), q.rows[0][0].clone())
            }
            _ => return Some(Err(SltError("harness: @set needs one value".into()))),
        };
        self.params.insert(name, (ty, value));
        Some(Ok(DBOutput::StatementComplete(0)))
    }
}

impl sqllogictest::DB for SltDb {
    type Error = SltError;
    type ColumnType = Col;

    fn run(&mut self, sql: &str) -> Result<DBOutput<Col>, SltError> {
        if let Some(out) = self.param_command(sql) {
            return out;
        }
        if let Some(statement) = sql.trim().strip_prefix("@protos ") {
            let descriptors = rowtree_testkit::protos::music();
            return self
                .session
                .database()
                .apply_ddl_with_protos(&[statement], Some(&descriptors))
                .map(|_| DBOutput::StatementComplete(0))
                .map_err(|e| SltError(format!("{}: {e}", e.code().as_str())));
        }
        if let Some(out) = self.ddl_command(sql) {
            return Ok(out);
        }
        let rows_of = |columns: &[(String, Type)], rows: &[Vec<Value>]| DBOutput::Rows {
            types: columns.iter().map(|(_, t)| col_of(t)).collect(),
            rows: rows
                .iter()
                .map(|r| r.iter().map(|v| format_value(v, false)).collect())
                .collect(),
        };
        Ok(match self.execute(sql)? {
            ExecuteResult::Query(q) => rows_of(&q.columns, &q.rows),
            ExecuteResult::Dml {
                row_count,
                returning: Some(q),
            } => {
                let _ = row_count;
                rows_of(&q.columns, &q.rows)
            }
            ExecuteResult::Dml { row_count, .. } => DBOutput::StatementComplete(row_count),
            _ => DBOutput::StatementComplete(0),
        })
    }

    fn engine_name(&self) -> &str {
        "rowtree"
    }
}

// ---------------------------------------------------------------------------
// Running files

#[derive(Clone, Copy, PartialEq)]
enum Engine {
    Memory,
    Disk,
}

impl Engine {
    fn name(self) -> &'static str {
        match self {
            Engine::Memory => "memory",
            Engine::Disk => "disk",
        }
    }
}

static DIR_SEQ: AtomicUsize = AtomicUsize::new(0);

/// The message of the last panic on this thread, for the failure report.
static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

fn open(engine: Engine, dialect: Dialect) -> (Database, Option<PathBuf>) {
    let options = rowtree_db::Options {
        dialect,
        ..rowtree_sql::database_options()
    };
    match engine {
        Engine::Memory => (Database::in_memory_with(options), None),
        Engine::Disk => {
            let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
                "slt-{}-{}",
                std::process::id(),
                DIR_SEQ.fetch_add(1, Ordering::Relaxed)
            ));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).expect("create the disk engine's directory");
            let db = Database::open_with(&dir, options).expect("open the disk engine");
            (db, Some(dir))
        }
    }
}

fn new_runner(db: &Database) -> Runner<SltDb, impl sqllogictest::MakeConnection<Conn = SltDb>> {
    let db = db.clone();
    let mut runner = Runner::new(move || {
        let db = db.clone();
        async move { Ok(SltDb::new(db)) }
    });
    runner.with_column_validator(|actual, expected| column_validator(actual, expected));
    runner
}

struct FileReport {
    records: usize,
    failures: Vec<String>,
}

/// Runs every record of `path`, collecting all failures.
fn run_file(path: &Path, engine: Engine) -> FileReport {
    let (dialect, records) = match read_file(path) {
        Ok(r) => r,
        Err(e) => {
            return FileReport {
                records: 0,
                failures: vec![format!("parse error: {e}")],
            }
        }
    };
    let (db, dir) = open(engine, dialect);
    let mut failures = Vec::new();
    let mut count = 0;
    {
        let mut runner = new_runner(&db);
        for record in records {
            if matches!(record, Record::Halt { .. }) {
                break;
            }
            let counted = matches!(record, Record::Statement { .. } | Record::Query { .. });
            let loc = record_location(&record);
            if counted {
                count += 1;
            }
            *LAST_PANIC.lock().unwrap() = None;
            match panic::catch_unwind(AssertUnwindSafe(|| runner.run(record))) {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => failures.push(format!("{}", e.display(false))),
                Err(_) => {
                    let msg = LAST_PANIC.lock().unwrap().take().unwrap_or_default();
                    failures.push(format!("{loc}: the engine panicked: {msg}"));
                }
            }
        }
        runner.shutdown();
    }
    drop(db);
    if let Some(dir) = dir {
        let _ = std::fs::remove_dir_all(dir);
    }
    FileReport {
        records: count,
        failures,
    }
}

/// The `dialect postgresql` directive: when a file's first line that is
/// neither blank nor a comment is exactly that, the file runs on a
/// PostgreSQL-dialect database. Returns the dialect and the text with the
/// directive turned into a comment (so line numbers stay true).
fn dialect_of(text: &str) -> (Dialect, String) {
    let first = text
        .lines()
        .position(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    match first {
        Some(i) if text.lines().nth(i).map(str::trim) == Some("dialect postgresql") => {
            let lines: Vec<String> = text
                .lines()
                .enumerate()
                .map(|(n, l)| {
                    if n == i {
                        format!("# {l}")
                    } else {
                        l.to_string()
                    }
                })
                .collect();
            (Dialect::PostgreSql, lines.join("\n") + "\n")
        }
        _ => (Dialect::GoogleSql, text.to_string()),
    }
}

/// Parses `path` and its dialect directive.
fn read_file(path: &Path) -> Result<(Dialect, Vec<Record<Col>>), sqllogictest::ParseError> {
    let text = std::fs::read_to_string(path).expect("read the slt file");
    let (dialect, text) = dialect_of(&text);
    let records = sqllogictest::parse_with_name::<Col>(&text, path.display().to_string())?;
    Ok((dialect, records))
}

fn record_location(record: &Record<Col>) -> String {
    match record {
        Record::Statement { loc, .. } | Record::Query { loc, .. } => loc.to_string(),
        _ => String::new(),
    }
}

/// `UPDATE_GOLDENFILES=1` (the variable every golden test of the
/// workspace uses): rewrites `path`'s expectations from the memory engine
/// (sqllogictest's own override), keeping error regexes that still match.
fn update_file(path: &Path) -> Result<(), String> {
    let original = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let (dialect, text) = dialect_of(&original);
    // A dialect file is updated through a copy without the directive (which
    // sqllogictest does not know), and the directive is put back after.
    let work = if dialect == Dialect::GoogleSql {
        path.to_path_buf()
    } else {
        let copy = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "slt-update-{}-{}",
            std::process::id(),
            path.file_name().unwrap().to_string_lossy()
        ));
        std::fs::write(&copy, &text).map_err(|e| e.to_string())?;
        copy
    };
    let result = update_path(&work, dialect);
    if work != path {
        let updated = std::fs::read_to_string(&work).map_err(|e| e.to_string())?;
        let _ = std::fs::remove_file(&work);
        let restored = updated.replacen("# dialect postgresql", "dialect postgresql", 1);
        std::fs::write(path, restored).map_err(|e| e.to_string())?;
    }
    result
}

fn update_path(path: &Path, dialect: Dialect) -> Result<(), String> {
    let (db, _) = open(Engine::Memory, dialect);
    let mut runner = new_runner(&db);
    let fut = runner.update_test_file(
        path,
        " ",
        default_validator,
        default_normalizer,
        |actual, expected| column_validator(actual, expected),
    );
    let result = panic::catch_unwind(AssertUnwindSafe(|| block_on(fut)));
    match result {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!(
            "the engine panicked: {}",
            LAST_PANIC.lock().unwrap().take().unwrap_or_default()
        )),
    }
}

/// The DB is synchronous, so its futures are ready when first polled;
/// this loop only guards against a spurious `Pending`.
fn block_on<F: std::future::Future>(fut: F) -> F::Output {
    let mut fut = std::pin::pin!(fut);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        if let std::task::Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::yield_now();
    }
}

fn main() {
    let default_hook = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        let msg = if let Some(s) = info.payload().downcast_ref::<&str>() {
            s.to_string()
        } else if let Some(s) = info.payload().downcast_ref::<String>() {
            s.clone()
        } else {
            "(non-string panic)".into()
        };
        let at = info
            .location()
            .map(|l| format!(" at {l}"))
            .unwrap_or_default();
        *LAST_PANIC.lock().unwrap() = Some(format!("{msg}{at}"));
        if std::env::var_os("SLT_PANIC_BACKTRACE").is_some() {
            default_hook(info);
        }
    }));

    // Arguments other than libtest's flags filter files by name.
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let update = std::env::var("UPDATE_GOLDENFILES").is_ok_and(|v| v == "1");
    let run_pending = std::env::var("SLT_PENDING").is_ok_and(|v| v == "1");
    let engines: Vec<Engine> = match std::env::var("SLT_ENGINE").as_deref() {
        Ok("memory") => vec![Engine::Memory],
        Ok("disk") => vec![Engine::Disk],
        _ => vec![Engine::Memory, Engine::Disk],
    };

    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/slt");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/slt exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "slt"))
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str()))
        })
        .collect();
    files.sort();

    let mut total_failed = 0;
    let mut summary = Vec::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if name.starts_with("pending_") && !run_pending {
            let n = read_file(path)
                .map(|(_, r)| {
                    r.iter()
                        .filter(|r| matches!(r, Record::Statement { .. } | Record::Query { .. }))
                        .count()
                })
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            println!(
                "slt {name}: SKIPPED ({n} records of a pending feature; SLT_PENDING=1 runs them)"
            );
            summary.push(format!("{name:<28} pending ({n} records)"));
            continue;
        }
        if update {
            match update_file(path) {
                Ok(()) => println!("slt {name}: expectations rewritten from the memory engine"),
                Err(e) => println!("slt {name}: update failed: {e}"),
            }
        }
        for &engine in &engines {
            let report = run_file(path, engine);
            let failed = report.failures.len();
            total_failed += failed;
            let state = if failed == 0 {
                "ok".to_string()
            } else {
                format!("FAILED {failed}")
            };
            println!(
                "slt {name} [{}]: {state} ({} records)",
                engine.name(),
                report.records
            );
            for f in &report.failures {
                println!("    {}", f.trim_end().replace('\n', "\n    "));
            }
            summary.push(format!(
                "{name:<28} {:<7} {:>4} records, {:>4} failed",
                engine.name(),
                report.records,
                failed
            ));
        }
    }
    println!("\nslt summary:");
    for line in &summary {
        println!("  {line}");
    }
    if total_failed > 0 {
        println!("slt: {total_failed} failing records");
        std::process::exit(1);
    }
}
