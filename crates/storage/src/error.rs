//! Errors of the storage layer.
//!
//! Two failures get types of their own because the caller must act on them
//! differently from a passing I/O error:
//!
//! * [`Error::Stopped`]: a write or an fsync failed. After that the engine
//!   cannot tell which of its writes reached the disk, so it accepts no more
//!   writes (reads go on) until the database is reopened, which recovers every
//!   write that was acknowledged as durable.
//! * [`Error::Corrupt`]: stored bytes failed a check (a block or journal
//!   checksum, a format tag). The damaged data is never served.

use std::fmt;

/// A storage failure. None of these is retryable by the client: an I/O failure
/// or corruption means the database needs attention.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The data directory is open in another process (or another
    /// `FjallEngine` of this one): one database, one owner.
    #[error("the database directory {0} is in use by another process")]
    InUse(String),
    /// A write or an fsync failed, by this call or an earlier one: the engine
    /// accepts no more writes. See [`Stop`].
    #[error("{0}")]
    Stopped(Stop),
    /// Stored bytes do not have the expected shape or checksum: the data on
    /// disk is damaged.
    #[error("corrupt data: {0}")]
    Corrupt(String),
    /// Any other failure of the disk engine (an I/O error of a read, of
    /// opening the directory, ...).
    #[error("storage engine error: {}", describe(.0))]
    Engine(fjall::Error),
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// What failed when an engine stopped accepting writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failed {
    /// Writing a batch to the journal.
    Write,
    /// Making written batches durable (fsync/fdatasync).
    Fsync,
    /// A synced batch write, which writes and fsyncs the journal in one call
    /// of the disk engine, so which of the two failed is not known.
    WriteOrFsync,
    /// A background flush or compaction of the disk engine (it logs the
    /// cause).
    Background,
}

/// Why an engine stopped accepting writes: the first write or fsync that
/// failed. Every later write gets the same `Stop`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stop {
    /// The operation that failed.
    pub failed: Failed,
    /// The operating system's error, as text.
    pub cause: String,
    /// Whether the cause was a full disk (ENOSPC).
    pub disk_full: bool,
}

impl Stop {
    /// The stop caused by `error` failing operation `failed`.
    pub fn io(failed: Failed, error: &std::io::Error) -> Stop {
        Stop {
            failed,
            cause: error.to_string(),
            disk_full: is_disk_full(error),
        }
    }
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let failed = match self.failed {
            Failed::Write => "write",
            Failed::Fsync => "fsync",
            Failed::WriteOrFsync => "write or fsync of the journal",
            Failed::Background => "background flush or compaction",
        };
        write!(
            f,
            "the database stopped accepting writes after a failed {failed}: "
        )?;
        if self.disk_full {
            write!(
                f,
                "the disk is full ({}); free space, then reopen the database",
                self.cause
            )
        } else {
            write!(
                f,
                "{}; reopen the database once the cause is fixed (acknowledged commits are \
                 recovered)",
                self.cause
            )
        }
    }
}

/// Whether an I/O error says the disk (or the quota) is full.
pub fn is_disk_full(error: &std::io::Error) -> bool {
    // ENOSPC is 28 on Linux and the BSDs; `StorageFull` is what std maps it to.
    error.kind() == std::io::ErrorKind::StorageFull || error.raw_os_error() == Some(28)
}

/// The I/O error inside a fjall error, if it is one.
pub(crate) fn io_error(error: &fjall::Error) -> Option<&std::io::Error> {
    match error {
        fjall::Error::Io(e) | fjall::Error::Storage(fjall::LsmError::Io(e)) => Some(e),
        _ => None,
    }
}

/// A fjall error in words (fjall's own `Display` is its `Debug`).
fn describe(error: &fjall::Error) -> String {
    match io_error(error) {
        Some(e) if is_disk_full(e) => format!("the disk is full ({e})"),
        Some(e) => e.to_string(),
        None => error.to_string(),
    }
}

impl From<fjall::Error> for Error {
    /// Sorts a fjall error by what the caller does about it: corruption
    /// (checksums, undecodable files), a disk engine that refuses writes, or
    /// anything else.
    fn from(error: fjall::Error) -> Error {
        use fjall::LsmError as Lsm;
        const DAMAGED: &str = "a file of the data directory is damaged";
        match error {
            fjall::Error::Storage(Lsm::ChecksumMismatch { got, expected }) => {
                Error::Corrupt(format!(
                    "a block's checksum does not match its contents (stored {}, computed {}): \
                     {DAMAGED}",
                    expected.into_u128(),
                    got.into_u128()
                ))
            }
            fjall::Error::JournalRecovery(e) => Error::Corrupt(format!(
                "a batch of the journal does not verify ({e:?}) and it is not the torn tail of \
                 an interrupted write: {DAMAGED}"
            )),
            e @ (fjall::Error::Storage(
                Lsm::InvalidTrailer
                | Lsm::InvalidHeader(_)
                | Lsm::InvalidTag(_)
                | Lsm::Decompress(_)
                | Lsm::Utf8(_)
                | Lsm::Unrecoverable,
            )
            | fjall::Error::InvalidTrailer
            | fjall::Error::InvalidTag(_)
            | fjall::Error::Decompress(_)
            | fjall::Error::Unrecoverable) => Error::Corrupt(format!(
                "the disk engine cannot decode what it stored ({}): {DAMAGED}",
                describe(&e)
            )),
            fjall::Error::Poisoned => Error::Stopped(Stop {
                failed: Failed::Background,
                cause: "the disk engine refuses writes since an earlier failure (its log says \
                        which)"
                    .into(),
                disk_full: false,
            }),
            other => Error::Engine(other),
        }
    }
}
