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
//! **`IN UNNEST(array)`** pins a column too, when the array does not depend
//! on the row (a parameter, a literal array, a constant expression): that
//! is how clients batch lookups by key. Its values are known only when the
//! statement runs, so the extraction leaves a `DeferredKeys`: the key set
//! with a hole for the array, which the scan fills once per execution —
//! the elements coerced to the key column's type (those no key value can
//! equal, like `1.5` for an INT64 column, dropped), NULLs dropped (`NULL IN
//! ...` never matches), sorted in the column's order (ASC or DESC) and
//! deduplicated, so the scan reads point keys (or short prefix ranges) in
//! key order. One array per key set, and only next to few known values
//! (`MAX_ARRAY_FANOUT`), so the key list grows with the array and not
//! with a product of arrays; the scan holds it against the query's memory.
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
use rowtree_expr::BoundExpr;
use rowtree_schema::KeyColumn;
use rowtree_types::{Type, Value};

/// How many prefixes an IN-list product may produce before the extraction
/// stops multiplying (the remaining columns stay residual).
const MAX_PREFIXES: usize = 10_000;

/// How many prefixes the known values of the other key columns may make
/// when an array pins a column too (each array value is multiplied by them).
const MAX_ARRAY_FANOUT: usize = 64;

/// The array of `c IN UNNEST(array)`, when it does not depend on the row.
#[derive(Debug, Clone)]
pub(crate) struct ArrayKeys {
    /// The array, bound without a row: parameters, literals, deterministic
    /// functions of them.
    pub expr: BoundExpr,
    /// The key column's type, which the elements are coerced to.
    pub ty: Type,
    /// `UNNEST(@ids)`, for EXPLAIN.
    pub text: String,
}

impl PartialEq for ArrayKeys {
    fn eq(&self, other: &ArrayKeys) -> bool {
        self.text == other.text && self.ty == other.ty
    }
}

/// Whether an array of `elem` can give the key values of a `key` column:
/// the same type, or numbers whose comparison with the column is exact
/// after coercion. Not FLOAT elements for a NUMERIC column: a float equals
/// every NUMERIC whose nearest FLOAT64 it is, which is no single key.
pub(crate) fn array_gives_keys(elem: &Type, key: &Type) -> bool {
    let number = |t: &Type| {
        matches!(
            t,
            Type::Int64 | Type::Float32 | Type::Float64 | Type::Numeric
        )
    };
    key.is_key_type()
        && (elem == key
            || (number(elem)
                && number(key)
                && !(*key == Type::Numeric && matches!(elem, Type::Float32 | Type::Float64))))
}

/// What one conjunct says about one table column, in values of the column's type.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum KeyPredicate {
    /// `c = v` (or `c IS NULL`, with `Value::Null`).
    Eq(usize, Value),
    /// `c IN (v1, v2, ...)` (NULLs already removed: they never match).
    In(usize, Vec<Value>),
    /// `c IN UNNEST(array)`, the array known when the statement runs.
    InArray(usize, ArrayKeys),
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
            | KeyPredicate::InArray(c, _)
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
    /// When an array pins a column: the key set to build when the statement
    /// runs (`key_set` is then empty and unused).
    pub deferred: Option<DeferredKeys>,
}

/// What a range is made of on the first unpinned column: the value bounds
/// and whether the column is DESC.
type ColumnRange = (Option<ValueBound>, Option<ValueBound>, bool);

/// A key set with a hole: one pinned key column takes the values of an
/// array known only when the statement runs (see the module docs).
#[derive(Debug, Clone)]
pub(crate) struct DeferredKeys {
    /// The values of each pinned key column in key order (sorted); `None`
    /// for the array's column.
    columns: Vec<Option<Vec<Value>>>,
    array: ArrayKeys,
    /// Whether the array's column is DESC.
    desc: bool,
    range: Option<ColumnRange>,
    points: bool,
}

impl DeferredKeys {
    /// The array whose values fill the hole.
    pub fn array(&self) -> &ArrayKeys {
        &self.array
    }

    /// The key set once the array is known (`array` as evaluated: an
    /// ARRAY or NULL), in key order.
    pub fn key_set(&self, array: Value) -> KeySet {
        let values = array_key_values(array, &self.array.ty, self.desc);
        let columns: Vec<&[Value]> = self
            .columns
            .iter()
            .map(|c| c.as_deref().unwrap_or(&values))
            .collect();
        build(product(&columns), &self.range, self.points)
    }
}

/// The key values of an array for a column of type `ty`: NULLs and
/// elements no key value can equal dropped, the rest coerced, sorted in
/// the column's order and deduplicated.
pub(crate) fn array_key_values(array: Value, ty: &Type, desc: bool) -> Vec<Value> {
    let items = match array {
        Value::Array(items) => items,
        _ => Vec::new(),
    };
    let mut values: Vec<Value> = items
        .into_iter()
        .filter(|v| !v.is_null())
        .filter_map(|v| array_key_value(v, ty))
        .collect();
    sort_values(&mut values, desc);
    values
}

/// The key value equal to an array element, if any: as [`key_value`], but
/// numbers convert the way a comparison sees them (FLOAT64 `3.0` is the
/// INT64 key 3, though no implicit coercion exists that way; `1.5` is no
/// INT64 key at all).
fn array_key_value(value: Value, ty: &Type) -> Option<Value> {
    if let Some(v) = key_value(value.clone(), ty) {
        return Some(v);
    }
    let cast = rowtree_expr::cast(value.clone(), ty).ok()?;
    (rowtree_expr::compare(&cast, &value) == Some(Ordering::Equal)).then_some(cast)
}

/// Every key made of one value per column, in key order (each column's
/// values are in key order already).
fn product(columns: &[&[Value]]) -> Vec<Key> {
    let mut prefixes: Vec<Key> = vec![Vec::new()];
    for values in columns {
        let mut next = Vec::with_capacity(prefixes.len() * values.len());
        for p in &prefixes {
            for v in values.iter() {
                let mut k = Vec::with_capacity(p.len() + 1);
                k.extend_from_slice(p);
                k.push(v.clone());
                next.push(k);
            }
        }
        prefixes = next;
    }
    prefixes
}

/// The key set of `prefixes`: point keys, whole prefixes, or a range under
/// each prefix.
fn build(prefixes: Vec<Key>, range: &Option<ColumnRange>, points: bool) -> KeySet {
    if points {
        return KeySet::keys(prefixes);
    }
    let ranges = prefixes
        .into_iter()
        .map(|p| match range {
            None => KeyRange::prefix(p),
            Some((lower, upper, desc)) => bounded(p, lower.clone(), upper.clone(), *desc),
        })
        .collect();
    KeySet {
        ranges,
        ..KeySet::default()
    }
}

/// A value bound: the value and whether it is included.
type ValueBound = (Value, bool);

/// Builds the key set for `key_columns` from `predicates` (each `None` when
/// the conjunct says nothing about a single column).
pub(crate) fn extract(
    key_columns: &[KeyColumn],
    predicates: &[Option<KeyPredicate>],
) -> Extraction {
    // The values of each pinned column (`None`: the array's), in key order.
    let mut columns: Vec<Option<Vec<Value>>> = Vec::new();
    let mut array: Option<(ArrayKeys, bool)> = None;
    let mut known = 1usize;
    let mut consumed = Vec::new();
    let mut fixed = 0;
    let mut pinned = 0;
    let mut range: Option<ColumnRange> = None;
    for kc in key_columns {
        let pin = predicates.iter().enumerate().find_map(|(i, p)| match p {
            Some(KeyPredicate::Eq(c, v)) if *c == kc.column => Some((i, vec![v.clone()])),
            Some(KeyPredicate::In(c, vs)) if *c == kc.column => Some((i, vs.clone())),
            _ => None,
        });
        if let Some((i, mut values)) = pin {
            sort_values(&mut values, kc.desc);
            let limit = if array.is_some() {
                MAX_ARRAY_FANOUT
            } else {
                MAX_PREFIXES
            };
            if known.saturating_mul(values.len().max(1)) > limit {
                break;
            }
            if values.len() == 1 && fixed == pinned {
                fixed += 1;
            }
            known *= values.len();
            columns.push(Some(values));
            consumed.push(i);
            pinned += 1;
            continue;
        }
        let from_array = predicates.iter().enumerate().find_map(|(i, p)| match p {
            Some(KeyPredicate::InArray(c, a)) if *c == kc.column => Some((i, a.clone())),
            _ => None,
        });
        if let Some((i, a)) = from_array.filter(|_| array.is_none() && known <= MAX_ARRAY_FANOUT) {
            array = Some((a, kc.desc));
            columns.push(None);
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
    if let Some((array, desc)) = array {
        let text = describe_deferred(&columns, &array, &range, points);
        return Extraction {
            key_set: KeySet::default(),
            consumed,
            fixed,
            constrained,
            points,
            text,
            deferred: Some(DeferredKeys {
                columns,
                array,
                desc,
                range,
                points,
            }),
        };
    }
    let key_set = if constrained == 0 {
        KeySet::all()
    } else {
        let values: Vec<&[Value]> = columns.iter().flatten().map(Vec::as_slice).collect();
        build(product(&values), &range, points)
    };
    let text = describe(&key_set);
    Extraction {
        key_set,
        consumed,
        fixed,
        constrained,
        points,
        text,
        deferred: None,
    }
}

/// EXPLAIN's text of a deferred key set: `key set from UNNEST(@ids)`, or
/// with other key columns `key set from (1, UNNEST(@ids))`; `prefixes`
/// instead of `key set` when the keys are not whole, and the range of the
/// next column after them (`range set from (UNNEST(@u), (10 .. 20])`).
fn describe_deferred(
    columns: &[Option<Vec<Value>>],
    array: &ArrayKeys,
    range: &Option<ColumnRange>,
    points: bool,
) -> String {
    let mut parts: Vec<String> = columns
        .iter()
        .map(|c| match c {
            None => array.text.clone(),
            Some(vs) if vs.len() == 1 => vs[0].sql_literal(),
            Some(vs) => {
                let vs: Vec<String> = vs.iter().map(Value::sql_literal).collect();
                format!("{{{}}}", vs.join(", "))
            }
        })
        .collect();
    let what = if points {
        "key set"
    } else if range.is_some() {
        "range set"
    } else {
        "prefix set"
    };
    if let Some((lower, upper, _)) = range {
        let lo = match lower {
            Some((v, true)) => format!("[{}", v.sql_literal()),
            Some((v, false)) => format!("({}", v.sql_literal()),
            None => "(".into(),
        };
        let hi = match upper {
            Some((v, true)) => format!("{}]", v.sql_literal()),
            Some((v, false)) => format!("{})", v.sql_literal()),
            None => ")".into(),
        };
        parts.push(format!("{lo} .. {hi}"));
    }
    if parts.len() == 1 {
        format!("{what} from {}", parts[0])
    } else {
        format!("{what} from ({})", parts.join(", "))
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

/// Values in key order for a column of the given direction, deduplicated.
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

    fn array(text: &str, ty: Type) -> ArrayKeys {
        let ast = rowtree_parser::parse_expr(text).unwrap();
        ArrayKeys {
            expr: rowtree_expr::bind(&ast, &(), &Default::default()).unwrap(),
            ty,
            text: format!("UNNEST({text})"),
        }
    }

    #[test]
    fn an_array_pins_a_column_when_the_statement_runs() {
        // Key (A, B DESC): A = 1 AND B IN UNNEST(...).
        let e = extract(
            &[asc(0), desc(1)],
            &[
                Some(KeyPredicate::InArray(1, array("[5, 9]", Type::Int64))),
                Some(KeyPredicate::Eq(0, i(1))),
            ],
        );
        assert_eq!(e.consumed, vec![0, 1]);
        assert!(e.points);
        assert_eq!(e.fixed, 1);
        assert_eq!(e.text, "key set from (1, UNNEST([5, 9]))");
        let d = e.deferred.expect("deferred");
        // Coerced, NULL and non-integral values dropped, DESC order, deduplicated.
        let ks = d.key_set(Value::Array(vec![
            i(5),
            Value::Null,
            i(9),
            Value::Float64(7.0),
            Value::Float64(7.5),
            i(5),
        ]));
        assert_eq!(
            ks.keys,
            vec![vec![i(1), i(9)], vec![i(1), i(7)], vec![i(1), i(5)]]
        );
        assert!(d.key_set(Value::Null).keys.is_empty());
    }

    #[test]
    fn an_array_on_a_prefix_gives_ranges_and_one_array_at_most() {
        let e = extract(
            &[asc(0), asc(1), asc(2)],
            &[
                Some(KeyPredicate::InArray(0, array("[2, 1]", Type::Int64))),
                Some(KeyPredicate::InArray(1, array("[3]", Type::Int64))),
                Some(KeyPredicate::Lower(1, i(4), true)),
            ],
        );
        // The second array stays a filter; the bound on the second column is a range.
        assert_eq!(e.consumed, vec![0, 2]);
        assert_eq!(e.text, "range set from (UNNEST([2, 1]), [4 .. ))");
        let ks = e
            .deferred
            .expect("deferred")
            .key_set(Value::Array(vec![i(2), i(1)]));
        assert_eq!(
            ks.ranges,
            vec![
                KeyRange {
                    start: Bound::Closed(vec![i(1), i(4)]),
                    end: Bound::Closed(vec![i(1)])
                },
                KeyRange {
                    start: Bound::Closed(vec![i(2), i(4)]),
                    end: Bound::Closed(vec![i(2)])
                },
            ]
        );
        // An equality on the same column wins over the array.
        let e = extract(
            &[asc(0)],
            &[
                Some(KeyPredicate::InArray(0, array("[2]", Type::Int64))),
                Some(KeyPredicate::Eq(0, i(7))),
            ],
        );
        assert!(e.deferred.is_none());
        assert_eq!(e.consumed, vec![1]);
    }

    #[test]
    fn which_arrays_give_keys() {
        assert!(array_gives_keys(&Type::Int64, &Type::Int64));
        assert!(array_gives_keys(&Type::Float64, &Type::Int64));
        assert!(array_gives_keys(&Type::Int64, &Type::Numeric));
        assert!(!array_gives_keys(&Type::Float64, &Type::Numeric));
        assert!(!array_gives_keys(&Type::String, &Type::Date));
    }

    #[test]
    fn lossy_constants_are_not_key_values() {
        assert_eq!(key_value(Value::Float64(1.5), &Type::Int64), None);
        assert_eq!(key_value(i(2), &Type::Float64), Some(Value::Float64(2.0)));
    }
}
