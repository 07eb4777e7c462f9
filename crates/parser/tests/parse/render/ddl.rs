//! DDL parts: columns with their types, defaults and generated
//! expressions; constraints; keys and interleaving; options.

use std::fmt::Write as _;

use rowtree_parser::ast::*;

use super::{expr_str, flag, idents, span_str};

pub(super) fn proto_types(types: &[ProtoTypeName]) -> String {
    types
        .iter()
        .map(|t| format!("{} [{}]", t.name, span_str(t.span)))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn render_column(out: &mut Vec<String>, what: &str, c: &ColumnDef) {
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

pub(super) fn render_constraint(out: &mut Vec<String>, c: &TableConstraint) {
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

pub(super) fn source_str(s: &SourceExpr) -> String {
    format!("({}) => {}", s.text.replace('\n', "\\n"), expr_str(&s.expr))
}

pub(super) fn sequence_options_str(text: &str, o: &SequenceOptions) -> String {
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

pub(super) fn options_str(options: &[OptionPair]) -> String {
    options
        .iter()
        .map(|o| format!("{}={}", o.name.value, expr_str(&o.value)))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn key_parts(parts: &[KeyPart]) -> String {
    parts
        .iter()
        .map(|p| format!("{}{}", p.column.value, flag(p.desc, " DESC")))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn on_delete_str(d: OnDelete) -> &'static str {
    match d {
        OnDelete::NoAction => "no action",
        OnDelete::Cascade => "cascade",
    }
}

pub(super) fn interleave_str(i: &Interleave) -> String {
    match i.kind {
        InterleaveKind::InParent(d) => format!(
            "interleave in parent {} on delete {}",
            i.parent.value,
            on_delete_str(d)
        ),
        InterleaveKind::In => format!("interleave in {}", i.parent.value),
    }
}

pub(super) fn type_str(t: &DataType) -> String {
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
        DataType::Uuid => "UUID".into(),
        DataType::Proto(name) => format!("PROTO<{name}>"),
        DataType::Enum(name) => format!("ENUM<{name}>"),
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
