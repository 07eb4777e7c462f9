//! The primitives of the binary forms in this crate: LEB128 varints and
//! length-prefixed byte strings, written to a `Vec<u8>` and read back by a
//! [`Reader`] that checks every length against the bytes that remain.
//!
//! A reader never allocates more than the input could hold: a length or a
//! count is refused when the rest of the input is too short for it, before
//! anything is reserved. So a hostile 10-byte entry claiming a billion
//! writes costs nothing.

use crate::error::DecodeError;
use rowtree_kv::replication::Write;

pub(crate) fn put_u8(out: &mut Vec<u8>, v: u8) {
    out.push(v);
}

pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

pub(crate) fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// Reads the primitives back, tracking the offset for error messages.
pub(crate) struct Reader<'a> {
    input: &'a [u8],
    offset: usize,
    what: &'static str,
}

impl<'a> Reader<'a> {
    pub fn new(input: &'a [u8], what: &'static str) -> Reader<'a> {
        Reader {
            input,
            offset: 0,
            what,
        }
    }

    pub fn error(&self, reason: impl Into<String>) -> DecodeError {
        DecodeError {
            what: self.what,
            offset: self.offset,
            reason: reason.into(),
        }
    }

    pub fn remaining(&self) -> usize {
        self.input.len() - self.offset
    }

    pub fn u8(&mut self) -> Result<u8, DecodeError> {
        match self.input.get(self.offset) {
            Some(&b) => {
                self.offset += 1;
                Ok(b)
            }
            None => Err(self.error("unexpected end of input")),
        }
    }

    pub fn varint(&mut self) -> Result<u64, DecodeError> {
        let start = self.offset;
        let mut value: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            let bits = u64::from(b & 0x7f);
            // The tenth byte may only carry the top bit of a u64.
            if shift == 63 && bits > 1 {
                self.offset = start;
                return Err(self.error("varint overflows 64 bits"));
            }
            value |= bits << shift;
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        self.offset = start;
        Err(self.error("varint longer than 10 bytes"))
    }

    /// A count of items each at least `min_size` bytes long, refused if the
    /// rest of the input cannot hold that many.
    pub fn count(&mut self, min_size: usize) -> Result<usize, DecodeError> {
        let n = self.varint()?;
        let fits = (self.remaining() / min_size.max(1)) as u64;
        if n > fits {
            return Err(self.error(format!(
                "count {n} does not fit in the {} bytes left",
                self.remaining()
            )));
        }
        Ok(n as usize)
    }

    pub fn bytes(&mut self) -> Result<&'a [u8], DecodeError> {
        let n = self.varint()?;
        if n > self.remaining() as u64 {
            return Err(self.error(format!(
                "length {n} runs past the end ({} bytes left)",
                self.remaining()
            )));
        }
        let n = n as usize;
        let out = &self.input[self.offset..self.offset + n];
        self.offset += n;
        Ok(out)
    }

    /// Reads the format version byte and refuses any but `format`.
    pub fn version(&mut self, format: u8) -> Result<(), DecodeError> {
        let version = self.u8()?;
        if version != format {
            self.offset = 0;
            return Err(self.error(format!(
                "format version {version} (this build reads {format})"
            )));
        }
        Ok(())
    }

    /// Refuses bytes left over after a complete value.
    pub fn finish(&self) -> Result<(), DecodeError> {
        if self.remaining() > 0 {
            return Err(self.error(format!("{} trailing bytes", self.remaining())));
        }
        Ok(())
    }
}

/// A key in hexadecimal, for messages (`''` when empty).
pub(crate) fn hex(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "''".into();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

const KIND_DELETE: u8 = 0;
const KIND_PUT: u8 = 1;

/// `count(writes) { key  kind [value] }`.
pub(crate) fn put_writes(out: &mut Vec<u8>, writes: &[Write]) {
    put_varint(out, writes.len() as u64);
    for (key, value) in writes {
        put_bytes(out, key);
        match value {
            None => put_u8(out, KIND_DELETE),
            Some(v) => {
                put_u8(out, KIND_PUT);
                put_bytes(out, v);
            }
        }
    }
}

/// Reads what [`put_writes`] wrote. A write is at least two bytes (key
/// length, kind).
pub(crate) fn read_writes(r: &mut Reader<'_>) -> Result<Vec<Write>, DecodeError> {
    let m = r.count(2)?;
    let mut writes = Vec::with_capacity(m);
    for _ in 0..m {
        let key = r.bytes()?.to_vec();
        let value = match r.u8()? {
            KIND_DELETE => None,
            KIND_PUT => Some(r.bytes()?.to_vec()),
            other => return Err(r.error(format!("write kind {other}"))),
        };
        writes.push((key, value));
    }
    Ok(writes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_at_every_width() {
        for v in [0, 1, 127, 128, 300, u32::MAX as u64, u64::MAX - 1, u64::MAX] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            let mut r = Reader::new(&out, "test");
            assert_eq!(r.varint().unwrap(), v);
            r.finish().unwrap();
        }
    }

    #[test]
    fn overlong_and_overflowing_varints_are_refused() {
        let eleven = [0x80u8; 11];
        let e = Reader::new(&eleven, "test").varint().unwrap_err();
        assert!(e.reason.contains("longer than 10 bytes"), "{e}");
        let mut overflow = vec![0xffu8; 9];
        overflow.push(0x02);
        let e = Reader::new(&overflow, "test").varint().unwrap_err();
        assert!(e.reason.contains("overflows"), "{e}");
    }

    #[test]
    fn lengths_and_counts_are_checked_against_the_input() {
        let mut out = Vec::new();
        put_varint(&mut out, 1 << 40);
        let e = Reader::new(&out, "test").bytes().unwrap_err();
        assert!(e.reason.contains("runs past the end"), "{e}");
        let e = Reader::new(&out, "test").count(2).unwrap_err();
        assert!(e.reason.contains("does not fit"), "{e}");
        assert_eq!(e.offset, out.len());
    }
}
