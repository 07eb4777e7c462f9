//! From WHERE conjuncts to key ranges.
//!
//! Rows are stored in key order, so a predicate on a *prefix* of the key
//! columns selects a few contiguous key ranges, and a scan of just those
//! ranges touches only the splits that hold them. The extraction works one
//! key column at a time, in key order:
//!
//! 1. while a column is pinned by `=`, `IN (...)` or `IS NULL`, the prefixes
//!    so far are multiplied by its values (`a IN (1, 2) AND b = 3` gives the
//!    prefixes `(1, 3)` and `(2, 3)`);
//! 2. the first column that is not pinned may still be bounded by `<`, `<=`,
//!    `>`, `>=`, `BETWEEN`: that gives one range per prefix;
//! 3. everything else (later columns, other predicates) stays a residual
//!    filter evaluated on the rows the ranges return.
//!
//! A full key (every key column pinned) becomes a point lookup.
//!
//! **DESC key columns** store larger values first and NULLs last (the key
//! codec inverts the column's bytes), so a value bound `x > 5` becomes the
//! *end* of the key range on a DESC column and the *start* on an ASC one. A
//! bound on one side only must still exclude NULL (`x < 5` is never true
//! for NULL): on an ASC column the range starts after the NULL prefix, on a
//! DESC column it ends before it.
//!
//! Bounds are prefix bounds ([`rowtree_db::KeyRange`]): `Closed([1, 5])`
//! includes every key starting with `(1, 5)`, `Open` excludes them.

use std::cmp::Ordering;

use rowtree_db::{Bound, Key, KeyRange, KeySet};
use rowtree_schema::KeyColumn;
use rowtree_types::{Type, Value};

/// How many prefixes an IN-list product may produce before the extraction
/// stops multiplying (the remaining columns stay residual).
const MAX_PREFIXES: usize = 10_000;

/// What one conjunct says about one table column, in values of the column's type.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum KeyPredicate {
    /// `c = v` (or `c IS NULL`, with `Value::Null`).
    Eq(usize, Value),
    /// `c IN (v1, v2, ...)` (NULLs already removed: they never match).
    In(usize, Vec<Value>),
    /// `c > v` (false) / `c >= v` (true).
    Lower(usize, Value, bool),
    /// `c < v` (false) / `c <= v` (true).
    Upper(usize, Value, bool),
    /// `BETWEEN`: both bounds, inclusive.
    Between(usize, Value, Value),
    /// `c IS NOT NULL`: no range, but tells a NULL_FILTERED index it may answer.
    NotNull(usize),
}

impl KeyPredicate {
    /// The table column the predicate constrains.
    pub fn column(&self) -> usize {
        match self {
            KeyPredicate::Eq(c, _)
            | KeyPredicate::In(c, _)
            | KeyPredicate::Lower(c, _, _)
            | KeyPredicate::Upper(c, _, _)
            | KeyPredicate::Between(c, _, _)
            | KeyPredicate::NotNull(c) => *c,
        }
    }

    /// Whether a row where the column is NULL can satisfy the predicate.
    pub fn rejects_null(&self) -> bool {
        !matches!(self, KeyPredicate::Eq(_, Value::Null))
    }
}

/// The key set of a scan and what it consumed.
#[derive(Debug, Clone)]
pub(crate) struct Extraction {
    pub key_set: KeySet,
    /// Indexes (into the predicate list) of the predicates the key set answers exactly.
    pub consumed: Vec<usize>,
    /// How many leading key columns are pinned to a single value.
    pub fixed: usize,
    /// How many leading key columns the key set constrains (pinned or ranged).
    pub constrained: usize,
    /// Whether every key column is pinned (point lookups).
    pub points: bool,
    /// Human-readable ranges, for EXPLAIN.
    pub text: String,
}

/// A value bound: the value and whether it is included.
type ValueBound = (Value, bool);

/// Builds the key set for `key_columns` from `predicates` (each `None` when
/// the conjunct says nothing about a single column).
pub(crate) fn extract(
    key_columns: &[KeyColumn],
    predicates: &[Option<KeyPredicate>],
) -> Extraction {
    let mut prefixes: Vec<Key> = vec![Vec::new()];
    let mut consumed = Vec::new();
    let mut fixed = 0;
    let mut pinned = 0;
    let mut range: Option<(Option<ValueBound>, Option<ValueBound>, bool)> = None;
    for kc in key_columns {
        let pin = predicates.iter().enumerate().find_map(|(i, p)| match p {
            Some(KeyPredicate::Eq(c, v)) if *c == kc.column => Some((i, vec![v.clone()])),
            Some(KeyPredicate::In(c, vs)) if *c == kc.column => Some((i, vs.clone())),
            _ => None,
        });
        if let Some((i, mut values)) = pin {
            sort_values(&mut values, kc.desc);
            if prefixes.len().saturating_mul(values.len().max(1)) > MAX_PREFIXES {
                break;
            }
            if values.len() == 1 && fixed == pinned {
                fixed += 1;
            }
            prefixes = prefixes
                .iter()
                .flat_map(|p| {
                    values.iter().map(move |v| {
                        let mut next = p.clone();
                        next.push(v.clone());
                        next
                    })
                })
                .collect();
            consumed.push(i);
            pinned += 1;
            continue;
        }
        // The first unpinned column: look for bounds.
        let mut lower: Option<(Value, bool)> = None;
        let mut upper: Option<(Value, bool)> = None;
        for (i, p) in predicates.iter().enumerate() {
            let (lo, hi) = match p {
                Some(KeyPredicate::Lower(c, v, inc)) if *c == kc.column => {
                    (Some((v.clone(), *inc)), None)
                }
                Some(KeyPredicate::Upper(c, v, inc)) if *c == kc.column => {
                    (None, Some((v.clone(), *inc)))
                }
                Some(KeyPredicate::Between(c, a, b)) if *c == kc.column => {
                    (Some((a.clone(), true)), Some((b.clone(), true)))
                }
                _ => continue,
            };
            // Keep the tightest bound; a looser one stays consumed too (it is implied).
            if let Some(lo) = lo {
                lower = Some(tighter(lower, lo, Ordering::Greater));
            }
            if let Some(hi) = hi {
                upper = Some(tighter(upper, hi, Ordering::Less));
            }
            consumed.push(i);
        }
        if lower.is_some() || upper.is_some() {
            range = Some((lower, upper, kc.desc));
        }
        break;
    }
    consumed.sort_unstable();
    let constrained = pinned + usize::from(range.is_some());
    let points = range.is_none() && pinned == key_columns.len() && pinned > 0;
    let key_set = if constrained == 0 {
        KeySet::all()
    } else if points {
        KeySet::keys(prefixes)
    } else {
        let ranges = prefixes
            .into_iter()
            .map(|p| match &range {
                None => KeyRange::prefix(p),
                Some((lower, upper, desc)) => bounded(p, lower.clone(), upper.clone(), *desc),
            })
            .collect();
        KeySet {
            ranges,
            ..KeySet::default()
        }
    };
    let text = describe(&key_set);
    Extraction {
        key_set,
        consumed,
        fixed,
        constrained,
        points,
        text,
    }
}

fn tighter(current: Option<(Value, bool)>, new: (Value, bool), want: Ordering) -> (Value, bool) {
    match current {
        None => new,
        Some(cur) => match rowtree_expr::compare(&new.0, &cur.0) {
            Some(o) if o == want => new,
            Some(Ordering::Equal) => (cur.0, cur.1 && new.1),
            _ => cur,
        },
    }
}

/// Values in key order for a column of the given direction.
fn sort_values(values: &mut Vec<Value>, desc: bool) {
    values.sort_by(|a, b| {
        let o = rowtree_expr::compare(a, b).unwrap_or(Ordering::Equal);
        if desc {
            o.reverse()
        } else {
            o
        }
    });
    values.dedup_by(|a, b| rowtree_expr::compare(a, b) == Some(Ordering::Equal));
}

/// One range under `prefix` for value bounds on the next key column.
fn bounded(
    prefix: Key,
    lower: Option<(Value, bool)>,
    upper: Option<(Value, bool)>,
    desc: bool,
) -> KeyRange {
    let with = |v: Value| {
        let mut k = prefix.clone();
        k.push(v);
        k
    };
    // NULL sorts first on ASC columns and last on DESC ones; a bound on one
    // side only must step over it.
    let skip_null = Bound::Open(with(Value::Null));
    let (start_value, end_value) = if desc { (upper, lower) } else { (lower, upper) };
    let start = match start_value {
        Some((v, true)) => Bound::Closed(with(v)),
        Some((v, false)) => Bound::Open(with(v)),
        None if desc => Bound::Closed(prefix.clone()),
        None => skip_null.clone(),
    };
    let end = match end_value {
        Some((v, true)) => Bound::Closed(with(v)),
        Some((v, false)) => Bound::Open(with(v)),
        None if desc => skip_null,
        None => Bound::Closed(prefix.clone()),
    };
    KeyRange { start, end }
}

fn key_text(key: &[Value]) -> String {
    let parts: Vec<String> = key.iter().map(Value::sql_literal).collect();
    format!("({})", parts.join(", "))
}

/// `all`, `{(1), (2)}`, `[(1) .. (1, 5))`: closed bounds in brackets, open in parentheses.
pub(crate) fn describe(key_set: &KeySet) -> String {
    if key_set.all {
        return "full scan".into();
    }
    let mut parts: Vec<String> = key_set
        .keys
        .iter()
        .map(|k| format!("key {}", key_text(k)))
        .collect();
    for r in &key_set.ranges {
        if let (Bound::Closed(a), Bound::Closed(b)) = (&r.start, &r.end) {
            if a == b {
                parts.push(format!("prefix {}", key_text(a)));
                continue;
            }
        }
        let (open, a) = match &r.start {
            Bound::Closed(k) => ('[', k),
            Bound::Open(k) => ('(', k),
        };
        let (close, b) = match &r.end {
            Bound::Closed(k) => (']', k),
            Bound::Open(k) => (')', k),
        };
        parts.push(format!(
            "range {open}{} .. {}{close}",
            key_text(a),
            key_text(b)
        ));
    }
    if parts.len() > 8 {
        let n = parts.len();
        parts.truncate(8);
        parts.push(format!("... ({n} in all)"));
    }
    parts.join(", ")
}

/// Coerces a constant to a key column's type, refusing lossy conversions
/// (then the predicate is not usable as a key bound and stays a filter).
pub(crate) fn key_value(value: Value, ty: &Type) -> Option<Value> {
    let coerced = rowtree_expr::coerce_value(value.clone(), ty).ok()?;
    match rowtree_expr::compare(&coerced, &value) {
        Some(Ordering::Equal) => Some(coerced),
        None if matches!(value, Value::String(_)) => Some(coerced),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asc(c: usize) -> KeyColumn {
        KeyColumn {
            column: c,
            desc: false,
        }
    }
    fn desc(c: usize) -> KeyColumn {
        KeyColumn {
            column: c,
            desc: true,
        }
    }
    fn i(v: i64) -> Value {
        Value::Int64(v)
    }

    #[test]
    fn full_key_equality_is_a_point_lookup() {
        let e = extract(
            &[asc(0), asc(1)],
            &[
                Some(KeyPredicate::Eq(1, i(2))),
                Some(KeyPredicate::Eq(0, i(1))),
            ],
        );
        assert_eq!(e.key_set, KeySet::key(vec![i(1), i(2)]));
        assert_eq!(e.consumed, vec![0, 1]);
        assert!(e.points);
        assert_eq!(e.fixed, 2);
    }

    #[test]
    fn prefix_equality_is_a_prefix_range() {
        let e = extract(&[asc(0), asc(1)], &[Some(KeyPredicate::Eq(0, i(7))), None]);
        assert_eq!(e.key_set, KeySet::range(KeyRange::prefix(vec![i(7)])));
        assert_eq!(e.text, "prefix (7)");
    }

    #[test]
    fn in_lists_multiply_and_come_in_key_order() {
        let e = extract(
            &[asc(0), desc(1)],
            &[
                Some(KeyPredicate::In(0, vec![i(3), i(1)])),
                Some(KeyPredicate::In(1, vec![i(5), i(9)])),
            ],
        );
        assert_eq!(
            e.key_set.keys,
            vec![
                vec![i(1), i(9)],
                vec![i(1), i(5)],
                vec![i(3), i(9)],
                vec![i(3), i(5)]
            ]
        );
        assert_eq!(e.fixed, 0);
    }

    #[test]
    fn range_on_asc_column_skips_nulls() {
        let e = extract(&[asc(0)], &[Some(KeyPredicate::Upper(0, i(5), false))]);
        assert_eq!(
            e.key_set.ranges,
            vec![KeyRange {
                start: Bound::Open(vec![Value::Null]),
                end: Bound::Open(vec![i(5)])
            }]
        );
    }

    #[test]
    fn range_on_desc_column_swaps_bounds() {
        // Key (UserId, Ts DESC): Ts > 10 AND Ts <= 20 reads from 20 down to 10.
        let e = extract(
            &[asc(0), desc(1)],
            &[
                Some(KeyPredicate::Eq(0, i(1))),
                Some(KeyPredicate::Lower(1, i(10), false)),
                Some(KeyPredicate::Upper(1, i(20), true)),
            ],
        );
        assert_eq!(
            e.key_set.ranges,
            vec![KeyRange {
                start: Bound::Closed(vec![i(1), i(20)]),
                end: Bound::Open(vec![i(1), i(10)])
            }]
        );
        assert_eq!(e.consumed, vec![0, 1, 2]);
        assert_eq!(e.fixed, 1);
        // A lower bound only must stop before the NULLs at the end.
        let e = extract(&[desc(0)], &[Some(KeyPredicate::Lower(0, i(3), true))]);
        assert_eq!(
            e.key_set.ranges,
            vec![KeyRange {
                start: Bound::Closed(vec![]),
                end: Bound::Closed(vec![i(3)])
            }]
        );
        let e = extract(&[desc(0)], &[Some(KeyPredicate::Upper(0, i(3), true))]);
        assert_eq!(
            e.key_set.ranges,
            vec![KeyRange {
                start: Bound::Closed(vec![i(3)]),
                end: Bound::Open(vec![Value::Null])
            }]
        );
    }

    #[test]
    fn tightest_bound_wins_and_gaps_stop_extraction() {
        let e = extract(
            &[asc(0), asc(1)],
            &[
                Some(KeyPredicate::Lower(0, i(1), true)),
                Some(KeyPredicate::Lower(0, i(4), false)),
                Some(KeyPredicate::Eq(1, i(2))),
            ],
        );
        assert_eq!(
            e.key_set.ranges,
            vec![KeyRange {
                start: Bound::Open(vec![i(4)]),
                end: Bound::Closed(vec![])
            }]
        );
        // The equality on the second column is residual: the range column stops extraction.
        assert_eq!(e.consumed, vec![0, 1]);
        let e = extract(&[asc(0), asc(1)], &[Some(KeyPredicate::Eq(1, i(2)))]);
        assert!(e.key_set.all);
        assert!(e.consumed.is_empty());
    }

    #[test]
    fn lossy_constants_are_not_key_values() {
        assert_eq!(key_value(Value::Float64(1.5), &Type::Int64), None);
        assert_eq!(key_value(i(2), &Type::Float64), Some(Value::Float64(2.0)));
    }
}
