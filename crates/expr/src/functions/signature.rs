//! What a registry entry is: a [`Function`] with its [`Signature`]s (or a
//! [`GenericCheck`] for functions generic over their argument types), its
//! [`Volatility`] and its evaluation function.
//!
//! Signatures are `static` data, so they are written with [`Scalar`], a
//! `Copy` mirror of [`Type`]'s scalar variants, and built with the `const`
//! helpers [`sig`], [`deterministic`], [`generic`] and [`null_aware`].
//! [`common_type`] is the one typing rule the generic checks share.

use rowtree_types::{Type, Value};

use crate::{EvalContext, Result};

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
    Uuid,
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
            Scalar::Uuid => Type::Uuid,
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
    pub eval: Eval,
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

/// How a function is evaluated: over already-evaluated arguments.
pub(crate) type Eval = fn(&[Value], &mut dyn EvalContext) -> Result<Value>;

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
    eval: Eval,
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

/// A deterministic function generic over its argument types (see
/// [`Function::generic`]); `described` is its signature for error messages.
pub(super) const fn generic(
    name: &'static str,
    described: &'static str,
    check: GenericCheck,
    eval: Eval,
) -> Function {
    Function {
        name,
        signatures: &[],
        volatility: Volatility::Deterministic,
        advances_sequence: false,
        eval,
        generic: Some((check, described)),
        handles_null: false,
    }
}

/// `f`, called with NULL arguments too (see [`Function::handles_null`]).
pub(super) const fn null_aware(f: Function) -> Function {
    Function {
        handles_null: true,
        ..f
    }
}

/// The common supertype of argument types (untyped NULLs fit anything).
pub(super) fn common_type(args: &[Option<Type>]) -> Option<Type> {
    let mut result: Option<Type> = None;
    for t in args.iter().flatten() {
        result = Some(match result {
            None => t.clone(),
            Some(r) if r == *t => r,
            Some(r) => match (&r, t) {
                (Type::Int64, Type::Numeric) | (Type::Numeric, Type::Int64) => Type::Numeric,
                (a, b) if is_number(a) && is_number(b) => Type::Float64,
                _ => return None,
            },
        });
    }
    Some(result.unwrap_or(Type::Int64))
}

pub(super) fn is_number(t: &Type) -> bool {
    matches!(
        t,
        Type::Int64 | Type::Numeric | Type::Float64 | Type::Float32
    )
}
