//! Who hears of schema changes: [`SchemaObserver`].
//!
//! A database opened with
//! [`Options::schema_observer`](crate::Options::schema_observer) calls its
//! observer after every DDL batch that changed the schema (also one that
//! failed part-way, since the statements before the failure stay applied),
//! with the catalog before and after the batch. Nothing is called for a
//! batch that changed nothing (`IF NOT EXISTS` on an existing table, a
//! statement refused at once). The server hangs its schema advisor here
//! so that every DDL change, whichever protocol sent it, is checked.

use rowtree_schema::Catalog;

/// Watches a database's schema change.
pub trait SchemaObserver: Send + Sync {
    /// Called after a DDL batch changed the schema from `before` to `after`,
    /// outside the schema lock: reads and writes carry on meanwhile.
    fn schema_changed(&self, before: &Catalog, after: &Catalog);
}
