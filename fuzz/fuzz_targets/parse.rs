//! `parse`: any text through the statement splitter and the parser, in
//! both dialects (GoogleSQL's parser and the PostgreSQL one).
//!
//! The parser faces every byte a client sends, so it must never panic, and
//! every error must point into the text it was given (an offset on a
//! character boundary, at most the text's length), or the caret and the
//! `line:column` in the message would be lost or wrong.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rowtree_parser::{parse_statement_in, split_statements_in, Position};
use rowtree_types::Dialect;

/// Parses `text` and checks where the error, if any, points.
fn parse_checked(dialect: Dialect, text: &str) {
    if let Err(e) = parse_statement_in(dialect, text) {
        assert!(
            e.offset <= text.len() && text.is_char_boundary(e.offset),
            "error offset {} outside the text or inside a character ({} bytes): {}",
            e.offset,
            text.len(),
            e.message
        );
        assert!(!e.message.is_empty(), "an error without a message");
        let _ = Position::of(text, e.offset);
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for dialect in [Dialect::GoogleSql, Dialect::PostgreSql] {
        let pieces = split_statements_in(dialect, &text);
        for piece in &pieces {
            let end = piece.offset + piece.text.len();
            assert!(
                end <= text.len() && text.get(piece.offset..end) == Some(piece.text),
                "piece at {} is not the script's text there",
                piece.offset
            );
            parse_checked(dialect, piece.text);
        }
        // The whole script as one statement: several statements must fail
        // cleanly at the second one.
        if pieces.len() != 1 {
            parse_checked(dialect, &text);
        }
    }
});
