//! The SQL dialect of a database.
//!
//! Spanner creates every database in one of two dialects, GoogleSQL or
//! PostgreSQL, and the dialect never changes afterwards. It decides how SQL
//! text is read (which parser the DDL log and requests go through) and how
//! the schema is printed back; everything below the parser is shared. It is
//! defined here, in the crate every layer depends on, so that the database,
//! the parser and the API layer name the same value.

/// The dialect a database was created in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Dialect {
    /// GoogleSQL, the default (and the dialect of every database created
    /// before dialects were recorded).
    #[default]
    GoogleSql,
    /// Spanner's PostgreSQL interface.
    PostgreSql,
}

impl Dialect {
    /// The name the admin API uses (`DatabaseDialect` enum value names).
    pub fn api_name(self) -> &'static str {
        match self {
            Dialect::GoogleSql => "GOOGLE_STANDARD_SQL",
            Dialect::PostgreSql => "POSTGRESQL",
        }
    }

    /// The dialect named by [`Dialect::api_name`], if it is one.
    pub fn from_api_name(name: &str) -> Option<Dialect> {
        match name {
            "GOOGLE_STANDARD_SQL" => Some(Dialect::GoogleSql),
            "POSTGRESQL" => Some(Dialect::PostgreSql),
            _ => None,
        }
    }
}

impl std::fmt::Display for Dialect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.api_name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_names_round_trip() {
        for d in [Dialect::GoogleSql, Dialect::PostgreSql] {
            assert_eq!(Dialect::from_api_name(d.api_name()), Some(d));
        }
        assert_eq!(Dialect::from_api_name("MYSQL"), None);
        assert_eq!(Dialect::default(), Dialect::GoogleSql);
    }
}
