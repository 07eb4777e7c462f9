//! Scenario tests of the database layer: scripts of commands with their
//! expected output, in `tests/scenarios/*.txt`.
//!
//! A script is a sequence of commands, each a line starting with `> `,
//! followed by the output it must produce. Run with `UPDATE_EXPECT=1` to
//! rewrite the expected output from the actual one, then review the diff.
//!
//! Commands:
//!
//! ```text
//! > ddl CREATE TABLE ...                 ok | error: CODE: message
//! > commit insert T(a, b) VALUES (1, 'x'), (2, 'y'); delete T KEYS (1)
//! > read T(a, b) ALL | KEYS (1), (2) | RANGE [1] [3) | PREFIX (1)
//! > read T@Index(a, b) ALL               read through an index
//! > read@label T(a) ALL                  read at a marked timestamp
//! > mark label                           remember the current timestamp
//! > dump                                 every stored key, decoded, in key order
//! > split T (1)                           add a split point at a key (prefix)
//! > splits                               splits in key order with their row counters
//! ```
//!
//! Mutation kinds: insert, update, insert_or_update, replace, delete.

use std::collections::HashMap;
use std::path::Path;

use rowtree_db::{
    Bound, Database, KeyRange, KeySet, Mutation, ReadRequest, TimestampBound, Value, WriteKind,
};

struct Runner {
    db: Database,
    marks: HashMap<String, u64>,
}

/// Splits `text` at top-level occurrences of `sep` (outside quotes and brackets).
fn split_top(text: &str, sep: char) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut cur = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) => {
                cur.push(c);
                if c == '\\' {
                    if let Some(n) = chars.next() {
                        cur.push(n);
                    }
                } else if c == q {
                    quote = None;
                }
            }
            None => {
                if c == '\'' || c == '"' {
                    quote = Some(c);
                    cur.push(c);
                } else if c == '(' || c == '[' {
                    depth += 1;
                    cur.push(c);
                } else if c == ')' || c == ']' {
                    depth -= 1;
                    cur.push(c);
                } else if c == sep && depth == 0 {
                    out.push(cur.trim().to_string());
                    cur.clear();
                } else {
                    cur.push(c);
                }
            }
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

/// Evaluates a constant expression (a literal, `-1`, `TIMESTAMP '...'`, `NULL`, ...).
fn value(text: &str) -> Value {
    struct NoColumns;
    impl rowtree_expr::Scope for NoColumns {
        fn resolve(
            &self,
            _: &[rowtree_parser::ast::Ident],
        ) -> Option<(usize, rowtree_types::Type)> {
            None
        }
    }
    struct Ctx;
    impl rowtree_expr::EvalContext for Ctx {
        fn now(&self) -> rowtree_types::Timestamp {
            rowtree_types::Timestamp::now()
        }
        fn next_sequence_value(&mut self, _: &str) -> Result<i64, rowtree_expr::Error> {
            unreachable!("no sequences in scenario values")
        }
        fn sequence_state(&mut self, _: &str) -> Result<Option<i64>, rowtree_expr::Error> {
            unreachable!("no sequences in scenario values")
        }
        fn pending_commit_timestamp(&mut self) -> Result<Value, rowtree_expr::Error> {
            Ok(Value::Timestamp(rowtree_db::PENDING_COMMIT_TIMESTAMP))
        }
    }
    let expr = rowtree_parser::parse_expr(text).unwrap_or_else(|e| panic!("bad value {text}: {e}"));
    let bound = rowtree_expr::bind(&expr, &NoColumns, &Default::default())
        .unwrap_or_else(|e| panic!("bad value {text}: {e}"));
    bound
        .eval(&[], &mut Ctx)
        .unwrap_or_else(|e| panic!("bad value {text}: {e}"))
}

/// `(1, 'a'), (2, 'b')` -> rows of values.
fn tuples(text: &str) -> Vec<Vec<Value>> {
    split_top(text, ',')
        .into_iter()
        .map(|t| {
            let inner = t
                .trim()
                .strip_prefix('(')
                .and_then(|s| s.strip_suffix(')'))
                .unwrap_or_else(|| panic!("expected (..): {t}"));
            split_top(inner, ',').iter().map(|v| value(v)).collect()
        })
        .collect()
}

/// `T(a, b)` or `T@Index(a, b)` -> (table, index, columns).
fn target(text: &str) -> (String, Option<String>, Vec<String>) {
    let open = text.find('(').expect("table(columns)");
    let name = text[..open].trim();
    let cols = text[open + 1..text.rfind(')').expect(")")]
        .split(',')
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty())
        .collect();
    match name.split_once('@') {
        Some((t, i)) => (t.to_string(), Some(i.to_string()), cols),
        None => (name.to_string(), None, cols),
    }
}

/// `ALL`, `KEYS (1), (2)`, `RANGE [1] [3)`, `PREFIX (1)`.
fn key_set(text: &str) -> KeySet {
    let text = text.trim();
    if text == "ALL" {
        return KeySet::all();
    }
    if let Some(rest) = text.strip_prefix("KEYS") {
        return KeySet::keys(tuples(rest));
    }
    if let Some(rest) = text.strip_prefix("PREFIX") {
        let mut t = tuples(rest);
        return KeySet::range(KeyRange::prefix(t.remove(0)));
    }
    if let Some(rest) = text.strip_prefix("RANGE") {
        // [a, b] or (a, b) bounds: `[` / `]` closed, `(` / `)` open.
        let rest = rest.trim();
        let first_end = rest.find([']', ')']).expect("range start");
        let (s, e) = rest.split_at(first_end + 1);
        let e = e.trim();
        let parse = |b: &str| -> Vec<Value> {
            let inner = &b[1..b.len() - 1];
            split_top(inner, ',').iter().map(|v| value(v)).collect()
        };
        let start = if s.starts_with('[') {
            Bound::Closed(parse(s))
        } else {
            Bound::Open(parse(s))
        };
        let end = if e.ends_with(']') {
            Bound::Closed(parse(e))
        } else {
            Bound::Open(parse(e))
        };
        return KeySet::range(KeyRange { start, end });
    }
    panic!("bad key set: {text}")
}

fn show(v: &Value) -> String {
    match v {
        Value::String(s) => format!("'{s}'"),
        Value::Null => "NULL".into(),
        other => other.to_string(),
    }
}

fn show_row(row: &[Value]) -> String {
    format!("({})", row.iter().map(show).collect::<Vec<_>>().join(", "))
}

fn mutation(text: &str) -> Mutation {
    let text = text.trim();
    let (kind, rest) = text.split_once(' ').expect("mutation kind");
    if kind == "delete" {
        let rest = rest.trim();
        let (table, ks) = rest.split_once(' ').expect("delete T keyset");
        return Mutation::delete(table, key_set(ks));
    }
    let kind = match kind {
        "insert" => WriteKind::Insert,
        "update" => WriteKind::Update,
        "insert_or_update" => WriteKind::InsertOrUpdate,
        "replace" => WriteKind::Replace,
        other => panic!("unknown mutation {other}"),
    };
    let values_at = rest.find("VALUES").expect("VALUES");
    let (table, _, columns) = target(&rest[..values_at]);
    Mutation::Write {
        kind,
        table,
        columns,
        rows: tuples(&rest[values_at + 6..]),
    }
}

impl Runner {
    fn run(&mut self, command: &str) -> String {
        let (verb, rest) = command.split_once(' ').unwrap_or((command, ""));
        match verb {
            "ddl" => match self.db.apply_ddl_statement(rest) {
                Ok(()) => "ok".into(),
                Err(e) => format!("error: {}: {}", e.error.code(), e.error),
            },
            "commit" => {
                let ms: Vec<Mutation> = split_top(rest, ';').iter().map(|m| mutation(m)).collect();
                match self.db.write(ms) {
                    Ok(_) => "committed".into(),
                    Err(e) => format!("error: {}: {e}", e.code()),
                }
            }
            "split" => {
                // split T (key values): add a split point.
                let (name, key) = rest.split_once(' ').expect("split T (k)");
                let key = tuples(key).remove(0);
                match self.db.add_split_point(name, &key) {
                    Ok(added) => format!("added: {added}"),
                    Err(e) => format!("error: {}: {e}", e.code()),
                }
            }
            "splits" => {
                // Every split with its range in human terms and its row counters.
                let catalog = self.db.catalog();
                self.db
                    .split_stats()
                    .iter()
                    .map(|s| {
                        let limit = s.limit.as_ref().map_or("<end>".to_string(), |l| {
                            rowtree_db::keys::describe(&catalog, l)
                        });
                        format!(
                            "[{} .. {}) rows_read={} rows_written={}",
                            rowtree_db::keys::describe(&catalog, &s.start),
                            limit,
                            s.counters.rows_read,
                            s.counters.rows_written
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            }
            "mark" => {
                self.marks
                    .insert(rest.trim().to_string(), self.db.visible_timestamp());
                String::new()
            }
            "dump" => {
                let catalog = self.db.catalog();
                let mut out = Vec::new();
                for (key, object, values) in self.db.dump().expect("dump") {
                    let _ = key;
                    let name = match object {
                        rowtree_db::keys::Object::Table(id) => {
                            catalog.table_by_id(id).map(|t| t.name.clone())
                        }
                        rowtree_db::keys::Object::Index(id) => {
                            catalog.index_by_id(id).map(|i| i.name.clone())
                        }
                    }
                    .unwrap_or_else(|| "?".into());
                    out.push(format!("{name}{}", show_row(&values)));
                }
                out.join("\n")
            }
            v if v == "read" || v.starts_with("read@") => {
                let at = v.strip_prefix("read@").map(|l| self.marks[l]);
                let open = rest.find(')').expect("read T(cols)");
                let (table, index, columns) = target(&rest[..=open]);
                let ks = key_set(&rest[open + 1..]);
                let mut req = ReadRequest::new(&table, &[], ks);
                req.columns = columns;
                req.index = index;
                let result = match at {
                    None => self.db.read(&req),
                    Some(ts) => self
                        .db
                        .read_only(TimestampBound::ReadTimestamp(ts))
                        .and_then(|t| t.read(&req)),
                };
                match result {
                    Ok(rows) if rows.is_empty() => "(no rows)".into(),
                    Ok(rows) => rows
                        .iter()
                        .map(|r| show_row(r))
                        .collect::<Vec<_>>()
                        .join("\n"),
                    Err(e) => format!("error: {}: {e}", e.code()),
                }
            }
            other => panic!("unknown command {other}"),
        }
    }
}

fn run_file(path: &Path) {
    let text = std::fs::read_to_string(path).expect("read scenario");
    let mut runner = Runner {
        db: Database::in_memory(),
        marks: HashMap::new(),
    };
    let mut actual = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        actual.push_str(line);
        actual.push('\n');
        let Some(command) = line.strip_prefix("> ") else {
            continue;
        };
        let out = runner.run(command);
        if !out.is_empty() {
            actual.push_str(&out);
            actual.push('\n');
        }
        // Skip the expected output written in the file.
        while let Some(next) = lines.peek() {
            if next.starts_with("> ") || next.starts_with('#') || next.is_empty() {
                break;
            }
            lines.next();
        }
    }
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(path, &actual).expect("write scenario");
    } else if actual != text {
        let diff: Vec<String> = text
            .lines()
            .zip(actual.lines())
            .enumerate()
            .filter(|(_, (a, b))| a != b)
            .take(5)
            .map(|(i, (a, b))| format!("line {}:\n  expected: {a}\n  actual:   {b}", i + 1))
            .collect();
        panic!(
            "scenario {} differs (run with UPDATE_EXPECT=1 to accept):\n{}\n--- actual ---\n{actual}",
            path.display(),
            diff.join("\n")
        );
    }
}

#[test]
fn scenarios() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("scenario dir")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no scenarios found");
    for f in files {
        if f.extension().is_some_and(|e| e == "txt") {
            run_file(&f);
        }
    }
}
