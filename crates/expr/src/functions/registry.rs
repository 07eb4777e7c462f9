//! The registry: every scalar function the binder knows, listed once, with
//! its signatures and where it is evaluated. The family modules beside this
//! one hold the evaluation functions; this table is the only place a name
//! is bound to them.
//!
//! Each line is one function: `f!(NAME, [signatures], eval)` for a
//! deterministic function with a signature list, [`generic`] for one whose
//! argument types are checked by a function, and a [`Function`] literal for
//! the few that read the [`EvalContext`](crate::EvalContext) (volatile).
//! Names are unique, so the order only groups the families for the reader.

use rowtree_types::Type;

use super::signature::{
    deterministic, generic, null_aware, sig, Function, Param, Scalar, Signature, Volatility,
};
use super::{
    array, context, datetime, encoding, format, hash, json, math, regexp, string, time_format,
};

use Param::Value as V;
use Scalar::{
    ArrayBytes as AB, ArrayDate as AD, ArrayInt64 as AI, ArrayJson as AJ, ArrayString as AS,
    Bool as BO, Bytes as B, Date as D, Float64 as F, Int64 as I, Json as J, Numeric as N,
    String as S, Timestamp as TS, Uuid as U,
};

/// Finds a function by name, case-insensitively.
pub(crate) fn lookup(name: &str) -> Option<&'static Function> {
    FUNCTIONS.iter().find(|f| f.name.eq_ignore_ascii_case(name))
}

/// The JSON subscript and field access operators (`json['a']`, `json[0]`,
/// `json.a`), bound by the binder rather than looked up by name: the
/// member of an object by name, or the element of an array by position
/// from 0; SQL NULL when there is no such member or element.
pub(crate) static JSON_SUBSCRIPT: Function = deterministic(
    "JSON subscript",
    &[sig(&[V(J), V(S)], J), sig(&[V(J), V(I)], J)],
    json::eval_json_subscript,
);

/// A cast to NUMERIC that refuses to round, bound by the binder in place of
/// `CAST(x AS NUMERIC)` from STRING or FLOAT64 when
/// [`crate::BindOptions::exact_numeric`] is set (the PostgreSQL dialect).
pub(crate) static EXACT_NUMERIC_CAST: Function = deterministic(
    "CAST",
    &[sig(&[V(S)], N), sig(&[V(F)], N)],
    crate::cast::eval_exact_numeric,
);

/// `SUBSTR` and its alias `SUBSTRING`.
const SUBSTR_SIGNATURES: &[Signature] = &[
    sig(&[V(S), V(I)], S),
    sig(&[V(S), V(I), V(I)], S),
    sig(&[V(B), V(I)], B),
    sig(&[V(B), V(I), V(I)], B),
];

/// `CONCAT(STRING, ...)` and `CONCAT(BYTES, ...)`.
const CONCAT_SIGNATURES: &[Signature] = &[
    Signature {
        params: &[V(S)],
        variadic: true,
        result: S,
    },
    Signature {
        params: &[V(B)],
        variadic: true,
        result: B,
    },
];

/// A function that reads the statement's context instead of (only) its
/// arguments.
const fn volatile(
    name: &'static str,
    signatures: &'static [Signature],
    eval: super::signature::Eval,
) -> Function {
    Function {
        volatility: Volatility::Volatile,
        ..deterministic(name, signatures, eval)
    }
}

macro_rules! f {
    ($name:expr, [$($sig:expr),* $(,)?], $eval:expr) => {
        deterministic($name, &[$($sig),*], $eval)
    };
}

/// Every scalar function the binder looks up by name.
// One function per line, so the table reads as a list (rustfmt would
// spread each entry over many lines).
#[rustfmt::skip]
pub(crate) static FUNCTIONS: &[Function] = &[
    // the statement's context: clock, UUIDs, sequences, commit timestamp
    volatile("GENERATE_UUID", &[sig(&[], S)], context::eval_generate_uuid),
    volatile("NEW_UUID", &[sig(&[], U)], context::eval_new_uuid),
    volatile("CURRENT_TIMESTAMP", &[sig(&[], TS)], context::eval_current_timestamp),
    Function {
        volatility: Volatility::PendingCommitTimestamp,
        ..deterministic("PENDING_COMMIT_TIMESTAMP", &[sig(&[], TS)], context::eval_pending_commit_timestamp)
    },
    Function {
        advances_sequence: true,
        ..volatile("GET_NEXT_SEQUENCE_VALUE", &[sig(&[Param::Sequence], I)], context::eval_get_next_sequence_value)
    },
    // Reads state another statement may change: not a pure function.
    volatile("GET_INTERNAL_SEQUENCE_STATE", &[sig(&[Param::Sequence], I)], context::eval_get_internal_sequence_state),
    // strings
    deterministic("CONCAT", CONCAT_SIGNATURES, string::eval_concat),
    f!("LENGTH", [sig(&[V(S)], I), sig(&[V(B)], I)], string::eval_length),
    f!("CHAR_LENGTH", [sig(&[V(S)], I)], string::eval_char_length),
    f!("CHARACTER_LENGTH", [sig(&[V(S)], I)], string::eval_char_length),
    f!("BYTE_LENGTH", [sig(&[V(S)], I), sig(&[V(B)], I)], string::eval_byte_length),
    f!("UPPER", [sig(&[V(S)], S), sig(&[V(B)], B)], string::eval_upper),
    f!("LOWER", [sig(&[V(S)], S), sig(&[V(B)], B)], string::eval_lower),
    deterministic("SUBSTR", SUBSTR_SIGNATURES, string::eval_substr),
    // GoogleSQL's alias of SUBSTR.
    deterministic("SUBSTRING", SUBSTR_SIGNATURES, string::eval_substr),
    f!("STARTS_WITH", [sig(&[V(S), V(S)], BO), sig(&[V(B), V(B)], BO)], string::eval_starts_with),
    f!("ENDS_WITH", [sig(&[V(S), V(S)], BO), sig(&[V(B), V(B)], BO)], string::eval_ends_with),
    f!("STRPOS", [sig(&[V(S), V(S)], I), sig(&[V(B), V(B)], I)], string::eval_strpos),
    f!("TRIM", [sig(&[V(S)], S), sig(&[V(S), V(S)], S), sig(&[V(B), V(B)], B)], |a, _| string::eval_trim(b'B', a)),
    f!("LTRIM", [sig(&[V(S)], S), sig(&[V(S), V(S)], S), sig(&[V(B), V(B)], B)], |a, _| string::eval_trim(b'L', a)),
    f!("RTRIM", [sig(&[V(S)], S), sig(&[V(S), V(S)], S), sig(&[V(B), V(B)], B)], |a, _| string::eval_trim(b'R', a)),
    f!("LPAD", [sig(&[V(S), V(I)], S), sig(&[V(S), V(I), V(S)], S), sig(&[V(B), V(I), V(B)], B)], |a, _| string::eval_pad(true, a)),
    f!("RPAD", [sig(&[V(S), V(I)], S), sig(&[V(S), V(I), V(S)], S), sig(&[V(B), V(I), V(B)], B)], |a, _| string::eval_pad(false, a)),
    f!("REPEAT", [sig(&[V(S), V(I)], S), sig(&[V(B), V(I)], B)], string::eval_repeat),
    f!("REPLACE", [sig(&[V(S), V(S), V(S)], S), sig(&[V(B), V(B), V(B)], B)], string::eval_replace),
    f!("REVERSE", [sig(&[V(S)], S), sig(&[V(B)], B)], string::eval_reverse),
    f!("SPLIT", [sig(&[V(S)], AS), sig(&[V(S), V(S)], AS), sig(&[V(B), V(B)], AB)], string::eval_split),
    null_aware(generic("FORMAT", "FORMAT(STRING, ANY, ...)", format::check_format, format::eval_format)),
    // regular expressions
    f!("REGEXP_CONTAINS", [sig(&[V(S), V(S)], BO)], regexp::eval_regexp_contains),
    f!("REGEXP_EXTRACT", [sig(&[V(S), V(S)], S)], regexp::eval_regexp_extract),
    f!("REGEXP_EXTRACT_ALL", [sig(&[V(S), V(S)], AS)], regexp::eval_regexp_extract_all),
    f!("REGEXP_REPLACE", [sig(&[V(S), V(S), V(S)], S)], regexp::eval_regexp_replace),
    // encodings
    f!("TO_BASE64", [sig(&[V(B)], S)], encoding::eval_to_base64),
    f!("FROM_BASE64", [sig(&[V(S)], B)], encoding::eval_from_base64),
    f!("TO_HEX", [sig(&[V(B)], S)], encoding::eval_to_hex),
    f!("FROM_HEX", [sig(&[V(S)], B)], encoding::eval_from_hex),
    f!("SAFE_CONVERT_BYTES_TO_STRING", [sig(&[V(B)], S)], encoding::eval_safe_convert_bytes_to_string),
    f!("CODE_POINTS_TO_STRING", [sig(&[V(AI)], S)], encoding::eval_code_points_to_string),
    f!("CODE_POINTS_TO_BYTES", [sig(&[V(AI)], B)], encoding::eval_code_points_to_bytes),
    f!("TO_CODE_POINTS", [sig(&[V(S)], AI), sig(&[V(B)], AI)], encoding::eval_to_code_points),
    // math
    f!("ABS", [sig(&[V(I)], I), sig(&[V(N)], N), sig(&[V(F)], F)], math::eval_abs),
    f!("MOD", [sig(&[V(I), V(I)], I), sig(&[V(N), V(N)], N)], math::eval_mod),
    f!("SIGN", [sig(&[V(I)], I), sig(&[V(N)], N), sig(&[V(F)], F)], math::eval_sign),
    f!("DIV", [sig(&[V(I), V(I)], I), sig(&[V(N), V(N)], N)], math::eval_div),
    f!("ROUND", [sig(&[V(F)], F), sig(&[V(N)], N), sig(&[V(F), V(I)], F), sig(&[V(N), V(I)], N)], math::eval_round),
    f!("TRUNC", [sig(&[V(F)], F), sig(&[V(N)], N), sig(&[V(F), V(I)], F), sig(&[V(N), V(I)], N)], math::eval_trunc),
    f!("CEIL", [sig(&[V(F)], F), sig(&[V(N)], N)], math::eval_ceil),
    f!("CEILING", [sig(&[V(F)], F), sig(&[V(N)], N)], math::eval_ceil),
    f!("FLOOR", [sig(&[V(F)], F), sig(&[V(N)], N)], math::eval_floor),
    f!("SQRT", [sig(&[V(F)], F)], math::eval_sqrt),
    f!("POW", [sig(&[V(F), V(F)], F), sig(&[V(N), V(N)], N)], math::eval_pow),
    f!("POWER", [sig(&[V(F), V(F)], F), sig(&[V(N), V(N)], N)], math::eval_pow),
    f!("EXP", [sig(&[V(F)], F)], math::eval_exp),
    f!("LN", [sig(&[V(F)], F)], math::eval_ln),
    f!("LOG", [sig(&[V(F)], F), sig(&[V(F), V(F)], F)], math::eval_log),
    f!("LOG10", [sig(&[V(F)], F)], math::eval_log10),
    generic("GREATEST", "GREATEST(ANY, ...)", math::check_same_orderable, |a, _| math::greatest_least(a, true)),
    generic("LEAST", "LEAST(ANY, ...)", math::check_same_orderable, |a, _| math::greatest_least(a, false)),
    f!("IEEE_DIVIDE", [sig(&[V(F), V(F)], F)], math::eval_ieee_divide),
    f!("SAFE_DIVIDE", [sig(&[V(F), V(F)], F), sig(&[V(N), V(N)], N)], math::eval_safe_divide),
    f!("SAFE_ADD", [sig(&[V(I), V(I)], I), sig(&[V(N), V(N)], N), sig(&[V(F), V(F)], F)], |a, _| math::safe_arith('+', a)),
    f!("SAFE_SUBTRACT", [sig(&[V(I), V(I)], I), sig(&[V(N), V(N)], N), sig(&[V(F), V(F)], F)], |a, _| math::safe_arith('-', a)),
    f!("SAFE_MULTIPLY", [sig(&[V(I), V(I)], I), sig(&[V(N), V(N)], N), sig(&[V(F), V(F)], F)], |a, _| math::safe_arith('*', a)),
    f!("SAFE_NEGATE", [sig(&[V(I)], I), sig(&[V(N)], N), sig(&[V(F)], F)], |a, _| math::safe_arith('-', a)),
    f!("IS_NAN", [sig(&[V(F)], BO)], math::eval_is_nan),
    f!("IS_INF", [sig(&[V(F)], BO)], math::eval_is_inf),
    // hashes and bits
    f!("FARM_FINGERPRINT", [sig(&[V(S)], I), sig(&[V(B)], I)], hash::eval_farm_fingerprint),
    f!("MD5", [sig(&[V(S)], B), sig(&[V(B)], B)], |a, _| hash::eval_hash(a, "MD5")),
    f!("SHA1", [sig(&[V(S)], B), sig(&[V(B)], B)], |a, _| hash::eval_hash(a, "SHA1")),
    f!("SHA256", [sig(&[V(S)], B), sig(&[V(B)], B)], |a, _| hash::eval_hash(a, "SHA256")),
    f!("SHA512", [sig(&[V(S)], B), sig(&[V(B)], B)], |a, _| hash::eval_hash(a, "SHA512")),
    f!("BIT_COUNT", [sig(&[V(I)], I), sig(&[V(B)], I)], hash::eval_bit_count),
    f!("BIT_REVERSE", [sig(&[V(I), V(BO)], I)], hash::eval_bit_reverse),
    // dates and times
    f!("DATE", [sig(&[V(TS)], D), sig(&[V(TS), V(S)], D), sig(&[V(I), V(I), V(I)], D), sig(&[V(D)], D)], datetime::eval_date),
    f!("TIMESTAMP", [sig(&[V(D)], TS), sig(&[V(S)], TS), sig(&[V(D), V(S)], TS), sig(&[V(S), V(S)], TS)], datetime::eval_timestamp),
    volatile("CURRENT_DATE", &[sig(&[], D), sig(&[V(S)], D)], datetime::eval_current_date),
    f!("DATE_ADD", [sig(&[V(D), V(I), V(S)], D)], datetime::eval_date_add),
    f!("DATE_SUB", [sig(&[V(D), V(I), V(S)], D)], datetime::eval_date_sub),
    f!("DATE_DIFF", [sig(&[V(D), V(D), V(S)], I)], datetime::eval_date_diff),
    f!("DATE_TRUNC", [sig(&[V(D), V(S)], D)], datetime::eval_date_trunc),
    f!("TIMESTAMP_ADD", [sig(&[V(TS), V(I), V(S)], TS)], |a, _| datetime::timestamp_add(a, 1, "TIMESTAMP_ADD")),
    f!("TIMESTAMP_SUB", [sig(&[V(TS), V(I), V(S)], TS)], |a, _| datetime::timestamp_add(a, -1, "TIMESTAMP_SUB")),
    f!("TIMESTAMP_DIFF", [sig(&[V(TS), V(TS), V(S)], I)], datetime::eval_timestamp_diff),
    f!("TIMESTAMP_TRUNC", [sig(&[V(TS), V(S)], TS), sig(&[V(TS), V(S), V(S)], TS)], datetime::eval_timestamp_trunc),
    f!("UNIX_SECONDS", [sig(&[V(TS)], I)], |a, _| datetime::unix(a, 1_000_000_000)),
    f!("UNIX_MILLIS", [sig(&[V(TS)], I)], |a, _| datetime::unix(a, 1_000_000)),
    f!("UNIX_MICROS", [sig(&[V(TS)], I)], |a, _| datetime::unix(a, 1_000)),
    f!("TIMESTAMP_SECONDS", [sig(&[V(I)], TS)], |a, _| datetime::from_unix(a, 1_000_000_000, "TIMESTAMP_SECONDS")),
    f!("TIMESTAMP_MILLIS", [sig(&[V(I)], TS)], |a, _| datetime::from_unix(a, 1_000_000, "TIMESTAMP_MILLIS")),
    f!("TIMESTAMP_MICROS", [sig(&[V(I)], TS)], |a, _| datetime::from_unix(a, 1_000, "TIMESTAMP_MICROS")),
    f!("UNIX_DATE", [sig(&[V(D)], I)], datetime::eval_unix_date),
    f!("DATE_FROM_UNIX_DATE", [sig(&[V(I)], D)], datetime::eval_date_from_unix_date),
    f!("FORMAT_TIMESTAMP", [sig(&[V(S), V(TS)], S), sig(&[V(S), V(TS), V(S)], S)], time_format::eval_format_timestamp),
    f!("FORMAT_DATE", [sig(&[V(S), V(D)], S)], time_format::eval_format_date),
    f!("PARSE_TIMESTAMP", [sig(&[V(S), V(S)], TS), sig(&[V(S), V(S), V(S)], TS)], time_format::eval_parse_timestamp),
    f!("PARSE_DATE", [sig(&[V(S), V(S)], D)], time_format::eval_parse_date),
    // arrays
    generic("ARRAY_LENGTH", "ARRAY_LENGTH(ARRAY)", array::check_array_length, array::eval_array_length),
    generic("ARRAY_CONCAT", "ARRAY_CONCAT(ARRAY, ...)", array::check_array_concat, array::eval_array_concat),
    generic("ARRAY_REVERSE", "ARRAY_REVERSE(ARRAY)", array::check_array_same, array::eval_array_reverse),
    generic("ARRAY_TO_STRING", "ARRAY_TO_STRING(ARRAY<STRING>, STRING[, STRING]); ARRAY_TO_STRING(ARRAY<BYTES>, BYTES[, BYTES])", array::check_array_to_string, array::eval_array_to_string),
    generic("ARRAY_INCLUDES", "ARRAY_INCLUDES(ARRAY<T>, T)", array::check_array_includes, array::eval_array_includes),
    generic("ARRAY_MIN", "ARRAY_MIN(ARRAY)", array::check_array_element, |a, _| array::array_min_max(a, false)),
    generic("ARRAY_MAX", "ARRAY_MAX(ARRAY)", array::check_array_element, |a, _| array::array_min_max(a, true)),
    generic("GENERATE_ARRAY", "GENERATE_ARRAY(INT64, INT64[, INT64]); GENERATE_ARRAY(NUMERIC, NUMERIC[, NUMERIC]); GENERATE_ARRAY(FLOAT64, FLOAT64[, FLOAT64])", array::check_generate_array, array::eval_generate_array),
    f!("GENERATE_DATE_ARRAY", [sig(&[V(D), V(D)], AD), sig(&[V(D), V(D), V(I), V(S)], AD)], array::eval_generate_date_array),
    // JSON
    f!("JSON_VALUE", [sig(&[V(J)], S), sig(&[V(J), V(S)], S), sig(&[V(S)], S), sig(&[V(S), V(S)], S)], json::eval_json_value),
    f!("JSON_QUERY", [sig(&[V(J), V(S)], J), sig(&[V(S), V(S)], S)], json::eval_json_query),
    f!("JSON_QUERY_ARRAY", [sig(&[V(J)], AJ), sig(&[V(J), V(S)], AJ), sig(&[V(S)], AS), sig(&[V(S), V(S)], AS)], json::eval_json_query_array),
    f!("JSON_VALUE_ARRAY", [sig(&[V(J)], AS), sig(&[V(J), V(S)], AS), sig(&[V(S)], AS), sig(&[V(S), V(S)], AS)], json::eval_json_value_array),
    f!("PARSE_JSON", [sig(&[V(S)], J)], json::eval_parse_json),
    f!("JSON_TYPE", [sig(&[V(J)], S)], json::eval_json_type),
    f!("BOOL", [sig(&[V(J)], BO)], |a, _| json::json_convert(a, "a boolean")),
    f!("INT64", [sig(&[V(J)], I)], |a, _| json::json_convert(a, "an integer")),
    f!("FLOAT64", [sig(&[V(J)], F)], |a, _| json::json_convert(a, "a number")),
    f!("STRING", [sig(&[V(J)], S), sig(&[V(TS)], S), sig(&[V(TS), V(S)], S)], json::eval_string),
    null_aware(generic("TO_JSON", "TO_JSON(ANY)", |a| json::check_any_one(a, Type::Json), json::eval_to_json)),
    null_aware(generic("TO_JSON_STRING", "TO_JSON_STRING(ANY)", |a| json::check_any_one(a, Type::String), json::eval_to_json_string)),
];
