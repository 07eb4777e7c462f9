//! The hotspot rules: a key whose new values all sort to one end of the
//! key space.
//!
//! Only the *first* key column of a *root* table (or of a non-interleaved
//! index) decides where new rows go: an interleaved child's rows live inside
//! their parent's row tree, so they spread as the parent's keys do, and a
//! later key column only orders rows that share the columns before it. A
//! leading column that only grows sends every insert to the last split,
//! which Spanner cannot divide usefully (the new last split is as hot as
//! the old one), so one node serves all the writes. `DESC` only moves the
//! hot end to the front.

use rowtree_schema::ast::DataType;
use rowtree_schema::Table;

use crate::classify::{is_own_id, Order};
use crate::ddl::{shard_column, ColumnDdl, IndexDdl, Sql, TableDdl};
use crate::rules::Context;
use crate::{Finding, Rule, Severity};

const MECHANISM: &str = "each new row sorts after every existing one, so all inserts go to the table's last split and one node serves them however many the instance has; Spanner splitting that range only makes a new last split that is just as hot";

const DESC_NOTE: &str =
    "Declaring the column DESC does not help: new rows then all go to the first split instead.";

/// Whether a key column can lead the key and spread writes: not ordered in
/// time, not a counter, and not a BOOL (two values are two hot spots).
fn spreads(ctx: &Context<'_>, table: &Table, pos: usize) -> bool {
    table.columns[pos].data_type != DataType::Bool
        && matches!(ctx.order(table, pos), Order::Unknown | Order::Spread)
}

/// The shard-count explanation added to hash-prefix fixes.
fn shard_note(shard: &str, shards: u32) -> String {
    format!(
        "-- {shard} spreads the writes over {shards} key ranges, so up to {shards} splits (on as many nodes) share them.\n\
         -- Choose a shard count of at least the number of nodes you expect at peak (a few times more leaves room to grow);\n\
         -- a read in key order then visits every shard (one range per {shard} value), so do not make it much larger.\n"
    )
}

/// The bit-reversed sequence fix for an integer key column.
fn sequence_fix(ctx: &Context<'_>, table: &Table, column: &str) -> String {
    let mut ddl = TableDdl::of(ctx.catalog, table);
    let sql = ddl.sql;
    let sequence = sql.sequence_name(&table.name);
    if let Some(c) = ddl.column_mut(column) {
        c.default = Some(sql.next_value(&sequence));
        c.generated = None;
        c.identity = false;
    }
    format!("{}\n{}", sql.create_sequence(&sequence), ddl.print())
}

/// The UUID v4 fix: the column becomes `STRING(36)` filled by
/// `GENERATE_UUID()`.
fn uuid_fix(ctx: &Context<'_>, table: &Table, column: &str) -> String {
    let mut ddl = TableDdl::of(ctx.catalog, table);
    let sql = ddl.sql;
    if let Some(c) = ddl.column_mut(column) {
        c.data_type = sql.uuid_type();
        c.not_null = true;
        c.default = Some(sql.uuid().into());
        c.generated = None;
        c.commit_timestamp = false;
    }
    ddl.print()
}

/// `monotonic-key`: a root table whose first key column follows time or a
/// counter.
pub(crate) fn monotonic_key(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    let counters = counter_tables(ctx);
    let sql = Sql(ctx.catalog.dialect());
    let uuid_column = format!(
        "{} DEFAULT ({})",
        sql.type_name(&sql.uuid_type()),
        sql.uuid()
    );
    for table in ctx.catalog.tables() {
        if table.parent.is_some() || table.primary_key.is_empty() {
            continue;
        }
        let first = table.primary_key[0].column;
        let column = &table.columns[first];
        let (severity, why, counter) = match ctx.order(table, first) {
            Order::Time { why, certain } => (
                if certain {
                    Severity::Error
                } else {
                    Severity::Warning
                },
                why,
                false,
            ),
            Order::Counter {
                why,
                generator: false,
            } if counters.is_empty() => (Severity::Warning, why, true),
            // The table's own integer id with nothing filling it: most
            // likely numbered by the application in increasing order.
            Order::Unknown
                if counters.is_empty()
                    && column.data_type == DataType::Int64
                    && column.default.is_none()
                    && column.generated.is_none()
                    && is_own_id(table, &column.name) =>
            {
                (
                    Severity::Warning,
                    format!(
                        "{} looks like a surrogate id; if the application numbers rows in increasing order (a counter, MAX + 1, a database sequence elsewhere)",
                        column.name
                    ),
                    true,
                )
            }
            _ => continue,
        };
        let others: Vec<usize> = table
            .primary_key
            .iter()
            .skip(1)
            .map(|k| k.column)
            .filter(|p| spreads(ctx, table, *p))
            .collect();
        let name = &column.name;
        let mut message = format!(
            "{} is keyed first by {name}, and {why}: {MECHANISM}. {DESC_NOTE}",
            table.name
        );
        // A DATE followed by a spreading column: one day's rows share a
        // prefix but differ after it, so the day's range can be split by
        // load; each day still starts on a single split.
        let severity = match table.primary_key.get(1) {
            Some(k) if column.data_type == DataType::Date && spreads(ctx, table, k.column) => {
                message = format!(
                    "{} is keyed first by the DATE {name}: every write of a day goes to that day's key range. {} spreads rows within the day, so Spanner can split the range once it has been hot for a few minutes, but each new day starts on one split again. {DESC_NOTE}",
                    table.name, table.columns[k.column].name
                );
                Severity::Warning
            }
            _ => severity,
        };
        let fix = if let Some(&other) = others.first() {
            let other_name = &table.columns[other].name;
            let mut ddl = TableDdl::of(ctx.catalog, table);
            let moved = ddl.key.remove(0);
            let at = ddl
                .key
                .iter()
                .position(|(n, _)| n.eq_ignore_ascii_case(other_name))
                .map_or(0, |i| i + 1);
            ddl.key.insert(at, moved);
            message.push_str(&format!(
                " Fix: lead the key with {other_name}, which spreads writes, and keep {name} after it (rows of one {other_name} stay in time order)"
            ));
            if !ctx.catalog.children(table.id).is_empty() {
                message.push_str("; tables interleaved in it must repeat the new key order");
            }
            message.push('.');
            Some(ddl.print())
        } else if counter || column.data_type == DataType::Int64 && is_own_id(table, name) {
            message.push_str(&format!(
                " Fix: fill {name} from a bit-reversed sequence (unique, spread, no lock), or use a UUID v4 {uuid_column}."
            ));
            Some(sequence_fix(ctx, table, name))
        } else if column.allow_commit_timestamp {
            // A commit timestamp cannot feed a stored generated column, so
            // the spreading column is a UUID of its own.
            let mut ddl = TableDdl::of(ctx.catalog, table);
            let id = ddl.fresh_name(&sql.new_name("Uuid"));
            ddl.columns.insert(
                0,
                ColumnDdl {
                    name: id.clone(),
                    data_type: sql.uuid_type(),
                    not_null: true,
                    default: Some(sql.uuid().into()),
                    generated: None,
                    hidden: false,
                    commit_timestamp: false,
                    identity: false,
                },
            );
            ddl.key.insert(0, (id.clone(), false));
            message.push_str(&format!(
                " Fix: lead the key with a UUID v4 column {id} filled by {} (a commit timestamp cannot feed a generated shard column); read in time order through an index interleaved in a parent, or by scanning.",
                sql.uuid()
            ));
            Some(ddl.print())
        } else {
            let shards = ctx.config.shard_count();
            let mut ddl = TableDdl::of(ctx.catalog, table);
            let shard = ddl.add_shard_prefix(name, shards);
            message.push_str(&format!(
                " Fix: lead the key with a stored generated column {shard}, a hash of {name} modulo {shards}, so inserts spread over {shards} key ranges (reads in time order then query each shard), or key by a UUID v4 ({}) and keep {name} as a plain column.",
                sql.uuid()
            ));
            Some(format!("{}{}", shard_note(&shard, shards), ddl.print()))
        };
        out.push(ctx.finding(Rule::MonotonicKey, severity, &table.name, message, fix));
    }
}

/// `monotonic-index`: a non-interleaved index whose first key column
/// follows time or a counter, or is a time-ordered id.
pub(crate) fn monotonic_index(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    for index in ctx.catalog.indexes() {
        if index.interleave_in.is_some() || index.keys.is_empty() {
            continue;
        }
        let Some(table) = ctx.catalog.table_by_id(index.table) else {
            continue;
        };
        let first = index.keys[0].column;
        let (severity, why) = match ctx.order(table, first) {
            Order::Time { why, certain: true } => (Severity::Error, why),
            Order::Time {
                why,
                certain: false,
            }
            | Order::Counter { why, .. } => (Severity::Warning, why),
            Order::TimeOrderedId { why } => (Severity::Error, why),
            _ => continue,
        };
        let name = &table.columns[first].name;
        let mut message = format!(
            "The index {} is not interleaved and its first key column is {}.{name}, and {why}: an index is stored as its own table sorted by its key, so every write of a new value goes to the index's last split, on one node, even when the table itself spreads. {DESC_NOTE}",
            index.name, table.name
        );
        // As for tables: a DATE followed by a spreading column lets the
        // day's range split.
        let full_key = index.full_key(table);
        let severity = match full_key.get(1) {
            Some(k)
                if table.columns[first].data_type == DataType::Date
                    && spreads(ctx, table, k.column) =>
            {
                message = format!(
                    "The index {} is not interleaved and its first key column is the DATE {}.{name}: every index write of a day goes to that day's key range. {} spreads entries within the day, so Spanner can split the range once it has been hot for a few minutes, but each new day starts on one split again. {DESC_NOTE}",
                    index.name, table.name, table.columns[k.column].name
                );
                Severity::Warning
            }
            _ => severity,
        };
        let parent = table.parent.and_then(|p| ctx.catalog.table_by_id(p.table));
        let fix = if let Some(parent) = parent {
            let mut ddl = IndexDdl::of(ctx.catalog, table, index);
            let prefix: Vec<(String, bool)> = parent
                .primary_key
                .iter()
                .map(|k| (parent.columns[k.column].name.clone(), k.desc))
                .filter(|(n, _)| !ddl.keys.iter().any(|(k, _)| k.eq_ignore_ascii_case(n)))
                .collect();
            ddl.keys.splice(0..0, prefix);
            ddl.interleave = Some(parent.name.clone());
            message.push_str(&format!(
                " Fix: interleave the index in {}, keyed by its key first, so each parent row's entries sit in its row tree and the writes spread with the parents.",
                parent.name
            ));
            Some(ddl.print())
        } else {
            let shards = ctx.config.shard_count();
            let mut table_ddl = TableDdl::of(ctx.catalog, table);
            let shard = table_ddl.fresh_name(&table_ddl.sql.new_name("ShardId"));
            let key0 = table.columns[table.primary_key[0].column].clone();
            let is_text = matches!(key0.data_type, DataType::String(_) | DataType::Bytes(_));
            table_ddl.columns.push(shard_column(
                table_ddl.sql,
                &shard,
                &key0.name,
                is_text,
                shards,
            ));
            let mut ddl = IndexDdl::of(ctx.catalog, table, index);
            ddl.keys.insert(0, (shard.clone(), false));
            message.push_str(&format!(
                " Fix: add a stored generated {shard} column hashed from the table's key and lead the index with it, so index writes spread over {shards} key ranges (a query for the newest entries then reads each shard); or, if the index is read per parent row, interleave it in the parent."
            ));
            Some(format!(
                "{}{}\n{}",
                shard_note(&shard, shards),
                table_ddl.print(),
                ddl.print()
            ))
        };
        out.push(ctx.finding(Rule::MonotonicIndex, severity, &index.name, message, fix));
    }
}

/// Tables that look like a counter table handing out ids: a single-column
/// key and an INT64 column named like the next value, or a name that says
/// so, with at most four columns.
pub(crate) fn counter_tables<'a>(ctx: &Context<'a>) -> Vec<&'a Table> {
    ctx.catalog
        .tables()
        .filter(|t| t.columns.len() <= 4 && t.primary_key.len() == 1)
        .filter(|t| {
            let name = t.name.to_ascii_lowercase().replace('_', "");
            let named = [
                "sequence",
                "counter",
                "idgen",
                "idallocat",
                "keygen",
                "nextid",
                "idblock",
                "hilo",
            ]
            .iter()
            .any(|w| name.contains(w));
            let value_named = |strong: bool| {
                t.columns.iter().enumerate().any(|(i, c)| {
                    let n = c.name.to_ascii_lowercase().replace('_', "");
                    let words: &[&str] = if strong {
                        &[
                            "nextvalue",
                            "nextid",
                            "nextval",
                            "lastvalue",
                            "lastid",
                            "currentvalue",
                            "currentid",
                            "lastused",
                            "nextkey",
                        ]
                    } else {
                        &["value", "counter", "count", "current", "next", "last"]
                    };
                    // `NextHi`, `NextBlock`: a hi/lo or block allocator.
                    let next_something = strong && n.starts_with("next");
                    !t.is_key_column(i)
                        && c.data_type == DataType::Int64
                        && (words.contains(&n.as_str()) || next_something)
                })
            };
            value_named(true) || (named && value_named(false))
        })
        .collect()
}

/// Whether a name ends like a handed-out number: `OrderNumber`,
/// `invoice_no`, `TicketNum`.
fn numbered(name: &str) -> bool {
    let n = name.to_ascii_lowercase().replace('_', "");
    ["number", "no", "num", "nbr"]
        .iter()
        .any(|e| n.ends_with(e))
}

/// `sequential-id`: surrogate ids handed out in order, from a counter
/// table in the same schema (AUTO_INCREMENT and SERIAL are found while
/// loading, since the parser refuses them).
pub(crate) fn sequential_id(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    let counters = counter_tables(ctx);
    for table in ctx.catalog.tables() {
        if table.parent.is_some()
            || table.primary_key.is_empty()
            || counters.iter().any(|c| c.id == table.id)
        {
            continue;
        }
        let first = table.primary_key[0].column;
        let column = &table.columns[first];
        if column.data_type != DataType::Int64 {
            continue;
        }
        let source = match (ctx.order(table, first), counters.first()) {
            (
                Order::Counter {
                    why,
                    generator: true,
                },
                _,
            ) => why,
            (Order::Counter { .. }, Some(counter)) => format!(
                "the schema has a counter table ({}) that hands out ids in increasing order",
                counter.name
            ),
            (Order::Unknown, Some(counter))
                if column.default.is_none()
                    && column.generated.is_none()
                    && (is_own_id(table, &column.name) || numbered(&column.name)) =>
            {
                format!(
                    "the schema has a counter table ({}) that hands out ids in increasing order",
                    counter.name
                )
            }
            _ => continue,
        };
        let message = format!(
            "{} is keyed first by the integer {}, and {source}: {MECHANISM}. A counter kept in a row also limits the whole database to one id update per transaction latency. {DESC_NOTE} Fix: a bit-reversed sequence gives unique ids that land far apart without a row lock; or key by a UUID v4 or a real-world key.",
            table.name, column.name
        );
        let fix = sequence_fix(ctx, table, &column.name);
        out.push(ctx.finding(
            Rule::SequentialId,
            Severity::Error,
            &table.name,
            message,
            Some(fix),
        ));
    }
}

/// `time-ordered-uuid`: a root table keyed first by an id whose leading
/// bits or characters are a timestamp.
pub(crate) fn time_ordered_uuid(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    for table in ctx.catalog.tables() {
        if table.parent.is_some() || table.primary_key.is_empty() {
            continue;
        }
        let first = table.primary_key[0].column;
        let Order::TimeOrderedId { why } = ctx.order(table, first) else {
            continue;
        };
        let column = &table.columns[first];
        let name = &column.name;
        let mut message = format!(
            "{} is keyed first by {name}, and {why}: ids generated this way increase with time, so {MECHANISM}. Unlike a UUID v4, whose bits are all random, they only look spread.",
            table.name
        );
        let sql = Sql(ctx.catalog.dialect());
        let fix = if column.data_type == DataType::Int64 {
            message.push_str(&format!(
                " Fix: fill {name} from a bit-reversed sequence, and keep the time-ordered value as a non-key column if you sort by it."
            ));
            sequence_fix(ctx, table, name)
        } else {
            message.push_str(&format!(
                " Fix: make {name} a UUID v4 ({} DEFAULT ({})), and keep the time-ordered value as a non-key column if you sort by it.",
                sql.type_name(&sql.uuid_type()),
                sql.uuid()
            ));
            uuid_fix(ctx, table, name)
        };
        out.push(ctx.finding(
            Rule::TimeOrderedUuid,
            Severity::Error,
            &table.name,
            message,
            Some(fix),
        ));
    }
}
