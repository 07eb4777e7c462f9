//! JSON numbers keep their exact FLOAT64 value through parsing, storage and
//! the wire. A number is stored as the nearest double; the text Rowtree
//! writes back for it (`serde_json::to_string`, in rows and on the wire)
//! must parse to that same double. serde_json's default float parser can be
//! off by one unit in the last place, which changed such values on every
//! trip (found by the `json` fuzz target, `fuzz/`); the workspace builds
//! serde_json with `float_roundtrip`, which parses them exactly.

use rowtree_types::parse_json;

fn number(text: &str) -> f64 {
    parse_json(text)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .as_f64()
        .expect("a number")
}

#[test]
fn numbers_parse_to_the_nearest_double() {
    for text in [
        "-92260.1854775808e+42",
        "-9.22601854775808e46",
        "2.2250738585072014e-308",
        "1.7976931348623157e308",
        "5e-324",
        "0.1",
        "123456.789e-3",
    ] {
        assert_eq!(number(text), text.parse::<f64>().unwrap(), "{text}");
    }
}

#[test]
fn printed_numbers_parse_back_to_the_same_value() {
    for text in [
        "-92260.1854775808e+42",
        "[1.5e300, -0.0, 3.141592653589793]",
    ] {
        let value = parse_json(text).unwrap();
        let printed = serde_json::to_string(&value).unwrap();
        assert_eq!(
            parse_json(&printed).unwrap(),
            value,
            "{text} printed as {printed}"
        );
        let stored: serde_json::Value = serde_json::from_str(&printed).unwrap();
        assert_eq!(stored, value, "{text} read back from {printed}");
    }
}

#[test]
fn extreme_exponents_are_refused_as_lossy() {
    // The precision check computed the power of the first digit with plain
    // arithmetic: an exponent of i64::MIN overflowed it (a panic where
    // overflow is checked; found by the `json` fuzz target).
    for text in [
        "0.0001e-9223372036854775808",
        "1e-9223372036854775808",
        "1e-99999999999999999999",
        "[1e9223372036854775807]",
        "1e99999999999999999999",
    ] {
        let error = parse_json(text).expect_err(text).to_string();
        assert!(
            error.contains("without loss of precision"),
            "{text}: {error}"
        );
    }
    assert_eq!(number("0e-99999999999999999999"), 0.0);
    assert_eq!(number("0.000e9223372036854775807"), 0.0);
}

#[test]
// 900719925474099.25 is written out exactly: it is the double itself, the
// value both shortest decimals denote.
#[allow(clippy::excessive_precision)]
fn either_shortest_decimal_of_a_double_is_accepted() {
    // 900719925474099.25 is a double; .2 and .3 are both shortest decimals
    // of it. Rust's formatting picks .3, serde_json (which prints stored
    // JSON) picks .2, and the check compared with Rust's alone, so the
    // text Rowtree printed for an accepted value was refused when sent
    // back (found by the `json` fuzz target).
    for text in [
        "900719925474099.2",
        "900719925474099.3",
        "0.90071992547409930e15",
    ] {
        assert_eq!(number(text), 900719925474099.25, "{text}");
    }
    let value = parse_json("0.90071992547409930e15").unwrap();
    let printed = serde_json::to_string(&value).unwrap();
    assert_eq!(parse_json(&printed).unwrap(), value, "{printed}");
    // Still refused: more digits than the double holds.
    assert!(parse_json("900719925474099.26").is_err());
}
