//! `rowtree sql` (scripts and the interactive shell) and `rowtree ddl`.
//!
//! Every statement goes through a [`rowtree_sql::Session`]: queries, DML,
//! DDL, EXPLAIN, and BEGIN / COMMIT / ROLLBACK. Errors are reported with the
//! statement's number and the line and column in the script.

use std::io::{IsTerminal, Read, Write};
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use rowtree_db::Database;
use rowtree_parser::{split_statements_in, Position};
use rowtree_sql::{ExecuteResult, Params, Session, SqlError};

use crate::format;
use crate::{Format, SqlArgs};

/// One script to run: its name (for messages) and its text.
struct Script {
    name: String,
    text: String,
}

fn open(args: &SqlArgs) -> Result<Database, String> {
    // The dialect applies to a database this creates; an existing one keeps
    // the dialect recorded when it was created.
    let options = rowtree_db::Options {
        dialect: args.dialect.into(),
        ..rowtree_sql::database_options()
    };
    match &args.location.data_dir {
        Some(dir) => Database::open_with(dir, options)
            .map_err(|e| format!("cannot open database in {}: {e}", dir.display())),
        None => Ok(Database::in_memory_with(options)),
    }
}

fn load_scripts(args: &SqlArgs) -> Result<Vec<Script>, String> {
    let mut scripts = Vec::new();
    for f in &args.files {
        let text = if f.as_os_str() == "-" {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .map_err(|e| format!("cannot read standard input: {e}"))?;
            s
        } else {
            std::fs::read_to_string(f).map_err(|e| format!("cannot read {}: {e}", f.display()))?
        };
        scripts.push(Script {
            name: f.display().to_string(),
            text,
        });
    }
    for (i, e) in args.execute.iter().enumerate() {
        scripts.push(Script {
            name: format!("-e #{}", i + 1),
            text: e.clone(),
        });
    }
    Ok(scripts)
}

fn params(args: &SqlArgs) -> Result<Params, String> {
    let mut params = Params::new();
    for spec in &args.params {
        let (name, ty, value) = crate::params::parse(spec)?;
        params.insert(name, (ty, value));
    }
    Ok(params)
}

/// Runs `rowtree sql`.
pub fn run(args: SqlArgs) -> ExitCode {
    let (scripts, params) = match load_scripts(&args).and_then(|s| Ok((s, params(&args)?))) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let db = match open(&args) {
        Ok(db) => db,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let mut session = Session::new(db);
    if scripts.is_empty() {
        if std::io::stdin().is_terminal() {
            return shell(&mut session, &params, args.format);
        }
        let mut text = String::new();
        if let Err(e) = std::io::stdin().read_to_string(&mut text) {
            eprintln!("error: cannot read standard input: {e}");
            return ExitCode::from(2);
        }
        let script = Script {
            name: "<stdin>".into(),
            text,
        };
        return exit(run_script(
            &mut session,
            &script,
            &params,
            args.format,
            args.bail,
            &mut 0,
        ));
    }
    let mut number = 0usize;
    let mut ok = true;
    for script in &scripts {
        let script_ok = run_script(
            &mut session,
            script,
            &params,
            args.format,
            args.bail,
            &mut number,
        );
        ok &= script_ok;
        if !script_ok && args.bail {
            break;
        }
    }
    exit(ok)
}

fn exit(ok: bool) -> ExitCode {
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Runs every statement of a script; false if any failed.
fn run_script(
    session: &mut Session,
    script: &Script,
    params: &Params,
    format: Format,
    bail: bool,
    number: &mut usize,
) -> bool {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut ok = true;
    // Scripts split by the database's dialect's quoting rules.
    let dialect = session.database().dialect();
    for stmt in split_statements_in(dialect, &script.text) {
        *number += 1;
        // `None`: the result was already written (a streamed query).
        let outcome = match format {
            Format::Table => session.execute(stmt.text, params).map(Some),
            // CSV and JSON stream a query's rows as they are produced.
            Format::Csv | Format::Json => {
                let mut streamed = StreamedRows::new(format);
                let result = session.execute_streaming(stmt.text, params, &mut |columns, row| {
                    streamed.row(&mut out, columns, row);
                    true
                });
                match result {
                    Ok(ExecuteResult::Query(q)) => {
                        streamed.finish(&mut out, &q.columns);
                        Ok(None)
                    }
                    other => other.map(Some),
                }
            }
        };
        match outcome {
            Ok(None) => {}
            Ok(Some(result)) => {
                let _ = writeln!(out, "{}", render(&result, format, None));
            }
            Err(e) => {
                ok = false;
                let (message, pos) = locate(&e, &script.text, stmt.offset, stmt.text);
                match format {
                    Format::Json => {
                        let _ = writeln!(
                            out,
                            "{}",
                            serde_json::json!({"error": {
                                "code": e.code.as_str(),
                                "message": format!("{message} [at {}:{}]", pos.line, pos.column),
                                "statement": *number,
                                "line": pos.line,
                                "column": pos.column,
                            }})
                        );
                    }
                    Format::Table | Format::Csv => {
                        let _ = out.flush();
                        eprintln!(
                            "ERROR in statement {number} ({}, line {}, column {}): {}: {message}",
                            script.name, pos.line, pos.column, e.code
                        );
                    }
                }
                if bail {
                    break;
                }
            }
        }
    }
    let _ = out.flush();
    ok
}

/// Writes a streamed query result in CSV or JSON as rows arrive: the
/// header (or the JSON prefix) before the first row, the rest at the end.
struct StreamedRows {
    format: Format,
    rows: u64,
}

impl StreamedRows {
    fn new(format: Format) -> StreamedRows {
        StreamedRows { format, rows: 0 }
    }

    fn start(&self, out: &mut impl Write, columns: &[(String, rowtree_types::Type)]) {
        let _ = match self.format {
            Format::Csv => writeln!(out, "{}", format::csv(columns, &[])),
            _ => {
                let head = format::json_rows(columns, &[]).to_string();
                // `{"columns":[..],"rows":[]}` without its closing `]}`.
                write!(out, "{}", &head[..head.len() - 2])
            }
        };
    }

    fn row(
        &mut self,
        out: &mut impl Write,
        columns: &[(String, rowtree_types::Type)],
        row: Vec<rowtree_types::Value>,
    ) {
        if self.rows == 0 {
            self.start(out, columns);
        }
        let _ = match self.format {
            Format::Csv => {
                let csv = format::csv(columns, &[row]);
                writeln!(out, "{}", csv.split_once('\n').map_or("", |(_, r)| r))
            }
            _ => {
                let sep = if self.rows == 0 { "" } else { "," };
                let values: Vec<serde_json::Value> = row.iter().map(format::rest_value).collect();
                write!(out, "{sep}{}", serde_json::Value::Array(values))
            }
        };
        self.rows += 1;
    }

    fn finish(&mut self, out: &mut impl Write, columns: &[(String, rowtree_types::Type)]) {
        if self.rows == 0 {
            self.start(out, columns);
        }
        if self.format == Format::Json {
            let _ = writeln!(out, "]}}");
        }
    }
}

/// The error message without its `[at L:C]` suffix, and the position in the
/// whole script (the statement's own position when the error has none).
fn locate(e: &SqlError, script: &str, stmt_offset: usize, stmt: &str) -> (String, Position) {
    let start = stmt_offset + (stmt.len() - stmt.trim_start().len());
    let base = Position::of(script, start);
    let message = e.message.trim_end();
    if let Some(open) = message.rfind(" [at ") {
        let inner = &message[open + 5..message.len().saturating_sub(1)];
        if let Some((l, c)) = inner.split_once(':') {
            if let (Ok(l), Ok(c)) = (l.parse::<usize>(), c.parse::<usize>()) {
                // Positions are relative to the statement text.
                let stmt_base = Position::of(script, stmt_offset);
                let pos = if l == 1 {
                    Position {
                        line: stmt_base.line,
                        column: stmt_base.column + c - 1,
                    }
                } else {
                    Position {
                        line: stmt_base.line + l - 1,
                        column: c,
                    }
                };
                return (message[..open].to_string(), pos);
            }
        }
    }
    (message.to_string(), base)
}

/// A statement's result in the chosen format.
fn render(result: &ExecuteResult, format: Format, elapsed: Option<std::time::Duration>) -> String {
    let timing = |n: usize, what: &str| match elapsed {
        Some(d) => format!("({n} {what}, {:.3} ms)", d.as_secs_f64() * 1000.0),
        None => format!("({n} {what})"),
    };
    match (result, format) {
        (ExecuteResult::Query(q), Format::Json) => {
            format::json_rows(&q.columns, &q.rows).to_string()
        }
        (ExecuteResult::Query(q), Format::Csv) => format::csv(&q.columns, &q.rows),
        (ExecuteResult::Query(q), Format::Table) => {
            format!(
                "{}\n{}",
                format::table(&q.columns, &q.rows),
                timing(q.rows.len(), "rows")
            )
        }
        (
            ExecuteResult::Dml {
                row_count,
                returning,
            },
            Format::Json,
        ) => match returning {
            Some(q) => {
                let mut v = format::json_rows(&q.columns, &q.rows);
                v["row_count"] = serde_json::json!(row_count);
                v.to_string()
            }
            None => serde_json::json!({ "row_count": row_count }).to_string(),
        },
        (
            ExecuteResult::Dml {
                row_count,
                returning,
            },
            _,
        ) => {
            let mut s = String::new();
            if let Some(q) = returning {
                s.push_str(&if format == Format::Csv {
                    format::csv(&q.columns, &q.rows)
                } else {
                    format::table(&q.columns, &q.rows)
                });
                s.push('\n');
            }
            s.push_str(&timing(*row_count as usize, "rows affected"));
            s
        }
        (ExecuteResult::Ddl, Format::Json) | (ExecuteResult::Transaction(_), Format::Json) => {
            serde_json::json!({ "ok": true }).to_string()
        }
        (ExecuteResult::Ddl, _) => "OK".to_string(),
        (ExecuteResult::Transaction(what), _) => what.to_string(),
    }
}

/// The interactive shell: line editing, history, multi-line statements
/// ending with `;`, aligned tables with timing.
fn shell(session: &mut Session, params: &Params, format: Format) -> ExitCode {
    let mut editor = match rustyline::DefaultEditor::new() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: cannot start the line editor: {e}");
            return ExitCode::from(2);
        }
    };
    let history = std::env::var_os("HOME").map(|h| Path::new(&h).join(".rowtree_history"));
    if let Some(h) = &history {
        let _ = editor.load_history(h);
    }
    println!("Rowtree SQL shell. End statements with ';'. BEGIN/COMMIT/ROLLBACK for transactions; \\q quits.");
    let mut buffer = String::new();
    loop {
        let prompt = if buffer.is_empty() {
            "rowtree> "
        } else {
            "      -> "
        };
        let line = match editor.readline(prompt) {
            Ok(l) => l,
            Err(rustyline::error::ReadlineError::Interrupted) => {
                buffer.clear();
                continue;
            }
            Err(_) => break,
        };
        if buffer.is_empty() && matches!(line.trim(), "\\q" | "quit" | "exit") {
            break;
        }
        buffer.push_str(&line);
        buffer.push('\n');
        if !buffer.trim_end().ends_with(';') {
            continue;
        }
        let _ = editor.add_history_entry(buffer.trim());
        let text = std::mem::take(&mut buffer);
        for stmt in split_statements_in(session.database().dialect(), &text) {
            let started = Instant::now();
            match session.execute(stmt.text, params) {
                Ok(result) => println!("{}", render(&result, format, Some(started.elapsed()))),
                Err(e) => {
                    let (message, pos) = locate(&e, &text, stmt.offset, stmt.text);
                    eprintln!("ERROR ({}:{}): {}: {message}", pos.line, pos.column, e.code);
                }
            }
        }
    }
    if let Some(h) = &history {
        let _ = editor.save_history(h);
    }
    ExitCode::SUCCESS
}

/// Runs `rowtree ddl`.
pub fn print_ddl(dir: &Path) -> ExitCode {
    if !dir.exists() {
        eprintln!("error: no database in {}", dir.display());
        return ExitCode::from(2);
    }
    let db = match Database::open_with(dir, rowtree_sql::database_options()) {
        Ok(db) => db,
        Err(e) => {
            eprintln!("error: cannot open database in {}: {e}", dir.display());
            return ExitCode::from(2);
        }
    };
    let statements = db.ddl();
    println!(
        "{}",
        statements
            .iter()
            .map(|s| format!("{s};"))
            .collect::<Vec<_>>()
            .join("\n\n")
    );
    ExitCode::SUCCESS
}
