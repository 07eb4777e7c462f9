//! Conversions between Spanner's wire format and Rowtree's types.
//!
//! Spanner's gRPC API does not carry typed values. Every cell, key part and
//! query parameter travels as a `google.protobuf.Value` (JSON's data model:
//! null, bool, number, string, list, struct), and its GoogleSQL type travels
//! separately as a `google.spanner.v1.Type`: in a result set's
//! [`ResultSetMetadata`], in `param_types`, or implied
//! by the schema for mutations and key sets. The reader needs both to decode a
//! value.
//!
//! # The encoding
//!
//! | GoogleSQL type | wire kind | example |
//! |---|---|---|
//! | any type, `NULL` | `null_value` | `null` |
//! | `BOOL` | `bool_value` | `true` |
//! | `INT64` | `string_value`, decimal (a double would lose digits past 2^53) | `"9007199254740993"` |
//! | `FLOAT64`, `FLOAT32` | `number_value`, or the strings `"NaN"`, `"Infinity"`, `"-Infinity"` | `1.5`, `"NaN"` |
//! | `NUMERIC` | `string_value`, decimal or scientific notation | `"-1.5"`, `"1e-9"` |
//! | `STRING` | `string_value` | `"héllo"` |
//! | `BYTES` | `string_value`, base64 (RFC 4648 §4, standard alphabet) | `"aGk="` |
//! | `DATE` | `string_value`, `YYYY-MM-DD` | `"2024-02-29"` |
//! | `TIMESTAMP` | `string_value`, RFC 3339 | `"2016-01-25T15:10:10.555555Z"` |
//! | `JSON` | `string_value`, the JSON text | `"{\"a\":1}"` |
//! | `UUID` (type code 17) | `string_value`, lowercase `8-4-4-4-12` | `"f81d4fae-7dec-11d0-a765-00a0c91e6bf6"` |
//! | PROTO (a message; `proto_type_fqn` names it) | `string_value`, the serialized message in base64 | `"CAEaAkZS"` |
//! | ENUM (`proto_type_fqn` names it) | `string_value`, the value's number in decimal | `"3"` |
//! | `ARRAY<T>` | `list_value` of `T`s (elements may be `null`) | `["1", null]` |
//! | `STRUCT<a T, b U>` | `list_value` of the fields in order, names only in the type | `["1", "x"]` |
//!
//! # What Rowtree sends
//!
//! [`value_to_proto`] writes the canonical forms Spanner writes: INT64 and
//! NUMERIC in plain decimal (NUMERIC without trailing zeros, `"1.5"`),
//! TIMESTAMP in UTC with `Z` and only the fractional digits it needs
//! (`...:10Z`, `...:10.5Z`, up to nine digits), JSON compact with sorted
//! keys, FLOAT32 widened to a double.
//!
//! # What Rowtree accepts
//!
//! [`value_from_proto`] is as strict as Spanner about the *kind* of each
//! value (an INT64 is never a `bool_value`, a STRING never a `number_value`)
//! with a few leniencies clients rely on:
//!
//! * INT64 also accepts an integral `number_value` in range (`3.0`, not
//!   `3.5` or `1e19`).
//! * TIMESTAMP accepts any RFC 3339 offset (`-05:00`, not only `Z`), and the
//!   placeholder `"spanner.commit_timestamp()"`, decoded as
//!   [`Timestamp::PENDING_COMMIT`]; the database replaces it with the commit
//!   timestamp when writing a column with `allow_commit_timestamp = true`
//!   (and refuses it elsewhere).
//! * BYTES accepts base64 with or without `=` padding.
//! * NUMERIC must be exact: a nonzero digit past the ninth decimal is an
//!   INVALID_ARGUMENT error (also in a mutation), never rounded, since a
//!   write must store what the client sent ([`rowtree_types::Numeric::parse_exact`];
//!   trailing zeros are fine). More than 29 integer digits is an error too.
//!   A SQL `CAST(s AS NUMERIC)` still rounds, as GoogleSQL's does.
//! * FLOAT32 accepts any double that rounds to a finite float (`1e39` is an
//!   error).
//! * UUID accepts every form GoogleSQL's `CAST(s AS UUID)` does (upper case,
//!   hyphens left out or elsewhere between digits, `{braces}`); Rowtree
//!   always sends the canonical lowercase form.
//! * PROTO (a message) travels as BYTES does and ENUM (an enum) as INT64
//!   does, each type with its `proto_type_fqn`; the values are stored as
//!   those bytes and numbers.
//! * JSON is parsed with Spanner's rules ([`rowtree_types::parse_json`]: the
//!   first of duplicate keys wins, numbers must round-trip).
//!
//! # Errors
//!
//! A malformed value is `INVALID_ARGUMENT` naming what it was for and the
//! type expected: `Invalid value for column Age in table Singers: Could not
//! parse "abc" as INT64`, `Invalid value for bind parameter id: ...`. Missing
//! tables, indexes and columns are `NOT_FOUND` with the emulator's wording
//! (`Table not found: T`, `Index not found on table T: I`, `Column not found
//! in table T: c`). Types Rowtree does not implement (INTERVAL,
//! the PostgreSQL annotations) are `UNIMPLEMENTED`, as are queue
//! mutations (`send`, `ack`).
//!
//! # Keys
//!
//! A key is a `ListValue` of the key columns' values in key order
//! ([`key_types`] lists those types for a table or an index read). Point
//! keys in a key set must name every key column; the bounds of a
//! [`KeyRange`] may be prefixes, and every range needs both a start and an
//! end (`start_closed: []` / `end_closed: []` spans everything).
//!
//! # Layout
//!
//! One file per kind of thing converted; everything public is re-exported
//! here, so callers write `convert::value_to_proto` whatever file holds it.
//!
//! | file | converts |
//! |---|---|
//! | `types.rs` | GoogleSQL types to and from `google.spanner.v1.Type` |
//! | `values.rs` | values of a known type, both ways (the table above), with `decode`, the decoder every other file uses |
//! | `results.rs` | rows and result set metadata, to the wire |
//! | `params.rs` | query parameters, from the wire (declared or inferred types) |
//! | `keys.rs` | the key columns of a table or index read, and key sets from the wire |
//! | `mutations.rs` | commit mutations from the wire, checked against the schema |
//! | `time.rs` | timestamps and durations (`google.protobuf` messages) |
//! | `describe.rs` | how values are named in error messages, and `INVALID_ARGUMENT` |
//!
//! The files depend on each other in one direction only: `describe` is a
//! leaf; `types` and `values` use it; `results`, `params` and `keys` build
//! on `types` and `values`; `mutations` builds on `keys`. The unit tests, in
//! `tests/`, are cut along the same files.
//!
//! [`ResultSetMetadata`]: googleapis_tonic_google_spanner_v1::google::spanner::v1::ResultSetMetadata
//! [`Timestamp::PENDING_COMMIT`]: rowtree_types::Timestamp::PENDING_COMMIT
//! [`KeyRange`]: rowtree_db::KeyRange

mod describe;
mod keys;
mod mutations;
mod params;
mod results;
mod time;
mod types;
mod values;

#[cfg(test)]
mod tests;

pub use keys::{index_key_set_from_proto, key_columns, key_set_from_proto, key_types};
pub use mutations::mutations_from_proto;
pub use params::params_from_proto;
pub use results::{metadata, row_to_proto};
pub use time::{
    commit_ts_from_proto, commit_ts_to_proto, duration_from_proto, timestamp_from_proto,
    timestamp_to_proto,
};
pub use types::{type_from_proto, type_to_proto, type_to_proto_in};
pub use values::{value_from_proto, value_to_proto, COMMIT_TIMESTAMP_PLACEHOLDER};
