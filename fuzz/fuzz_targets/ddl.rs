//! `ddl`: a script of DDL statements applied to an empty in-memory database.
//!
//! Each statement of the input (cut by the parser's splitter) is applied on
//! its own, so one failure does not hide the statements after it. Errors
//! are expected; panics are bugs, and an error's offset must point into its
//! statement.
//!
//! The schema that results must survive the trip GetDatabaseDdl and a
//! backup make: its printed DDL applies to a fresh database, which prints
//! the same DDL back.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rowtree_db::Database;
use rowtree_parser::split_statements;

/// Longer scripts add run time, not new shapes.
const MAX_INPUT: usize = 16 * 1024;
const MAX_STATEMENTS: usize = 64;

fuzz_target!(
    |data: &[u8]| {
        if data.len() > MAX_INPUT {
            return;
        }
        let text = String::from_utf8_lossy(data);
        let pieces = split_statements(&text);
        if pieces.len() > MAX_STATEMENTS {
            return;
        }
        let db = Database::in_memory_with(rowtree_sql::database_options());
        for piece in &pieces {
            if let Err(e) = db.apply_ddl(&[piece.text]) {
                if let Some(offset) = e.offset {
                    assert!(
                        offset <= piece.text.len(),
                        "DDL error offset {offset} past its statement ({} bytes): {}",
                        piece.text.len(),
                        e.error
                    );
                }
            }
        }

        let printed = db.ddl();
        let statements: Vec<&str> = printed.iter().map(String::as_str).collect();
        let again = Database::in_memory_with(rowtree_sql::database_options());
        if let Err(e) = again.apply_ddl(&statements) {
            panic!(
                "the printed schema does not apply: statement {}: {}\n{}",
                e.statement,
                e.error,
                printed.join(";\n")
            );
        }
        assert_eq!(again.ddl(), printed, "the printed schema changed on re-applying");
    }
);
