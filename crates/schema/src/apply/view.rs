//! `CREATE [OR REPLACE] VIEW`, `DROP VIEW`, and re-checking views whose
//! tables change (see [`crate::view`] for what is checked where).

use rowtree_parser::ast::{CreateView, Ident, Statement, StatementKind};
use rowtree_types::Type;

use crate::error::{Result, SchemaError};
use crate::names;
use crate::state::State;
use crate::view::{referenced_tables, View};
use crate::Effect;

pub(crate) fn create(state: &mut State, create: &CreateView) -> Result<Vec<Effect>> {
    let name = &create.name;
    names::validate("View", &name.value, name.span)?;
    let existing = state.view_position(&name.value);
    let replaces = create.or_replace && existing.is_some();
    if !replaces && state.name_taken(&name.value) {
        return Err(SchemaError::precondition(
            format!("Duplicate name in schema: {}.", name.value),
            name.span,
        ));
    }
    let mut dependencies = Vec::new();
    for (referenced, span) in referenced_tables(&create.query) {
        if let Some(table) = state.table(&referenced) {
            dependencies.push(table.name.clone());
        } else if let Some(view) = state.view(&referenced) {
            if view.name.eq_ignore_ascii_case(&name.value)
                || reads_transitively(state, &view.name, &name.value)
            {
                return Err(SchemaError::invalid(
                    format!(
                        "View {} cannot read itself: its definition reads view {}, which depends \
                         on it.",
                        name.value, view.name
                    ),
                    span,
                ));
            }
            dependencies.push(view.name.clone());
        } else {
            return Err(SchemaError::invalid(
                format!("Table not found: {referenced}"),
                span,
            ));
        }
    }
    let view = View {
        name: name.value.clone(),
        security: create.security,
        query_text: create.query_text.clone(),
        query: (*create.query).clone(),
        dependencies,
    };
    match existing {
        Some(i) if replaces => {
            // Keep the stored spelling of the name, as Spanner does.
            let kept = state.views[i].name.clone();
            state.views[i] = View { name: kept, ..view };
        }
        _ => state.views.push(view),
    }
    Ok(Vec::new())
}

/// Whether view `from` reads `target` directly or through other views.
fn reads_transitively(state: &State, from: &str, target: &str) -> bool {
    let mut stack = vec![from.to_string()];
    let mut seen: Vec<String> = Vec::new();
    while let Some(name) = stack.pop() {
        if seen.iter().any(|s| s.eq_ignore_ascii_case(&name)) {
            continue;
        }
        seen.push(name.clone());
        if let Some(view) = state.view(&name) {
            for d in &view.dependencies {
                if d.eq_ignore_ascii_case(target) {
                    return true;
                }
                stack.push(d.clone());
            }
        }
    }
    false
}

pub(crate) fn drop(state: &mut State, name: &Ident) -> Result<Vec<Effect>> {
    let Some(position) = state.view_position(&name.value) else {
        return Err(SchemaError::not_found(
            format!("View not found: {}", name.value),
            name.span,
        ));
    };
    let view_name = state.views[position].name.clone();
    refuse_if_views_depend(state, "view", &view_name, name)?;
    state.views.remove(position);
    super::access::forget_object(state, &view_name);
    Ok(Vec::new())
}

/// `Cannot drop <kind> X on which there are dependent views: A,B.`
pub(crate) fn refuse_if_views_depend(
    state: &State,
    kind: &str,
    object: &str,
    name: &Ident,
) -> Result<()> {
    let mut dependents = state.dependent_views(object);
    if dependents.is_empty() {
        return Ok(());
    }
    dependents.sort_unstable();
    Err(SchemaError::precondition(
        format!(
            "Cannot drop {kind} {object} on which there are dependent views: {}.",
            dependents.join(",")
        ),
        name.span,
    ))
}

/// A view's output columns (name and type), as the analyzer derives them.
type OutputColumns = Vec<(String, Type)>;

/// After `stmt` was applied to `state`: binds the query of a created view,
/// and of every view that (transitively) reads a replaced view or an
/// altered table, with `analyze` (the catalog's
/// [`ViewAnalyzer`](crate::ViewAnalyzer), applied to the catalog `state`
/// makes).
pub(crate) fn reanalyze(
    state: &State,
    stmt: &Statement,
    analyze: &dyn Fn(&View) -> Result<OutputColumns>,
) -> Result<()> {
    let (changed, own) = match &stmt.kind {
        StatementKind::CreateView(create) => (create.name.value.clone(), true),
        StatementKind::AlterTable(alter) => (alter.name.value.clone(), false),
        _ => return Ok(()),
    };
    if own {
        if let Some(view) = state.view(&changed) {
            analyze(view)?;
        }
    }
    for view in &state.views {
        if view.name.eq_ignore_ascii_case(&changed)
            || !reads_transitively(state, &view.name, &changed)
        {
            continue;
        }
        if let Err(e) = analyze(view) {
            let what = if own { "view" } else { "table" };
            return Err(SchemaError::precondition(
                format!(
                    "Cannot change {what} {changed}: the definition of dependent view {} would \
                     become invalid: {}",
                    view.name,
                    e.message()
                ),
                None,
            ));
        }
    }
    Ok(())
}
