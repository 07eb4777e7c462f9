//! `JSON`: parsing text into a value with Spanner's rules.
//!
//! serde_json does most of the work, and its default sorted map already
//! matches the key order Spanner prints. Two rules differ from serde_json's
//! defaults:
//!
//! * **Duplicate keys:** Spanner keeps the *first* occurrence of a key in an
//!   object; serde_json keeps the last. [`parse_json`] deserializes through
//!   its own visitor that ignores later duplicates.
//! * **Numbers:** Spanner stores a JSON number as an `INT64`/`UINT64` if it is
//!   an integer in range, else as a `FLOAT64`, and refuses numbers that would
//!   change on the way (`1.00000000000000000001`, `1e400`). serde_json
//!   silently rounds them, so [`parse_json`] first scans the text's number
//!   tokens and checks each one round-trips: the token and the shortest
//!   decimal of its `f64` must denote the same number.

use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value as Json};

use crate::{Error, Result};

/// How deep arrays and objects may nest in a JSON value. Values are stored
/// as JSON text, and the decoder that reads them back refuses deeper text
/// (serde_json stops at 128 levels), so every value that reaches storage
/// must stay within this.
pub const MAX_JSON_DEPTH: usize = 100;

/// Parses JSON text with Spanner's rules (first duplicate key wins, numbers
/// must round-trip through `FLOAT64` unless they are 64-bit integers), and
/// nesting at most [`MAX_JSON_DEPTH`] levels.
pub fn parse_json(text: &str) -> Result<Json> {
    check_text_depth(text)?;
    check_numbers(text)?;
    let mut de = serde_json::Deserializer::from_str(text);
    let value = FirstKeyWins
        .deserialize(&mut de)
        .and_then(|v| de.end().map(|_| v))
        .map_err(|e| Error::InvalidArgument(format!("Invalid JSON: {e}")))?;
    Ok(value)
}

/// Checks that `value` nests at most [`MAX_JSON_DEPTH`] levels (without
/// recursing: the value may come from anywhere).
pub fn check_json_depth(value: &Json) -> Result<()> {
    let mut stack = vec![(value, 0usize)];
    while let Some((v, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Json>> = match v {
            Json::Array(items) => Box::new(items.iter()),
            Json::Object(members) => Box::new(members.values()),
            _ => continue,
        };
        if depth + 1 > MAX_JSON_DEPTH {
            return Err(too_deep());
        }
        stack.extend(children.map(|c| (c, depth + 1)));
    }
    Ok(())
}

fn too_deep() -> Error {
    Error::OutOfRange(format!(
        "JSON value nests deeper than {MAX_JSON_DEPTH} levels"
    ))
}

/// The nesting of JSON text, from its brackets outside strings, so that too
/// deep a text is refused with the same message before it is parsed.
fn check_text_depth(text: &str) -> Result<()> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for b in text.bytes() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_JSON_DEPTH {
                    return Err(too_deep());
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// Builds a `serde_json::Value`, keeping the first of duplicate keys.
struct FirstKeyWins;

impl<'de> DeserializeSeed<'de> for FirstKeyWins {
    type Value = Json;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> std::result::Result<Json, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for FirstKeyWins {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> std::result::Result<Json, E> {
        Ok(Json::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> std::result::Result<Json, E> {
        Ok(Json::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> std::result::Result<Json, E> {
        Ok(Json::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<Json, E> {
        Number::from_f64(v)
            .map(Json::Number)
            .ok_or_else(|| E::custom("number out of range"))
    }

    fn visit_str<E>(self, v: &str) -> std::result::Result<Json, E> {
        Ok(Json::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> std::result::Result<Json, E> {
        Ok(Json::String(v))
    }

    fn visit_unit<E>(self) -> std::result::Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(FirstKeyWins)? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Json, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(FirstKeyWins)?;
            object.entry(key).or_insert(value);
        }
        Ok(Json::Object(object))
    }
}

/// Checks every number token outside strings (see the module docs).
fn check_numbers(text: &str) -> Result<()> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                // Skip the string, honouring backslash escapes.
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < bytes.len()
                    && matches!(bytes[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                {
                    i += 1;
                }
                check_number(&text[start..i])?;
            }
            _ => i += 1,
        }
    }
    Ok(())
}

fn check_number(token: &str) -> Result<()> {
    let is_integer = !token.contains(['.', 'e', 'E']);
    if is_integer && (token.parse::<i64>().is_ok() || token.parse::<u64>().is_ok()) {
        return Ok(());
    }
    let lossy = || {
        Error::InvalidArgument(format!(
            "Invalid JSON: number {token} cannot be stored as FLOAT64 without loss of precision"
        ))
    };
    // Malformed tokens are left to serde_json's syntax error.
    let Ok(f) = token.parse::<f64>() else {
        return Ok(());
    };
    if !f.is_finite() {
        return Err(lossy());
    }
    // Where two decimals of the same length are equally short for `f`
    // (900719925474099.2 and .3 for 900719925474099.25), Rust's formatting
    // and serde_json's (what Rowtree prints JSON with) may pick different
    // ones; either denotes `f`, and the one Rowtree prints must parse back.
    let printed = serde_json::Number::from_f64(f).map(|n| n.to_string());
    let Some(digits) = decimal_digits(token) else {
        return Ok(());
    };
    let shortest = [Some(format!("{f:e}")), printed];
    if shortest
        .iter()
        .flatten()
        .any(|s| decimal_digits(s).as_ref() == Some(&digits))
    {
        Ok(())
    } else {
        Err(lossy())
    }
}

/// A decimal number's significant digits (no leading/trailing zeros) and the
/// power of ten of its first digit; `("", 0)` for zero.
fn decimal_digits(text: &str) -> Option<(String, i64)> {
    let s = text.trim_start_matches(['-', '+']);
    let (mantissa, exp) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], exponent(&s[i + 1..])?),
        None => (s, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all = format!("{int}{frac}");
    let leading = all.len() - all.trim_start_matches('0').len();
    let digits = all.trim_matches('0').to_owned();
    if digits.is_empty() {
        return Some((digits, 0));
    }
    let first_digit_power = (int.len() as i64 - 1 - leading as i64).saturating_add(exp);
    Some((digits, first_digit_power))
}

/// An exponent's value, saturated at `i64`'s range: `1e-99999999999999999999`
/// is as far from any double as `1e-9223372036854775808`, and both must
/// compare as lossy rather than overflow or be skipped.
fn exponent(text: &str) -> Option<i64> {
    let digits = text.trim_start_matches(['-', '+']);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(text.parse::<i64>().unwrap_or(if text.starts_with('-') {
        i64::MIN
    } else {
        i64::MAX
    }))
}

#[cfg(test)]
mod tests {
    #[test]
    fn nesting_is_bounded() {
        use super::{check_json_depth, parse_json, MAX_JSON_DEPTH};
        let nest = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
        let ok = parse_json(&nest(MAX_JSON_DEPTH)).expect("at the limit");
        assert!(check_json_depth(&ok).is_ok());
        let err = parse_json(&nest(MAX_JSON_DEPTH + 1)).unwrap_err();
        assert_eq!(err.to_string(), "JSON value nests deeper than 100 levels");
        // Brackets inside strings do not count.
        assert!(parse_json(&format!("\"{}\"", "[".repeat(1000))).is_ok());
        assert!(parse_json(&format!("{{\"a\\\"[\": {}}}", nest(99))).is_ok());
        // A hostile text far deeper than any stack: refused, not a crash.
        assert!(parse_json(&nest(1_000_000)).is_err());
        let deeper = serde_json::Value::Array(vec![ok]);
        assert!(check_json_depth(&deeper).is_err());
    }

    use super::*;

    #[test]
    fn first_duplicate_key_wins() {
        let v = parse_json(r#"{"b": 1, "a": {"x": 1, "x": 2}, "b": 2}"#).unwrap();
        assert_eq!(v.to_string(), r#"{"a":{"x":1},"b":1}"#);
    }

    #[test]
    fn numbers_must_round_trip() {
        for ok in [
            "1",
            "-0",
            "1.5",
            "0.1",
            "1e10",
            "1.50",
            "9223372036854775807",
            "18446744073709551615",
            "[1.25e-3, 100.0]",
            r#"{"s": "1.00000000000000000001"}"#,
        ] {
            assert!(parse_json(ok).is_ok(), "{ok}");
        }
        for bad in [
            "1.00000000000000000001",
            "1e400",
            "123456789012345678901",
            "[0.30000000000000000001]",
        ] {
            assert!(parse_json(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn syntax_errors() {
        for bad in ["", "{", "[1,]", "{'a': 1}", "1 2"] {
            let err = parse_json(bad).unwrap_err();
            assert!(err.to_string().starts_with("Invalid JSON"), "{bad}: {err}");
        }
    }
}
