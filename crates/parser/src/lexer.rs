//! GoogleSQL tokens.
//!
//! Lexing happens in two passes over the same cursor:
//!
//! 1. **Scanning** finds where each token ends ([`scan`]). It only has to know
//!    the shape of literals and comments: a quote runs to the matching quote
//!    (a backslash always takes the next character with it, even in raw
//!    strings), `--` and `#` run to the end of the line, `/*` to `*/`. The
//!    only errors here are unclosed literals and comments. The statement
//!    splitter ([`crate::split_statements`]) uses this pass alone, so a bad
//!    escape in one statement cannot move the boundaries of the next.
//! 2. **Cooking** turns each scanned piece into a [`Token`] ([`tokenize`]):
//!    words become reserved [`Keyword`]s (case-insensitively) or identifiers,
//!    escapes in strings, bytes and backquoted identifiers are decoded, and
//!    stray characters are reported.
//!
//! Non-reserved words such as `TABLE`, `KEY` or `PRIMARY` stay identifiers;
//! the parser recognises them by spelling where the grammar expects them, so
//! they remain usable as names elsewhere. Reserved keywords can only be used
//! as names inside backquotes (`` `Order` ``).

use crate::ast::Span;
use crate::error::{ParseError, Result};

macro_rules! keywords {
    ($($variant:ident => $text:literal,)*) => {
        /// GoogleSQL's reserved keywords: never usable as unquoted identifiers.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Keyword {
            $($variant,)*
        }

        impl Keyword {
            /// Every reserved keyword, in alphabetical order.
            pub const ALL: &'static [Keyword] = &[$(Keyword::$variant,)*];

            /// The keyword's canonical (upper-case) spelling.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Keyword::$variant => $text,)*
                }
            }
        }
    };
}

keywords! {
    All => "ALL", And => "AND", Any => "ANY", Array => "ARRAY", As => "AS", Asc => "ASC",
    AssertRowsModified => "ASSERT_ROWS_MODIFIED", At => "AT", Between => "BETWEEN", By => "BY",
    Case => "CASE", Cast => "CAST", Collate => "COLLATE", Contains => "CONTAINS",
    Create => "CREATE", Cross => "CROSS", Cube => "CUBE", Current => "CURRENT",
    Default => "DEFAULT", Define => "DEFINE", Desc => "DESC", Distinct => "DISTINCT",
    Else => "ELSE", End => "END", Enum => "ENUM", Escape => "ESCAPE", Except => "EXCEPT",
    Exclude => "EXCLUDE", Exists => "EXISTS", Extract => "EXTRACT", False => "FALSE",
    Fetch => "FETCH", Following => "FOLLOWING", For => "FOR", From => "FROM", Full => "FULL",
    Group => "GROUP", Grouping => "GROUPING", Groups => "GROUPS", Hash => "HASH",
    Having => "HAVING", If => "IF", Ignore => "IGNORE", In => "IN", Inner => "INNER",
    Intersect => "INTERSECT", Interval => "INTERVAL", Into => "INTO", Is => "IS", Join => "JOIN",
    Lateral => "LATERAL", Left => "LEFT", Like => "LIKE", Limit => "LIMIT", Lookup => "LOOKUP",
    Merge => "MERGE", Natural => "NATURAL", New => "NEW", No => "NO", Not => "NOT",
    Null => "NULL", Nulls => "NULLS", Of => "OF", On => "ON", Or => "OR", Order => "ORDER",
    Outer => "OUTER", Over => "OVER", Partition => "PARTITION", Preceding => "PRECEDING",
    Proto => "PROTO", Range => "RANGE", Recursive => "RECURSIVE", Respect => "RESPECT",
    Right => "RIGHT", Rollup => "ROLLUP", Rows => "ROWS", Select => "SELECT", Set => "SET",
    Some => "SOME", Struct => "STRUCT", Tablesample => "TABLESAMPLE", Then => "THEN", To => "TO",
    Treat => "TREAT", True => "TRUE", Unbounded => "UNBOUNDED", Union => "UNION",
    Unnest => "UNNEST", Using => "USING", When => "WHEN", Where => "WHERE", Window => "WINDOW",
    With => "WITH", Within => "WITHIN",
}

impl Keyword {
    /// The reserved keyword spelled `word` (any case), if it is one.
    pub fn lookup(word: &str) -> Option<Keyword> {
        Keyword::ALL
            .binary_search_by(|k| cmp_ignore_case(k.as_str(), word))
            .ok()
            .map(|i| Keyword::ALL[i])
    }
}

/// Orders two ASCII words as if both were upper case, matching the order of
/// [`Keyword::ALL`].
fn cmp_ignore_case(a: &str, b: &str) -> std::cmp::Ordering {
    a.bytes()
        .map(|c| c.to_ascii_uppercase())
        .cmp(b.bytes().map(|c| c.to_ascii_uppercase()))
}

/// Words that are not reserved but mean something in the DDL, query or DML
/// grammar. They lex as identifiers; error messages call them keywords, like
/// GoogleSQL does.
pub const NON_RESERVED_KEYWORDS: &[&str] = &[
    "ACTION",
    "ADD",
    "ALTER",
    "ANALYZE",
    "BIT_REVERSED_POSITIVE",
    "BUNDLE",
    "CASCADE",
    "CHECK",
    "COLUMN",
    "CONSTRAINT",
    "COUNTER",
    "DATABASE",
    "DEFINER",
    "DELETE",
    "DROP",
    "ENFORCED",
    "EXPLAIN",
    "FIRST",
    "FOREIGN",
    "GENERATED",
    "GRANT",
    "HIDDEN",
    "IDENTITY",
    "INDEX",
    "INSERT",
    "INTERLEAVE",
    "INVOKER",
    "KEY",
    "LAST",
    "MAX",
    "NULL_FILTERED",
    "OFFSET",
    "OPTIONS",
    "PARENT",
    "PRIMARY",
    "REFERENCES",
    "REPLACE",
    "RESTART",
    "RETURN",
    "REVOKE",
    "ROLE",
    "SECURITY",
    "SEQUENCE",
    "SKIP",
    "SQL",
    "START",
    "STORED",
    "STORING",
    "TABLE",
    "TIME",
    "UNIQUE",
    "UPDATE",
    "VALUES",
    "VIEW",
    "ZONE",
];

/// Punctuation and operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Punct {
    LParen,
    RParen,
    LBracket,
    RBracket,
    Comma,
    Dot,
    Semicolon,
    Eq,
    /// `!=` or `<>`.
    NotEq,
    Lt,
    LtEq,
    Gt,
    GtEq,
    Plus,
    Minus,
    Star,
    Slash,
    /// `||`, string concatenation.
    Concat,
    Pipe,
    Caret,
    Amp,
    Tilde,
    ShiftLeft,
    ShiftRight,
    /// `@` not followed by a name: the start of a hint, `@{...}`.
    At,
    LBrace,
    RBrace,
}

impl Punct {
    /// The usual spelling (`<>` and `!=` are both [`Punct::NotEq`];
    /// [`Token::describe`] quotes the source, so messages show what was written).
    pub fn as_str(self) -> &'static str {
        match self {
            Punct::LParen => "(",
            Punct::RParen => ")",
            Punct::LBracket => "[",
            Punct::RBracket => "]",
            Punct::Comma => ",",
            Punct::Dot => ".",
            Punct::Semicolon => ";",
            Punct::Eq => "=",
            Punct::NotEq => "!=",
            Punct::Lt => "<",
            Punct::LtEq => "<=",
            Punct::Gt => ">",
            Punct::GtEq => ">=",
            Punct::Plus => "+",
            Punct::Minus => "-",
            Punct::Star => "*",
            Punct::Slash => "/",
            Punct::Concat => "||",
            Punct::Pipe => "|",
            Punct::Caret => "^",
            Punct::Amp => "&",
            Punct::Tilde => "~",
            Punct::ShiftLeft => "<<",
            Punct::ShiftRight => ">>",
            Punct::At => "@",
            Punct::LBrace => "{",
            Punct::RBrace => "}",
        }
    }
}

/// What a token is, with its decoded value.
#[derive(Debug, Clone, PartialEq)]
pub enum TokenKind {
    /// A reserved keyword.
    Keyword(Keyword),
    /// An identifier; `quoted` if it was written in backquotes (then it is
    /// never taken for a keyword, reserved or not).
    Ident {
        value: String,
        quoted: bool,
    },
    /// Integer literal text, decimal or `0x` hex, as written.
    Integer(String),
    /// Floating-point literal text, as written.
    Float(String),
    /// String literal, escapes processed.
    String(String),
    /// Bytes literal, escapes processed.
    Bytes(Vec<u8>),
    /// `@name`: the name without `@`.
    Parameter(String),
    Punct(Punct),
    /// End of the text; its span is empty and sits at the end.
    Eof,
}

/// A token and the bytes it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub kind: TokenKind,
    pub span: Span,
}

impl Token {
    /// Whether this is the unquoted word `word` (any case): how the parser
    /// matches non-reserved keywords.
    pub fn is_word(&self, word: &str) -> bool {
        matches!(&self.kind, TokenKind::Ident { value, quoted: false } if value.eq_ignore_ascii_case(word))
    }

    /// How GoogleSQL names this token in "Unexpected ..." and
    /// "... but got ..." messages: `keyword PRIMARY`, `identifier "foo"`,
    /// `")"`, `end of statement`. `source` is the parsed text.
    /// A long token is abbreviated to its first [`DESCRIBE_LIMIT`]
    /// characters and `...`.
    pub fn describe(&self, source: &str) -> String {
        let image = abbreviate(source.get(self.span.start..self.span.end).unwrap_or(""));
        match &self.kind {
            TokenKind::Keyword(k) => format!("keyword {}", k.as_str()),
            TokenKind::Ident {
                value,
                quoted: false,
            } if NON_RESERVED_KEYWORDS
                .iter()
                .any(|w| w.eq_ignore_ascii_case(value)) =>
            {
                format!("keyword {}", value.to_ascii_uppercase())
            }
            TokenKind::Ident { value, .. } => format!("identifier \"{}\"", abbreviate(value)),
            TokenKind::Integer(_) => format!("integer literal \"{image}\""),
            TokenKind::Float(_) => format!("floating point literal \"{image}\""),
            TokenKind::String(_) => format!("string literal {image}"),
            TokenKind::Bytes(_) => format!("bytes literal {image}"),
            TokenKind::Parameter(_) => format!("query parameter \"{image}\""),
            TokenKind::Punct(_) => format!("\"{image}\""),
            TokenKind::Eof => "end of statement".to_string(),
        }
    }
}

/// Characters of a token that error messages quote.
pub const DESCRIBE_LIMIT: usize = 64;

/// `text`, or its first [`DESCRIBE_LIMIT`] characters and `...`.
fn abbreviate(text: &str) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(DESCRIBE_LIMIT) {
        None => text.into(),
        Some((cut, _)) => format!("{}...", &text[..cut]).into(),
    }
}

/// The shape of a scanned piece of text, before cooking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scanned {
    /// A run of letters, digits and `_` starting with a letter or `_`.
    Word,
    /// `` `...` ``.
    Backquoted,
    /// A number; cooking decides integer or float.
    Number,
    /// A string or bytes literal with its prefix.
    Quoted {
        raw: bool,
        bytes: bool,
        triple: bool,
    },
    /// `@name`.
    Parameter,
    Punct(Punct),
    /// A character that starts no token; cooking reports it.
    Illegal,
}

/// Scans `text` into pieces, skipping whitespace and comments. Fails only on
/// an unclosed literal, identifier or comment (at its start).
pub fn scan(text: &str) -> Result<Vec<(Scanned, Span)>> {
    match scan_prefix(text) {
        (pieces, None) => Ok(pieces),
        (_, Some(error)) => Err(error),
    }
}

/// Like [`scan`], but on an error also returns the pieces before it.
pub(crate) fn scan_prefix(text: &str) -> (Vec<(Scanned, Span)>, Option<ParseError>) {
    let mut pieces = Vec::new();
    let mut scanner = Scanner { text, pos: 0 };
    loop {
        match scanner.next_piece() {
            Ok(Some(piece)) => pieces.push(piece),
            Ok(None) => return (pieces, None),
            Err(error) => return (pieces, Some(error)),
        }
    }
}

/// Lexes `text` into tokens, ending with one [`TokenKind::Eof`].
pub fn tokenize(text: &str) -> Result<Vec<Token>> {
    let mut tokens = Vec::new();
    for (scanned, span) in scan(text)? {
        tokens.push(cook(text, scanned, span)?);
    }
    tokens.push(Token {
        kind: TokenKind::Eof,
        span: Span {
            start: text.len(),
            end: text.len(),
        },
    });
    Ok(tokens)
}

struct Scanner<'a> {
    text: &'a str,
    pos: usize,
}

fn is_word_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn is_word_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

impl Scanner<'_> {
    fn byte(&self, at: usize) -> Option<u8> {
        self.text.as_bytes().get(at).copied()
    }

    fn rest_starts_with(&self, prefix: &str) -> bool {
        self.text[self.pos..].starts_with(prefix)
    }

    /// Skips whitespace and comments.
    fn skip_trivia(&mut self) -> Result<()> {
        loop {
            match self.byte(self.pos) {
                Some(c) if c.is_ascii_whitespace() => self.pos += 1,
                Some(b'#') => self.skip_line(),
                Some(b'-') if self.byte(self.pos + 1) == Some(b'-') => self.skip_line(),
                Some(b'/') if self.byte(self.pos + 1) == Some(b'*') => {
                    match self.text[self.pos + 2..].find("*/") {
                        Some(i) => self.pos += 2 + i + 2,
                        None => {
                            return Err(ParseError::new("Syntax error: Unclosed comment", self.pos))
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn skip_line(&mut self) {
        match self.text[self.pos..].find('\n') {
            Some(i) => self.pos += i + 1,
            None => self.pos = self.text.len(),
        }
    }

    fn next_piece(&mut self) -> Result<Option<(Scanned, Span)>> {
        self.skip_trivia()?;
        let start = self.pos;
        let Some(c) = self.byte(start) else {
            return Ok(None);
        };
        let scanned = match c {
            b'`' => {
                self.pos = self.quoted_end(start, start + 1, "`", "identifier")?;
                Scanned::Backquoted
            }
            b'\'' | b'"' => self.quoted(start, 0, false, false)?,
            _ if is_word_start(c) => {
                // A string prefix (r, b, rb, br in any case) directly followed by a quote.
                let word_end = self.word_end(start);
                let word = self.text[start..word_end].to_ascii_lowercase();
                let quote_follows = matches!(self.byte(word_end), Some(b'\'' | b'"'));
                if quote_follows && matches!(word.as_str(), "r" | "b" | "rb" | "br") {
                    let raw = word.contains('r');
                    let bytes = word.contains('b');
                    self.quoted(start, word.len(), raw, bytes)?
                } else {
                    self.pos = word_end;
                    Scanned::Word
                }
            }
            b'0'..=b'9' => {
                self.number(start);
                Scanned::Number
            }
            b'.' if self.byte(start + 1).is_some_and(|d| d.is_ascii_digit()) => {
                self.number(start);
                Scanned::Number
            }
            b'@' if self.byte(start + 1).is_some_and(is_word_start) => {
                self.pos = self.word_end(start + 1);
                Scanned::Parameter
            }
            _ => match self.punct() {
                Some((p, len)) => {
                    self.pos += len;
                    Scanned::Punct(p)
                }
                None => {
                    let len = self.text[start..].chars().next().map_or(1, char::len_utf8);
                    self.pos += len;
                    Scanned::Illegal
                }
            },
        };
        Ok(Some((
            scanned,
            Span {
                start,
                end: self.pos,
            },
        )))
    }

    fn word_end(&self, from: usize) -> usize {
        let mut end = from;
        while self.byte(end).is_some_and(is_word_char) {
            end += 1;
        }
        end
    }

    /// A string or bytes literal whose prefix is `prefix_len` bytes long.
    fn quoted(
        &mut self,
        start: usize,
        prefix_len: usize,
        raw: bool,
        bytes: bool,
    ) -> Result<Scanned> {
        let open = start + prefix_len;
        let q = if self.byte(open) == Some(b'"') {
            "\""
        } else {
            "'"
        };
        let triple_q = q.repeat(3);
        let triple = self.text[open..].starts_with(&triple_q);
        let what = if bytes { "bytes" } else { "string" };
        self.pos = if triple {
            self.quoted_end(start, open + 3, &triple_q, what)?
        } else {
            self.quoted_end(start, open + 1, q, what)?
        };
        Ok(Scanned::Quoted { raw, bytes, triple })
    }

    /// The end (after the closing quote) of a literal whose body starts at
    /// `body`. A backslash always takes the next character along. A newline
    /// ends a single-quoted literal unclosed.
    fn quoted_end(&self, start: usize, body: usize, close: &str, what: &str) -> Result<usize> {
        let unclosed = || ParseError::new(format!("Syntax error: Unclosed {what} literal"), start);
        let multi_line = close.len() == 3;
        let mut i = body;
        loop {
            let rest = &self.text[i..];
            if rest.starts_with(close) {
                return Ok(i + close.len());
            }
            let mut chars = rest.chars();
            match chars.next() {
                None => return Err(unclosed()),
                Some('\n') if !multi_line => return Err(unclosed()),
                Some('\\') => match chars.next() {
                    None => return Err(unclosed()),
                    Some(next) => i += 1 + next.len_utf8(),
                },
                Some(c) => i += c.len_utf8(),
            }
        }
    }

    /// Consumes the longest number at `start`: `0x` hex, or digits with an
    /// optional fraction and exponent. Trailing word characters are taken
    /// too, so that `123abc` is reported as one bad literal.
    fn number(&mut self, start: usize) {
        let mut i = start;
        let digits = |s: &Self, mut i: usize| {
            while s.byte(i).is_some_and(|d| d.is_ascii_digit()) {
                i += 1;
            }
            i
        };
        if self.byte(i) == Some(b'0') && matches!(self.byte(i + 1), Some(b'x' | b'X')) {
            i += 2;
        } else {
            i = digits(self, i);
            if self.byte(i) == Some(b'.') {
                i = digits(self, i + 1);
            }
            if matches!(self.byte(i), Some(b'e' | b'E')) {
                let mut j = i + 1;
                if matches!(self.byte(j), Some(b'+' | b'-')) {
                    j += 1;
                }
                if self.byte(j).is_some_and(|d| d.is_ascii_digit()) {
                    i = digits(self, j);
                }
            }
        }
        self.pos = self.word_end(i);
    }

    fn punct(&self) -> Option<(Punct, usize)> {
        const TWO: &[(&str, Punct)] = &[
            ("!=", Punct::NotEq),
            ("<>", Punct::NotEq),
            ("<=", Punct::LtEq),
            (">=", Punct::GtEq),
            ("||", Punct::Concat),
            ("<<", Punct::ShiftLeft),
            (">>", Punct::ShiftRight),
        ];
        for (s, p) in TWO {
            if self.rest_starts_with(s) {
                return Some((*p, 2));
            }
        }
        let p = match self.byte(self.pos)? {
            b'(' => Punct::LParen,
            b')' => Punct::RParen,
            b'[' => Punct::LBracket,
            b']' => Punct::RBracket,
            b',' => Punct::Comma,
            b'.' => Punct::Dot,
            b';' => Punct::Semicolon,
            b'=' => Punct::Eq,
            b'<' => Punct::Lt,
            b'>' => Punct::Gt,
            b'+' => Punct::Plus,
            b'-' => Punct::Minus,
            b'*' => Punct::Star,
            b'/' => Punct::Slash,
            b'|' => Punct::Pipe,
            b'^' => Punct::Caret,
            b'&' => Punct::Amp,
            b'~' => Punct::Tilde,
            b'@' => Punct::At,
            b'{' => Punct::LBrace,
            b'}' => Punct::RBrace,
            _ => return None,
        };
        Some((p, 1))
    }
}

/// Turns one scanned piece into a token, decoding its value.
fn cook(text: &str, scanned: Scanned, span: Span) -> Result<Token> {
    let image = &text[span.start..span.end];
    let kind = match scanned {
        Scanned::Word => match Keyword::lookup(image) {
            Some(k) => TokenKind::Keyword(k),
            None => TokenKind::Ident {
                value: image.to_string(),
                quoted: false,
            },
        },
        Scanned::Backquoted => {
            let body = &image[1..image.len() - 1];
            let value = decode_escapes(body, span.start + 1, false)?;
            let value = String::from_utf8(value).map_err(|_| invalid_utf8(span.start))?;
            if value.is_empty() {
                return Err(ParseError::new(
                    "Syntax error: Invalid empty identifier",
                    span.start,
                ));
            }
            TokenKind::Ident {
                value,
                quoted: true,
            }
        }
        Scanned::Number => cook_number(image, span.start)?,
        Scanned::Quoted { raw, bytes, triple } => {
            let prefix_len = image
                .bytes()
                .take_while(|c| *c != b'\'' && *c != b'"')
                .count();
            let quote_len = if triple { 3 } else { 1 };
            let body_start = prefix_len + quote_len;
            let body = &image[body_start..image.len() - quote_len];
            let decoded = if raw {
                body.as_bytes().to_vec()
            } else {
                decode_escapes(body, span.start + body_start, bytes)?
            };
            if bytes {
                TokenKind::Bytes(decoded)
            } else {
                TokenKind::String(String::from_utf8(decoded).map_err(|_| invalid_utf8(span.start))?)
            }
        }
        Scanned::Parameter => TokenKind::Parameter(image[1..].to_string()),
        Scanned::Punct(p) => TokenKind::Punct(p),
        Scanned::Illegal => {
            return Err(ParseError::new(
                format!("Syntax error: Illegal input character \"{image}\""),
                span.start,
            ))
        }
    };
    Ok(Token { kind, span })
}

fn invalid_utf8(offset: usize) -> ParseError {
    ParseError::new("Syntax error: Structurally invalid UTF8 string", offset)
}

fn cook_number(image: &str, start: usize) -> Result<TokenKind> {
    let bad = || ParseError::new(format!("Syntax error: Invalid number \"{image}\""), start);
    if let Some(hex) = image
        .strip_prefix("0x")
        .or_else(|| image.strip_prefix("0X"))
    {
        if hex.is_empty() || !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
            return Err(bad());
        }
        return Ok(TokenKind::Integer(image.to_string()));
    }
    if image.bytes().all(|c| c.is_ascii_digit()) {
        return Ok(TokenKind::Integer(image.to_string()));
    }
    // Digits, at most one '.', an exponent: anything else (like `12abc`) is
    // a literal run into a word.
    let (mantissa, exponent) = match image.find(['e', 'E']) {
        Some(i) => (&image[..i], Some(&image[i + 1..])),
        None => (image, None),
    };
    let mantissa_ok = mantissa.bytes().filter(|c| *c == b'.').count() <= 1
        && mantissa.bytes().any(|c| c.is_ascii_digit())
        && mantissa.bytes().all(|c| c.is_ascii_digit() || c == b'.');
    let exponent_ok = exponent.is_none_or(|e| {
        let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
        !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit())
    });
    if mantissa_ok && exponent_ok {
        Ok(TokenKind::Float(image.to_string()))
    } else {
        Err(ParseError::new(
            "Syntax error: Missing whitespace between literal and alias",
            start,
        ))
    }
}

/// Decodes GoogleSQL escapes in the body of a quoted literal or identifier.
/// `offset` is where `body` starts in the text, for error positions.
fn decode_escapes(body: &str, offset: usize, bytes: bool) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(body.len());
    let mut chars = body.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c != '\\' {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            continue;
        }
        let at = offset + i;
        let illegal = |what: &str| {
            ParseError::new(format!("Syntax error: Illegal escape sequence: {what}"), at)
        };
        // The scanner guarantees a character after every backslash.
        let Some((_, e)) = chars.next() else {
            return Err(illegal("\\"));
        };
        let simple = match e {
            'a' => Some(0x07),
            'b' => Some(0x08),
            'f' => Some(0x0c),
            'n' => Some(b'\n'),
            'r' => Some(b'\r'),
            't' => Some(b'\t'),
            'v' => Some(0x0b),
            '\\' => Some(b'\\'),
            '?' => Some(b'?'),
            '"' => Some(b'"'),
            '\'' => Some(b'\''),
            '`' => Some(b'`'),
            _ => None,
        };
        if let Some(b) = simple {
            out.push(b);
            continue;
        }
        let mut take = |n: usize, radix: u32| -> Option<u32> {
            let mut v: u32 = 0;
            for _ in 0..n {
                let (_, d) = chars.next_if(|(_, d)| d.is_digit(radix))?;
                v = v * radix + d.to_digit(radix)?;
            }
            Some(v)
        };
        match e {
            'x' | 'X' => {
                let v = take(2, 16)
                    .ok_or_else(|| illegal("Hex escape must be followed by 2 hex digits"))?;
                // Byte-valued: in strings the result must still be valid UTF-8.
                out.push(v as u8);
            }
            '0'..='7' => {
                let rest = take(2, 8)
                    .ok_or_else(|| illegal("Octal escape must be followed by 3 octal digits"))?;
                let v = (e as u32 - '0' as u32) * 64 + rest;
                let v = u8::try_from(v).map_err(|_| illegal("Octal value out of range"))?;
                out.push(v);
            }
            'u' | 'U' => {
                if bytes {
                    return Err(illegal(
                        "Unicode escape sequence \\u cannot be used in bytes literals",
                    ));
                }
                let n = if e == 'u' { 4 } else { 8 };
                let v = take(n, 16)
                    .ok_or_else(|| illegal(&format!("\\{e} must be followed by {n} hex digits")))?;
                let ch = char::from_u32(v)
                    .ok_or_else(|| illegal("Value of \\U out of range or a surrogate"))?;
                let mut buf = [0u8; 4];
                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
            }
            other => return Err(illegal(&format!("\\{other}"))),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<TokenKind> {
        let mut tokens = tokenize(text).expect("lexes");
        tokens.pop(); // Eof
        tokens.into_iter().map(|t| t.kind).collect()
    }

    fn ident(s: &str, quoted: bool) -> TokenKind {
        TokenKind::Ident {
            value: s.to_string(),
            quoted,
        }
    }

    #[test]
    fn keyword_list_is_sorted_for_binary_search() {
        for pair in Keyword::ALL.windows(2) {
            assert!(pair[0].as_str() < pair[1].as_str(), "{:?}", pair);
        }
    }

    #[test]
    fn keywords_are_case_insensitive_and_identifiers_keep_case() {
        assert_eq!(
            kinds("select Foo `Order` table"),
            vec![
                TokenKind::Keyword(Keyword::Select),
                ident("Foo", false),
                ident("Order", true),
                ident("table", false),
            ]
        );
    }

    #[test]
    fn numbers() {
        assert_eq!(
            kinds("12 0x1F 1.5 .5 1e10 2E-3 3."),
            vec![
                TokenKind::Integer("12".into()),
                TokenKind::Integer("0x1F".into()),
                TokenKind::Float("1.5".into()),
                TokenKind::Float(".5".into()),
                TokenKind::Float("1e10".into()),
                TokenKind::Float("2E-3".into()),
                TokenKind::Float("3.".into()),
            ]
        );
        let err = tokenize("SELECT 12abc").unwrap_err();
        assert_eq!(err.offset, 7);
    }

    #[test]
    fn string_escapes_and_forms() {
        assert_eq!(
            kinds(r#"'a\n\t\\\'' "q\"" '\x41\101\u00e9\U0001F600' r'\n' '''x'y''' """a"b""""#),
            vec![
                TokenKind::String("a\n\t\\'".into()),
                TokenKind::String("q\"".into()),
                TokenKind::String("AAé😀".into()),
                TokenKind::String("\\n".into()),
                TokenKind::String("x'y".into()),
                TokenKind::String("a\"b".into()),
            ]
        );
    }

    #[test]
    fn bytes_literals() {
        assert_eq!(
            kinds(r"b'\xff\x00a' rb'\x' BR'z'"),
            vec![
                TokenKind::Bytes(vec![0xff, 0, b'a']),
                TokenKind::Bytes(b"\\x".to_vec()),
                TokenKind::Bytes(b"z".to_vec()),
            ]
        );
        let err = tokenize(r"b'\u0041'").unwrap_err();
        assert!(err.message.contains("cannot be used in bytes"), "{err}");
    }

    #[test]
    fn bad_escapes_and_unclosed_literals() {
        let err = tokenize(r"x = 'ab\q'").unwrap_err();
        assert_eq!(err.message, r"Syntax error: Illegal escape sequence: \q");
        assert_eq!(err.offset, 7);
        let err = tokenize("x = 'abc").unwrap_err();
        assert_eq!(err.message, "Syntax error: Unclosed string literal");
        assert_eq!(err.offset, 4);
        let err = tokenize("'a\nb'").unwrap_err();
        assert_eq!(err.message, "Syntax error: Unclosed string literal");
        assert!(tokenize("'''a\nb'''").is_ok());
        let err = tokenize("`abc").unwrap_err();
        assert_eq!(err.message, "Syntax error: Unclosed identifier literal");
        let err = tokenize("a /* b").unwrap_err();
        assert_eq!(
            (err.message.as_str(), err.offset),
            ("Syntax error: Unclosed comment", 2)
        );
        let err = tokenize(r"'\xff'").unwrap_err();
        assert_eq!(
            err.message,
            "Syntax error: Structurally invalid UTF8 string"
        );
    }

    #[test]
    fn comments_parameters_and_operators() {
        assert_eq!(
            kinds("@p -- c\n# c\n/* c */ <> != <= << >> || ~"),
            vec![
                TokenKind::Parameter("p".into()),
                TokenKind::Punct(Punct::NotEq),
                TokenKind::Punct(Punct::NotEq),
                TokenKind::Punct(Punct::LtEq),
                TokenKind::Punct(Punct::ShiftLeft),
                TokenKind::Punct(Punct::ShiftRight),
                TokenKind::Punct(Punct::Concat),
                TokenKind::Punct(Punct::Tilde),
            ]
        );
        // `@` before a name is a parameter; otherwise it starts a hint.
        assert_eq!(
            kinds("@{a=@b}"),
            vec![
                TokenKind::Punct(Punct::At),
                TokenKind::Punct(Punct::LBrace),
                ident("a", false),
                TokenKind::Punct(Punct::Eq),
                TokenKind::Parameter("b".into()),
                TokenKind::Punct(Punct::RBrace),
            ]
        );
        let err = tokenize("a $ b").unwrap_err();
        assert_eq!(
            (err.message.as_str(), err.offset),
            ("Syntax error: Illegal input character \"$\"", 2)
        );
    }

    #[test]
    fn spans_are_byte_offsets() {
        let err = tokenize("`é` é").unwrap_err();
        assert_eq!(
            (err.message.as_str(), err.offset),
            ("Syntax error: Illegal input character \"é\"", 5)
        );
        let tokens = tokenize("ab  `x` 'y'").expect("lexes");
        let spans: Vec<_> = tokens.iter().map(|t| (t.span.start, t.span.end)).collect();
        assert_eq!(spans, vec![(0, 2), (4, 7), (8, 11), (11, 11)]);
    }
}
