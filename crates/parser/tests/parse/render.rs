//! The tree printer of the parse tests: a statement as an indented outline
//! headed by its kind and span, its expressions on one line each with every
//! operation parenthesized and every column reference marked `col:`, so
//! precedence and name resolution show at a glance.

use std::fmt::Write as _;

use rowtree_parser::ast::*;
use rowtree_parser::{ParseError, Position};

/// `line:column: message`, the position counted in `text` from `base` on.
pub fn error(text: &str, base: usize, error: &ParseError) -> String {
    format!(
        "{}: {}",
        Position::of(text, base + error.offset),
        error.message
    )
}

/// `start..end`, byte offsets into the parsed text.
pub fn span_str(span: Span) -> String {
    format!("{}..{}", span.start, span.end)
}

/// A statement as lines: a header with its span, then its parts indented.
pub fn render_statement(text: &str, statement: &Statement) -> Vec<String> {
    let mut out = Vec::new();
    let span = statement.span;
    let header = |s: String| format!("{s}  [{}]", span_str(span));
    assert_eq!(
        text.get(span.start..span.end).map(str::trim),
        text.get(span.start..span.end),
        "a statement span never starts or ends with whitespace"
    );
    match &statement.kind {
        StatementKind::Query(q) => {
            out.push(header("query".to_string()));
            render_query_body(&mut out, 1, q);
        }
        StatementKind::Insert(i) => {
            out.push(header(format!(
                "insert{} {} ({})",
                match i.mode {
                    InsertMode::Plain => "",
                    InsertMode::OrUpdate => " or update",
                    InsertMode::OrIgnore => " or ignore",
                },
                i.table.value,
                idents(&i.columns)
            )));
            match &i.source {
                InsertSource::Values(rows) => {
                    for row in rows {
                        out.push(format!("  values ({})", list(row)));
                    }
                }
                InsertSource::Query(q) => render_query(&mut out, 1, q),
            }
            render_returning(&mut out, &i.returning);
        }
        StatementKind::Update(u) => {
            out.push(header(format!(
                "update {}{}",
                u.table.value,
                alias_str(&u.alias)
            )));
            for (path, value) in &u.assignments {
                out.push(format!("  set {} = {}", dotted(path), expr_str(value)));
            }
            out.push(format!("  where {}", expr_str(&u.where_clause)));
            render_returning(&mut out, &u.returning);
        }
        StatementKind::Delete(d) => {
            out.push(header(format!(
                "delete {}{}",
                d.table.value,
                alias_str(&d.alias)
            )));
            out.push(format!("  where {}", expr_str(&d.where_clause)));
            render_returning(&mut out, &d.returning);
        }
        StatementKind::Explain { analyze, statement } => {
            out.push(header(format!("explain{}", flag(*analyze, " analyze"))));
            out.extend(
                render_statement(text, statement)
                    .into_iter()
                    .map(|l| format!("  {l}")),
            );
        }
        StatementKind::CreateTable(t) => {
            out.push(header(format!(
                "create table {}{}",
                t.name.value,
                flag(t.if_not_exists, " if not exists")
            )));
            for c in &t.columns {
                render_column(&mut out, "column", c);
            }
            for c in &t.constraints {
                render_constraint(&mut out, c);
            }
            out.push(format!("  primary key ({})", key_parts(&t.primary_key)));
            if let Some(i) = &t.interleave {
                out.push(format!("  {}", interleave_str(i)));
            }
        }
        StatementKind::AlterTable(a) => {
            out.push(header(format!("alter table {}", a.name.value)));
            match &a.action {
                AlterTableAction::AddColumn {
                    if_not_exists,
                    column,
                } => render_column(
                    &mut out,
                    if *if_not_exists {
                        "add column if not exists"
                    } else {
                        "add column"
                    },
                    column,
                ),
                AlterTableAction::DropColumn { name } => {
                    out.push(format!("  drop column {}", name.value))
                }
                AlterTableAction::AlterColumn { column } => {
                    render_column(&mut out, "alter column", column)
                }
                AlterTableAction::AlterColumnSetOptions { name, options } => out.push(format!(
                    "  alter column {} set options ({})",
                    name.value,
                    options_str(options)
                )),
                AlterTableAction::AlterColumnSetDefault { name, default } => out.push(format!(
                    "  alter column {} set default {}",
                    name.value,
                    source_str(default)
                )),
                AlterTableAction::AlterColumnDropDefault { name } => {
                    out.push(format!("  alter column {} drop default", name.value))
                }
                AlterTableAction::SetOnDelete(d) => {
                    out.push(format!("  set on delete {}", on_delete_str(*d)))
                }
                AlterTableAction::AddConstraint(c) => {
                    out.push("  add constraint".to_string());
                    render_constraint(&mut out, c);
                }
                AlterTableAction::DropConstraint { name } => {
                    out.push(format!("  drop constraint {}", name.value))
                }
            }
        }
        StatementKind::DropTable { name, if_exists } => out.push(header(format!(
            "drop table {}{}",
            name.value,
            flag(*if_exists, " if exists")
        ))),
        StatementKind::DropIndex { name, if_exists } => out.push(header(format!(
            "drop index {}{}",
            name.value,
            flag(*if_exists, " if exists")
        ))),
        StatementKind::DropSequence { name, if_exists } => out.push(header(format!(
            "drop sequence {}{}",
            name.value,
            flag(*if_exists, " if exists")
        ))),
        StatementKind::CreateIndex(i) => {
            out.push(header(format!(
                "create{}{} index {}{} on {}",
                flag(i.unique, " unique"),
                flag(i.null_filtered, " null_filtered"),
                i.name.value,
                flag(i.if_not_exists, " if not exists"),
                i.table.value
            )));
            out.push(format!("  keys ({})", key_parts(&i.keys)));
            if !i.storing.is_empty() {
                out.push(format!("  storing ({})", idents(&i.storing)));
            }
            if let Some(p) = &i.interleave_in {
                out.push(format!("  interleave in {}", p.value));
            }
        }
        StatementKind::CreateSequence(s) => {
            out.push(header(format!(
                "create sequence {}{}",
                s.name.value,
                flag(s.if_not_exists, " if not exists")
            )));
            out.push(format!("  {}", sequence_options_str(text, &s.options)));
        }
        StatementKind::AlterSequence(s) => {
            out.push(header(format!("alter sequence {}", s.name.value)));
            out.push(match &s.action {
                AlterSequenceAction::SetOptions(o) => {
                    format!("  set {}", sequence_options_str(text, o))
                }
                AlterSequenceAction::RestartCounterWith(n) => format!("  restart counter with {n}"),
                AlterSequenceAction::SkipRange(a, b) => format!("  skip range {a}, {b}"),
                AlterSequenceAction::NoSkipRange => "  no skip range".to_string(),
            });
        }
        StatementKind::AlterDatabase { name, options } => {
            out.push(header(format!("alter database {}", name.value)));
            out.push(format!("  set options ({})", options_str(options)));
        }
        StatementKind::CreateView(v) => {
            out.push(header(format!(
                "create{} view {} sql security {}",
                flag(v.or_replace, " or replace"),
                v.name.value,
                v.security.as_str()
            )));
            out.push(format!(
                "  query [{}] text={:?}",
                span_str(v.query.span),
                v.query_text
            ));
            render_query_body(&mut out, 2, &v.query);
        }
        StatementKind::DropView { name } => out.push(header(format!("drop view {}", name.value))),
        StatementKind::CreateRole { name } => {
            out.push(header(format!("create role {}", name.value)))
        }
        StatementKind::DropRole { name } => out.push(header(format!("drop role {}", name.value))),
        StatementKind::Grant(g) | StatementKind::Revoke(g) => {
            let (verb, to) = match &statement.kind {
                StatementKind::Grant(_) => ("grant", "to"),
                _ => ("revoke", "from"),
            };
            out.push(header(verb.to_string()));
            match &g.what {
                GrantItems::Roles(roles) => out.push(format!("  roles {}", idents(roles))),
                GrantItems::Privileges {
                    privileges,
                    object_kind,
                    objects,
                } => {
                    for p in privileges {
                        let mut line = format!("  privilege {}", p.kind.as_str());
                        if !p.columns.is_empty() {
                            line.push_str(&format!(" ({})", idents(&p.columns)));
                        }
                        line.push_str(&format!("  [{}]", span_str(p.span)));
                        out.push(line);
                    }
                    out.push(format!("  on {} {}", object_kind.as_str(), idents(objects)));
                }
            }
            out.push(format!("  {to} roles {}", idents(&g.roles)));
        }
        StatementKind::CreateProtoBundle { types } => {
            out.push(header("create proto bundle".to_string()));
            out.push(format!("  types ({})", proto_types(types)));
        }
        StatementKind::AlterProtoBundle(a) => {
            out.push(header("alter proto bundle".to_string()));
            for (what, list) in [
                ("insert", &a.insert),
                ("update", &a.update),
                ("delete", &a.delete),
            ] {
                if !list.is_empty() {
                    out.push(format!("  {what} ({})", proto_types(list)));
                }
            }
        }
        StatementKind::DropProtoBundle => out.push(header("drop proto bundle".to_string())),
    }
    out
}

fn proto_types(types: &[ProtoTypeName]) -> String {
    types
        .iter()
        .map(|t| format!("{} [{}]", t.name, span_str(t.span)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn flag(on: bool, text: &str) -> &str {
    if on {
        text
    } else {
        ""
    }
}

fn render_column(out: &mut Vec<String>, what: &str, c: &ColumnDef) {
    let mut line = format!("  {what} {} {}", c.name.value, type_str(&c.data_type));
    if c.not_null {
        line.push_str(" NOT NULL");
    }
    if c.hidden {
        line.push_str(" HIDDEN");
    }
    if !c.options.is_empty() {
        let _ = write!(line, " OPTIONS ({})", options_str(&c.options));
    }
    out.push(line);
    if let Some(d) = &c.default {
        out.push(format!("    default {}", source_str(d)));
    }
    if let Some(g) = &c.generated {
        out.push(format!(
            "    as{} {}",
            flag(g.stored, " stored"),
            source_str(&g.expr)
        ));
    }
    if let Some(o) = &c.identity {
        out.push(format!("    identity {}", sequence_options_str("", o)));
    }
}

fn render_constraint(out: &mut Vec<String>, c: &TableConstraint) {
    match c {
        TableConstraint::ForeignKey(fk) => out.push(format!(
            "  foreign key{} ({}) references {} ({}) on delete {}{}",
            fk.name
                .as_ref()
                .map(|n| format!(" {}", n.value))
                .unwrap_or_default(),
            idents(&fk.columns),
            fk.referenced_table.value,
            idents(&fk.referenced_columns),
            on_delete_str(fk.on_delete),
            flag(fk.not_enforced, " not enforced"),
        )),
        TableConstraint::Check(ch) => out.push(format!(
            "  check{} {}",
            ch.name
                .as_ref()
                .map(|n| format!(" {}", n.value))
                .unwrap_or_default(),
            source_str(&ch.expr)
        )),
    }
}

fn source_str(s: &SourceExpr) -> String {
    format!("({}) => {}", s.text.replace('\n', "\\n"), expr_str(&s.expr))
}

fn sequence_options_str(text: &str, o: &SequenceOptions) -> String {
    let mut parts = vec![format!("kind={}", o.kind.as_deref().unwrap_or("none"))];
    if let Some((a, b)) = o.skip_range {
        parts.push(format!("skip_range={a},{b}"));
    }
    if let Some(n) = o.start_with_counter {
        parts.push(format!("start_with_counter={n}"));
    }
    if !o.raw_options.is_empty() {
        parts.push(format!("raw=({})", options_str(&o.raw_options)));
    }
    if !text.is_empty() {
        parts.push(format!(
            "text={:?}",
            text.get(o.span.start..o.span.end).unwrap_or("<bad span>")
        ));
    }
    parts.join(" ")
}

fn options_str(options: &[OptionPair]) -> String {
    options
        .iter()
        .map(|o| format!("{}={}", o.name.value, expr_str(&o.value)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn idents(list: &[Ident]) -> String {
    list.iter()
        .map(|i| i.value.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn key_parts(parts: &[KeyPart]) -> String {
    parts
        .iter()
        .map(|p| format!("{}{}", p.column.value, flag(p.desc, " DESC")))
        .collect::<Vec<_>>()
        .join(", ")
}

fn on_delete_str(d: OnDelete) -> &'static str {
    match d {
        OnDelete::NoAction => "no action",
        OnDelete::Cascade => "cascade",
    }
}

fn interleave_str(i: &Interleave) -> String {
    match i.kind {
        InterleaveKind::InParent(d) => format!(
            "interleave in parent {} on delete {}",
            i.parent.value,
            on_delete_str(d)
        ),
        InterleaveKind::In => format!("interleave in {}", i.parent.value),
    }
}

fn type_str(t: &DataType) -> String {
    let len = |l: &Length| match l {
        Length::Max => "MAX".to_string(),
        Length::Limit(n) => n.to_string(),
    };
    match t {
        DataType::Bool => "BOOL".into(),
        DataType::Int64 => "INT64".into(),
        DataType::Float32 => "FLOAT32".into(),
        DataType::Float64 => "FLOAT64".into(),
        DataType::Numeric => "NUMERIC".into(),
        DataType::String(l) => format!("STRING({})", len(l)),
        DataType::Bytes(l) => format!("BYTES({})", len(l)),
        DataType::Date => "DATE".into(),
        DataType::Timestamp => "TIMESTAMP".into(),
        DataType::Json => "JSON".into(),
        DataType::Array(t) => format!("ARRAY<{}>", type_str(t)),
        DataType::Struct(fields) => format!(
            "STRUCT<{}>",
            fields
                .iter()
                .map(|(name, t)| match name {
                    Some(n) => format!("{} {}", n.value, type_str(t)),
                    None => type_str(t),
                })
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn list(items: &[Expr]) -> String {
    items.iter().map(expr_str).collect::<Vec<_>>().join(", ")
}

/// Expressions print fully parenthesised where precedence matters, so the
/// tree shape is visible: `a + b * c` prints as `(a + (b * c))`.
/// An expression on one line, fully parenthesized.
pub fn expr_str(e: &Expr) -> String {
    match e {
        Expr::Literal { value, .. } => match value {
            Literal::Null => "NULL".into(),
            Literal::Bool(b) => if *b { "TRUE" } else { "FALSE" }.into(),
            Literal::Integer(t) | Literal::Float(t) => t.clone(),
            Literal::String(s) => format!("{s:?}"),
            Literal::Bytes(b) => format!("b\"{}\"", b.escape_ascii()),
            Literal::Typed(ty, s) => format!("{ty:?} {s:?}"),
        },
        Expr::Column { path, .. } => format!("col:{}", idents(path).replace(", ", ".")),
        Expr::Parameter { name, .. } => format!("@{name}"),
        Expr::Unary { op, expr, .. } => {
            let op = match op {
                UnaryOp::Not => "NOT ",
                UnaryOp::Neg => "-",
                UnaryOp::Plus => "+",
                UnaryOp::BitNot => "~",
            };
            format!("({op}{})", expr_str(expr))
        }
        Expr::Binary {
            op, left, right, ..
        } => {
            let op = op.symbol();
            format!("({} {op} {})", expr_str(left), expr_str(right))
        }
        Expr::Function {
            name,
            args,
            safe,
            distinct,
            modifiers,
            ..
        } => {
            let mut inner = format!("{}{}", flag(*distinct, "DISTINCT "), list(args));
            if let Some(m) = modifiers {
                match m.ignore_nulls {
                    Some(true) => inner.push_str(" IGNORE NULLS"),
                    Some(false) => inner.push_str(" RESPECT NULLS"),
                    None => {}
                }
                if !m.order_by.is_empty() {
                    let _ = write!(inner, " ORDER BY {}", order_by_str(&m.order_by));
                }
                if let Some(l) = &m.limit {
                    let _ = write!(inner, " LIMIT {}", expr_str(l));
                }
            }
            let mut call = format!("{}{}({inner})", flag(*safe, "SAFE."), name.value);
            if let Some(w) = modifiers.as_ref().and_then(|m| m.over.as_ref()) {
                let mut spec = Vec::new();
                if !w.partition_by.is_empty() {
                    spec.push(format!("PARTITION BY {}", list(&w.partition_by)));
                }
                if !w.order_by.is_empty() {
                    spec.push(format!("ORDER BY {}", order_by_str(&w.order_by)));
                }
                let _ = write!(call, " OVER({})", spec.join(" "));
            }
            call
        }
        Expr::Star { .. } => "*".into(),
        Expr::Default { .. } => "DEFAULT".into(),
        Expr::Subquery { query, .. } => format!("SUBQUERY{{{}}}", query_inline(query)),
        Expr::Exists { query, .. } => format!("EXISTS{{{}}}", query_inline(query)),
        Expr::ArraySubquery { query, .. } => format!("ARRAY{{{}}}", query_inline(query)),
        Expr::InSubquery {
            expr,
            query,
            negated,
            ..
        } => format!(
            "({} {}IN {{{}}})",
            expr_str(expr),
            flag(*negated, "NOT "),
            query_inline(query)
        ),
        Expr::InUnnest {
            expr,
            array,
            negated,
            ..
        } => format!(
            "({} {}IN UNNEST({}))",
            expr_str(expr),
            flag(*negated, "NOT "),
            expr_str(array)
        ),
        Expr::Extract {
            part,
            expr,
            time_zone,
            ..
        } => format!(
            "EXTRACT({} FROM {}{})",
            part.value,
            expr_str(expr),
            time_zone
                .as_ref()
                .map(|tz| format!(" AT TIME ZONE {}", expr_str(tz)))
                .unwrap_or_default()
        ),
        Expr::Sequence { name, .. } => format!("SEQUENCE {}", name.value),
        Expr::Cast { expr, to, safe, .. } => format!(
            "{}CAST({} AS {})",
            flag(*safe, "SAFE_"),
            expr_str(expr),
            type_str(to)
        ),
        Expr::Is {
            expr,
            test,
            negated,
            ..
        } => format!(
            "({} IS {}{})",
            expr_str(expr),
            flag(*negated, "NOT "),
            format!("{test:?}").to_uppercase()
        ),
        Expr::InList {
            expr,
            list: items,
            negated,
            ..
        } => format!(
            "({} {}IN ({}))",
            expr_str(expr),
            flag(*negated, "NOT "),
            list(items)
        ),
        Expr::Between {
            expr,
            low,
            high,
            negated,
            ..
        } => format!(
            "({} {}BETWEEN {} AND {})",
            expr_str(expr),
            flag(*negated, "NOT "),
            expr_str(low),
            expr_str(high)
        ),
        Expr::Like {
            expr,
            pattern,
            negated,
            ..
        } => format!(
            "({} {}LIKE {})",
            expr_str(expr),
            flag(*negated, "NOT "),
            expr_str(pattern)
        ),
        Expr::Case {
            operand,
            branches,
            else_expr,
            ..
        } => {
            let mut s = "CASE".to_string();
            if let Some(o) = operand {
                let _ = write!(s, " {}", expr_str(o));
            }
            for (w, t) in branches {
                let _ = write!(s, " WHEN {} THEN {}", expr_str(w), expr_str(t));
            }
            if let Some(e) = else_expr {
                let _ = write!(s, " ELSE {}", expr_str(e));
            }
            s + " END"
        }
        Expr::Array {
            element_type,
            items,
            ..
        } => format!(
            "ARRAY{}[{}]",
            element_type
                .as_ref()
                .map(|t| format!("<{}>", type_str(t)))
                .unwrap_or_default(),
            list(items)
        ),
        Expr::Struct {
            fields,
            field_types: Some(types),
            ..
        } => format!(
            "STRUCT<{}>({})",
            fields
                .iter()
                .zip(types)
                .map(|((n, _), t)| match n {
                    Some(n) => format!("{} {}", n.value, type_str(t)),
                    None => type_str(t),
                })
                .collect::<Vec<_>>()
                .join(", "),
            fields
                .iter()
                .map(|(_, e)| expr_str(e))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Expr::Struct { fields, .. } => format!(
            "STRUCT({})",
            fields
                .iter()
                .map(|(n, e)| match n {
                    Some(n) => format!("{} AS {}", expr_str(e), n.value),
                    None => expr_str(e),
                })
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Expr::Subscript {
            expr, index, mode, ..
        } => format!("{}[{mode:?}({})]", expr_str(expr), expr_str(index)),
        Expr::Field { expr, field, .. } => format!("({}).{}", expr_str(expr), field.value),
        Expr::Interval { value, unit, .. } => {
            format!("INTERVAL {} {}", expr_str(value), unit.value)
        }
    }
}

// ---------------------------------------------------------------------------
// Queries and DML.
//
// At statement level a query prints as an indented tree: set operations show
// their operands beneath them, each SELECT clause gets a line, and a FROM
// clause prints its join tree with one node per line. Inside expressions
// (subqueries) a query prints on one line in braces, with set operations and
// joins fully parenthesised.

fn pad(depth: usize) -> String {
    "  ".repeat(depth)
}

fn dotted(path: &[Ident]) -> String {
    path.iter()
        .map(|i| i.value.as_str())
        .collect::<Vec<_>>()
        .join(".")
}

fn alias_str(alias: &Option<Ident>) -> String {
    alias
        .as_ref()
        .map(|a| format!(" AS {}", a.value))
        .unwrap_or_default()
}

fn hints_str(hints: &[Hint]) -> String {
    if hints.is_empty() {
        return String::new();
    }
    format!(
        " @{{{}}}",
        hints
            .iter()
            .map(|h| format!("{}={}", h.name.value, expr_str(&h.value)))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

fn order_by_str(items: &[OrderByItem]) -> String {
    items
        .iter()
        .map(|o| {
            format!(
                "{}{}{}",
                expr_str(&o.expr),
                flag(o.desc, " DESC"),
                match o.nulls_first {
                    Some(true) => " NULLS FIRST",
                    Some(false) => " NULLS LAST",
                    None => "",
                }
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn select_item_str(item: &SelectItem) -> String {
    match item {
        SelectItem::Expr { expr, alias } => format!("{}{}", expr_str(expr), alias_str(alias)),
        SelectItem::Star {
            except, replace, ..
        } => {
            let mut s = "*".to_string();
            if !except.is_empty() {
                let _ = write!(s, " EXCEPT ({})", idents(except));
            }
            if !replace.is_empty() {
                let _ = write!(
                    s,
                    " REPLACE ({})",
                    replace
                        .iter()
                        .map(|(e, c)| format!("{} AS {}", expr_str(e), c.value))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
            s
        }
        SelectItem::QualifiedStar {
            expr: Some(expr), ..
        } => format!("{}.*", expr_str(expr)),
        SelectItem::QualifiedStar { qualifier, .. } => format!("{}.*", dotted(qualifier)),
    }
}

fn select_items_str(items: &[SelectItem]) -> String {
    items
        .iter()
        .map(select_item_str)
        .collect::<Vec<_>>()
        .join(", ")
}

fn render_returning(out: &mut Vec<String>, returning: &Option<Returning>) {
    if let Some(items) = returning {
        out.push(format!("  then return {}", select_items_str(items)));
    }
}

fn set_op_str(op: SetOperator, all: bool) -> String {
    let op = match op {
        SetOperator::Union => "union",
        SetOperator::Intersect => "intersect",
        SetOperator::Except => "except",
    };
    format!("{op} {}", if all { "all" } else { "distinct" })
}

fn join_kind_str(kind: JoinKind) -> &'static str {
    match kind {
        JoinKind::Inner => "inner",
        JoinKind::Left => "left",
        JoinKind::Right => "right",
        JoinKind::Full => "full",
        JoinKind::Cross => "cross",
    }
}

fn condition_str(condition: &JoinCondition) -> String {
    match condition {
        JoinCondition::On(e) => format!(" ON {}", expr_str(e)),
        JoinCondition::Using(cols) => format!(" USING ({})", idents(cols)),
        JoinCondition::None => String::new(),
    }
}

fn with_offset_str(with_offset: &Option<Option<Ident>>) -> String {
    match with_offset {
        None => String::new(),
        Some(None) => " WITH OFFSET".into(),
        Some(Some(o)) => format!(" WITH OFFSET AS {}", o.value),
    }
}

/// A nested query: a `query` line with its span, the query beneath it.
fn render_query(out: &mut Vec<String>, depth: usize, q: &Query) {
    out.push(format!("{}query  [{}]", pad(depth), span_str(q.span)));
    render_query_body(out, depth + 1, q);
}

fn render_query_body(out: &mut Vec<String>, depth: usize, q: &Query) {
    let p = pad(depth);
    if !q.hints.is_empty() {
        out.push(format!("{p}hints{}", hints_str(&q.hints)));
    }
    for cte in &q.with {
        out.push(format!("{p}with {}", cte.name.value));
        render_query(out, depth + 1, &cte.query);
    }
    render_set_expr(out, depth, &q.body);
    if !q.order_by.is_empty() {
        out.push(format!("{p}order by {}", order_by_str(&q.order_by)));
    }
    if let Some(l) = &q.limit {
        out.push(format!("{p}limit {}", expr_str(l)));
    }
    if let Some(o) = &q.offset {
        out.push(format!("{p}offset {}", expr_str(o)));
    }
}

fn render_set_expr(out: &mut Vec<String>, depth: usize, body: &SetExpr) {
    let p = pad(depth);
    match body {
        SetExpr::Select(s) => {
            out.push(format!(
                "{p}select{}{}  [{}]",
                flag(s.distinct, " distinct"),
                flag(s.as_struct, " as struct"),
                span_str(s.span)
            ));
            for item in &s.items {
                out.push(format!("{p}  item {}", select_item_str(item)));
            }
            if let Some(from) = &s.from {
                out.push(format!("{p}  from"));
                render_table_expr(out, depth + 2, from);
            }
            if let Some(w) = &s.where_clause {
                out.push(format!("{p}  where {}", expr_str(w)));
            }
            if !s.group_by.is_empty() {
                out.push(format!("{p}  group by {}", list(&s.group_by)));
            }
            if let Some(h) = &s.having {
                out.push(format!("{p}  having {}", expr_str(h)));
            }
        }
        SetExpr::Query(q) => render_query(out, depth, q),
        SetExpr::SetOperation {
            op,
            all,
            left,
            right,
            span,
        } => {
            out.push(format!(
                "{p}{}  [{}]",
                set_op_str(*op, *all),
                span_str(*span)
            ));
            render_set_expr(out, depth + 1, left);
            render_set_expr(out, depth + 1, right);
        }
    }
}

fn render_table_expr(out: &mut Vec<String>, depth: usize, te: &TableExpr) {
    let p = pad(depth);
    match te {
        TableExpr::Table {
            path,
            alias,
            hints,
            span,
        } => out.push(format!(
            "{p}table {}{}{}  [{}]",
            dotted(path),
            alias_str(alias),
            hints_str(hints),
            span_str(*span)
        )),
        TableExpr::Subquery { query, alias, span } => {
            out.push(format!(
                "{p}subquery{}  [{}]",
                alias_str(alias),
                span_str(*span)
            ));
            render_query(out, depth + 1, query);
        }
        TableExpr::Unnest {
            array,
            alias,
            with_offset,
            span,
        } => out.push(format!(
            "{p}unnest {}{}{}  [{}]",
            expr_str(array),
            alias_str(alias),
            with_offset_str(with_offset),
            span_str(*span)
        )),
        TableExpr::Join {
            kind,
            left,
            right,
            condition,
            hints,
            span,
        } => {
            out.push(format!(
                "{p}{} join{}{}  [{}]",
                join_kind_str(*kind),
                hints_str(hints),
                condition_str(condition),
                span_str(*span)
            ));
            render_table_expr(out, depth + 1, left);
            render_table_expr(out, depth + 1, right);
        }
    }
}

/// A query on one line, for subqueries inside expressions.
fn query_inline(q: &Query) -> String {
    let mut parts = Vec::new();
    if !q.hints.is_empty() {
        parts.push(hints_str(&q.hints).trim_start().to_string());
    }
    if !q.with.is_empty() {
        parts.push(format!(
            "WITH {}",
            q.with
                .iter()
                .map(|c| format!("{} AS {{{}}}", c.name.value, query_inline(&c.query)))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    parts.push(set_expr_inline(&q.body));
    if !q.order_by.is_empty() {
        parts.push(format!("ORDER BY {}", order_by_str(&q.order_by)));
    }
    if let Some(l) = &q.limit {
        parts.push(format!("LIMIT {}", expr_str(l)));
    }
    if let Some(o) = &q.offset {
        parts.push(format!("OFFSET {}", expr_str(o)));
    }
    parts.join(" ")
}

fn set_expr_inline(body: &SetExpr) -> String {
    match body {
        SetExpr::Select(s) => {
            let mut out = format!(
                "SELECT{}{} {}",
                flag(s.distinct, " DISTINCT"),
                flag(s.as_struct, " AS STRUCT"),
                select_items_str(&s.items)
            );
            if let Some(from) = &s.from {
                let _ = write!(out, " FROM {}", table_expr_inline(from));
            }
            if let Some(w) = &s.where_clause {
                let _ = write!(out, " WHERE {}", expr_str(w));
            }
            if !s.group_by.is_empty() {
                let _ = write!(out, " GROUP BY {}", list(&s.group_by));
            }
            if let Some(h) = &s.having {
                let _ = write!(out, " HAVING {}", expr_str(h));
            }
            out
        }
        SetExpr::Query(q) => format!("({})", query_inline(q)),
        SetExpr::SetOperation {
            op,
            all,
            left,
            right,
            ..
        } => format!(
            "({} {} {})",
            set_expr_inline(left),
            set_op_str(*op, *all).to_uppercase(),
            set_expr_inline(right)
        ),
    }
}

fn table_expr_inline(te: &TableExpr) -> String {
    match te {
        TableExpr::Table {
            path, alias, hints, ..
        } => format!("{}{}{}", dotted(path), alias_str(alias), hints_str(hints)),
        TableExpr::Subquery { query, alias, .. } => {
            format!("({}){}", query_inline(query), alias_str(alias))
        }
        TableExpr::Unnest {
            array,
            alias,
            with_offset,
            ..
        } => format!(
            "UNNEST({}){}{}",
            expr_str(array),
            alias_str(alias),
            with_offset_str(with_offset)
        ),
        TableExpr::Join {
            kind,
            left,
            right,
            condition,
            hints,
            ..
        } => format!(
            "({} {} JOIN{} {}{})",
            table_expr_inline(left),
            join_kind_str(*kind).to_uppercase(),
            hints_str(hints),
            table_expr_inline(right),
            condition_str(condition)
        ),
    }
}
