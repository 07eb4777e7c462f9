//! Plan tests: goldenscripts under `tests/scripts/plans/`, one test each.
//!
//! They show whole plans, so a change anywhere in a plan is seen, and what
//! each planner pass did on its own. Commands (SQL in double quotes):
//!
//! * `setup NAME`: runs the statements of `tests/scripts/fixtures/NAME.sql`.
//! * `exec "SQL"`: runs a statement, printing nothing (or its error).
//! * `query [show=count] [sort=true] "SQL"`: the rows (or only how many;
//!   sorted as text for a query whose order is not defined), then the keys
//!   the scans read: the counters show a plan paid off.
//! * `explain "SQL"`: the `EXPLAIN` (or `EXPLAIN ANALYZE`) output of the
//!   final plan, DML included.
//! * `plan [pass=NAME] "SQL"`: the plan after binding, then after each
//!   planner pass that changed it (headed by the pass's name); with `pass`,
//!   only the plan after that pass.
//! * `same "SQL" "SQL"`: both queries return the same rows, in any order.
//!
//! `id=N` on `query`, `explain` and `plan` binds the parameter `@id`.
//! Regenerate the expected output with `UPDATE_GOLDENFILES=1 cargo test -p
//! rowtree-sql --test plans`, then review the diff.

use rowtree_testkit::goldenscript;
use std::error::Error;
use std::fmt::Write as _;

use rowtree_db::Database;
use rowtree_parser::ast::StatementKind;
use rowtree_sql::{ExecuteResult, Params, QueryResult, Session};
use rowtree_types::{Type, Value};

struct Runner {
    session: Session,
}

impl Runner {
    fn new() -> Runner {
        Runner {
            session: Session::new(Database::in_memory_with(rowtree_sql::database_options())),
        }
    }

    fn execute(&mut self, sql: &str, params: &Params) -> Result<ExecuteResult, Box<dyn Error>> {
        Ok(self.session.execute(sql, params)?)
    }

    fn query(&mut self, sql: &str, params: &Params) -> Result<QueryResult, Box<dyn Error>> {
        match self.execute(sql, params)? {
            ExecuteResult::Query(q) => Ok(q),
            other => Err(format!("not a query result: {other:?}").into()),
        }
    }
}

/// The statements of a fixture file, split at `;` line ends.
fn fixture(name: &str) -> Result<Vec<String>, Box<dyn Error>> {
    let path = format!(
        "{}/tests/scripts/fixtures/{name}.sql",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    Ok(text
        .split(";\n")
        .map(|s| {
            s.lines()
                .filter(|l| !l.trim_start().starts_with("--"))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .filter(|s| !s.trim().is_empty())
        .collect())
}

fn row_text(row: &[Value]) -> String {
    row.iter()
        .map(|v| match v {
            Value::String(s) => format!("'{s}'"),
            other => other.to_string(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn lines(q: &QueryResult) -> Result<String, Box<dyn Error>> {
    let mut out = String::new();
    for r in &q.rows {
        match &r[0] {
            Value::String(l) => writeln!(out, "{l}")?,
            other => return Err(format!("not an EXPLAIN line: {other:?}").into()),
        }
    }
    Ok(out)
}

impl goldenscript::Runner for Runner {
    type Command = goldenscript::Command;

    fn run(
        &mut self,
        command: &goldenscript::Command,
        _context: &goldenscript::Context,
    ) -> Result<String, Box<dyn Error>> {
        let mut args = command.consume_args();
        let mut params = Params::new();
        if let Some(id) = args.take_key("id") {
            params.insert("id".into(), (Type::Int64, Value::Int64(id.parse()?)));
        }
        let mut out = String::new();
        match command.name.as_str() {
            "setup" => {
                let name = args.next_pos().ok_or("setup NAME")?;
                args.reject_next()?;
                for sql in fixture(name)? {
                    self.execute(&sql, &params)?;
                }
            }
            "exec" => {
                let sql = args.next_pos().ok_or("exec \"SQL\"")?;
                args.reject_next()?;
                self.execute(sql, &params)?;
            }
            "query" => {
                let count = match args.take_key("show") {
                    None => false,
                    Some("count") => true,
                    Some(other) => return Err(format!("show={other}?").into()),
                };
                let sorted = args.take_key("sort").is_some_and(|v| v == "true");
                let sql = args.next_pos().ok_or("query \"SQL\"")?;
                args.reject_next()?;
                let q = self.query(sql, &params)?;
                if count {
                    writeln!(out, "{} rows", q.rows.len())?;
                } else {
                    let mut rows: Vec<String> = q.rows.iter().map(|r| row_text(r)).collect();
                    if sorted {
                        rows.sort();
                    }
                    for r in rows {
                        writeln!(out, "{r}")?;
                    }
                }
                writeln!(out, "rows scanned: {}", q.stats.rows_scanned)?;
            }
            "explain" => {
                let sql = args.next_pos().ok_or("explain \"SQL\"")?;
                args.reject_next()?;
                out = lines(&self.query(&format!("EXPLAIN {sql}"), &params)?)?;
            }
            "plan" => {
                let only = args.take_key("pass");
                let sql = args.next_pos().ok_or("plan \"SQL\"")?;
                args.reject_next()?;
                let stmt = rowtree_parser::parse_statement(sql)?;
                let StatementKind::Query(q) = stmt.kind else {
                    return Err("plan takes a query".into());
                };
                let catalog = self.session.database().catalog();
                let steps = rowtree_sql::plan_query_steps(&catalog, &q, &params)
                    .map_err(|e| e.render(sql))?;
                if let Some(pass) = only {
                    let (_, plan) = steps
                        .iter()
                        .find(|(name, _)| *name == pass)
                        .ok_or_else(|| format!("no pass {pass}"))?;
                    out.push_str(plan);
                } else {
                    let mut last = "";
                    for (name, plan) in &steps {
                        if plan != last {
                            writeln!(out, "{name}:")?;
                            for line in plan.lines() {
                                writeln!(out, "  {line}")?;
                            }
                        }
                        last = plan;
                    }
                }
            }
            "same" => {
                let a = args.next_pos().ok_or("same \"SQL\" \"SQL\"")?;
                let b = args.next_pos().ok_or("same \"SQL\" \"SQL\"")?;
                args.reject_next()?;
                let mut ra: Vec<String> = self
                    .query(a, &params)?
                    .rows
                    .iter()
                    .map(|r| row_text(r))
                    .collect();
                let mut rb: Vec<String> = self
                    .query(b, &params)?
                    .rows
                    .iter()
                    .map(|r| row_text(r))
                    .collect();
                ra.sort();
                rb.sort();
                if ra != rb {
                    return Err(format!(
                        "different rows:\n{}\n---\n{}",
                        ra.join("\n"),
                        rb.join("\n")
                    )
                    .into());
                }
                writeln!(out, "same {} rows", ra.len())?;
            }
            other => return Err(format!("unknown command {other}").into()),
        }
        Ok(out)
    }
}

// One test per script, and a check that every file of the directory has one.
rowtree_testkit::scripts! {
    dir: "plans",
    runner: Runner::new(),
    scripts: [
        access_paths,
        joins,
        interleaved_joins,
        interleaved_left_join,
        interleaved_siblings,
        interleaved_index_parent,
        interleaved_grandchild,
        join_transfer,
        dml,
        filters,
        windows,
    ],
}
