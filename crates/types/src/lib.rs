//! GoogleSQL's value types, as Rowtree stores and computes them.
//!
//! Every layer above speaks these types: the key codec orders [`Value`]s, the
//! schema declares columns of a [`Type`], the expression evaluator computes
//! [`Value`]s, and the API layer converts them to Spanner's wire form.
//!
//! The representations are chosen to hold Spanner's full ranges exactly:
//!
//! | GoogleSQL type | Rust representation | range |
//! |---|---|---|
//! | `TIMESTAMP` | [`Timestamp`]: `i128` nanoseconds since the Unix epoch, UTC | `0001-01-01T00:00:00Z` to `9999-12-31T23:59:59.999999999Z` |
//! | `DATE` | [`Date`]: `i32` days since 1970-01-01 | `0001-01-01` to `9999-12-31` |
//! | `NUMERIC` | [`Numeric`]: `i128` scaled by 10^9 | precision 38, scale 9 |
//! | `JSON` | `serde_json::Value` (objects with sorted keys, as Spanner prints them) | |
//! | `UUID` | [`Uuid`]: its 16 bytes as a big-endian `u128` | any 128 bits |
//! | PROTO (`Type::Proto`) | `Value::Bytes`: the serialized message | |
//! | ENUM (`Type::Enum`) | `Value::Int64`: the enum value's number | |

//!
//! Each type owns its text forms: parsing GoogleSQL literals and strings, and
//! printing the `CAST(x AS STRING)` and wire forms. [`TimeZone`] connects
//! instants with civil time; [`parse_json`] applies Spanner's JSON rules.
//! [`stack`] lets the recursive layers above go deep without overflowing.
//! [`Code`] is the status code every layer's errors carry; [`Dialect`] names
//! the SQL dialect a database was created in. [`ProtoBundle`] holds the
//! protocol buffer descriptors PROTO and ENUM types are resolved against.

mod code;
mod date;
mod dialect;
mod error;
mod float;
mod json;
mod numeric;
pub mod proto;
pub mod stack;
mod time_zone;
mod timestamp;
mod ty;
mod uuid;
mod value;

pub use code::Code;
pub use date::Date;
pub use dialect::Dialect;
pub use error::{Error, Result};
pub use float::{format_f32, format_f64, parse_f64};
pub use json::{check_json_depth, parse_json, MAX_JSON_DEPTH};
pub use numeric::Numeric;
pub use proto::{ProtoBundle, ProtoKind};
pub use time_zone::TimeZone;
pub use timestamp::Timestamp;
pub use ty::Type;
pub use uuid::Uuid;
pub use value::Value;
