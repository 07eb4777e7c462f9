//! The schema advisor on every DDL change.
//!
//! Each database the server hosts is opened with an [`AdviceLog`] as its
//! [`SchemaObserver`]: after every DDL batch that changed the schema,
//! whichever API sent it (UpdateDatabaseDdl, CreateDatabase's extra
//! statements, DDL over the PostgreSQL wire protocol), the advisor checks
//! the new schema and every finding the change introduced goes to the
//! server log as a warning, with its rule, object, message and fix. The
//! same findings stay queryable as `ROWTREE_SYS.SCHEMA_ADVICE`.

use rowtree_db::SchemaObserver;
use rowtree_schema::Catalog;

/// Logs the findings a schema change introduces in one database.
pub struct AdviceLog {
    /// The database's resource name, for the log line.
    pub database: String,
}

impl SchemaObserver for AdviceLog {
    fn schema_changed(&self, before: &Catalog, after: &Catalog) {
        for f in rowtree_sql::rowtree_sys::new_findings(before, after) {
            tracing::warn!(
                database = %self.database,
                rule = f.rule.id(),
                severity = %f.severity,
                object = %f.object,
                fix = f.fix.as_deref().unwrap_or(""),
                "schema advice: {}",
                f.message
            );
        }
    }
}
