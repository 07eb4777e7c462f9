//! `IN` against many candidates: a hash set, built once per statement.
//!
//! `x IN UNNEST(@ids)` and `x IN (1, 2, ...)` compare the needle with every
//! candidate, one after the other. When the candidates do not depend on the
//! row (a parameter, a literal array, a constant expression) that search is
//! repeated for each row over the same values: a table of 10,000 rows
//! against 16,000 ids makes 160 million comparisons. The binder marks such
//! an `IN` with a [`SetId`]; evaluation then builds an [`InSet`] of the
//! candidates once, keeps it in the [`EvalContext`](crate::EvalContext)
//! (if the context keeps sets: the SQL executor does, for the statement),
//! and answers each row with a few hash lookups.
//!
//! The answer must be exactly the search's, three-valued logic included:
//!
//! * no candidates (an empty or NULL array): FALSE, even for a NULL needle;
//! * a NULL needle: NULL;
//! * a match: TRUE; otherwise NULL if some candidate is NULL (or cannot be
//!   compared with the needle), else FALSE;
//! * NaN equals nothing (not even NaN), and `-0.0` equals `0.0`.
//!
//! Numbers of different types compare as [`crate::compare`] does: INT64
//! with NUMERIC and INT64 with FLOAT exactly, NUMERIC with FLOAT through
//! the NUMERIC's nearest FLOAT64. That equality is not transitive (an
//! INT64 can equal a NUMERIC that equals a FLOAT the INT64 does not equal),
//! so there is no single canonical key for a number: each candidate is
//! entered once per kind of needle it can match, in that needle's terms
//! (a FLOAT candidate as an INT64 when it is integral, a NUMERIC as its
//! FLOAT64, ...), and a needle looks in its own kind's table only.
//! Candidates the sets cannot hold (arrays, structs, JSON) leave the plain
//! search in place.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};

use rowtree_types::{Date, Numeric, Timestamp, Uuid, Value};

use crate::compare::sql_compare;
use crate::operator::CmpOp;

/// Identifies one `IN` whose candidates do not depend on the row (see the
/// module docs): the key under which a context keeps its [`InSet`].
pub type SetId = u64;

static NEXT_SET_ID: AtomicU64 = AtomicU64::new(1);

/// A fresh [`SetId`], unique in the process.
pub(crate) fn next_set_id() -> SetId {
    NEXT_SET_ID.fetch_add(1, Ordering::Relaxed)
}

/// The kinds of values, for what can be compared with what.
const NULL: u16 = 1 << 0;
const BOOL: u16 = 1 << 1;
const NUMBER: u16 = 1 << 2;
const STRING: u16 = 1 << 3;
const BYTES: u16 = 1 << 4;
const DATE: u16 = 1 << 5;
const TIMESTAMP: u16 = 1 << 6;
const UUID: u16 = 1 << 7;

/// The candidates of an `IN`, ready to be probed by needles (see the
/// module docs for the exact semantics it keeps).
#[derive(Debug)]
pub struct InSet(Repr);

#[derive(Debug)]
enum Repr {
    /// Hash sets of the candidates.
    Hashed(Box<Hashed>),
    /// Candidates no hash set holds (arrays, structs): kept, and searched
    /// in turn, which still saves evaluating them for every row.
    Linear(Vec<Value>),
    /// Evaluating the candidates failed: the caller evaluates `IN` as it
    /// would without a set (lazily, so it fails exactly when it would).
    Unusable,
}

impl InSet {
    /// The set of `candidates`: the values of the array or list, NULLs
    /// included (an empty list for a NULL array).
    pub fn new(candidates: Vec<Value>) -> InSet {
        if candidates.iter().all(|v| kind(v).is_some()) {
            InSet(Repr::Hashed(Box::new(Hashed::new(candidates))))
        } else {
            InSet(Repr::Linear(candidates))
        }
    }

    /// A set that answers nothing: the candidates could not be evaluated
    /// once for all rows.
    pub fn unusable() -> InSet {
        InSet(Repr::Unusable)
    }

    /// Whether [`InSet::contains`] answers (not for [`InSet::unusable`]).
    pub fn usable(&self) -> bool {
        !matches!(self.0, Repr::Unusable)
    }

    /// Approximate bytes the set holds, for memory accounting.
    pub fn bytes(&self) -> usize {
        match &self.0 {
            Repr::Hashed(h) => h.bytes,
            Repr::Linear(items) => items
                .iter()
                .map(|v| std::mem::size_of::<Value>() + heap_bytes(v))
                .sum(),
            Repr::Unusable => 0,
        }
    }

    /// `needle IN <candidates>`: `Some(true)`, `Some(false)` or `None`
    /// (NULL), exactly as comparing with each candidate in turn would
    /// (`search`). `None` too for an unusable set.
    pub fn contains(&self, needle: &Value) -> Option<bool> {
        match &self.0 {
            Repr::Hashed(h) => h.contains(needle),
            Repr::Linear(items) => search(needle, items),
            Repr::Unusable => None,
        }
    }
}

/// Heap bytes of a value, roughly.
fn heap_bytes(v: &Value) -> usize {
    match v {
        Value::String(s) => s.len(),
        Value::Bytes(b) => b.len(),
        Value::Json(j) => j.to_string().len(),
        Value::Array(items) | Value::Struct(items) => items
            .iter()
            .map(|i| std::mem::size_of::<Value>() + heap_bytes(i))
            .sum(),
        _ => 0,
    }
}

/// `needle IN <items>` by comparing with each item in turn: TRUE on a
/// match; with no items FALSE; for a NULL needle NULL; otherwise NULL if
/// some comparison was unknown, else FALSE.
pub(crate) fn search(needle: &Value, items: &[Value]) -> Option<bool> {
    if items.is_empty() {
        return Some(false);
    }
    if needle.is_null() {
        return None;
    }
    let mut unknown = false;
    for item in items {
        match sql_compare(CmpOp::Eq, needle, item) {
            Some(true) => return Some(true),
            None => unknown = true,
            Some(false) => {}
        }
    }
    if unknown {
        None
    } else {
        Some(false)
    }
}

/// Hash sets of scalar candidates.
#[derive(Debug, Default)]
struct Hashed {
    /// No candidates at all: every needle, NULL too, is not IN.
    empty: bool,
    /// The kinds of the candidates (NaN excluded: it compares with nothing).
    kinds: u16,
    /// What INT64 needles equal: INT64 candidates, and FLOAT and NUMERIC
    /// candidates that hold an integer in INT64's range.
    for_int: HashSet<i64>,
    /// INT64 candidates (FLOAT needles compare with them exactly).
    ints: HashSet<i64>,
    /// What NUMERIC needles equal exactly: NUMERIC and INT64 candidates, scaled.
    for_numeric: HashSet<i128>,
    /// FLOAT candidates as normalized bits (`-0` is `0`; NaN left out).
    floats: HashSet<u64>,
    /// NUMERIC candidates as their nearest FLOAT64 (FLOAT needles compare
    /// with NUMERIC that way).
    numerics_as_float: HashSet<u64>,
    strings: HashSet<String>,
    bytes_values: HashSet<Vec<u8>>,
    /// BOOL, DATE, TIMESTAMP and UUID candidates.
    exact: HashSet<Exact>,
    /// Approximate heap bytes held.
    bytes: usize,
}

/// A fixed-size non-numeric scalar, hashable.
#[derive(Debug, PartialEq, Eq, Hash)]
enum Exact {
    Bool(bool),
    Date(Date),
    Timestamp(Timestamp),
    Uuid(Uuid),
}

fn kind(v: &Value) -> Option<u16> {
    Some(match v {
        Value::Null => NULL,
        Value::Bool(_) => BOOL,
        Value::Int64(_) | Value::Float32(_) | Value::Float64(_) | Value::Numeric(_) => NUMBER,
        Value::String(_) => STRING,
        Value::Bytes(_) => BYTES,
        Value::Date(_) => DATE,
        Value::Timestamp(_) => TIMESTAMP,
        Value::Uuid(_) => UUID,
        Value::Json(_) | Value::Array(_) | Value::Struct(_) => return None,
    })
}

/// The value of a FLOAT32 or FLOAT64 as an `f64` (exact), else `None`.
fn as_f64(v: &Value) -> Option<f64> {
    match v {
        Value::Float32(f) => Some(*f as f64),
        Value::Float64(f) => Some(*f),
        _ => None,
    }
}

/// The float's bits with `-0` folded into `0` (NaN is never looked up).
fn float_key(f: f64) -> u64 {
    if f == 0.0 {
        0f64.to_bits()
    } else {
        f.to_bits()
    }
}

/// The INT64 an integral float equals exactly, as `compare` decides.
fn float_as_int(f: f64) -> Option<i64> {
    const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
    (f.is_finite() && f.floor() == f && (-TWO_POW_63..TWO_POW_63).contains(&f)).then_some(f as i64)
}

/// The INT64 an integral NUMERIC equals.
fn numeric_as_int(n: Numeric) -> Option<i64> {
    let scaled = n.scaled();
    if scaled % Numeric::ONE != 0 {
        return None;
    }
    i64::try_from(scaled / Numeric::ONE).ok()
}

/// Bytes one hash set entry takes, roughly (the value and the table's slot).
const ENTRY: usize = 32;

impl Hashed {
    /// The sets of `candidates`, all of a kind [`kind`] knows.
    fn new(candidates: Vec<Value>) -> Hashed {
        let mut set = Hashed {
            empty: candidates.is_empty(),
            ..Hashed::default()
        };
        for v in candidates {
            let Some(k) = kind(&v) else { continue };
            match v {
                Value::Null => {}
                Value::Int64(i) => {
                    set.for_int.insert(i);
                    set.ints.insert(i);
                    set.for_numeric.insert(Numeric::from_i64(i).scaled());
                    set.bytes += 3 * ENTRY;
                }
                Value::Numeric(n) => {
                    if let Some(i) = numeric_as_int(n) {
                        set.for_int.insert(i);
                    }
                    set.for_numeric.insert(n.scaled());
                    set.numerics_as_float.insert(float_key(n.to_f64()));
                    set.bytes += 3 * ENTRY;
                }
                Value::Float32(_) | Value::Float64(_) => {
                    let f = as_f64(&v).unwrap_or(f64::NAN);
                    if f.is_nan() {
                        // Compares with nothing (NULL needles aside).
                        continue;
                    }
                    if let Some(i) = float_as_int(f) {
                        set.for_int.insert(i);
                    }
                    set.floats.insert(float_key(f));
                    set.bytes += 2 * ENTRY;
                }
                Value::String(s) => {
                    set.bytes += ENTRY + s.capacity();
                    set.strings.insert(s);
                }
                Value::Bytes(b) => {
                    set.bytes += ENTRY + b.capacity();
                    set.bytes_values.insert(b);
                }
                Value::Bool(b) => {
                    set.exact.insert(Exact::Bool(b));
                }
                Value::Date(d) => {
                    set.exact.insert(Exact::Date(d));
                    set.bytes += ENTRY;
                }
                Value::Timestamp(t) => {
                    set.exact.insert(Exact::Timestamp(t));
                    set.bytes += ENTRY;
                }
                Value::Uuid(u) => {
                    set.exact.insert(Exact::Uuid(u));
                    set.bytes += ENTRY;
                }
                Value::Json(_) | Value::Array(_) | Value::Struct(_) => continue,
            }
            set.kinds |= k;
        }
        set
    }

    fn contains(&self, needle: &Value) -> Option<bool> {
        if self.empty {
            return Some(false);
        }
        let found = match needle {
            Value::Null => return None,
            Value::Int64(i) => self.for_int.contains(i),
            Value::Numeric(n) => {
                self.for_numeric.contains(&n.scaled())
                    || self.floats.contains(&float_key(n.to_f64()))
            }
            Value::Float32(_) | Value::Float64(_) => {
                let f = as_f64(needle).unwrap_or(f64::NAN);
                if f.is_nan() {
                    // NaN equals nothing; only a NULL candidate makes it unknown.
                    return if self.kinds & NULL != 0 {
                        None
                    } else {
                        Some(false)
                    };
                }
                float_as_int(f).is_some_and(|i| self.ints.contains(&i))
                    || self.floats.contains(&float_key(f))
                    || self.numerics_as_float.contains(&float_key(f))
            }
            Value::String(s) => self.strings.contains(s.as_str()),
            Value::Bytes(b) => self.bytes_values.contains(b.as_slice()),
            Value::Bool(b) => self.exact.contains(&Exact::Bool(*b)),
            Value::Date(d) => self.exact.contains(&Exact::Date(*d)),
            Value::Timestamp(t) => self.exact.contains(&Exact::Timestamp(*t)),
            Value::Uuid(u) => self.exact.contains(&Exact::Uuid(*u)),
            // Never probed with these: the binder only marks scalar needles.
            Value::Json(_) | Value::Array(_) | Value::Struct(_) => return None,
        };
        if found {
            return Some(true);
        }
        // Not found: unknown if a candidate is NULL or of a kind the needle
        // does not compare with.
        let own = kind(needle).unwrap_or(0);
        if self.kinds & !own != 0 {
            None
        } else {
            Some(false)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Values where the cross-type rules bite: small integers, their float
    /// and NUMERIC forms, halves, huge and edge floats, NaN, -0, NULL, and a
    /// few non-numeric kinds.
    fn value() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            (-3i64..4).prop_map(Value::Int64),
            Just(Value::Int64(i64::MAX)),
            Just(Value::Int64(i64::MIN)),
            Just(Value::Int64((1 << 53) + 1)),
            (-6i32..7).prop_map(|h| Value::Float64(h as f64 / 2.0)),
            (-6i32..7).prop_map(|h| Value::Float32(h as f32 / 2.0)),
            Just(Value::Float64(f64::NAN)),
            Just(Value::Float64(-0.0)),
            Just(Value::Float64(f64::INFINITY)),
            Just(Value::Float64(9_223_372_036_854_775_808.0)),
            Just(Value::Float64(-9_223_372_036_854_775_808.0)),
            Just(Value::Float64((1u64 << 53) as f64)),
            Just(Value::Float64(0.1)),
            (-6i128..7)
                .prop_map(|h| Value::Numeric(Numeric::from_scaled(h * Numeric::ONE / 2).unwrap())),
            Just(Value::Numeric(Numeric::from_i64((1 << 53) + 1))),
            Just(Value::Numeric(Numeric::parse("0.1").unwrap())),
            Just(Value::Numeric(Numeric::MAX)),
            prop_oneof![Just("a"), Just("b"), Just("")].prop_map(|s| Value::String(s.into())),
            any::<bool>().prop_map(Value::Bool),
            (0u8..3).prop_map(|b| Value::Bytes(vec![b])),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn the_set_answers_as_the_search(
            needle in value(),
            items in proptest::collection::vec(value(), 0..6),
        ) {
            let set = InSet::new(items.clone());
            prop_assert_eq!(set.contains(&needle), search(&needle, &items));
        }
    }

    #[test]
    fn table_of_cases() {
        let i = Value::Int64;
        let f = Value::Float64;
        let n = |t: &str| Value::Numeric(Numeric::parse(t).unwrap());
        let cases: Vec<(Value, Vec<Value>, Option<bool>)> = vec![
            (i(1), vec![], Some(false)),
            (Value::Null, vec![], Some(false)),
            (Value::Null, vec![i(1)], None),
            (i(1), vec![i(2), Value::Null], None),
            (i(2), vec![i(2), Value::Null], Some(true)),
            (i(2), vec![f(2.0)], Some(true)),
            (i(2), vec![f(2.5)], Some(false)),
            (f(2.0), vec![i(2)], Some(true)),
            (n("2"), vec![i(2)], Some(true)),
            (i(2), vec![n("2.000000001")], Some(false)),
            (f(f64::NAN), vec![f(f64::NAN)], Some(false)),
            (f(f64::NAN), vec![f(1.0), Value::Null], None),
            (f(-0.0), vec![f(0.0)], Some(true)),
            (f(0.1), vec![n("0.1")], Some(true)),
            (i((1 << 53) + 1), vec![f((1u64 << 53) as f64)], Some(false)),
            (
                n("9007199254740993"),
                vec![f((1u64 << 53) as f64)],
                Some(true),
            ),
            (
                Value::String("a".into()),
                vec![Value::String("b".into())],
                Some(false),
            ),
        ];
        for (needle, items, want) in cases {
            assert_eq!(search(&needle, &items), want, "{needle:?} IN {items:?}");
            assert_eq!(
                InSet::new(items.clone()).contains(&needle),
                want,
                "{needle:?} IN {items:?}"
            );
        }
    }
}
