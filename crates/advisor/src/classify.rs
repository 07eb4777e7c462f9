//! How the values of a key column arrive: in time order, from a counter,
//! as time-ordered ids, spread, or unknown.
//!
//! The hotspot rules care about one question per first key column: will new
//! rows get values that sort after (or before) every existing value? The
//! catalog answers part of it with certainty (the type, the DEFAULT or
//! generated expression, `allow_commit_timestamp`); names and comments
//! answer the rest as a heuristic, which the rules report at a lower
//! severity. The evidence, in the order it is trusted:
//!
//! 1. A hash or random source in the expression (`FARM_FINGERPRINT`,
//!    `SHA256`, `GENERATE_UUID`, a sequence, which in Spanner is always
//!    bit-reversed) spreads the values: [`Order::Spread`].
//!    The PostgreSQL dialect's spellings count the same:
//!    `spanner.farm_fingerprint`, `spanner.generate_uuid()`,
//!    `nextval('s')`, `now()`, `spanner.pending_commit_timestamp()`, and
//!    its types map to the same [`DataType`]s (`timestamptz` is a
//!    TIMESTAMP, `bigint` an INT64, `varchar`/`text` a STRING).
//! 2. A time-ordered id generator in the expression (`ULID`, `UUIDV7`...):
//!    [`Order::TimeOrderedId`].
//! 3. The current time in the expression (`CURRENT_TIMESTAMP()`,
//!    `PENDING_COMMIT_TIMESTAMP()`) or `allow_commit_timestamp`: time order
//!    ([`Order::Time`]), or for a STRING/BYTES column whose text starts with
//!    the time, [`Order::TimeOrderedId`].
//! 4. A generated column computed (without a hash) from a column in time
//!    order inherits that order.
//! 5. TIMESTAMP and DATE columns are time-ordered when they lead a key:
//!    rows are written about when they happen.
//! 6. Names and line comments: `Ulid`, `-- UUIDv7`, `Snowflake` mark
//!    time-ordered ids; `EventTimeMicros INT64` a time; `SeqNo`,
//!    `-- auto-increment` a counter.

use rowtree_schema::ast::DataType;
use rowtree_schema::Table;

use crate::load::Site;

/// How the values of a column are ordered in time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Order {
    /// New values follow time. `certain` is false when only the name says so.
    Time { why: String, certain: bool },
    /// An integer counter. `generator` is true when the schema says how it
    /// is generated (a comment naming AUTO_INCREMENT, a sequence table...),
    /// false when only the name looks like a counter's.
    Counter { why: String, generator: bool },
    /// An id whose high bits (or leading characters) are a timestamp.
    TimeOrderedId { why: String },
    /// Hashed, random or bit-reversed.
    Spread,
    /// Nothing says either way.
    Unknown,
}

/// Functions whose result is spread over the value space.
const SPREADERS: &[&str] = &[
    "FARM_FINGERPRINT",
    "SHA1",
    "SHA256",
    "SHA512",
    "MD5",
    "GENERATE_UUID",
    "GET_NEXT_SEQUENCE_VALUE",
    "NEW_UUID",
    // PostgreSQL spellings (`spanner.` prefixes are separate identifiers).
    "NEXTVAL",
    "GEN_RANDOM_UUID",
];

/// Names of generators of time-ordered ids.
const TIME_ID_FUNCTIONS: &[&str] = &[
    "ULID",
    "UUIDV7",
    "UUID_V7",
    "UUIDV1",
    "UUID_V1",
    "UUIDV6",
    "UUID_V6",
    "KSUID",
    "SNOWFLAKE",
];

/// Words of names and comments that mark a time-ordered id.
const TIME_ID_WORDS: &[&str] = &[
    "ulid",
    "ksuid",
    "snowflake",
    "uuidv7",
    "uuid_v7",
    "uuid7",
    "uuid v7",
    "v7 uuid",
    "uuid version 7",
    "uuidv1",
    "uuid_v1",
    "uuid v1",
    "v1 uuid",
    "uuid version 1",
    "uuidv6",
    "uuid_v6",
    "uuid v6",
    "v6 uuid",
    "timeuuid",
    "time_uuid",
    "time uuid",
    "time-ordered",
    "time ordered",
    "time-based uuid",
    "timestamp-prefixed",
    "timestamp prefix",
    "time prefix",
    "prefixed with the time",
    "prefixed with a timestamp",
    "prefixed with the timestamp",
    "starts with the timestamp",
    "starts with a timestamp",
    "lexicographically sortable",
    "k-sortable",
];

/// Name parts of times that are not when the row is written (a birth date,
/// a due date), so a key or index on them is not written in time order.
const NOT_WRITE_TIME: &[&str] = &[
    "birth",
    "dob",
    "due",
    "deadline",
    "scheduled",
    "appointment",
    "anniversary",
];

/// Words of comments that say an integer is handed out by a counter.
const COUNTER_COMMENT_WORDS: &[&str] = &[
    "auto-increment",
    "auto_increment",
    "autoincrement",
    "auto increment",
    "sequential",
    "incrementing",
    "counter",
    "max(",
    "next id",
    "next value",
    "next_value",
    "nextvalue",
    "serial",
    "sequence table",
    "sequences table",
];

/// Words of comments that say only that an integer grows.
const GROWING_COMMENT_WORDS: &[&str] = &["monotonic", "increasing", "ascending"];

/// Name endings (lowercase, underscores removed) of integer counters.
const COUNTER_NAME_ENDINGS: &[&str] = &[
    "seq",
    "seqno",
    "seqnum",
    "sequencenumber",
    "sequenceno",
    "sequencenum",
    "serial",
    "serialno",
    "serialnumber",
    "rownum",
    "rownumber",
    "counter",
    "autoid",
    "autoincrementid",
    "incrementid",
];

/// Words that, ending a column name (after a case or `_` boundary, or as
/// the whole name), say it holds a time.
const TIME_NAME_WORDS: &[&str] = &[
    "timestamp",
    "datetime",
    "date",
    "time",
    "ts",
    "at",
    "micros",
    "millis",
    "nanos",
    "epoch",
    "unixtime",
];

/// The last word of a column name: after the last `_`, or the last
/// uppercase run in camel case (`CreatedAt` -> `at`, `EventTS` -> `ts`).
fn last_word(name: &str) -> String {
    if let Some((_, tail)) = name.rsplit_once('_') {
        return tail.to_ascii_lowercase();
    }
    let chars: Vec<char> = name.chars().collect();
    let boundary = |i: usize| {
        i > 0
            && chars[i].is_ascii_uppercase()
            && (!chars[i - 1].is_ascii_uppercase()
                || chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase()))
    };
    let start = (0..chars.len()).rev().find(|i| boundary(*i)).unwrap_or(0);
    chars[start..]
        .iter()
        .collect::<String>()
        .to_ascii_lowercase()
}

/// Whether the name says the column holds a time of writing.
fn time_named(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    if NOT_WRITE_TIME.iter().any(|w| lower.contains(w)) {
        return false;
    }
    let word = last_word(name);
    TIME_NAME_WORDS.contains(&word.as_str())
        || ["micros", "millis", "nanos", "timestamp", "epochms"]
            .iter()
            .any(|w| lower.ends_with(w))
}

/// How deep generated columns are followed (a generated column reading a
/// generated column ...); the catalog refuses cycles, this bounds the walk.
const MAX_GENERATED_DEPTH: usize = 8;

/// Identifiers in an expression's text (outside string literals), as written.
pub(crate) fn identifiers(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\'' || c == '"' {
            for (_, d) in chars.by_ref() {
                if d == c {
                    break;
                }
            }
        } else if c == '`' {
            let start = i + 1;
            let mut end = text.len();
            for (j, d) in chars.by_ref() {
                if d == '`' {
                    end = j;
                    break;
                }
            }
            out.push(text[start..end.max(start)].to_string());
        } else if c.is_ascii_alphabetic() || c == '_' {
            let mut end = text.len();
            while let Some(&(j, d)) = chars.peek() {
                if d.is_ascii_alphanumeric() || d == '_' {
                    chars.next();
                } else {
                    end = j;
                    break;
                }
            }
            out.push(text[i..end].to_string());
        }
    }
    out
}

fn has_any(upper: &str, words: &[&str]) -> Option<String> {
    let idents = identifiers(upper);
    words
        .iter()
        .find(|w| idents.iter().any(|i| i == *w))
        .map(|w| w.to_string())
}

/// Which of the word lists has the first identifier of `upper` found in any.
fn first_of(upper: &str, lists: &[&[&str]]) -> Option<usize> {
    identifiers(upper)
        .iter()
        .find_map(|i| lists.iter().position(|l| l.contains(&i.as_str())))
}

const TIME_CALLS: &[&str] = &[
    "CURRENT_TIMESTAMP",
    "PENDING_COMMIT_TIMESTAMP",
    "CURRENT_DATE",
    "CURRENT_DATETIME",
    // PostgreSQL spellings of the current time.
    "NOW",
    "LOCALTIMESTAMP",
    "TRANSACTION_TIMESTAMP",
    "STATEMENT_TIMESTAMP",
    "CLOCK_TIMESTAMP",
    "COMMIT_TIMESTAMP",
];

fn is_text(data_type: &DataType) -> bool {
    matches!(data_type, DataType::String(_) | DataType::Bytes(_))
}

/// Whether the first column or time call mentioned in `text` is a time
/// call or a time-ordered column of `table` (so the value starts with it).
fn time_comes_first(table: &Table, text: &str, depth: usize) -> bool {
    for ident in identifiers(text) {
        let upper = ident.to_ascii_uppercase();
        if TIME_CALLS.contains(&upper.as_str()) {
            return true;
        }
        if let Some((pos, _)) = table.column(&ident) {
            return matches!(
                classify_at(table, pos, None, depth + 1),
                Order::Time { certain: true, .. } | Order::TimeOrderedId { .. }
            );
        }
    }
    false
}

/// How the values of `table.columns[pos]` are ordered. `site` (the CREATE
/// statement) supplies the column's line comment.
pub(crate) fn classify(table: &Table, pos: usize, site: Option<&Site>) -> Order {
    classify_at(table, pos, site, 0)
}

fn classify_at(table: &Table, pos: usize, site: Option<&Site>, depth: usize) -> Order {
    let column = &table.columns[pos];
    if depth > MAX_GENERATED_DEPTH {
        return Order::Unknown;
    }
    if column.identity_sequence.is_some() {
        return Order::Spread;
    }
    let expr = column
        .generated
        .as_ref()
        .or(column.default.as_ref())
        .map(|e| e.text.clone());
    let kind = if column.generated.is_some() {
        "generated"
    } else {
        "DEFAULT"
    };
    if let Some(text) = &expr {
        let upper = text.to_ascii_uppercase();
        // In text, what comes first decides the order (a timestamp followed
        // by a UUID still sorts by time); in a number any hash spreads it.
        let spread = if is_text(&column.data_type) {
            first_of(&upper, &[SPREADERS, TIME_ID_FUNCTIONS, TIME_CALLS]) == Some(0)
        } else {
            has_any(&upper, SPREADERS).is_some()
        };
        if spread {
            return Order::Spread;
        }
        if let Some(f) = has_any(&upper, TIME_ID_FUNCTIONS) {
            return Order::TimeOrderedId {
                why: format!("its {kind} value comes from {f}(), a time-ordered id"),
            };
        }
        if let Some(call) = has_any(&upper, TIME_CALLS) {
            if is_text(&column.data_type) {
                if time_comes_first(table, text, depth) {
                    return Order::TimeOrderedId {
                        why: format!(
                            "its {kind} value ({text}) starts with {call}(), so the text sorts by time"
                        ),
                    };
                }
            } else {
                return Order::Time {
                    why: format!("its {kind} value ({text}) is {call}()"),
                    certain: true,
                };
            }
        }
        if column.generated.is_some() {
            for ident in identifiers(text) {
                let Some((source, _)) = table.column(&ident) else {
                    continue;
                };
                if source == pos {
                    continue;
                }
                match classify_at(table, source, None, depth + 1) {
                    Order::Time { certain: true, .. }
                        if is_text(&column.data_type) && time_comes_first(table, text, depth) =>
                    {
                        return Order::TimeOrderedId {
                            why: format!(
                                "it is generated as {text}, which starts with the time-ordered column {ident}"
                            ),
                        };
                    }
                    // Text that only ends with the time sorts by what
                    // comes first.
                    Order::Time { certain: true, .. } if is_text(&column.data_type) => {}
                    Order::Time { certain: true, .. } => {
                        return Order::Time {
                            why: format!(
                                "it is generated as {text} from the time-ordered column {ident}"
                            ),
                            certain: true,
                        }
                    }
                    Order::TimeOrderedId { .. } if time_comes_first(table, text, depth) => {
                        return Order::TimeOrderedId {
                            why: format!(
                                "it is generated as {text} from the time-ordered id {ident}"
                            ),
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    if column.allow_commit_timestamp {
        return Order::Time {
            why: "it allows commit timestamps (PENDING_COMMIT_TIMESTAMP() fills it at commit)"
                .to_string(),
            certain: true,
        };
    }
    let not_write_time = {
        let lower = column.name.to_ascii_lowercase();
        NOT_WRITE_TIME.iter().any(|w| lower.contains(w))
    };
    match column.data_type {
        DataType::Timestamp | DataType::Date if not_write_time => return Order::Unknown,
        DataType::Timestamp => {
            return Order::Time {
                why: "it is a TIMESTAMP, and rows are written about when they happen".to_string(),
                certain: true,
            }
        }
        DataType::Date => {
            return Order::Time {
                why: "it is a DATE, and rows are written about when they happen".to_string(),
                certain: true,
            }
        }
        _ => {}
    }
    if expr.is_some() {
        return Order::Unknown;
    }
    let lower = column.name.to_ascii_lowercase();
    let compact = lower.replace('_', "");
    let comment = site.and_then(|s| s.line_comment_for(&column.name));
    let random_comment = comment.as_deref().is_some_and(|c| {
        c.contains("v4")
            || c.contains("random")
            || c.contains("generate_uuid")
            || c.contains("hash")
    });
    if !random_comment {
        if let Some(word) = TIME_ID_WORDS
            .iter()
            .find(|w| !w.contains(' ') && lower.contains(*w))
        {
            return Order::TimeOrderedId {
                why: format!("its name says it holds a {word} (time in the leading bits)"),
            };
        }
        if let Some(c) = &comment {
            if let Some(word) = TIME_ID_WORDS.iter().find(|w| c.contains(*w)) {
                return Order::TimeOrderedId {
                    why: format!(
                        "its comment says it holds a {word} id (time in the leading bits)"
                    ),
                };
            }
        }
    }
    if column.data_type == DataType::Int64 {
        if let Some(c) = &comment {
            if !random_comment {
                if let Some(word) = COUNTER_COMMENT_WORDS.iter().find(|w| c.contains(*w)) {
                    return Order::Counter {
                        why: format!("its comment says it is {word}"),
                        generator: true,
                    };
                }
                if let Some(word) = GROWING_COMMENT_WORDS.iter().find(|w| c.contains(*w)) {
                    return Order::Counter {
                        why: format!("its comment says it is {word}"),
                        generator: false,
                    };
                }
            }
        }
        if COUNTER_NAME_ENDINGS.iter().any(|e| compact.ends_with(e)) {
            return Order::Counter {
                why: "its name is a counter's".to_string(),
                generator: false,
            };
        }
    }
    let textual = is_text(&column.data_type);
    if (column.data_type == DataType::Int64 || textual) && time_named(&column.name) {
        let what = if textual { "as text" } else { "as an integer" };
        return Order::Time {
            why: format!("its name says it holds a time {what}"),
            certain: false,
        };
    }
    Order::Unknown
}

/// Whether `name` is `table`'s own surrogate id: `Id`, `<Table>Id` or
/// `<Table minus a plural s>Id` (any case, underscores ignored).
pub(crate) fn is_own_id(table: &Table, name: &str) -> bool {
    let n = name.to_ascii_lowercase().replace('_', "");
    if n == "id" {
        return true;
    }
    // The whole table name and each of its tails at a word boundary
    // (`CardTransactions`: also `Transactions`), each also singular.
    let chars: Vec<char> = table.name.chars().collect();
    let mut tails = vec![table.name.as_str()];
    for (i, c) in table.name.char_indices().skip(1) {
        let k = table.name[..i].chars().count();
        let boundary =
            (c.is_ascii_uppercase() && !chars[k - 1].is_ascii_uppercase()) || chars[k - 1] == '_';
        if boundary {
            tails.push(&table.name[i..]);
        }
    }
    let mut stems = Vec::new();
    for tail in tails {
        let t = tail.to_ascii_lowercase().replace('_', "");
        if let Some(s) = t.strip_suffix("ies") {
            stems.push(format!("{s}y"));
        }
        if let Some(s) = t.strip_suffix("es") {
            stems.push(s.to_string());
        }
        if let Some(s) = t.strip_suffix('s') {
            stems.push(s.to_string());
        }
        stems.push(t);
    }
    stems.iter().any(|s| n == format!("{s}id"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_names() {
        for name in [
            "CreatedAt",
            "created_at",
            "EventTs",
            "EventTS",
            "Ts",
            "UpdateTime",
            "EventDate",
            "TickMicros",
            "event_timestamp",
        ] {
            assert!(time_named(name), "{name}");
        }
        for name in [
            "Format",
            "Candidate",
            "Status",
            "BirthDate",
            "DueDate",
            "Attempts",
            "Seat",
        ] {
            assert!(!time_named(name), "{name}");
        }
    }

    #[test]
    fn identifiers_skip_literals() {
        assert_eq!(
            identifiers("CONCAT('a b', `x y`, Foo_1)"),
            vec!["CONCAT", "x y", "Foo_1"]
        );
    }
}
