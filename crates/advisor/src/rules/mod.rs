//! The rules. Each reads the loaded catalog and returns findings; none
//! changes anything, and their order does not matter.
//!
//! * [`hotspot`]: `monotonic-key`, `monotonic-index`, `sequential-id`,
//!   `time-ordered-uuid`: keys whose new values all sort to one end.
//! * [`locality`]: `interleave-candidate`, `desc-history`: how rows that are
//!   read together are placed.
//! * [`limits`]: Spanner's key limits that the catalog accepts but data can
//!   break (key size, `MAX` lengths); the hard ones (16 key columns, 7
//!   interleave levels) are found while loading, where the catalog refuses
//!   them.
//! * [`indexes`]: `index-storing`, `sparse-index`: what an index costs to
//!   store.

pub(crate) mod hotspot;
pub(crate) mod indexes;
pub(crate) mod limits;
pub(crate) mod locality;

use rowtree_schema::{Catalog, Table};

use crate::classify::{classify, Order};
use crate::load::{Loaded, Site};
use crate::{Config, Finding, Rule, Severity};

/// What every rule reads.
pub(crate) struct Context<'a> {
    pub loaded: &'a Loaded,
    pub config: &'a Config,
    pub catalog: &'a Catalog,
}

impl<'a> Context<'a> {
    pub fn new(loaded: &'a Loaded, config: &'a Config) -> Context<'a> {
        Context {
            loaded,
            config,
            catalog: &loaded.catalog,
        }
    }

    /// The CREATE statement of `object`, if it was seen.
    pub fn site(&self, object: &str) -> Option<&Site> {
        self.loaded.sites.get(&object.to_ascii_lowercase())
    }

    /// How the values of `table.columns[pos]` are ordered.
    pub fn order(&self, table: &Table, pos: usize) -> Order {
        classify(table, pos, self.site(&table.name))
    }

    /// A finding placed at `object`'s CREATE statement.
    pub fn finding(
        &self,
        rule: Rule,
        severity: Severity,
        object: &str,
        message: String,
        fix: Option<String>,
    ) -> Finding {
        let site = self.loaded.site(object);
        Finding {
            rule,
            severity,
            file: site.file,
            line: site.line,
            column: site.column,
            object: object.to_string(),
            message,
            fix,
        }
    }

    /// The tables whose key is a proper prefix (same names and types) of
    /// `table`'s key, longest first.
    pub fn key_prefix_tables(&self, table: &'a Table) -> Vec<&'a Table> {
        let mut out: Vec<&Table> = self
            .catalog
            .tables()
            .filter(|p| p.id != table.id && !p.primary_key.is_empty())
            .filter(|p| p.primary_key.len() < table.primary_key.len())
            .filter(|p| {
                p.primary_key.iter().zip(&table.primary_key).all(|(a, b)| {
                    let (ca, cb) = (&p.columns[a.column], &table.columns[b.column]);
                    ca.name.eq_ignore_ascii_case(&cb.name) && ca.data_type == cb.data_type
                })
            })
            .filter(|p| {
                // A lone generic `Id` is not evidence of a shared entity.
                !(p.primary_key.len() == 1
                    && p.columns[p.primary_key[0].column]
                        .name
                        .eq_ignore_ascii_case("id"))
            })
            .collect();
        out.sort_by_key(|p| std::cmp::Reverse(p.primary_key.len()));
        out
    }
}

/// Runs every rule.
pub(crate) fn run(ctx: &Context<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    hotspot::monotonic_key(ctx, &mut out);
    hotspot::monotonic_index(ctx, &mut out);
    hotspot::sequential_id(ctx, &mut out);
    hotspot::time_ordered_uuid(ctx, &mut out);
    locality::interleave_candidate(ctx, &mut out);
    locality::desc_history(ctx, &mut out);
    limits::limits(ctx, &mut out);
    indexes::index_storing(ctx, &mut out);
    indexes::sparse_index(ctx, &mut out);
    out
}
