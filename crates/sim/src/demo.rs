//! `rowtree demo hotspots`: the seed scenario (examples/seeds/*.sql) on the
//! simulator, six designs at an offered load of N x C on N nodes.

use serde::Serialize;

use crate::engine::{capacity_per_node, simulate, SimConfig};
use crate::report::Report;
use crate::workload::{catalog_from_sql, Error, Generator, Result, TableLoad, Workload};

/// One schema design of the scenario.
#[derive(Debug, Clone, Copy)]
pub struct Design {
    /// Short name, e.g. `timestamp-first`.
    pub name: &'static str,
    /// The seed schema.
    pub schema: &'static str,
    /// The table the load goes to.
    pub table: &'static str,
    /// Inserts of access-log rows (true) or updates of Users.LastAccess (false).
    pub inserts: bool,
    /// Whether the design should spread (the targets).
    pub good: bool,
}

/// The six designs, in report order.
pub const DESIGNS: [Design; 6] = [
    Design {
        name: "timestamp-first",
        schema: include_str!("../../../examples/seeds/timestamp-first.sql"),
        table: "UserAccessLogs",
        inserts: true,
        good: false,
    },
    Design {
        name: "uuid",
        schema: include_str!("../../../examples/seeds/uuid.sql"),
        table: "UserAccessLogs",
        inserts: true,
        good: true,
    },
    Design {
        name: "swapped-key",
        schema: include_str!("../../../examples/seeds/swapped-key.sql"),
        table: "UserAccessLogs",
        inserts: true,
        good: true,
    },
    Design {
        name: "hash-sharded",
        schema: include_str!("../../../examples/seeds/hash-sharded.sql"),
        table: "UserAccessLogs",
        inserts: true,
        good: true,
    },
    Design {
        name: "index-non-interleaved",
        schema: include_str!("../../../examples/seeds/index-non-interleaved.sql"),
        table: "Users",
        inserts: false,
        good: false,
    },
    Design {
        name: "index-interleaved",
        schema: include_str!("../../../examples/seeds/index-interleaved.sql"),
        table: "Users",
        inserts: false,
        good: true,
    },
];

/// Parameters of a demo run.
#[derive(Debug, Clone)]
pub struct DemoConfig {
    pub nodes: u32,
    /// Simulated duration, nanoseconds (30 minutes by default).
    pub duration: u64,
    /// Offered load in units of C per node (1.0: N x C on N nodes).
    pub load_per_node: f64,
    /// Each simulated operation stands for this many real ones (rates divided
    /// by it, costs multiplied by it): the CPU picture is unchanged, the run
    /// is faster. 1 by default.
    pub scale: f64,
    pub seed: u64,
    pub sim: SimConfig,
}

impl DemoConfig {
    /// The full scenario on `nodes` nodes.
    pub fn new(nodes: u32) -> DemoConfig {
        DemoConfig {
            nodes,
            duration: 30 * 60 * 1_000_000_000,
            load_per_node: 1.0,
            scale: 1.0,
            seed: 1,
            sim: SimConfig::new(nodes),
        }
    }
}

/// One design's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DesignResult {
    pub name: String,
    pub throughput_per_node_capacity: f64,
    pub max_node_utilization: f64,
    pub hot_splits: Vec<crate::report::HotSplit>,
    pub unsplittable_reasons: Vec<String>,
    /// The full simulation report.
    pub report: Report,
}

/// The demo's output.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DemoReport {
    pub nodes: u32,
    pub designs: Vec<DesignResult>,
}

fn gen(
    catalog: &rowtree_schema::Catalog,
    table: &str,
    col: &str,
    g: Generator,
) -> Result<(usize, Generator)> {
    let t = catalog
        .table(table)
        .ok_or_else(|| Error(format!("no table {table}")))?;
    let (p, _) = t
        .column(col)
        .ok_or_else(|| Error(format!("no column {table}.{col}")))?;
    Ok((p, g))
}

/// The workload of `design`: offered `load` C in total.
pub fn design_workload(
    design: &Design,
    config: &DemoConfig,
) -> Result<(rowtree_schema::Catalog, Workload)> {
    let catalog = catalog_from_sql(design.schema)?;
    let users = Generator::Uniform {
        min: 1,
        max: 1_000_000,
    };
    let t = design.table;
    let mut columns = vec![
        gen(&catalog, t, "UserId", users)?,
        gen(&catalog, t, "LastAccess", Generator::Timestamp)?,
    ];
    if design.name == "uuid" {
        columns.push(gen(&catalog, t, "LogEntryId", Generator::Uuid)?);
    }
    let mut load = TableLoad {
        table: t.to_string(),
        inserts_per_sec: 0.0,
        updates_per_sec: 0.0,
        reads_per_sec: 0.0,
        update_columns: vec![],
        columns,
    };
    if design.inserts {
        load.inserts_per_sec = 1.0;
    } else {
        load.updates_per_sec = 1.0;
        load.update_columns = vec![catalog
            .table(t)
            .and_then(|t| t.column("LastAccess"))
            .map(|(p, _)| p)
            .ok_or_else(|| Error("no LastAccess".into()))?];
    }
    let mut workload = Workload {
        seed: config.seed,
        duration: config.duration,
        step: 10_000_000,
        timeout: 1_000_000_000,
        costs: Default::default(),
        tables: vec![load],
        splitting: Default::default(),
    };
    workload.costs.read *= config.scale;
    workload.costs.write *= config.scale;
    workload.costs.prepare *= config.scale;
    workload.costs.commit *= config.scale;
    let c = capacity_per_node(&catalog, &workload);
    let rate = c * config.nodes as f64 * config.load_per_node;
    let tl = &mut workload.tables[0];
    if design.inserts {
        tl.inserts_per_sec = rate;
    } else {
        tl.updates_per_sec = rate;
    }
    Ok((catalog, workload))
}

/// Runs one design.
pub fn run_design(
    design: &Design,
    config: &DemoConfig,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<DesignResult> {
    let (catalog, workload) = design_workload(design, config)?;
    let mut sim = config.sim.clone();
    sim.nodes = config.nodes;
    let report = simulate(&catalog, &workload, &sim, progress)?;
    Ok(DesignResult {
        name: design.name.to_string(),
        throughput_per_node_capacity: report.throughput_per_node_capacity,
        max_node_utilization: report.max_node_utilization,
        hot_splits: report.hot_splits.clone(),
        unsplittable_reasons: report.unsplittable_reasons.clone(),
        report,
    })
}

/// Runs every design, `threads` at a time; `progress(design, minute, total)`.
pub fn run_demo(
    config: &DemoConfig,
    threads: usize,
    progress: &(dyn Fn(&str, u64, u64) + Sync),
) -> Result<DemoReport> {
    let threads = threads.max(1);
    let mut results: Vec<Option<Result<DesignResult>>> = (0..DESIGNS.len()).map(|_| None).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let slots = std::sync::Mutex::new(&mut results);
    std::thread::scope(|scope| {
        for _ in 0..threads.min(DESIGNS.len()) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(design) = DESIGNS.get(i) else {
                    break;
                };
                let r = run_design(design, config, &mut |m, total| {
                    progress(design.name, m, total)
                });
                slots.lock().expect("no panics")[i] = Some(r);
            });
        }
    });
    let mut designs = Vec::new();
    for r in results {
        designs.push(r.expect("every design ran")?);
    }
    Ok(DemoReport {
        nodes: config.nodes,
        designs,
    })
}

/// The demo as text: a summary table, then each design's heatmap.
pub fn render_demo_text(r: &DemoReport) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(out, "Hotspot demo: {} nodes, offered load {} x C (C = one node's throughput for the design's op mix)\n", r.nodes, r.nodes);
    let _ = writeln!(
        out,
        "{:<22} {:>8} {:>10} {:>9} {:>7} {:>7} {:>6}  unsplittable reasons",
        "design", "C ops/s", "achieved", "xC", "busiest", "splits", "moves"
    );
    for d in &r.designs {
        let rep = &d.report;
        let _ = writeln!(
            out,
            "{:<22} {:>8.0} {:>10.0} {:>9.2} {:>6.0}% {:>7} {:>6}  {}",
            d.name,
            rep.capacity_per_node,
            rep.settled_ops_per_sec,
            d.throughput_per_node_capacity,
            d.max_node_utilization * 100.0,
            rep.splits.created,
            rep.splits.moved,
            if d.unsplittable_reasons.is_empty() {
                "-".to_string()
            } else {
                d.unsplittable_reasons.join(", ")
            }
        );
    }
    out.push_str(
        "\n(achieved = completed ops/s over the last third of the run; xC = achieved / C)\n",
    );
    for d in &r.designs {
        let _ = writeln!(out, "\n== {} ==", d.name);
        for h in d.hot_splits.iter().take(3) {
            let _ = writeln!(
                out,
                "  hot: score {:.0} on node {} [{} .. {}) {}",
                h.cpu_score,
                h.node,
                h.start,
                h.limit,
                h.reasons.join(", ")
            );
        }
        out.push_str(&crate::report::ascii_heatmap(&d.report.heatmap, 12));
    }
    out
}
