//! Mutation tests: goldenscripts under `tests/scripts/mutations/`, one test
//! each, driving a [`Database`] through its API (no SQL) one command at a
//! time and showing what it answered and what it stored.
//!
//! Commands (mutations, keys and key sets in quotes):
//!
//! ```text
//! ddl "CREATE TABLE ..."                    applies one DDL statement
//! commit "MUTATION" ["MUTATION" ...]        commits the mutations as one write: `committed`
//! read [at=LABEL] "T(a, b) KEYSET"          the rows, in the order the read returns them
//! read "T@Index(a, b) KEYSET"               the same, through an index
//! mark LABEL                                remembers the current timestamp for `read at=LABEL`
//! dump                                      every stored key, decoded, in key order
//! split T "(1)"                             adds a split point at a key (or key prefix)
//! splits                                    the splits in key order with their row counters
//! ```
//!
//! A mutation is `insert|update|insert_or_update|replace T(a, b) VALUES (1,
//! 'x'), (2, 'y')` or `delete T KEYSET`, where a key set is `ALL`, `KEYS (1),
//! (2)`, `RANGE [1] [3)` (`[`/`]` closed, `(`/`)` open) or `PREFIX (1)`.
//! Values are constant GoogleSQL expressions (`-1`, `'x'`, `NULL`,
//! `TIMESTAMP '...'`). A `!` before a command expects it to fail, printed
//! as `CODE: message`. Regenerate the expected output with
//! `UPDATE_GOLDENFILES=1 cargo test -p rowtree-db --test mutations`, then
//! review the diff.

use rowtree_testkit::goldenscript;
use std::collections::HashMap;
use std::error::Error;

use rowtree_db::{
    Bound, Database, KeyRange, KeySet, Mutation, ReadRequest, TimestampBound, Value, WriteKind,
};

type Result<T> = std::result::Result<T, Box<dyn Error>>;

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
fn value(text: &str) -> Result<Value> {
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
        fn next_sequence_value(
            &mut self,
            _: &str,
        ) -> std::result::Result<i64, rowtree_expr::Error> {
            unreachable!("no sequences in test values")
        }
        fn sequence_state(
            &mut self,
            _: &str,
        ) -> std::result::Result<Option<i64>, rowtree_expr::Error> {
            unreachable!("no sequences in test values")
        }
        fn pending_commit_timestamp(&mut self) -> std::result::Result<Value, rowtree_expr::Error> {
            Ok(Value::Timestamp(rowtree_db::PENDING_COMMIT_TIMESTAMP))
        }
    }
    let bad = |e: &dyn std::fmt::Display| format!("bad value {text}: {e}");
    let expr = rowtree_parser::parse_expr(text).map_err(|e| bad(&e))?;
    let bound = rowtree_expr::bind(&expr, &NoColumns, &Default::default()).map_err(|e| bad(&e))?;
    Ok(bound.eval(&[], &mut Ctx).map_err(|e| bad(&e))?)
}

/// `(1, 'a'), (2, 'b')` -> rows of values.
fn tuples(text: &str) -> Result<Vec<Vec<Value>>> {
    split_top(text, ',')
        .into_iter()
        .map(|t| {
            let inner = t
                .trim()
                .strip_prefix('(')
                .and_then(|s| s.strip_suffix(')'))
                .ok_or_else(|| format!("expected (..): {t}"))?;
            split_top(inner, ',').iter().map(|v| value(v)).collect()
        })
        .collect()
}

/// `T(a, b)` or `T@Index(a, b)` -> (table, index, columns).
fn target(text: &str) -> Result<(String, Option<String>, Vec<String>)> {
    let (name, cols) = text
        .trim()
        .strip_suffix(')')
        .and_then(|t| t.split_once('('))
        .ok_or_else(|| format!("expected T(columns): {text}"))?;
    let cols = cols
        .split(',')
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty())
        .collect();
    Ok(match name.trim().split_once('@') {
        Some((t, i)) => (t.to_string(), Some(i.to_string()), cols),
        None => (name.trim().to_string(), None, cols),
    })
}

/// `[a, b]` / `(a, b)` / `[a, b)` ...: the values inside a range bound.
fn bound_values(text: &str) -> Result<Vec<Value>> {
    let inner = text
        .get(1..text.len().saturating_sub(1))
        .ok_or_else(|| format!("bad range bound: {text}"))?;
    split_top(inner, ',').iter().map(|v| value(v)).collect()
}

/// `ALL`, `KEYS (1), (2)`, `RANGE [1] [3)`, `PREFIX (1)`.
fn key_set(text: &str) -> Result<KeySet> {
    let text = text.trim();
    if text == "ALL" {
        return Ok(KeySet::all());
    }
    if let Some(rest) = text.strip_prefix("KEYS") {
        return Ok(KeySet::keys(tuples(rest)?));
    }
    if let Some(rest) = text.strip_prefix("PREFIX") {
        let prefix = tuples(rest)?.into_iter().next().ok_or("PREFIX (key)")?;
        return Ok(KeySet::range(KeyRange::prefix(prefix)));
    }
    if let Some(rest) = text.strip_prefix("RANGE") {
        // `[` / `]` closed, `(` / `)` open.
        let rest = rest.trim();
        let first_end = rest.find([']', ')']).ok_or("RANGE start end")?;
        let (s, e) = rest.split_at(first_end + 1);
        let e = e.trim();
        let start = if s.starts_with('[') {
            Bound::Closed(bound_values(s)?)
        } else {
            Bound::Open(bound_values(s)?)
        };
        let end = if e.ends_with(']') {
            Bound::Closed(bound_values(e)?)
        } else {
            Bound::Open(bound_values(e)?)
        };
        return Ok(KeySet::range(KeyRange { start, end }));
    }
    Err(format!("bad key set: {text}").into())
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

fn mutation(text: &str) -> Result<Mutation> {
    let (kind, rest) = text
        .trim()
        .split_once(' ')
        .ok_or_else(|| format!("expected KIND ...: {text}"))?;
    if kind == "delete" {
        let (table, ks) = rest.trim().split_once(' ').ok_or("delete T KEYSET")?;
        return Ok(Mutation::delete(table, key_set(ks)?));
    }
    let kind = match kind {
        "insert" => WriteKind::Insert,
        "update" => WriteKind::Update,
        "insert_or_update" => WriteKind::InsertOrUpdate,
        "replace" => WriteKind::Replace,
        other => return Err(format!("unknown mutation {other}").into()),
    };
    let (target_text, rows) = rest
        .split_once("VALUES")
        .ok_or("KIND T(columns) VALUES (..)")?;
    let (table, _, columns) = target(target_text)?;
    Ok(Mutation::Write {
        kind,
        table,
        columns,
        rows: tuples(rows)?,
    })
}

impl Runner {
    /// Every split with its range in human terms and its row counters.
    fn splits(&self) -> String {
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

    /// Every stored key, decoded, as `Object(key values)`.
    fn dump(&self) -> Result<String> {
        let catalog = self.db.catalog();
        let mut out = Vec::new();
        for (_key, object, values) in self.db.dump()? {
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
        Ok(out.join("\n"))
    }

    /// `T(a, b) KEYSET` read now, or at a marked timestamp.
    fn read(&self, at: Option<&str>, text: &str) -> Result<String> {
        let at = at
            .map(|label| {
                self.marks
                    .get(label)
                    .copied()
                    .ok_or_else(|| format!("no mark {label}"))
            })
            .transpose()?;
        let close = text.find(')').ok_or("read \"T(columns) KEYSET\"")?;
        let (table, index, columns) = target(&text[..=close])?;
        let mut request = ReadRequest::new(&table, &[], key_set(&text[close + 1..])?);
        request.columns = columns;
        request.index = index;
        let rows = match at {
            None => self.db.read(&request),
            Some(ts) => self
                .db
                .read_only(TimestampBound::ReadTimestamp(ts))
                .and_then(|t| t.read(&request)),
        }
        .map_err(|e| format!("{}: {e}", e.code()))?;
        if rows.is_empty() {
            return Ok("(no rows)".into());
        }
        Ok(rows
            .iter()
            .map(|r| show_row(r))
            .collect::<Vec<_>>()
            .join("\n"))
    }
}

impl goldenscript::Runner for Runner {
    type Command = goldenscript::Command;

    fn run(
        &mut self,
        command: &goldenscript::Command,
        _context: &goldenscript::Context,
    ) -> Result<String> {
        let mut args = command.consume_args();
        let out = match command.name.as_str() {
            "ddl" => {
                let statement = args.next_pos().ok_or("ddl \"STATEMENT\"")?;
                args.reject_next()?;
                self.db
                    .apply_ddl_statement(statement)
                    .map_err(|e| format!("{}: {}", e.error.code(), e.error))?;
                "ok".to_string()
            }
            "commit" => {
                let mutations = std::iter::from_fn(|| args.next_pos())
                    .map(mutation)
                    .collect::<Result<Vec<_>>>()?;
                args.reject_next()?;
                if mutations.is_empty() {
                    return Err("commit \"MUTATION\"...".into());
                }
                self.db
                    .write(mutations)
                    .map_err(|e| format!("{}: {e}", e.code()))?;
                "committed".to_string()
            }
            "read" => {
                let at = args.take_key("at");
                let text = args
                    .next_pos()
                    .ok_or("read [at=LABEL] \"T(columns) KEYSET\"")?;
                args.reject_next()?;
                self.read(at, text)?
            }
            "mark" => {
                let label = args.next_pos().ok_or("mark LABEL")?;
                args.reject_next()?;
                self.marks
                    .insert(label.to_string(), self.db.visible_timestamp());
                String::new()
            }
            "dump" => {
                args.reject_next()?;
                self.dump()?
            }
            "split" => {
                let table = args.next_pos().ok_or("split T \"(key)\"")?;
                let key = args.next_pos().ok_or("split T \"(key)\"")?;
                args.reject_next()?;
                let key = tuples(key)?.into_iter().next().ok_or("split T \"(key)\"")?;
                let added = self
                    .db
                    .add_split_point(table, &key)
                    .map_err(|e| format!("{}: {e}", e.code()))?;
                format!("added: {added}")
            }
            "splits" => {
                args.reject_next()?;
                self.splits()
            }
            other => return Err(format!("unknown command {other}").into()),
        };
        Ok(out)
    }
}

// One test per script, and a check that every file of the directory has one.
rowtree_testkit::scripts! {
    dir: "mutations",
    runner: Runner { db: Database::in_memory(), marks: HashMap::new() },
    scripts: [
        constraints,
        indexes,
        interleave,
        mvcc,
        splits,
    ],
}
