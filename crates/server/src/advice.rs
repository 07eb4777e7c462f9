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
                severity = f.severity.as_str(),
                object = %f.object,
                fix = f.fix.as_deref().unwrap_or(""),
                "schema advice: {}",
                f.message
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    use crate::registry::{InstanceMeta, Registry};

    /// A log sink the test reads back.
    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<u8>>>);

    impl Write for Sink {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Sink {
        fn take(&self) -> String {
            String::from_utf8(std::mem::take(&mut *self.0.lock().unwrap())).unwrap()
        }
    }

    #[test]
    fn a_hosted_database_logs_the_advice_a_change_introduces() {
        let sink = Sink::default();
        let writer = sink.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            let registry = Registry::open(None, Default::default()).unwrap();
            registry
                .create_instance(InstanceMeta {
                    name: "projects/p/instances/i".into(),
                    config: "projects/p/instanceConfigs/emulator-config".into(),
                    display_name: "test".into(),
                    node_count: 1,
                    processing_units: 1000,
                    labels: BTreeMap::new(),
                    create_time: 1,
                    update_time: 1,
                    edition: 0,
                })
                .unwrap();
            let hosted = registry
                .create_database("projects/p/instances/i/databases/logs", b"", 1)
                .unwrap();
            hosted
                .db
                .apply_ddl(&[
                    "CREATE TABLE UserAccessLogs (LastAccess TIMESTAMP NOT NULL, \
                     UserId STRING(36) NOT NULL) PRIMARY KEY (LastAccess, UserId)",
                ])
                .unwrap();
            let log = sink.take();
            assert!(log.contains("WARN"), "{log}");
            assert!(log.contains("schema advice"), "{log}");
            assert!(log.contains("rule=\"monotonic-key\""), "{log}");
            assert!(log.contains("object=UserAccessLogs"), "{log}");
            assert!(log.contains("databases/logs"), "{log}");

            // A change that adds no finding logs none, and the old finding is
            // not repeated.
            hosted
                .db
                .apply_ddl(&[
                    "CREATE TABLE Users (UserId STRING(36) NOT NULL) PRIMARY KEY (UserId)",
                ])
                .unwrap();
            let log = sink.take();
            assert!(!log.contains("schema advice"), "{log}");
        });
    }
}
