//! Names: what a valid schema identifier is, how names are compared and
//! printed, and how Spanner names constraints the user did not name.
//!
//! * Schema object names start with a letter, continue with letters, digits
//!   and underscores, and have at most 128 characters. Backquotes let a name
//!   be a reserved keyword, not break these rules.
//! * Names compare case-insensitively but keep their case.
//! * Tables, indexes, sequences and constraints share one namespace.
//! * GetDatabaseDdl backquotes names that are GoogleSQL reserved keywords.
//! * An unnamed CHECK is named `CK_<table>_<hash>_<n>` and an unnamed FOREIGN
//!   KEY `FK_<table>_<referenced>_<hash>_<n>`, where `<hash>` is the FarmHash
//!   Fingerprint64 of a fixed seed and the base name in 16 hex digits and `n`
//!   the first number that makes the name unique, as Spanner does.

use rowtree_parser::ast::Span;

use crate::error::{Result, SchemaError};
use crate::limits::MAX_IDENTIFIER_LENGTH;

/// GoogleSQL's reserved keywords: names that must be backquoted.
const RESERVED: &[&str] = &[
    "ALL",
    "AND",
    "ANY",
    "ARRAY",
    "AS",
    "ASC",
    "ASSERT_ROWS_MODIFIED",
    "AT",
    "BETWEEN",
    "BY",
    "CASE",
    "CAST",
    "COLLATE",
    "CONTAINS",
    "CREATE",
    "CROSS",
    "CUBE",
    "CURRENT",
    "DEFAULT",
    "DEFINE",
    "DESC",
    "DISTINCT",
    "ELSE",
    "END",
    "ENUM",
    "ESCAPE",
    "EXCEPT",
    "EXCLUDE",
    "EXISTS",
    "EXTRACT",
    "FALSE",
    "FETCH",
    "FOLLOWING",
    "FOR",
    "FROM",
    "FULL",
    "GROUP",
    "GROUPING",
    "GROUPS",
    "HASH",
    "HAVING",
    "IF",
    "IGNORE",
    "IN",
    "INNER",
    "INTERSECT",
    "INTERVAL",
    "INTO",
    "IS",
    "JOIN",
    "LATERAL",
    "LEFT",
    "LIKE",
    "LIMIT",
    "LOOKUP",
    "MERGE",
    "NATURAL",
    "NEW",
    "NO",
    "NOT",
    "NULL",
    "NULLS",
    "OF",
    "ON",
    "OR",
    "ORDER",
    "OUTER",
    "OVER",
    "PARTITION",
    "PRECEDING",
    "PROTO",
    "RANGE",
    "RECURSIVE",
    "RESPECT",
    "RIGHT",
    "ROLLUP",
    "ROWS",
    "SELECT",
    "SET",
    "SOME",
    "STRUCT",
    "TABLESAMPLE",
    "THEN",
    "TO",
    "TREAT",
    "TRUE",
    "UNBOUNDED",
    "UNION",
    "UNNEST",
    "USING",
    "WHEN",
    "WHERE",
    "WINDOW",
    "WITH",
    "WITHIN",
];

/// Whether `name` is a GoogleSQL reserved keyword (any case).
pub fn is_reserved(name: &str) -> bool {
    RESERVED.iter().any(|r| r.eq_ignore_ascii_case(name))
}

/// `name` as GetDatabaseDdl prints it: backquoted when reserved.
pub fn print_name(name: &str) -> String {
    if is_reserved(name) {
        format!("`{name}`")
    } else {
        name.to_string()
    }
}

/// `name` as a PostgreSQL-dialect database prints it back: bare if
/// PostgreSQL's folding of unquoted names to lower case keeps it (and it is
/// not a reserved word), double-quoted otherwise.
pub fn print_pg_name(name: &str) -> String {
    let bare = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '$')
        && !rowtree_parser::pg::is_reserved(name);
    if bare {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

/// Checks a schema object name; `kind` is `Table`, `Column`, `Index`, ...
/// Spanner's message is `<kind> name not valid: <name>.`
pub(crate) fn validate(kind: &str, name: &str, span: Span) -> Result<()> {
    let mut chars = name.chars();
    let starts_with_letter = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !starts_with_letter || !rest_ok || name.len() > MAX_IDENTIFIER_LENGTH {
        return Err(SchemaError::invalid(
            format!("{kind} name not valid: {name}."),
            span,
        ));
    }
    Ok(())
}

/// Spanner's seed for generated constraint name fingerprints.
const FINGERPRINT_SEED: &str = "2695C62E33338E4B";

/// A generated constraint name: `<base>_<hash>_<n>` with the smallest `n`
/// for which `taken` is false, truncated to the identifier limit as Spanner
/// does (the base is shortened, never the suffix).
pub(crate) fn generate_constraint_name(base: &str, taken: impl Fn(&str) -> bool) -> String {
    let fingerprint = farmhash2::fingerprint64(format!("{FINGERPRINT_SEED}_{base}").as_bytes());
    let hash = format!("{fingerprint:016X}");
    let mut n: u64 = 1;
    loop {
        let suffix = format!("{hash}_{n}");
        let name = join_truncated(base, &suffix);
        if !taken(&name) {
            return name;
        }
        n += 1;
    }
}

fn join_truncated(base: &str, suffix: &str) -> String {
    let mut base = base;
    let length = base.len() + 1 + suffix.len();
    if length > MAX_IDENTIFIER_LENGTH {
        // Names are ASCII (validated), so byte slicing is on char boundaries.
        let keep = base.len().saturating_sub(length - MAX_IDENTIFIER_LENGTH);
        base = &base[..keep];
        base = base.strip_suffix('_').unwrap_or(base);
    }
    format!("{base}_{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_spanner_rules() {
        let span = Span::default();
        assert!(validate("Table", "Users_2", span).is_ok());
        assert!(validate("Table", "2Users", span).is_err());
        assert!(validate("Table", "_hidden", span).is_err());
        assert!(validate("Table", "has space", span).is_err());
        assert!(validate("Table", &"a".repeat(128), span).is_ok());
        let err = validate("Table", &"a".repeat(129), span).unwrap_err();
        assert_eq!(err.code(), rowtree_types::Code::InvalidArgument);
        assert!(err.message().starts_with("Table name not valid: aaaa"));
    }

    #[test]
    fn reserved_names_are_backquoted() {
        assert_eq!(print_name("Order"), "`Order`");
        assert_eq!(print_name("Orders"), "Orders");
    }

    #[test]
    fn generated_names_are_unique_and_bounded() {
        let first = generate_constraint_name("CK_Users", |_| false);
        assert!(
            first.starts_with("CK_Users_") && first.ends_with("_1"),
            "{first}"
        );
        assert_eq!(first.len(), "CK_Users_".len() + 16 + 2);
        let second = generate_constraint_name("CK_Users", |n| n == first);
        assert!(second.ends_with("_2"));
        let long = generate_constraint_name(&format!("CK_{}", "t".repeat(127)), |_| false);
        assert_eq!(long.len(), MAX_IDENTIFIER_LENGTH);
    }
}
