//! Scalar functions: one registry, implemented by family.
//!
//! Every scalar function is one [`Function`] entry in [`registry`]'s
//! table. An entry lists its signatures (argument types and result type)
//! and a plain evaluation function over already-evaluated arguments. The
//! binder picks the first signature the arguments fit, preferring exact
//! matches over implicit coercions (so `ABS(1)` is `INT64` and `MOD(1, 1.5)`
//! is `NUMERIC`), and inserts the coercions. Functions generic over their
//! argument types (`GREATEST`, `ARRAY_LENGTH`, `TO_JSON`) check the types
//! with a function instead of a signature list.
//!
//! Every registered function returns NULL when any argument is NULL without
//! being called, unless it is marked NULL-aware (`FORMAT`, `TO_JSON`);
//! functions that must not evaluate all their arguments (`IF`, `COALESCE`,
//! `IFNULL`, `NULLIF`) are special forms in the binder instead.
//! `SAFE.f(..)` turns a function's runtime errors into NULL (see
//! [`crate::eval`]).
//!
//! The evaluation functions live by family, one module each:
//!
//! | module | functions |
//! |---|---|
//! | [`string`] | `CONCAT`, `SUBSTR`, `LENGTH`, `TRIM`, `LPAD`, `REPLACE`, `SPLIT`... |
//! | [`format`] | `FORMAT` |
//! | [`regexp`] | `REGEXP_CONTAINS`, `REGEXP_EXTRACT`, `REGEXP_REPLACE`... |
//! | [`encoding`] | `TO_BASE64`, `FROM_HEX`, `CODE_POINTS_TO_STRING`... |
//! | [`math`] | `ABS`, `MOD`, `ROUND`, `POW`, `LOG`, `SAFE_ADD`, `GREATEST`... |
//! | [`hash`] | `FARM_FINGERPRINT`, `MD5`, `SHA256`, `BIT_COUNT`, `BIT_REVERSE` |
//! | [`datetime`] | `DATE`, `TIMESTAMP`, `DATE_ADD`, `TIMESTAMP_TRUNC`, `UNIX_SECONDS`... |
//! | [`time_format`] | `FORMAT_TIMESTAMP`, `PARSE_DATE`... |
//! | [`array`] | `ARRAY_LENGTH`, `ARRAY_CONCAT`, `GENERATE_ARRAY`... |
//! | [`json`] | `JSON_VALUE`, `JSON_QUERY`, `TO_JSON`, `PARSE_JSON`, `json['a']`... |
//! | [`context`] | `CURRENT_TIMESTAMP`, `GENERATE_UUID`, sequences, `PENDING_COMMIT_TIMESTAMP` |
//!
//! To add a function: write `fn eval_x(args: &[Value], ctx: &mut dyn
//! EvalContext) -> Result<Value>` in its family's module (reading arguments
//! with [`args`]) and add one line to [`registry::FUNCTIONS`].

mod args;
mod array;
mod context;
mod datetime;
mod encoding;
mod format;
mod hash;
mod json;
mod math;
mod regexp;
mod registry;
mod signature;
mod string;
mod time_format;

pub(crate) use json::to_json;
pub(crate) use registry::{lookup, EXACT_NUMERIC_CAST, JSON_SUBSCRIPT};
pub(crate) use signature::{Function, Param, Signature, Volatility};
