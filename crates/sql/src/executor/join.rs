//! Joins of two operator trees: nested loop, hash, and the merge of an
//! interleaved parent and child read as two scans in key order.
//!
//! A hash join builds the right side into a table keyed by its join keys
//! and streams the left; RIGHT and FULL joins then emit the unmatched right
//! rows. A merge join reads both sides in key order and never buffers more
//! than one parent's children.

use std::cmp::Ordering;
use std::collections::{HashMap, VecDeque};

use rowtree_expr::aggregate::GroupKey;
use rowtree_expr::BoundExpr;
use rowtree_parser::ast::JoinKind;
use rowtree_types::Value;

use crate::error::Result;
use crate::plan::{Counters, JoinMethod};

use super::context::ExecContext;
use super::memory::Reservation;
use super::operator::{emit, Operator, Row};

/// The right input of a hash or nested-loop join, held in memory.
pub(super) struct Built {
    pub(super) rows: Vec<Row>,
    pub(super) map: HashMap<GroupKey, Vec<usize>>,
    pub(super) matched: Vec<bool>,
}

pub(super) struct Join<'p> {
    pub(super) left: Box<dyn Operator + 'p>,
    pub(super) right: Option<Box<dyn Operator + 'p>>,
    pub(super) kind: JoinKind,
    pub(super) method: &'p JoinMethod,
    pub(super) condition: Option<&'p BoundExpr>,
    pub(super) left_width: usize,
    pub(super) right_width: usize,
    pub(super) built: Option<Built>,
    pub(super) held: Option<Reservation>,
    pub(super) left_done: bool,
    pub(super) unmatched_next: usize,
    pub(super) pending: VecDeque<Row>,
    pub(super) counters: &'p Counters,
}

pub(super) fn key_of(
    cx: &mut ExecContext<'_>,
    exprs: &[BoundExpr],
    row: &[Value],
) -> Result<Option<GroupKey>> {
    let mut values = Vec::with_capacity(exprs.len());
    for e in exprs {
        let v = cx.eval(e, row)?;
        if v.is_null() {
            // NULL = anything is not true: such a row matches nothing.
            return Ok(None);
        }
        values.push(v);
    }
    Ok(Some(GroupKey::from_values(values)))
}

impl Operator for Join<'_> {
    fn next(&mut self, cx: &mut ExecContext<'_>) -> Result<Option<Row>> {
        if let Some(mut right) = self.right.take() {
            let mut built = Built {
                rows: Vec::new(),
                map: HashMap::new(),
                matched: Vec::new(),
            };
            let held = self.held.insert(cx.reserve("the build side of a join"));
            while let Some(r) = right.next(cx)? {
                held.hold(&r)?;
                if let JoinMethod::Hash { right_keys, .. } = self.method {
                    if let Some(k) = key_of(cx, right_keys, &r)? {
                        built.map.entry(k).or_default().push(built.rows.len());
                    }
                }
                built.rows.push(r);
            }
            built.matched = vec![false; built.rows.len()];
            self.built = Some(built);
        }
        loop {
            if let Some(r) = self.pending.pop_front() {
                return emit(self.counters, r);
            }
            let Some(built) = self.built.as_mut() else {
                return Ok(None);
            };
            if self.left_done {
                if matches!(self.kind, JoinKind::Right | JoinKind::Full) {
                    while self.unmatched_next < built.rows.len() {
                        let i = self.unmatched_next;
                        self.unmatched_next += 1;
                        if !built.matched[i] {
                            let mut row = vec![Value::Null; self.left_width];
                            row.extend(built.rows[i].iter().cloned());
                            return emit(self.counters, row);
                        }
                    }
                }
                return Ok(None);
            }
            let Some(l) = self.left.next(cx)? else {
                self.left_done = true;
                continue;
            };
            let candidates: Vec<usize> = match self.method {
                JoinMethod::Hash { left_keys, .. } => match key_of(cx, left_keys, &l)? {
                    Some(k) => built.map.get(&k).cloned().unwrap_or_default(),
                    None => Vec::new(),
                },
                _ => (0..built.rows.len()).collect(),
            };
            let mut any = false;
            for i in candidates {
                let mut row = l.clone();
                row.extend(built.rows[i].iter().cloned());
                let ok = match self.condition {
                    Some(c) => cx.test(c, &row)?,
                    None => true,
                };
                if ok {
                    any = true;
                    built.matched[i] = true;
                    self.pending.push_back(row);
                }
            }
            if !any && matches!(self.kind, JoinKind::Left | JoinKind::Full) {
                let mut row = l;
                row.extend(std::iter::repeat_n(Value::Null, self.right_width));
                self.pending.push_back(row);
            }
        }
    }
}

/// Parent rows and their interleaved children, both in key order.
pub(super) struct MergeJoin<'p> {
    pub(super) left: Box<dyn Operator + 'p>,
    pub(super) right: Box<dyn Operator + 'p>,
    pub(super) left_keys: &'p [usize],
    pub(super) right_keys: &'p [usize],
    pub(super) desc: &'p [bool],
    pub(super) outer: bool,
    pub(super) condition: Option<&'p BoundExpr>,
    pub(super) right_width: usize,
    /// The next child row not yet matched (read ahead by one).
    pub(super) child: Option<Row>,
    pub(super) right_done: bool,
    pub(super) pending: VecDeque<Row>,
    pub(super) counters: &'p Counters,
}

impl MergeJoin<'_> {
    fn compare(&self, child: &[Value], parent: &[Value]) -> Ordering {
        for ((&c, &p), &d) in self.right_keys.iter().zip(self.left_keys).zip(self.desc) {
            let o = rowtree_expr::compare(&child[c], &parent[p]).unwrap_or(Ordering::Equal);
            let o = if d { o.reverse() } else { o };
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    }
}

impl Operator for MergeJoin<'_> {
    fn next(&mut self, cx: &mut ExecContext<'_>) -> Result<Option<Row>> {
        loop {
            if let Some(r) = self.pending.pop_front() {
                return emit(self.counters, r);
            }
            let Some(parent) = self.left.next(cx)? else {
                return Ok(None);
            };
            let null_key = self.left_keys.iter().any(|&k| parent[k].is_null());
            let mut matched = false;
            loop {
                if self.child.is_none() && !self.right_done {
                    self.child = self.right.next(cx)?;
                    self.right_done = self.child.is_none();
                }
                let Some(child) = self.child.as_ref() else {
                    break;
                };
                match self.compare(child, &parent) {
                    Ordering::Less => self.child = None,
                    Ordering::Greater => break,
                    Ordering::Equal => {
                        let child = self.child.take().unwrap_or_default();
                        if null_key {
                            continue;
                        }
                        let mut row = parent.clone();
                        row.extend(child);
                        let ok = match self.condition {
                            Some(c) => cx.test(c, &row)?,
                            None => true,
                        };
                        if ok {
                            matched = true;
                            self.pending.push_back(row);
                        }
                    }
                }
            }
            if !matched && self.outer {
                let mut row = parent;
                row.extend(std::iter::repeat_n(Value::Null, self.right_width));
                self.pending.push_back(row);
            }
        }
    }
}
