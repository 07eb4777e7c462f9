//! Aggregate functions: typing ([`aggregate_signature`]), computation
//! ([`accumulator`] / [`Accumulator`]), and [`GroupKey`], GoogleSQL's
//! grouping equality for GROUP BY, DISTINCT, hash joins and set operations.
//!
//! The query engine binds an aggregate call's arguments itself (in the
//! scope of the rows being aggregated), asks [`aggregate_signature`] for the
//! result type, creates one [`Accumulator`] per group with [`accumulator`],
//! feeds it each row's argument values with [`Accumulator::update`] and
//! reads the result with [`Accumulator::finish`].
//!
//! NULL handling follows GoogleSQL: every aggregate except `COUNT(*)` and
//! `ARRAY_AGG` skips NULL arguments; an aggregate over no (non-NULL) rows is
//! NULL, except `COUNT`/`COUNTIF`, which are 0. `ARRAY_AGG` keeps NULL
//! elements (Spanner arrays may hold NULLs; the "Array cannot have a null
//! element" error is BigQuery's) unless `IGNORE NULLS` is given.

use std::cmp::Ordering;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};

use rowtree_types::{Numeric, Type, Value};

use crate::compare::compare;
use crate::{Error, Result};

/// Every aggregate function name (upper case).
pub(crate) const AGGREGATE_FUNCTIONS: &[&str] = &[
    "COUNT",
    "COUNTIF",
    "SUM",
    "AVG",
    "MIN",
    "MAX",
    "ANY_VALUE",
    "ARRAY_AGG",
    "ARRAY_CONCAT_AGG",
    "STRING_AGG",
    "LOGICAL_AND",
    "LOGICAL_OR",
    "BIT_AND",
    "BIT_OR",
    "BIT_XOR",
];

/// The modifiers written inside an aggregate call, with constant parts
/// evaluated: `ARRAY_AGG(x IGNORE NULLS ORDER BY y DESC NULLS LAST LIMIT 3)`
/// is `{ ignore_nulls: true, order_by: [(true, Some(false))], limit:
/// Some(3) }`.
///
/// With `order_by` non-empty, [`Accumulator::update`] receives the ORDER BY
/// key values **appended after the function's arguments**, one per item of
/// `order_by`, in order: `update(&[x, y])` for the example above.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AggregateModifiers {
    /// `IGNORE NULLS`: rows whose first argument is NULL are skipped.
    pub ignore_nulls: bool,
    /// `(descending, nulls_first)` per ORDER BY key; `nulls_first: None`
    /// is the default (NULLs first ascending, last descending).
    pub order_by: Vec<(bool, Option<bool>)>,
    /// `LIMIT n`: at most `n` rows (after DISTINCT and ordering) are
    /// aggregated.
    pub limit: Option<usize>,
}

/// A running aggregate for one group.
pub trait Accumulator: Send {
    /// Adds one row: the function's argument values (none for `COUNT(*)`),
    /// followed by the ORDER BY keys if [`AggregateModifiers::order_by`]
    /// has any.
    fn update(&mut self, args: &[Value]) -> Result<()>;
    /// The aggregate over all rows added so far.
    fn finish(&mut self) -> Result<Value>;
}

fn no_signature(name: &str, arg_types: &[Type], supported: &str) -> Error {
    let args: Vec<String> = arg_types.iter().map(Type::to_string).collect();
    Error::invalid(format!(
        "No matching signature for aggregate function {name} for argument types: {}. Supported signature{}: {supported}",
        args.join(", "),
        if supported.contains(';') { "s" } else { "" }
    ))
}

/// The result type of aggregate `name` (any case) over arguments of
/// `arg_types` (empty for `COUNT(*)`), or the GoogleSQL error:
///
/// | function | arguments | result |
/// |---|---|---|
/// | `COUNT` | `*` or any | INT64 |
/// | `COUNTIF` | BOOL | INT64 |
/// | `SUM` | INT64 / NUMERIC / FLOAT64 (FLOAT32) | same (FLOAT64) |
/// | `AVG` | INT64, FLOAT64 (FLOAT32) / NUMERIC | FLOAT64 / NUMERIC |
/// | `MIN`, `MAX` | any orderable type | same |
/// | `ANY_VALUE` | any | same |
/// | `ARRAY_AGG` | any non-array T | `ARRAY<T>` |
/// | `ARRAY_CONCAT_AGG` | `ARRAY<T>` | `ARRAY<T>` |
/// | `STRING_AGG` | STRING [, STRING] / BYTES [, BYTES] | same |
/// | `LOGICAL_AND`, `LOGICAL_OR` | BOOL | BOOL |
/// | `BIT_AND`, `BIT_OR`, `BIT_XOR` | INT64 | INT64 |
///
/// `distinct` refuses argument types without grouping equality (JSON).
pub fn aggregate_signature(name: &str, arg_types: &[Type], distinct: bool) -> Result<Type> {
    let upper = name.to_ascii_uppercase();
    let name = upper.as_str();
    if distinct {
        if let Some(t) = arg_types.iter().find(|t| !groupable(t)) {
            return Err(Error::invalid(format!(
                "Aggregate functions with DISTINCT cannot be used with arguments of type {t}"
            )));
        }
        if arg_types.is_empty() {
            return Err(Error::invalid(format!("{name}(DISTINCT *) is not allowed")));
        }
    }
    let one = |supported: &str| -> Result<&Type> {
        match arg_types {
            [t] => Ok(t),
            _ => Err(no_signature(name, arg_types, supported)),
        }
    };
    Ok(match name {
        "COUNT" => match arg_types {
            [] | [_] => Type::Int64,
            _ => return Err(no_signature(name, arg_types, "COUNT(*); COUNT(ANY)")),
        },
        "COUNTIF" => match one("COUNTIF(BOOL)")? {
            Type::Bool => Type::Int64,
            _ => return Err(no_signature(name, arg_types, "COUNTIF(BOOL)")),
        },
        "SUM" => {
            let supported = "SUM(INT64); SUM(NUMERIC); SUM(FLOAT64)";
            match one(supported)? {
                Type::Int64 => Type::Int64,
                Type::Numeric => Type::Numeric,
                Type::Float64 | Type::Float32 => Type::Float64,
                _ => return Err(no_signature(name, arg_types, supported)),
            }
        }
        "AVG" => {
            let supported = "AVG(INT64); AVG(NUMERIC); AVG(FLOAT64)";
            match one(supported)? {
                Type::Int64 | Type::Float64 | Type::Float32 => Type::Float64,
                Type::Numeric => Type::Numeric,
                _ => return Err(no_signature(name, arg_types, supported)),
            }
        }
        "MIN" | "MAX" => {
            let t = one(&format!("{name}(ANY)"))?;
            if !t.is_orderable() {
                return Err(Error::invalid(format!(
                    "{name} is not defined for arguments of type {t}"
                )));
            }
            t.clone()
        }
        "ANY_VALUE" => one("ANY_VALUE(ANY)")?.clone(),
        "ARRAY_AGG" => match one("ARRAY_AGG(ANY)")? {
            Type::Array(_) => {
                return Err(Error::invalid(
                    "ARRAY_AGG does not support ARRAY arguments; use ARRAY_CONCAT_AGG",
                ))
            }
            t => Type::Array(Box::new(t.clone())),
        },
        "ARRAY_CONCAT_AGG" => match one("ARRAY_CONCAT_AGG(ARRAY)")? {
            t @ Type::Array(_) => t.clone(),
            _ => return Err(no_signature(name, arg_types, "ARRAY_CONCAT_AGG(ARRAY)")),
        },
        "STRING_AGG" => {
            let supported = "STRING_AGG(STRING); STRING_AGG(STRING, STRING); STRING_AGG(BYTES); STRING_AGG(BYTES, BYTES)";
            match arg_types {
                [Type::String] | [Type::String, Type::String] => Type::String,
                [Type::Bytes] | [Type::Bytes, Type::Bytes] => Type::Bytes,
                _ => return Err(no_signature(name, arg_types, supported)),
            }
        }
        "LOGICAL_AND" | "LOGICAL_OR" => match one(&format!("{name}(BOOL)"))? {
            Type::Bool => Type::Bool,
            _ => return Err(no_signature(name, arg_types, &format!("{name}(BOOL)"))),
        },
        "BIT_AND" | "BIT_OR" | "BIT_XOR" => match one(&format!("{name}(INT64)"))? {
            Type::Int64 => Type::Int64,
            _ => return Err(no_signature(name, arg_types, &format!("{name}(INT64)"))),
        },
        _ => return Err(Error::invalid(format!("Function not found: {name}"))),
    })
}

fn groupable(t: &Type) -> bool {
    match t {
        Type::Json => false,
        Type::Array(e) => groupable(e),
        Type::Struct(fields) => fields.iter().all(|(_, t)| groupable(t)),
        _ => true,
    }
}

/// A new accumulator for aggregate `name` over arguments of `arg_types`
/// (checked with [`aggregate_signature`]). `distinct` dedups rows by the
/// function arguments with [`GroupKey`] equality before they are
/// aggregated; `modifiers` adds IGNORE NULLS, ORDER BY and LIMIT (see
/// [`AggregateModifiers`] for how ORDER BY keys are passed).
pub fn accumulator(
    name: &str,
    arg_types: &[Type],
    distinct: bool,
    modifiers: Option<&AggregateModifiers>,
) -> Result<Box<dyn Accumulator>> {
    let result = aggregate_signature(name, arg_types, distinct)?;
    let upper = name.to_ascii_uppercase();
    let arg = arg_types.first().cloned().unwrap_or(Type::Int64);
    let inner: Box<dyn Accumulator> = match upper.as_str() {
        "COUNT" => Box::new(Count {
            star: arg_types.is_empty(),
            n: 0,
        }),
        "COUNTIF" => Box::new(CountIf(0)),
        "SUM" => match result {
            Type::Int64 => Box::new(SumInt(None)),
            Type::Numeric => Box::new(SumNumeric(None)),
            _ => Box::new(SumFloat(None)),
        },
        "AVG" => match arg {
            Type::Int64 => Box::new(AvgInt { sum: 0, n: 0 }),
            Type::Numeric => Box::new(AvgNumeric {
                whole: 0,
                frac: 0,
                n: 0,
            }),
            _ => Box::new(AvgFloat { sum: 0.0, n: 0 }),
        },
        "MIN" | "MAX" => Box::new(MinMax {
            max: upper == "MAX",
            best: None,
            nan: false,
        }),
        "ANY_VALUE" => Box::new(AnyValue(None)),
        "ARRAY_AGG" => Box::new(ArrayAgg(None)),
        "ARRAY_CONCAT_AGG" => Box::new(ArrayConcatAgg(None)),
        "STRING_AGG" => Box::new(StringAgg {
            bytes: arg == Type::Bytes,
            out: None,
        }),
        "LOGICAL_AND" => Box::new(Logical {
            and: true,
            value: None,
        }),
        "LOGICAL_OR" => Box::new(Logical {
            and: false,
            value: None,
        }),
        "BIT_AND" | "BIT_OR" | "BIT_XOR" => Box::new(Bit {
            op: upper.as_bytes()[4],
            value: None,
        }),
        _ => return Err(Error::invalid(format!("Function not found: {upper}"))),
    };
    let default = AggregateModifiers::default();
    let modifiers = modifiers.unwrap_or(&default);
    if !distinct && *modifiers == default {
        return Ok(inner);
    }
    Ok(Box::new(Modified {
        n_args: arg_types.len(),
        ignore_nulls: modifiers.ignore_nulls,
        seen: distinct.then(HashSet::new),
        order_by: modifiers.order_by.clone(),
        limit: modifiers.limit,
        buffer: Vec::new(),
        fed: 0,
        inner,
    }))
}

/// IGNORE NULLS, DISTINCT, ORDER BY and LIMIT around an accumulator.
struct Modified {
    n_args: usize,
    ignore_nulls: bool,
    seen: Option<HashSet<GroupKey>>,
    order_by: Vec<(bool, Option<bool>)>,
    limit: Option<usize>,
    /// Rows held back for ORDER BY: (arguments, keys).
    buffer: Vec<(Vec<Value>, Vec<Value>)>,
    fed: usize,
    inner: Box<dyn Accumulator>,
}

impl Accumulator for Modified {
    fn update(&mut self, args: &[Value]) -> Result<()> {
        let n = self.n_args.min(args.len());
        let (values, keys) = args.split_at(n);
        if self.ignore_nulls && values.first().is_some_and(Value::is_null) {
            return Ok(());
        }
        if let Some(seen) = &mut self.seen {
            if !seen.insert(GroupKey(Value::Struct(values.to_vec()))) {
                return Ok(());
            }
        }
        if !self.order_by.is_empty() {
            self.buffer.push((values.to_vec(), keys.to_vec()));
            return Ok(());
        }
        if self.limit.is_some_and(|l| self.fed >= l) {
            return Ok(());
        }
        self.fed += 1;
        self.inner.update(values)
    }

    fn finish(&mut self) -> Result<Value> {
        if !self.order_by.is_empty() {
            let order_by = self.order_by.clone();
            let mut rows = std::mem::take(&mut self.buffer);
            rows.sort_by(|(_, a), (_, b)| order_keys(&order_by, a, b));
            let take = self.limit.unwrap_or(usize::MAX);
            for (values, _) in rows.into_iter().take(take) {
                self.inner.update(&values)?;
            }
        }
        self.inner.finish()
    }
}

/// Compares ORDER BY keys: NULLs first ascending and last descending
/// unless `nulls_first` says otherwise.
fn order_keys(order_by: &[(bool, Option<bool>)], a: &[Value], b: &[Value]) -> Ordering {
    for (i, (desc, nulls_first)) in order_by.iter().enumerate() {
        let (x, y) = (
            a.get(i).unwrap_or(&Value::Null),
            b.get(i).unwrap_or(&Value::Null),
        );
        let nulls_first = nulls_first.unwrap_or(!desc);
        let o = match (x.is_null(), y.is_null()) {
            (true, true) => Ordering::Equal,
            (true, false) => {
                if nulls_first {
                    Ordering::Less
                } else {
                    Ordering::Greater
                }
            }
            (false, true) => {
                if nulls_first {
                    Ordering::Greater
                } else {
                    Ordering::Less
                }
            }
            (false, false) => {
                let o = compare(x, y).unwrap_or(Ordering::Equal);
                if *desc {
                    o.reverse()
                } else {
                    o
                }
            }
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

fn internal(name: &str) -> Error {
    Error::invalid(format!(
        "internal error: {name} received a value of an unexpected type"
    ))
}

fn first(args: &[Value]) -> &Value {
    args.first().unwrap_or(&Value::Null)
}

struct Count {
    star: bool,
    n: i64,
}

impl Accumulator for Count {
    fn update(&mut self, args: &[Value]) -> Result<()> {
        if self.star || !first(args).is_null() {
            self.n += 1;
        }
        Ok(())
    }
    fn finish(&mut self) -> Result<Value> {
        Ok(Value::Int64(self.n))
    }
}

struct CountIf(i64);

impl Accumulator for CountIf {
    fn update(&mut self, args: &[Value]) -> Result<()> {
        if matches!(first(args), Value::Bool(true)) {
            self.0 += 1;
        }
        Ok(())
    }
    fn finish(&mut self) -> Result<Value> {
        Ok(Value::Int64(self.0))
    }
}

struct SumInt(Option<i64>);

impl Accumulator for SumInt {
    fn update(&mut self, args: &[Value]) -> Result<()> {
        match first(args) {
            Value::Null => Ok(()),
            Value::Int64(v) => {
                let sum = self.0.unwrap_or(0);
                self.0 =
                    Some(sum.checked_add(*v).ok_or_else(|| {
                        Error::out_of_range(format!("int64 overflow: {sum} + {v}"))
                    })?);
                Ok(())
            }
            _ => Err(internal("SUM")),
        }
    }
    fn finish(&mut self) -> Result<Value> {
        Ok(self.0.map_or(Value::Null, Value::Int64))
    }
}

fn as_f64(v: &Value) -> Option<f64> {
    match v {
        Value::Float64(f) => Some(*f),
        Value::Float32(f) => Some(*f as f64),
        Value::Int64(i) => Some(*i as f64),
        Value::Numeric(n) => Some(n.to_f64()),
        _ => None,
    }
}

struct SumFloat(Option<f64>);

impl Accumulator for SumFloat {
    fn update(&mut self, args: &[Value]) -> Result<()> {
        let v = first(args);
        if v.is_null() {
            return Ok(());
        }
        let f = as_f64(v).ok_or_else(|| internal("SUM"))?;
        let sum = self.0.unwrap_or(0.0);
        let next = sum + f;
        if next.is_infinite() && sum.is_finite() && f.is_finite() {
            return Err(Error::out_of_range(format!(
                "double overflow: {} + {}",
                rowtree_types::format_f64(sum),
                rowtree_types::format_f64(f)
            )));
        }
        self.0 = Some(next);
        Ok(())
    }
    fn finish(&mut self) -> Result<Value> {
        Ok(self.0.map_or(Value::Null, Value::Float64))
    }
}

struct SumNumeric(Option<Numeric>);

impl Accumulator for SumNumeric {
    fn update(&mut self, args: &[Value]) -> Result<()> {
        match first(args) {
            Value::Null => Ok(()),
            Value::Numeric(n) => {
                self.0 = Some(self.0.unwrap_or(Numeric::ZERO).checked_add(*n)?);
                Ok(())
            }
            _ => Err(internal("SUM")),
        }
    }
    fn finish(&mut self) -> Result<Value> {
        Ok(self.0.map_or(Value::Null, Value::Numeric))
    }
}

struct AvgInt {
    sum: i128,
    n: i64,
}

impl Accumulator for AvgInt {
    fn update(&mut self, args: &[Value]) -> Result<()> {
        match first(args) {
            Value::Null => Ok(()),
            Value::Int64(v) => {
                self.sum += *v as i128;
                self.n += 1;
                Ok(())
            }
            _ => Err(internal("AVG")),
        }
    }
    fn finish(&mut self) -> Result<Value> {
        Ok(if self.n == 0 {
            Value::Null
        } else {
            Value::Float64(self.sum as f64 / self.n as f64)
        })
    }
}

struct AvgFloat {
    sum: f64,
    n: i64,
}

impl Accumulator for AvgFloat {
    fn update(&mut self, args: &[Value]) -> Result<()> {
        let v = first(args);
        if v.is_null() {
            return Ok(());
        }
        self.sum += as_f64(v).ok_or_else(|| internal("AVG"))?;
        self.n += 1;
        Ok(())
    }
    fn finish(&mut self) -> Result<Value> {
        Ok(if self.n == 0 {
            Value::Null
        } else {
            Value::Float64(self.sum / self.n as f64)
        })
    }
}

/// Sums whole units and nanoseconds-fractions separately (each fits an
/// `i128` for any realistic row count, though the sum may leave NUMERIC's
/// range), then divides exactly, rounding half away from zero.
struct AvgNumeric {
    whole: i128,
    frac: i128,
    n: i64,
}

impl Accumulator for AvgNumeric {
    fn update(&mut self, args: &[Value]) -> Result<()> {
        match first(args) {
            Value::Null => Ok(()),
            Value::Numeric(v) => {
                let overflow = || Error::out_of_range("numeric overflow in AVG");
                let scaled = v.scaled();
                self.whole = self
                    .whole
                    .checked_add(scaled / Numeric::ONE)
                    .ok_or_else(overflow)?;
                self.frac = self
                    .frac
                    .checked_add(scaled % Numeric::ONE)
                    .ok_or_else(overflow)?;
                self.n += 1;
                Ok(())
            }
            _ => Err(internal("AVG")),
        }
    }
    fn finish(&mut self) -> Result<Value> {
        if self.n == 0 {
            return Ok(Value::Null);
        }
        let overflow = || Error::out_of_range("numeric overflow in AVG");
        let n = self.n as i128;
        // total = whole * 1e9 + frac = (whole / n) * n * 1e9 + rest.
        let rest = (self.whole % n) * Numeric::ONE + self.frac;
        let (q, r) = (rest / n, rest % n);
        let rounded = if r.abs() * 2 >= n {
            q + rest.signum()
        } else {
            q
        };
        (self.whole / n)
            .checked_mul(Numeric::ONE)
            .and_then(|w| w.checked_add(rounded))
            .and_then(Numeric::from_scaled)
            .map(Value::Numeric)
            .ok_or_else(overflow)
    }
}

/// MIN / MAX: NULLs skipped; any NaN makes the result NaN.
struct MinMax {
    max: bool,
    best: Option<Value>,
    nan: bool,
}

impl Accumulator for MinMax {
    fn update(&mut self, args: &[Value]) -> Result<()> {
        let v = first(args);
        match v {
            Value::Null => return Ok(()),
            Value::Float64(f) if f.is_nan() => self.nan = true,
            Value::Float32(f) if f.is_nan() => self.nan = true,
            _ => {}
        }
        let better = match &self.best {
            None => true,
            Some(b) => {
                let o = compare(v, b).ok_or_else(|| internal("MIN/MAX"))?;
                if self.max {
                    o == Ordering::Greater
                } else {
                    o == Ordering::Less
                }
            }
        };
        if better {
            self.best = Some(v.clone());
        }
        Ok(())
    }
    fn finish(&mut self) -> Result<Value> {
        if self.nan {
            return Ok(match &self.best {
                Some(Value::Float32(_)) => Value::Float32(f32::NAN),
                _ => Value::Float64(f64::NAN),
            });
        }
        Ok(self.best.clone().unwrap_or(Value::Null))
    }
}

struct AnyValue(Option<Value>);

impl Accumulator for AnyValue {
    fn update(&mut self, args: &[Value]) -> Result<()> {
        if self.0.is_none() && !first(args).is_null() {
            self.0 = Some(first(args).clone());
        }
        Ok(())
    }
    fn finish(&mut self) -> Result<Value> {
        Ok(self.0.clone().unwrap_or(Value::Null))
    }
}

struct ArrayAgg(Option<Vec<Value>>);

impl Accumulator for ArrayAgg {
    fn update(&mut self, args: &[Value]) -> Result<()> {
        self.0
            .get_or_insert_with(Vec::new)
            .push(first(args).clone());
        Ok(())
    }
    fn finish(&mut self) -> Result<Value> {
        Ok(self.0.clone().map_or(Value::Null, Value::Array))
    }
}

struct ArrayConcatAgg(Option<Vec<Value>>);

impl Accumulator for ArrayConcatAgg {
    fn update(&mut self, args: &[Value]) -> Result<()> {
        match first(args) {
            Value::Null => Ok(()),
            Value::Array(items) => {
                self.0
                    .get_or_insert_with(Vec::new)
                    .extend(items.iter().cloned());
                Ok(())
            }
            _ => Err(internal("ARRAY_CONCAT_AGG")),
        }
    }
    fn finish(&mut self) -> Result<Value> {
        Ok(self.0.clone().map_or(Value::Null, Value::Array))
    }
}

/// STRING_AGG: NULL values skipped; the delimiter (default `,`) is read
/// from each row's second argument.
struct StringAgg {
    bytes: bool,
    out: Option<Vec<u8>>,
}

impl Accumulator for StringAgg {
    fn update(&mut self, args: &[Value]) -> Result<()> {
        let piece: &[u8] = match first(args) {
            Value::Null => return Ok(()),
            Value::String(s) => s.as_bytes(),
            Value::Bytes(b) => b,
            _ => return Err(internal("STRING_AGG")),
        };
        let delimiter: &[u8] = match args.get(1) {
            None => b",",
            Some(Value::String(s)) => s.as_bytes(),
            Some(Value::Bytes(b)) => b,
            Some(Value::Null) => b"",
            Some(_) => return Err(internal("STRING_AGG")),
        };
        match &mut self.out {
            None => self.out = Some(piece.to_vec()),
            Some(out) => {
                out.extend_from_slice(delimiter);
                out.extend_from_slice(piece);
            }
        }
        Ok(())
    }
    fn finish(&mut self) -> Result<Value> {
        Ok(match self.out.clone() {
            None => Value::Null,
            Some(b) if self.bytes => Value::Bytes(b),
            Some(b) => Value::String(String::from_utf8(b).map_err(|_| internal("STRING_AGG"))?),
        })
    }
}

struct Logical {
    and: bool,
    value: Option<bool>,
}

impl Accumulator for Logical {
    fn update(&mut self, args: &[Value]) -> Result<()> {
        match first(args) {
            Value::Null => Ok(()),
            Value::Bool(b) => {
                self.value = Some(match self.value {
                    None => *b,
                    Some(v) if self.and => v && *b,
                    Some(v) => v || *b,
                });
                Ok(())
            }
            _ => Err(internal("LOGICAL_AND/OR")),
        }
    }
    fn finish(&mut self) -> Result<Value> {
        Ok(self.value.map_or(Value::Null, Value::Bool))
    }
}

/// BIT_AND (`op` b'A'), BIT_OR (b'O'), BIT_XOR (b'X').
struct Bit {
    op: u8,
    value: Option<i64>,
}

impl Accumulator for Bit {
    fn update(&mut self, args: &[Value]) -> Result<()> {
        match first(args) {
            Value::Null => Ok(()),
            Value::Int64(v) => {
                self.value = Some(match (self.value, self.op) {
                    (None, _) => *v,
                    (Some(x), b'A') => x & v,
                    (Some(x), b'O') => x | v,
                    (Some(x), _) => x ^ v,
                });
                Ok(())
            }
            _ => Err(internal("BIT_AND/OR/XOR")),
        }
    }
    fn finish(&mut self) -> Result<Value> {
        Ok(self.value.map_or(Value::Null, Value::Int64))
    }
}

/// A value with GoogleSQL's grouping equality, for hash maps and sets:
/// NULL equals NULL, NaN equals NaN, `-0.0` equals `0.0`; arrays and
/// structs compare element-wise with the same rules. Values of different
/// types are never equal (coerce keys to one type first, as the binder
/// does for `=`); JSON compares structurally. A multi-column key is a
/// [`Value::Struct`] of the columns ([`GroupKey::from_values`]).
#[derive(Debug, Clone)]
pub struct GroupKey(pub Value);

impl GroupKey {
    /// A key of several columns.
    pub fn from_values(values: Vec<Value>) -> GroupKey {
        GroupKey(Value::Struct(values))
    }
}

/// Whether `a` and `b` fall in the same group (see [`GroupKey`]).
pub fn group_key_eq(a: &Value, b: &Value) -> bool {
    use Value::*;
    match (a, b) {
        (Null, Null) => true,
        (Float64(x), Float64(y)) => (x.is_nan() && y.is_nan()) || x == y,
        (Float32(x), Float32(y)) => (x.is_nan() && y.is_nan()) || x == y,
        (Array(x), Array(y)) | (Struct(x), Struct(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| group_key_eq(p, q))
        }
        _ => a == b,
    }
}

impl PartialEq for GroupKey {
    fn eq(&self, other: &GroupKey) -> bool {
        group_key_eq(&self.0, &other.0)
    }
}

impl Eq for GroupKey {}

impl Hash for GroupKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        hash_value(&self.0, state);
    }
}

fn hash_value<H: Hasher>(v: &Value, state: &mut H) {
    std::mem::discriminant(v).hash(state);
    match v {
        Value::Null | Value::Json(_) => {}
        Value::Bool(b) => b.hash(state),
        Value::Int64(i) => i.hash(state),
        Value::Float64(f) => {
            let canonical = if f.is_nan() {
                f64::NAN.to_bits()
            } else if *f == 0.0 {
                0
            } else {
                f.to_bits()
            };
            canonical.hash(state)
        }
        Value::Float32(f) => {
            let canonical = if f.is_nan() {
                f32::NAN.to_bits()
            } else if *f == 0.0 {
                0
            } else {
                f.to_bits()
            };
            canonical.hash(state)
        }
        Value::Numeric(n) => n.scaled().hash(state),
        Value::String(s) => s.hash(state),
        Value::Bytes(b) => b.hash(state),
        Value::Date(d) => d.hash(state),
        Value::Timestamp(t) => t.hash(state),
        Value::Uuid(u) => u.hash(state),
        Value::Array(items) | Value::Struct(items) => {
            items.len().hash(state);
            for item in items {
                hash_value(item, state);
            }
        }
    }
}
