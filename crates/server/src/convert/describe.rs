//! How wire values are named in error messages: a value described by its
//! kind (`NULL`, `true`, a quoted string cut after 64 characters, a list in
//! brackets), and the `INVALID_ARGUMENT` status most conversions answer with.
//!
//! A leaf: every other conversion module words its errors with these, and
//! this one needs none of them.

use prost_types::value::Kind;
use prost_types::ListValue;
use tonic::Status;

/// `INVALID_ARGUMENT` with `message`.
pub(super) fn invalid(message: impl Into<String>) -> Status {
    Status::invalid_argument(message)
}

/// A short description of a wire value for error messages.
pub(super) fn describe(v: &prost_types::Value) -> String {
    match &v.kind {
        None => "an empty google.protobuf.Value".into(),
        Some(Kind::NullValue(_)) => "NULL".into(),
        Some(Kind::BoolValue(b)) => b.to_string(),
        Some(Kind::NumberValue(n)) => n.to_string(),
        Some(Kind::StringValue(s)) => quote(s),
        Some(Kind::ListValue(l)) => describe_list(l),
        Some(Kind::StructValue(_)) => "a struct_value".into(),
    }
}

pub(super) fn describe_list(l: &ListValue) -> String {
    let items: Vec<String> = l.values.iter().map(describe).collect();
    format!("[{}]", items.join(", "))
}

/// A string quoted for a message, cut after 64 characters.
pub(super) fn quote(s: &str) -> String {
    if s.chars().count() > 64 {
        let cut: String = s.chars().take(64).collect();
        format!("{:?}...", cut)
    } else {
        format!("{s:?}")
    }
}
