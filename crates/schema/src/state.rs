//! [`State`]: the plain data behind a [`Catalog`](crate::Catalog) snapshot.
//!
//! A catalog is an `Arc<State>`. Applying a statement clones the state,
//! lets the `apply` modules edit the private copy, and wraps the result in
//! a new catalog; printing reads it. The state is its own module so that
//! the code that edits it and the code that prints it depend on the data,
//! not on the catalog that calls them.

use std::sync::Arc;

use rowtree_types::ProtoBundle;

use crate::access::{PrivilegeGrant, Role, RoleGrant};
use crate::index::Index;
use crate::sequence::Sequence;
use crate::table::Table;
use crate::view::View;
use crate::TableId;

/// Everything a catalog holds. Schema changes work on a private copy.
#[derive(Debug, Clone)]
pub(crate) struct State {
    /// Tables in creation order (so parents come before children).
    pub tables: Vec<Table>,
    /// Indexes in creation order.
    pub indexes: Vec<Index>,
    /// Sequences in creation order, internal (identity) ones included.
    pub sequences: Vec<Sequence>,
    /// Next table/index id.
    pub next_object_id: u32,
    /// Next sequence id.
    pub next_sequence_id: u32,
    /// Statements applied so far.
    pub version: u64,
    /// The database name given in `ALTER DATABASE`, for printing it back.
    pub database_name: Option<String>,
    /// `ALTER DATABASE SET OPTIONS`: option name and its SQL literal text.
    pub database_options: Vec<(String, String)>,
    /// Views in creation order (a view only reads views created before it).
    pub views: Vec<View>,
    /// User roles in creation order.
    pub roles: Vec<Role>,
    /// Privileges held by roles, in the order they were granted.
    pub privilege_grants: Vec<PrivilegeGrant>,
    /// Role memberships, in the order they were granted.
    pub role_grants: Vec<RoleGrant>,
    /// The proto bundle's type names, in order; `None` without a bundle.
    pub proto_bundle: Option<Vec<String>>,
    /// The proto descriptors the bundle's types are resolved against;
    /// `None` when none were given.
    pub proto_descriptors: Option<Arc<ProtoBundle>>,
    /// The database's dialect, fixed when the catalog is made: the
    /// information schema is shown in its shape.
    pub dialect: rowtree_types::Dialect,
}

impl Default for State {
    fn default() -> Self {
        State {
            tables: Vec::new(),
            indexes: Vec::new(),
            sequences: Vec::new(),
            next_object_id: 1,
            next_sequence_id: 1,
            version: 0,
            database_name: None,
            database_options: Vec::new(),
            views: Vec::new(),
            roles: Vec::new(),
            privilege_grants: Vec::new(),
            role_grants: Vec::new(),
            proto_bundle: None,
            proto_descriptors: None,
            dialect: rowtree_types::Dialect::GoogleSql,
        }
    }
}

impl State {
    pub fn table_position(&self, name: &str) -> Option<usize> {
        self.tables
            .iter()
            .position(|t| t.name.eq_ignore_ascii_case(name))
    }

    pub fn table(&self, name: &str) -> Option<&Table> {
        self.table_position(name).map(|i| &self.tables[i])
    }

    pub fn table_by_id(&self, id: TableId) -> Option<&Table> {
        self.tables.iter().find(|t| t.id == id)
    }

    pub fn index_position(&self, name: &str) -> Option<usize> {
        self.indexes
            .iter()
            .position(|i| i.name.eq_ignore_ascii_case(name))
    }

    pub fn sequence_position(&self, name: &str) -> Option<usize> {
        self.sequences
            .iter()
            .position(|s| s.name.eq_ignore_ascii_case(name))
    }

    pub fn view_position(&self, name: &str) -> Option<usize> {
        self.views
            .iter()
            .position(|v| v.name.eq_ignore_ascii_case(name))
    }

    pub fn view(&self, name: &str) -> Option<&View> {
        self.view_position(name).map(|i| &self.views[i])
    }

    pub fn role_position(&self, name: &str) -> Option<usize> {
        self.roles
            .iter()
            .position(|r| r.name.eq_ignore_ascii_case(name))
    }

    /// Views that read the table or view `name`, in creation order.
    pub fn dependent_views(&self, name: &str) -> Vec<&str> {
        self.views
            .iter()
            .filter(|v| v.depends_on(name))
            .map(|v| v.name.as_str())
            .collect()
    }

    /// Whether `name` is taken in the shared namespace of tables, views,
    /// indexes, sequences and constraints.
    pub fn name_taken(&self, name: &str) -> bool {
        self.table_position(name).is_some()
            || self.view_position(name).is_some()
            || self.index_position(name).is_some()
            || self.sequence_position(name).is_some()
            || self
                .tables
                .iter()
                .any(|t| t.check(name).is_some() || t.foreign_key(name).is_some())
    }

    /// The database option `name`, if set.
    pub fn database_option(&self, name: &str) -> Option<&str> {
        self.database_options
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Ancestor ids of `table`, nearest first.
    pub fn ancestor_ids(&self, table: &Table) -> Vec<TableId> {
        let mut out = Vec::new();
        let mut parent = table.parent.map(|p| p.table);
        while let Some(id) = parent {
            out.push(id);
            parent = self.table_by_id(id).and_then(|t| t.parent.map(|p| p.table));
        }
        out
    }

    pub fn take_object_id(&mut self) -> u32 {
        let id = self.next_object_id;
        self.next_object_id += 1;
        id
    }

    pub fn take_sequence_id(&mut self) -> u32 {
        let id = self.next_sequence_id;
        self.next_sequence_id += 1;
        id
    }
}
