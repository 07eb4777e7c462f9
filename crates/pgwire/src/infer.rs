//! Types for parameters the client left untyped.
//!
//! In the extended protocol a client may give each `$n` a type OID at
//! Parse, or leave it 0 ("unspecified") and send the value as text;
//! PostgreSQL then types the parameter from where the statement uses it
//! (`WHERE id = $1` makes `$1` the type of `id`). node-postgres and
//! pgbench leave every parameter untyped; psycopg leaves strings untyped.
//! Rowtree's binder types a parameter from its value, so an untyped one has
//! to be given a type before the statement runs.
//!
//! [`infer`] finds it by asking the planner: for each untyped parameter it
//! tries candidate types in turn, planning the statement with that
//! parameter typed and the others still untyped NULLs, and keeps the first
//! candidate the statement plans with. The planner does not check the
//! values DML writes, so DML is also executed with sample values, in a
//! probe transaction that is rolled back: it waits for no lock and
//! disturbs no other transaction (`Database::begin_probe`). Because that
//! still reads storage, probing runs on a blocking thread; only an answer
//! already known ([`known`]) is given in the connection's event loop.
//!
//! The candidates depend on what the value looks like (`42` tries
//! `bigint`, then `double precision`, `numeric` and `varchar`;
//! `2024-01-02` tries `date`, then `timestamptz`, then `varchar`), so a text value meant for a string column
//! still lands as a string (`bigint` is refused by the column, `varchar` is
//! not). Without a value (Describe of a statement) the order is fixed,
//! `varchar` first. Results are cached per statement text, given types and
//! value shapes, so a prepared statement executed many times plans its
//! probes once.

use rowtree_sql::Params;
use rowtree_types::{Type, Value};

use crate::backend::Backend;

/// The most parameters a statement may have, as in PostgreSQL (the
/// protocol counts them in 16 bits): a `$n` past it is not given a slot.
pub const MAX_PARAMS: usize = 65_535;

/// The most parameters probed for one statement; past it, untyped
/// parameters are `varchar` without probing (the work stays bounded
/// whatever the statement).
pub const MAX_PROBED: usize = 256;

/// The highest `$n` in `sql`, outside literals, quoted names and comments.
pub fn param_count(sql: &str) -> usize {
    param_numbers(sql).last().copied().unwrap_or(0)
}

/// Every `$n` in `sql` (at most [`MAX_PARAMS`]), outside literals, quoted
/// names and comments.
pub fn param_numbers(sql: &str) -> std::collections::BTreeSet<usize> {
    let b = sql.as_bytes();
    let mut seen = std::collections::BTreeSet::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\'' | b'"' => {
                let q = b[i];
                i += 1;
                while i < b.len() && b[i] != q {
                    i += 1;
                }
                i += 1;
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 2;
            }
            b'$' if i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_') => i += 1,
            b'$' => {
                let start = i + 1;
                let mut j = start;
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
                if j > start {
                    if let Ok(n) = sql[start..j].parse::<usize>() {
                        if (1..=MAX_PARAMS).contains(&n) {
                            seen.insert(n);
                        }
                    }
                    i = j;
                } else if let Some(tag_end) = sql[start..].find('$') {
                    // A dollar-quoted string: $tag$ ... $tag$.
                    let tag = &sql[i..start + tag_end + 1];
                    if tag[1..tag.len() - 1]
                        .chars()
                        .all(|c| c.is_alphanumeric() || c == '_')
                    {
                        let body = start + tag_end + 1;
                        i = match sql[body..].find(tag) {
                            Some(k) => body + k + tag.len(),
                            None => b.len(),
                        };
                    } else {
                        i += 1;
                    }
                } else {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    seen
}

/// What a text value looks like, as a one-byte code (the cache key).
pub fn shape(text: Option<&str>) -> u8 {
    let Some(t) = text else { return b'n' };
    let t = t.trim();
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
    let unsigned = t.strip_prefix(['-', '+']).unwrap_or(t);
    if digits(unsigned) {
        return b'i';
    }
    if unsigned.parse::<f64>().is_ok()
        || matches!(
            unsigned.to_ascii_lowercase().as_str(),
            "nan" | "infinity" | "inf"
        )
    {
        return b'f';
    }
    let lower = t.to_ascii_lowercase();
    if matches!(lower.as_str(), "t" | "f" | "true" | "false") {
        return b'b';
    }
    let date_like = t.len() >= 10
        && t.as_bytes()[4] == b'-'
        && t.as_bytes()[7] == b'-'
        && t[..4].bytes().all(|c| c.is_ascii_digit());
    if date_like && t.len() == 10 {
        return b'd';
    }
    if date_like {
        return b't';
    }
    if t.len() == 36 && t.as_bytes()[8] == b'-' && t.as_bytes()[13] == b'-' {
        return b'u';
    }
    if t.starts_with('{') || t.starts_with('[') {
        return b'j';
    }
    if t.starts_with("\\x") {
        return b'x';
    }
    b's'
}

fn candidates(shape: u8) -> Vec<Type> {
    use Type::*;
    let array = |t: Type| Array(Box::new(t));
    if shape == b'j' {
        // `{...}` is a PostgreSQL array literal as well as a JSON object.
        return vec![
            Json,
            array(String),
            array(Int64),
            array(Float64),
            array(Bool),
            array(Numeric),
            array(Date),
            array(Timestamp),
            array(Uuid),
            array(Bytes),
            String,
        ];
    }
    match shape {
        b'i' => vec![Int64, Float64, Numeric, String],
        b'f' => vec![Float64, Numeric, String],
        b'b' => vec![Bool, String],
        b'd' => vec![Date, Timestamp, String],
        b't' => vec![Timestamp, String],
        b'u' => vec![Uuid, String],
        b'x' => vec![Bytes, String],
        b's' => vec![String, Json, Bytes],
        // No value to go by (Describe of a statement).
        _ => vec![
            String, Int64, Float64, Numeric, Bool, Timestamp, Date, Bytes, Json, Uuid,
        ],
    }
}

/// A non-NULL value of `ty` to plan with: the binder treats a NULL
/// parameter as an untyped NULL literal, which would fit anywhere.
pub fn sample(ty: &Type) -> Value {
    match ty {
        Type::Bool => Value::Bool(false),
        Type::Int64 => Value::Int64(0),
        Type::Float32 => Value::Float32(0.0),
        Type::Float64 => Value::Float64(0.0),
        Type::Numeric => Value::Numeric(rowtree_types::Numeric::ZERO),
        Type::String => Value::String(String::new()),
        Type::Bytes => Value::Bytes(Vec::new()),
        Type::Date => rowtree_types::Date::from_days(0).map_or(Value::Null, Value::Date),
        Type::Timestamp => {
            rowtree_types::Timestamp::from_nanos(0).map_or(Value::Null, Value::Timestamp)
        }
        Type::Json => Value::Json(serde_json::json!({})),
        Type::Uuid => rowtree_types::Uuid::parse("00000000-0000-0000-0000-000000000000")
            .map_or(Value::Null, Value::Uuid),
        Type::Array(_) => Value::Array(Vec::new()),
        Type::Struct(_) => Value::Null,
        Type::Proto(_) | Type::Enum(_) => sample(&ty.representation()),
    }
}

/// The types of a statement's parameters when they are known without
/// trying the statement out: every one given by the client, or inferred
/// before for the same statement and shapes (the session's cache). `None`
/// means [`infer`] must probe, which may execute DML: the connection then
/// runs it on a blocking thread, never in its event loop.
pub fn known(
    backend: &Backend,
    sql: &str,
    given: &[Option<Type>],
    shapes: &[u8],
) -> Option<Vec<Option<Type>>> {
    let (given, shapes) = normalized(sql, given, shapes);
    if given.iter().all(Option::is_some) {
        return Some(given);
    }
    let key = (sql.to_string(), given, shapes);
    backend
        .inferred(&key)
        .map(|types| types.iter().cloned().map(Some).collect())
}

/// The given types and the shapes, one per parameter the statement uses
/// or the client sent (at most [`MAX_PARAMS`]); a given type's shape is
/// `b'-'`.
fn normalized(sql: &str, given: &[Option<Type>], shapes: &[u8]) -> (Vec<Option<Type>>, Vec<u8>) {
    let n = given
        .len()
        .max(param_count(sql))
        .max(shapes.len())
        .min(MAX_PARAMS);
    let given: Vec<Option<Type>> = (0..n).map(|i| given.get(i).cloned().flatten()).collect();
    let shapes: Vec<u8> = (0..n)
        .map(|i| {
            if given[i].is_some() {
                b'-'
            } else {
                shapes.get(i).copied().unwrap_or(b'?')
            }
        })
        .collect();
    (given, shapes)
}

/// The types of a statement's parameters: `given[i]` where the client gave
/// one, else inferred (see the module docs). `shapes[i]` is what the value
/// looks like ([`shape`] of its text; `b'n'` for NULL, which stays untyped;
/// `b'?'` when not known: not bound yet, or sent in binary).
pub fn infer(
    backend: &mut Backend,
    sql: &str,
    given: &[Option<Type>],
    shapes: &[u8],
) -> Vec<Option<Type>> {
    if let Some(types) = known(backend, sql, given, shapes) {
        return types;
    }
    let (given, shapes) = normalized(sql, given, shapes);
    let n = given.len();
    let key = (sql.to_string(), given.clone(), shapes.clone());
    let mut types: Vec<Option<Type>> = given.clone();
    let used = param_numbers(sql);
    let probe = used.len() <= MAX_PROBED;
    for i in 0..n {
        if types[i].is_some() || shapes[i] == b'n' {
            continue;
        }
        if !probe || !used.contains(&(i + 1)) {
            types[i] = Some(Type::String);
            continue;
        }
        let mut chosen = None;
        for candidate in &candidates(shapes[i]) {
            let mut params = Params::new();
            for (j, t) in types.iter().enumerate() {
                let name = format!("p{}", j + 1);
                match (j == i, t) {
                    (true, _) => {
                        params.insert(name, (candidate.clone(), sample(candidate)));
                    }
                    (false, Some(t)) => {
                        params.insert(name, (t.clone(), sample(t)));
                    }
                    (false, None) => params.insert_untyped_null(name),
                }
            }
            if backend.plans(sql, &params) {
                chosen = Some(candidate.clone());
                break;
            }
        }
        types[i] = Some(chosen.unwrap_or(Type::String));
    }
    // NULL values stay untyped (their type does not matter); the rest are
    // cached.
    if types
        .iter()
        .zip(&shapes)
        .all(|(t, s)| t.is_some() || *s == b'n')
    {
        let cached: Vec<Type> = types
            .iter()
            .map(|t| t.clone().unwrap_or(Type::String))
            .collect();
        if shapes.iter().all(|s| *s != b'n') {
            backend.remember(key, cached);
        }
    }
    types
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_parameters_outside_literals() {
        assert_eq!(param_count("select $1, '$5', \"$6\", $2 -- $9"), 2);
        assert_eq!(param_count("select $$ $3 $$, $1"), 1);
        assert_eq!(param_count("select a$1 from t"), 0);
        assert_eq!(param_count("select $99999999999999999999"), 0);
        assert_eq!(param_count("select $4000000000"), 0);
        assert_eq!(param_count("select $65535"), MAX_PARAMS);
    }

    #[test]
    fn shapes_of_values() {
        assert_eq!(shape(Some("42")), b'i');
        assert_eq!(shape(Some("-1.5e3")), b'f');
        assert_eq!(shape(Some("2024-01-02")), b'd');
        assert_eq!(shape(Some("2024-01-02 03:04:05+00")), b't');
        assert_eq!(shape(Some("hello")), b's');
        assert_eq!(shape(None), b'n');
    }
}
