//! DDL tests: goldenscripts under `tests/scripts/ddl/`, one test each.
//!
//! Each script runs its commands in order against one catalog, starting
//! empty, and shows what the catalog answered. Commands (the statement in
//! quotes; a quoted string may span lines):
//!
//! * `ddl "STATEMENT"`: applies one DDL statement ([`Catalog::apply_sql`])
//!   and prints `ok`, followed by the effects the statement had beyond the
//!   schema itself (`ok: ...`). `!ddl` expects it to fail, printed as `CODE
//!   at line:column: message` (the offending token's position within the
//!   statement, when the error has one).
//! * `schema`: the current schema as GetDatabaseDdl prints it, one
//!   statement a line (`(empty)` for none).
//! * `roundtrip`: re-applies the printed schema to an empty catalog and
//!   fails unless that prints the same schema again.
//! * `reset`: starts again from an empty catalog.
//!
//! Regenerate the expected output with `UPDATE_GOLDENFILES=1 cargo test -p
//! rowtree-schema --test ddl`, then review the diff.

use rowtree_testkit::goldenscript;
use std::error::Error;

use rowtree_parser::Position;
use rowtree_schema::{Catalog, SchemaError};

struct Runner {
    catalog: Catalog,
}

fn format_error(text: &str, e: &SchemaError) -> String {
    let position = e
        .span()
        .map(|s| format!(" at {}", Position::of(text, s.start)))
        .unwrap_or_default();
    format!("{}{position}: {}", e.code(), e.message())
}

fn print_ddl(catalog: &Catalog) -> String {
    let ddl = catalog.ddl();
    if ddl.is_empty() {
        return "(empty)".to_string();
    }
    ddl.iter()
        .map(|s| format!("{s};"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Fails unless the catalog's DDL, applied to an empty catalog, prints the
/// same DDL again.
fn check_roundtrip(catalog: &Catalog) -> Result<String, Box<dyn Error>> {
    let original = catalog.ddl();
    let mut fresh = Catalog::new();
    for statement in &original {
        let (next, _) = fresh.apply_sql(statement).map_err(|e| {
            format!(
                "failed to re-apply:\n{statement}\n{}",
                format_error(statement, &e)
            )
        })?;
        fresh = next;
    }
    if fresh.ddl() != original {
        return Err(format!("mismatch:\n{}", print_ddl(&fresh)).into());
    }
    Ok("ok: ddl re-applies to the same ddl".to_string())
}

impl goldenscript::Runner for Runner {
    type Command = goldenscript::Command;

    fn run(
        &mut self,
        command: &goldenscript::Command,
        _context: &goldenscript::Context,
    ) -> Result<String, Box<dyn Error>> {
        let mut args = command.consume_args();
        let out = match command.name.as_str() {
            "ddl" => {
                let statement = args.next_pos().ok_or("ddl \"STATEMENT\"")?;
                args.reject_next()?;
                let (next, effects) = self
                    .catalog
                    .apply_sql(statement)
                    .map_err(|e| format_error(statement, &e))?;
                self.catalog = next;
                if effects.is_empty() {
                    "ok".to_string()
                } else {
                    let effects: Vec<String> = effects.iter().map(|e| format!("{e:?}")).collect();
                    format!("ok: {}", effects.join(", "))
                }
            }
            "schema" => {
                args.reject_next()?;
                print_ddl(&self.catalog)
            }
            "roundtrip" => {
                args.reject_next()?;
                check_roundtrip(&self.catalog)?
            }
            "reset" => {
                args.reject_next()?;
                self.catalog = Catalog::new();
                "ok".to_string()
            }
            other => return Err(format!("unknown command {other}").into()),
        };
        Ok(out)
    }
}

// One test per script, and a check that every file of the directory has one.
rowtree_testkit::scripts! {
    dir: "ddl",
    runner: Runner { catalog: Catalog::new() },
    scripts: [
        seeds,
        tables,
        indexes,
        alter_table,
        sequences,
        constraints,
        roundtrip,
        row_deletion,
        views_roles_protos,
    ],
}
