//! What a planner pass is: a function from plan tree to plan tree, given
//! the [`Context`] it may consult, usually applying a local rewrite at
//! every node ([`transform`]).

use rowtree_schema::Catalog;

use crate::error::Result;
use crate::plan::Node;
use crate::scope::UsedColumns;

/// What the passes may consult besides the tree.
pub(crate) struct Context<'a> {
    pub(crate) catalog: &'a Catalog,
    /// The columns the query reads of each scan (for covering indexes).
    pub(crate) used: &'a UsedColumns,
}

/// A planner pass.
pub(crate) type Optimizer = fn(Node, &Context<'_>) -> Result<Node>;

/// Calls `f` on every node of the tree, children before their parent.
pub(super) fn transform(node: &mut Node, f: &mut dyn FnMut(&mut Node) -> Result<()>) -> Result<()> {
    rowtree_types::stack::guarded(|| {
        for child in node.children_mut() {
            transform(child, f)?;
        }
        f(node)
    })
}
