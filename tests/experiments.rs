//! Experiments a paper can print: linked and labelled sweep axes, common
//! random numbers (two policies see the same arrivals), one style per value
//! across a sweep's charts, axes that start where the data does, text that
//! stays inside the image, and PNG and SVG drawing the same thing for every
//! chart of the sweeps in scenarios/.

use crate::common::{repo, temp_dir};
use crate::sweep::{csmacd, write_file};
use csmacd::ethernet::{self, MacEvent, Observer};
use csmacd::output::chart::{self, ChartSpec, Context, Figure, Table};
use csmacd::output::style;
use std::collections::BTreeMap;
use std::path::Path;

/// A bus sweep over two policies (one labelled) and two station counts.
const POLICIES: &str = r#"
name = "policies"
seed = 3
duration = "60ms"
warmup = "5ms"
replications = 2

[[stations]]
count = 4
traffic = { kind = "poisson", load = 0.5 }
frame = "512B"

[sweep]
"stations.0.backoff" = [{ label = "BEB-6", value = { kind = "beb", backoff_limit = 6 } }, { kind = "beb" }, { kind = "fixed", window = 4 }]
"stations.0.count" = [4, 8]

[[chart]]
name = "by-policy-and-count"
x = "offered_load"
y = "throughput"
series = ["stations.0.backoff", "stations.0.count"]

[[chart]]
name = "by-count"
x = "stations.0.count"
y = "collisions_per_delivered"
series = ["stations.0.backoff"]
"#;

/// Each series' colour in a chart's points CSV, by series label.
fn colours(csv: &Path) -> BTreeMap<String, String> {
    let t = Table::from_csv(&std::fs::read(csv).unwrap()).unwrap();
    let (s, c) = (t.column("series").unwrap(), t.column("color").unwrap());
    t.rows
        .iter()
        .map(|r| (r[s].clone(), r[c].clone()))
        .collect()
}

/// Labels name values in the CSV, the legends and the seeds stay those of
/// the values; a table value without a label gets a short one; each value
/// keeps its colour on two charts whose series differ.
#[test]
fn labelled_values_name_the_csv_and_legends_and_keep_their_colour() {
    let dir = temp_dir("labelled");
    let text = POLICIES;
    let f = write_file(&dir, "policies.toml", text);
    let out = dir.join("out");
    let r = csmacd(&["sweep", f.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let summary = Table::from_csv(&std::fs::read(out.join("summary.csv")).unwrap()).unwrap();
    let col = summary.column("stations.0.backoff").unwrap();
    let mut shown: Vec<&str> = summary.rows.iter().map(|r| r[col].as_str()).collect();
    shown.dedup();
    assert_eq!(shown, ["BEB-6", "beb", "fixed"]);
    for name in ["by-policy-and-count", "by-count"] {
        let svg = std::fs::read_to_string(out.join(format!("charts/{name}.svg"))).unwrap();
        assert!(svg.contains("BEB-6"), "{name}: no label in the legend");
        assert!(!svg.contains("kind ="), "{name}: a value written as TOML");
    }
    // One colour per policy on both charts, whatever the other series.
    let two = colours(&out.join("charts/by-policy-and-count.csv"));
    let one = colours(&out.join("charts/by-count.csv"));
    assert_eq!(one.len(), 3);
    for (label, colour) in &two {
        let policy = label.split(", ").next().unwrap();
        assert_eq!(&one[policy], colour, "{label} against {policy}");
    }
    let distinct: std::collections::BTreeSet<&String> = one.values().collect();
    assert_eq!(distinct.len(), 3, "three policies, three colours: {one:?}");
    // The station count takes the marker and dash: N=4 and N=8 of one
    // policy share the colour and differ in marker.
    let t = Table::from_csv(&std::fs::read(out.join("charts/by-policy-and-count.csv")).unwrap())
        .unwrap();
    let (s, m) = (t.column("series").unwrap(), t.column("marker").unwrap());
    let marker = |l: &str| {
        t.rows
            .iter()
            .find(|r| r[s] == l)
            .map(|r| r[m].trim_end_matches("-hollow").to_string())
            .unwrap()
    };
    assert_ne!(marker("BEB-6, N=4"), marker("BEB-6, N=8"));
    assert_eq!(marker("BEB-6, N=4"), marker("fixed, N=4"));

    // A label changes no seed: the labelled value's points run as the bare one.
    let bare = text.replace(
        "{ label = \"BEB-6\", value = { kind = \"beb\", backoff_limit = 6 } }",
        "{ kind = \"beb\", backoff_limit = 6 }",
    );
    let a = csmacd::sweep::from_str("a.toml", "a", text, None).unwrap();
    let b = csmacd::sweep::from_str("b.toml", "b", &bare, None).unwrap();
    let seeds = |p: &csmacd::sweep::Plan| p.points.iter().map(|p| p.seed).collect::<Vec<_>>();
    assert_eq!(seeds(&a), seeds(&b));
    assert_eq!(b.axes[0].labels, ["beb backoff_limit=6", "beb", "fixed"]);
}

/// A linked axis moves its paths together and names its points by `values`.
#[test]
fn a_linked_axis_counts_its_points_and_shows_its_values() {
    let text = r#"
name = "mixed bus"
duration = "20ms"
[[stations]]
count = 2
traffic = { kind = "poisson", load = 0.1 }
frame = "512B"
[[stations]]
count = 2
traffic = { kind = "poisson", load = 0.1 }
frame = "512B"
[sweep]
"stations.0.count" = [2, 4]
[sweep.linked.total_load]
"stations.0.traffic.load" = [0.1, 0.3, 0.5]
"stations.1.traffic.load" = [0.1, 0.3, 0.5]
values = [{ label = "light", value = 0.2 }, 0.6, 1.0]
"#;
    let plan = csmacd::sweep::from_str("t.toml", "t", text, None).unwrap();
    assert_eq!(plan.points.len(), 6);
    assert_eq!(plan.axes[1].labels, ["light", "0.6", "1"]);
    let shown: Vec<&str> = plan.points.iter().map(|p| p.axes[1].1.as_str()).collect();
    assert_eq!(shown, ["light", "0.6", "1", "light", "0.6", "1"]);
    let bad = text.replace(
        "values = [{ label = \"light\", value = 0.2 }, 0.6, 1.0]",
        "values = [0.2, 0.6]",
    );
    let e = csmacd::sweep::from_str("t.toml", "t", &bad, None).unwrap_err();
    assert!(e.to_string().contains("has 2 values where"), "{e}");
}

/// Arrival times and sizes per station, as the trace reports them.
#[derive(Default)]
struct Arrivals(Vec<(u64, u32, u32)>, usize);

impl Observer for Arrivals {
    fn on(&mut self, t: u64, station: u32, ev: &MacEvent) {
        match ev {
            MacEvent::Arrival { bytes, .. } => self.0.push((t, station, *bytes)),
            MacEvent::Backoff { .. } => self.1 += 1,
            _ => {}
        }
    }
}

/// With common random numbers, two policies' points run replication r on
/// one seed: the same arrivals (times, stations, sizes) and the same
/// offered load, while their backoffs differ. Without, they differ.
#[test]
fn common_random_numbers_give_two_policies_the_same_arrivals() {
    let text = |crn: bool| {
        let body = POLICIES.split("[[chart]]").next().unwrap();
        format!(
            "common_random_numbers = {crn}\n{}",
            body.replace("\"stations.0.count\" = [4, 8]", "")
        )
    };
    let plan = csmacd::sweep::from_str("c.toml", "c", &text(true), None).unwrap();
    assert!(plan.common_random_numbers);
    let (a, b) = (&plan.points[1], &plan.points[2]);
    assert_eq!(a.replication_seeds(), b.replication_seeds());
    let trace = |p: &csmacd::sweep::Point, r: usize| {
        let sc = p.scenario.ethernet().unwrap();
        let mut seen = Arrivals::default();
        let res = ethernet::run_observed(sc, p.replication_seeds()[r], &mut seen);
        (seen, res.metrics.get("offered_load"))
    };
    for r in 0..2 {
        let ((ta, la), (tb, lb)) = (trace(a, r), trace(b, r));
        assert!(ta.0.len() > 50, "{} arrivals", ta.0.len());
        assert_eq!(ta.0, tb.0, "replication {r}: arrivals differ");
        assert_eq!(la, lb);
        assert_ne!(ta.1, tb.1, "the policies back off alike");
    }
    let apart = csmacd::sweep::from_str("c.toml", "c", &text(false), None).unwrap();
    let (a, b) = (&apart.points[1], &apart.points[2]);
    assert_ne!(a.replication_seeds(), b.replication_seeds());
    assert_ne!(trace(a, 0).0 .0, trace(b, 0).0 .0);
}

/// A fraction that is zero everywhere is drawn on an axis from 0 up, never
/// one reaching below 0.
#[test]
fn an_all_zero_fraction_starts_at_zero() {
    let t = Table::from_csv(b"x,drop_fraction\n1,0\n2,0\n3,0\n").unwrap();
    let spec = ChartSpec {
        x: "x".into(),
        y: "drop_fraction".into(),
        ..Default::default()
    };
    let f = chart::build_figure(&t, &t, &spec, &Context::default()).unwrap();
    let svg = chart::render_svg_with(&f.chart, &f.styles, &f.options).unwrap();
    let ticks: Vec<f64> = texts(&svg)
        .iter()
        .filter(|t| t.anchor == "end")
        .filter_map(|t| t.content.parse().ok())
        .collect();
    assert!(ticks.contains(&0.0), "{ticks:?}");
    assert!(ticks.iter().all(|v| *v >= 0.0), "{ticks:?}");
    assert!(ticks.iter().any(|v| *v > 0.0), "{ticks:?}");
}

/// A text element of an SVG: where, how big, anchored how, and its text.
struct Text {
    x: f64,
    y: f64,
    size: f64,
    anchor: String,
    dy: String,
    rotated: bool,
    content: String,
}

fn texts(svg: &str) -> Vec<Text> {
    let attr = |tag: &str, name: &str| -> Option<String> {
        let key = format!(" {name}=\"");
        let start = tag.find(&key)? + key.len();
        let end = start + tag[start..].find('"')?;
        Some(tag[start..end].to_string())
    };
    svg.split("<text")
        .skip(1)
        .filter_map(|chunk| {
            let (tag, rest) = chunk.split_once('>')?;
            let content = rest.split("</text>").next()?.trim();
            let content = content
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&quot;", "\"")
                .replace("&amp;", "&");
            Some(Text {
                x: attr(tag, "x")?.parse().ok()?,
                y: attr(tag, "y")?.parse().ok()?,
                size: attr(tag, "font-size")?.parse().ok()?,
                anchor: attr(tag, "text-anchor").unwrap_or_else(|| "start".into()),
                dy: attr(tag, "dy").unwrap_or_default(),
                rotated: tag.contains("rotate("),
                content,
            })
        })
        .collect()
}

/// Every text element of an SVG lies inside the image (measured with the
/// font the charts embed): no label, legend entry or caption is cut.
fn assert_texts_inside(svg: &str, (w, h): (u32, u32), what: &str) {
    for t in texts(svg) {
        let len = style::text_width(&t.content, t.size);
        let (along_lo, along_hi) = match t.anchor.as_str() {
            "middle" => (-len / 2.0, len / 2.0),
            "end" => (-len, 0.0),
            _ => (0.0, len),
        };
        let (across_lo, across_hi) = match t.dy.as_str() {
            "0.76em" => (0.0, t.size),
            "0.5ex" => (-t.size / 2.0, t.size / 2.0),
            _ => (-t.size, 0.0),
        };
        // Rotated a quarter turn: the text runs up from its anchor.
        let (x0, x1, y0, y1) = if t.rotated {
            (
                t.x + across_lo,
                t.x + across_hi,
                t.y - along_hi,
                t.y - along_lo,
            )
        } else {
            (
                t.x + along_lo,
                t.x + along_hi,
                t.y + across_lo,
                t.y + across_hi,
            )
        };
        let slack = 1.0;
        assert!(
            x0 >= -slack && x1 <= w as f64 + slack && y0 >= -slack && y1 <= h as f64 + slack,
            "{what}: \"{}\" spans x {x0:.0}..{x1:.0}, y {y0:.0}..{y1:.0} in {w}x{h}",
            t.content
        );
    }
}

/// A small deterministic generator for synthetic data.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A value of `column` as a run might give it: fractions in [0, 1],
/// delays spanning decades, counts in the thousands.
fn synthetic(column: &str, g: &mut Lcg) -> f64 {
    let u = g.next();
    match chart::domain(column) {
        (0.0, 1.0) => u,
        (0.0, _) if column.contains("delay") || column.ends_with("_us") => {
            10f64.powf(2.0 + 4.0 * u)
        }
        (0.0, _) => (2e4 * u * u).round(),
        _ => u * 10.0 - 5.0,
    }
}

/// The table a chart of `plan` draws from, filled with synthetic values:
/// summary.csv (means and intervals), groups.csv (two groups, two
/// replications) or a table per bin (120 bins of a noisy series with
/// sharp turns, as a queue after a surge).
fn synthetic_table(plan: &csmacd::sweep::Plan, spec: &ChartSpec, g: &mut Lcg) -> Table {
    let columns = plan.points[0].scenario.columns();
    let axes: Vec<String> = plan.axes.iter().map(|a| a.column.clone()).collect();
    let mut header = axes.clone();
    let mut rows = Vec::new();
    let lead = |p: &csmacd::sweep::Point| -> Vec<String> {
        p.axes.iter().map(|(_, v)| v.clone()).collect()
    };
    if let Some(name) = spec
        .table
        .as_deref()
        .or(spec.per_group().then_some("groups"))
    {
        let cols = columns
            .tables
            .iter()
            .find(|t| t.name == name)
            .unwrap()
            .columns;
        header.push("replication".into());
        header.extend(cols.iter().map(|c| c.to_string()));
        for p in &plan.points {
            for r in 0..2 {
                let n = if name == "groups" { 2 } else { 120 };
                let mut level = 0.0f64;
                for i in 0..n {
                    let mut row = lead(p);
                    row.push(r.to_string());
                    for c in cols.iter() {
                        row.push(match *c {
                            "group" => ["a", "b"][i % 2].to_string(),
                            "policy" => "beb".into(),
                            "t_s" => format!("{}", i as f64 + 0.5),
                            _ if name != "groups" => {
                                // A random walk that now and then jumps
                                // and falls straight back.
                                level = (level + 200.0 * (g.next() - 0.45)).max(0.0);
                                let spike = if g.next() < 0.05 { 3000.0 } else { 0.0 };
                                format!("{}", (level + spike).round())
                            }
                            c => format!("{}", synthetic(c, g)),
                        });
                    }
                    rows.push(row);
                }
            }
        }
    } else {
        header.push("replications".into());
        for m in columns.metrics {
            header.push(m.to_string());
            header.push(format!("{m}_ci95"));
        }
        for p in &plan.points {
            let mut row = lead(p);
            row.push("5".into());
            for m in columns.metrics {
                let v = synthetic(m, g);
                row.push(format!("{v}"));
                row.push(format!("{}", v.abs() * 0.1 * g.next()));
            }
            rows.push(row);
        }
    }
    Table { header, rows }
}

/// The bounding box of what is drawn in `colour`: in an SVG, the points of
/// its lines and polygons and its circles; in a PNG, its pixels.
type Bounds = Option<(f64, f64, f64, f64)>;

fn widen(b: Bounds, x: f64, y: f64) -> Bounds {
    Some(match b {
        None => (x, x, y, y),
        Some((a, c, d, e)) => (a.min(x), c.max(x), d.min(y), e.max(y)),
    })
}

fn svg_bounds(svg: &str, colour: &str) -> Bounds {
    let mut b = None;
    for line in svg.lines() {
        if !line.contains(&format!("=\"#{colour}\"")) {
            continue;
        }
        let num = |name: &str| -> Option<f64> {
            let key = format!(" {name}=\"");
            let s = line.find(&key)? + key.len();
            line[s..s + line[s..].find('"')?].parse().ok()
        };
        if let Some(pts) = line.split(" points=\"").nth(1) {
            for p in pts.split('"').next().unwrap().split_whitespace() {
                let (x, y) = p.split_once(',').unwrap();
                b = widen(b, x.parse().unwrap(), y.parse().unwrap());
            }
        } else if let (Some(x), Some(y), Some(r)) = (num("cx"), num("cy"), num("r")) {
            b = widen(b, x - r, y - r);
            b = widen(b, x + r, y + r);
        } else if let (Some(x), Some(y), Some(w), Some(h)) =
            (num("x"), num("y"), num("width"), num("height"))
        {
            b = widen(b, x, y);
            b = widen(b, x + w, y + h);
        }
    }
    b
}

fn png_bounds(png: &image::RgbImage, colour: [u8; 3]) -> Bounds {
    let mut b = None;
    for (x, y, p) in png.enumerate_pixels() {
        if p.0 == colour {
            b = widen(b, x as f64, y as f64);
        }
    }
    b
}

/// Every chart of every sweep in scenarios/, drawn from synthetic data of
/// its columns (noisy series with sharp turns included): its SVG keeps all
/// text inside the image, and its PNG draws each series colour within the
/// box the SVG draws it in (no spike past the data, no stroke below the
/// axis).
#[test]
fn every_scenario_chart_keeps_its_text_inside_and_draws_alike_as_png_and_svg() {
    let mut checked = 0;
    let mut g = Lcg(7);
    let mut files: Vec<_> = std::fs::read_dir(repo().join("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    for file in files {
        let plan = csmacd::sweep::load(&file, None).unwrap();
        if plan.axes.is_empty() {
            continue;
        }
        for spec in plan.chart_specs() {
            let table = synthetic_table(&plan, &spec, &mut g);
            let what = format!("{} {}", file.display(), spec.name.clone().unwrap());
            let f: Figure = match chart::build_figure(&table, &table, &spec, &Context::default()) {
                Ok(f) => f,
                Err(e) => panic!("{what}: {e}"),
            };
            check_figure(&f, &what);
            checked += 1;
        }
    }
    assert!(checked >= 30, "{checked} charts");
}

/// The height the plot takes: from the top of its first panel's frame to
/// the bottom of its last (each frame is drawn as one L of three points in
/// the ink colour).
fn plot_height(svg: &str) -> f64 {
    let mut b = None;
    for line in svg.lines().filter(|l| l.contains("stroke=\"#1E1E1E\"")) {
        let Some(pts) = line.split(" points=\"").nth(1) else {
            continue;
        };
        let pts: Vec<(f64, f64)> = pts
            .split('"')
            .next()
            .unwrap()
            .split_whitespace()
            .map(|p| {
                let (x, y) = p.split_once(',').unwrap();
                (x.parse().unwrap(), y.parse().unwrap())
            })
            .collect();
        if pts.len() == 3 && pts[0].0 == pts[1].0 && pts[1].1 == pts[2].1 {
            b = widen(b, pts[0].0, pts[0].1);
            b = widen(b, pts[2].0, pts[2].1);
        }
    }
    b.map_or(0.0, |(_, _, lo, hi)| hi - lo)
}

fn check_figure(f: &Figure, what: &str) {
    let svg = chart::render_svg_with(&f.chart, &f.styles, &f.options).unwrap();
    assert_texts_inside(&svg, f.chart.size, what);
    let h = f.chart.size.1 as f64;
    assert!(
        plot_height(&svg) >= h / 2.0 - 2.0,
        "{what}: the plot takes {:.0} of {h:.0} pixels",
        plot_height(&svg)
    );
    let png = chart::render_png_with(&f.chart, &f.styles, &f.options).unwrap();
    let png = image::load_from_memory(&png).unwrap().to_rgb8();
    for label in f.chart.labels() {
        let c = f.styles.get(&label).colour;
        let hex = format!("{:02X}{:02X}{:02X}", c.0, c.1, c.2);
        let (Some(s), Some(p)) = (svg_bounds(&svg, &hex), png_bounds(&png, [c.0, c.1, c.2])) else {
            continue;
        };
        // A line's half width and a pixel's rounding either side.
        let tol = 4.0;
        assert!(
            p.0 >= s.0 - tol && p.1 <= s.1 + tol && p.2 >= s.2 - tol && p.3 <= s.3 + tol,
            "{what}: {label}: the PNG draws over x {:.0}..{:.0}, y {:.0}..{:.0}; the SVG over x {:.0}..{:.0}, y {:.0}..{:.0}",
            p.0, p.1, p.2, p.3, s.0, s.1, s.2, s.3
        );
    }
}

/// The charts of a sweep with long labels (a service world's table values)
/// keep their text inside the image and their plot at least half of it.
#[test]
fn long_legends_fit_beside_or_below_the_plot() {
    let plan =
        csmacd::sweep::load(&repo().join("scenarios/service-metastable.toml"), None).unwrap();
    let mut g = Lcg(11);
    for mut spec in plan.chart_specs() {
        // Long names, as a user's own labels may be.
        spec.legend_title =
            Some("retry policy, token bucket and circuit breaker of the clients".into());
        let table = synthetic_table(&plan, &spec, &mut g);
        let f = chart::build_figure(&table, &table, &spec, &Context::default()).unwrap();
        check_figure(&f, &format!("long {}", spec.name.unwrap()));
    }
}

/// `csmacd plot` titles a column by its meaning in the world that wrote the
/// file, else by its name; takes axis and legend titles and a y range; and
/// its caption names the CSV it read.
#[test]
fn plot_titles_ranges_and_caption() {
    let dir = temp_dir("plot-titles");
    let csv = write_file(
        &dir,
        "bus.csv",
        "load,policy,throughput\n0.2,beb,0.2\n0.6,beb,0.58\n1.0,beb,0.9\n0.2,mild,0.2\n0.6,mild,0.57\n1.0,mild,0.62\n",
    );
    let draw = |extra: &[&str], name: &str| {
        let out = dir.join(name);
        let mut args = vec![
            "plot",
            csv.to_str().unwrap(),
            "--x",
            "load",
            "--y",
            "throughput",
            "--series",
            "policy",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let r = csmacd(&args);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        std::fs::read_to_string(&out).unwrap()
    };
    let svg = draw(&[], "plain.svg");
    let t = texts(&svg);
    assert!(t.iter().any(|t| t.content == "load"), "x title");
    assert!(!svg.contains("attempts per call"));
    assert!(svg.contains("from "), "the caption names the CSV");
    assert!(svg.contains("bus.csv"));
    let svg = draw(
        &[
            "--y-range",
            "0.5,1",
            "--x-label",
            "total offered load",
            "--legend-title",
            "policy of the group",
        ],
        "named.svg",
    );
    let t = texts(&svg);
    for want in ["total offered load", "policy of the group"] {
        assert!(t.iter().any(|t| t.content == want), "{want}");
    }
    let ticks: Vec<f64> = t
        .iter()
        .filter(|t| t.anchor == "end")
        .filter_map(|t| t.content.parse().ok())
        .collect();
    assert!(ticks.iter().all(|v| (0.5..=1.0).contains(v)), "{ticks:?}");
    // A bad range and a colour column outside the series are refused.
    for (flag, value) in [("--y-range", "1,0"), ("--color-by", "load")] {
        let out = dir.join("bad.svg");
        let r = csmacd(&[
            "plot",
            csv.to_str().unwrap(),
            "--x",
            "load",
            "--y",
            "throughput",
            "--series",
            "policy",
            flag,
            value,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(r.status.code(), Some(2), "{flag} {value}");
    }
}

/// Delays spanning more than two decades are drawn on a log axis (said in
/// the caption) unless the spec says linear; charts that share y get one
/// range.
#[test]
fn delays_go_log_and_shared_charts_share_y() {
    let t =
        Table::from_csv(b"x,k,delay_mean_us\n1,a,10\n2,a,100\n3,a,5000\n1,b,20\n2,b,30\n3,b,40\n")
            .unwrap();
    let spec = ChartSpec {
        x: "x".into(),
        y: "delay_mean_us".into(),
        series: vec!["k".into()],
        ..Default::default()
    };
    let f = chart::build_figure(&t, &t, &spec, &Context::default()).unwrap();
    assert_eq!(f.chart.y_scale, chart::Scale::Log);
    assert!(
        f.chart.caption.contains("Log y axis"),
        "{}",
        f.chart.caption
    );
    let linear = ChartSpec {
        y_scale: Some(chart::Scale::Linear),
        ..spec.clone()
    };
    let g = chart::build_figure(&t, &t, &linear, &Context::default()).unwrap();
    assert_eq!(g.chart.y_scale, chart::Scale::Linear);
    // Two charts of one metric, one of them with a smaller range.
    let small = Table::from_csv(b"x,k,delay_mean_us\n1,a,10\n2,a,20\n3,a,30\n").unwrap();
    let mut one = chart::build_figure(&small, &small, &linear, &Context::default()).unwrap();
    let mut two = g;
    chart::share_y([
        (Some("delay_mean_us"), &mut one),
        (Some("delay_mean_us"), &mut two),
    ]);
    assert_eq!(one.options.y_range, two.options.y_range);
    let (lo, hi) = one.options.y_range.unwrap();
    assert!(lo <= 0.0 && hi >= 5000.0, "{lo} {hi}");
}

/// Sweeping top-level keys that result files have columns of (`seed`,
/// `stations`) gives every file distinct column names, and a chart of the
/// seed does not caption one seed.
#[test]
fn axis_columns_stay_apart_from_result_columns() {
    let dir = temp_dir("axis-columns");
    let f = write_file(
        &dir,
        "seeds.toml",
        r#"
name = "seeds"
duration = "20ms"
replications = 2
[[stations]]
count = 3
traffic = { kind = "poisson", load = 0.5 }
frame = "512B"
[sweep]
seed = [1, 2, 3]
stations = [[{ count = 2, traffic = { kind = "poisson", load = 0.3 }, frame = "512B" }], [{ count = 4, traffic = { kind = "poisson", load = 0.3 }, frame = "512B" }]]
[[chart]]
x = "seed"
y = "throughput"
"#,
    );
    let out = dir.join("out");
    let r = csmacd(&["sweep", f.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    for file in ["summary.csv", "runs.csv", "groups.csv", "stations.csv"] {
        let t = Table::from_csv(&std::fs::read(out.join(file)).unwrap()).unwrap();
        let mut names = t.header.clone();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), t.header.len(), "{file}: {:?}", t.header);
        assert_eq!(&t.header[..2], ["sweep.seed", "sweep.stations"], "{file}");
    }
    let groups = Table::from_csv(&std::fs::read(out.join("groups.csv")).unwrap()).unwrap();
    let c = groups.column("sweep.stations").unwrap();
    assert_eq!(groups.rows[0][c], "0.count=2", "a short label, not TOML");
    let svg = std::fs::read_to_string(out.join("charts/throughput-vs-seed.svg")).unwrap();
    assert!(
        !svg.contains("seed 1"),
        "a chart of the seed captions one seed"
    );
}
