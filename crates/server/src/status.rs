//! Errors as Spanner sends them.
//!
//! Every failure leaves the server as a [`tonic::Status`] with the gRPC code
//! Spanner uses and, where clients act on them, the same details: an
//! ABORTED transaction carries a `google.rpc.RetryInfo` (the client libraries
//! retry the whole transaction when they see it), and a missing session a
//! `google.rpc.ResourceInfo` naming it (clients drop it from their pools).
//! Details travel as a serialized `google.rpc.Status` in the
//! `grpc-status-details-bin` trailer, which is what `Status::with_details`
//! writes.

use std::time::Duration;

use googleapis_tonic_google_rpc::google::rpc;
use prost::Message;
use tonic::{Code, Status};

/// The wire code for one of Rowtree's error codes. The two enums list the
/// same canonical codes; the match is exhaustive so a code added to one
/// cannot be forgotten here.
pub fn code_of(code: rowtree_types::Code) -> Code {
    use rowtree_types::Code as C;
    match code {
        C::Ok => Code::Ok,
        C::Cancelled => Code::Cancelled,
        C::Unknown => Code::Unknown,
        C::InvalidArgument => Code::InvalidArgument,
        C::DeadlineExceeded => Code::DeadlineExceeded,
        C::NotFound => Code::NotFound,
        C::AlreadyExists => Code::AlreadyExists,
        C::PermissionDenied => Code::PermissionDenied,
        C::ResourceExhausted => Code::ResourceExhausted,
        C::FailedPrecondition => Code::FailedPrecondition,
        C::Aborted => Code::Aborted,
        C::OutOfRange => Code::OutOfRange,
        C::Unimplemented => Code::Unimplemented,
        C::Internal => Code::Internal,
        C::Unavailable => Code::Unavailable,
        C::DataLoss => Code::DataLoss,
        C::Unauthenticated => Code::Unauthenticated,
    }
}

/// Longest message a status carries, in bytes. gRPC sends the message
/// percent-encoded in a trailer, and clients refuse trailers over 8 KiB
/// (`received metadata size exceeds limit`): a longer message, which can
/// only come from echoing a hostile statement, is cut here instead.
pub const MAX_MESSAGE_BYTES: usize = 2048;

/// `message`, cut to [`MAX_MESSAGE_BYTES`] on a character boundary.
fn bounded(mut message: String) -> String {
    const MARK: &str = " ... (message truncated)";
    if message.len() > MAX_MESSAGE_BYTES {
        let mut cut = MAX_MESSAGE_BYTES - MARK.len();
        while !message.is_char_boundary(cut) {
            cut -= 1;
        }
        message.truncate(cut);
        message.push_str(MARK);
    }
    message
}

/// Longest `grpc-message` header an error response carries, in bytes as
/// sent (percent-encoded). Most statuses are built by [`status`] and are
/// small already; this catches the rest (a NOT_FOUND echoing a 1 MB table
/// name from a Read request) where tonic turns them into headers.
pub const MAX_MESSAGE_HEADER: usize = 4096;

/// Cuts an error response's `grpc-message` header to
/// [`MAX_MESSAGE_HEADER`] bytes (on a character boundary of the decoded
/// text, marked as truncated). Installed on the server as a
/// `tower::util::MapResponseLayer`.
pub fn bound_message_header<B>(mut response: http::Response<B>) -> http::Response<B> {
    use percent_encoding::{percent_decode, utf8_percent_encode, AsciiSet, CONTROLS};
    /// What gRPC percent-encodes in a message besides non-ASCII bytes.
    const ENCODE: &AsciiSet = &CONTROLS.add(b'%');
    const MARK: &str = " ... (message truncated)";
    let Some(value) = response.headers().get("grpc-message") else {
        return response;
    };
    if value.len() <= MAX_MESSAGE_HEADER {
        return response;
    }
    let text = percent_decode(value.as_bytes())
        .decode_utf8_lossy()
        .into_owned();
    let mut cut = String::new();
    let mut encoded = MARK.len();
    for c in text.chars() {
        let width = if c.is_ascii() && !c.is_ascii_control() && c != '%' {
            1
        } else {
            3 * c.len_utf8()
        };
        if encoded + width > MAX_MESSAGE_HEADER {
            break;
        }
        encoded += width;
        cut.push(c);
    }
    cut.push_str(MARK);
    let header = utf8_percent_encode(&cut, ENCODE).to_string();
    if let Ok(header) = http::HeaderValue::from_str(&header) {
        response.headers_mut().insert("grpc-message", header);
    }
    response
}

/// A status from a code and message; ABORTED gets its RetryInfo.
pub fn status(code: rowtree_types::Code, message: impl Into<String>) -> Status {
    let code = code_of(code);
    let message = bounded(message.into());
    if code == Code::Aborted {
        aborted(message)
    } else {
        Status::new(code, message)
    }
}

/// ABORTED with a `RetryInfo` asking the client to retry after a short delay.
pub fn aborted(message: impl Into<String>) -> Status {
    let message = message.into();
    let retry = rpc::RetryInfo {
        retry_delay: Some(prost_types::Duration {
            seconds: 0,
            nanos: Duration::from_millis(10).as_nanos() as i32,
        }),
    };
    with_detail(
        Code::Aborted,
        message,
        "type.googleapis.com/google.rpc.RetryInfo",
        retry.encode_to_vec(),
    )
}

/// NOT_FOUND for a missing resource, with a `ResourceInfo` naming it.
pub fn not_found(resource_type: &str, name: &str) -> Status {
    let kind = resource_type.rsplit('.').next().unwrap_or(resource_type);
    let info = rpc::ResourceInfo {
        resource_type: format!("type.googleapis.com/{resource_type}"),
        resource_name: name.to_string(),
        owner: String::new(),
        description: String::new(),
    };
    with_detail(
        Code::NotFound,
        format!("{kind} not found: {name}"),
        "type.googleapis.com/google.rpc.ResourceInfo",
        info.encode_to_vec(),
    )
}

fn with_detail(code: Code, message: String, type_url: &str, value: Vec<u8>) -> Status {
    let details = rpc::Status {
        code: code as i32,
        message: message.clone(),
        details: vec![prost_types::Any {
            type_url: type_url.to_string(),
            value,
        }],
    };
    Status::with_details(code, message, details.encode_to_vec().into())
}

/// A `google.rpc.Status` message for a status (batch DML and BatchWrite
/// report per-statement outcomes this way).
pub fn to_rpc(status: &Status) -> rpc::Status {
    rpc::Status {
        code: status.code() as i32,
        message: status.message().to_string(),
        details: Vec::new(),
    }
}

/// The OK `google.rpc.Status`.
pub fn rpc_ok() -> rpc::Status {
    rpc::Status {
        code: 0,
        message: String::new(),
        details: Vec::new(),
    }
}

/// Converts errors of the layers below.
///
/// The metadata key (a trailer) of a refusal to commit to or lock splits
/// another node leads (`rowtree_db::Error::LedElsewhere`): nothing of the
/// request was done, so sending it elsewhere is safe.
pub const REFUSED: &str = "x-rowtree-led-elsewhere";

/// Whether a failure is a refusal marked [`REFUSED`].
pub fn refused(status: &Status) -> bool {
    status.metadata().contains_key(REFUSED)
}

/// A refusal to commit to or lock splits another node leads
/// ([`rowtree_db::Error::LedElsewhere`]) carries the
/// `x-rowtree-led-elsewhere` trailer: nothing of the request was done, so
/// a gateway may send it on elsewhere (`spanner/routed.rs`).
pub fn from_db(e: rowtree_db::Error) -> Status {
    let refused = matches!(e, rowtree_db::Error::LedElsewhere { .. });
    let mut s = status(e.code(), e.to_string());
    if refused {
        s.metadata_mut()
            .insert(REFUSED, "1".parse().expect("ascii"));
    }
    s
}

/// Converts a SQL error (its message carries `[at line:col]`).
pub fn from_sql(e: rowtree_sql::SqlError) -> Status {
    status(e.code, e.message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aborted_carries_retry_info() {
        let s = aborted("Transaction was aborted.");
        assert_eq!(s.code(), Code::Aborted);
        let details = rpc::Status::decode(s.details()).unwrap();
        assert_eq!(details.details.len(), 1);
        assert_eq!(
            details.details[0].type_url,
            "type.googleapis.com/google.rpc.RetryInfo"
        );
        let info = rpc::RetryInfo::decode(details.details[0].value.as_slice()).unwrap();
        assert!(info.retry_delay.unwrap().nanos > 0);
    }

    #[test]
    fn not_found_names_the_resource() {
        let s = not_found(
            "google.spanner.v1.Session",
            "projects/p/instances/i/databases/d/sessions/x",
        );
        assert_eq!(s.code(), Code::NotFound);
        assert!(s.message().starts_with("Session not found: projects/p"));
    }

    #[test]
    fn long_messages_are_cut_on_a_character_boundary() {
        let s = status(rowtree_types::Code::InvalidArgument, "é".repeat(100_000));
        assert!(s.message().len() <= MAX_MESSAGE_BYTES);
        assert!(s.message().ends_with("(message truncated)"));
        assert_eq!(
            status(rowtree_types::Code::NotFound, "short").message(),
            "short"
        );
    }

    #[test]
    fn long_message_headers_are_cut() {
        let long = format!("Table not found: {}", "é".repeat(50_000));
        let mut response = http::Response::new(());
        let encoded =
            percent_encoding::utf8_percent_encode(&long, percent_encoding::CONTROLS).to_string();
        response.headers_mut().insert(
            "grpc-message",
            http::HeaderValue::from_str(&encoded).unwrap(),
        );
        let response = bound_message_header(response);
        let header = response.headers()["grpc-message"].to_str().unwrap();
        assert!(header.len() <= MAX_MESSAGE_HEADER, "{}", header.len());
        let text = percent_encoding::percent_decode_str(header)
            .decode_utf8()
            .expect("still UTF-8");
        assert!(text.starts_with("Table not found: éé"));
        assert!(text.ends_with("(message truncated)"));
        // Short messages pass untouched.
        let mut short = http::Response::new(());
        short.headers_mut().insert(
            "grpc-message",
            http::HeaderValue::from_static("Table%20not%20found"),
        );
        let short = bound_message_header(short);
        assert_eq!(short.headers()["grpc-message"], "Table%20not%20found");
    }

    #[test]
    fn codes_map() {
        // Both enums number the codes as google.rpc.Code does.
        for code in rowtree_types::Code::ALL {
            assert_eq!(code_of(code) as i32, code as i32, "{code}");
        }
        assert_eq!(
            status(rowtree_types::Code::Aborted, "x").code(),
            Code::Aborted
        );
    }
}
