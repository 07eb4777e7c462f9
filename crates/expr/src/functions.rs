//! The function registry: every scalar function is one [`Function`] entry.
//!
//! An entry lists its signatures (argument types and result type) and a
//! plain evaluation function over already-evaluated arguments. The binder
//! picks the first signature the arguments fit, preferring exact matches
//! over implicit coercions (so `ABS(1)` is `INT64` and `MOD(1, 1.5)` is
//! `NUMERIC`), and inserts the coercions. Every registered function returns
//! NULL when any argument is NULL without being called; functions that treat
//! NULL specially or must not evaluate all arguments (`IF`, `COALESCE`,
//! `IFNULL`, `NULLIF`) are special forms in the binder instead.
//!
//! To add a function: write `fn eval_x(args: &[Value], ctx: &mut dyn
//! EvalContext) -> Result<Value>` and add an entry to [`FUNCTIONS`].

use rowtree_types::{TimeZone, Timestamp, Type, Value};

use crate::{Error, EvalContext, Result};

/// How a function's result depends on things other than its arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Volatility {
    /// A pure function of the arguments.
    Deterministic,
    /// Reads the clock, randomness or a sequence.
    Volatile,
    /// `PENDING_COMMIT_TIMESTAMP()`: a placeholder replaced at commit.
    PendingCommitTimestamp,
}

/// The scalar types signatures mention. A `Copy` mirror of [`Type`]'s
/// scalar variants, so the registry can be a `static` table (a `Type` may
/// own heap data and so cannot be built in a constant slice).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scalar {
    Bool,
    Int64,
    Float64,
    Numeric,
    String,
    Bytes,
    Date,
    Timestamp,
    Json,
    ArrayInt64,
    ArrayString,
    ArrayBytes,
    ArrayJson,
    ArrayDate,
}

impl Scalar {
    pub(crate) fn ty(self) -> Type {
        match self {
            Scalar::Bool => Type::Bool,
            Scalar::Int64 => Type::Int64,
            Scalar::Float64 => Type::Float64,
            Scalar::Numeric => Type::Numeric,
            Scalar::String => Type::String,
            Scalar::Bytes => Type::Bytes,
            Scalar::Date => Type::Date,
            Scalar::Timestamp => Type::Timestamp,
            Scalar::Json => Type::Json,
            Scalar::ArrayInt64 => Type::Array(Box::new(Type::Int64)),
            Scalar::ArrayString => Type::Array(Box::new(Type::String)),
            Scalar::ArrayBytes => Type::Array(Box::new(Type::Bytes)),
            Scalar::ArrayJson => Type::Array(Box::new(Type::Json)),
            Scalar::ArrayDate => Type::Array(Box::new(Type::Date)),
        }
    }
}

/// One parameter of a signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Param {
    /// A value of this type (or one that coerces to it).
    Value(Scalar),
    /// `SEQUENCE name`.
    Sequence,
}

/// One overload of a function.
#[derive(Debug)]
pub(crate) struct Signature {
    pub params: &'static [Param],
    /// The last parameter may repeat any number of extra times.
    pub variadic: bool,
    pub result: Scalar,
}

/// A scalar function.
pub(crate) struct Function {
    /// Upper-case name, as printed in error messages.
    pub name: &'static str,
    pub signatures: &'static [Signature],
    pub volatility: Volatility,
    /// Whether the function changes sequence state (allowed only where
    /// [`crate::BindOptions::allow_sequence_functions`] says so).
    pub advances_sequence: bool,
    pub eval: fn(&[Value], &mut dyn EvalContext) -> Result<Value>,
    /// For functions generic over their argument types (`GREATEST`,
    /// `ARRAY_LENGTH`): given the argument types (`None` for an untyped
    /// NULL), the types to coerce the arguments to and the result type;
    /// `None` if no signature fits. The string describes the signatures
    /// for error messages. `signatures` is then empty.
    pub generic: Option<(GenericCheck, &'static str)>,
    /// Whether `eval` is called with NULL arguments (else any NULL
    /// argument gives NULL without calling it).
    pub handles_null: bool,
}

/// See [`Function::generic`].
pub(crate) type GenericCheck = fn(&[Option<Type>]) -> Option<(Vec<Type>, Type)>;

impl std::fmt::Debug for Function {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl Function {
    /// `MOD(INT64, INT64); MOD(NUMERIC, NUMERIC)`, for error messages.
    pub(crate) fn describe_signatures(&self) -> String {
        if let Some((_, described)) = self.generic {
            return described.to_string();
        }
        let sigs: Vec<String> = self
            .signatures
            .iter()
            .map(|s| {
                let mut params: Vec<String> = s
                    .params
                    .iter()
                    .map(|p| match p {
                        Param::Value(t) => t.ty().to_string(),
                        Param::Sequence => "SEQUENCE".to_string(),
                    })
                    .collect();
                if s.variadic {
                    if let Some(last) = params.last_mut() {
                        last.push_str(", ...");
                    }
                }
                format!("{}({})", self.name, params.join(", "))
            })
            .collect();
        sigs.join("; ")
    }
}

/// Finds a function by name, case-insensitively.
pub(crate) fn lookup(name: &str) -> Option<&'static Function> {
    FUNCTIONS
        .iter()
        .chain(crate::library::LIBRARY.iter())
        .find(|f| f.name.eq_ignore_ascii_case(name))
}

pub(crate) const fn sig(params: &'static [Param], result: Scalar) -> Signature {
    Signature {
        params,
        variadic: false,
        result,
    }
}

pub(crate) const fn deterministic(
    name: &'static str,
    signatures: &'static [Signature],
    eval: fn(&[Value], &mut dyn EvalContext) -> Result<Value>,
) -> Function {
    Function {
        name,
        signatures,
        volatility: Volatility::Deterministic,
        advances_sequence: false,
        eval,
        generic: None,
        handles_null: false,
    }
}

use Param::Value as V;

/// `SUBSTR` and its alias `SUBSTRING`.
const SUBSTR_SIGNATURES: &[Signature] = &[
    sig(&[V(Scalar::String), V(Scalar::Int64)], Scalar::String),
    sig(
        &[V(Scalar::String), V(Scalar::Int64), V(Scalar::Int64)],
        Scalar::String,
    ),
    sig(&[V(Scalar::Bytes), V(Scalar::Int64)], Scalar::Bytes),
    sig(
        &[V(Scalar::Bytes), V(Scalar::Int64), V(Scalar::Int64)],
        Scalar::Bytes,
    ),
];

/// Every scalar function the binder knows.
pub(crate) static FUNCTIONS: &[Function] = &[
    Function {
        name: "GENERATE_UUID",
        signatures: &[sig(&[], Scalar::String)],
        volatility: Volatility::Volatile,
        advances_sequence: false,
        generic: None,
        handles_null: false,
        eval: |_, ctx| Ok(Value::String(ctx.generate_uuid())),
    },
    Function {
        name: "CURRENT_TIMESTAMP",
        signatures: &[sig(&[], Scalar::Timestamp)],
        volatility: Volatility::Volatile,
        advances_sequence: false,
        generic: None,
        handles_null: false,
        eval: |_, ctx| Ok(Value::Timestamp(ctx.now())),
    },
    Function {
        name: "PENDING_COMMIT_TIMESTAMP",
        signatures: &[sig(&[], Scalar::Timestamp)],
        volatility: Volatility::PendingCommitTimestamp,
        advances_sequence: false,
        generic: None,
        handles_null: false,
        eval: |_, ctx| ctx.pending_commit_timestamp(),
    },
    Function {
        name: "GET_NEXT_SEQUENCE_VALUE",
        signatures: &[sig(&[Param::Sequence], Scalar::Int64)],
        volatility: Volatility::Volatile,
        advances_sequence: true,
        generic: None,
        handles_null: false,
        eval: |args, ctx| Ok(Value::Int64(ctx.next_sequence_value(sequence_name(args)?)?)),
    },
    Function {
        name: "GET_INTERNAL_SEQUENCE_STATE",
        signatures: &[sig(&[Param::Sequence], Scalar::Int64)],
        // Reads state another statement may change: not a pure function.
        volatility: Volatility::Volatile,
        advances_sequence: false,
        generic: None,
        handles_null: false,
        eval: |args, ctx| {
            Ok(match ctx.sequence_state(sequence_name(args)?)? {
                Some(v) => Value::Int64(v),
                None => Value::Null,
            })
        },
    },
    deterministic(
        "FARM_FINGERPRINT",
        &[
            sig(&[V(Scalar::String)], Scalar::Int64),
            sig(&[V(Scalar::Bytes)], Scalar::Int64),
        ],
        |args, _| {
            Ok(Value::Int64(
                farmhash2::fingerprint64(bytes_of(&args[0])?) as i64
            ))
        },
    ),
    deterministic(
        "MOD",
        &[
            sig(&[V(Scalar::Int64), V(Scalar::Int64)], Scalar::Int64),
            sig(&[V(Scalar::Numeric), V(Scalar::Numeric)], Scalar::Numeric),
        ],
        eval_mod,
    ),
    deterministic(
        "ABS",
        &[
            sig(&[V(Scalar::Int64)], Scalar::Int64),
            sig(&[V(Scalar::Numeric)], Scalar::Numeric),
            sig(&[V(Scalar::Float64)], Scalar::Float64),
        ],
        eval_abs,
    ),
    deterministic(
        "BIT_REVERSE",
        &[sig(&[V(Scalar::Int64), V(Scalar::Bool)], Scalar::Int64)],
        |args, _| match (&args[0], &args[1]) {
            (Value::Int64(v), Value::Bool(preserve_sign)) => {
                Ok(Value::Int64(bit_reverse(*v, *preserve_sign)))
            }
            _ => Err(internal("BIT_REVERSE")),
        },
    ),
    deterministic(
        "CONCAT",
        &[
            Signature {
                params: &[V(Scalar::String)],
                variadic: true,
                result: Scalar::String,
            },
            Signature {
                params: &[V(Scalar::Bytes)],
                variadic: true,
                result: Scalar::Bytes,
            },
        ],
        eval_concat,
    ),
    deterministic(
        "LENGTH",
        &[
            sig(&[V(Scalar::String)], Scalar::Int64),
            sig(&[V(Scalar::Bytes)], Scalar::Int64),
        ],
        |args, _| match &args[0] {
            Value::String(s) => Ok(Value::Int64(s.chars().count() as i64)),
            Value::Bytes(b) => Ok(Value::Int64(b.len() as i64)),
            _ => Err(internal("LENGTH")),
        },
    ),
    deterministic(
        "UPPER",
        &[
            sig(&[V(Scalar::String)], Scalar::String),
            sig(&[V(Scalar::Bytes)], Scalar::Bytes),
        ],
        |args, _| match &args[0] {
            Value::String(s) => Ok(Value::String(s.to_uppercase())),
            Value::Bytes(b) => Ok(Value::Bytes(b.to_ascii_uppercase())),
            _ => Err(internal("UPPER")),
        },
    ),
    deterministic(
        "LOWER",
        &[
            sig(&[V(Scalar::String)], Scalar::String),
            sig(&[V(Scalar::Bytes)], Scalar::Bytes),
        ],
        |args, _| match &args[0] {
            Value::String(s) => Ok(Value::String(s.to_lowercase())),
            Value::Bytes(b) => Ok(Value::Bytes(b.to_ascii_lowercase())),
            _ => Err(internal("LOWER")),
        },
    ),
    deterministic("SUBSTR", SUBSTR_SIGNATURES, eval_substr),
    // GoogleSQL's alias of SUBSTR.
    deterministic("SUBSTRING", SUBSTR_SIGNATURES, eval_substr),
    deterministic(
        "STARTS_WITH",
        &[
            sig(&[V(Scalar::String), V(Scalar::String)], Scalar::Bool),
            sig(&[V(Scalar::Bytes), V(Scalar::Bytes)], Scalar::Bool),
        ],
        |args, _| {
            Ok(Value::Bool(
                bytes_of(&args[0])?.starts_with(bytes_of(&args[1])?),
            ))
        },
    ),
    deterministic(
        "ENDS_WITH",
        &[
            sig(&[V(Scalar::String), V(Scalar::String)], Scalar::Bool),
            sig(&[V(Scalar::Bytes), V(Scalar::Bytes)], Scalar::Bool),
        ],
        |args, _| {
            Ok(Value::Bool(
                bytes_of(&args[0])?.ends_with(bytes_of(&args[1])?),
            ))
        },
    ),
    deterministic(
        "DATE",
        &[
            sig(&[V(Scalar::Timestamp)], Scalar::Date),
            sig(&[V(Scalar::Timestamp), V(Scalar::String)], Scalar::Date),
            sig(
                &[V(Scalar::Int64), V(Scalar::Int64), V(Scalar::Int64)],
                Scalar::Date,
            ),
            sig(&[V(Scalar::Date)], Scalar::Date),
        ],
        |args, _| match args {
            [Value::Date(d)] => Ok(Value::Date(*d)),
            [Value::Int64(y), Value::Int64(m), Value::Int64(d)] => {
                let date = (|| {
                    rowtree_types::Date::from_ymd(
                        i32::try_from(*y).ok()?,
                        u32::try_from(*m).ok()?,
                        u32::try_from(*d).ok()?,
                    )
                })();
                date.map(Value::Date).ok_or_else(|| {
                    Error::out_of_range(format!("Invalid date: DATE({y}, {m}, {d})"))
                })
            }
            [Value::Timestamp(t)] => Ok(Value::Date(t.to_date(&TimeZone::LOS_ANGELES)?)),
            [Value::Timestamp(t), Value::String(zone)] => {
                Ok(Value::Date(t.to_date(&TimeZone::parse(zone)?)?))
            }
            _ => Err(internal("DATE")),
        },
    ),
    deterministic(
        "TIMESTAMP",
        &[
            sig(&[V(Scalar::Date)], Scalar::Timestamp),
            sig(&[V(Scalar::String)], Scalar::Timestamp),
            sig(&[V(Scalar::Date), V(Scalar::String)], Scalar::Timestamp),
            sig(&[V(Scalar::String), V(Scalar::String)], Scalar::Timestamp),
        ],
        eval_timestamp,
    ),
];

pub(crate) fn internal(name: &str) -> Error {
    Error::invalid(format!(
        "internal error: {name} called with unexpected argument types"
    ))
}

fn sequence_name(args: &[Value]) -> Result<&str> {
    match args.first() {
        Some(Value::String(name)) => Ok(name),
        _ => Err(internal("sequence function")),
    }
}

pub(crate) fn bytes_of(v: &Value) -> Result<&[u8]> {
    match v {
        Value::String(s) => Ok(s.as_bytes()),
        Value::Bytes(b) => Ok(b),
        _ => Err(internal("string function")),
    }
}

fn eval_mod(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    match (&args[0], &args[1]) {
        (Value::Int64(_), Value::Int64(0)) => Err(Error::out_of_range(format!(
            "division by zero: MOD({}, 0)",
            args[0]
        ))),
        // `i64::MIN % -1` is 0 mathematically; wrapping_rem gives exactly that.
        (Value::Int64(a), Value::Int64(b)) => Ok(Value::Int64(a.wrapping_rem(*b))),
        (Value::Numeric(a), Value::Numeric(b)) => Ok(Value::Numeric(a.checked_rem(*b)?)),
        _ => Err(internal("MOD")),
    }
}

fn eval_abs(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    match &args[0] {
        Value::Int64(v) => v
            .checked_abs()
            .map(Value::Int64)
            .ok_or_else(|| Error::out_of_range(format!("int64 overflow: ABS({v})"))),
        Value::Numeric(n) => Ok(Value::Numeric(n.abs())),
        Value::Float64(f) => Ok(Value::Float64(f.abs())),
        _ => Err(internal("ABS")),
    }
}

/// Reverses the bits of `v`. With `preserve_sign` the sign bit stays in
/// place and only the 63 value bits are reversed, so a non-negative input
/// gives a non-negative output (`BIT_REVERSE(100, true)` is
/// 1369094286720630784, what bit-reversed sequences rely on).
pub(crate) fn bit_reverse(v: i64, preserve_sign: bool) -> i64 {
    if preserve_sign {
        let sign = v & i64::MIN;
        let value_bits = (v as u64) & (i64::MAX as u64);
        sign | (value_bits.reverse_bits() >> 1) as i64
    } else {
        (v as u64).reverse_bits() as i64
    }
}

fn eval_concat(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let bytes = args
        .iter()
        .map(|a| match a {
            Value::String(s) => s.len(),
            Value::Bytes(b) => b.len(),
            _ => 0,
        })
        .sum();
    crate::check_output("CONCAT", bytes, 0)?;
    match args.first() {
        Some(Value::String(_)) => {
            let mut out = String::new();
            for a in args {
                if let Value::String(s) = a {
                    out.push_str(s);
                }
            }
            Ok(Value::String(out))
        }
        Some(Value::Bytes(_)) => {
            let mut out = Vec::new();
            for a in args {
                if let Value::Bytes(b) = a {
                    out.extend_from_slice(b);
                }
            }
            Ok(Value::Bytes(out))
        }
        _ => Err(internal("CONCAT")),
    }
}

/// GoogleSQL `SUBSTR(value, position[, length])`: positions count from 1;
/// a negative position counts from the end; 0 means 1; a position past
/// the end gives an empty result; a negative length is an error.
fn eval_substr(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let position = match &args[1] {
        Value::Int64(p) => *p,
        _ => return Err(internal("SUBSTR")),
    };
    let length = match args.get(2) {
        None => None,
        Some(Value::Int64(l)) if *l < 0 => {
            return Err(Error::out_of_range(
                "Third argument in SUBSTR() cannot be negative",
            ))
        }
        Some(Value::Int64(l)) => Some(*l as u64),
        Some(_) => return Err(internal("SUBSTR")),
    };
    let range = |len: usize| -> (usize, usize) {
        let len = len as i64;
        let start = if position > 0 {
            (position - 1).min(len)
        } else if position < 0 {
            (len + position).max(0)
        } else {
            0
        };
        let end = match length {
            Some(l) => (start as u64).saturating_add(l).min(len as u64) as i64,
            None => len,
        };
        (start as usize, end as usize)
    };
    match &args[0] {
        Value::String(s) => {
            let chars: Vec<char> = s.chars().collect();
            let (start, end) = range(chars.len());
            Ok(Value::String(chars[start..end].iter().collect()))
        }
        Value::Bytes(b) => {
            let (start, end) = range(b.len());
            Ok(Value::Bytes(b[start..end].to_vec()))
        }
        _ => Err(internal("SUBSTR")),
    }
}

fn eval_timestamp(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let zone = match args.get(1) {
        None => TimeZone::LOS_ANGELES,
        Some(Value::String(z)) => TimeZone::parse(z)?,
        Some(_) => return Err(internal("TIMESTAMP")),
    };
    match &args[0] {
        Value::Date(d) => Ok(Value::Timestamp(Timestamp::from_date(*d, &zone)?)),
        Value::String(s) => Ok(Value::Timestamp(Timestamp::parse(s, &zone)?)),
        _ => Err(internal("TIMESTAMP")),
    }
}
