//! Query plans as Spanner sends them.
//!
//! In the PLAN and PROFILE query modes a result's stats carry a
//! `google.spanner.v1.QueryPlan`: a flat list of `PlanNode`s, node 0 the
//! root, each naming its children by index. It is built from the SQL
//! layer's typed description ([`PlanTree`]), the same one EXPLAIN prints:
//!
//! | [`PlanNode`] | `google.spanner.v1.PlanNode` |
//! |---|---|
//! | `name` (`TableScan`, `HashJoin`, ...) | `display_name` |
//! | `description` (the EXPLAIN line) | `short_representation.description` |
//! | `attributes` | `metadata`, one string field each |
//! | `children` | `child_links`, in input order |
//! | `stats` (PROFILE) | `execution_stats`: `rows` and, for scans, `scanned_rows` and `splits_touched`, each `{total, unit}` as Spanner writes them |
//!
//! Nodes are listed parents first. A DML statement's operator is node 0,
//! with the plan of the rows it reads as its children; a query's
//! subqueries follow its main plan as roots of their own.

use googleapis_tonic_google_spanner_v1::google::spanner::v1 as pb;
use prost_types::value::Kind;
use rowtree_sql::{PlanNode, PlanTree};

/// The wire form of `tree`.
pub fn to_pb(tree: &PlanTree) -> pb::QueryPlan {
    let mut nodes = Vec::new();
    match &tree.statement {
        Some(statement) => {
            let index = push(statement, &mut nodes);
            for root in &tree.roots {
                let child = add(root, &mut nodes);
                link(&mut nodes[index], child);
            }
        }
        None => {
            for root in &tree.roots {
                add(root, &mut nodes);
            }
        }
    }
    pb::QueryPlan {
        plan_nodes: nodes,
        query_advice: None,
    }
}

/// Appends `node` and its descendants (parents first); returns its index.
fn add(node: &PlanNode, nodes: &mut Vec<pb::PlanNode>) -> usize {
    rowtree_types::stack::guarded(|| {
        let index = push(node, nodes);
        for c in &node.children {
            let child = add(c, nodes);
            link(&mut nodes[index], child);
        }
        index
    })
}

/// Appends `node` alone (no child links yet); returns its index.
fn push(node: &PlanNode, nodes: &mut Vec<pb::PlanNode>) -> usize {
    let index = nodes.len();
    let metadata = node
        .attributes
        .iter()
        .map(|(k, v)| (k.to_string(), string(v.clone())))
        .collect();
    let execution_stats = node.stats.map(|stats| {
        let mut fields = vec![("rows", total(stats.rows, "rows"))];
        if let Some(scan) = stats.scan {
            fields.push(("scanned_rows", total(scan.scanned, "rows")));
            fields.push(("splits_touched", total(scan.splits, "splits")));
        }
        record(fields)
    });
    nodes.push(pb::PlanNode {
        index: index as i32,
        kind: pb::plan_node::Kind::Relational as i32,
        display_name: node.name.clone(),
        child_links: Vec::new(),
        short_representation: Some(pb::plan_node::ShortRepresentation {
            description: node.description.clone(),
            subqueries: Default::default(),
        }),
        metadata: Some(prost_types::Struct { fields: metadata }),
        execution_stats,
    });
    index
}

fn link(parent: &mut pb::PlanNode, child: usize) {
    parent.child_links.push(pb::plan_node::ChildLink {
        child_index: child as i32,
        ..Default::default()
    });
}

fn string(s: String) -> prost_types::Value {
    prost_types::Value {
        kind: Some(Kind::StringValue(s)),
    }
}

/// A `{total, unit}` statistic.
fn total(n: u64, unit: &str) -> prost_types::Value {
    prost_types::Value {
        kind: Some(Kind::StructValue(record(vec![
            ("total", string(n.to_string())),
            ("unit", string(unit.to_string())),
        ]))),
    }
}

fn record(fields: Vec<(&str, prost_types::Value)>) -> prost_types::Struct {
    prost_types::Struct {
        fields: fields
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use rowtree_sql::{NodeStats, ScanCounters};

    use super::*;

    fn node(name: &str, description: &str, children: Vec<PlanNode>) -> PlanNode {
        PlanNode {
            name: name.into(),
            description: description.into(),
            attributes: Vec::new(),
            children,
            stats: None,
        }
    }

    fn field<'a>(s: &'a prost_types::Struct, path: &[&str]) -> &'a str {
        let (last, init) = path.split_last().unwrap();
        let mut s = s;
        for key in init {
            match &s.fields[*key].kind {
                Some(Kind::StructValue(inner)) => s = inner,
                other => panic!("{key}: {other:?}"),
            }
        }
        match &s.fields[*last].kind {
            Some(Kind::StringValue(v)) => v,
            other => panic!("{last}: {other:?}"),
        }
    }

    #[test]
    fn nodes_are_listed_parents_first_with_child_links() {
        let mut scan = node("TableScan", "TableScan T: full scan", vec![]);
        scan.attributes = vec![("table", "T".into()), ("ranges", "full scan".into())];
        scan.stats = Some(NodeStats {
            rows: 4,
            scan: Some(ScanCounters {
                scanned: 9,
                splits: 2,
            }),
        });
        let mut filter = node("Filter", "Filter: x > 1", vec![scan]);
        filter.stats = Some(NodeStats {
            rows: 1,
            scan: None,
        });
        let values = node("Values", "Values: 1 row", vec![]);
        let tree = PlanTree {
            statement: None,
            roots: vec![
                node("HashJoin", "HashJoin INNER", vec![filter, values]),
                node(
                    "Subquery",
                    "Subquery $0 (scalar, uncorrelated): SELECT 1",
                    vec![node("Values", "Values: 1 row", vec![])],
                ),
            ],
        };
        let plan = to_pb(&tree);
        let names: Vec<&str> = plan
            .plan_nodes
            .iter()
            .map(|n| n.display_name.as_str())
            .collect();
        assert_eq!(
            names,
            [
                "HashJoin",
                "Filter",
                "TableScan",
                "Values",
                "Subquery",
                "Values"
            ]
        );
        let links: Vec<Vec<i32>> = plan
            .plan_nodes
            .iter()
            .map(|n| n.child_links.iter().map(|l| l.child_index).collect())
            .collect();
        assert_eq!(
            links,
            [vec![1, 3], vec![2], vec![], vec![], vec![5], vec![]]
        );
        for (i, n) in plan.plan_nodes.iter().enumerate() {
            assert_eq!(n.index, i as i32);
            assert_eq!(n.kind, pb::plan_node::Kind::Relational as i32);
        }
        let scan = &plan.plan_nodes[2];
        assert_eq!(
            scan.short_representation.as_ref().unwrap().description,
            "TableScan T: full scan"
        );
        let metadata = scan.metadata.as_ref().unwrap();
        assert_eq!(field(metadata, &["table"]), "T");
        assert_eq!(field(metadata, &["ranges"]), "full scan");
        let stats = scan.execution_stats.as_ref().unwrap();
        assert_eq!(field(stats, &["rows", "total"]), "4");
        assert_eq!(field(stats, &["rows", "unit"]), "rows");
        assert_eq!(field(stats, &["scanned_rows", "total"]), "9");
        assert_eq!(field(stats, &["splits_touched", "total"]), "2");
        let filter = plan.plan_nodes[1].execution_stats.as_ref().unwrap();
        assert_eq!(field(filter, &["rows", "total"]), "1");
        assert!(!filter.fields.contains_key("scanned_rows"));
        // Planned only: no execution stats.
        assert!(plan.plan_nodes[0].execution_stats.is_none());
    }

    #[test]
    fn a_dml_statement_is_the_root_over_its_plan() {
        let tree = PlanTree {
            statement: Some(node("Update", "Update T: set Name", vec![])),
            roots: vec![
                node("TableScan", "TableScan T: full scan", vec![]),
                node(
                    "Subquery",
                    "Subquery $0 (scalar, uncorrelated): SELECT 1",
                    vec![],
                ),
            ],
        };
        let plan = to_pb(&tree);
        assert_eq!(plan.plan_nodes[0].display_name, "Update");
        let links: Vec<i32> = plan.plan_nodes[0]
            .child_links
            .iter()
            .map(|l| l.child_index)
            .collect();
        assert_eq!(links, [1, 2]);
    }
}
