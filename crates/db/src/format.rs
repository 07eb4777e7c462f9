//! The on-disk format version of a database.
//!
//! Everything a database stores (key and row encodings, the MVCC layout, the
//! metadata keys; `docs/architecture/on-disk-format.md` describes it byte by
//! byte) is one *format*, numbered [`FORMAT_VERSION`]. The number is recorded
//! in the metadata space when a database is created and checked every time
//! it is opened, before anything else is read:
//!
//! * no marker: a new database, or one created before the marker existed
//!   (which is format 1, and this build reads it): the marker for
//!   [`FORMAT_VERSION`] is written, durably, before anything else;
//! * the version this build writes: open;
//! * an older version this build reads ([`UPGRADED`]): the marker is raised
//!   to [`FORMAT_VERSION`] first, durably, because what this build writes
//!   from then on an older build would misread (see below);
//! * any other number (a newer Rowtree wrote it, or it is not one we ever
//!   wrote): refused with [`Error::UnsupportedFormat`], which names both
//!   versions. Nothing is read or written, so the directory is left as it was.
//!
//! Format 2 added row heads (`rowtree_storage::mvcc`, "The head of a row"):
//! every write also records the row's newest timestamp in the `heads`
//! space, and reads trust it. A format 1 directory has no heads, which reads
//! handle (they seek instead), so it opens as it is; but a format 1 build
//! writing to a directory with heads would leave them stale, and a later
//! read through a stale head would return an older version. Raising the
//! marker makes older builds refuse the directory.
//!
//! A change to anything the format document describes gets a new version
//! number and a note there, and this module decides what an older version
//! needs (read as is, or refuse).
//!
//! Beside the version, the metadata records the database's SQL dialect
//! (the key `format/dialect`): written once when a PostgreSQL-dialect database is
//! created, read on every open before the DDL log is replayed (the log holds
//! statement texts, parsed in that dialect). A database without the record
//! is GoogleSQL, which is every database created before dialects existed, so
//! the record needs no new format version: a GoogleSQL database's metadata
//! is exactly what it was.

use rowtree_kv::Router;
use rowtree_storage::{Durability, WriteBatch};
use rowtree_types::Dialect;

use crate::error::{Error, Result};

/// The on-disk format this build reads and writes.
pub const FORMAT_VERSION: u32 = 2;

/// Older formats this build reads, raising their marker to
/// [`FORMAT_VERSION`] when it opens them (see the module docs).
pub const UPGRADED: &[u32] = &[1];

/// The metadata key of the format marker: its value is the version as 4
/// big-endian bytes.
pub(crate) const META_FORMAT_VERSION: &[u8] = b"format/version";

/// The metadata key of the dialect record: `POSTGRESQL` (the admin API's
/// name, [`Dialect::api_name`]) for a PostgreSQL-dialect database; absent
/// for GoogleSQL.
pub(crate) const META_DIALECT: &[u8] = b"format/dialect";

/// Checks the format marker of the database behind `router`, writing it
/// (durably) if the database has none. See the module docs. Returns `true`
/// when there was no marker (a new database, or one from before markers).
pub(crate) fn check(router: &Router) -> Result<bool> {
    let write_marker = || -> Result<()> {
        let mut batch = WriteBatch::new();
        router.stage_meta(
            &mut batch,
            META_FORMAT_VERSION.to_vec(),
            Some(FORMAT_VERSION.to_be_bytes().to_vec()),
        );
        router.write(batch, Durability::Sync)?;
        Ok(())
    };
    match router.meta_get(META_FORMAT_VERSION)? {
        None => {
            write_marker()?;
            Ok(true)
        }
        Some(bytes) => {
            let bytes: [u8; 4] = bytes.as_slice().try_into().map_err(|_| Error::DataLoss {
                message: format!(
                    "the on-disk format marker has {} bytes, not 4: the metadata is damaged",
                    bytes.len()
                ),
            })?;
            match u32::from_be_bytes(bytes) {
                FORMAT_VERSION => Ok(false),
                older if UPGRADED.contains(&older) => {
                    write_marker()?;
                    Ok(false)
                }
                found => Err(Error::UnsupportedFormat {
                    found,
                    supported: FORMAT_VERSION,
                }),
            }
        }
    }
}

/// The dialect of the database behind `router`. `create` is the dialect to
/// record for a database being created (`None` when opening an existing
/// one): a PostgreSQL database gets its record, durably, before anything
/// else is written; a GoogleSQL one is recognised by having none.
pub(crate) fn dialect(router: &Router, create: Option<Dialect>) -> Result<Dialect> {
    match router.meta_get(META_DIALECT)? {
        Some(bytes) => std::str::from_utf8(&bytes)
            .ok()
            .and_then(Dialect::from_api_name)
            .ok_or_else(|| Error::DataLoss {
                message: format!(
                    "the database's dialect record is not a dialect this build knows: {:?}",
                    String::from_utf8_lossy(&bytes)
                ),
            }),
        None => match create {
            Some(Dialect::PostgreSql) => {
                let mut batch = WriteBatch::new();
                router.stage_meta(
                    &mut batch,
                    META_DIALECT.to_vec(),
                    Some(Dialect::PostgreSql.api_name().as_bytes().to_vec()),
                );
                router.write(batch, Durability::Sync)?;
                Ok(Dialect::PostgreSql)
            }
            _ => Ok(Dialect::GoogleSql),
        },
    }
}
