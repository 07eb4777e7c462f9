//! The simulation loop: virtual time in steps, per-node FIFO queues with a
//! capacity of one CPU-second per second, the real [`SplitManager`] fed with
//! every served access and ticked every virtual second.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;

use rand::rngs::StdRng;
use rand::SeedableRng;
use rowtree_db::keys::{Aligner, RowKeys};
use rowtree_kv::{Access, AccessKind, ManagerConfig, SplitEvent, SplitId, SplitManager, SplitMap};
use rowtree_schema::Catalog;
use rowtree_types::{Timestamp, Value};

use crate::keygen::{ColumnGen, EPOCH_NANOS};
use crate::report::{self, Report};
use crate::workload::{Costs, Error, Result, Workload};

const SECOND: u64 = 1_000_000_000;
const MINUTE: u64 = 60 * SECOND;
/// Bytes charged per table row (Spanner's per-node figures are for 1 KB rows).
const ROW_BYTES: u64 = 1024;

/// What to simulate on how many nodes.
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// Number of nodes, each with one CPU-second per second.
    pub nodes: u32,
    /// The split manager's configuration (policy, balancer); `nodes` is set
    /// from [`SimConfig::nodes`].
    pub manager: ManagerConfig,
}

impl SimConfig {
    /// `nodes` nodes with the kv crate's default (Spanner-like) policy.
    pub fn new(nodes: u32) -> SimConfig {
        SimConfig {
            nodes,
            manager: ManagerConfig::default(),
        }
    }
}

struct TableState {
    name: String,
    keys: RowKeys,
    ncols: usize,
    gens: Vec<ColumnGen>,
    key_positions: Vec<usize>,
    update_positions: Vec<usize>,
    inserts: f64,
    updates: f64,
    reads: f64,
    carry: [f64; 3],
    /// Mean time between updates of one row (nanoseconds), for the age of
    /// a row's values before the run.
    update_gap: f64,
    /// Last written values of the update columns, by row key.
    last: HashMap<Vec<u8>, Vec<Value>>,
}

/// One access of an operation: kind, key, CPU nanoseconds, bytes.
type Acc = (AccessKind, Vec<u8>, u64, u64);

struct Task {
    op: u32,
    started: bool,
    /// Total CPU of the task (its service time), nanoseconds.
    cost: u64,
    remaining: u64,
    enqueued: u64,
    accesses: Vec<Acc>,
}

#[derive(Clone, Copy)]
struct OpState {
    arrival: u64,
    parts: u32,
    failed: bool,
}

/// Latency histogram: 50 buckets per decade from 1 µs.
struct Latencies {
    buckets: Vec<u64>,
    count: u64,
}

impl Latencies {
    fn new() -> Latencies {
        Latencies {
            buckets: vec![0; 50 * 9],
            count: 0,
        }
    }
    fn add(&mut self, nanos: u64) {
        let us = (nanos as f64 / 1000.0).max(1.0);
        let b = ((us.log10() * 50.0) as usize).min(self.buckets.len() - 1);
        self.buckets[b] += 1;
        self.count += 1;
    }
    /// The `q` quantile in milliseconds.
    fn quantile_ms(&self, q: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let target = (q * self.count as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (i, n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= target {
                return 10f64.powf((i as f64 + 1.0) / 50.0) / 1000.0;
            }
        }
        0.0
    }
}

/// The model's view of one node's capacity for a workload: operations per
/// second one node sustains with the workload's op mix when every access of
/// an operation is in one split (no two-phase commit).
pub fn capacity_per_node(catalog: &Catalog, workload: &Workload) -> f64 {
    let c: &Costs = &workload.costs;
    let (mut ops, mut cpu) = (0.0, 0.0);
    for t in &workload.tables {
        let Some(table) = catalog.table(&t.table) else {
            continue;
        };
        let indexes = catalog.indexes_of(table.id);
        let changed = indexes
            .iter()
            .filter(|ix| ix.keys.iter().any(|k| t.update_columns.contains(&k.column)))
            .count() as f64;
        ops += t.inserts_per_sec + t.updates_per_sec + t.reads_per_sec;
        cpu += t.inserts_per_sec * c.write * (1.0 + indexes.len() as f64)
            + t.updates_per_sec * (c.read + c.write * (1.0 + 2.0 * changed))
            + t.reads_per_sec * c.read;
    }
    if cpu == 0.0 {
        0.0
    } else {
        ops / cpu
    }
}

/// Runs `workload` against `catalog`'s key layout. `progress` is called
/// every simulated minute with (minutes done, minutes total).
pub fn simulate(
    catalog: &Catalog,
    workload: &Workload,
    config: &SimConfig,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Report> {
    simulate_with_history(catalog, workload, config, progress).map(|(r, _)| r)
}

/// The one-minute rows of the split manager's load history.
pub type History = Vec<(u64, Vec<rowtree_kv::IntervalStat>)>;

/// [`simulate`], also returning the load history's one-minute rows (for
/// the key visualizer).
pub fn simulate_with_history(
    catalog: &Catalog,
    workload: &Workload,
    config: &SimConfig,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(Report, History)> {
    if config.nodes == 0 {
        return Err(Error("at least one node is needed".into()));
    }
    let nodes = config.nodes as usize;
    let mut rng = StdRng::seed_from_u64(workload.seed);
    let mut tables = Vec::new();
    for t in &workload.tables {
        let table = catalog
            .table(&t.table)
            .ok_or_else(|| Error(format!("table `{}` is not in the schema", t.table)))?;
        let keys = RowKeys::new(catalog, &t.table).map_err(|e| Error(e.to_string()))?;
        let gens: Vec<ColumnGen> = t
            .columns
            .iter()
            .map(|(p, g)| ColumnGen::new(*p, table.columns[*p].ty.clone(), g.clone()))
            .collect();
        let key_positions = table.key_column_positions();
        let rows: Option<f64> = gens
            .iter()
            .filter(|g| key_positions.contains(&g.position))
            .map(|g| g.cardinality())
            .product();
        let update_gap = match rows {
            Some(n) if t.updates_per_sec > 0.0 => n / t.updates_per_sec * 1e9,
            _ => 86_400e9,
        };
        tables.push(TableState {
            update_gap,
            name: table.name.clone(),
            keys,
            ncols: table.columns.len(),
            gens,
            key_positions,
            update_positions: t.update_columns.clone(),
            inserts: t.inserts_per_sec,
            updates: t.updates_per_sec,
            reads: t.reads_per_sec,
            carry: [0.0; 3],
            last: HashMap::new(),
        });
    }

    // The key space as a new database cuts it: one split per root-level
    // object (table or non-interleaved index), all on node 0.
    let map = Arc::new(SplitMap::new());
    let starts = rowtree_db::keys::root_object_starts(catalog);
    for s in &starts {
        map.add_split_point(s);
    }
    let mut mconfig = config.manager.clone();
    mconfig.nodes = config.nodes;
    workload.splitting.apply(&mut mconfig)?;
    let manager = SplitManager::new(map.clone(), mconfig, Arc::new(Aligner::new(catalog)));

    let costs = workload.costs;
    let ns = |s: f64| (s * 1e9).round() as u64;
    let (read_ns, write_ns, prepare_ns, commit_ns) = (
        ns(costs.read),
        ns(costs.write),
        ns(costs.prepare),
        ns(costs.commit),
    );
    let step = workload.step;
    let steps = workload.duration / step;
    let seconds = workload.duration.div_ceil(SECOND) as usize;
    let minutes = workload.duration.div_ceil(MINUTE) as usize;

    let mut queues: Vec<VecDeque<Task>> = (0..nodes).map(|_| VecDeque::new()).collect();
    let mut ops: Vec<OpState> = Vec::new();
    let mut free: Vec<u32> = Vec::new();
    let mut latencies = Latencies::new();
    let mut completed_per_sec = vec![0u64; seconds];
    let mut offered_total = 0u64;
    let mut failed_total = 0u64;
    let mut node_cpu = vec![vec![0u64; minutes]; nodes];
    let mut events = report::EventCounts::default();
    let mut reasons_seen: BTreeSet<String> = BTreeSet::new();
    let mut multi_split_ops = 0u64;

    let mut accesses: Vec<Acc> = Vec::new();
    let mut parts: BTreeMap<SplitId, (u32, Vec<Acc>)> = BTreeMap::new();

    for s in 0..steps {
        let t0 = s * step;
        // Arrivals.
        for table in tables.iter_mut() {
            for kind in 0..3 {
                let rate = [table.inserts, table.updates, table.reads][kind];
                if rate == 0.0 {
                    continue;
                }
                table.carry[kind] += rate * step as f64 / SECOND as f64;
                let n = table.carry[kind].floor() as u64;
                table.carry[kind] -= n as f64;
                for i in 0..n {
                    let arrival = t0 + i * step / n;
                    accesses.clear();
                    build_op(
                        table,
                        kind,
                        arrival,
                        &mut rng,
                        (read_ns, write_ns),
                        &mut accesses,
                    )?;
                    offered_total += 1;
                    // Route: group accesses by split.
                    parts.clear();
                    let mut has_write = false;
                    for a in accesses.drain(..) {
                        has_write |= a.0 == AccessKind::Write;
                        let split = map.split_for(&a.1);
                        parts
                            .entry(split.id)
                            .or_insert_with(|| (split.node().0, Vec::new()))
                            .1
                            .push(a);
                    }
                    let multi = parts.len() > 1 && has_write;
                    if multi {
                        multi_split_ops += 1;
                    }
                    let id = match free.pop() {
                        Some(id) => id,
                        None => {
                            ops.push(OpState {
                                arrival: 0,
                                parts: 0,
                                failed: false,
                            });
                            (ops.len() - 1) as u32
                        }
                    };
                    ops[id as usize] = OpState {
                        arrival,
                        parts: parts.len() as u32,
                        failed: false,
                    };
                    for (i, (_, (node, mut acc))) in
                        std::mem::take(&mut parts).into_iter().enumerate()
                    {
                        if multi {
                            // Two-phase commit: every participant prepares,
                            // the coordinator (first split) writes the commit
                            // record. Charged with the part's first access.
                            acc[0].2 += prepare_ns + if i == 0 { commit_ns } else { 0 };
                        }
                        let remaining = acc.iter().map(|a| a.2).sum();
                        let node = (node as usize).min(nodes - 1);
                        queues[node].push_back(Task {
                            op: id,
                            started: false,
                            cost: remaining,
                            remaining,
                            enqueued: arrival,
                            accesses: acc,
                        });
                    }
                }
            }
        }
        // Service.
        for (node, queue) in queues.iter_mut().enumerate() {
            let mut budget = step;
            while budget > 0 {
                let Some(task) = queue.front_mut() else {
                    break;
                };
                let op = ops[task.op as usize];
                let timed_out =
                    !task.started && t0 + (step - budget) > task.enqueued + workload.timeout;
                if op.failed || timed_out {
                    let task = queue.pop_front().expect("front");
                    let st = &mut ops[task.op as usize];
                    if !st.failed {
                        st.failed = true;
                        failed_total += 1;
                    }
                    st.parts -= 1;
                    if st.parts == 0 {
                        free.push(task.op);
                    }
                    continue;
                }
                task.started = true;
                let served = budget.min(task.remaining);
                task.remaining -= served;
                budget -= served;
                node_cpu[node][((t0 / MINUTE) as usize).min(minutes - 1)] += served;
                if task.remaining > 0 {
                    break;
                }
                let task = queue.pop_front().expect("front");
                // Within a step, arrivals are spread but service starts at
                // the step; a task never completes before arrival + service.
                let now = (t0 + step - budget).max(task.enqueued + task.cost);
                for (kind, key, cpu, bytes) in &task.accesses {
                    manager.record(
                        now,
                        &Access {
                            kind: *kind,
                            key,
                            end: None,
                            rows: 1,
                            bytes: *bytes,
                            cpu_nanos: *cpu,
                        },
                    );
                }
                let st = &mut ops[task.op as usize];
                st.parts -= 1;
                if st.parts == 0 {
                    free.push(task.op);
                    if !st.failed {
                        latencies.add(now - st.arrival);
                        completed_per_sec[((now / SECOND) as usize).min(seconds - 1)] += 1;
                    }
                }
            }
        }
        let t1 = t0 + step;
        if t1.is_multiple_of(SECOND) {
            for e in manager.tick(t1) {
                match e {
                    SplitEvent::Split { .. } => events.splits += 1,
                    SplitEvent::Merge { .. } => events.merges += 1,
                    SplitEvent::Move { .. } => events.moves += 1,
                    SplitEvent::Unsplittable { reason, .. } => {
                        reasons_seen.insert(reason.as_str().to_string());
                    }
                }
            }
        }
        if t1.is_multiple_of(MINUTE) {
            progress(t1 / MINUTE, minutes as u64);
        }
    }
    let end = steps * step;
    let raw = report::Raw {
        nodes: config.nodes,
        duration: end,
        offered_total,
        failed_total,
        multi_split_ops,
        completed_per_sec,
        p50_ms: latencies.quantile_ms(0.5),
        p99_ms: latencies.quantile_ms(0.99),
        node_cpu,
        events,
        reasons_seen: reasons_seen.into_iter().collect(),
        capacity: capacity_per_node(catalog, workload),
        tables: tables.iter().map(|t| t.name.clone()).collect(),
    };
    let report = report::build(catalog, &manager, end, raw);
    let history = manager.history().intervals(rowtree_kv::Granularity::Minute);
    Ok((report, history))
}

/// The key visualizer heatmap (rowtree-keyviz) of a simulation's history:
/// rows are key buckets, keys described in human terms, and time labelled
/// from the workload's start (`t+0:05`: the simulated clock starts at 0),
/// never as dates.
pub fn keyviz_heatmap(
    catalog: &Catalog,
    history: &History,
    title: &str,
) -> rowtree_keyviz::Heatmap {
    let mut h =
        rowtree_keyviz::heatmap_from_history(history, |k| rowtree_db::keys::describe(catalog, k));
    h.title = title.to_string();
    h.origin = Some(0);
    h
}

/// The key visualizer page of [`keyviz_heatmap`].
pub fn keyviz_html(catalog: &Catalog, history: &History, title: &str) -> String {
    rowtree_keyviz::render_html(&keyviz_heatmap(catalog, history, title))
}

fn timestamp_at(now: u64) -> Timestamp {
    Timestamp::from_nanos(EPOCH_NANOS + now as i128).expect("in range")
}

/// Generates one operation of `kind` (0 insert, 1 update, 2 read) and its
/// accesses (kind, key, CPU nanoseconds, bytes).
fn build_op(
    table: &mut TableState,
    kind: usize,
    now: u64,
    rng: &mut StdRng,
    (read_ns, write_ns): (u64, u64),
    out: &mut Vec<Acc>,
) -> Result<()> {
    let ts = timestamp_at(now);
    let db_err = |e: rowtree_db::Error| Error(format!("table `{}`: {e}", table.name));
    let mut row = vec![Value::Null; table.ncols];
    match kind {
        0 => {
            for g in &mut table.gens {
                row[g.position] = g.next(now, rng);
            }
            let keys = table.keys.keys(&mut row, ts).map_err(db_err)?;
            for (i, k) in keys.into_iter().enumerate() {
                let bytes = if i == 0 { ROW_BYTES } else { k.len() as u64 };
                out.push((AccessKind::Write, k, write_ns, bytes));
            }
        }
        1 => {
            for g in &mut table.gens {
                if table.key_positions.contains(&g.position) {
                    row[g.position] = g.next(now, rng);
                }
            }
            table.keys.compute_generated(&mut row, ts).map_err(db_err)?;
            let row_key = table.keys.row_key(&row).map_err(db_err)?;
            // The row as it was.
            let mut old = row.clone();
            match table.last.get(&row_key) {
                Some(values) => {
                    for (p, v) in table.update_positions.iter().zip(values) {
                        old[*p] = v.clone();
                    }
                }
                None => {
                    for g in &mut table.gens {
                        if table.update_positions.contains(&g.position) {
                            old[g.position] = g.before(now, table.update_gap, rng);
                        }
                    }
                }
            }
            table.keys.compute_generated(&mut old, ts).map_err(db_err)?;
            let old_entries = table.keys.index_keys(&old).map_err(db_err)?;
            let mut new_values = Vec::with_capacity(table.update_positions.len());
            for g in &mut table.gens {
                if table.update_positions.contains(&g.position) {
                    let v = g.next(now, rng);
                    row[g.position] = v;
                }
            }
            for p in &table.update_positions {
                new_values.push(row[*p].clone());
            }
            table.keys.compute_generated(&mut row, ts).map_err(db_err)?;
            let new_entries = table.keys.index_keys(&row).map_err(db_err)?;
            out.push((AccessKind::Read, row_key.clone(), read_ns, ROW_BYTES));
            out.push((AccessKind::Write, row_key.clone(), write_ns, ROW_BYTES));
            for (o, n) in old_entries.into_iter().zip(new_entries) {
                if o == n {
                    continue;
                }
                if let Some(o) = o {
                    let len = o.len() as u64;
                    out.push((AccessKind::Write, o, write_ns, len));
                }
                if let Some(n) = n {
                    let len = n.len() as u64;
                    out.push((AccessKind::Write, n, write_ns, len));
                }
            }
            table.last.insert(row_key, new_values);
        }
        _ => {
            for g in &mut table.gens {
                if table.key_positions.contains(&g.position) {
                    row[g.position] = g.next(now, rng);
                }
            }
            table.keys.compute_generated(&mut row, ts).map_err(db_err)?;
            let row_key = table.keys.row_key(&row).map_err(db_err)?;
            out.push((AccessKind::Read, row_key, read_ns, ROW_BYTES));
        }
    }
    Ok(())
}
