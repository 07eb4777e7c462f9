//! Aggregation: groups held in a hash map, each with one accumulator per
//! aggregate call (from [`rowtree_expr::aggregate`]).

use std::collections::{HashMap, VecDeque};

use rowtree_expr::aggregate::{accumulator, Accumulator, AggregateModifiers, GroupKey};
use rowtree_expr::BoundExpr;

use crate::error::Result;
use crate::plan::Counters;

use super::context::ExecContext;
use super::memory::Reservation;
use super::operator::{emit, Operator, Row};

pub(super) struct Aggregate<'p> {
    pub(super) input: Option<Box<dyn Operator + 'p>>,
    pub(super) groups: &'p [BoundExpr],
    pub(super) calls: &'p [crate::plan::AggregateCall],
    pub(super) output: VecDeque<Row>,
    pub(super) held: Option<Reservation>,
    pub(super) counters: &'p Counters,
}

/// Whether an aggregate keeps every input (DISTINCT, ORDER BY, or
/// functions that collect: ARRAY_AGG, STRING_AGG, ARRAY_CONCAT_AGG), so its
/// state grows with its arguments.
pub(super) fn collects(call: &crate::plan::AggregateCall) -> bool {
    call.distinct
        || !call.order_by.is_empty()
        || ["ARRAY_AGG", "STRING_AGG", "ARRAY_CONCAT_AGG"]
            .iter()
            .any(|f| call.name.eq_ignore_ascii_case(f))
}

impl Aggregate<'_> {
    fn accumulators(&self) -> Result<Vec<Box<dyn Accumulator>>> {
        self.calls
            .iter()
            .map(|c| {
                let types: Vec<_> = c.args.iter().map(|a| a.ty().clone()).collect();
                let modifiers = AggregateModifiers {
                    ignore_nulls: c.ignore_nulls.unwrap_or(false),
                    order_by: c.order_by.iter().map(|(_, d, n)| (*d, Some(*n))).collect(),
                    limit: c.limit.map(|l| l as usize),
                };
                let m = (modifiers != AggregateModifiers::default()).then_some(&modifiers);
                Ok(accumulator(&c.name, &types, c.distinct, m)?)
            })
            .collect()
    }
}

impl Operator for Aggregate<'_> {
    fn next(&mut self, cx: &mut ExecContext<'_>) -> Result<Option<Row>> {
        if let Some(mut input) = self.input.take() {
            let mut index: HashMap<GroupKey, usize> = HashMap::new();
            let mut groups: Vec<(Row, Vec<Box<dyn Accumulator>>)> = Vec::new();
            let mut held = cx.reserve("an aggregation (GROUP BY)");
            while let Some(row) = input.next(cx)? {
                let key: Row = self
                    .groups
                    .iter()
                    .map(|g| cx.eval(g, &row))
                    .collect::<Result<_>>()?;
                let gk = GroupKey::from_values(key.clone());
                let i = match index.get(&gk) {
                    Some(&i) => i,
                    None => {
                        // The key is kept twice: in the index and the group.
                        held.hold(&key)?;
                        held.hold(&key)?;
                        groups.push((key, self.accumulators()?));
                        index.insert(gk, groups.len() - 1);
                        groups.len() - 1
                    }
                };
                for (call, acc) in self.calls.iter().zip(groups[i].1.iter_mut()) {
                    let mut args: Row = call
                        .args
                        .iter()
                        .map(|a| cx.eval(a, &row))
                        .collect::<Result<_>>()?;
                    for (o, _, _) in &call.order_by {
                        args.push(cx.eval(o, &row)?);
                    }
                    if collects(call) {
                        held.hold(&args)?;
                    }
                    acc.update(&args)?;
                }
            }
            self.held = Some(held);
            // No GROUP BY: one row even over no input.
            if groups.is_empty() && self.groups.is_empty() {
                groups.push((Vec::new(), self.accumulators()?));
            }
            for (key, mut accs) in groups {
                let mut row = key;
                for a in accs.iter_mut() {
                    row.push(a.finish()?);
                }
                self.output.push_back(row);
            }
        }
        match self.output.pop_front() {
            Some(r) => emit(self.counters, r),
            None => Ok(None),
        }
    }
}
