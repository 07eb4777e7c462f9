//! PostgreSQL tokens.
//!
//! PostgreSQL's lexical rules differ from GoogleSQL's in the places that
//! matter for splitting and naming:
//!
//! * `"..."` is an identifier (a doubled `""` inside is one quote) and keeps
//!   its case; an unquoted word is folded to lower case;
//! * `'...'` is a string whose only escape is a doubled `''`; `E'...'` also
//!   takes backslash escapes; `$tag$...$tag$` is a dollar-quoted string;
//! * `--` runs to the end of the line and `/* */` comments nest; `#` and
//!   backquotes are not comments or quotes;
//! * `$1` is a positional parameter and `::` a cast.
//!
//! Like the GoogleSQL lexer, this one never fails on a character it does
//! not know: it becomes a [`PgTok::Other`] token that the parser reports at
//! its position. The only lexing errors are literals, quoted identifiers and
//! comments left open, so a statement splitter built on [`scan_prefix`] moves
//! a boundary only where PostgreSQL would.

use crate::ast::Span;
use crate::error::{ParseError, Result};

/// What a PostgreSQL token is.
#[derive(Debug, Clone, PartialEq)]
pub enum PgTok {
    /// An unquoted word, folded to lower case.
    Word(String),
    /// A `"quoted"` identifier, exactly as written (quotes removed).
    Quoted(String),
    /// A string literal (`'...'`, `E'...'`, `$$...$$`), decoded.
    Str(String),
    /// A numeric literal as written; `true` when it has a fraction or
    /// exponent.
    Number(String, bool),
    /// `$n`.
    Param(u32),
    /// An operator or punctuation mark: `(`, `::`, `<>`, `||`, ...
    Op(&'static str),
    /// A character PostgreSQL's grammar has no use for here.
    Other(char),
    /// The end of the text.
    Eof,
}

/// A token with its byte range in the statement.
#[derive(Debug, Clone, PartialEq)]
pub struct PgToken {
    pub tok: PgTok,
    pub span: Span,
}

/// Multi-character operators first, so the longest match wins.
const OPS: &[&str] = &[
    "::", "<=", ">=", "<>", "!=", "||", "<<", ">>", "(", ")", "[", "]", ",", ";", ".", "+", "-",
    "*", "/", "%", "=", "<", ">", ":", "|", "&", "^", "~",
];

/// Tokenizes `text`, failing at the first literal or comment left open.
pub fn tokenize(text: &str) -> Result<Vec<PgToken>> {
    let (mut tokens, error) = scan_prefix(text);
    if let Some(error) = error {
        return Err(error);
    }
    tokens.push(PgToken {
        tok: PgTok::Eof,
        span: Span {
            start: text.len(),
            end: text.len(),
        },
    });
    Ok(tokens)
}

/// Tokenizes as much of `text` as can be: the tokens before the first
/// error, and that error (a literal or comment left open).
pub fn scan_prefix(text: &str) -> (Vec<PgToken>, Option<ParseError>) {
    let mut tokens = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        if text[i..].starts_with("--") {
            i = text[i..].find('\n').map_or(text.len(), |n| i + n);
            continue;
        }
        if text[i..].starts_with("/*") {
            match block_comment_end(text, i) {
                Some(end) => {
                    i = end;
                    continue;
                }
                None => {
                    return (
                        tokens,
                        Some(ParseError::new("unterminated /* comment", start)),
                    )
                }
            }
        }
        let result = if c == b'\'' {
            quoted_string(text, i + 1, false).map(|(s, end)| (PgTok::Str(s), end))
        } else if (c == b'e' || c == b'E') && bytes.get(i + 1) == Some(&b'\'') {
            quoted_string(text, i + 2, true).map(|(s, end)| (PgTok::Str(s), end))
        } else if c == b'"' {
            quoted_ident(text, i + 1).map(|(s, end)| (PgTok::Quoted(s), end))
        } else if c == b'$' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit) {
            let mut end = i + 1;
            while end < bytes.len() && bytes[end].is_ascii_digit() {
                end += 1;
            }
            match text[i + 1..end].parse::<u32>() {
                Ok(n) => Ok((PgTok::Param(n), end)),
                Err(_) => Err(ParseError::new("parameter number too large", i)),
            }
        } else if c == b'$' {
            dollar_string(text, i)
        } else if c.is_ascii_digit()
            || (c == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            Ok(number(text, i))
        } else if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 {
            let mut end = i;
            for (n, ch) in text[i..].char_indices() {
                if ch.is_alphanumeric() || ch == '_' || ch == '$' {
                    end = i + n + ch.len_utf8();
                } else {
                    break;
                }
            }
            if end == i {
                // A non-ASCII character that is not a letter.
                let ch = text[i..].chars().next().expect("non-empty");
                Ok((PgTok::Other(ch), i + ch.len_utf8()))
            } else {
                Ok((PgTok::Word(text[i..end].to_lowercase()), end))
            }
        } else if let Some(op) = OPS.iter().find(|op| text[i..].starts_with(**op)) {
            Ok((PgTok::Op(op), i + op.len()))
        } else {
            let ch = text[i..].chars().next().expect("non-empty");
            Ok((PgTok::Other(ch), i + ch.len_utf8()))
        };
        match result {
            Ok((tok, end)) => {
                tokens.push(PgToken {
                    tok,
                    span: Span { start, end },
                });
                i = end;
            }
            Err(e) => return (tokens, Some(e)),
        }
    }
    (tokens, None)
}

/// The end of the (nesting) block comment starting at `start`.
fn block_comment_end(text: &str, start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = start;
    while i < text.len() {
        if text[i..].starts_with("/*") {
            depth += 1;
            i += 2;
        } else if text[i..].starts_with("*/") {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return Some(i);
            }
        } else {
            i += text[i..].chars().next().map_or(1, char::len_utf8);
        }
    }
    None
}

/// A `'...'` body from `from` (after the quote): `''` is a quote; with
/// `escapes`, backslash escapes too. Returns the value and the end offset.
fn quoted_string(text: &str, from: usize, escapes: bool) -> Result<(String, usize)> {
    let mut out = String::new();
    let mut chars = text[from..].char_indices().peekable();
    while let Some((n, ch)) = chars.next() {
        match ch {
            '\'' => {
                if matches!(chars.peek(), Some((_, '\''))) {
                    chars.next();
                    out.push('\'');
                } else {
                    return Ok((out, from + n + 1));
                }
            }
            '\\' if escapes => {
                let Some((_, e)) = chars.next() else { break };
                out.push(match e {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    'b' => '\u{8}',
                    'f' => '\u{c}',
                    other => other,
                });
            }
            other => out.push(other),
        }
    }
    let quote = if escapes { from - 2 } else { from - 1 };
    Err(ParseError::new("unterminated quoted string", quote))
}

/// A `"..."` identifier body from `from` (after the quote).
fn quoted_ident(text: &str, from: usize) -> Result<(String, usize)> {
    let mut out = String::new();
    let mut chars = text[from..].char_indices().peekable();
    while let Some((n, ch)) = chars.next() {
        if ch == '"' {
            if matches!(chars.peek(), Some((_, '"'))) {
                chars.next();
                out.push('"');
            } else {
                if out.is_empty() {
                    return Err(ParseError::new(
                        "zero-length delimited identifier",
                        from - 1,
                    ));
                }
                return Ok((out, from + n + 1));
            }
        } else {
            out.push(ch);
        }
    }
    Err(ParseError::new("unterminated quoted identifier", from - 1))
}

/// `$tag$...$tag$` starting at `start` (the first `$`).
fn dollar_string(text: &str, start: usize) -> Result<(PgTok, usize)> {
    let rest = &text[start + 1..];
    let tag_len = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    if !rest[tag_len..].starts_with('$') {
        return Ok((PgTok::Other('$'), start + 1));
    }
    let delimiter = &text[start..start + tag_len + 2];
    let body = start + delimiter.len();
    match text[body..].find(delimiter) {
        Some(n) => Ok((
            PgTok::Str(text[body..body + n].to_string()),
            body + n + delimiter.len(),
        )),
        None => Err(ParseError::new("unterminated dollar-quoted string", start)),
    }
}

/// A number from `start`: digits, an optional fraction and exponent.
fn number(text: &str, start: usize) -> (PgTok, usize) {
    let bytes = text.as_bytes();
    let mut i = start;
    let mut float = false;
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        i += 1;
    }
    if i < bytes.len() && bytes[i] == b'.' && !text[i..].starts_with("..") {
        float = true;
        i += 1;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
    }
    if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
        let mut j = i + 1;
        if j < bytes.len() && (bytes[j] == b'+' || bytes[j] == b'-') {
            j += 1;
        }
        if j < bytes.len() && bytes[j].is_ascii_digit() {
            float = true;
            i = j;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
        }
    }
    (PgTok::Number(text[start..i].to_string(), float), i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(text: &str) -> Vec<PgTok> {
        tokenize(text)
            .unwrap()
            .into_iter()
            .map(|t| t.tok)
            .filter(|t| *t != PgTok::Eof)
            .collect()
    }

    #[test]
    fn words_fold_and_quoted_identifiers_keep_their_case() {
        assert_eq!(
            toks(r#"Singers "Singers" "a""b""#),
            vec![
                PgTok::Word("singers".into()),
                PgTok::Quoted("Singers".into()),
                PgTok::Quoted("a\"b".into()),
            ]
        );
    }

    #[test]
    fn strings_numbers_params_and_operators() {
        assert_eq!(
            toks(r"'it''s' E'a\nb' $$x'y$$ $t$z$t$ 12 1.5e3 $2 x::int8 <> ||"),
            vec![
                PgTok::Str("it's".into()),
                PgTok::Str("a\nb".into()),
                PgTok::Str("x'y".into()),
                PgTok::Str("z".into()),
                PgTok::Number("12".into(), false),
                PgTok::Number("1.5e3".into(), true),
                PgTok::Param(2),
                PgTok::Word("x".into()),
                PgTok::Op("::"),
                PgTok::Word("int8".into()),
                PgTok::Op("<>"),
                PgTok::Op("||"),
            ]
        );
    }

    #[test]
    fn comments_nest_and_hash_is_not_one() {
        assert_eq!(
            toks("a /* x /* y */ z */ b -- c\n #"),
            vec![
                PgTok::Word("a".into()),
                PgTok::Word("b".into()),
                PgTok::Other('#'),
            ]
        );
    }

    #[test]
    fn open_literals_are_errors_at_their_start() {
        assert_eq!(tokenize("x 'abc").unwrap_err().offset, 2);
        assert_eq!(tokenize("x \"abc").unwrap_err().offset, 2);
        assert_eq!(tokenize("x /* /* */").unwrap_err().offset, 2);
        assert_eq!(tokenize("x E'a").unwrap_err().offset, 2);
        assert_eq!(tokenize("\"\"").unwrap_err().offset, 0);
    }
}
