//! The hotspot demo on 4 nodes meets the targets.
//!
//! The full run is `cargo run --release -p rowtree-cli -- demo hotspots --nodes 4`
//! (30 simulated minutes per design, offered 4 C). This test runs the same
//! scenario with each simulated operation standing for 100 real ones
//! (`--scale 100`: rates / 100, costs x 100), which keeps the CPU picture
//! and the policy's delays and makes it fast enough for a debug build.

use rowtree_sim::{run_demo, DemoConfig};

#[test]
fn demo_hotspots_meets_the_targets_on_4_nodes() {
    let mut config = DemoConfig::new(4);
    config.scale = 100.0;
    let report = run_demo(&config, 2, &|_, _, _| {}).expect("demo runs");
    let summary: Vec<String> = report
        .designs
        .iter()
        .map(|d| {
            format!(
                "{}: {:.2} C, busiest {:.2}, reasons {:?}",
                d.name,
                d.throughput_per_node_capacity,
                d.max_node_utilization,
                d.unsplittable_reasons
            )
        })
        .collect();
    let summary = summary.join("\n");
    eprintln!("{summary}");
    for d in &report.designs {
        match d.name.as_str() {
            "timestamp-first" => {
                assert!(d.throughput_per_node_capacity <= 1.2, "{summary}");
                assert!(
                    d.unsplittable_reasons
                        .iter()
                        .any(|r| r == "MOVING_HOT_SPOT"),
                    "{summary}"
                );
            }
            "index-non-interleaved" => {
                assert!(
                    d.unsplittable_reasons
                        .iter()
                        .any(|r| r == "MOVING_HOT_SPOT"),
                    "{summary}"
                );
            }
            _ => assert!(d.throughput_per_node_capacity >= 3.2, "{summary}"),
        }
    }
}
