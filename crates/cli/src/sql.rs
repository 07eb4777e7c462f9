//! `rowtree sql` and `rowtree ddl`.

use std::io::{Read, Write};
use std::path::Path;
use std::process::ExitCode;

use rowtree_db::Database;
use rowtree_parser::{split_statements, Position};

use crate::{Format, SqlArgs};

/// One script to run: its name (for messages) and its text.
struct Script {
    name: String,
    text: String,
}

fn open(args: &SqlArgs) -> Result<Database, String> {
    match (&args.location.data_dir, args.location.in_memory) {
        (Some(dir), _) => Database::open(dir)
            .map_err(|e| format!("cannot open database in {}: {e}", dir.display())),
        (None, _) => Ok(Database::in_memory()),
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

/// Runs `rowtree sql`.
pub fn run(args: SqlArgs) -> ExitCode {
    let scripts = match load_scripts(&args) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if scripts.is_empty() {
        eprintln!("error: nothing to run: give statements with -e or a file with -f (interactive shell comes with the SQL issue)");
        return ExitCode::from(2);
    }
    let db = match open(&args) {
        Ok(db) => db,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut failed = false;
    let mut number = 0usize;
    'scripts: for script in &scripts {
        for stmt in split_statements(&script.text) {
            number += 1;
            match db.apply_ddl_statement(stmt.text) {
                Ok(()) => {
                    let _ = match args.format {
                        Format::Json => writeln!(out, "{}", serde_json::json!({"ok": true})),
                        Format::Table => writeln!(out, "OK (statement {number})"),
                    };
                }
                Err(e) => {
                    failed = true;
                    let offset = stmt.offset + e.offset.unwrap_or_else(|| leading_space(stmt.text));
                    let pos = Position::of(&script.text, offset);
                    let message = e.error.to_string();
                    match args.format {
                        Format::Json => {
                            let _ = writeln!(
                                out,
                                "{}",
                                serde_json::json!({"error": {
                                    "code": e.error.code(),
                                    "message": format!("{message} [at {}:{}]", pos.line, pos.column),
                                    "statement": number,
                                    "line": pos.line,
                                    "column": pos.column,
                                }})
                            );
                        }
                        Format::Table => {
                            let _ = out.flush();
                            eprintln!(
                                "ERROR in statement {number} ({}, line {}, column {}): {}: {message}",
                                script.name,
                                pos.line,
                                pos.column,
                                e.error.code()
                            );
                        }
                    }
                    if args.bail {
                        break 'scripts;
                    }
                }
            }
        }
    }
    let _ = out.flush();
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Bytes of whitespace and comments before the statement's first token.
fn leading_space(text: &str) -> usize {
    text.len() - text.trim_start().len()
}

/// Runs `rowtree ddl`.
pub fn print_ddl(dir: &Path) -> ExitCode {
    if !dir.exists() {
        eprintln!("error: no database in {}", dir.display());
        return ExitCode::from(2);
    }
    let db = match Database::open(dir) {
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
