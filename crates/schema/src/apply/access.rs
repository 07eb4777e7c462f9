//! `CREATE ROLE`, `DROP ROLE`, `GRANT` and `REVOKE` (see [`crate::access`]).

use rowtree_parser::ast::{Grant, GrantItems, GrantObjectKind, Ident, PrivilegeKind};

use crate::access::{PrivilegeGrant, Role, RoleGrant, SYSTEM_ROLES};
use crate::error::{Result, SchemaError};
use crate::names;
use crate::state::State;
use crate::Effect;

fn is_system_role(name: &str) -> bool {
    SYSTEM_ROLES.iter().any(|r| r.eq_ignore_ascii_case(name))
}

pub(crate) fn create_role(state: &mut State, name: &Ident) -> Result<Vec<Effect>> {
    names::validate("Role", &name.value, name.span)?;
    if is_system_role(&name.value) || name.value.to_ascii_lowercase().starts_with("spanner_") {
        return Err(SchemaError::invalid(
            format!(
                "Role name not valid: {}. Role names starting with spanner_ and the names of \
                 system roles are reserved.",
                name.value
            ),
            name.span,
        ));
    }
    if state.role_position(&name.value).is_some() {
        return Err(SchemaError::precondition(
            format!("Duplicate name in schema: {}.", name.value),
            name.span,
        ));
    }
    state.roles.push(Role {
        name: name.value.clone(),
    });
    Ok(Vec::new())
}

pub(crate) fn drop_role(state: &mut State, name: &Ident) -> Result<Vec<Effect>> {
    if is_system_role(&name.value) {
        return Err(SchemaError::precondition(
            format!("Cannot drop system role {}.", name.value),
            name.span,
        ));
    }
    let Some(position) = state.role_position(&name.value) else {
        return Err(SchemaError::not_found(
            format!("Role not found: {}.", name.value),
            name.span,
        ));
    };
    let role = state.roles[position].name.clone();
    let has_privileges = state
        .privilege_grants
        .iter()
        .any(|g| g.role.eq_ignore_ascii_case(&role));
    let has_memberships = state
        .role_grants
        .iter()
        .any(|g| g.granted.eq_ignore_ascii_case(&role) || g.member.eq_ignore_ascii_case(&role));
    if has_privileges || has_memberships {
        return Err(SchemaError::precondition(
            format!(
                "Cannot drop role {role}: it has been granted privileges or roles, or is granted \
                 to other roles. Revoke them first."
            ),
            name.span,
        ));
    }
    state.roles.remove(position);
    Ok(Vec::new())
}

/// The role `name` as the catalog spells it (system roles included).
fn resolve_role(state: &State, name: &Ident) -> Result<String> {
    if let Some(system) = SYSTEM_ROLES
        .iter()
        .find(|r| r.eq_ignore_ascii_case(&name.value))
    {
        return Ok(system.to_string());
    }
    state
        .role_position(&name.value)
        .map(|i| state.roles[i].name.clone())
        .ok_or_else(|| {
            SchemaError::not_found(format!("Role not found: {}.", name.value), name.span)
        })
}

/// The atomic privilege facts a GRANT / REVOKE names, validated against
/// the schema, plus the role memberships it names.
fn expand(state: &State, grant: &Grant) -> Result<(Vec<PrivilegeGrant>, Vec<RoleGrant>)> {
    let mut roles = Vec::new();
    for r in &grant.roles {
        roles.push(resolve_role(state, r)?);
    }
    let mut privileges = Vec::new();
    let mut memberships = Vec::new();
    match &grant.what {
        GrantItems::Roles(granted) => {
            for g in granted {
                let granted = resolve_role(state, g)?;
                for member in &roles {
                    memberships.push(RoleGrant {
                        granted: granted.clone(),
                        member: member.clone(),
                    });
                }
            }
        }
        GrantItems::Privileges {
            privileges: list,
            object_kind,
            objects,
        } => {
            for object in objects {
                let (name, columns): (String, Vec<String>) = match object_kind {
                    GrantObjectKind::Table => {
                        let table = state.table(&object.value).ok_or_else(|| {
                            SchemaError::not_found(
                                format!("Table not found: {}", object.value),
                                object.span,
                            )
                        })?;
                        (
                            table.name.clone(),
                            table.columns.iter().map(|c| c.name.clone()).collect(),
                        )
                    }
                    GrantObjectKind::View => {
                        let view = state.view(&object.value).ok_or_else(|| {
                            SchemaError::not_found(
                                format!("View not found: {}", object.value),
                                object.span,
                            )
                        })?;
                        (view.name.clone(), Vec::new())
                    }
                };
                for privilege in list {
                    if *object_kind == GrantObjectKind::View
                        && (privilege.kind != PrivilegeKind::Select
                            || !privilege.columns.is_empty())
                    {
                        return Err(SchemaError::invalid(
                            "Only the SELECT privilege, without a column list, can be granted on \
                             a view.",
                            privilege.span,
                        ));
                    }
                    if privilege.kind == PrivilegeKind::Delete && !privilege.columns.is_empty() {
                        return Err(SchemaError::invalid(
                            "The DELETE privilege cannot be granted on columns.",
                            privilege.span,
                        ));
                    }
                    let targets: Vec<Option<String>> = if privilege.columns.is_empty() {
                        vec![None]
                    } else {
                        let mut out: Vec<Option<String>> = Vec::new();
                        for c in &privilege.columns {
                            let column = columns
                                .iter()
                                .find(|n| n.eq_ignore_ascii_case(&c.value))
                                .ok_or_else(|| {
                                    SchemaError::not_found(
                                        format!("Column not found in table {name}: {}", c.value),
                                        c.span,
                                    )
                                })?;
                            if !out.iter().any(|o| o.as_deref() == Some(column.as_str())) {
                                out.push(Some(column.clone()));
                            }
                        }
                        out
                    };
                    for role in &roles {
                        for column in &targets {
                            privileges.push(PrivilegeGrant {
                                role: role.clone(),
                                privilege: privilege.kind,
                                object_kind: *object_kind,
                                object: name.clone(),
                                column: column.clone(),
                            });
                        }
                    }
                }
            }
        }
    }
    Ok((privileges, memberships))
}

pub(crate) fn grant(state: &mut State, grant: &Grant) -> Result<Vec<Effect>> {
    let (privileges, memberships) = expand(state, grant)?;
    for p in privileges {
        if !state.privilege_grants.contains(&p) {
            state.privilege_grants.push(p);
        }
    }
    for m in memberships {
        if m.granted == m.member || inherits(state, &m.granted, &m.member) {
            return Err(SchemaError::precondition(
                format!(
                    "Granting role {} to role {} would create a cycle of role memberships.",
                    m.granted, m.member
                ),
                grant.roles.first().map(|r| r.span),
            ));
        }
        if !state.role_grants.contains(&m) {
            state.role_grants.push(m);
        }
    }
    Ok(Vec::new())
}

/// Whether `member` holds `granted` directly or through other roles.
fn inherits(state: &State, member: &str, granted: &str) -> bool {
    let mut stack = vec![member.to_string()];
    let mut seen: Vec<String> = Vec::new();
    while let Some(role) = stack.pop() {
        if seen.contains(&role) {
            continue;
        }
        seen.push(role.clone());
        for g in state.role_grants.iter().filter(|g| g.member == role) {
            if g.granted == granted {
                return true;
            }
            stack.push(g.granted.clone());
        }
    }
    false
}

/// REVOKE: removes what it names; revoking something never granted is a
/// no-op, as in Spanner.
pub(crate) fn revoke(state: &mut State, grant: &Grant) -> Result<Vec<Effect>> {
    let (privileges, memberships) = expand(state, grant)?;
    state.privilege_grants.retain(|p| !privileges.contains(p));
    state.role_grants.retain(|m| !memberships.contains(m));
    Ok(Vec::new())
}

/// Drops every privilege on a dropped table or view.
pub(crate) fn forget_object(state: &mut State, object: &str) {
    state
        .privilege_grants
        .retain(|p| !p.object.eq_ignore_ascii_case(object));
}

/// Drops column privileges on a dropped column.
pub(crate) fn forget_column(state: &mut State, table: &str, column: &str) {
    state.privilege_grants.retain(|p| {
        !(p.object.eq_ignore_ascii_case(table)
            && p.column
                .as_deref()
                .is_some_and(|c| c.eq_ignore_ascii_case(column)))
    });
}
