//! Row-at-a-time operators that hold nothing: filter, projection, limit,
//! distinct (which holds the keys it has seen) and UNNEST.

use std::collections::{HashSet, VecDeque};

use rowtree_expr::aggregate::GroupKey;
use rowtree_expr::BoundExpr;
use rowtree_types::Value;

use crate::error::Result;
use crate::plan::Counters;

use super::context::ExecContext;
use super::memory::Reservation;
use super::operator::{emit, Operator, Row};

pub(super) struct Filter<'p> {
    pub(super) input: Box<dyn Operator + 'p>,
    pub(super) predicate: &'p BoundExpr,
    pub(super) counters: &'p Counters,
}

impl Operator for Filter<'_> {
    fn next(&mut self, cx: &mut ExecContext<'_>) -> Result<Option<Row>> {
        while let Some(row) = self.input.next(cx)? {
            if cx.test(self.predicate, &row)? {
                return emit(self.counters, row);
            }
        }
        Ok(None)
    }
}

pub(super) struct Project<'p> {
    pub(super) input: Box<dyn Operator + 'p>,
    pub(super) exprs: &'p [BoundExpr],
    pub(super) counters: &'p Counters,
}

impl Operator for Project<'_> {
    fn next(&mut self, cx: &mut ExecContext<'_>) -> Result<Option<Row>> {
        let Some(row) = self.input.next(cx)? else {
            return Ok(None);
        };
        let out = self
            .exprs
            .iter()
            .map(|e| cx.eval(e, &row))
            .collect::<Result<Row>>()?;
        emit(self.counters, out)
    }
}

pub(super) struct Limit<'p> {
    pub(super) input: Box<dyn Operator + 'p>,
    pub(super) limit: Option<u64>,
    pub(super) offset: u64,
    pub(super) seen: u64,
    pub(super) counters: &'p Counters,
}

impl Operator for Limit<'_> {
    fn next(&mut self, cx: &mut ExecContext<'_>) -> Result<Option<Row>> {
        loop {
            if let Some(l) = self.limit {
                // Stop pulling: the input (and its scan) read no further.
                if self.seen >= self.offset + l {
                    return Ok(None);
                }
            }
            let Some(row) = self.input.next(cx)? else {
                return Ok(None);
            };
            self.seen += 1;
            if self.seen > self.offset {
                return emit(self.counters, row);
            }
        }
    }
}

pub(super) struct Distinct<'p> {
    pub(super) input: Box<dyn Operator + 'p>,
    pub(super) seen: HashSet<GroupKey>,
    pub(super) held: Option<Reservation>,
    pub(super) counters: &'p Counters,
}

impl Operator for Distinct<'_> {
    fn next(&mut self, cx: &mut ExecContext<'_>) -> Result<Option<Row>> {
        let held = self
            .held
            .get_or_insert_with(|| cx.reserve("SELECT DISTINCT"));
        while let Some(row) = self.input.next(cx)? {
            if self.seen.insert(GroupKey::from_values(row.clone())) {
                held.hold(&row)?;
                return emit(self.counters, row);
            }
        }
        Ok(None)
    }
}

pub(super) struct Unnest<'p> {
    pub(super) input: Box<dyn Operator + 'p>,
    pub(super) array: &'p BoundExpr,
    pub(super) with_offset: bool,
    pub(super) outer: bool,
    pub(super) pending: VecDeque<Row>,
    pub(super) counters: &'p Counters,
}

impl Operator for Unnest<'_> {
    fn next(&mut self, cx: &mut ExecContext<'_>) -> Result<Option<Row>> {
        loop {
            if let Some(r) = self.pending.pop_front() {
                return emit(self.counters, r);
            }
            let Some(row) = self.input.next(cx)? else {
                return Ok(None);
            };
            let items = match cx.eval(self.array, &row)? {
                Value::Array(items) => items,
                _ => Vec::new(),
            };
            if items.is_empty() && self.outer {
                let mut r = row.clone();
                r.push(Value::Null);
                if self.with_offset {
                    r.push(Value::Null);
                }
                self.pending.push_back(r);
            }
            for (i, item) in items.into_iter().enumerate() {
                let mut r = row.clone();
                r.push(item);
                if self.with_offset {
                    r.push(Value::Int64(i as i64));
                }
                self.pending.push_back(r);
            }
        }
    }
}
