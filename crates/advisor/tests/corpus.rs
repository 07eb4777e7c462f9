//! The labelled corpus: realistic schemas (logs, IoT, orders, social,
//! games, finance, SaaS, queues, ads, health, content), each carrying the
//! findings a careful reviewer expects as `-- expect: RULE OBJECT` lines.
//!
//! The test runs the advisor over every file, matches its findings to the
//! labels by (rule, object), and computes precision and recall per rule
//! over the whole corpus. It fails when either falls below 0.9 for one of
//! the four hotspot rules, and prints the table (run with `--nocapture` to
//! see it) with every missed or unexpected finding, so a regression names
//! its schema.
//!
//! Labels say what the schema *should* get, written from the rule's
//! documentation (docs/advisor/), not from the advisor's output.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use rowtree_advisor::{advise, Config, Rule, Source};

/// The rules whose precision and recall are held to [`THRESHOLD`].
const HOTSPOT_RULES: [Rule; 4] = [
    Rule::MonotonicKey,
    Rule::MonotonicIndex,
    Rule::SequentialId,
    Rule::TimeOrderedUuid,
];

const THRESHOLD: f64 = 0.9;

/// The (rule id, object) pairs a corpus file expects.
fn labels(text: &str) -> BTreeSet<(String, String)> {
    text.lines()
        .filter_map(|line| line.trim().strip_prefix("-- expect:"))
        .map(|rest| {
            let mut words = rest.split_whitespace();
            let rule = words.next().expect("-- expect: needs a rule id");
            let object = words.next().expect("-- expect: needs an object");
            assert!(
                words.next().is_none(),
                "-- expect: RULE OBJECT, got {rest:?}"
            );
            assert!(
                Rule::all().iter().any(|r| r.id() == rule),
                "unknown rule id {rule:?} in a label"
            );
            (rule.to_string(), object.to_string())
        })
        .collect()
}

#[derive(Default)]
struct Counts {
    true_positive: usize,
    false_positive: usize,
    false_negative: usize,
}

impl Counts {
    fn precision(&self) -> f64 {
        let reported = self.true_positive + self.false_positive;
        if reported == 0 {
            1.0
        } else {
            self.true_positive as f64 / reported as f64
        }
    }

    fn recall(&self) -> f64 {
        let expected = self.true_positive + self.false_negative;
        if expected == 0 {
            1.0
        } else {
            self.true_positive as f64 / expected as f64
        }
    }
}

#[test]
fn corpus_precision_and_recall() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/corpus exists")
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "sql"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 60,
        "the corpus holds {} schemas",
        files.len()
    );

    let mut counts: BTreeMap<&'static str, Counts> = Rule::all()
        .iter()
        .map(|r| (r.id(), Counts::default()))
        .collect();
    let mut mismatches = Vec::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(path).unwrap();
        let expected = labels(&text);
        let report = advise(
            &[Source {
                name: name.clone(),
                text,
            }],
            &Config::default(),
        );
        assert!(
            report.errors.is_empty(),
            "{name}: the corpus must be valid DDL: {:?}",
            report.errors.iter().map(|e| &e.message).collect::<Vec<_>>()
        );
        let found: BTreeSet<(String, String)> = report
            .findings
            .iter()
            .map(|f| (f.rule.id().to_string(), f.object.clone()))
            .collect();
        for pair in found.union(&expected) {
            let entry = counts.get_mut(pair.0.as_str()).unwrap();
            match (found.contains(pair), expected.contains(pair)) {
                (true, true) => entry.true_positive += 1,
                (true, false) => {
                    entry.false_positive += 1;
                    mismatches.push(format!("{name}: unexpected {} {}", pair.0, pair.1));
                }
                (false, true) => {
                    entry.false_negative += 1;
                    mismatches.push(format!("{name}: missed {} {}", pair.0, pair.1));
                }
                (false, false) => unreachable!(),
            }
        }
    }

    println!("corpus: {} schemas", files.len());
    println!("| rule | expected | reported | correct | precision | recall |");
    println!("|---|---|---|---|---|---|");
    for (rule, c) in &counts {
        println!(
            "| {rule} | {} | {} | {} | {:.2} | {:.2} |",
            c.true_positive + c.false_negative,
            c.true_positive + c.false_positive,
            c.true_positive,
            c.precision(),
            c.recall()
        );
    }
    for line in &mismatches {
        println!("{line}");
    }

    let failing: Vec<String> = HOTSPOT_RULES
        .iter()
        .filter_map(|rule| {
            let c = &counts[rule.id()];
            (c.precision() < THRESHOLD || c.recall() < THRESHOLD).then(|| {
                format!(
                    "{}: precision {:.2}, recall {:.2}",
                    rule.id(),
                    c.precision(),
                    c.recall()
                )
            })
        })
        .collect();
    assert!(
        failing.is_empty(),
        "hotspot rules below {THRESHOLD}: {failing:?}\n{}",
        mismatches.join("\n")
    );
}
