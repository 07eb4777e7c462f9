//! Views: binding a view's query, for DDL validation and for reading.
//!
//! The catalog (`rowtree_schema`) keeps a view's definition but cannot bind
//! queries, because this crate depends on it (see `rowtree_schema::view`).
//! So this module:
//!
//! * implements [`ViewAnalyzer`]: binds the query against the catalog as it
//!   will be after the statement, and applies Spanner's rules for view
//!   columns (each one named, names unique). A database opened with
//!   [`database_options`] (or with [`analyzer`] in its
//!   `rowtree_db::Options::view_analyzer`) validates views with it in
//!   `Database::apply_ddl`, whoever calls it: open every database that SQL
//!   sessions, the server or the CLI use that way;
//! * gives a view's output columns ([`view_columns`]) for
//!   INFORMATION_SCHEMA; they are derived on demand, never stored.
//!
//! A query reads a view like a table: the binder binds the view's query as a
//! subquery named after the view (or the alias given), without the reading
//! query's CTEs in scope.

use std::sync::Arc;

use rowtree_schema::{Catalog, SchemaError, View, ViewAnalyzer};
use rowtree_types::{Code, Type};

use crate::binder::Binder;
use crate::error::Error;

/// Binds view queries for the db layer's DDL.
#[derive(Debug, Default, Clone, Copy)]
pub struct SqlViewAnalyzer;

impl ViewAnalyzer for SqlViewAnalyzer {
    fn analyze(&self, catalog: &Catalog, view: &View) -> Result<Vec<(String, Type)>, SchemaError> {
        let columns = bind_view(catalog, view).map_err(to_schema_error)?;
        for (i, (name, _)) in columns.iter().enumerate() {
            if name.is_empty() {
                return Err(SchemaError::invalid(
                    format!(
                        "CREATE VIEW columns must be named, but column {} has no name",
                        i + 1
                    ),
                    view.query.span,
                ));
            }
            if columns[..i]
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case(name))
            {
                return Err(SchemaError::invalid(
                    format!("CREATE VIEW has columns with duplicate name {name}"),
                    view.query.span,
                ));
            }
        }
        Ok(columns)
    }
}

/// The analyzer to open databases with: [`SqlViewAnalyzer`].
pub fn analyzer() -> Arc<dyn ViewAnalyzer> {
    Arc::new(SqlViewAnalyzer)
}

/// Default database options with the SQL layer's [`analyzer`], for a
/// database that SQL runs against (`Database::open_with`,
/// `Database::in_memory_with`); change other fields with
/// `Options { nodes: 3, ..database_options() }`.
pub fn database_options() -> rowtree_db::Options {
    rowtree_db::Options {
        view_analyzer: Some(analyzer()),
        ..rowtree_db::Options::default()
    }
}

/// The output columns (names and types) of `view`'s query, bound against
/// `catalog`.
pub fn view_columns(catalog: &Catalog, view: &View) -> crate::Result<Vec<(String, Type)>> {
    bind_view(catalog, view)
}

fn bind_view(catalog: &Catalog, view: &View) -> crate::Result<Vec<(String, Type)>> {
    let params = crate::Params::new();
    let binder = Binder::new(catalog, &params);
    // The view being defined counts toward the views' nesting.
    binder.views.borrow_mut().push(view.name.clone());
    Ok(binder.query(&view.query, None)?.columns)
}

fn to_schema_error(e: Error) -> SchemaError {
    let message = e.message.clone();
    match e.code {
        Code::NotFound => SchemaError::not_found(message, e.span),
        Code::FailedPrecondition => SchemaError::precondition(message, e.span),
        Code::Unimplemented => SchemaError::unimplemented(message, e.span),
        _ => SchemaError::invalid(message, e.span),
    }
}
