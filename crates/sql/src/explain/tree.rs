//! The typed plan description and its EXPLAIN text.

/// A statement's plan as EXPLAIN and the API show it.
///
/// `roots` are operator trees: the query's plan first, then one
/// `Subquery $i` node per subquery (whose child is the subquery's plan). A
/// DML statement also has its `statement` operator (`Update T: set Name`),
/// which consumes the rows of the plan in `roots`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PlanTree {
    /// The INSERT, UPDATE or DELETE operator over `roots`, for DML. It has
    /// no children of its own: `roots` are its input.
    pub statement: Option<PlanNode>,
    /// The operator trees, main plan first.
    pub roots: Vec<PlanNode>,
}

/// One operator of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanNode {
    /// The operator: `TableScan`, `IndexScan`, `HashJoin`, `Filter`,
    /// `Subquery`, `Update`, ...
    pub name: String,
    /// The one-line description EXPLAIN prints (without counters), e.g.
    /// `TableScan Singers: full scan, filter: Age > 3`.
    pub description: String,
    /// What the operator does, as key-value pairs (`table`, `index`,
    /// `ranges`, `filter`, `join_type`, ...), in a fixed order per operator.
    pub attributes: Vec<(&'static str, String)>,
    /// The operators whose rows this one consumes, in input order.
    pub children: Vec<PlanNode>,
    /// The counters of the execution, when the plan ran (EXPLAIN ANALYZE,
    /// query mode PROFILE); `None` when it was only planned.
    pub stats: Option<NodeStats>,
}

/// What one operator did during an execution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NodeStats {
    /// Rows the operator produced.
    pub rows: u64,
    /// For scans: what they read from storage.
    pub scan: Option<ScanCounters>,
}

/// What a scan read from storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ScanCounters {
    /// Keys read.
    pub scanned: u64,
    /// Splits the reads touched.
    pub splits: u64,
}

impl PlanNode {
    /// A node named `name` printed as `description`, without attributes,
    /// children or counters.
    pub(crate) fn new(name: impl Into<String>, description: impl Into<String>) -> PlanNode {
        PlanNode {
            name: name.into(),
            description: description.into(),
            attributes: Vec::new(),
            children: Vec::new(),
            stats: None,
        }
    }

    /// Adds the attribute `key`.
    pub(crate) fn attr(mut self, key: &'static str, value: impl Into<String>) -> PlanNode {
        self.attributes.push((key, value.into()));
        self
    }

    /// The value of attribute `key`, if the node has it.
    pub fn attribute(&self, key: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.as_str())
    }

    /// This node and its descendants, parents before children.
    pub fn walk(&self) -> Vec<&PlanNode> {
        fn visit<'a>(node: &'a PlanNode, out: &mut Vec<&'a PlanNode>) {
            rowtree_types::stack::guarded(|| {
                out.push(node);
                for c in &node.children {
                    visit(c, out);
                }
            })
        }
        let mut out = Vec::new();
        visit(self, &mut out);
        out
    }

    /// Appends the node's EXPLAIN lines, indented two spaces per level of
    /// `depth`, with counters when it has them.
    fn write_text(&self, depth: usize, out: &mut String) {
        rowtree_types::stack::guarded(|| {
            out.push_str(&"  ".repeat(depth));
            out.push_str(&self.description);
            if let Some(stats) = &self.stats {
                out.push_str(&stats.suffix());
            }
            out.push('\n');
            for c in &self.children {
                c.write_text(depth + 1, out);
            }
        })
    }
}

impl NodeStats {
    /// How EXPLAIN ANALYZE appends the counters to an operator's line.
    fn suffix(&self) -> String {
        match self.scan {
            Some(s) => format!(
                "  [rows={} scanned={} splits={}]",
                self.rows, s.scanned, s.splits
            ),
            None => format!("  [rows={}]", self.rows),
        }
    }
}

impl PlanTree {
    /// The EXPLAIN text: one line per operator, children indented two
    /// spaces under their parent; a DML statement's line first, its input
    /// plan indented under it. Each line ends in `\n`.
    pub fn text(&self) -> String {
        let mut plan = String::new();
        for root in &self.roots {
            root.write_text(0, &mut plan);
        }
        let Some(statement) = &self.statement else {
            return plan;
        };
        let mut out = statement.description.clone();
        if let Some(stats) = &statement.stats {
            out.push_str(&stats.suffix());
        }
        out.push('\n');
        // The input plan is indented as a block, every line of it (a
        // description may hold a line break, from a string literal).
        for line in plan.lines() {
            out.push_str("  ");
            out.push_str(line);
            out.push('\n');
        }
        out
    }

    /// Totals over every scan of the plan: (keys read, splits touched).
    /// Zero when the plan did not run.
    pub fn scan_totals(&self) -> (u64, u64) {
        let mut acc = (0, 0);
        for node in self.roots.iter().flat_map(PlanNode::walk) {
            if let Some(NodeStats { scan: Some(s), .. }) = node.stats {
                acc.0 += s.scanned;
                acc.1 += s.splits;
            }
        }
        acc
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(rows: u64) -> PlanNode {
        let mut n = PlanNode::new("TableScan", "TableScan T: full scan").attr("table", "T");
        n.stats = Some(NodeStats {
            rows,
            scan: Some(ScanCounters {
                scanned: rows * 2,
                splits: 1,
            }),
        });
        n
    }

    #[test]
    fn text_indents_children_and_appends_counters() {
        let mut filter = PlanNode::new("Filter", "Filter: x > 1");
        filter.children.push(scan(3));
        filter.stats = Some(NodeStats {
            rows: 1,
            scan: None,
        });
        let tree = PlanTree {
            statement: None,
            roots: vec![filter],
        };
        assert_eq!(
            tree.text(),
            "Filter: x > 1  [rows=1]\n  TableScan T: full scan  [rows=3 scanned=6 splits=1]\n"
        );
        assert_eq!(tree.scan_totals(), (6, 1));
        assert_eq!(tree.roots[0].children[0].attribute("table"), Some("T"));
    }

    #[test]
    fn a_statement_indents_its_input_plan_line_by_line() {
        let mut s = PlanNode::new("Filter", "Filter: x = 'a\nb'");
        s.children
            .push(PlanNode::new("TableScan", "TableScan T: full scan"));
        let tree = PlanTree {
            statement: Some(PlanNode::new("Delete", "Delete T")),
            roots: vec![s],
        };
        assert_eq!(
            tree.text(),
            "Delete T\n  Filter: x = 'a\n  b'\n    TableScan T: full scan\n"
        );
        assert_eq!(tree.scan_totals(), (0, 0));
    }
}
