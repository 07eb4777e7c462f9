//! The catalog: an immutable snapshot of the schema.
//!
//! A [`Catalog`] never changes. [`Catalog::apply`] validates one DDL
//! statement against it and returns a *new* catalog plus the [`Effect`]s the
//! db layer must run on the data; a refused statement leaves nothing behind.
//! Readers keep using the snapshot they hold while a schema change is
//! applied, and cloning a snapshot is one reference-count increment.
//!
//! ```text
//!   Catalog v3 ──apply(stmt)──> Ok((Catalog v4, [Effect, ..]))   db runs effects, then publishes v4
//!              └──────────────> Err(SchemaError)                  v3 stays current
//! ```
//!
//! Ids are deterministic: tables and indexes draw from one counter starting
//! at 1 (both are stored as root-level or interleaved key ranges, so no two
//! objects may share an id), sequences from another. Replaying the same DDL
//! statements in the same order yields the same ids, which is how the db
//! layer reopens a database from its DDL log.

use std::sync::Arc;

use rowtree_parser::ast;
use rowtree_types::{ProtoBundle, Type};

use crate::access::{PrivilegeGrant, Role, RoleGrant};
use crate::apply;
use crate::error::{Result, SchemaError};
use crate::index::Index;
use crate::sequence::Sequence;
use crate::state::State;
use crate::table::Table;
use crate::view::View;
use crate::{print, print_pg};
use crate::{Effect, IndexId, TableId};

/// An immutable snapshot of the schema. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    state: Arc<State>,
}

/// Validates a view's query against a catalog and returns its output
/// columns. Implemented by the SQL layer (which can bind queries).
pub trait ViewAnalyzer: Send + Sync {
    /// Binds `view.query` against `catalog` (which contains `view` itself
    /// and everything created before it). The error is reported as the
    /// statement's error.
    fn analyze(&self, catalog: &Catalog, view: &View) -> Result<Vec<(String, Type)>, SchemaError>;
}

impl Catalog {
    /// An empty catalog (version 0).
    pub fn new() -> Catalog {
        Catalog::default()
    }

    /// An empty catalog of a database in `dialect`. Every catalog made from
    /// it by schema changes keeps the dialect.
    pub fn new_in(dialect: rowtree_types::Dialect) -> Catalog {
        let state = State {
            dialect,
            ..State::default()
        };
        Catalog {
            state: Arc::new(state),
        }
    }

    /// The dialect of the database this catalog describes (GoogleSQL for
    /// [`Catalog::new`]).
    pub fn dialect(&self) -> rowtree_types::Dialect {
        self.state.dialect
    }

    /// Validates one statement against this catalog and returns the catalog
    /// after it plus the data work it needs, in order.
    ///
    /// Deterministic: replaying the same statements in the same order yields
    /// identical ids and an identical catalog.
    ///
    /// Views are validated without binding their queries (see
    /// [`crate::view`]); [`Catalog::apply_with`] binds them too.
    pub fn apply(&self, stmt: &ast::Statement) -> Result<(Catalog, Vec<Effect>)> {
        self.apply_with(stmt, None)
    }

    /// [`Catalog::apply`], with `analyzer` binding the query of a created or
    /// replaced view and of every view that depends on an altered table or
    /// replaced view.
    pub fn apply_with(
        &self,
        stmt: &ast::Statement,
        analyzer: Option<&dyn ViewAnalyzer>,
    ) -> Result<(Catalog, Vec<Effect>)> {
        let mut next = (*self.state).clone();
        let effects = apply::statement(&mut next, stmt)?;
        if let Some(analyzer) = analyzer {
            // The analyzer sees the catalog as the statement left it (the
            // version is bumped below, once the statement is accepted),
            // built only if a view is to be analyzed.
            let snapshot = std::cell::OnceCell::new();
            apply::view::reanalyze(&next, stmt, &|view| {
                let catalog = snapshot.get_or_init(|| Catalog::from_state(next.clone()));
                analyzer.analyze(catalog, view)
            })?;
        }
        next.version += 1;
        Ok((
            Catalog {
                state: Arc::new(next),
            },
            effects,
        ))
    }

    /// Parses and applies one statement (a convenience for tests and tools).
    /// Parse errors are `INVALID_ARGUMENT` at the parser's position.
    pub fn apply_sql(&self, text: &str) -> Result<(Catalog, Vec<Effect>)> {
        let stmt =
            rowtree_parser::parse_statement(text).map_err(|e| SchemaError::from_parse(&e))?;
        self.apply(&stmt)
    }

    /// The table named `name` (case-insensitive).
    pub fn table(&self, name: &str) -> Option<&Table> {
        self.state.table(name)
    }

    /// The table with id `id`.
    pub fn table_by_id(&self, id: TableId) -> Option<&Table> {
        self.state.table_by_id(id)
    }

    /// The index named `name` (case-insensitive).
    pub fn index(&self, name: &str) -> Option<&Index> {
        self.state
            .index_position(name)
            .map(|i| &self.state.indexes[i])
    }

    /// The index with id `id`.
    pub fn index_by_id(&self, id: IndexId) -> Option<&Index> {
        self.state.indexes.iter().find(|i| i.id == id)
    }

    /// Wraps a state (for analyzers that need a [`Catalog`] mid-statement).
    pub(crate) fn from_state(state: State) -> Catalog {
        Catalog {
            state: Arc::new(state),
        }
    }

    /// The view named `name` (case-insensitive).
    pub fn view(&self, name: &str) -> Option<&View> {
        self.state.view(name)
    }

    /// All views, in creation order.
    pub fn views(&self) -> impl Iterator<Item = &View> {
        self.state.views.iter()
    }

    /// User roles, in creation order (the system roles are
    /// [`crate::SYSTEM_ROLES`]).
    pub fn roles(&self) -> impl Iterator<Item = &Role> {
        self.state.roles.iter()
    }

    /// Privileges held by roles, in grant order.
    pub fn privilege_grants(&self) -> &[PrivilegeGrant] {
        &self.state.privilege_grants
    }

    /// Role memberships (`GRANT ROLE a TO ROLE b`), in grant order.
    pub fn role_grants(&self) -> &[RoleGrant] {
        &self.state.role_grants
    }

    /// The fully qualified type names of the proto bundle, in order, or
    /// `None` when the database has no proto bundle.
    pub fn proto_bundle(&self) -> Option<&[String]> {
        self.state.proto_bundle.as_deref()
    }

    /// The proto descriptors PROTO and ENUM types are resolved against, if
    /// any were given.
    pub fn proto_descriptors(&self) -> Option<&Arc<ProtoBundle>> {
        self.state.proto_descriptors.as_ref()
    }

    /// This catalog with new proto descriptors (CreateDatabase and
    /// UpdateDatabaseDdl give them with the statements that use them): the
    /// same version, since a statement applied next records the change. The
    /// bundle's types that columns use must still be defined, as the same
    /// kind (message or enum); the error names the first that is not.
    pub fn with_proto_descriptors(&self, descriptors: Arc<ProtoBundle>) -> Result<Catalog> {
        crate::apply::proto::check_descriptors(&self.state, &descriptors)?;
        let mut next = (*self.state).clone();
        next.proto_descriptors = Some(descriptors);
        Ok(Catalog::from_state(next))
    }

    /// The sequence named `name` (case-insensitive), internal ones included.
    pub fn sequence(&self, name: &str) -> Option<&Sequence> {
        self.state
            .sequence_position(name)
            .map(|i| &self.state.sequences[i])
    }

    /// All tables, in creation order (parents before their children).
    pub fn tables(&self) -> impl Iterator<Item = &Table> {
        self.state.tables.iter()
    }

    /// All indexes, in creation order.
    pub fn indexes(&self) -> impl Iterator<Item = &Index> {
        self.state.indexes.iter()
    }

    /// All sequences, in creation order, internal (identity) ones included.
    pub fn sequences(&self) -> impl Iterator<Item = &Sequence> {
        self.state.sequences.iter()
    }

    /// Tables interleaved directly in `table`, in creation order.
    pub fn children(&self, table: TableId) -> Vec<&Table> {
        self.state
            .tables
            .iter()
            .filter(|t| t.parent.is_some_and(|p| p.table == table))
            .collect()
    }

    /// Indexes on `table`, in creation order.
    pub fn indexes_of(&self, table: TableId) -> Vec<&Index> {
        self.state
            .indexes
            .iter()
            .filter(|i| i.table == table)
            .collect()
    }

    /// The ancestors of `table`, root first, excluding `table` itself.
    pub fn ancestors(&self, table: TableId) -> Vec<&Table> {
        let Some(t) = self.table_by_id(table) else {
            return Vec::new();
        };
        let mut out: Vec<&Table> = self
            .state
            .ancestor_ids(t)
            .into_iter()
            .filter_map(|id| self.table_by_id(id))
            .collect();
        out.reverse();
        out
    }

    /// The root of `table`'s interleave chain (`table` itself for a root).
    ///
    /// # Panics
    /// If `table` is not a table of this catalog: ids come from the catalog,
    /// so that is a bug in the caller, not a user error.
    pub fn root_of(&self, table: TableId) -> &Table {
        self.ancestors(table)
            .into_iter()
            .next()
            .or_else(|| self.table_by_id(table))
            .unwrap_or_else(|| panic!("root_of: table id {table} is not in the catalog"))
    }

    /// The schema as Spanner's GetDatabaseDdl prints it: database options,
    /// the proto bundle, roles and role memberships, sequences, then each
    /// table followed by its indexes (sorted by name), views, and grants;
    /// one statement per string, without a trailing `;`. Applying the output
    /// to an empty catalog yields the same output.
    pub fn ddl(&self) -> Vec<String> {
        print::ddl(&self.state)
    }

    /// [`Catalog::ddl`] in `dialect`'s syntax: GoogleSQL's, or PostgreSQL's
    /// for a PostgreSQL-dialect database (see `print_pg`), whose output
    /// re-applies through the PostgreSQL parser the same way.
    pub fn ddl_in(&self, dialect: rowtree_types::Dialect) -> Vec<String> {
        match dialect {
            rowtree_types::Dialect::GoogleSql => print::ddl(&self.state),
            rowtree_types::Dialect::PostgreSql => print_pg::ddl(&self.state),
        }
    }

    /// One index's `CREATE INDEX` statement in PostgreSQL's spelling, as
    /// [`Catalog::ddl_in`] prints it for a PostgreSQL-dialect database
    /// (`pg_indexes.indexdef` shows it); `None` if there is no such index.
    pub fn index_definition_pg(&self, name: &str) -> Option<String> {
        let index = self.index(name)?;
        let table = self.table_by_id(index.table)?;
        Some(print_pg::print_index(&self.state, table, index))
    }

    /// [`Catalog::apply_sql`] with `dialect`'s parser.
    pub fn apply_sql_in(
        &self,
        dialect: rowtree_types::Dialect,
        text: &str,
    ) -> Result<(Catalog, Vec<Effect>)> {
        let stmt = rowtree_parser::parse_statement_in(dialect, text)
            .map_err(|e| SchemaError::from_parse(&e))?;
        self.apply(&stmt)
    }

    /// Number of statements applied since [`Catalog::new`].
    pub fn version(&self) -> u64 {
        self.state.version
    }

    /// Database options set by `ALTER DATABASE ... SET OPTIONS`: name and
    /// value as SQL literal text (`'bit_reversed_positive'`, `true`), in the
    /// order they were first set.
    pub fn database_options(&self) -> &[(String, String)] {
        &self.state.database_options
    }

    /// The database option `name` (case-insensitive), as SQL literal text.
    /// The `version_retention_period` database option, if set.
    pub fn version_retention(&self) -> Option<std::time::Duration> {
        self.database_option("version_retention_period")
            .and_then(|v| crate::parse_retention(v.trim_matches('\'')))
    }

    pub fn database_option(&self, name: &str) -> Option<&str> {
        self.state.database_option(name)
    }
}
