//! Values on the wire: PostgreSQL type OIDs, and the text and binary forms
//! of Rowtree's values in both directions.
//!
//! A PostgreSQL client learns each result column's type from its OID in
//! RowDescription and reads each value in the format it asked for at Bind
//! (text unless it asked for binary). Rowtree's types map onto PostgreSQL's
//! as Spanner's PostgreSQL interface maps them (docs/design/postgresql.md,
//! D5): `INT64` is `int8` (20), `STRING` is `varchar` (1043), `TIMESTAMP` is
//! `timestamptz` (1184), `JSON` is `jsonb` (3802), arrays are the element
//! type's array OID. Parameters come the other way: typed by the OIDs the
//! client gave at Parse (`int2`/`int4` widen to `INT64`, `timestamp` is read
//! as UTC), or, when the client left a parameter's type unspecified (OID 0,
//! what node-postgres and pgbench do), typed by the connection from where the
//! statement uses it (see `crate::infer`).
//!
//! The text forms are PostgreSQL's output forms: `t`/`f`, `\x`-hex `bytea`,
//! `2024-01-02 03:04:05.5+00` timestamps (always UTC: the session's
//! `TimeZone` is reported as `UTC`), `{1,2,NULL}` arrays, `jsonb` with
//! PostgreSQL's `{"a": 1}` spacing. The binary forms are PostgreSQL's send and
//! receive formats (big-endian integers, days and microseconds since
//! 2000-01-01, `numeric` in base-10000 digits).

use bytes::{BufMut, BytesMut};
use rowtree_types::{Date, Numeric, TimeZone, Timestamp, Type, Uuid, Value};

use crate::errors::PgError;

/// Type OIDs (PostgreSQL's `pg_type.oid`) this server sends or reads.
pub mod oid {
    pub const UNSPECIFIED: u32 = 0;
    pub const BOOL: u32 = 16;
    pub const BYTEA: u32 = 17;
    pub const NAME: u32 = 19;
    pub const INT8: u32 = 20;
    pub const INT2: u32 = 21;
    pub const INT4: u32 = 23;
    pub const TEXT: u32 = 25;
    pub const OID: u32 = 26;
    pub const JSON: u32 = 114;
    pub const FLOAT4: u32 = 700;
    pub const FLOAT8: u32 = 701;
    pub const UNKNOWN: u32 = 705;
    pub const BPCHAR: u32 = 1042;
    pub const VARCHAR: u32 = 1043;
    pub const DATE: u32 = 1082;
    pub const TIMESTAMP: u32 = 1114;
    pub const TIMESTAMPTZ: u32 = 1184;
    pub const NUMERIC: u32 = 1700;
    pub const UUID: u32 = 2950;
    pub const JSONB: u32 = 3802;
    pub const BOOL_ARRAY: u32 = 1000;
    pub const BYTEA_ARRAY: u32 = 1001;
    pub const INT2_ARRAY: u32 = 1005;
    pub const INT4_ARRAY: u32 = 1007;
    pub const TEXT_ARRAY: u32 = 1009;
    pub const VARCHAR_ARRAY: u32 = 1015;
    pub const INT8_ARRAY: u32 = 1016;
    pub const FLOAT4_ARRAY: u32 = 1021;
    pub const FLOAT8_ARRAY: u32 = 1022;
    pub const TIMESTAMP_ARRAY: u32 = 1115;
    pub const DATE_ARRAY: u32 = 1182;
    pub const TIMESTAMPTZ_ARRAY: u32 = 1185;
    pub const NUMERIC_ARRAY: u32 = 1231;
    pub const UUID_ARRAY: u32 = 2951;
    pub const JSONB_ARRAY: u32 = 3807;
}

/// The OID a result column of type `ty` is described with.
pub fn type_oid(ty: &Type) -> u32 {
    match ty {
        Type::Bool => oid::BOOL,
        Type::Int64 => oid::INT8,
        Type::Float32 => oid::FLOAT4,
        Type::Float64 => oid::FLOAT8,
        Type::Numeric => oid::NUMERIC,
        Type::String => oid::VARCHAR,
        Type::Bytes => oid::BYTEA,
        Type::Date => oid::DATE,
        Type::Timestamp => oid::TIMESTAMPTZ,
        Type::Json => oid::JSONB,
        Type::Uuid => oid::UUID,
        Type::Struct(_) => oid::TEXT,
        // PROTO and ENUM columns travel as what they are stored as.
        Type::Proto(_) | Type::Enum(_) => type_oid(&ty.representation()),
        Type::Array(e) => match &**e {
            Type::Bool => oid::BOOL_ARRAY,
            Type::Int64 => oid::INT8_ARRAY,
            Type::Float32 => oid::FLOAT4_ARRAY,
            Type::Float64 => oid::FLOAT8_ARRAY,
            Type::Numeric => oid::NUMERIC_ARRAY,
            Type::String => oid::VARCHAR_ARRAY,
            Type::Bytes => oid::BYTEA_ARRAY,
            Type::Date => oid::DATE_ARRAY,
            Type::Timestamp => oid::TIMESTAMPTZ_ARRAY,
            Type::Json => oid::JSONB_ARRAY,
            Type::Uuid => oid::UUID_ARRAY,
            Type::Proto(_) => oid::BYTEA_ARRAY,
            Type::Enum(_) => oid::INT8_ARRAY,
            Type::Array(_) | Type::Struct(_) => oid::TEXT_ARRAY,
        },
    }
}

/// The fixed size RowDescription reports for a type (-1: variable).
pub fn type_size(ty: &Type) -> i16 {
    match ty {
        Type::Bool => 1,
        Type::Int64 | Type::Float64 | Type::Timestamp | Type::Enum(_) => 8,
        Type::Float32 | Type::Date => 4,
        Type::Uuid => 16,
        _ => -1,
    }
}

/// The Rowtree type a parameter of OID `oid` binds as; `None` for an
/// unspecified (or `unknown`) type, which the connection infers.
pub fn type_of_oid(oid: u32) -> Result<Option<Type>, PgError> {
    let scalar = |o: u32| -> Option<Type> {
        Some(match o {
            oid::BOOL => Type::Bool,
            oid::INT8 | oid::INT2 | oid::INT4 | oid::OID => Type::Int64,
            oid::FLOAT4 => Type::Float32,
            oid::FLOAT8 => Type::Float64,
            oid::NUMERIC => Type::Numeric,
            oid::TEXT | oid::VARCHAR | oid::BPCHAR | oid::NAME => Type::String,
            oid::BYTEA => Type::Bytes,
            oid::DATE => Type::Date,
            oid::TIMESTAMP | oid::TIMESTAMPTZ => Type::Timestamp,
            oid::JSON | oid::JSONB => Type::Json,
            oid::UUID => Type::Uuid,
            _ => return None,
        })
    };
    let array = |e: u32| Some(Type::Array(Box::new(scalar(e)?)));
    if oid == oid::UNSPECIFIED || oid == oid::UNKNOWN {
        return Ok(None);
    }
    let ty = match oid {
        oid::BOOL_ARRAY => array(oid::BOOL),
        oid::BYTEA_ARRAY => array(oid::BYTEA),
        oid::INT2_ARRAY | oid::INT4_ARRAY | oid::INT8_ARRAY => array(oid::INT8),
        oid::TEXT_ARRAY | oid::VARCHAR_ARRAY => array(oid::TEXT),
        oid::FLOAT4_ARRAY => array(oid::FLOAT4),
        oid::FLOAT8_ARRAY => array(oid::FLOAT8),
        oid::TIMESTAMP_ARRAY | oid::TIMESTAMPTZ_ARRAY => array(oid::TIMESTAMPTZ),
        oid::DATE_ARRAY => array(oid::DATE),
        oid::NUMERIC_ARRAY => array(oid::NUMERIC),
        oid::UUID_ARRAY => array(oid::UUID),
        oid::JSONB_ARRAY => array(oid::JSONB),
        o => scalar(o),
    };
    match ty {
        Some(t) => Ok(Some(t)),
        None => Err(PgError::new(
            "0A000",
            format!("parameters of type OID {oid} are not supported"),
        )),
    }
}

fn invalid(ty: &Type, text: &str) -> PgError {
    PgError::new(
        "22P02",
        format!(
            "invalid input syntax for type {}: \"{}\"",
            pg_type_name(ty),
            text.chars().take(100).collect::<String>()
        ),
    )
}

/// PostgreSQL's name of a type, for messages and `format_type`.
pub fn pg_type_name(ty: &Type) -> String {
    match ty {
        Type::Bool => "boolean".into(),
        Type::Int64 => "bigint".into(),
        Type::Float32 => "real".into(),
        Type::Float64 => "double precision".into(),
        Type::Numeric => "numeric".into(),
        Type::String => "character varying".into(),
        Type::Bytes => "bytea".into(),
        Type::Date => "date".into(),
        Type::Timestamp => "timestamp with time zone".into(),
        Type::Json => "jsonb".into(),
        Type::Uuid => "uuid".into(),
        Type::Array(e) => format!("{}[]", pg_type_name(e)),
        Type::Struct(_) => "record".into(),
        Type::Proto(_) | Type::Enum(_) => pg_type_name(&ty.representation()),
    }
}

/// Reads a value of type `ty` from PostgreSQL's text form (parameters in
/// text format, COPY's fields).
pub fn from_text(ty: &Type, text: &str) -> Result<Value, PgError> {
    let bad = || invalid(ty, text);
    Ok(match ty {
        Type::Bool => match text.trim().to_ascii_lowercase().as_str() {
            "t" | "true" | "yes" | "y" | "on" | "1" => Value::Bool(true),
            "f" | "false" | "no" | "n" | "off" | "0" => Value::Bool(false),
            _ => return Err(bad()),
        },
        Type::Int64 => Value::Int64(text.trim().parse().map_err(|_| bad())?),
        Type::Float32 => Value::Float32(parse_float(text).ok_or_else(bad)? as f32),
        Type::Float64 => Value::Float64(parse_float(text).ok_or_else(bad)?),
        Type::Numeric => Value::Numeric(exact_numeric(text.trim())?),
        Type::String => Value::String(text.to_string()),
        Type::Bytes => Value::Bytes(parse_bytea(text).ok_or_else(bad)?),
        Type::Date => Value::Date(Date::parse(text).map_err(|_| bad())?),
        Type::Timestamp => Value::Timestamp(parse_timestamp(text).ok_or_else(bad)?),
        Type::Json => Value::Json(rowtree_types::parse_json(text).map_err(|_| bad())?),
        Type::Uuid => Value::Uuid(Uuid::parse(text.trim()).map_err(|_| bad())?),
        Type::Array(e) => {
            let items = parse_array(text).ok_or_else(bad)?;
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                out.push(match item {
                    None => Value::Null,
                    Some(s) => from_text(e, &s)?,
                });
            }
            Value::Array(out)
        }
        Type::Struct(_) => return Err(bad()),
        Type::Proto(_) | Type::Enum(_) => return from_text(&ty.representation(), text),
    })
}

fn parse_float(text: &str) -> Option<f64> {
    match text.trim().to_ascii_lowercase().as_str() {
        "nan" => Some(f64::NAN),
        "infinity" | "+infinity" | "inf" => Some(f64::INFINITY),
        "-infinity" | "-inf" => Some(f64::NEG_INFINITY),
        t => t.parse().ok(),
    }
}

/// `bytea` input: `\x` followed by hex digits, or the escape form
/// (`\\` and `\ooo` octal escapes, other bytes as they are).
fn parse_bytea(text: &str) -> Option<Vec<u8>> {
    if let Some(hex) = text.strip_prefix("\\x") {
        let digits: Vec<u8> = hex.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
        if digits.len() % 2 != 0 {
            return None;
        }
        return digits
            .chunks(2)
            .map(|p| u8::from_str_radix(std::str::from_utf8(p).ok()?, 16).ok())
            .collect();
    }
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' {
            if b.get(i + 1) == Some(&b'\\') {
                out.push(b'\\');
                i += 2;
            } else {
                let oct = std::str::from_utf8(b.get(i + 1..i + 4)?).ok()?;
                out.push(u8::from_str_radix(oct, 8).ok()?);
                i += 4;
            }
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Some(out)
}

/// A timestamp as clients send it: ISO 8601 with or without a zone (none
/// reads as UTC, the session's time zone); `+00`, `+05:30`, `Z` offsets.
fn parse_timestamp(text: &str) -> Option<Timestamp> {
    let t = text.trim();
    if let Ok(ts) = Timestamp::parse(t, &TimeZone::UTC) {
        return Some(ts);
    }
    // PostgreSQL prints a space-less offset after the time (`...05+00`),
    // which the engine reads; psycopg sends `+00:00`. Retry without a
    // space before the offset.
    let fixed = t.replacen(" +", "+", 1).replacen(" -", "-", 1);
    Timestamp::parse(&fixed, &TimeZone::UTC).ok()
}

/// Splits a one-dimensional array literal `{a,"b c",NULL}` into its
/// elements (`None` for NULL).
fn parse_array(text: &str) -> Option<Vec<Option<String>>> {
    let inner = text.trim().strip_prefix('{')?.strip_suffix('}')?;
    let mut out = Vec::new();
    if inner.trim().is_empty() {
        return Some(out);
    }
    let mut chars = inner.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let mut item = String::new();
        let quoted = chars.peek() == Some(&'"');
        if quoted {
            chars.next();
            loop {
                match chars.next()? {
                    '\\' => item.push(chars.next()?),
                    '"' => break,
                    c => item.push(c),
                }
            }
            while chars.peek().is_some_and(|c| c.is_whitespace()) {
                chars.next();
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == ',' {
                    break;
                }
                if c == '{' || c == '"' {
                    return None;
                }
                item.push(c);
                chars.next();
            }
            item = item.trim().to_string();
        }
        if !quoted && item.eq_ignore_ascii_case("NULL") {
            out.push(None);
        } else {
            out.push(Some(item));
        }
        match chars.next() {
            None => return Some(out),
            Some(',') => {}
            Some(_) => return None,
        }
    }
}

/// Days from 1970-01-01 to PostgreSQL's epoch, 2000-01-01.
const PG_EPOCH_DAYS: i64 = 10_957;
/// Microseconds from 1970-01-01 to 2000-01-01.
const PG_EPOCH_MICROS: i64 = PG_EPOCH_DAYS * 86_400 * 1_000_000;

/// Reads a parameter sent in binary format as type `ty`, which the client
/// described with `sent_oid` (an `int4` is four bytes, an `int8` eight).
pub fn from_binary(ty: &Type, sent_oid: u32, b: &[u8]) -> Result<Value, PgError> {
    let bad = || {
        PgError::new(
            "22P03",
            format!(
                "incorrect binary data format for a parameter of type {}",
                pg_type_name(ty)
            ),
        )
    };
    let fixed = |n: usize| -> Result<&[u8], PgError> {
        if b.len() == n {
            Ok(b)
        } else {
            Err(bad())
        }
    };
    Ok(match ty {
        Type::Bool => Value::Bool(fixed(1)?[0] != 0),
        Type::Int64 => Value::Int64(match b.len() {
            2 => i16::from_be_bytes([b[0], b[1]]) as i64,
            4 => i32::from_be_bytes(b.try_into().map_err(|_| bad())?) as i64,
            8 => i64::from_be_bytes(b.try_into().map_err(|_| bad())?),
            _ => return Err(bad()),
        }),
        Type::Float32 => {
            Value::Float32(f32::from_be_bytes(fixed(4)?.try_into().map_err(|_| bad())?))
        }
        Type::Float64 => Value::Float64(match b.len() {
            4 => f32::from_be_bytes(b.try_into().map_err(|_| bad())?) as f64,
            8 => f64::from_be_bytes(b.try_into().map_err(|_| bad())?),
            _ => return Err(bad()),
        }),
        Type::Numeric => Value::Numeric(exact_numeric(
            &numeric_text_from_binary(b).ok_or_else(bad)?,
        )?),
        Type::String => Value::String(String::from_utf8(b.to_vec()).map_err(|_| bad())?),
        Type::Bytes => Value::Bytes(b.to_vec()),
        Type::Date => {
            let days = i32::from_be_bytes(fixed(4)?.try_into().map_err(|_| bad())?) as i64;
            let d = i32::try_from(days + PG_EPOCH_DAYS).map_err(|_| bad())?;
            Value::Date(Date::from_days(d).ok_or_else(bad)?)
        }
        Type::Timestamp => {
            let micros = i64::from_be_bytes(fixed(8)?.try_into().map_err(|_| bad())?);
            let nanos = (micros as i128 + PG_EPOCH_MICROS as i128) * 1000;
            Value::Timestamp(Timestamp::from_nanos(nanos).ok_or_else(bad)?)
        }
        Type::Json => {
            let text = if sent_oid == oid::JSONB {
                match b.split_first() {
                    Some((1, rest)) => rest,
                    _ => return Err(bad()),
                }
            } else {
                b
            };
            let text = std::str::from_utf8(text).map_err(|_| bad())?;
            Value::Json(rowtree_types::parse_json(text).map_err(|_| bad())?)
        }
        Type::Uuid => Value::Uuid(Uuid::parse(&hex_uuid(fixed(16)?)).map_err(|_| bad())?),
        Type::Array(e) => Value::Array(array_from_binary(e, b).ok_or_else(bad)?),
        Type::Struct(_) => return Err(bad()),
        Type::Proto(_) | Type::Enum(_) => return from_binary(&ty.representation(), sent_oid, b),
    })
}

fn hex_uuid(b: &[u8]) -> String {
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

fn array_from_binary(elem: &Type, b: &[u8]) -> Option<Vec<Value>> {
    let mut r = Reader(b);
    let ndim = r.i32()?;
    let _has_null = r.i32()?;
    let elem_oid = r.i32()? as u32;
    if ndim == 0 {
        return Some(Vec::new());
    }
    if ndim != 1 {
        return None;
    }
    let len = r.i32()?;
    let _lower = r.i32()?;
    if len < 0 || len as usize > b.len() {
        return None;
    }
    let mut out = Vec::with_capacity(len as usize);
    for _ in 0..len {
        let n = r.i32()?;
        if n < 0 {
            out.push(Value::Null);
        } else {
            let bytes = r.take(n as usize)?;
            out.push(from_binary(elem, elem_oid, bytes).ok()?);
        }
    }
    Some(out)
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    fn i32(&mut self) -> Option<i32> {
        Some(i32::from_be_bytes(self.take(4)?.try_into().ok()?))
    }
    fn i16(&mut self) -> Option<i16> {
        Some(i16::from_be_bytes(self.take(2)?.try_into().ok()?))
    }
}

/// A `numeric` a client sent, read exactly: Rowtree's numeric holds 29
/// digits before the point and 9 after it (PostgreSQL's and Spanner's hold
/// far more), and a value it would have to round or cannot hold is refused
/// with `22003` (PostgreSQL's "numeric field overflow" class) rather than
/// stored as something else; text that is no number is `22P02`.
fn exact_numeric(text: &str) -> Result<Numeric, PgError> {
    let refused = |e: rowtree_types::Error| {
        PgError::new(
            "22003",
            format!(
                "{e}; numeric holds at most 29 digits before the decimal point and 9 after it \
                 here, and a value it cannot hold exactly is refused rather than rounded"
            ),
        )
    };
    match Numeric::parse(text) {
        Err(e @ rowtree_types::Error::OutOfRange(_)) => Err(refused(e)),
        Err(_) => Err(invalid(&Type::Numeric, text)),
        Ok(_) => Numeric::parse_exact(text).map_err(refused),
    }
}

/// PostgreSQL's binary `numeric` (digit count, weight, sign, display
/// scale, then base-10000 digits) as decimal text; `None` for NaN or a
/// malformed value.
fn numeric_text_from_binary(b: &[u8]) -> Option<String> {
    let mut r = Reader(b);
    let ndigits = r.i16()?;
    let weight = r.i16()? as i32;
    let sign = r.i16()? as u16;
    let _dscale = r.i16()?;
    if sign == 0xC000 {
        return None; // NaN
    }
    let mut text = String::new();
    if sign == 0x4000 {
        text.push('-');
    }
    let digits: Vec<i16> = (0..ndigits).map(|_| r.i16()).collect::<Option<_>>()?;
    // Integer part: digit groups 0..=weight.
    if weight < 0 {
        text.push('0');
    }
    for i in 0..=weight.max(-1) {
        let d = digits.get(i as usize).copied().unwrap_or(0);
        if i == 0 {
            text.push_str(&d.to_string());
        } else {
            text.push_str(&format!("{d:04}"));
        }
    }
    let mut frac = String::new();
    for i in (weight + 1)..(ndigits as i32) {
        if i < 0 {
            continue;
        }
        frac.push_str(&format!("{:04}", digits[i as usize]));
    }
    let lead_zero_groups = (-(weight + 1)).max(0);
    let frac = "0000".repeat(lead_zero_groups as usize) + &frac;
    if !frac.is_empty() {
        text.push('.');
        text.push_str(&frac);
    }
    Some(text)
}

fn numeric_to_binary(n: Numeric, out: &mut BytesMut) {
    let text = n.to_string();
    let (negative, text) = match text.strip_prefix('-') {
        Some(t) => (true, t.to_string()),
        None => (false, text),
    };
    let (int, frac) = match text.split_once('.') {
        Some((i, f)) => (i.to_string(), f.to_string()),
        None => (text.clone(), String::new()),
    };
    let dscale = frac.len() as i16;
    let int = int.trim_start_matches('0');
    // Pad the integer part on the left and the fraction on the right to
    // whole base-10000 groups.
    let pad = (4 - int.len() % 4) % 4;
    let int = "0".repeat(pad) + int;
    let fpad = (4 - frac.len() % 4) % 4;
    let frac = frac + &"0".repeat(fpad);
    let mut groups: Vec<i16> = Vec::new();
    for c in int.as_bytes().chunks(4).chain(frac.as_bytes().chunks(4)) {
        groups.push(std::str::from_utf8(c).unwrap_or("0").parse().unwrap_or(0));
    }
    let mut weight = (int.len() / 4) as i16 - 1;
    // Drop leading zero groups (adjusting the weight) and trailing ones.
    while groups.first() == Some(&0) {
        groups.remove(0);
        weight -= 1;
    }
    while groups.last() == Some(&0) {
        groups.pop();
    }
    if groups.is_empty() {
        weight = 0;
    }
    out.put_i16(groups.len() as i16);
    out.put_i16(weight);
    out.put_u16(if negative { 0x4000 } else { 0 });
    out.put_i16(dscale);
    for g in groups {
        out.put_i16(g);
    }
}

/// Appends `v` (of type `ty`) in PostgreSQL's text form.
pub fn to_text(v: &Value, out: &mut String) {
    use std::fmt::Write as _;
    match v {
        Value::Null => out.push_str("NULL"),
        Value::Bool(b) => out.push(if *b { 't' } else { 'f' }),
        Value::Int64(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Float32(f) => out.push_str(&format_float(*f as f64, Some(*f))),
        Value::Float64(f) => out.push_str(&format_float(*f, None)),
        Value::Numeric(n) => {
            let _ = write!(out, "{n}");
        }
        Value::String(s) => out.push_str(s),
        Value::Bytes(b) => {
            out.push_str("\\x");
            for x in b {
                let _ = write!(out, "{x:02x}");
            }
        }
        Value::Date(d) => {
            let _ = write!(out, "{d}");
        }
        Value::Timestamp(t) => out.push_str(&format_timestamp(*t)),
        Value::Json(j) => write_jsonb(j, out),
        Value::Uuid(u) => {
            let _ = write!(out, "{u}");
        }
        Value::Array(items) => {
            out.push('{');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if item.is_null() {
                    out.push_str("NULL");
                    continue;
                }
                let mut s = String::new();
                to_text(item, &mut s);
                let needs_quotes = s.is_empty()
                    || s.eq_ignore_ascii_case("null")
                    || s.chars()
                        .any(|c| matches!(c, ',' | '{' | '}' | '"' | '\\') || c.is_whitespace());
                if needs_quotes {
                    out.push('"');
                    for c in s.chars() {
                        if c == '"' || c == '\\' {
                            out.push('\\');
                        }
                        out.push(c);
                    }
                    out.push('"');
                } else {
                    out.push_str(&s);
                }
            }
            out.push('}');
        }
        Value::Struct(fields) => {
            out.push('(');
            for (i, f) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if !f.is_null() {
                    to_text(f, out);
                }
            }
            out.push(')');
        }
    }
}

/// Floats as PostgreSQL prints them (shortest text that reads back).
fn format_float(f: f64, single: Option<f32>) -> String {
    if f.is_nan() {
        "NaN".into()
    } else if f.is_infinite() {
        if f > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else if let Some(s) = single {
        format!("{s}")
    } else {
        format!("{f}")
    }
}

/// `2024-01-02 03:04:05.25+00`: UTC, microseconds at most, trailing zeros
/// trimmed.
fn format_timestamp(t: Timestamp) -> String {
    let (secs, nanos) = t.to_seconds_nanos();
    let Some(dt) = chrono::DateTime::from_timestamp(secs, 0) else {
        return t.to_rfc3339();
    };
    let mut s = dt.format("%Y-%m-%d %H:%M:%S").to_string();
    let micros = nanos / 1000;
    if micros != 0 {
        let frac = format!("{micros:06}");
        s.push('.');
        s.push_str(frac.trim_end_matches('0'));
    }
    s.push_str("+00");
    s
}

/// `jsonb`'s output form: `{"a": 1, "b": [1, 2]}`.
fn write_jsonb(j: &serde_json::Value, out: &mut String) {
    match j {
        serde_json::Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_jsonb(item, out);
            }
            out.push(']');
        }
        serde_json::Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&serde_json::Value::String(k.clone()).to_string());
                out.push_str(": ");
                write_jsonb(v, out);
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// Appends `v` in PostgreSQL's binary form for type `ty`.
pub fn to_binary(ty: &Type, v: &Value, out: &mut BytesMut) {
    match v {
        Value::Bool(b) => out.put_u8(*b as u8),
        Value::Int64(i) => out.put_i64(*i),
        Value::Float32(f) => out.put_f32(*f),
        Value::Float64(f) => out.put_f64(*f),
        Value::Numeric(n) => numeric_to_binary(*n, out),
        Value::String(s) => out.put_slice(s.as_bytes()),
        Value::Bytes(b) => out.put_slice(b),
        Value::Date(d) => out.put_i32((d.days() as i64 - PG_EPOCH_DAYS) as i32),
        Value::Timestamp(t) => {
            let micros = t.nanos().div_euclid(1000) - PG_EPOCH_MICROS as i128;
            out.put_i64(micros as i64);
        }
        Value::Json(j) => {
            out.put_u8(1);
            let mut s = String::new();
            write_jsonb(j, &mut s);
            out.put_slice(s.as_bytes());
        }
        Value::Uuid(u) => {
            let text = u.to_string().replace('-', "");
            for i in 0..16 {
                out.put_u8(u8::from_str_radix(&text[2 * i..2 * i + 2], 16).unwrap_or(0));
            }
        }
        Value::Array(items) => {
            let elem = match ty {
                Type::Array(e) => (**e).clone(),
                _ => Type::String,
            };
            out.put_i32(1);
            out.put_i32(items.iter().any(Value::is_null) as i32);
            out.put_u32(type_oid(&elem));
            out.put_i32(items.len() as i32);
            out.put_i32(1);
            for item in items {
                if item.is_null() {
                    out.put_i32(-1);
                    continue;
                }
                let mut b = BytesMut::new();
                to_binary(&elem, item, &mut b);
                out.put_i32(b.len() as i32);
                out.put_slice(&b);
            }
        }
        Value::Null | Value::Struct(_) => {
            let mut s = String::new();
            to_text(v, &mut s);
            out.put_slice(s.as_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_round_trips_through_binary() {
        for text in [
            "0",
            "1",
            "-1",
            "12345.6789",
            "0.0001",
            "100000000",
            "-0.5",
            "9999.00001",
        ] {
            let n = Numeric::parse(text).unwrap();
            let mut b = BytesMut::new();
            numeric_to_binary(n, &mut b);
            let back = numeric_text_from_binary(&b).unwrap();
            assert_eq!(exact_numeric(&back).ok(), Some(n), "{text}");
        }
    }

    #[test]
    fn numeric_parameters_are_never_rounded() {
        let n = |t: &str| from_text(&Type::Numeric, t);
        assert_eq!(
            n("2.500000000000").ok(),
            Some(Value::Numeric(Numeric::parse("2.5").unwrap()))
        );
        let err = n("3.1415926535").unwrap_err();
        assert_eq!(err.sqlstate, "22003", "{err:?}");
        assert!(err.message.contains("more than 9 digits"), "{err:?}");
        assert_eq!(n("1e40").unwrap_err().sqlstate, "22003");
        assert_eq!(n("abc").unwrap_err().sqlstate, "22P02");
    }

    #[test]
    fn text_forms_are_postgresqls() {
        let mut s = String::new();
        to_text(
            &Value::Array(vec![
                Value::String("a b".into()),
                Value::Null,
                Value::String("c".into()),
            ]),
            &mut s,
        );
        assert_eq!(s, "{\"a b\",NULL,c}");
        assert_eq!(
            parse_array("{\"a b\",NULL,c}").unwrap(),
            vec![Some("a b".to_string()), None, Some("c".to_string())]
        );
        let ts = parse_timestamp("2024-01-02 03:04:05.25+00").unwrap();
        assert_eq!(format_timestamp(ts), "2024-01-02 03:04:05.25+00");
        assert_eq!(parse_bytea("\\x0aff"), Some(vec![10, 255]));
    }
}
