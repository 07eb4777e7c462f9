//! The matrix as pictures: for every workload, throughput and p99 latency
//! against the client count, one line per system (SVG, drawn with the
//! `plotters` crate; labels are SVG text, so no font files are needed).

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::{Cell, Matrix};

/// Which number of a cell a picture shows.
#[derive(Debug, Clone, Copy)]
pub enum Metric {
    Throughput,
    P99,
}

impl Metric {
    fn of(self, c: &Cell) -> f64 {
        match self {
            Metric::Throughput => c.throughput,
            Metric::P99 => c.p99_us / 1000.0,
        }
    }

    fn title(self) -> &'static str {
        match self {
            Metric::Throughput => "operations per second (higher is better)",
            Metric::P99 => "p99 latency in ms, log scale (lower is better)",
        }
    }
}

const COLOURS: [RGBColor; 5] = [
    RGBColor(31, 119, 180),
    RGBColor(11, 60, 104),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
];

fn plot_error(e: impl std::fmt::Display) -> super::Error {
    super::Error::Op(format!("plot: {e}"))
}

/// An SVG document: one small chart per workload in a grid.
pub fn svg(m: &Matrix, metric: Metric) -> super::Result<String> {
    let mut buf = String::new();
    {
        let cols = 4;
        let rows = m.workloads.len().div_ceil(cols).max(1);
        let root =
            SVGBackend::with_string(&mut buf, (1200, 40 + 300 * rows as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_error)?;
        let root = root
            .titled(
                &format!("YCSB, {} records: {}", m.records, metric.title()),
                ("sans-serif", 20),
            )
            .map_err(plot_error)?;
        let areas = root.split_evenly((rows, cols));
        let n = m.clients.len();
        for (area, workload) in areas.iter().zip(&m.workloads) {
            let values: Vec<f64> = m
                .cells
                .iter()
                .filter(|c| &c.workload == workload)
                .map(|c| metric.of(c))
                .filter(|v| v.is_finite() && *v > 0.0)
                .collect();
            let max = values.iter().copied().fold(0.0, f64::max).max(1e-3);
            let min = values.iter().copied().fold(f64::INFINITY, f64::min);
            let x_range = -0.3f64..(n as f64 - 0.7);
            let mut builder = ChartBuilder::on(area);
            builder
                .caption(workload, ("sans-serif", 16))
                .margin(8)
                .x_label_area_size(28)
                .y_label_area_size(60);
            let clients = m.clients.clone();
            let x_fmt = move |x: &f64| {
                let i = x.round();
                if (x - i).abs() < 0.01 && i >= 0.0 && (i as usize) < clients.len() {
                    format!("{}", clients[i as usize])
                } else {
                    String::new()
                }
            };
            let series = |system: &str| -> Vec<(f64, f64)> {
                m.clients
                    .iter()
                    .enumerate()
                    .filter_map(|(i, &k)| {
                        let v = metric.of(m.cell(system, workload, k)?);
                        (v.is_finite() && v > 0.0).then_some((i as f64, v))
                    })
                    .collect()
            };
            match metric {
                Metric::Throughput => {
                    let mut chart = builder
                        .build_cartesian_2d(x_range, 0f64..max * 1.1)
                        .map_err(plot_error)?;
                    chart
                        .configure_mesh()
                        .x_labels(n * 4)
                        .x_label_formatter(&x_fmt)
                        .x_desc("clients")
                        .y_label_formatter(&|y| {
                            if *y >= 1000.0 {
                                format!("{:.0}k", y / 1000.0)
                            } else {
                                format!("{y:.0}")
                            }
                        })
                        .draw()
                        .map_err(plot_error)?;
                    draw_systems(&mut chart, &m.systems, &series)?;
                }
                Metric::P99 => {
                    let lo = if min.is_finite() { min / 2.0 } else { 1e-3 };
                    let mut chart = builder
                        .build_cartesian_2d(x_range, (lo..max * 2.0).log_scale())
                        .map_err(plot_error)?;
                    chart
                        .configure_mesh()
                        .x_labels(n * 4)
                        .x_label_formatter(&x_fmt)
                        .x_desc("clients")
                        .y_label_formatter(&|y| format!("{y:.2}"))
                        .draw()
                        .map_err(plot_error)?;
                    draw_systems(&mut chart, &m.systems, &series)?;
                }
            }
        }
        root.present().map_err(plot_error)?;
    }
    Ok(buf)
}

/// One line with markers per system, and the legend.
fn draw_systems<'a, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<RangedCoordf64, Y>>,
    systems: &[String],
    series: &dyn Fn(&str) -> Vec<(f64, f64)>,
) -> super::Result<()>
where
    Y: Ranged<ValueType = f64>,
{
    for (i, system) in systems.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let points = series(system);
        chart
            .draw_series(LineSeries::new(points.clone(), colour.stroke_width(2)))
            .map_err(plot_error)?
            .label(system.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 16, y)], colour.stroke_width(2))
            });
        chart
            .draw_series(points.iter().map(|p| Circle::new(*p, 3, colour.filled())))
            .map_err(plot_error)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .draw()
        .map_err(plot_error)?;
    Ok(())
}
