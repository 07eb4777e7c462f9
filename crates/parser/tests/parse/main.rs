//! Parse tests: goldenscripts under `tests/scripts/parse/`, one test each.
//!
//! They show what the parser builds, as a printed tree (see [`render`]), so
//! a change in any node, span or error position is seen. Commands (the text
//! in quotes; a quoted string may span lines, `\` escapes):
//!
//! * `parse "SQL"`: parses one statement ([`parse_statement`]) and prints its
//!   tree, headed by the statement's kind and `[start..end]` span.
//! * `expr "EXPR"`: parses one expression ([`parse_expr`]) and prints it on
//!   one line, every operation parenthesized, with its span.
//! * `script "SQL; SQL"`: splits a script ([`split_statements`]) and parses
//!   every piece: each piece's `line:column` in the script, then its tree
//!   or its error (an error in one piece does not stop the others).
//!
//! `!parse` and `!expr` expect a syntax error, printed as `line:column:
//! message` with the position taken in the command's text. Regenerate the
//! expected output with `UPDATE_GOLDENFILES=1 cargo test -p rowtree-parser
//! --test parse`, then review the diff.

mod render;

use rowtree_testkit::goldenscript;
use std::error::Error;

use rowtree_parser::{parse_expr, parse_statement, split_statements, Position};

struct Runner;

impl goldenscript::Runner for Runner {
    type Command = goldenscript::Command;

    fn run(
        &mut self,
        command: &goldenscript::Command,
        _context: &goldenscript::Context,
    ) -> Result<String, Box<dyn Error>> {
        let mut args = command.consume_args();
        let text = args
            .next_pos()
            .ok_or_else(|| format!("{} \"TEXT\"", command.name))?;
        args.reject_next()?;
        let lines = match command.name.as_str() {
            "parse" => {
                let statement = parse_statement(text).map_err(|e| render::error(text, 0, &e))?;
                render::render_statement(text, &statement)
            }
            "expr" => {
                let expr = parse_expr(text).map_err(|e| render::error(text, 0, &e))?;
                vec![format!(
                    "{}  [{}]",
                    render::expr_str(&expr),
                    render::span_str(expr.span())
                )]
            }
            "script" => script(text),
            other => return Err(format!("unknown command {other}").into()),
        };
        Ok(lines.join("\n"))
    }
}

/// Every statement of a script, with where it starts and what it parsed to.
fn script(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for piece in split_statements(text) {
        out.push(format!(
            "statement at {}: {}",
            Position::of(text, piece.offset),
            piece.text.replace('\n', "\\n")
        ));
        match parse_statement(piece.text) {
            Ok(statement) => out.extend(
                render::render_statement(piece.text, &statement)
                    .into_iter()
                    .map(|l| format!("  {l}")),
            ),
            Err(e) => out.push(format!("  error {}", render::error(text, piece.offset, &e))),
        }
    }
    if out.is_empty() {
        out.push("no statements".to_string());
    }
    out
}

// One test per script, and a check that every file of the directory has one.
rowtree_testkit::scripts! {
    dir: "parse",
    runner: Runner,
    scripts: [
        alter,
        create_table,
        dml,
        errors,
        expressions,
        index,
        objects,
        queries,
        scripts,
        seeds,
        sequence,
        windows,
    ],
}
