//! Applying one DDL statement to a private copy of the catalog state.
//!
//! One file per statement family, built from shared pieces (column
//! definitions, keys and interleaving, constraints). Each returns the
//! [`Effect`]s the db layer must run; on error the copy is simply dropped,
//! so a half-applied statement is never visible.

mod access;
mod alter_table;
mod columns;
mod constraints;
mod create_table;
pub(crate) mod database;
mod drop_table;
mod index;
mod keys;
pub(crate) mod proto;
mod row_deletion;
mod sequence;
pub(crate) mod view;

use rowtree_parser::ast::{Statement, StatementKind};

use crate::error::Result;
use crate::state::State;
use crate::Effect;

/// Applies `stmt` to `state`.
pub(crate) fn statement(state: &mut State, stmt: &Statement) -> Result<Vec<Effect>> {
    match &stmt.kind {
        StatementKind::CreateTable(create) => create_table::apply(state, create),
        StatementKind::AlterTable(alter) => alter_table::apply(state, alter),
        StatementKind::DropTable { name, if_exists } => drop_table::apply(state, name, *if_exists),
        StatementKind::CreateIndex(create) => index::create(state, create),
        StatementKind::DropIndex { name, if_exists } => index::drop(state, name, *if_exists),
        StatementKind::CreateSequence(create) => sequence::create(state, create),
        StatementKind::AlterSequence(alter) => sequence::alter(state, alter),
        StatementKind::DropSequence { name, if_exists } => sequence::drop(state, name, *if_exists),
        StatementKind::AlterDatabase { name, options } => database::alter(state, name, options),
        StatementKind::CreateView(create) => view::create(state, create),
        StatementKind::DropView { name } => view::drop(state, name),
        StatementKind::CreateRole { name } => access::create_role(state, name),
        StatementKind::DropRole { name } => access::drop_role(state, name),
        StatementKind::Grant(grant) => access::grant(state, grant),
        StatementKind::Revoke(grant) => access::revoke(state, grant),
        StatementKind::CreateProtoBundle { types } => proto::create(state, types),
        StatementKind::AlterProtoBundle(alter) => proto::alter(state, alter),
        StatementKind::DropProtoBundle => proto::drop(state),
        // Spanner builds optimizer statistics; Rowtree keeps none.
        StatementKind::Analyze => Ok(Vec::new()),
        StatementKind::Query(_)
        | StatementKind::Insert(_)
        | StatementKind::Update(_)
        | StatementKind::Delete(_)
        | StatementKind::Explain { .. } => Err(crate::SchemaError::invalid(
            "Only DDL statements can change the schema",
            Some(stmt.span),
        )),
    }
}
