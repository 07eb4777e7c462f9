//! From the physical plan to its [`PlanTree`]: one [`PlanNode`] per
//! operator, as the planner left it.

use rowtree_expr::SubqueryKind;
use rowtree_parser::ast::{JoinKind, SetOperator};

use super::tree::{NodeStats, PlanNode, PlanTree, ScanCounters};
use crate::plan::{Counters, JoinMethod, Node, NodeKind, Plan, ScanNode, TreeScan};

/// Describes `plan`; with `analyze`, with the counters of its execution.
pub(crate) fn describe(plan: &Plan, analyze: bool) -> PlanTree {
    let mut roots = vec![subtree(&plan.root, analyze)];
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
        let mut n = PlanNode::new(
            "Subquery",
            format!("Subquery ${i} ({kind}, {corr}): {}", sub.text),
        )
        .attr("subquery", format!("${i}"))
        .attr("subquery_kind", kind)
        .attr("correlated_values", sub.correlations.len().to_string())
        .attr("query", sub.text.clone());
        n.children.push(subtree(&sub.root, analyze));
        roots.push(n);
    }
    PlanTree {
        statement: None,
        roots,
    }
}

/// Describes a DML statement: its operator over the plan of the rows it
/// reads; with `analyze`, with the counters of the execution (whose
/// transaction the caller rolls back).
pub(crate) fn describe_dml(e: &crate::dml::Explained, analyze: bool) -> PlanTree {
    let name = e.head.split([' ', ':', '(']).next().unwrap_or(&e.head);
    let mut statement = PlanNode::new(name, e.head.clone());
    if analyze {
        statement.stats = Some(NodeStats {
            rows: e.affected,
            scan: None,
        });
    }
    let roots = e
        .plan
        .as_ref()
        .map(|plan| describe(plan, analyze).roots)
        .unwrap_or_default();
    PlanTree {
        statement: Some(statement),
        roots,
    }
}

/// EXPLAIN [ANALYZE] of a DML statement as lines: the described tree and,
/// with `analyze`, a closing summary and a note that nothing was committed.
pub(crate) fn explain_dml(tree: &PlanTree, analyze: bool) -> Vec<String> {
    let mut lines: Vec<String> = tree.text().lines().map(str::to_string).collect();
    if analyze {
        let affected = tree
            .statement
            .as_ref()
            .and_then(|s| s.stats)
            .map_or(0, |s| s.rows);
        let (scanned, splits) = tree.scan_totals();
        lines.push(format!(
            "rows affected: {affected}, rows scanned: {scanned}, splits touched: {splits}"
        ));
        lines.push("(rolled back: EXPLAIN ANALYZE does not commit)".into());
    }
    lines
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

/// The counters of `counters` as node stats (`scan` for scans), when the
/// plan ran.
fn stats(counters: &Counters, scan: bool, analyze: bool) -> Option<NodeStats> {
    analyze.then(|| {
        let (rows, scanned, splits) = counters.get();
        NodeStats {
            rows,
            scan: scan.then_some(ScanCounters { scanned, splits }),
        }
    })
}

/// Describes `node` and the operators under it.
fn subtree(node: &Node, analyze: bool) -> PlanNode {
    rowtree_types::stack::guarded(|| describe_node(node, analyze))
}

fn describe_node(node: &Node, analyze: bool) -> PlanNode {
    let mut out = match &node.kind {
        NodeKind::Scan(s) if !s.access.chosen => {
            // Bound, not yet planned: the conjuncts WHERE pushed here.
            let f: Vec<&str> = s.conjuncts.iter().map(|c| c.text.as_str()).collect();
            let n = if f.is_empty() {
                PlanNode::new(
                    "TableScan",
                    format!("TableScan {} (no access path yet)", s.table),
                )
            } else {
                PlanNode::new(
                    "TableScan",
                    format!(
                        "TableScan {} (no access path yet): pushed: {}",
                        s.table,
                        f.join(" AND ")
                    ),
                )
                .attr("pushed", f.join(" AND "))
            };
            n.attr("table", s.table.clone())
        }
        NodeKind::Scan(s) => {
            let a = &s.access;
            let mut parts = Vec::new();
            let (name, head) = match &a.index {
                Some(ix) if a.back_join => (
                    "IndexScan",
                    format!("IndexScan {}@{ix} (back join to {})", s.table, s.table),
                ),
                Some(ix) => (
                    "IndexScan",
                    format!("IndexScan {}@{ix} (covering)", s.table),
                ),
                None => ("TableScan", format!("TableScan {}", s.table)),
            };
            let mut attrs = vec![("table", s.table.clone())];
            if let Some(ix) = &a.index {
                attrs.push(("index", ix.clone()));
                attrs.push(("back_join", a.back_join.to_string()));
            }
            parts.push(a.ranges_text.clone());
            attrs.push(("ranges", a.ranges_text.clone()));
            if a.reverse {
                parts.push("reverse".into());
                attrs.push(("direction", "reverse".into()));
            }
            if a.limit > 0 {
                parts.push(format!("limit {}", a.limit));
                attrs.push(("limit", a.limit.to_string()));
            }
            if !a.residual.is_empty() {
                let f: Vec<&str> = a
                    .residual
                    .iter()
                    .map(|&i| s.conjuncts[i].text.as_str())
                    .collect();
                parts.push(format!("filter: {}", f.join(" AND ")));
                attrs.push(("filter", f.join(" AND ")));
            }
            let mut n = PlanNode::new(name, format!("{head}: {}", parts.join(", ")));
            n.attributes = attrs;
            n
        }
        NodeKind::Values { rows } => PlanNode::new(
            "Values",
            format!(
                "Values: {} row{}",
                rows.len(),
                if rows.len() == 1 { "" } else { "s" }
            ),
        )
        .attr("rows", rows.len().to_string()),
        NodeKind::Rows { name, rows } => PlanNode::new(
            "VirtualTable",
            format!("VirtualTable {name}: {} rows", rows.len()),
        )
        .attr("table", name.clone())
        .attr("rows", rows.len().to_string()),
        NodeKind::SystemTable { name, .. } => {
            PlanNode::new("SystemTable", format!("SystemTable {name}"))
                .attr("table", name.to_string())
        }
        NodeKind::Filter { text, .. } => {
            PlanNode::new("Filter", format!("Filter: {text}")).attr("condition", text.clone())
        }
        NodeKind::Project { names, .. } => {
            let names: Vec<&str> = names
                .iter()
                .map(|n| if n.is_empty() { "_" } else { n.as_str() })
                .collect();
            PlanNode::new("Project", format!("Project: {}", names.join(", ")))
                .attr("columns", names.join(", "))
        }
        NodeKind::Aggregate { groups, texts, .. } => {
            let (g, a) = texts.split_at(groups.len().min(texts.len()));
            if g.is_empty() {
                PlanNode::new("Aggregate", format!("Aggregate: {}", a.join(", ")))
                    .attr("aggregates", a.join(", "))
            } else {
                PlanNode::new(
                    "HashAggregate",
                    format!("HashAggregate: group by {}; {}", g.join(", "), a.join(", ")),
                )
                .attr("group_by", g.join(", "))
                .attr("aggregates", a.join(", "))
            }
        }
        NodeKind::Sort { keys, .. } => {
            let k: Vec<&str> = keys.iter().map(|k| k.text.as_str()).collect();
            PlanNode::new("Sort", format!("Sort: {}", k.join(", "))).attr("keys", k.join(", "))
        }
        NodeKind::Limit { limit, offset, .. } => match (limit, offset) {
            (Some(l), 0) => {
                PlanNode::new("Limit", format!("Limit: {l}")).attr("limit", l.to_string())
            }
            (Some(l), o) => PlanNode::new("Limit", format!("Limit: {l} offset {o}"))
                .attr("limit", l.to_string())
                .attr("offset", o.to_string()),
            (None, o) => {
                PlanNode::new("Offset", format!("Offset: {o}")).attr("offset", o.to_string())
            }
        },
        NodeKind::Distinct { .. } => PlanNode::new("Distinct", "Distinct"),
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
            let description = if text.is_empty() {
                format!("{m} {}{once}", join_kind(*kind))
            } else {
                format!("{m} {}{once}: {text}", join_kind(*kind))
            };
            let n = PlanNode::new(m, description).attr("join_type", join_kind(*kind));
            if text.is_empty() {
                n
            } else {
                n.attr("condition", text.clone())
            }
        }
        NodeKind::SetOp { op, all, .. } => {
            let o = match op {
                SetOperator::Union => "Union",
                SetOperator::Intersect => "Intersect",
                SetOperator::Except => "Except",
            };
            let q = if *all { "ALL" } else { "DISTINCT" };
            PlanNode::new(o, format!("{o} {q}")).attr("quantifier", q)
        }
        NodeKind::Window { calls, .. } => {
            let t: Vec<&str> = calls.iter().map(|c| c.text.as_str()).collect();
            PlanNode::new("Window", format!("Window: {}", t.join(", "))).attr("calls", t.join(", "))
        }
        NodeKind::Unnest {
            text,
            outer,
            with_offset,
            ..
        } => PlanNode::new(
            "Unnest",
            format!(
                "Unnest{}: {text}{}",
                if *outer { " (outer)" } else { "" },
                if *with_offset { " with offset" } else { "" }
            ),
        )
        .attr("array", text.clone())
        .attr("outer", outer.to_string())
        .attr("with_offset", with_offset.to_string()),
    };
    out.stats = stats(
        &node.counters,
        matches!(node.kind, NodeKind::Scan(_)),
        analyze,
    );
    if let Some((tree, parent, child)) = tree_scan(node) {
        // The two scans run as one: show it in their place.
        out.children
            .push(describe_tree_scan(tree, parent, child, analyze));
        return out;
    }
    for c in node.children() {
        out.children.push(subtree(c, analyze));
    }
    out
}

/// The one scan of an interleaved merge join that reads each row tree once.
fn describe_tree_scan(
    tree: &TreeScan,
    parent: &ScanNode,
    child: &ScanNode,
    analyze: bool,
) -> PlanNode {
    let mut parts = vec![tree.ranges_text.clone()];
    let filter = |scan: &ScanNode, which: &[usize]| {
        let f: Vec<&str> = which
            .iter()
            .map(|&i| scan.conjuncts[i].text.as_str())
            .collect();
        (!f.is_empty()).then(|| f.join(" AND "))
    };
    let parent_filter = filter(parent, &tree.parent_filter);
    let child_filter = filter(child, &tree.child_filter);
    parts.extend(
        parent_filter
            .as_ref()
            .map(|f| format!("{} filter: {f}", parent.table)),
    );
    parts.extend(
        child_filter
            .as_ref()
            .map(|f| format!("{} filter: {f}", child.table)),
    );
    let mut n = PlanNode::new(
        "TreeScan",
        format!(
            "TreeScan {}+{}: {}",
            parent.table,
            child.table,
            parts.join(", ")
        ),
    )
    .attr("parent_table", parent.table.clone())
    .attr("child_table", child.table.clone())
    .attr("ranges", tree.ranges_text.clone());
    if let Some(f) = parent_filter {
        n = n.attr("parent_filter", f);
    }
    if let Some(f) = child_filter {
        n = n.attr("child_filter", f);
    }
    n.stats = stats(&tree.counters, true, analyze);
    n
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
