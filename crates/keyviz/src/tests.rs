use rowtree_kv::{IntervalStat, NodeId, SplitId, UnsplittableReason};

use super::*;

const MIN: u64 = 60_000_000_000;
/// 2026-01-01 00:00 UTC.
const T0: u64 = 1_767_225_600_000_000_000;

fn stat(start: &[u8], limit: Option<&[u8]>, node: u32, score: f64, rows_read: u64) -> IntervalStat {
    IntervalStat {
        interval_end: 0,
        split: SplitId(1),
        start: start.to_vec(),
        limit: limit.map(|l| l.to_vec()),
        node: NodeId(node),
        replicas: Vec::new(),
        cpu_score: score,
        requests: rows_read,
        rows_read,
        rows_written: 0,
        bytes_read: rows_read * 100,
        bytes_written: 0,
        cpu_nanos: (score * 1e7) as u64,
        unsplittable: Vec::new(),
        buckets: Default::default(),
    }
}

fn label(k: &[u8]) -> String {
    if k.is_empty() {
        "<begin>".into()
    } else {
        format!("K({})", String::from_utf8_lossy(k))
    }
}

/// Minute 1: one split [a, d). Minute 2: [a, b), [b, d) after a split at b.
/// Minute 3: [a, b), [b, c), [c, d) and the tail [d, end).
fn sample() -> Vec<(u64, Vec<IntervalStat>)> {
    vec![
        (T0 + MIN, vec![stat(b"a", Some(b"d"), 0, 90.0, 300)]),
        (
            T0 + 2 * MIN,
            vec![
                stat(b"a", Some(b"b"), 0, 20.0, 100),
                stat(b"b", Some(b"d"), 1, 60.0, 200),
            ],
        ),
        (
            T0 + 3 * MIN,
            vec![
                stat(b"a", Some(b"b"), 0, 10.0, 10),
                stat(b"b", Some(b"c"), 1, 30.0, 30),
                stat(b"c", Some(b"d"), 2, 40.0, 40),
                stat(b"d", None, 2, 5.0, 5),
            ],
        ),
    ]
}

#[test]
fn buckets_are_the_boundaries_seen() {
    let h = heatmap_from_history(&sample(), label);
    let starts: Vec<&[u8]> = h.rows.iter().map(|r| r.start.as_slice()).collect();
    assert_eq!(starts, vec![b"a" as &[u8], b"b", b"c", b"d"]);
    assert_eq!(h.rows[1].label, "K(b)");
    assert_eq!(h.end_label, "<end>");
    assert_eq!(h.columns, vec![T0 + MIN, T0 + 2 * MIN, T0 + 3 * MIN]);
    assert_eq!(h.granularity, Granularity::Minute);
    for m in Metric::ALL {
        assert_eq!(h.values[&m].len(), 3 * 4);
    }
}

#[test]
fn values_are_normalised_per_row() {
    let h = heatmap_from_history(&sample(), label);
    let m = Metric::RowsRead;
    // Minute 1: [a, d) covers 3 rows: 300 / 3 each, none in [d, end).
    assert_eq!(
        (0..4).map(|r| h.value(m, 0, r)).collect::<Vec<_>>(),
        vec![100.0, 100.0, 100.0, 0.0]
    );
    // Minute 2: [a, b) one row; [b, d) two rows.
    assert_eq!(
        (0..4).map(|r| h.value(m, 1, r)).collect::<Vec<_>>(),
        vec![100.0, 100.0, 100.0, 0.0]
    );
    assert_eq!(h.value(Metric::CpuScore, 1, 0), 20.0);
    assert_eq!(h.value(Metric::CpuScore, 1, 1), 30.0);
    assert_eq!(h.value(Metric::CpuScore, 1, 2), 30.0);
    // Minute 3: one split per row.
    assert_eq!(
        (0..4).map(|r| h.value(m, 2, r)).collect::<Vec<_>>(),
        vec![10.0, 30.0, 40.0, 5.0]
    );
    // The whole database's maximum: [c, d) in minute 3.
    assert_eq!(h.max(Metric::CpuScore), 40.0);
    // The sum over a column is the sum of the splits (nothing lost or doubled).
    let total: f64 = (0..4).map(|r| h.value(Metric::BytesRead, 2, r)).sum();
    assert_eq!(total, 8500.0);
    // Nodes per cell.
    assert_eq!(h.nodes[h.index(1, 2)], Some(1));
    assert_eq!(h.nodes[h.index(2, 3)], Some(2));
    assert_eq!(h.nodes[h.index(0, 3)], None);
}

#[test]
fn more_than_max_rows_are_merged() {
    // 10 single-key splits in one interval and one spanning all of them.
    let keys: Vec<Vec<u8>> = (0..=10u8).map(|i| vec![b'a' + i]).collect();
    let mut first = Vec::new();
    for i in 0..10 {
        first.push(stat(
            &keys[i],
            Some(&keys[i + 1]),
            0,
            10.0,
            (i as u64 + 1) * 10,
        ));
    }
    let intervals = vec![
        (T0 + MIN, first),
        (
            T0 + 2 * MIN,
            vec![stat(&keys[0], Some(&keys[10]), 0, 50.0, 1000)],
        ),
    ];
    let h = heatmap_from_history_with(&intervals, label, 4);
    assert_eq!(h.rows.len(), 4);
    // 10 buckets in 4 groups: [0,2), [2,5), [5,7), [7,10).
    let starts: Vec<u8> = h.rows.iter().map(|r| r.start[0]).collect();
    assert_eq!(starts, vec![b'a', b'c', b'f', b'h']);
    assert_eq!(h.end_label, "K(k)");
    let m = Metric::RowsRead;
    // Merged rows hold the sum of their buckets.
    assert_eq!(
        (0..4).map(|r| h.value(m, 0, r)).collect::<Vec<_>>(),
        vec![
            10.0 + 20.0,
            30.0 + 40.0 + 50.0,
            60.0 + 70.0,
            80.0 + 90.0 + 100.0
        ]
    );
    // The wide split is spread by the buckets each group holds: 2, 3, 2, 3 of 10.
    assert_eq!(
        (0..4).map(|r| h.value(m, 1, r)).collect::<Vec<_>>(),
        vec![200.0, 300.0, 200.0, 300.0]
    );
    // Never more than MAX_ROWS by default.
    let many: Vec<IntervalStat> = (0..2500u32)
        .map(|i| {
            let a = i.to_be_bytes();
            let b = (i + 1).to_be_bytes();
            stat(&a, Some(&b), 0, 1.0, 1)
        })
        .collect();
    let h = heatmap_from_history(&[(T0 + MIN, many)], label);
    assert_eq!(h.rows.len(), MAX_ROWS);
    let total: f64 = (0..MAX_ROWS).map(|r| h.value(m, 0, r)).sum();
    assert!((total - 2500.0).abs() < 1e-6);
}

#[test]
fn hot_and_unsplittable_splits_are_listed() {
    let mut intervals = sample();
    intervals[2].1[3].unsplittable = vec![UnsplittableReason::MovingHotSpot];
    let h = heatmap_from_history(&intervals, label);
    let listed: Vec<(&str, &str, f64)> = h
        .hot
        .iter()
        .map(|s| {
            (
                s.start_label.as_str(),
                s.limit_label.as_str(),
                s.max_cpu_score,
            )
        })
        .collect();
    assert_eq!(
        listed,
        vec![
            ("K(a)", "K(d)", 90.0),
            ("K(b)", "K(d)", 60.0),
            ("K(d)", "<end>", 5.0)
        ]
    );
    assert_eq!(h.hot[2].reasons, vec![UnsplittableReason::MovingHotSpot]);
    assert_eq!(
        h.reasons[h.index(2, 3)],
        vec![UnsplittableReason::MovingHotSpot]
    );
    let html = render_html(&h);
    assert!(html.contains("MOVING_HOT_SPOT"));
}

#[test]
fn labels_are_escaped_in_html() {
    let evil = "</script><script>alert('x')</script><img src=x onerror=alert(1)>&amp;";
    let intervals = vec![(
        T0 + MIN,
        vec![
            stat(b"a", Some(b"b"), 0, 120.0, 10),
            stat(b"b", None, 0, 1.0, 1),
        ],
    )];
    let mut h = heatmap_from_history(&intervals, |_| evil.to_string());
    h.title = "<b>Users</b> & \"Orders\"".into();
    let html = render_html(&h);
    // The only script elements are the page's own two.
    assert_eq!(html.matches("<script").count(), 2);
    assert_eq!(html.matches("</script>").count(), 2);
    assert!(!html.contains("<img"));
    assert!(!html.contains("<b>Users"));
    assert!(html.contains("&lt;b&gt;Users&lt;/b&gt; &amp; &quot;Orders&quot;"));
    // The hot list shows the label escaped.
    assert!(html.contains("&lt;/script&gt;&lt;script&gt;alert(&#39;x&#39;)"));
    // The embedded JSON still decodes to the label.
    let start = html.find("id=\"keyviz-data\">").unwrap() + "id=\"keyviz-data\">".len();
    let end = start + html[start..].find("</script>").unwrap();
    let data: serde_json::Value = serde_json::from_str(&html[start..end]).unwrap();
    assert_eq!(data["rows"][0]["label"], evil);
    assert_eq!(escape_html("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&#39;");
    // No external resources.
    assert!(!html.contains("http://") && !html.contains("https://"));
    assert!(!html.contains("<link") && !html.contains("<iframe") && !html.contains("@import"));
    assert!(html.contains("Content-Security-Policy\" content=\"default-src 'none'"));
}

#[test]
fn output_is_deterministic() {
    let a = heatmap_from_history(&sample(), label);
    let b = heatmap_from_history(&sample(), label);
    assert_eq!(a, b);
    assert_eq!(render_html(&a), render_html(&b));
    assert_eq!(render_json(&a), render_json(&b));
    assert_eq!(
        render_text(&a, Metric::CpuScore, 80),
        render_text(&b, Metric::CpuScore, 80)
    );
    // The order of the splits within an interval does not matter.
    let mut shuffled = sample();
    for (_, stats) in &mut shuffled {
        stats.reverse();
    }
    let c = heatmap_from_history(&shuffled, label);
    assert_eq!(render_html(&a), render_html(&c));
}

#[test]
fn text_heatmap() {
    let h = heatmap_from_history(&sample(), label);
    let text = render_text(&h, Metric::CpuScore, 60);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("CPU score per key bucket"), "{text}");
    assert!(lines[0].ends_with("'@' = 40"), "{text}");
    // Rows a..d, 3 columns, relative to 40: row a is 30, 20, 10.
    assert_eq!(lines.len(), 1 + 4 + 1, "{text}");
    assert!(
        lines[1].contains("K(a)") && lines[1].ends_with("|#+-|"),
        "{text}"
    );
    assert!(lines[4].ends_with("|  :|"), "{text}");
    assert!(
        lines[5].contains("2026-01-01 00:01 .. 2026-01-01 00:03 UTC"),
        "{text}"
    );
    for l in &lines {
        assert!(
            l.chars().count() <= 60 || l.contains("UTC") || l.contains("per key"),
            "{l}"
        );
    }
    // Narrow: columns are merged.
    let text = render_text(&h, Metric::CpuScore, 24);
    assert!(text.lines().nth(1).unwrap().ends_with('|'));
    let empty = heatmap_from_history(&[], label);
    assert!(render_text(&empty, Metric::RowsRead, 80).contains("no history"));
    assert!(render_html(&empty).contains("No load history yet"));
}

#[test]
fn granularity_and_time() {
    assert_eq!(format_time(T0), "2026-01-01 00:00");
    assert_eq!(format_time(0), "1970-01-01 00:00");
    assert_eq!(
        format_time(951_782_400_000_000_000 + 3_723_000_000_000),
        "2000-02-29 01:02"
    );
    let ten = vec![(T0 + 10 * MIN, vec![]), (T0 + 20 * MIN, vec![])];
    assert_eq!(
        heatmap_from_history(&ten, label).granularity,
        Granularity::TenMinutes
    );
    assert_eq!(parse_granularity("10minute"), Some(Granularity::TenMinutes));
    assert_eq!(parse_granularity("hour"), Some(Granularity::Hour));
    assert_eq!(Metric::parse("rows-read"), Some(Metric::RowsRead));
    assert_eq!(Metric::parse("cpu"), Some(Metric::CpuScore));
}

/// One split over the whole key space whose load, minute `m`, fell in keys
/// `[10m, 10m + 10)` (two-byte keys), as the tracker's buckets say.
fn moving(minutes: u64) -> Vec<(u64, Vec<IntervalStat>)> {
    (0..minutes)
        .map(|m| {
            let mut s = stat(b"", None, 0, 100.0, 1000);
            let keys: Vec<[u8; 2]> = (0..=10)
                .map(|i| ((m * 10 + i) as u16).to_be_bytes())
                .collect();
            s.buckets = rowtree_kv::KeyBuckets {
                bounds: keys.iter().map(|k| k.to_vec()).collect(),
                shares: vec![0.1; 10],
            };
            (T0 + (m + 1) * MIN, vec![s])
        })
        .collect()
}

#[test]
fn rows_are_key_buckets_so_a_moving_hot_spot_is_a_diagonal() {
    let h = heatmap_from_history(&moving(20), label);
    // The whole split is one range, but its buckets (200 fine ranges) cut
    // it into many rows (about one per two fine ranges).
    assert!(h.rows.len() >= 90, "{}", h.rows.len());
    let hottest: Vec<usize> = (0..h.columns.len())
        .map(|c| {
            (0..h.rows.len())
                .max_by(|&a, &b| {
                    h.value(Metric::RowsRead, c, a)
                        .total_cmp(&h.value(Metric::RowsRead, c, b))
                })
                .unwrap()
        })
        .collect();
    // The hottest row climbs every minute: a diagonal.
    assert!(hottest.windows(2).all(|w| w[1] > w[0]), "{hottest:?}");
    // Each minute's load stays in its own rows: nothing lost, nothing elsewhere.
    for c in 0..h.columns.len() {
        let total: f64 = (0..h.rows.len())
            .map(|r| h.value(Metric::RowsRead, c, r))
            .sum();
        assert!((total - 1000.0).abs() < 1e-6);
        let lit = (0..h.rows.len())
            .filter(|&r| h.value(Metric::RowsRead, c, r) > 0.0)
            .count();
        // A thin band: about a twentieth of the rows (rows are cut at equal
        // shares of the whole history's load).
        assert!(
            lit * 10 < h.rows.len(),
            "minute {c}: {lit} of {}",
            h.rows.len()
        );
    }
    // Merged into fewer rows, still a diagonal.
    let small = heatmap_from_history_with(&moving(20), label, 40);
    assert!(
        small.rows.len() <= 40 && small.rows.len() >= 20,
        "{}",
        small.rows.len()
    );
    let top = |c: usize| {
        (0..small.rows.len())
            .max_by(|&a, &b| {
                small
                    .value(Metric::CpuScore, c, a)
                    .total_cmp(&small.value(Metric::CpuScore, c, b))
            })
            .unwrap()
    };
    assert!(top(0) < top(10) && top(10) < top(19));
}

#[test]
fn rows_carry_anchors() {
    let intervals = moving(3);
    let users = |k: &[u8]| {
        if k.is_empty() || (k[0] == 0 && k.get(1).is_some_and(|b| *b < 15)) {
            format!("Users({})", k.get(1).copied().unwrap_or(0))
        } else {
            format!("Orders/Items({k:?})")
        }
    };
    let h = heatmap_from_history(&intervals, users);
    assert_eq!(h.rows[0].id, "row-Users-0");
    assert_eq!(h.rows[1].id, "row-Users-1");
    let first_order = h.rows.iter().position(|r| r.object == "Orders").unwrap();
    assert_eq!(h.rows[first_order].id, "row-Orders-0");
    let ids: BTreeSet<&str> = h.rows.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids.len(), h.rows.len(), "ids are unique");
    assert_eq!(row_object("<begin>"), "begin");
    assert_eq!(row_object("Users.ByName(\"x\")"), "Users.ByName");
    assert_eq!(row_object(""), "key");
    let fifth = h.rows[5].start.clone();
    assert_eq!(h.row_of(&fifth), Some(5));
    assert_eq!(h.row_of(&[fifth.as_slice(), &[0]].concat()), Some(5));
    assert_eq!(h.row_of(b""), Some(0));
    let json: serde_json::Value = serde_json::from_str(&render_json(&h)).unwrap();
    assert_eq!(json["rows"][1]["id"], "row-Users-1");
    assert_eq!(json["rows"][1]["object"], "Users");
    let html = render_html(&h);
    assert!(html.contains("#table-"), "the page documents its anchors");
}

#[test]
fn simulated_time_is_labelled_from_the_start() {
    let mut intervals = moving(3);
    for (i, (end, _)) in intervals.iter_mut().enumerate() {
        *end = (i as u64 + 1) * MIN;
    }
    let mut h = heatmap_from_history(&intervals, label);
    h.origin = Some(0);
    assert_eq!(h.time_label(MIN), "t+0:01");
    assert_eq!(h.time_label(90 * MIN + 30_000_000_000), "t+1:30:30");
    let html = render_html(&h);
    assert!(
        !html.contains("1970-01-01"),
        "no epoch dates for simulated time"
    );
    assert!(html.contains("t+0:00 to t+0:03 of simulated time"));
    let json: serde_json::Value = serde_json::from_str(&render_json(&h)).unwrap();
    assert_eq!(json["relative"], true);
    assert_eq!(json["columns"][0], "t+0:01");
    assert_eq!(json["starts"][0], "t+0:00");
    let text = render_text(&h, Metric::CpuScore, 80);
    assert!(text.contains("t+0:01 .. t+0:03 (3 intervals"), "{text}");
    // Wall-clock histories keep UTC dates.
    let wall = heatmap_from_history(&moving(2), label);
    assert!(render_html(&wall).contains("2026-01-01 00:00 to 2026-01-01 00:02 UTC"));
}

#[test]
fn many_columns_mean_fewer_rows() {
    let h = heatmap_from_history(&moving(600), label);
    assert_eq!(h.columns.len(), 600);
    assert!(h.rows.len() * 600 <= MAX_CELLS, "{}", h.rows.len());
    assert!(h.rows.len() >= MAX_CELLS / 600 - 1);
}

#[test]
fn advice_links_to_the_rows_it_explains() {
    let mut h = heatmap_from_history(&sample(), label);
    let plain = render_html(&h);
    assert!(!plain.contains("Schema advice"), "no advice, no section");
    h.advice.push(crate::Advice {
        severity: "error".into(),
        rule: "monotonic-key".into(),
        object: "Logs".into(),
        message: "every insert <lands> last".into(),
    });
    let html = render_html(&h);
    assert!(html.contains("<h2>Schema advice</h2>"));
    assert!(html.contains("<a href=\"#table-Logs\">Logs</a>"), "{html}");
    assert!(html.contains("<code>monotonic-key</code>"));
    assert!(html.contains("every insert &lt;lands&gt; last"), "escaped");
}

/// On a cluster each row carries the nodes holding a replica of its
/// split: each cell shows those of the split that contributed the most,
/// and the hot list those of each hot split's last interval, so replicas
/// moving from node to node show on the page and in `data.json`.
#[test]
fn the_replicas_of_each_cells_split_are_shown() {
    let with = |mut s: IntervalStat, replicas: &[u64]| {
        s.replicas = replicas.to_vec();
        s
    };
    let history = vec![
        (
            T0 + MIN,
            vec![with(stat(b"a", Some(b"d"), 1, 90.0, 300), &[1, 2, 3])],
        ),
        (
            T0 + 2 * MIN,
            vec![
                with(stat(b"a", Some(b"b"), 1, 20.0, 100), &[1, 2, 3]),
                // The hot half's replica moved from node 2 to node 4.
                with(stat(b"b", Some(b"d"), 4, 80.0, 200), &[1, 3, 4]),
            ],
        ),
    ];
    let h = heatmap_from_history(&history, label);
    assert_eq!(h.replicas[h.index(0, 1)], vec![1, 2, 3]);
    assert_eq!(h.replicas[h.index(1, 0)], vec![1, 2, 3]);
    assert_eq!(h.replicas[h.index(1, 1)], vec![1, 3, 4]);
    let hot: Vec<(&[u8], &[u32])> = h
        .hot
        .iter()
        .map(|s| (s.start.as_slice(), s.replicas.as_slice()))
        .collect();
    assert!(hot.contains(&(b"b" as &[u8], &[1, 3, 4][..])), "{hot:?}");
    let json: serde_json::Value = serde_json::from_str(&render_json(&h)).unwrap();
    let cell = h.index(1, 1) as u64;
    let listed = json["replicas"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p[0].as_u64() == Some(cell))
        .expect("the cell's replicas in data.json");
    assert_eq!(listed[1], serde_json::json!([1, 3, 4]));
    let html = render_html(&h);
    assert!(html.contains("<th>Replicas</th>"));
    assert!(html.contains("node-1, node-3, node-4"));
    // One process: no replicas, nothing listed.
    let h = heatmap_from_history(&sample(), label);
    assert!(h.replicas.iter().all(Vec::is_empty));
    let json: serde_json::Value = serde_json::from_str(&render_json(&h)).unwrap();
    assert_eq!(json["replicas"], serde_json::json!([]));
}
