//! Column definitions: checking one, and binding the expressions of a table's
//! columns once all of them are known.

use rowtree_parser::ast::{self, ColumnDef, Expr, Ident, Literal};
use rowtree_types::{ProtoKind, Type};

use crate::error::{Result, SchemaError};
use crate::expressions::{bind_default, bind_generated, rebind, ColumnTarget, TableScope};
use crate::limits::{MAX_BYTES_LENGTH, MAX_STRING_LENGTH};
use crate::names;
use crate::sequence::{self, Sequence, SequenceSpelling};
use crate::state::State;
use crate::table::{Column, ColumnExpr, Table};

/// Checks a column definition on its own (name, type, options, which
/// clauses may be combined) and returns the column without its expressions,
/// which [`bind_column_expressions`] adds once every column is known.
pub(crate) fn new_column(state: &State, table: &str, def: &ColumnDef, id: u32) -> Result<Column> {
    names::validate("Column", &def.name.value, def.name.span)?;
    let full_name = format!("{table}.{}", def.name.value);
    check_lengths(&full_name, &def.data_type, def.type_span)?;
    let data_type = resolve_proto_types(state, &def.data_type, def.type_span)?;
    let ty = data_type.value_type();

    let (allow_commit_timestamp, commit_timestamp_option_set) = read_column_options(&def.options)?;
    if commit_timestamp_option_set && ty != Type::Timestamp {
        return Err(SchemaError::precondition(
            format!(
                "Column {full_name} has invalid allow_commit_timestamp option.  Option only \
                 allowed on TIMESTAMP columns."
            ),
            def.options.first().map(|o| o.name.span),
        ));
    }

    let clauses = [
        def.default.is_some(),
        def.generated.is_some(),
        def.identity.is_some(),
    ];
    if clauses.iter().filter(|c| **c).count() > 1 {
        return Err(SchemaError::precondition(
            format!(
                "Column {} with a DEFAULT value cannot be a generated column and vice versa.",
                def.name.value
            ),
            def.name.span,
        ));
    }
    if let Some(generated) = &def.generated {
        if !generated.stored && def.not_null {
            return Err(SchemaError::invalid(
                format!(
                    "Generated column `{full_name}` that are not marked as STORED cannot be \
                     specified as NOT NULL."
                ),
                def.name.span,
            ));
        }
    }
    if def.identity.is_some() && ty != Type::Int64 {
        return Err(SchemaError::invalid(
            format!("Identity column `{full_name}` has type {ty}; identity columns must be INT64."),
            def.type_span,
        ));
    }

    Ok(Column {
        id,
        name: def.name.value.clone(),
        data_type,
        ty,
        not_null: def.not_null,
        default: None,
        generated: None,
        generated_stored: def.generated.as_ref().is_some_and(|g| g.stored),
        allow_commit_timestamp,
        commit_timestamp_option_set,
        hidden: def.hidden,
        identity_sequence: None,
    })
}

/// Resolves the proto bundle types of a declared column type (also inside
/// an array): each must be in the bundle and defined by its descriptors,
/// which say whether it is a message (PROTO) or an enum (ENUM).
pub(crate) fn resolve_proto_types(
    state: &State,
    data_type: &ast::DataType,
    span: ast::Span,
) -> Result<ast::DataType> {
    match data_type {
        ast::DataType::Array(inner) => Ok(ast::DataType::Array(Box::new(resolve_proto_types(
            state, inner, span,
        )?))),
        ast::DataType::Proto(name) | ast::DataType::Enum(name) => {
            let in_bundle = state
                .proto_bundle
                .as_ref()
                .is_some_and(|b| b.iter().any(|n| n == name));
            if !in_bundle {
                return Err(SchemaError::invalid(
                    format!("Type not found: {name}. It is not in the proto bundle."),
                    span,
                ));
            }
            match state.proto_descriptors.as_ref().and_then(|d| d.kind(name)) {
                Some(ProtoKind::Message) => Ok(ast::DataType::Proto(name.clone())),
                Some(ProtoKind::Enum) => Ok(ast::DataType::Enum(name.clone())),
                None => Err(SchemaError::invalid(
                    format!("Type not found: {name}. The proto descriptors do not define it."),
                    span,
                )),
            }
        }
        other => Ok(other.clone()),
    }
}

/// Refuses `STRING(0)`, `BYTES(20000000)` and the like, also inside arrays.
pub(crate) fn check_lengths(
    full_name: &str,
    data_type: &ast::DataType,
    span: ast::Span,
) -> Result<()> {
    let (length, max) = match data_type {
        ast::DataType::String(ast::Length::Limit(n)) => (*n, MAX_STRING_LENGTH),
        ast::DataType::Bytes(ast::Length::Limit(n)) => (*n, MAX_BYTES_LENGTH),
        ast::DataType::Array(inner) => return check_lengths(full_name, inner, span),
        _ => return Ok(()),
    };
    if length == 0 || length > max {
        return Err(SchemaError::invalid(
            format!(
                "Bad length for column {full_name}: {length} : Allowed length range: [1, {max}]."
            ),
            span,
        ));
    }
    Ok(())
}

/// Reads a column's OPTIONS list: `(allow_commit_timestamp, explicitly set)`.
pub(crate) fn read_column_options(options: &[ast::OptionPair]) -> Result<(bool, bool)> {
    let mut value = (false, false);
    for option in options {
        if !option.name.matches("allow_commit_timestamp") {
            return Err(SchemaError::invalid(
                format!("Option: {} is unknown.", option.name.value),
                option.name.span,
            ));
        }
        value = match &option.value {
            Expr::Literal {
                value: Literal::Bool(b),
                ..
            } => (*b, true),
            Expr::Literal {
                value: Literal::Null,
                ..
            } => (false, false),
            other => {
                return Err(SchemaError::invalid(
                    "Option: allow_commit_timestamp is a bool option.",
                    other.span(),
                ))
            }
        };
    }
    Ok(value)
}

/// The scope expressions of `table` are bound in.
pub(crate) fn scope_of(table: &Table) -> TableScope<'_> {
    TableScope {
        table: &table.name,
        columns: table
            .columns
            .iter()
            .map(|c| (c.name.clone(), c.ty.clone()))
            .collect(),
        protos: None,
        exact_numeric: false,
    }
}

/// [`scope_of`], with the proto descriptors of `state` (so DEFAULT and
/// generated expressions may read message fields).
pub(crate) fn scope_in<'a>(state: &State, table: &'a Table) -> TableScope<'a> {
    TableScope {
        protos: state.proto_descriptors.clone(),
        exact_numeric: state.dialect == rowtree_types::Dialect::PostgreSql,
        ..scope_of(table)
    }
}

/// Binds DEFAULT, generated and identity clauses of the columns at
/// `positions` (whose definitions are `defs`), creating identity sequences in
/// `state`, then recomputes the table's generated column order.
pub(crate) fn bind_column_expressions(
    state: &mut State,
    table: &mut Table,
    defs: &[(usize, &ColumnDef)],
) -> Result<()> {
    for (position, def) in defs {
        let position = *position;
        let scope = scope_in(state, table);
        let column = &table.columns[position];
        let target = ColumnTarget {
            table: &table.name,
            column: &column.name,
            ty: &column.ty,
            allow_commit_timestamp: column.allow_commit_timestamp,
        };
        if let Some(source) = &def.default {
            let bound = bind_default(source, &scope, &target)?;
            check_sequences_exist(state, &bound, source.expr.span())?;
            table.columns[position].default = Some(bound);
        } else if let Some(generated) = &def.generated {
            let bound = bind_generated(&generated.expr, generated.stored, &scope, &target)?;
            table.columns[position].generated = Some(bound);
        } else if let Some(options) = &def.identity {
            let (name, default) = create_identity_sequence(state, table, position, options)?;
            table.columns[position].identity_sequence = Some(name);
            table.columns[position].default = Some(default);
        }
    }
    table.generated_order = generated_order(table)?;
    for &g in &table.generated_order {
        if let Some(generated) = &table.columns[g].generated {
            for dep in generated.expr.columns() {
                if table
                    .columns
                    .get(dep)
                    .is_some_and(|c| c.allow_commit_timestamp)
                    && table.columns[g].generated_stored
                {
                    return Err(SchemaError::precondition(
                        format!(
                            "Cannot use commit timestamp column `{}` as a dependency of a \
                             materialized generated column.",
                            table.columns[dep].name
                        ),
                        None,
                    ));
                }
            }
        }
    }
    Ok(())
}

/// `GET_NEXT_SEQUENCE_VALUE(SEQUENCE s)` in a DEFAULT needs `s` to exist.
pub(crate) fn check_sequences_exist(
    state: &State,
    bound: &ColumnExpr,
    span: ast::Span,
) -> Result<()> {
    for name in bound.expr.sequences() {
        if state.sequence_position(&name).is_none() {
            return Err(SchemaError::not_found(
                format!("Sequence not found: {name}"),
                span,
            ));
        }
    }
    Ok(())
}

/// Creates the internal sequence of an identity column and the DEFAULT that
/// draws from it.
fn create_identity_sequence(
    state: &mut State,
    table: &Table,
    position: usize,
    options: &ast::SequenceOptions,
) -> Result<(String, ColumnExpr)> {
    let column = &table.columns[position];
    let settings = sequence::read_settings(options)?;
    let kind = settings.kind.clone().flatten();
    if kind.is_none() && state.database_option("default_sequence_kind").is_none() {
        return Err(SchemaError::invalid(
            format!(
                "The sequence kind of an identity column {} is not specified. Please specify the \
                 sequence kind explicitly or set the database option `default_sequence_kind`.",
                column.name
            ),
            options.span,
        ));
    }
    let start = settings.start_with_counter.flatten();
    let skip_range = sequence::validate(
        kind.as_deref(),
        (settings.skip_min.flatten(), settings.skip_max.flatten()),
        start,
        options.span,
    )?;
    let name = format!("_identity_seq_{}_{}", table.id, column.id);
    let id = state.take_sequence_id();
    state.sequences.push(Sequence {
        id,
        name: name.clone(),
        skip_range,
        start_with_counter: start.unwrap_or(1),
        internal: true,
        spelling: SequenceSpelling {
            options_form: false,
            kind_explicit: kind.is_some(),
            start_explicit: start.is_some(),
        },
    });
    let span = options.span;
    let call = Expr::Function {
        name: Ident {
            value: "GET_NEXT_SEQUENCE_VALUE".into(),
            span,
        },
        args: vec![Expr::Sequence {
            name: Ident {
                value: name.clone(),
                span,
            },
            span,
        }],
        safe: false,
        distinct: false,
        modifiers: None,
        span,
    };
    let source = ast::SourceExpr {
        text: format!("GET_NEXT_SEQUENCE_VALUE(SEQUENCE {name})"),
        expr: call,
    };
    let target = ColumnTarget {
        table: &table.name,
        column: &column.name,
        ty: &column.ty,
        allow_commit_timestamp: false,
    };
    let default = bind_default(&source, &scope_of(table), &target)?;
    Ok((name, default))
}

/// Orders generated columns so each comes after the generated columns it
/// reads; refuses cycles.
pub(crate) fn generated_order(table: &Table) -> Result<Vec<usize>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Visiting,
        Done,
    }
    fn visit(table: &Table, g: usize, marks: &mut [Mark], order: &mut Vec<usize>) -> Result<()> {
        match marks[g] {
            Mark::Done => return Ok(()),
            Mark::Visiting => {
                return Err(SchemaError::invalid(
                    format!(
                        "Cycle detected while analysing the generated column `{}.{}`: a \
                         generated column cannot depend on itself.",
                        table.name, table.columns[g].name
                    ),
                    None,
                ))
            }
            Mark::New => {}
        }
        marks[g] = Mark::Visiting;
        if let Some(generated) = &table.columns[g].generated {
            for dep in generated.expr.columns() {
                if table
                    .columns
                    .get(dep)
                    .is_some_and(|c| c.generated.is_some())
                {
                    visit(table, dep, marks, order)?;
                }
            }
        }
        marks[g] = Mark::Done;
        order.push(g);
        Ok(())
    }
    let mut marks = vec![Mark::New; table.columns.len()];
    let mut order = Vec::new();
    for (i, column) in table.columns.iter().enumerate() {
        if column.generated.is_some() {
            visit(table, i, &mut marks, &mut order)?;
        }
    }
    Ok(order)
}

/// Rebinds every expression of `table` (after its column positions moved)
/// and recomputes the generated column order.
pub(crate) fn rebind_table(table: &mut Table) -> Result<()> {
    let scope = scope_of(table);
    let mut columns = table.columns.clone();
    for column in &mut columns {
        if let Some(d) = &column.default {
            column.default = Some(rebind(d, &scope)?);
        }
        if let Some(g) = &column.generated {
            column.generated = Some(rebind(g, &scope)?);
        }
    }
    let mut checks = table.checks.clone();
    for check in &mut checks {
        check.expr = rebind(&check.expr, &scope)?;
    }
    table.columns = columns;
    table.checks = checks;
    table.generated_order = generated_order(table)?;
    Ok(())
}
