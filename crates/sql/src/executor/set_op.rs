//! UNION, INTERSECT and EXCEPT, ALL or DISTINCT.

use std::collections::{HashMap, HashSet};

use rowtree_expr::aggregate::GroupKey;
use rowtree_parser::ast::SetOperator;

use crate::error::Result;
use crate::plan::Counters;

use super::context::ExecContext;
use super::memory::Reservation;
use super::operator::{emit, Operator, Row};

pub(super) struct SetOp<'p> {
    pub(super) left: Box<dyn Operator + 'p>,
    pub(super) right: Option<Box<dyn Operator + 'p>>,
    pub(super) op: SetOperator,
    pub(super) all: bool,
    /// INTERSECT / EXCEPT: how many times each right row occurs.
    pub(super) counts: HashMap<GroupKey, usize>,
    /// DISTINCT: rows already returned.
    pub(super) seen: HashSet<GroupKey>,
    pub(super) held: Option<Reservation>,
    pub(super) left_done: bool,
    pub(super) counters: &'p Counters,
}

impl Operator for SetOp<'_> {
    fn next(&mut self, cx: &mut ExecContext<'_>) -> Result<Option<Row>> {
        let held = self
            .held
            .get_or_insert_with(|| cx.reserve("a set operation (UNION, INTERSECT, EXCEPT)"));
        if self.op != SetOperator::Union {
            if let Some(mut right) = self.right.take() {
                while let Some(r) = right.next(cx)? {
                    held.hold(&r)?;
                    *self.counts.entry(GroupKey::from_values(r)).or_default() += 1;
                }
            }
        }
        loop {
            let row = if !self.left_done {
                match self.left.next(cx)? {
                    Some(r) => r,
                    None => {
                        self.left_done = true;
                        continue;
                    }
                }
            } else if self.op == SetOperator::Union {
                match self.right.as_mut() {
                    Some(r) => match r.next(cx)? {
                        Some(row) => row,
                        None => return Ok(None),
                    },
                    None => return Ok(None),
                }
            } else {
                return Ok(None);
            };
            let key = GroupKey::from_values(row.clone());
            let keep = match self.op {
                SetOperator::Union => true,
                SetOperator::Intersect => match self.counts.get_mut(&key) {
                    Some(n) if *n > 0 => {
                        if self.all {
                            *n -= 1;
                        }
                        true
                    }
                    _ => false,
                },
                SetOperator::Except => match self.counts.get_mut(&key) {
                    Some(n) if *n > 0 => {
                        if self.all {
                            *n -= 1;
                        }
                        false
                    }
                    _ => true,
                },
            };
            if !keep {
                continue;
            }
            if !self.all {
                if !self.seen.insert(key) {
                    continue;
                }
                held.hold(&row)?;
            }
            return emit(self.counters, row);
        }
    }
}
