//! Window functions: the input is buffered, partitioned and ordered, and
//! each row comes out in input order followed by one value per call.

use std::cmp::Ordering;
use std::collections::VecDeque;

use rowtree_types::Value;

use crate::error::{Error, Result};
use crate::plan::Counters;

use super::context::ExecContext;
use super::memory::Reservation;
use super::operator::{emit, Operator, Row};
use super::sort::compare_sort_values;

pub(super) struct Window<'p> {
    pub(super) input: Option<Box<dyn Operator + 'p>>,
    pub(super) calls: &'p [crate::plan::WindowCall],
    pub(super) output: VecDeque<Row>,
    pub(super) held: Option<Reservation>,
    pub(super) counters: &'p Counters,
}

/// Compares key tuples: each key `(desc, nulls_first)`.
pub(super) fn compare_keys(a: &[Value], b: &[Value], dirs: &[(bool, bool)]) -> Ordering {
    for ((x, y), &(desc, nulls_first)) in a.iter().zip(b).zip(dirs) {
        let o = compare_sort_values(x, y, desc, nulls_first);
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

impl Window<'_> {
    /// The value of `call` for every row of `rows`, in row order.
    fn compute(
        &self,
        call: &crate::plan::WindowCall,
        rows: &[Row],
        cx: &mut ExecContext<'_>,
    ) -> Result<Vec<Value>> {
        let mut keyed = Vec::with_capacity(rows.len());
        for (i, row) in rows.iter().enumerate() {
            let part: Vec<Value> = call
                .partition_by
                .iter()
                .map(|e| cx.eval(e, row))
                .collect::<Result<_>>()?;
            let ord: Vec<Value> = call
                .order_by
                .iter()
                .map(|(e, _, _)| cx.eval(e, row))
                .collect::<Result<_>>()?;
            keyed.push((part, ord, i));
        }
        let pdirs = vec![(false, true); call.partition_by.len()];
        let odirs: Vec<(bool, bool)> = call.order_by.iter().map(|(_, d, n)| (*d, *n)).collect();
        // A stable sort keeps input order among peers.
        keyed.sort_by(|a, b| {
            compare_keys(&a.0, &b.0, &pdirs).then_with(|| compare_keys(&a.1, &b.1, &odirs))
        });
        let mut out = vec![Value::Null; rows.len()];
        let mut start = 0;
        while start < keyed.len() {
            let mut end = start + 1;
            while end < keyed.len()
                && compare_keys(&keyed[start].0, &keyed[end].0, &pdirs) == Ordering::Equal
            {
                end += 1;
            }
            for (pos, (_, _, i)) in keyed[start..end].iter().enumerate() {
                out[*i] = match call.func {
                    crate::plan::WindowFunc::IsFirst => {
                        let k = cx.eval(&call.args[0], &rows[*i])?;
                        match k {
                            Value::Int64(k) if k > 0 => Value::Bool((pos as i64) < k),
                            Value::Int64(k) => {
                                return Err(Error::out_of_range(format!(
                                    "IS_FIRST requires a positive argument; got {k}"
                                )))
                            }
                            _ => {
                                return Err(Error::out_of_range(
                                    "IS_FIRST requires a positive argument; got NULL",
                                ))
                            }
                        }
                    }
                };
            }
            start = end;
        }
        Ok(out)
    }
}

impl Operator for Window<'_> {
    fn next(&mut self, cx: &mut ExecContext<'_>) -> Result<Option<Row>> {
        if let Some(mut input) = self.input.take() {
            let mut rows = Vec::new();
            let held = self.held.insert(cx.reserve("a window function"));
            while let Some(r) = input.next(cx)? {
                held.hold(&r)?;
                rows.push(r);
            }
            let mut values = Vec::with_capacity(self.calls.len());
            for call in self.calls {
                values.push(self.compute(call, &rows, cx)?);
            }
            for (i, mut row) in rows.into_iter().enumerate() {
                row.extend(values.iter().map(|v| v[i].clone()));
                self.output.push_back(row);
            }
        }
        match self.output.pop_front() {
            Some(r) => emit(self.counters, r),
            None => Ok(None),
        }
    }
}
