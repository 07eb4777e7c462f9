//! Errors as PostgreSQL clients read them: a SQLSTATE, a message, and the
//! position in the statement text when Rowtree knows it.
//!
//! Rowtree's layers classify every error with a gRPC [`Code`] and word it
//! as Spanner does. A PostgreSQL client branches on the five-character
//! SQLSTATE instead (psycopg raises `UniqueViolation` for `23505`, drivers
//! retry on `40001`), so [`PgError::from_sql`] maps the code, refined by the
//! message where one gRPC code covers several PostgreSQL classes (NOT_FOUND
//! is both an undefined table, `42P01`, and an undefined column, `42703`).
//! The message keeps Rowtree's text; a trailing `[at line:column]` is also
//! turned into the ErrorResponse's `P` field (a 1-based character position
//! in the query string), which psql prints as a caret under the statement.

use rowtree_types::Code;

/// An error to send in an ErrorResponse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{sqlstate}: {message}")]
pub struct PgError {
    /// `ERROR` or `FATAL` (the connection closes after a FATAL one).
    pub severity: &'static str,
    /// The five-character SQLSTATE.
    pub sqlstate: &'static str,
    pub message: String,
    /// 1-based character position in the query string, when known.
    pub position: Option<usize>,
}

impl PgError {
    /// An ERROR with this SQLSTATE.
    pub fn new(sqlstate: &'static str, message: impl Into<String>) -> PgError {
        PgError {
            severity: "ERROR",
            sqlstate,
            message: message.into(),
            position: None,
        }
    }

    /// A FATAL error: the server closes the connection after sending it.
    pub fn fatal(sqlstate: &'static str, message: impl Into<String>) -> PgError {
        PgError {
            severity: "FATAL",
            ..PgError::new(sqlstate, message)
        }
    }

    /// The statement was sent while the transaction block is failed.
    pub fn in_failed_transaction() -> PgError {
        PgError::new(
            "25P02",
            "current transaction is aborted, commands ignored until end of transaction block",
        )
    }

    /// An error of the SQL layer for statement `text`, whose first character
    /// is at character `offset` of the query string.
    pub fn from_sql(code: Code, message: &str, text: &str, offset: usize) -> PgError {
        let sqlstate = sqlstate(code, message);
        let position = line_column(message)
            .and_then(|(line, column)| char_position(text, line, column))
            .map(|p| p + offset);
        PgError {
            position,
            ..PgError::new(sqlstate, message)
        }
    }

    /// Moves the position by `offset` characters (the statement's place in a
    /// query string of several statements).
    pub fn shifted(mut self, offset: usize) -> PgError {
        if let Some(p) = self.position.as_mut() {
            *p += offset;
        }
        self
    }

    /// The ErrorResponse fields: severity (localized and not), SQLSTATE,
    /// message, position.
    pub fn fields(&self) -> Vec<(u8, String)> {
        let mut f = vec![
            (b'S', self.severity.to_string()),
            (b'V', self.severity.to_string()),
            (b'C', self.sqlstate.to_string()),
            (b'M', self.message.clone()),
        ];
        if let Some(p) = self.position {
            f.push((b'P', p.to_string()));
        }
        f
    }
}

/// The SQLSTATE for an error of `code` worded `message`.
pub fn sqlstate(code: Code, message: &str) -> &'static str {
    let m = message.to_ascii_lowercase();
    match code {
        Code::InvalidArgument => {
            if m.starts_with("syntax error") || m.contains("syntax error") {
                "42601"
            } else if m.contains("unrecognized name") || m.contains("column not found") {
                "42703"
            } else if m.contains("table not found") {
                "42P01"
            } else if m.contains("query parameter") && m.contains("not found") {
                "42P02"
            } else if m.contains("function not found") || m.contains("no matching signature") {
                if m.contains("operator") {
                    "42883"
                } else {
                    "42804"
                }
            } else if m.contains("cannot be inserted")
                || m.contains("cannot be assigned")
                || m.contains("has type")
                || m.contains("type mismatch")
                || m.contains("cannot coerce")
            {
                "42804"
            } else if m.contains("division by zero") {
                "22012"
            } else if m.contains("is not supported") {
                "0A000"
            } else if m.contains("duplicate name") || m.contains("already exists") {
                "42P07"
            } else if m.contains("invalid") {
                "22023"
            } else {
                "42000"
            }
        }
        Code::NotFound => {
            if m.contains("column") {
                "42703"
            } else if m.contains("table") || m.contains("view") || m.contains("index") {
                "42P01"
            } else if m.contains("database") {
                "3D000"
            } else {
                "42704"
            }
        }
        Code::AlreadyExists => {
            if m.contains("duplicate name") || m.contains("schema") {
                "42P07"
            } else {
                "23505"
            }
        }
        Code::FailedPrecondition => {
            if m.contains("null value") || m.contains("cannot be null") || m.contains("not null") {
                "23502"
            } else if m.contains("foreign key") {
                "23503"
            } else if m.contains("check constraint") {
                "23514"
            } else if m.contains("unique") || m.contains("already exists") {
                "23505"
            } else if m.contains("transaction") {
                "25000"
            } else {
                "55000"
            }
        }
        Code::OutOfRange => {
            if m.contains("division by zero") {
                "22012"
            } else {
                "22003"
            }
        }
        Code::Aborted => "40001",
        Code::ResourceExhausted => "54000",
        Code::Unimplemented => "0A000",
        Code::PermissionDenied => "42501",
        Code::Unauthenticated => "28P01",
        Code::DeadlineExceeded | Code::Cancelled => "57014",
        Code::Unavailable => "57P03",
        _ => "XX000",
    }
}

/// The `line:column` of a message's trailing `[at line:column]`.
fn line_column(message: &str) -> Option<(usize, usize)> {
    let start = message.rfind("[at ")?;
    let rest = &message[start + 4..];
    let end = rest.find(']')?;
    let (l, c) = rest[..end].split_once(':')?;
    Some((l.trim().parse().ok()?, c.trim().parse().ok()?))
}

/// The 1-based character position of `line:column` (both 1-based) in `text`.
fn char_position(text: &str, line: usize, column: usize) -> Option<usize> {
    let mut pos = 0;
    for (i, l) in text.split('\n').enumerate() {
        if i + 1 == line {
            return Some(pos + column);
        }
        pos += l.chars().count() + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_map_to_sqlstates() {
        assert_eq!(
            sqlstate(Code::InvalidArgument, "syntax error at or near \"x\""),
            "42601"
        );
        assert_eq!(sqlstate(Code::NotFound, "Table not found: t"), "42P01");
        assert_eq!(
            sqlstate(Code::AlreadyExists, "Row [1] in table t already exists"),
            "23505"
        );
        assert_eq!(sqlstate(Code::Aborted, "aborted"), "40001");
    }

    #[test]
    fn positions_come_from_line_and_column() {
        let e = PgError::from_sql(
            Code::InvalidArgument,
            "Unrecognized name: x [at 2:3]",
            "SELECT\n  x",
            10,
        );
        assert_eq!(e.position, Some(7 + 3 + 10));
        assert_eq!(e.sqlstate, "42703");
    }
}
