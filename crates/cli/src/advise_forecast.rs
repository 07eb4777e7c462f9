//! `rowtree advise --workload`: the hotspot findings weighed by the
//! workload's write rates and forecast by the simulator.
//!
//! A schema rule knows the shape of a key, not how often it is written: a
//! TIMESTAMP first key on a table written twice a day is harmless, the same
//! key at 5,000 writes/s saturates one node. Given a workload file (the one
//! `rowtree simulate` reads, see docs/simulator.md), each hotspot finding
//! (`monotonic-key`, `monotonic-index`, `sequential-id`, `time-ordered-uuid`)
//! on a table the workload writes is weighed:
//!
//! - below a tenth of what one node writes (350 rows/s with the default
//!   costs), the finding drops to `info`, and its message says the rate is
//!   too low to matter;
//! - otherwise the simulator plays the workload on the schema as written
//!   and on the schema with the finding's fix pasted in (the fix's CREATE
//!   statements replace the ones they redefine), on `--nodes` nodes, and the
//!   message quotes both: settled throughput, as a multiple of one node's
//!   capacity, and the busiest node's load.
//!
//! The fixed schema keeps the workload's generators; a key column the fix
//! fills itself gets the generator its DEFAULT implies (`GENERATE_UUID()`:
//! `uuid`; a bit-reversed sequence: `bit_reversed`), and a generated column
//! needs none. When the workload does not fit the fixed schema, the message
//! says why instead of a forecast. Schemas and fixes are read in the
//! dialect they are written in (GoogleSQL or PostgreSQL).

use rowtree_advisor::{Dialect, Finding, Report, Rule, Severity, Source};
use rowtree_parser::ast::StatementKind;
use rowtree_schema::Catalog;
use rowtree_sim::{simulate, SimConfig, Workload};

/// Below this share of one node's write capacity, a hotspot finding is
/// information only.
const LOW_RATE_SHARE: f64 = 0.1;

/// How the simulation went, in the terms the messages quote.
struct Outcome {
    offered: f64,
    settled: f64,
    per_node: f64,
    busiest: f64,
}

fn run(catalog: &Catalog, workload: &Workload, nodes: u32, label: &str) -> Result<Outcome, String> {
    let mut last = 0;
    let report = simulate(
        catalog,
        workload,
        &SimConfig::new(nodes),
        &mut |m, total| {
            if m == total || m >= last + 5 {
                last = m;
                eprintln!("advise: simulating {label}: {m}/{total} min");
            }
        },
    )
    .map_err(|e| e.to_string())?;
    Ok(Outcome {
        offered: report.offered_ops_per_sec,
        settled: report.settled_ops_per_sec,
        per_node: report.throughput_per_node_capacity,
        busiest: report.max_node_utilization,
    })
}

fn is_hotspot(rule: Rule) -> bool {
    matches!(
        rule,
        Rule::MonotonicKey | Rule::MonotonicIndex | Rule::SequentialId | Rule::TimeOrderedUuid
    )
}

/// The catalog of `sql` (statements separated by `;`) in `dialect`.
fn catalog_in(dialect: Dialect, sql: &str) -> Result<Catalog, String> {
    let mut catalog = Catalog::new_in(dialect);
    for stmt in rowtree_parser::split_statements_in(dialect, sql) {
        if stmt.text.trim().is_empty() {
            continue;
        }
        let line = sql[..stmt.offset].matches('\n').count() + 1;
        let (next, _) = catalog
            .apply_sql_in(dialect, stmt.text)
            .map_err(|e| format!("schema: statement at line {line}: {}", e.message()))?;
        catalog = next;
    }
    Ok(catalog)
}

/// The names (lowercase) a statement creates: a table's or an index's.
fn created_name(dialect: Dialect, text: &str) -> Option<String> {
    let stmt = rowtree_parser::parse_statement_in(dialect, text).ok()?;
    match stmt.kind {
        StatementKind::CreateTable(t) => Some(t.name.value.to_ascii_lowercase()),
        StatementKind::CreateIndex(i) => Some(i.name.value.to_ascii_lowercase()),
        _ => None,
    }
}

/// The schema with `fix` pasted in: its statements replace the ones that
/// create the same tables and indexes, at the place of the first of them.
fn with_fix(dialect: Dialect, sources: &[Source], fix: &str) -> String {
    let fix_statements: Vec<&str> = rowtree_parser::split_statements_in(dialect, fix)
        .into_iter()
        .map(|s| s.text)
        .collect();
    let replaced: Vec<String> = fix_statements
        .iter()
        .filter_map(|s| created_name(dialect, s))
        .collect();
    let mut out: Vec<String> = Vec::new();
    let mut inserted = false;
    for source in sources {
        for stmt in rowtree_parser::split_statements_in(dialect, &source.text) {
            let redefined = created_name(dialect, stmt.text).is_some_and(|n| replaced.contains(&n));
            if !redefined {
                out.push(stmt.text.to_string());
            } else if !inserted {
                out.extend(fix_statements.iter().map(|s| s.to_string()));
                inserted = true;
            }
        }
    }
    if !inserted {
        out.extend(fix_statements.iter().map(|s| s.to_string()));
    }
    out.join(";\n")
}

/// The workload text adapted to `fixed`'s version of `table`: generators
/// dropped for columns that are gone or generated, and added for key
/// columns the fix fills by DEFAULT.
fn adapt_workload(text: &str, fixed: &Catalog, table: &str) -> Result<String, String> {
    let mut doc: toml::Table = toml::from_str(text).map_err(|e| format!("workload: {e}"))?;
    let Some(def) = fixed.table(table) else {
        return Err(format!("the fix has no table {table}"));
    };
    let entries = doc
        .get_mut("table")
        .and_then(|t| t.as_array_mut())
        .ok_or("workload: no [[table]] sections")?;
    for entry in entries.iter_mut() {
        let Some(entry) = entry.as_table_mut() else {
            continue;
        };
        let named = entry
            .get("name")
            .and_then(|n| n.as_str())
            .is_some_and(|n| n.eq_ignore_ascii_case(table));
        if !named {
            continue;
        }
        let columns = entry
            .entry("columns")
            .or_insert_with(|| toml::Value::Table(toml::Table::new()))
            .as_table_mut()
            .ok_or("workload: `columns` is not a table")?;
        columns.retain(|name, _| {
            def.columns
                .iter()
                .any(|c| c.name.eq_ignore_ascii_case(name) && c.generated.is_none())
        });
        for col in &def.columns {
            let default = col
                .default
                .as_ref()
                .map(|d| d.text.to_ascii_uppercase())
                .unwrap_or_default();
            let generator = if default.contains("GENERATE_UUID") {
                Some("uuid")
            } else if default.contains("GET_NEXT_SEQUENCE_VALUE")
                || default.contains("NEXTVAL")
                || col.identity_sequence.is_some()
            {
                Some("bit_reversed")
            } else {
                None
            };
            if let Some(g) = generator {
                columns.retain(|name, _| !name.eq_ignore_ascii_case(&col.name));
                columns.insert(col.name.clone(), toml::Value::String(g.into()));
            }
        }
    }
    toml::to_string(&doc).map_err(|e| e.to_string())
}

/// Weighs `report`'s hotspot findings by `workload_text`'s rates and
/// quotes the simulator's forecast for the schema as written and fixed.
pub fn apply(
    report: &mut Report,
    dialect: Dialect,
    sources: &[Source],
    workload_text: &str,
    nodes: u32,
) -> Result<(), String> {
    let schema: String = sources
        .iter()
        .map(|s| s.text.as_str())
        .collect::<Vec<_>>()
        .join(";\n");
    let catalog = catalog_in(dialect, &schema)?;
    let workload = Workload::parse(workload_text, &catalog).map_err(|e| e.to_string())?;
    let one_node_writes = 1.0 / workload.costs.write;
    let mut baseline: Option<Outcome> = None;
    for finding in report.findings.iter_mut().filter(|f| is_hotspot(f.rule)) {
        let table = match catalog.table(&finding.object) {
            Some(t) => t.name.clone(),
            None => match catalog
                .index(&finding.object)
                .and_then(|ix| catalog.table_by_id(ix.table))
            {
                Some(t) => t.name.clone(),
                None => continue,
            },
        };
        let Some(load) = workload
            .tables
            .iter()
            .find(|t| t.table.eq_ignore_ascii_case(&table))
        else {
            continue;
        };
        let writes = load.inserts_per_sec + load.updates_per_sec;
        if writes < LOW_RATE_SHARE * one_node_writes {
            finding.severity = Severity::Info;
            finding.message.push_str(&format!(
                " With the workload's {writes:.0} writes/s to {table} (one node writes \
                 {one_node_writes:.0} rows/s), the hot range stays far from busy: harmless at \
                 this rate."
            ));
            continue;
        }
        if baseline.is_none() {
            baseline = Some(run(&catalog, &workload, nodes, "the schema as written")?);
        }
        let before = baseline.as_ref().expect("just set");
        let mut forecast = format!(
            " Forecast (rowtree simulate, {nodes} nodes): the workload offers {:.0} ops/s; as \
             written the schema settles at {:.0} ops/s ({:.2}x one node), busiest node {:.0}%",
            before.offered,
            before.settled,
            before.per_node,
            before.busiest * 100.0
        );
        match fix_outcome(finding, dialect, sources, workload_text, &table, nodes) {
            Ok(after) => forecast.push_str(&format!(
                "; with the fix, {:.0} ops/s ({:.2}x), busiest node {:.0}%.",
                after.settled,
                after.per_node,
                after.busiest * 100.0
            )),
            Err(e) => forecast.push_str(&format!("; the fix could not be simulated: {e}.")),
        }
        finding.message.push_str(&forecast);
    }
    Ok(())
}

fn fix_outcome(
    finding: &Finding,
    dialect: Dialect,
    sources: &[Source],
    workload_text: &str,
    table: &str,
    nodes: u32,
) -> Result<Outcome, String> {
    let fix = finding.fix.as_deref().ok_or("the finding has no DDL fix")?;
    let fixed = catalog_in(dialect, &with_fix(dialect, sources, fix))?;
    let text = adapt_workload(workload_text, &fixed, table)?;
    let workload = Workload::parse(&text, &fixed).map_err(|e| e.to_string())?;
    run(
        &fixed,
        &workload,
        nodes,
        &format!("{} with the fix", finding.object),
    )
}
