//! Byte encodings of Rowtree's values: the bottom layer of the storage stack.
//!
//! Two codecs live here, with opposite goals:
//!
//! * [`key`]: the *order-preserving* key codec. A primary or index key (a list of
//!   columns, each ASC or DESC) becomes a byte string whose lexicographic
//!   (`memcmp`) order is exactly GoogleSQL's order of the keys. The ordered
//!   key-value store below therefore keeps rows sorted by primary key, and a
//!   key-prefix predicate becomes a contiguous byte range. Column encodings are
//!   self-delimiting, so concatenating them keeps the order of the tuple.
//! * [`row`]: the *compact, self-describing* row codec for the non-key part of a
//!   row, stored as `(column_id, value)` pairs so that adding or dropping a column
//!   never rewrites data.
//!
//! Both decode untrusted bytes (a corrupt file, a bug elsewhere) without
//! panicking: every decoder returns [`Error`] instead.

mod error;
pub mod key;
pub mod row;
mod varint;

pub use error::{Error, Result};
pub use key::{
    decode_key_value, decode_object, encode_key_value, encode_object, prefix_end, Direction,
    OBJECT_MARKER, ROW_END,
};
pub use row::{decode_row, decode_row_with, encode_row, encode_row_into};
