//! Sorting, in GoogleSQL's order: NULLs first ascending, last descending
//! (unless the key says otherwise).

use std::cmp::Ordering;
use std::collections::VecDeque;

use rowtree_types::Value;

use crate::error::Result;
use crate::plan::{Counters, SortKey};

use super::context::ExecContext;
use super::memory::Reservation;
use super::operator::{emit, Operator, Row};

/// ORDER BY's comparison of two rows by `keys`.
pub(crate) fn compare_rows(a: &[Value], b: &[Value], keys: &[SortKey]) -> Ordering {
    for k in keys {
        let o = compare_sort_values(&a[k.slot], &b[k.slot], k.desc, k.nulls_first);
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

/// One sort key's comparison of two values: NULLs first or last whatever
/// the direction, other values reversed when `desc`.
pub(super) fn compare_sort_values(x: &Value, y: &Value, desc: bool, nulls_first: bool) -> Ordering {
    match (x.is_null(), y.is_null()) {
        (true, true) => Ordering::Equal,
        (true, false) if nulls_first => Ordering::Less,
        (true, false) => Ordering::Greater,
        (false, true) if nulls_first => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => {
            let o = rowtree_expr::compare(x, y).unwrap_or(Ordering::Equal);
            if desc {
                o.reverse()
            } else {
                o
            }
        }
    }
}

pub(super) struct Sort<'p> {
    pub(super) input: Option<Box<dyn Operator + 'p>>,
    pub(super) keys: &'p [SortKey],
    pub(super) output: VecDeque<Row>,
    pub(super) held: Option<Reservation>,
    pub(super) counters: &'p Counters,
}

impl Operator for Sort<'_> {
    fn next(&mut self, cx: &mut ExecContext<'_>) -> Result<Option<Row>> {
        if let Some(mut input) = self.input.take() {
            let mut rows = Vec::new();
            let held = self.held.insert(cx.reserve("a sort (ORDER BY)"));
            while let Some(r) = input.next(cx)? {
                held.hold(&r)?;
                rows.push(r);
            }
            rows.sort_by(|a, b| compare_rows(a, b, self.keys));
            self.output = rows.into();
        }
        match self.output.pop_front() {
            Some(r) => emit(self.counters, r),
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(slot: usize, desc: bool, nulls_first: bool) -> SortKey {
        SortKey {
            slot,
            desc,
            nulls_first,
            origin: None,
            text: String::new(),
        }
    }

    #[test]
    fn sort_order_follows_googlesql_null_rules() {
        let mut rows = vec![
            vec![Value::Int64(2)],
            vec![Value::Null],
            vec![Value::Int64(1)],
        ];
        rows.sort_by(|a, b| compare_rows(a, b, &[key(0, false, true)]));
        assert_eq!(
            rows,
            vec![
                vec![Value::Null],
                vec![Value::Int64(1)],
                vec![Value::Int64(2)]
            ]
        );
        rows.sort_by(|a, b| compare_rows(a, b, &[key(0, true, false)]));
        assert_eq!(
            rows,
            vec![
                vec![Value::Int64(2)],
                vec![Value::Int64(1)],
                vec![Value::Null]
            ]
        );
        rows.sort_by(|a, b| compare_rows(a, b, &[key(0, true, true)]));
        assert_eq!(rows[0], vec![Value::Null]);
    }
}
