//! Hashes and bits: `FARM_FINGERPRINT` (the hash Spanner recommends for
//! spreading keys), the cryptographic digests `MD5`, `SHA1`, `SHA256` and
//! `SHA512` (BYTES results), `BIT_COUNT` and `BIT_REVERSE` (what
//! bit-reversed sequences are built on).

use rowtree_types::Value;

use super::args::{bytes_of, internal};
use crate::{EvalContext, Result};

pub(super) fn eval_hash(args: &[Value], algorithm: &str) -> Result<Value> {
    use sha2::Digest;
    let input = bytes_of(&args[0])?;
    Ok(Value::Bytes(match algorithm {
        "MD5" => md5::Md5::digest(input).to_vec(),
        "SHA1" => sha1::Sha1::digest(input).to_vec(),
        "SHA256" => sha2::Sha256::digest(input).to_vec(),
        _ => sha2::Sha512::digest(input).to_vec(),
    }))
}

pub(super) fn eval_bit_count(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    Ok(Value::Int64(match &args[0] {
        Value::Int64(v) => v.count_ones() as i64,
        Value::Bytes(b) => b.iter().map(|x| x.count_ones() as i64).sum(),
        _ => return Err(internal("BIT_COUNT")),
    }))
}

/// Reverses the bits of `v`. With `preserve_sign` the sign bit stays in
/// place and only the 63 value bits are reversed, so a non-negative input
/// gives a non-negative output (`BIT_REVERSE(100, true)` is
/// 1369094286720630784, what bit-reversed sequences rely on).
fn bit_reverse(v: i64, preserve_sign: bool) -> i64 {
    if preserve_sign {
        let sign = v & i64::MIN;
        let value_bits = (v as u64) & (i64::MAX as u64);
        sign | (value_bits.reverse_bits() >> 1) as i64
    } else {
        (v as u64).reverse_bits() as i64
    }
}

pub(super) fn eval_farm_fingerprint(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    Ok(Value::Int64(
        farmhash2::fingerprint64(bytes_of(&args[0])?) as i64
    ))
}

pub(super) fn eval_bit_reverse(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    match (&args[0], &args[1]) {
        (Value::Int64(v), Value::Bool(preserve_sign)) => {
            Ok(Value::Int64(bit_reverse(*v, *preserve_sign)))
        }
        _ => Err(internal("BIT_REVERSE")),
    }
}
