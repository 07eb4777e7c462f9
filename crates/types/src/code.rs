//! The status codes errors carry across the layers.
//!
//! Every error of every layer falls into one of gRPC's canonical codes, chosen
//! by what the caller does about it: fix the request (`InvalidArgument`),
//! create what is missing (`NotFound`), retry the transaction (`Aborted`),
//! report a bug (`Internal`), and so on. The layers pass the code along as a
//! [`Code`], never as text, so a typo cannot silently turn an error into
//! another one; only the API server maps it to the wire (`tonic::Code`), and
//! only where text is printed (error messages of the shell, the
//! sqllogictest runner) does it become its name, [`Code::as_str`].
//!
//! The numbering is gRPC's (`google.rpc.Code`), so `code as i32` is the
//! value on the wire.

use std::fmt;

/// A gRPC canonical status code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(i32)]
pub enum Code {
    /// Not an error.
    Ok = 0,
    /// The caller cancelled the operation.
    Cancelled = 1,
    /// An error of no known category.
    Unknown = 2,
    /// The request is malformed: fix it and send it again.
    InvalidArgument = 3,
    /// The deadline passed before the operation finished.
    DeadlineExceeded = 4,
    /// A named object or a row the request requires does not exist.
    NotFound = 5,
    /// The object or row being created exists already.
    AlreadyExists = 6,
    /// The caller may not do this.
    PermissionDenied = 7,
    /// A resource limit was exceeded.
    ResourceExhausted = 8,
    /// The system is not in a state that allows the request.
    FailedPrecondition = 9,
    /// The transaction lost a conflict: retry the whole transaction.
    Aborted = 10,
    /// A value is outside its allowed range.
    OutOfRange = 11,
    /// The request is valid but not supported.
    Unimplemented = 12,
    /// An invariant broke: a bug, never the caller's fault.
    Internal = 13,
    /// The service cannot be reached for now; retrying may help.
    Unavailable = 14,
    /// Data is lost or damaged.
    DataLoss = 15,
    /// The request carries no valid credentials.
    Unauthenticated = 16,
}

impl Code {
    /// Every code, in numeric order.
    pub const ALL: [Code; 17] = [
        Code::Ok,
        Code::Cancelled,
        Code::Unknown,
        Code::InvalidArgument,
        Code::DeadlineExceeded,
        Code::NotFound,
        Code::AlreadyExists,
        Code::PermissionDenied,
        Code::ResourceExhausted,
        Code::FailedPrecondition,
        Code::Aborted,
        Code::OutOfRange,
        Code::Unimplemented,
        Code::Internal,
        Code::Unavailable,
        Code::DataLoss,
        Code::Unauthenticated,
    ];

    /// The code's name as gRPC spells it: `INVALID_ARGUMENT`, `ABORTED`, ...
    pub const fn as_str(self) -> &'static str {
        match self {
            Code::Ok => "OK",
            Code::Cancelled => "CANCELLED",
            Code::Unknown => "UNKNOWN",
            Code::InvalidArgument => "INVALID_ARGUMENT",
            Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
            Code::NotFound => "NOT_FOUND",
            Code::AlreadyExists => "ALREADY_EXISTS",
            Code::PermissionDenied => "PERMISSION_DENIED",
            Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
            Code::FailedPrecondition => "FAILED_PRECONDITION",
            Code::Aborted => "ABORTED",
            Code::OutOfRange => "OUT_OF_RANGE",
            Code::Unimplemented => "UNIMPLEMENTED",
            Code::Internal => "INTERNAL",
            Code::Unavailable => "UNAVAILABLE",
            Code::DataLoss => "DATA_LOSS",
            Code::Unauthenticated => "UNAUTHENTICATED",
        }
    }
}

impl fmt::Display for Code {
    /// The name, as [`Code::as_str`] gives it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_is_in_numeric_order() {
        for (i, code) in Code::ALL.iter().enumerate() {
            assert_eq!(*code as i32, i as i32, "{code}");
        }
    }

    #[test]
    fn names_are_grpc_spelling() {
        assert_eq!(Code::InvalidArgument.as_str(), "INVALID_ARGUMENT");
        assert_eq!(Code::Ok.to_string(), "OK");
        assert_eq!(Code::Unauthenticated.to_string(), "UNAUTHENTICATED");
        let names: std::collections::BTreeSet<_> = Code::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(names.len(), Code::ALL.len());
    }
}
