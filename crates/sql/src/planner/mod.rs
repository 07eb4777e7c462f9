//! Physical planning: fitting the bound plan to how the data is stored.
//!
//! The binder ([`crate::binder`]) leaves a tree of operators whose scans
//! carry the WHERE conjuncts pushed to them, but no decision about storage.
//! The planner then runs a fixed list of named passes over the tree
//! (`OPTIMIZERS`, see `optimizer`), each a function from plan to plan:
//! joins of interleaved tables become merges, each scan gets its access
//! path (key ranges, index, residual filter), a merge of two scans becomes
//! one scan of the row trees, sorts the key order gives disappear, and a
//! LIMIT over a scan becomes the scan's own limit.

mod access;
mod join_method;
mod key_order;
mod limit;
mod optimizer;
mod pass;
mod tree_scan;

pub(crate) use optimizer::{optimize, run_pass, OPTIMIZERS};
pub(crate) use pass::Context;
