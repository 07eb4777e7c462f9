//! The matrix as a picture: values/s per mode and thread count, this
//! machine beside the article's Spanner measurements, on a logarithmic
//! scale (the modes differ by orders of magnitude). A self-contained SVG
//! file with no script and no external resource.

use crate::bench::{seed_result, Matrix, Mode, MATRIX_THREADS};

const WIDTH: f64 = 820.0;
const HEIGHT: f64 = 420.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 70.0;
/// The value axis spans 10^MIN_DECADE .. 10^MAX_DECADE values/s.
const MIN_DECADE: i32 = 1;

/// Bar colours: this machine at 10 and 50 threads, the article at 10 and 50.
const COLOURS: [&str; 4] = ["#1f77b4", "#0b3c68", "#ff9f4a", "#b35806"];

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Renders the matrix as an SVG document.
pub fn svg(matrix: &Matrix) -> String {
    let max = matrix
        .runs
        .iter()
        .map(|r| r.values_per_sec)
        .fold(10.0_f64, f64::max);
    let max_decade = (max.log10().ceil() as i32).max(MIN_DECADE + 1);
    let plot_h = HEIGHT - TOP - BOTTOM;
    let plot_w = WIDTH - LEFT - RIGHT;
    let y = |v: f64| {
        let v = v.max(10f64.powi(MIN_DECADE));
        let f = (v.log10() - MIN_DECADE as f64) / (max_decade - MIN_DECADE) as f64;
        TOP + plot_h * (1.0 - f)
    };
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{HEIGHT}\" \
         font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{}\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">Sequence values per second \
         ({} ms of work per transaction; log scale)</text>\n",
        WIDTH / 2.0,
        matrix
            .runs
            .first()
            .map(|r| r.txn_latency_ms)
            .unwrap_or(10.0)
    );
    for d in MIN_DECADE..=max_decade {
        let yy = y(10f64.powi(d));
        out.push_str(&format!(
            "<line x1=\"{LEFT}\" x2=\"{}\" y1=\"{yy:.1}\" y2=\"{yy:.1}\" stroke=\"#ddd\"/>\n\
             <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\n",
            WIDTH - RIGHT,
            LEFT - 6.0,
            yy + 4.0,
            10u64.pow(d as u32)
        ));
    }
    let modes = Mode::ALL;
    let group_w = plot_w / modes.len() as f64;
    let bar_w = group_w / 5.5;
    for (g, mode) in modes.iter().enumerate() {
        let x0 = LEFT + g as f64 * group_w + bar_w * 0.75;
        let mut bars: Vec<(Option<f64>, String)> = Vec::new();
        for threads in MATRIX_THREADS {
            bars.push((
                matrix.run(*mode, threads).map(|r| r.values_per_sec),
                format!("Rowtree, {threads} threads"),
            ));
        }
        for threads in MATRIX_THREADS {
            bars.push((
                seed_result(*mode, threads).map(|s| s.values_per_sec),
                format!("the article, {threads} threads"),
            ));
        }
        for (i, (value, label)) in bars.iter().enumerate() {
            let Some(v) = value else { continue };
            let x = x0 + i as f64 * bar_w;
            let top = y(*v);
            out.push_str(&format!(
                "<rect x=\"{x:.1}\" y=\"{top:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{}\">\
                 <title>{} {}: {v:.1} values/s</title></rect>\n",
                bar_w - 2.0,
                TOP + plot_h - top,
                COLOURS[i],
                mode.name(),
                escape(label)
            ));
        }
        out.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n",
            LEFT + (g as f64 + 0.5) * group_w,
            TOP + plot_h + 18.0,
            mode.name()
        ));
    }
    let legend = [
        format!("Rowtree, {} threads", MATRIX_THREADS[0]),
        format!("Rowtree, {} threads", MATRIX_THREADS[1]),
        format!("the article (Spanner), {} threads", MATRIX_THREADS[0]),
        format!("the article (Spanner), {} threads", MATRIX_THREADS[1]),
    ];
    for (i, label) in legend.iter().enumerate() {
        let x = LEFT + i as f64 * (plot_w / 4.0);
        let yy = HEIGHT - 22.0;
        out.push_str(&format!(
            "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"12\" height=\"12\" fill=\"{}\"/>\
             <text x=\"{:.1}\" y=\"{yy:.1}\">{}</text>\n",
            yy - 10.0,
            COLOURS[i],
            x + 16.0,
            escape(label)
        ));
    }
    out.push_str(&format!(
        "<text transform=\"translate(16 {:.1}) rotate(-90)\" text-anchor=\"middle\">values/s</text>\n</svg>\n",
        TOP + plot_h / 2.0
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::{Report, SEED_RESULTS};

    fn report(mode: Mode, threads: usize, values_per_sec: f64) -> Report {
        Report {
            mode,
            threads,
            iterations: 1,
            txn_latency_ms: 10.0,
            elapsed_ms: 1.0,
            values_per_sec,
            p50_ms: 1.0,
            p75_ms: 1.0,
            p90_ms: 1.0,
            p99_ms: 1.0,
            min_value: 1,
            max_value: 1,
            spread: None,
            waited_for_batch: None,
        }
    }

    #[test]
    fn bars_are_drawn_for_every_run_and_every_published_figure() {
        let runs = vec![
            report(Mode::Sync, 10, 50.0),
            report(Mode::Sync, 50, 45.0),
            report(Mode::BitReversed, 50, 4000.0),
        ];
        let matrix = Matrix {
            unthrottled: report(Mode::BitReversed, 50, 1e6),
            runs,
            commit_ms: 0.1,
            seed: SEED_RESULTS.to_vec(),
        };
        let svg = svg(&matrix);
        assert!(svg.starts_with("<svg ") && svg.trim_end().ends_with("</svg>"));
        // Three runs of ours, eight published figures.
        assert_eq!(
            svg.matches("<rect x=").count(),
            3 + 8 + 4,
            "bars plus the legend"
        );
        assert!(svg.contains("sync Rowtree, 10 threads: 50.0 values/s"));
        assert!(svg.contains("async-batch the article, 50 threads: 1622.0 values/s"));
        // Taller bars for bigger values: the y of 4000 is above that of 50.
        let top_of = |needle: &str| -> f64 {
            let at = svg.find(needle).unwrap();
            let rect = svg[..at].rfind("<rect").unwrap();
            let y = &svg[rect..at];
            let y = y.split("y=\"").nth(1).unwrap();
            y[..y.find('"').unwrap()].parse().unwrap()
        };
        assert!(top_of("bit-reversed Rowtree, 50 threads") < top_of("sync Rowtree, 10 threads"));
    }
}
