//! Cutting a DDL script into statements.
//!
//! UpdateDatabaseDdl receives a list of statements, but users and tools also
//! hand over whole scripts. A `;` ends a statement only where the lexer would
//! see it as a token: not inside `'...'`, `"..."`, triple-quoted or raw
//! strings, bytes literals, `` `backquoted` `` identifiers, or `--`, `#` and
//! `/* */` comments. The splitter therefore runs the lexer's scanning pass
//! ([`crate::lexer::scan`]), which knows the extent of every literal and
//! comment but does not decode them, so a bad escape inside one statement
//! is left for [`crate::parse_statement`] to report and cannot move the
//! boundary of the next.
//!
//! Each piece is trimmed to run from its first token to its last, so leading
//! and trailing comments are dropped and a piece with no tokens at all is
//! skipped.

use crate::ast::Span;
use crate::lexer::{self, Punct, Scanned};

/// One statement of a script: its text (without the `;`) and where that text
/// starts in the whole script, so errors can be placed in the script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatementText<'a> {
    pub text: &'a str,
    pub offset: usize,
}

/// Splits `text` at `;` outside literals, backquoted identifiers and comments,
/// skipping statements that are empty or only whitespace and comments.
///
/// Never fails: if a literal or comment is left open, everything from the
/// start of the current statement to the end of the script is returned as its
/// last statement, where parsing reports the error.
pub fn split_statements(text: &str) -> Vec<StatementText<'_>> {
    let (pieces, error) = lexer::scan_prefix(text);
    let mut statements = Vec::new();
    let mut current: Option<Span> = None;
    for (scanned, span) in pieces {
        if scanned == Scanned::Punct(Punct::Semicolon) {
            statements.extend(current.take());
        } else {
            current = Some(match current {
                Some(s) => Span {
                    start: s.start,
                    end: span.end,
                },
                None => span,
            });
        }
    }
    if let Some(error) = error {
        // The statement being scanned runs on to the end of the script.
        let start = current.map_or(error.offset, |s| s.start);
        current = Some(Span {
            start,
            end: text.trim_end().len().max(start),
        });
    }
    statements.extend(current);
    statements
        .into_iter()
        .map(|span| StatementText {
            text: &text[span.start..span.end],
            offset: span.start,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(script: &str) -> Vec<&str> {
        split_statements(script).iter().map(|s| s.text).collect()
    }

    #[test]
    fn splits_on_semicolons_and_skips_empty_statements() {
        assert_eq!(
            texts("CREATE TABLE a;; \n ;DROP TABLE b ;\n  "),
            vec!["CREATE TABLE a", "DROP TABLE b"]
        );
        assert!(texts("").is_empty());
        assert!(texts(" ; -- only a comment\n ; /* and another */ ;").is_empty());
    }

    #[test]
    fn offsets_point_into_the_script() {
        let script = "DROP TABLE a;\n  DROP TABLE b";
        let statements = split_statements(script);
        assert_eq!(statements.len(), 2);
        for s in &statements {
            assert_eq!(&script[s.offset..s.offset + s.text.len()], s.text);
        }
        assert_eq!(statements[1].offset, 16);
    }

    #[test]
    fn semicolons_inside_literals_identifiers_and_comments_do_not_split() {
        let script = r#"SELECT 'a;b', "c;d", '''e;
f''', """g;h""", r'\';', b'i;j', `k;l` -- m;n
# o;p
/* q;
r */ x; y"#;
        let statements = texts(script);
        assert_eq!(statements.len(), 2, "{statements:?}");
        assert!(statements[0].starts_with("SELECT 'a;b'"));
        assert!(statements[0].ends_with("r */ x"));
        assert_eq!(statements[1], "y");
    }

    #[test]
    fn leading_and_trailing_comments_are_trimmed() {
        assert_eq!(
            texts("-- header\nDROP TABLE a -- why\n;"),
            vec!["DROP TABLE a"]
        );
    }

    #[test]
    fn an_unclosed_literal_keeps_the_rest_in_one_statement() {
        assert_eq!(
            texts("DROP TABLE a; CREATE TABLE b (c STRING(1) DEFAULT ('x;); DROP TABLE d"),
            vec![
                "DROP TABLE a",
                "CREATE TABLE b (c STRING(1) DEFAULT ('x;); DROP TABLE d"
            ]
        );
        assert_eq!(
            texts("DROP TABLE a; /* open"),
            vec!["DROP TABLE a", "/* open"]
        );
        assert_eq!(texts("'open; x"), vec!["'open; x"]);
    }

    #[test]
    fn bad_escapes_do_not_move_boundaries() {
        assert_eq!(
            texts(r"SELECT '\q;'; DROP TABLE x"),
            vec![r"SELECT '\q;'", "DROP TABLE x"]
        );
    }
}
