//! EXPLAIN: the operator tree as text.
//!
//! One line per operator, children indented under their parent. A scan
//! shows what the planner decided about storage: table or index (and
//! whether it fetches base rows by key), the key ranges it reads, the
//! direction, an early limit, and the residual filter. A join shows its
//! method; an interleaved merge join that reads each row tree once shows
//! its one `TreeScan` (parent+child, the parent's key ranges, each side's
//! filter) in place of the two scans. With ANALYZE (after the plan ran), each line also gives the rows
//! the operator produced and, for scans, the keys read and splits touched.
//! INSERT, UPDATE and DELETE show their operator (`Update T: set Name`,
//! `Delete T`, `Insert T (cols): 2 rows`, ...) over the plan of the rows
//! they read; with ANALYZE, the rows affected and a note that the statement
//! was rolled back.

use rowtree_expr::SubqueryKind;
use rowtree_parser::ast::{JoinKind, SetOperator};

use crate::plan::{JoinMethod, Node, NodeKind, Plan, ScanNode, TreeScan};

/// Renders `plan`; with `analyze`, with the counters of its execution.
pub(crate) fn explain(plan: &Plan, analyze: bool) -> String {
    let mut out = String::new();
    render(&plan.root, 0, analyze, &mut out);
    for (i, sub) in plan.subqueries.iter().enumerate() {
        let kind = match sub.kind {
            SubqueryKind::Scalar => "scalar",
            SubqueryKind::Exists => "exists",
            SubqueryKind::Array => "array",
            SubqueryKind::In => "in",
        };
        let corr = if sub.correlations.is_empty() {
            String::from("uncorrelated")
        } else {
            format!(
                "correlated on {} value{}",
                sub.correlations.len(),
                if sub.correlations.len() == 1 { "" } else { "s" }
            )
        };
        out.push_str(&format!("Subquery ${i} ({kind}, {corr}): {}\n", sub.text));
        render(&sub.root, 1, analyze, &mut out);
    }
    out
}

fn join_kind(k: JoinKind) -> &'static str {
    match k {
        JoinKind::Inner => "INNER",
        JoinKind::Left => "LEFT",
        JoinKind::Right => "RIGHT",
        JoinKind::Full => "FULL",
        JoinKind::Cross => "CROSS",
    }
}

fn render(node: &Node, depth: usize, analyze: bool, out: &mut String) {
    rowtree_types::stack::guarded(|| render_node(node, depth, analyze, out))
}

fn render_node(node: &Node, depth: usize, analyze: bool, out: &mut String) {
    let line = match &node.kind {
        NodeKind::Scan(s) if !s.access.chosen => {
            // Bound, not yet planned: the conjuncts WHERE pushed here.
            let f: Vec<&str> = s.conjuncts.iter().map(|c| c.text.as_str()).collect();
            if f.is_empty() {
                format!("TableScan {} (no access path yet)", s.table)
            } else {
                format!(
                    "TableScan {} (no access path yet): pushed: {}",
                    s.table,
                    f.join(" AND ")
                )
            }
        }
        NodeKind::Scan(s) => {
            let a = &s.access;
            let mut parts = Vec::new();
            let head = match &a.index {
                Some(ix) if a.back_join => {
                    format!("IndexScan {}@{ix} (back join to {})", s.table, s.table)
                }
                Some(ix) => format!("IndexScan {}@{ix} (covering)", s.table),
                None => format!("TableScan {}", s.table),
            };
            parts.push(a.ranges_text.clone());
            if a.reverse {
                parts.push("reverse".into());
            }
            if a.limit > 0 {
                parts.push(format!("limit {}", a.limit));
            }
            if !a.residual.is_empty() {
                let f: Vec<&str> = a
                    .residual
                    .iter()
                    .map(|&i| s.conjuncts[i].text.as_str())
                    .collect();
                parts.push(format!("filter: {}", f.join(" AND ")));
            }
            format!("{head}: {}", parts.join(", "))
        }
        NodeKind::Values { rows } => format!(
            "Values: {} row{}",
            rows.len(),
            if rows.len() == 1 { "" } else { "s" }
        ),
        NodeKind::Rows { name, rows } => format!("VirtualTable {name}: {} rows", rows.len()),
        NodeKind::SystemTable { name, .. } => format!("SystemTable {name}"),
        NodeKind::Filter { text, .. } => format!("Filter: {text}"),
        NodeKind::Project { names, .. } => {
            let names: Vec<&str> = names
                .iter()
                .map(|n| if n.is_empty() { "_" } else { n.as_str() })
                .collect();
            format!("Project: {}", names.join(", "))
        }
        NodeKind::Aggregate { groups, texts, .. } => {
            let (g, a) = texts.split_at(groups.len().min(texts.len()));
            if g.is_empty() {
                format!("Aggregate: {}", a.join(", "))
            } else {
                format!("HashAggregate: group by {}; {}", g.join(", "), a.join(", "))
            }
        }
        NodeKind::Sort { keys, .. } => {
            let k: Vec<&str> = keys.iter().map(|k| k.text.as_str()).collect();
            format!("Sort: {}", k.join(", "))
        }
        NodeKind::Limit { limit, offset, .. } => match (limit, offset) {
            (Some(l), 0) => format!("Limit: {l}"),
            (Some(l), o) => format!("Limit: {l} offset {o}"),
            (None, o) => format!("Offset: {o}"),
        },
        NodeKind::Distinct { .. } => "Distinct".into(),
        NodeKind::Join {
            kind, method, text, ..
        } => {
            let m = match method {
                JoinMethod::Hash { .. } => "HashJoin",
                JoinMethod::NestedLoop => "NestedLoopJoin",
                JoinMethod::InterleavedMerge { .. } => "InterleavedMergeJoin",
            };
            let once = if tree_scan(node).is_some() {
                " (one scan of each row tree)"
            } else {
                ""
            };
            if text.is_empty() {
                format!("{m} {}{once}", join_kind(*kind))
            } else {
                format!("{m} {}{once}: {text}", join_kind(*kind))
            }
        }
        NodeKind::SetOp { op, all, .. } => {
            let o = match op {
                SetOperator::Union => "Union",
                SetOperator::Intersect => "Intersect",
                SetOperator::Except => "Except",
            };
            format!("{o} {}", if *all { "ALL" } else { "DISTINCT" })
        }
        NodeKind::Window { calls, .. } => {
            let t: Vec<&str> = calls.iter().map(|c| c.text.as_str()).collect();
            format!("Window: {}", t.join(", "))
        }
        NodeKind::Unnest {
            text,
            outer,
            with_offset,
            ..
        } => format!(
            "Unnest{}: {text}{}",
            if *outer { " (outer)" } else { "" },
            if *with_offset { " with offset" } else { "" }
        ),
    };
    out.push_str(&"  ".repeat(depth));
    out.push_str(&line);
    if analyze {
        let (rows, scanned, splits) = node.counters.get();
        if matches!(node.kind, NodeKind::Scan(_)) {
            out.push_str(&format!(
                "  [rows={rows} scanned={scanned} splits={splits}]"
            ));
        } else {
            out.push_str(&format!("  [rows={rows}]"));
        }
    }
    out.push('\n');
    if let Some((tree, parent, child)) = tree_scan(node) {
        // The two scans run as one: show it in their place.
        let mut parts = vec![tree.ranges_text.clone()];
        let filter = |scan: &ScanNode, which: &mut dyn Iterator<Item = usize>| {
            let f: Vec<&str> = which.map(|i| scan.conjuncts[i].text.as_str()).collect();
            (!f.is_empty()).then(|| format!("{} filter: {}", scan.table, f.join(" AND ")))
        };
        parts.extend(filter(parent, &mut tree.parent_filter.iter().copied()));
        parts.extend(filter(child, &mut tree.child_filter.iter().copied()));
        out.push_str(&"  ".repeat(depth + 1));
        out.push_str(&format!(
            "TreeScan {}+{}: {}",
            parent.table,
            child.table,
            parts.join(", ")
        ));
        if analyze {
            let (rows, scanned, splits) = tree.counters.get();
            out.push_str(&format!(
                "  [rows={rows} scanned={scanned} splits={splits}]"
            ));
        }
        out.push('\n');
        return;
    }
    for c in node.children() {
        render(c, depth + 1, analyze, out);
    }
}

/// An interleaved merge join that runs as one tree scan: the scan and the
/// parent and child scans it replaces.
fn tree_scan(node: &Node) -> Option<(&TreeScan, &ScanNode, &ScanNode)> {
    let NodeKind::Join {
        left,
        right,
        method: JoinMethod::InterleavedMerge {
            tree: Some(tree), ..
        },
        ..
    } = &node.kind
    else {
        return None;
    };
    match (&left.kind, &right.kind) {
        (NodeKind::Scan(p), NodeKind::Scan(c)) => Some((tree, p, c)),
        _ => None,
    }
}

/// Totals over every scan of the plan: (keys read, splits touched).
pub(crate) fn scan_totals(plan: &Plan) -> (u64, u64) {
    fn walk(n: &Node, acc: &mut (u64, u64)) {
        if matches!(n.kind, NodeKind::Scan(_)) {
            let (_, scanned, splits) = n.counters.get();
            acc.0 += scanned;
            acc.1 += splits;
        }
        if let Some((tree, _, _)) = tree_scan(n) {
            let (_, scanned, splits) = tree.counters.get();
            acc.0 += scanned;
            acc.1 += splits;
        }
        for c in n.children() {
            walk(c, acc);
        }
    }
    let mut acc = (0, 0);
    walk(&plan.root, &mut acc);
    for s in &plan.subqueries {
        walk(&s.root, &mut acc);
    }
    acc
}

/// EXPLAIN [ANALYZE] of a DML statement: its operator over the plan of the
/// rows it reads; with `analyze`, the counters of the execution (whose
/// transaction the caller rolls back) and a closing note saying so.
pub(crate) fn explain_dml(e: &crate::dml::Explained, analyze: bool) -> Vec<String> {
    let mut lines = vec![if analyze {
        format!("{}  [rows={}]", e.head, e.affected)
    } else {
        e.head.clone()
    }];
    if let Some(plan) = &e.plan {
        lines.extend(explain(plan, analyze).lines().map(|l| format!("  {l}")));
    }
    if analyze {
        let (scanned, splits) = e.plan.as_ref().map(scan_totals).unwrap_or((0, 0));
        lines.push(format!(
            "rows affected: {}, rows scanned: {scanned}, splits touched: {splits}",
            e.affected
        ));
        lines.push("(rolled back: EXPLAIN ANALYZE does not commit)".into());
    }
    lines
}
