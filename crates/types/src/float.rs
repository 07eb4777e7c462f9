//! Text forms of `FLOAT64` and `FLOAT32`.
//!
//! GoogleSQL prints floats the way C's `%.15g` does (`%.17g` when 15 digits
//! do not round-trip; `%.6g`/`%.9g` for `FLOAT32`): no trailing zeros,
//! exponent form `1e+20` when the exponent is below -4 or at least the
//! precision, and `inf`, `-inf`, `nan` for the non-finite values. We take the
//! shortest round-tripping digits from Rust's formatter and lay them out
//! with the `%g` rule; for the rare values that need 16 or 17 digits this
//! prints the shortest round-tripping digits rather than exactly 17.

/// `CAST(x AS STRING)` for a `FLOAT64`: `1.5`, `1e+20`, `0.0001`, `1e-05`.
pub fn format_f64(v: f64) -> String {
    if !v.is_finite() {
        return non_finite(v.is_nan(), v > 0.0);
    }
    layout(&format!("{v:e}"), 15, 17)
}

/// `CAST(x AS STRING)` for a `FLOAT32`.
pub fn format_f32(v: f32) -> String {
    if !v.is_finite() {
        return non_finite(v.is_nan(), v > 0.0);
    }
    layout(&format!("{v:e}"), 6, 9)
}

/// Parses GoogleSQL float text: decimal or exponent notation, `inf`,
/// `+inf`, `-inf`, `infinity`, `nan` (any case). `None` if malformed.
pub fn parse_f64(text: &str) -> Option<f64> {
    text.trim().parse::<f64>().ok()
}

fn non_finite(nan: bool, positive: bool) -> String {
    match (nan, positive) {
        (true, _) => "nan".into(),
        (false, true) => "inf".into(),
        (false, false) => "-inf".into(),
    }
}

/// Lays out Rust's `{:e}` text (`-1.2345e-7`) with the `%g` rule.
fn layout(sci: &str, precision: usize, max_precision: usize) -> String {
    let (negative, sci) = match sci.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, sci),
    };
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let digits = digits.trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    let p = if digits.len() <= precision {
        precision
    } else {
        max_precision
    } as i32;
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    if exp < -4 || exp >= p {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let sign = if exp < 0 { '-' } else { '+' };
        out.push_str(&format!("e{sign}{:02}", exp.unsigned_abs()));
    } else if exp < 0 {
        out.push_str("0.");
        out.push_str(&"0".repeat((-exp - 1) as usize));
        out.push_str(digits);
    } else {
        let int_len = exp as usize + 1;
        if digits.len() <= int_len {
            out.push_str(digits);
            out.push_str(&"0".repeat(int_len - digits.len()));
        } else {
            out.push_str(&digits[..int_len]);
            out.push('.');
            out.push_str(&digits[int_len..]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g_layout() {
        for (v, text) in [
            (1.5, "1.5"),
            (1.0, "1"),
            (0.0, "0"),
            (-0.0, "-0"),
            (100.0, "100"),
            (123456.0, "123456"),
            (1e14, "100000000000000"),
            (1e15, "1e+15"),
            (1e20, "1e+20"),
            (1.25e-7, "1.25e-07"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-2.5, "-2.5"),
            (0.1 + 0.2, "0.30000000000000004"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "nan"),
        ] {
            assert_eq!(format_f64(v), text, "{v:?}");
        }
        assert_eq!(format_f32(1.5), "1.5");
        assert_eq!(format_f32(1e7), "1e+07");
        assert_eq!(format_f32(0.1), "0.1");
    }

    #[test]
    fn parse() {
        assert_eq!(parse_f64(" 1.5 "), Some(1.5));
        assert_eq!(parse_f64("-inf"), Some(f64::NEG_INFINITY));
        assert!(parse_f64("NaN").is_some_and(f64::is_nan));
        assert_eq!(parse_f64("1e3"), Some(1000.0));
        assert_eq!(parse_f64("abc"), None);
        assert_eq!(parse_f64(""), None);
    }
}
