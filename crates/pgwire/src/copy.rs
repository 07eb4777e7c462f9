//! `COPY table [(columns)] FROM STDIN`: rows streamed by the client,
//! written as batched insert mutations.
//!
//! The client sends the rows as CopyData messages in PostgreSQL's text
//! format (tab-separated, `\N` for NULL, backslash escapes) or CSV. Rows are
//! parsed as they complete (a row may span CopyData messages) and gathered
//! into batches of at most [`BATCH_CELLS`] values or [`BATCH_BYTES`] bytes,
//! each one insert mutation.
//!
//! Outside a transaction block each batch commits on its own: a large COPY
//! is *not* atomic (the rows of the batches written before an error stay),
//! which keeps every commit within Rowtree's per-commit mutation limit, as
//! Spanner's own. Inside a `BEGIN` block the batches are buffered in the
//! block's transaction and commit with it, all or nothing, so the block is
//! bound by that limit (80,000 values), unless the session set
//! `rowtree.non_atomic_bulk = on` (for example with
//! `PGOPTIONS='-c rowtree.non_atomic_bulk=on'`): then COPY batches and
//! `TRUNCATE` commit on their own even inside a block, and a `ROLLBACK` does
//! not undo them. That is what `pgbench -i` needs, which loads 400,000
//! values per scale unit in one block. Binary COPY is not supported.

use rowtree_db::Mutation;
use rowtree_schema::Catalog;
use rowtree_types::{Type, Value};

use crate::catalog::fold_name;
use crate::errors::PgError;
use crate::values;

/// Values per batch (one insert mutation), well within the commit limit.
pub const BATCH_CELLS: usize = 20_000;
/// Bytes of row text per batch.
pub const BATCH_BYTES: usize = 4 << 20;
/// The longest row accepted.
pub const MAX_ROW_BYTES: usize = 16 << 20;

/// The data format of a COPY.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyFormat {
    Text,
    Csv,
}

/// A COPY FROM STDIN in progress.
pub struct CopyIn {
    pub table: String,
    pub columns: Vec<(String, Type)>,
    pub format: CopyFormat,
    delimiter: u8,
    null: String,
    header: bool,
    /// Bytes of an incomplete row.
    partial: Vec<u8>,
    batch: Vec<Vec<Value>>,
    batch_bytes: usize,
    /// Rows seen so far (the tag's count).
    pub rows: u64,
    /// Rows in batches handed out.
    line: u64,
    ended: bool,
}

impl CopyIn {
    /// Parses the COPY statement and finds the table and columns.
    pub fn parse(sql: &str, catalog: &Catalog) -> Result<CopyIn, PgError> {
        let syntax = |what: &str| PgError::new("42601", format!("syntax error in COPY: {what}"));
        let s = sql.trim().trim_end_matches(';').trim();
        let lower = s.to_ascii_lowercase();
        let from = find_word(&lower, "from").ok_or_else(|| {
            PgError::new(
                "0A000",
                "only COPY ... FROM STDIN is supported (COPY TO is not)",
            )
        })?;
        let head = s[4..from].trim();
        let tail = s[from + 4..].trim();
        if !tail.to_ascii_lowercase().starts_with("stdin") {
            return Err(PgError::new(
                "0A000",
                "COPY FROM a file is not supported; use COPY ... FROM STDIN",
            ));
        }
        let options = tail[5..].trim();
        let (name, cols) = match head.find('(') {
            Some(i) => {
                let close = head
                    .rfind(')')
                    .ok_or_else(|| syntax("unclosed column list"))?;
                let cols: Vec<String> = head[i + 1..close]
                    .split(',')
                    .map(|c| fold_name(c.trim()))
                    .collect();
                (head[..i].trim(), Some(cols))
            }
            None => (head, None),
        };
        if name.is_empty() || name.starts_with('(') {
            return Err(PgError::new("0A000", "COPY (query) is not supported"));
        }
        let table_name = fold_name(name);
        let table = catalog.table(&table_name).ok_or_else(|| {
            PgError::new("42P01", format!("relation \"{table_name}\" does not exist"))
        })?;
        let columns: Vec<(String, Type)> = match cols {
            None => table
                .columns
                .iter()
                .filter(|c| c.generated.is_none())
                .map(|c| (c.name.clone(), c.ty.clone()))
                .collect(),
            Some(cols) => cols
                .into_iter()
                .map(|c| {
                    table
                        .columns
                        .iter()
                        .find(|tc| tc.name.eq_ignore_ascii_case(&c))
                        .map(|tc| (tc.name.clone(), tc.ty.clone()))
                        .ok_or_else(|| {
                            PgError::new(
                                "42703",
                                format!(
                                    "column \"{c}\" of relation \"{table_name}\" does not exist"
                                ),
                            )
                        })
                })
                .collect::<Result<_, _>>()?,
        };
        let mut copy = CopyIn {
            table: table.name.clone(),
            columns,
            format: CopyFormat::Text,
            delimiter: b'\t',
            null: "\\N".into(),
            header: false,
            partial: Vec::new(),
            batch: Vec::new(),
            batch_bytes: 0,
            rows: 0,
            line: 0,
            ended: false,
        };
        copy.options(options)?;
        Ok(copy)
    }

    /// `WITH (FORMAT csv, HEADER, DELIMITER ',', NULL '', FREEZE)` or the
    /// old unparenthesized forms (`CSV HEADER`, `DELIMITER ','`).
    fn options(&mut self, options: &str) -> Result<(), PgError> {
        let mut o = options.trim();
        if o.len() >= 4 && o[..4].eq_ignore_ascii_case("with") {
            o = o[4..].trim();
        }
        let o = o.trim_start_matches('(').trim_end_matches(')');
        let mut words = tokens(o).into_iter().peekable();
        let mut null_set = false;
        while let Some(w) = words.next() {
            match w.to_ascii_lowercase().as_str() {
                "format" => match words.next().map(|v| v.to_ascii_lowercase()).as_deref() {
                    Some("text") => self.format = CopyFormat::Text,
                    Some("csv") => self.format = CopyFormat::Csv,
                    Some("binary") => {
                        return Err(PgError::new("0A000", "binary COPY is not supported"))
                    }
                    other => {
                        return Err(PgError::new(
                            "42601",
                            format!("COPY format {other:?} not recognized"),
                        ))
                    }
                },
                "csv" => self.format = CopyFormat::Csv,
                "binary" => return Err(PgError::new("0A000", "binary COPY is not supported")),
                "header" => {
                    self.header = !matches!(
                        words.peek().map(|v| v.to_ascii_lowercase()).as_deref(),
                        Some("false" | "off" | "0")
                    );
                    if matches!(
                        words.peek().map(|v| v.to_ascii_lowercase()).as_deref(),
                        Some("true" | "on" | "1" | "false" | "off" | "0")
                    ) {
                        words.next();
                    }
                }
                "delimiter" => {
                    let d = words.next().unwrap_or_default();
                    let d = unquote(&d);
                    if d.len() != 1 {
                        return Err(PgError::new(
                            "22023",
                            "COPY delimiter must be a single one-byte character",
                        ));
                    }
                    self.delimiter = d.as_bytes()[0];
                }
                "null" => {
                    self.null = unquote(&words.next().unwrap_or_default());
                    null_set = true;
                }
                "freeze" | "encoding" | "quote" | "escape" | "force_not_null" | "force_null" => {
                    // FREEZE is an optimisation hint; the others take a
                    // value we do not need to follow for the default forms.
                    if matches!(
                        words.peek().map(|v| v.to_ascii_lowercase()).as_deref(),
                        Some("true" | "on" | "false" | "off")
                    ) || w.eq_ignore_ascii_case("encoding")
                    {
                        words.next();
                    }
                }
                "" | "," => {}
                other => {
                    return Err(PgError::new(
                        "42601",
                        format!("COPY option \"{other}\" not recognized"),
                    ))
                }
            }
        }
        if self.format == CopyFormat::Csv {
            if self.delimiter == b'\t' && !options.to_ascii_lowercase().contains("delimiter") {
                self.delimiter = b',';
            }
            if !null_set {
                self.null = String::new();
            }
        }
        Ok(())
    }

    /// Takes in a chunk of the data stream.
    pub fn feed(&mut self, data: &[u8]) -> Result<(), PgError> {
        if self.ended {
            return Ok(());
        }
        self.partial.extend_from_slice(data);
        let mut start = 0;
        while let Some(i) = self.partial[start..].iter().position(|&b| b == b'\n') {
            let end = start + i;
            let line = self.partial[start..end].to_vec();
            start = end + 1;
            self.line(&line)?;
            if self.ended {
                break;
            }
        }
        self.partial.drain(..start);
        if self.partial.len() > MAX_ROW_BYTES {
            return Err(PgError::new(
                "54000",
                format!("a COPY row is longer than {MAX_ROW_BYTES} bytes"),
            ));
        }
        Ok(())
    }

    /// The end of the data: a last row without a newline is taken.
    pub fn finish(&mut self) -> Result<(), PgError> {
        if !self.partial.is_empty() && !self.ended {
            let line = std::mem::take(&mut self.partial);
            self.line(&line)?;
        }
        Ok(())
    }

    fn line(&mut self, line: &[u8]) -> Result<(), PgError> {
        self.line += 1;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line == b"\\." {
            self.ended = true;
            return Ok(());
        }
        if self.header && self.line == 1 {
            return Ok(());
        }
        let text = std::str::from_utf8(line).map_err(|_| {
            PgError::new(
                "22021",
                format!("COPY line {} is not valid UTF-8", self.line),
            )
        })?;
        let fields = match self.format {
            CopyFormat::Text => split_text(text, self.delimiter as char, &self.null),
            CopyFormat::Csv => split_csv(text, self.delimiter as char, &self.null),
        };
        if fields.len() != self.columns.len() {
            return Err(PgError::new(
                "22P04",
                format!(
                    "COPY line {}: expected {} columns, found {}",
                    self.line,
                    self.columns.len(),
                    fields.len()
                ),
            ));
        }
        let mut row = Vec::with_capacity(fields.len());
        for ((name, ty), f) in self.columns.iter().zip(fields) {
            row.push(match f {
                None => Value::Null,
                Some(s) => values::from_text(ty, &s).map_err(|e| {
                    PgError::new(
                        e.sqlstate,
                        format!("{} (COPY line {}, column {name})", e.message, self.line),
                    )
                })?,
            });
        }
        self.rows += 1;
        self.batch_bytes += line.len();
        self.batch.push(row);
        Ok(())
    }

    /// A full batch as one insert mutation (or what is left, at the end).
    pub fn take_batch(&mut self, last: bool) -> Option<Mutation> {
        let cells = self.batch.len() * self.columns.len().max(1);
        let full = cells >= BATCH_CELLS || self.batch_bytes >= BATCH_BYTES;
        if self.batch.is_empty() || !(full || last) {
            return None;
        }
        self.batch_bytes = 0;
        let rows = std::mem::take(&mut self.batch);
        let columns: Vec<&str> = self.columns.iter().map(|(n, _)| n.as_str()).collect();
        Some(Mutation::insert(&self.table, &columns, rows))
    }
}

/// The position of `word` standing alone in `s` (lower case).
fn find_word(s: &str, word: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut from = 0;
    while let Some(i) = s[from..].find(word) {
        let at = from + i;
        let before = at == 0 || !b[at - 1].is_ascii_alphanumeric() && b[at - 1] != b'_';
        let end = at + word.len();
        let after = end >= b.len() || !b[end].is_ascii_alphanumeric() && b[end] != b'_';
        if before && after {
            return Some(at);
        }
        from = end;
    }
    None
}

/// Words and quoted strings of an option list; commas stand alone.
fn tokens(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c == ',' {
            chars.next();
            out.push(",".into());
        } else if c == '\'' {
            let mut t = String::from("'");
            chars.next();
            while let Some(c) = chars.next() {
                t.push(c);
                if c == '\'' {
                    if chars.peek() == Some(&'\'') {
                        t.push('\'');
                        chars.next();
                    } else {
                        break;
                    }
                }
            }
            out.push(t);
        } else {
            let mut t = String::new();
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() || c == ',' {
                    break;
                }
                t.push(c);
                chars.next();
            }
            out.push(t);
        }
    }
    out
}

fn unquote(s: &str) -> String {
    let s = s.strip_prefix('E').unwrap_or(s);
    if s.len() >= 2 && s.starts_with('\'') && s.ends_with('\'') {
        s[1..s.len() - 1].replace("''", "'").replace("\\t", "\t")
    } else {
        s.to_string()
    }
}

/// A text-format row: fields split at the delimiter, backslash escapes
/// decoded, the NULL marker (unescaped) as `None`.
fn split_text(line: &str, delimiter: char, null: &str) -> Vec<Option<String>> {
    let mut out = Vec::new();
    for raw in line.split(delimiter) {
        if raw == null {
            out.push(None);
            continue;
        }
        let mut s = String::with_capacity(raw.len());
        let mut chars = raw.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '\\' {
                s.push(c);
                continue;
            }
            match chars.next() {
                Some('t') => s.push('\t'),
                Some('n') => s.push('\n'),
                Some('r') => s.push('\r'),
                Some('b') => s.push('\u{8}'),
                Some('f') => s.push('\u{c}'),
                Some('v') => s.push('\u{b}'),
                Some(d @ '0'..='7') => {
                    let mut v = d.to_digit(8).unwrap_or(0);
                    for _ in 0..2 {
                        match chars.peek().and_then(|c| c.to_digit(8)) {
                            Some(x) => {
                                v = v * 8 + x;
                                chars.next();
                            }
                            None => break,
                        }
                    }
                    s.push(char::from_u32(v).unwrap_or('\u{fffd}'));
                }
                Some(other) => s.push(other),
                None => {}
            }
        }
        out.push(Some(s));
    }
    out
}

/// A CSV row: `"`-quoted fields with `""` escapes; an unquoted field equal
/// to the NULL marker is NULL.
fn split_csv(line: &str, delimiter: char, null: &str) -> Vec<Option<String>> {
    let mut out = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        let mut s = String::new();
        let mut quoted = false;
        if chars.peek() == Some(&'"') {
            quoted = true;
            chars.next();
            while let Some(c) = chars.next() {
                if c == '"' {
                    if chars.peek() == Some(&'"') {
                        s.push('"');
                        chars.next();
                    } else {
                        break;
                    }
                } else {
                    s.push(c);
                }
            }
        }
        while let Some(&c) = chars.peek() {
            if c == delimiter {
                break;
            }
            s.push(c);
            chars.next();
        }
        out.push(if !quoted && s == null { None } else { Some(s) });
        if chars.next().is_none() {
            return out;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_rows_split_and_unescape() {
        assert_eq!(
            split_text("1\ta\\tb\t\\N", '\t', "\\N"),
            vec![Some("1".into()), Some("a\tb".into()), None]
        );
        assert_eq!(
            split_csv("1,\"a,\"\"b\",", ',', ""),
            vec![Some("1".into()), Some("a,\"b".into()), None]
        );
    }
}
