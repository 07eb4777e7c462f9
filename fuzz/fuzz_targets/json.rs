//! `json`: Spanner's JSON rules on any text.
//!
//! `parse_json` must never panic. What it accepts is stored and sent as
//! its compact text (the row codec and the wire both write
//! `serde_json::to_string`), so that text must parse back to the same
//! value, with `parse_json` (a client sending it back) and with plain
//! serde_json (the row codec's reader), and must stay within the nesting
//! limit.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rowtree_types::{check_json_depth, parse_json, Value};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(value) = parse_json(text) else {
        return;
    };
    check_json_depth(&value).expect("an accepted value nests within the limit");
    let printed = serde_json::to_string(&value).expect("a parsed value prints");
    let again = parse_json(&printed)
        .unwrap_or_else(|e| panic!("{printed} (from {text:?}) does not parse back: {e}"));
    assert_eq!(again, value, "{printed} parses back differently");
    let stored: serde_json::Value =
        serde_json::from_str(&printed).expect("the stored text reads back");
    assert_eq!(stored, value);

    // The same through the row codec, as a JSON column stores it.
    let row = rowtree_encoding::encode_row([(1, &Value::Json(value.clone()))]).unwrap();
    let back = rowtree_encoding::decode_row(&row).expect("a stored JSON value decodes");
    assert_eq!(back, vec![(1, Value::Json(value))]);
});
