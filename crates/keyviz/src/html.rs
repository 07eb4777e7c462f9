//! The heatmap as one self-contained HTML page, and as JSON.

use std::fmt::Write as _;

use serde::Serialize;

use crate::text::format_value;
use crate::{granularity_name, hex, Heatmap, Metric};

#[derive(Serialize)]
struct Data<'a> {
    title: &'a str,
    granularity: &'static str,
    interval_ns: u64,
    /// True when times are simulated and labelled from the workload's start.
    relative: bool,
    /// Interval ends in milliseconds since the epoch (or since the
    /// workload's start, when `relative`).
    columns_ms: Vec<u64>,
    /// Interval ends as `YYYY-MM-DD HH:MM` (UTC), or `t+H:MM` when `relative`.
    columns: Vec<String>,
    /// Interval starts, labelled the same way.
    starts: Vec<String>,
    rows: Vec<Row<'a>>,
    end_label: &'a str,
    metrics: Vec<MetricData>,
    /// Per cell (`column * rows + row`): the node, or -1 without load.
    nodes: Vec<i64>,
    /// `[cell, [node, ...]]`: the nodes holding a replica of the cell's
    /// split, for the cells that have them (a cluster's).
    replicas: Vec<(usize, &'a [u32])>,
    /// `[cell, [reason, ...]]` for the cells with unsplittable reasons.
    reasons: Vec<(usize, Vec<&'static str>)>,
    hot: Vec<Hot<'a>>,
}

#[derive(Serialize)]
struct Row<'a> {
    start: String,
    label: &'a str,
    id: &'a str,
    object: &'a str,
}

#[derive(Serialize)]
struct MetricData {
    id: &'static str,
    name: &'static str,
    max: f64,
    /// Per cell (`column * rows + row`), 4 significant digits.
    values: Vec<f64>,
}

#[derive(Serialize)]
struct Hot<'a> {
    start: String,
    start_label: &'a str,
    limit_label: &'a str,
    max_cpu_score: f64,
    peak_interval_end: String,
    last_interval_end: String,
    intervals: usize,
    node: u32,
    replicas: &'a [u32],
    reasons: Vec<&'static str>,
}

/// Hot splits listed before the rest are folded into a `<details>`.
const HOT_SHOWN: usize = 20;

/// `v` rounded to 4 significant digits (keeps the page small; exact enough
/// for colours and tooltips).
fn round4(v: f64) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return 0.0;
    }
    let k = 3 - v.abs().log10().floor() as i32;
    if k >= 0 {
        let p = 10f64.powi(k.min(300));
        (v * p).round() / p
    } else {
        let p = 10f64.powi(-k);
        (v / p).round() * p
    }
}

fn data(h: &Heatmap) -> Data<'_> {
    Data {
        title: &h.title,
        granularity: granularity_name(h.granularity),
        interval_ns: h.granularity.nanos(),
        relative: h.origin.is_some(),
        columns_ms: h
            .columns
            .iter()
            .map(|c| c.saturating_sub(h.origin.unwrap_or(0)) / 1_000_000)
            .collect(),
        columns: h.columns.iter().map(|c| h.time_label(*c)).collect(),
        starts: h
            .columns
            .iter()
            .map(|c| h.time_label(c.saturating_sub(h.granularity.nanos())))
            .collect(),
        rows: h
            .rows
            .iter()
            .map(|r| Row {
                start: hex(&r.start),
                label: &r.label,
                id: &r.id,
                object: &r.object,
            })
            .collect(),
        end_label: &h.end_label,
        metrics: Metric::ALL
            .into_iter()
            .map(|m| MetricData {
                id: m.id(),
                name: m.name(),
                max: round4(h.max(m)),
                values: h
                    .values
                    .get(&m)
                    .map(|v| v.iter().map(|x| round4(*x)).collect())
                    .unwrap_or_default(),
            })
            .collect(),
        nodes: h
            .nodes
            .iter()
            .map(|n| n.map(i64::from).unwrap_or(-1))
            .collect(),
        replicas: h
            .replicas
            .iter()
            .enumerate()
            .filter(|(_, r)| !r.is_empty())
            .map(|(i, r)| (i, r.as_slice()))
            .collect(),
        reasons: h
            .reasons
            .iter()
            .enumerate()
            .filter(|(_, r)| !r.is_empty())
            .map(|(i, r)| (i, r.iter().map(|x| x.as_str()).collect()))
            .collect(),
        hot: h
            .hot
            .iter()
            .map(|s| Hot {
                start: hex(&s.start),
                start_label: &s.start_label,
                limit_label: &s.limit_label,
                max_cpu_score: round4(s.max_cpu_score),
                peak_interval_end: h.time_label(s.peak_interval_end),
                last_interval_end: h.time_label(s.last_interval_end),
                intervals: s.intervals,
                node: s.node,
                replicas: &s.replicas,
                reasons: s.reasons.iter().map(|x| x.as_str()).collect(),
            })
            .collect(),
    }
}

/// The heatmap as JSON (what the page embeds; served as `data.json`).
/// Cells are indexed `column * rows + row`; values have 4 significant digits.
pub fn render_json(h: &Heatmap) -> String {
    serde_json::to_string(&data(h)).expect("heatmap data serialises")
}

/// Escapes text for HTML element content and quoted attribute values.
pub fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters other than whitespace have no business in a label.
            c if c.is_control() && !matches!(c, '\n' | '\t') => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// JSON made safe inside `<script>`: `<`, `>` and `&` (which JSON only has
/// inside strings) become `\u` escapes, so no label can close the element.
fn script_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// The key visualizer page: one self-contained HTML document (inline CSS
/// and JavaScript; a Content-Security-Policy forbids fetching anything), so
/// it works offline and when opened from disk. Labels are user data and are
/// escaped (HTML) or embedded as JSON and drawn as text, never as markup.
pub fn render_html(input: &Heatmap) -> String {
    let h = input;
    let title = escape_html(&h.title);
    let mut out = String::with_capacity(64 * 1024);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n",
    );
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(out, "<title>{title}</title>");
    let _ = writeln!(out, "<style>{CSS}</style>\n</head>\n<body>");
    let _ = writeln!(out, "<header><h1>{title}</h1>");
    let zone = if h.origin.is_some() {
        " of simulated time"
    } else {
        " UTC"
    };
    let span = if h.columns.is_empty() {
        "no intervals yet".to_string()
    } else {
        format!(
            "{} to {}{zone}",
            h.time_label(h.columns[0].saturating_sub(h.granularity.nanos())),
            h.time_label(h.columns[h.columns.len() - 1])
        )
    };
    let _ = writeln!(
        out,
        "<p class=\"sub\">{} intervals of one {} ({}) &middot; {} key buckets</p></header>",
        h.columns.len(),
        escape_html(granularity_name(h.granularity)),
        escape_html(&span),
        h.rows.len()
    );
    out.push_str("<div class=\"controls\">\n<label>Metric <select id=\"metric\">");
    for m in Metric::ALL {
        let _ = write!(out, "<option value=\"{}\">{}</option>", m.id(), m.name());
    }
    out.push_str("</select></label>\n");
    out.push_str(
        "<label>Scale <select id=\"scale\"><option value=\"linear\">linear</option>\
         <option value=\"sqrt\">square root</option><option value=\"log\">logarithmic</option>\
         </select></label>\n",
    );
    out.push_str(
        "<span class=\"legend\"><span id=\"legend-min\">0</span><canvas id=\"legend\" \
         width=\"240\" height=\"12\"></canvas><span id=\"legend-max\"></span></span>\n</div>\n",
    );
    out.push_str(
        "<p class=\"note\">Each row is a key bucket; each cell is the metric of the load that \
         fell in the bucket in that interval (a split's load is divided among the key ranges \
         its sampled keys fell in). Colours are relative to the hottest cell of the whole \
         database: dark is idle, bright is hot. A bright diagonal means sequential keys, an \
         even field well-spread keys. Link to rows with <code>#table-NAME</code>, \
         <code>#row-NAME-N</code> or <code>#key-HEX</code>.</p>\n",
    );
    if h.is_empty() {
        out.push_str(
            "<p id=\"empty\" class=\"empty\">No load history yet: the database records one \
             interval per minute while it serves requests.</p>\n",
        );
    }
    out.push_str("<div id=\"wrap\"><canvas id=\"map\" width=\"1\" height=\"1\"></canvas>");
    out.push_str("<div id=\"tip\" role=\"tooltip\"></div></div>\n");

    if !h.advice.is_empty() {
        out.push_str(
            "<h2>Schema advice</h2>\n<table id=\"advice\"><thead><tr><th>Severity</th>\
             <th>Rule</th><th>Rows</th><th>Why</th></tr></thead><tbody>\n",
        );
        for a in &h.advice {
            let _ = writeln!(
                out,
                "<tr class=\"{}\"><td>{}</td><td><code>{}</code></td>\
                 <td><a href=\"#table-{}\">{}</a></td><td>{}</td></tr>",
                escape_html(&a.severity),
                escape_html(&a.severity),
                escape_html(&a.rule),
                escape_html(&a.object),
                escape_html(&a.object),
                escape_html(&a.message)
            );
        }
        out.push_str("</tbody></table>\n");
    }
    out.push_str("<h2>Hot and unsplittable splits</h2>\n");
    if h.hot.is_empty() {
        let _ = writeln!(
            out,
            "<p id=\"no-hot\">None: no split reached a CPU score of {} or was reported \
             unsplittable.</p>",
            crate::HOT_SCORE
        );
    } else {
        out.push_str(
            "<table id=\"hot\"><thead><tr><th>Key range</th><th>Peak CPU score</th>\
             <th>Peak interval end",
        );
        out.push_str(if h.origin.is_some() { "" } else { " (UTC)" });
        out.push_str(
            "</th><th>Intervals</th><th>Last node</th><th>Replicas</th>\
             <th>Unsplittable reasons</th></tr></thead><tbody>\n",
        );
        for (i, s) in h.hot.iter().enumerate() {
            if i == HOT_SHOWN {
                // The rest folded away, so the heatmap stays in view.
                let _ = write!(
                    out,
                    "</tbody></table>\n<details><summary>{} more</summary>\n\
                     <table class=\"more\"><tbody>\n",
                    h.hot.len() - HOT_SHOWN
                );
            }
            let reasons: Vec<&str> = s.reasons.iter().map(|r| r.as_str()).collect();
            let class = if s.max_cpu_score >= 100.0 {
                "hot"
            } else if s.max_cpu_score >= crate::HOT_SCORE {
                "warm"
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "<tr class=\"{class}\"><td><a href=\"#key-{}\"><code>{}</code> &hellip; \
                 <code>{}</code></a></td>\
                 <td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td><td>node-{}</td>\
                 <td>{}</td><td>{}</td></tr>",
                hex(&s.start),
                escape_html(&s.start_label),
                escape_html(&s.limit_label),
                format_value(s.max_cpu_score),
                escape_html(&h.time_label(s.peak_interval_end)),
                s.intervals,
                s.node,
                if s.replicas.is_empty() {
                    "&mdash;".to_string()
                } else {
                    s.replicas
                        .iter()
                        .map(|n| format!("node-{n}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                },
                if reasons.is_empty() {
                    "&mdash;".to_string()
                } else {
                    escape_html(&reasons.join(", "))
                }
            );
        }
        out.push_str("</tbody></table>\n");
        if h.hot.len() > HOT_SHOWN {
            out.push_str("</details>\n");
        }
    }
    let _ = writeln!(
        out,
        "<script type=\"application/json\" id=\"keyviz-data\">{}</script>",
        script_json(&render_json(h))
    );
    let _ = writeln!(out, "<script>{JS}</script>\n</body>\n</html>");
    out
}

const CSS: &str = r##"
:root { color-scheme: dark; }
body { margin: 0; padding: 16px 20px; background: #15171c; color: #d8dbe2;
  font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
h1 { font-size: 20px; margin: 0 0 2px; font-weight: 600; }
h2 { font-size: 16px; margin: 22px 0 8px; font-weight: 600; }
.sub, .note { color: #9aa1ad; margin: 2px 0 10px; }
.note { max-width: 1100px; font-size: 12px; }
.controls { display: flex; gap: 18px; align-items: center; flex-wrap: wrap; margin: 8px 0; }
select { background: #22252c; color: #e6e8ec; border: 1px solid #3a3f4a; border-radius: 4px; padding: 3px 6px; }
.legend { display: inline-flex; gap: 6px; align-items: center; font-size: 12px; color: #b7bcc6; }
#legend { border: 1px solid #3a3f4a; }
#wrap { position: relative; display: inline-block; }
#map { display: block; cursor: crosshair; }
#tip { position: absolute; display: none; pointer-events: none; background: #0d0f13ee;
  border: 1px solid #4a505c; border-radius: 4px; padding: 6px 8px; font-size: 12px;
  white-space: nowrap; z-index: 2; box-shadow: 0 2px 8px #0008; }
#tip div.k { color: #9aa1ad; }
.empty { color: #e0b050; }
table { border-collapse: collapse; font-size: 13px; }
th, td { border-bottom: 1px solid #2c3038; padding: 4px 10px; text-align: left; vertical-align: top; }
th { color: #9aa1ad; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.hot td:nth-child(2) { color: #ff8a5c; font-weight: 600; }
tr.warm td:nth-child(2) { color: #f0c060; }
tr.error td:first-child { color: #ff8a5c; font-weight: 600; }
tr.warning td:first-child { color: #f0c060; }
details summary { cursor: pointer; color: #9aa1ad; margin: 6px 0; }
code { font: 12px ui-monospace, SFMono-Regular, Menlo, monospace; color: #e6e8ec; }
"##;

const JS: &str = r##"
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("keyviz-data").textContent);
  var nRows = data.rows.length, nCols = data.columns.length;
  var STOPS = [
    [0.0, [14, 17, 34]], [0.15, [40, 30, 100]], [0.35, [110, 30, 130]],
    [0.55, [200, 45, 90]], [0.75, [245, 120, 40]], [0.9, [252, 205, 70]], [1.0, [255, 255, 225]]
  ];
  function colour(t) {
    if (!(t > 0)) { return STOPS[0][1]; }
    if (t >= 1) { return STOPS[STOPS.length - 1][1]; }
    for (var i = 1; i < STOPS.length; i++) {
      if (t <= STOPS[i][0]) {
        var a = STOPS[i - 1], b = STOPS[i], f = (t - a[0]) / (b[0] - a[0]);
        return [0, 1, 2].map(function (k) { return Math.round(a[1][k] + (b[1][k] - a[1][k]) * f); });
      }
    }
    return STOPS[STOPS.length - 1][1];
  }
  var reasons = {};
  data.reasons.forEach(function (p) { reasons[p[0]] = p[1]; });
  var replicas = {};
  data.replicas.forEach(function (p) { replicas[p[0]] = p[1]; });
  var metricSel = document.getElementById("metric");
  var scaleSel = document.getElementById("scale");
  var canvas = document.getElementById("map");
  var tip = document.getElementById("tip");
  // Room for the row labels: up to LABEL characters of 11px monospace.
  var LABEL = 0;
  data.rows.forEach(function (r) { LABEL = Math.max(LABEL, r.label.length); });
  LABEL = Math.max(16, Math.min(64, LABEL));
  var LEFT = Math.ceil(LABEL * 6.7) + 12, TOP = 8, BOTTOM = 58, RIGHT = 16;
  var cw = nCols ? Math.max(2, Math.min(28, Math.floor(1000 / nCols))) : 0;
  var rh = nRows ? Math.max(1, Math.min(20, Math.floor(720 / nRows))) : 0;
  var AW = cw * nCols, AH = rh * nRows;
  var BG = "#15171c";
  canvas.width = LEFT + Math.max(AW, 220) + RIGHT;
  canvas.height = nRows && nCols ? TOP + AH + BOTTOM : 1;

  function metric() { return data.metrics[Math.max(0, metricSel.selectedIndex)]; }
  function norm(v, max) {
    if (!(max > 0) || !(v > 0)) { return 0; }
    var s = scaleSel.value;
    if (s === "sqrt") { return Math.sqrt(v / max); }
    if (s === "log") { return Math.log1p(v) / Math.log1p(max); }
    return v / max;
  }
  function fmt(v) {
    if (!isFinite(v)) { return "0"; }
    if (v === Math.round(v) && Math.abs(v) < 1e15) { return String(v); }
    var a = Math.abs(v);
    return v.toFixed(a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3);
  }
  // Long labels lose their middle: the table and the end of the key stay.
  function short(s, n) {
    if (s.length <= n) { return s; }
    var tail = Math.floor(n / 3);
    return s.slice(0, n - tail - 1) + "\u2026" + s.slice(s.length - tail);
  }

  function drawLegend(m) {
    var lc = document.getElementById("legend");
    var lx = lc.getContext("2d");
    for (var x = 0; x < lc.width; x++) {
      var c = colour(x / (lc.width - 1));
      lx.fillStyle = "rgb(" + c[0] + "," + c[1] + "," + c[2] + ")";
      lx.fillRect(x, 0, 1, lc.height);
    }
    document.getElementById("legend-max").textContent =
      fmt(m.max) + " (" + m.name.toLowerCase() + ", hottest cell; " + scaleSel.value + " scale)";
  }

  function draw() {
    var m = metric();
    drawLegend(m);
    if (!nRows || !nCols) { return; }
    var ctx = canvas.getContext("2d");
    ctx.fillStyle = BG;
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    var img = ctx.createImageData(AW, AH);
    var px = img.data;
    for (var c = 0; c < nCols; c++) {
      for (var r = 0; r < nRows; r++) {
        var rgb = colour(norm(m.values[c * nRows + r], m.max));
        for (var y = r * rh; y < (r + 1) * rh; y++) {
          var o = (y * AW + c * cw) * 4;
          for (var x = 0; x < cw; x++, o += 4) {
            px[o] = rgb[0]; px[o + 1] = rgb[1]; px[o + 2] = rgb[2]; px[o + 3] = 255;
          }
        }
      }
    }
    ctx.putImageData(img, LEFT, TOP);
    // Key range labels (as many as fit).
    ctx.fillStyle = "#c3c8d1";
    ctx.font = "11px ui-monospace, Menlo, monospace";
    ctx.textAlign = "right";
    ctx.textBaseline = "middle";
    var every = Math.max(1, Math.ceil(13 / rh));
    for (var i = 0; i < nRows; i += every) {
      ctx.fillText(short(data.rows[i].label, LABEL), LEFT - 6, TOP + i * rh + Math.min(rh, 13) / 2);
    }
    // Time labels (interval ends).
    ctx.textAlign = "center";
    ctx.textBaseline = "top";
    ctx.font = "11px system-ui, sans-serif";
    var everyC = Math.max(1, Math.ceil(84 / cw));
    var lastDay = "";
    for (var k = 0; k < nCols; k += everyC) {
      var x0 = LEFT + k * cw + cw / 2, label = data.columns[k];
      ctx.fillStyle = "#5a606c";
      ctx.fillRect(Math.round(x0), TOP + AH, 1, 4);
      ctx.fillStyle = "#c3c8d1";
      if (data.relative) {
        ctx.fillText(label, x0, TOP + AH + 6);
      } else {
        ctx.fillText(label.slice(11), x0, TOP + AH + 6);
        var day = label.slice(0, 10);
        if (day !== lastDay) { ctx.fillText(day, x0, TOP + AH + 20); lastDay = day; }
      }
    }
    ctx.fillStyle = "#9aa1ad";
    ctx.textAlign = "left";
    ctx.fillText(data.relative ? "interval end (time since the workload started)" : "interval end (UTC)",
      LEFT, TOP + AH + 38);
    // Rows named by the URL fragment: a bracket left of the map, a frame across it.
    if (marked.length) {
      ctx.strokeStyle = "#5ad1ff";
      ctx.fillStyle = "#5ad1ff";
      ctx.lineWidth = 1;
      marked.forEach(function (g) {
        var y0 = TOP + g[0] * rh, h = Math.max(2, (g[1] - g[0]) * rh);
        ctx.fillRect(LEFT - 4, y0, 3, h);
        ctx.strokeRect(LEFT + 0.5, y0 + 0.5, AW - 1, h - 1);
      });
    }
  }

  // The rows the URL fragment names (see the module docs of rowtree-keyviz):
  // #row-<object>-<n>, #table-<object>, #key-<hex>. Runs of rows as [from, to).
  var marked = [];
  function rowsOfHash() {
    var hash = decodeURIComponent(location.hash.replace(/^#/, "")), rows = [];
    var i;
    if (hash.indexOf("row-") === 0) {
      for (i = 0; i < nRows; i++) { if (data.rows[i].id === hash) { rows.push(i); } }
    } else if (hash.indexOf("table-") === 0) {
      var object = hash.slice(6);
      for (i = 0; i < nRows; i++) { if (data.rows[i].object === object) { rows.push(i); } }
    } else if (hash.indexOf("key-") === 0) {
      var key = hash.slice(4).toLowerCase(), at = -1;
      for (i = 0; i < nRows; i++) { if (data.rows[i].start <= key) { at = i; } }
      if (at >= 0) { rows.push(at); }
    }
    var runs = [];
    rows.forEach(function (r) {
      var last = runs[runs.length - 1];
      if (last && last[1] === r) { last[1] = r + 1; } else { runs.push([r, r + 1]); }
    });
    return runs;
  }
  function follow() {
    marked = rowsOfHash();
    draw();
    if (marked.length) {
      var rect = canvas.getBoundingClientRect();
      window.scrollTo(0, Math.max(0, rect.top + window.scrollY + TOP + marked[0][0] * rh - 120));
    }
  }

  function line(text, cls) {
    var d = document.createElement("div");
    if (cls) { d.className = cls; }
    d.textContent = text;
    tip.appendChild(d);
  }
  function hover(ev) {
    var rect = canvas.getBoundingClientRect();
    var x = (ev.clientX - rect.left) * canvas.width / rect.width;
    var y = (ev.clientY - rect.top) * canvas.height / rect.height;
    var c = Math.floor((x - LEFT) / cw), r = Math.floor((y - TOP) / rh);
    if (!nRows || !nCols || x < LEFT || y < TOP || c < 0 || r < 0 || c >= nCols || r >= nRows) {
      tip.style.display = "none";
      return;
    }
    var m = metric(), cell = c * nRows + r, v = m.values[cell];
    while (tip.firstChild) { tip.removeChild(tip.firstChild); }
    line(data.starts[c] + " \u2013 " + data.columns[c] + (data.relative ? "" : " UTC"), "k");
    var end = r + 1 < nRows ? data.rows[r + 1].label : data.end_label;
    line("Key range: " + data.rows[r].label + " \u2026 " + end);
    line("Row: #" + data.rows[r].id, "k");
    line(m.name + ": " + fmt(v) + " per row" + (m.max > 0 ? " (" + fmt(100 * v / m.max) + "% of the hottest cell)" : ""));
    var node = data.nodes[cell];
    line(node >= 0 ? "Node: node-" + node : "Node: \u2014 (no load)");
    if (replicas[cell]) { line("Replicas: " + replicas[cell].map(function (n) { return "node-" + n; }).join(", ")); }
    if (reasons[cell]) { line("Unsplittable: " + reasons[cell].join(", ")); }
    tip.style.display = "block";
    var wrap = canvas.parentNode.getBoundingClientRect();
    var left = ev.clientX - wrap.left + 14, top = ev.clientY - wrap.top + 14;
    if (left + tip.offsetWidth > wrap.width) { left = Math.max(0, ev.clientX - wrap.left - tip.offsetWidth - 14); }
    tip.style.left = left + "px";
    tip.style.top = top + "px";
  }

  canvas.addEventListener("mousemove", hover);
  canvas.addEventListener("mouseleave", function () { tip.style.display = "none"; });
  metricSel.addEventListener("change", draw);
  scaleSel.addEventListener("change", draw);
  window.addEventListener("hashchange", follow);
  follow();
  window.keyviz = {
    ready: true,
    rows: nRows,
    columns: nCols,
    area: { x: LEFT, y: TOP, width: AW, height: AH },
    background: colour(0),
    marked: function () { return marked; },
    redraw: draw
  };
})();
"##;
