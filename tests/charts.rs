//! Charts: every chart a sweep draws is a valid PNG or SVG whose legend names
//! its series; one style per series across a sweep's charts; whiskers inside
//! the metric's bounds; log axes only when asked; words on x drawn as points;
//! sizes; per-group series; `csmacd plot` draws from any CSV and refuses
//! unknown columns.

use crate::common::temp_dir;
use crate::sweep::{csmacd, write_file, SMALL};
use csmacd::output::chart::{self, ChartSpec, Context, Scale, Table};
use csmacd::output::style::Styles;
use std::path::Path;

/// Width and height from a PNG's IHDR, after checking the signature, the
/// chunk layout and the final IEND chunk.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
    assert_eq!(&bytes[12..16], b"IHDR");
    let mut at = 8;
    let mut last = [0u8; 4];
    while at + 8 <= bytes.len() {
        let len = u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        last.copy_from_slice(&bytes[at + 4..at + 8]);
        at += 12 + len;
    }
    assert_eq!(at, bytes.len(), "chunks fill the file exactly");
    assert_eq!(&last, b"IEND");
    let w = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
    let h = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
    (w, h)
}

/// The SVG's text elements, each as ">content<" so a test can look for
/// exact labels; the check fails unless the file is a whole SVG document.
fn svg_text(path: &Path) -> String {
    let t = std::fs::read_to_string(path).unwrap();
    assert!(
        t.starts_with("<svg") && t.trim_end().ends_with("</svg>"),
        "{}",
        path.display()
    );
    t.split("</text>")
        .filter_map(|chunk| {
            chunk
                .rfind('>')
                .map(|i| format!(">{}<\n", chunk[i + 1..].trim()))
        })
        .collect()
}

#[test]
fn sweep_charts_are_valid_and_name_their_series() {
    let dir = temp_dir("charts");
    let f = write_file(&dir, "small.toml", SMALL);
    let out = dir.join("out");
    let r = csmacd(&["sweep", f.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let charts = out.join("charts");
    // The default charts: six metrics against load, collisions against N.
    let expected = [
        "throughput-vs-load",
        "delay_mean_us-vs-load",
        "delay_p99_us-vs-load",
        "collisions_per_delivered-vs-load",
        "drop_fraction-vs-load",
        "fairness-vs-load",
        "collisions_per_delivered-vs-count",
    ];
    for name in expected {
        let png = std::fs::read(charts.join(format!("{name}.png"))).unwrap();
        assert_eq!(png_size(&png), chart::DEFAULT_SIZE, "{name}");
        let svg = svg_text(&charts.join(format!("{name}.svg")));
        let legend: &[&str] = if name.ends_with("-vs-count") {
            &[">load=0.3<", ">load=0.9<"]
        } else {
            &[">N=2<", ">N=8<", ">N=32<"]
        };
        for l in legend {
            assert!(svg.contains(l), "{name}.svg lacks legend entry {l}");
        }
        assert!(
            svg.contains("95 % CI"),
            "{name}: replications > 1 give whiskers"
        );
    }
    assert!(svg_text(&charts.join("throughput-vs-load.svg"))
        .contains("offered load (fraction of bit rate)"));
    let n = std::fs::read_dir(&charts).unwrap().count();
    assert_eq!(
        n,
        3 * expected.len(),
        "PNG, SVG and CSV, no other files in charts/"
    );
}

#[test]
fn named_charts_replace_the_defaults() {
    let dir = temp_dir("named-charts");
    let text = format!(
        "{SMALL}\n[[chart]]\nname = \"mine\"\ntitle = \"My chart\"\nx = \"stations.0.count\"\ny = \"fairness\"\nseries = \"stations.0.traffic.load\"\n"
    );
    let f = write_file(&dir, "named.toml", &text);
    let out = dir.join("out");
    let r = csmacd(&["sweep", f.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let mut names: Vec<String> = std::fs::read_dir(out.join("charts"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["mine.csv", "mine.png", "mine.svg"]);
    let svg = svg_text(&out.join("charts/mine.svg"));
    assert!(svg.contains("My chart") && svg.contains(">load=0.3<"));
    // A chart naming a column that does not exist is a validation error.
    let bad = text.replace("y = \"fairness\"", "y = \"fairnes\"");
    let g = write_file(&dir, "bad.toml", &bad);
    let r = csmacd(&["sweep", g.to_str().unwrap(), "--dry-run"]);
    assert_eq!(r.status.code(), Some(2));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains("`chart.0.y`") && err.contains("fairness"),
        "{err}"
    );
}

#[test]
fn plot_draws_from_any_csv() {
    let dir = temp_dir("plot");
    let csv = write_file(
        &dir,
        "data.csv",
        "policy,frame,throughput,throughput_ci95\nbeb,64B,0.7,0.01\nbeb,1518B,0.95,0.02\nother,64B,0.6,\nother,1518B,0.9,\n",
    );
    let c = csv.to_str().unwrap();
    for ext in ["svg", "png"] {
        let out = dir.join(format!("chart.{ext}"));
        let r = csmacd(&[
            "plot",
            c,
            "--x",
            "frame",
            "--y",
            "throughput",
            "--series",
            "policy",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        if ext == "svg" {
            let svg = svg_text(&out);
            assert!(svg.contains(">beb<") && svg.contains(">other<"));
            assert!(
                svg.contains("frame size (B)"),
                "the unit of x comes from its values"
            );
        } else {
            assert_eq!(png_size(&std::fs::read(&out).unwrap()), chart::DEFAULT_SIZE);
        }
    }
    // Categorical x works too.
    let out = dir.join("cat.svg");
    let r = csmacd(&[
        "plot",
        c,
        "--x",
        "policy",
        "--y",
        "throughput",
        "--series",
        "frame",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let svg = svg_text(&out);
    assert!(svg.contains(">frame=1518B<") && svg.contains(">beb<") && svg.contains(">other<"));
    // Unknown column, unknown format: exit code 2 with what is allowed.
    let r = csmacd(&[
        "plot",
        c,
        "--x",
        "frame",
        "--y",
        "nope",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("columns: policy, frame, throughput"));
    let r = csmacd(&[
        "plot",
        c,
        "--x",
        "frame",
        "--y",
        "throughput",
        "--out",
        "x.gif",
    ]);
    assert_eq!(r.status.code(), Some(2));
}

/// The colour a legend gives `label`: the fill (or, for a cross, the
/// stroke) of the marker drawn just before the label's text.
fn legend_colour(svg: &str, label: &str) -> String {
    let at = svg
        .find(&format!(">\n{label}\n</text>"))
        .unwrap_or_else(|| panic!("no legend entry {label}"));
    let text_start = svg[..at].rfind("<text").unwrap();
    let marker = svg[..text_start].trim_end().rsplit('\n').next().unwrap();
    let attr = |name: &str| {
        marker
            .split(&format!("{name}=\"#"))
            .nth(1)
            .map(|rest| rest[..6].to_string())
    };
    attr("fill")
        .or_else(|| attr("stroke"))
        .unwrap_or_else(|| panic!("no colour in {marker}"))
}

/// A polyline of an SVG: its stroke colour, width and points.
type Polyline = (String, u32, Vec<(i32, i32)>);

/// Every polyline of the SVG.
fn polylines(svg: &str) -> Vec<Polyline> {
    svg.lines()
        .filter(|l| l.starts_with("<polyline"))
        .map(|l| {
            let attr = |name: &str| {
                let start = l.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
                let end = start + l[start..].find('"').unwrap();
                l[start..end].to_string()
            };
            let points = attr("points")
                .split_whitespace()
                .map(|p| {
                    let (x, y) = p.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect();
            (
                attr("stroke").trim_start_matches('#').to_string(),
                attr("stroke-width").parse().unwrap(),
                points,
            )
        })
        .collect()
}

/// The (x, y) at which a text element with exactly `content` is drawn.
fn text_at(svg: &str, content: &str) -> (i32, i32) {
    let at = svg
        .find(&format!(">\n{content}\n</text>"))
        .unwrap_or_else(|| panic!("no text {content}"));
    let tag = &svg[svg[..at].rfind("<text").unwrap()..at];
    let num = |name: &str| -> i32 {
        let start = tag.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        let end = start + tag[start..].find('"').unwrap();
        tag[start..end].parse().unwrap()
    };
    (num("x"), num("y"))
}

/// Saturated stations: without jitter two stations collide until every
/// frame is dropped, so that policy's delays are undefined while its
/// throughput (0) is not.
const POLICIES: &str = r#"
name = "policies"
seed = 5
duration = "30ms"
warmup = "3ms"
replications = 2

[[stations]]
count = 2
traffic = { kind = "saturated" }
frame = "64B"
backoff = { kind = "beb" }

[sweep]
"stations.0.backoff.kind" = ["beb", "exponential-no-jitter", "full-jitter"]
"stations.0.count" = [2, 4]

[[chart]]
name = "throughput"
x = "stations.0.count"
y = "throughput"
series = "stations.0.backoff.kind"

[[chart]]
name = "delay"
x = "stations.0.count"
y = "delay_mean_us"
series = "stations.0.backoff.kind"
"#;

#[test]
fn a_series_keeps_its_style_on_every_chart_of_a_sweep() {
    let dir = temp_dir("chart-styles");
    let f = write_file(&dir, "policies.toml", POLICIES);
    let out = dir.join("out");
    let r = csmacd(&["sweep", f.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let read = |n: &str| std::fs::read_to_string(out.join("charts").join(n)).unwrap();
    let (tp, delay) = (read("throughput.svg"), read("delay.svg"));
    // exponential-no-jitter has no delay at all: it is named, not dropped,
    // and full-jitter keeps its colour from the throughput chart.
    assert!(delay.contains("exponential-no-jitter: no values"));
    for label in ["beb", "full-jitter"] {
        let c = legend_colour(&tp, label);
        assert_eq!(c, legend_colour(&delay, label), "{label}");
        // ... and the line drawn for it has that colour too.
        assert!(
            polylines(&delay)
                .iter()
                .any(|(s, w, pts)| *s == c && *w == 2 && pts.len() >= 2 && pts[0].0 < 600),
            "{label}: no line of colour {c}"
        );
    }
    assert_ne!(legend_colour(&tp, "beb"), legend_colour(&tp, "full-jitter"));
}

#[test]
fn style_assignment_holds_a_label_across_charts() {
    let a = vec!["beb".to_string(), "full-jitter".into(), "mild".into()];
    let b = vec!["full-jitter".to_string(), "mild".into()];
    let s = Styles::assign(&[a.clone(), b.clone()]);
    // The same label, the same style, whatever else is on the chart: drawn
    // alone, chart b would give full-jitter the first style; in the sweep it
    // keeps the one it has beside beb.
    assert_eq!(
        Styles::assign(std::slice::from_ref(&b)).index("full-jitter"),
        0
    );
    assert_eq!(
        s.index("full-jitter"),
        Styles::assign(std::slice::from_ref(&a)).index("full-jitter")
    );
    assert_eq!(
        s,
        Styles::assign(&[b, a]),
        "the order of the charts does not matter"
    );
    let styles: Vec<_> = ["beb", "full-jitter", "mild"]
        .iter()
        .map(|l| s.get(l))
        .collect();
    for i in 0..3 {
        for j in 0..i {
            assert_ne!(styles[i].colour, styles[j].colour);
            assert!(styles[i].marker != styles[j].marker || styles[i].dash != styles[j].dash);
        }
    }
}

#[test]
fn whiskers_stop_at_the_bounds_of_the_metric() {
    assert_eq!(
        chart::clip_interval(0.95, Some(0.2), chart::domain("fairness")),
        Some((0.75, 1.0))
    );
    assert_eq!(
        chart::clip_interval(3.0, Some(5.0), chart::domain("delay_mean_us")),
        Some((0.0, 8.0))
    );
    assert_eq!(
        chart::clip_interval(3.0, Some(5.0), chart::domain("my_column")),
        Some((-2.0, 8.0))
    );
    // Drawn: no whisker of a fairness chart rises above the line of 1.
    let dir = temp_dir("chart-whiskers");
    let csv = write_file(
        &dir,
        "f.csv",
        "n,fairness,fairness_ci95\n2,0.95,0.2\n4,0.9,0.3\n8,0.97,0.01\n",
    );
    let out = dir.join("f.svg");
    let r = csmacd(&[
        "plot",
        csv.to_str().unwrap(),
        "--x",
        "n",
        "--y",
        "fairness",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let svg = std::fs::read_to_string(&out).unwrap();
    let (_, one) = text_at(&svg, "1.0");
    let colour = legend_free_series_colour(&svg);
    let whiskers: Vec<_> = polylines(&svg)
        .into_iter()
        .filter(|(s, _, p)| *s == colour && p.len() == 2 && p[0].0 == p[1].0)
        .collect();
    assert_eq!(whiskers.len(), 3, "one whisker per point");
    for (_, _, p) in whiskers {
        assert!(p[0].1.min(p[1].1) >= one, "whisker above 1: {p:?}");
    }
    assert!(svg.contains("95 % CI"));
}

/// The colour of the only series of a chart without a legend: that of its
/// line, the one polyline through more than two points.
fn legend_free_series_colour(svg: &str) -> String {
    polylines(svg)
        .into_iter()
        .find(|(_, w, p)| *w == 2 && p.len() > 2)
        .map(|(s, _, _)| s)
        .expect("a series line")
}

/// The relative position of x = 32 between x = 1 and x = 64 on the x axis of
/// a plot of `data` drawn with `extra` flags.
fn position_of_32(dir: &Path, extra: &[&str]) -> f64 {
    let csv = write_file(
        dir,
        "wide.csv",
        "n,y\n1,1\n2,2\n4,3\n8,4\n16,5\n32,6\n64,7\n",
    );
    let out = dir.join("wide.svg");
    let mut args = vec![
        "plot",
        csv.to_str().unwrap(),
        "--x",
        "n",
        "--y",
        "y",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let r = csmacd(&args);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let svg = std::fs::read_to_string(&out).unwrap();
    let x = |l: &str| text_at(&svg, l).0 as f64;
    (x("32") - x("1")) / (x("64") - x("1"))
}

#[test]
fn log_axes_only_when_asked() {
    let dir = temp_dir("chart-log");
    // x spans a factor of 64: still linear (32 is halfway) unless asked.
    assert!((position_of_32(&dir, &[]) - 31.0 / 63.0).abs() < 0.02);
    assert!((position_of_32(&dir, &["--x-scale", "log"]) - 5.0 / 6.0).abs() < 0.02);
    // The library: the scale is the spec's.
    let t = Table::from_csv(b"n,y\n1,1\n1000,2\n").unwrap();
    let spec = |x_scale| ChartSpec {
        x: "n".into(),
        y: "y".into(),
        x_scale,
        ..Default::default()
    };
    let c = chart::build(&t, &spec(Scale::Linear), &Context::default()).unwrap();
    assert_eq!(c.x_scale, Scale::Linear);
    assert_eq!(c.y_scale, Scale::Linear);
    let c = chart::build(&t, &spec(Scale::Log), &Context::default()).unwrap();
    assert_eq!(c.x_scale, Scale::Log);
    // A sweep file asks with x_scale; the old switch is refused with the new one.
    let base = format!("{SMALL}\n[[chart]]\nx = \"stations.0.count\"\ny = \"throughput\"\n");
    let ok_file = write_file(&dir, "log.toml", &format!("{base}x_scale = \"log\"\n"));
    let r = csmacd(&["sweep", ok_file.to_str().unwrap(), "--dry-run"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    for (extra, says) in [
        ("log_x = true\n", "x_scale = \"log\""),
        ("x_scale = \"logarithmic\"\n", "allowed: linear, log"),
    ] {
        let f = write_file(&dir, "bad.toml", &format!("{base}{extra}"));
        let r = csmacd(&["sweep", f.to_str().unwrap(), "--dry-run"]);
        assert_eq!(r.status.code(), Some(2));
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(err.contains(says), "{err}");
    }
    // A log axis over words is refused before anything runs.
    let words = format!(
        "{SMALL}\"stations.0.backoff.kind\" = [\"beb\", \"mild\"]\n\n[[chart]]\nx = \"stations.0.backoff.kind\"\ny = \"throughput\"\nx_scale = \"log\"\n"
    );
    let f = write_file(&dir, "words.toml", &words);
    let r = csmacd(&["sweep", f.to_str().unwrap(), "--dry-run"]);
    assert_eq!(r.status.code(), Some(2));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains("positive numbers") && err.contains("`beb`"),
        "{err}"
    );
}

/// Non-vertical polylines of `colour` longer than `min` pixels: lines
/// between points (whisker caps are short).
fn long_lines(svg: &str, colour: &str, min: i32) -> usize {
    polylines(svg)
        .iter()
        .filter(|(s, _, p)| {
            s == colour
                && p.windows(2).any(|w| {
                    let dx = (w[1].0 - w[0].0).abs();
                    dx > 0 && dx + (w[1].1 - w[0].1).abs() > min
                })
        })
        .count()
}

#[test]
fn words_on_x_are_drawn_as_points_per_category() {
    let dir = temp_dir("chart-categories");
    let csv = write_file(
        &dir,
        "modes.csv",
        "mode,load,throughput\ncsma-cd,1,0.8\ncsma,1,0.5\naloha,1,0.2\ncsma-cd,2,0.85\ncsma,2,0.55\naloha,2,0.1\n",
    );
    let draw = |x: &str, series: &str, name: &str| {
        let out = dir.join(name);
        let mut args = vec![
            "plot",
            csv.to_str().unwrap(),
            "--x",
            x,
            "--y",
            "throughput",
            "--series",
            series,
            "--out",
            out.to_str().unwrap(),
        ];
        if name.starts_with("joined") {
            args.push("--lines");
        }
        let r = csmacd(&args);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        std::fs::read_to_string(&out).unwrap()
    };
    // Numbers on x, asked to be joined: each series is a line.
    let numeric = draw("load", "mode", "joined.svg");
    // (csma-cd's line is solid: the first style, as the first value of
    // its column in the file.)
    let c = legend_colour(&numeric, "csma-cd");
    assert!(long_lines(&numeric, &c, 20) > 0, "a line joins the points");
    // Two values on x make no trend: by default the points stand alone.
    let two = draw("load", "mode", "numeric.svg");
    let c = legend_colour(&two, "csma-cd");
    assert_eq!(long_lines(&two, &c, 20), 0, "a line joins two x values");
    // Words on x: points (with the category names on the axis), no lines.
    let words = draw("mode", "load", "words.svg");
    for cat in ["csma-cd", "csma", "aloha"] {
        text_at(&words, cat);
    }
    for label in ["load=1", "load=2"] {
        let c = legend_colour(&words, label);
        assert_eq!(
            long_lines(&words, &c, 20),
            0,
            "{label}: a line between categories"
        );
        let markers = words
            .lines()
            .filter(|l| !l.starts_with("<polyline") && l.contains(&format!("fill=\"#{c}\"")))
            .count();
        // Three categories, and the legend's sample.
        assert_eq!(markers, 4, "{label}: one point per category");
    }
}

#[test]
fn sizes_are_chosen_and_checked() {
    let dir = temp_dir("chart-size");
    let base = format!(
        "{SMALL}\n[[chart]]\nname = \"big\"\nx = \"stations.0.count\"\ny = \"throughput\"\n"
    );
    let f = write_file(&dir, "size.toml", &format!("{base}size = [1200, 800]\n"));
    let out = dir.join("out");
    let r = csmacd(&["sweep", f.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let png = std::fs::read(out.join("charts/big.png")).unwrap();
    assert_eq!(png_size(&png), (1200, 800));
    let svg = std::fs::read_to_string(out.join("charts/big.svg")).unwrap();
    assert!(
        svg.starts_with("<svg width=\"1200\" height=\"800\""),
        "{}",
        &svg[..60]
    );
    for (bad, says) in [
        ("size = [100, 100]", "width 400 to 4000, height 300 to 4000"),
        ("size = [5000, 600]", "width 400 to 4000"),
        ("size = [-1, 600]", "not a chart size"),
        ("size = \"1200x800\"", "expected [width, height]"),
        ("size = [1200]", "expected [width, height]"),
    ] {
        let g = write_file(&dir, "bad.toml", &format!("{base}{bad}\n"));
        let r = csmacd(&["sweep", g.to_str().unwrap(), "--dry-run"]);
        assert_eq!(r.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(
            err.contains("`chart.0.size`") && err.contains(says),
            "{bad}: {err}"
        );
    }
    // csmacd plot --size WxH.
    let csv = write_file(&dir, "d.csv", "x,y\n1,2\n2,3\n");
    let png = dir.join("p.png");
    let plot = |size: &str| {
        csmacd(&[
            "plot",
            csv.to_str().unwrap(),
            "--x",
            "x",
            "--y",
            "y",
            "--size",
            size,
            "--out",
            png.to_str().unwrap(),
        ])
    };
    let r = plot("1000x600");
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(png_size(&std::fs::read(&png).unwrap()), (1000, 600));
    for bad in ["10x10", "1000", "axb"] {
        let r = plot(bad);
        assert_eq!(r.status.code(), Some(2), "{bad}");
        assert!(
            String::from_utf8_lossy(&r.stderr).contains("--size"),
            "{bad}"
        );
    }
}

const TWO_GROUPS: &str = r#"
name = "two groups"
seed = 11
duration = "40ms"
warmup = "4ms"
replications = 3

[[stations]]
count = 3
traffic = { kind = "poisson", load = 0.3 }
frame = "512B"
backoff = { kind = "beb" }

[[stations]]
count = 3
traffic = { kind = "poisson", load = 0.3 }
frame = "512B"
backoff = { kind = "blam" }

[sweep]
"stations.0.count" = [2, 6]

[[chart]]
name = "per-group"
x = "stations.0.count"
y = "share"
series = "group"
"#;

#[test]
fn series_group_draws_one_series_per_station_group() {
    let dir = temp_dir("chart-groups");
    let f = write_file(&dir, "groups.toml", TWO_GROUPS);
    let out = dir.join("out");
    let r = csmacd(&["sweep", f.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let svg = svg_text(&out.join("charts/per-group.svg"));
    for l in [
        ">beb<",
        ">blam<",
        ">station group<",
        "95 % CI over 3 replications",
    ] {
        assert!(svg.contains(l), "per-group.svg lacks {l}");
    }
    // Each point is the mean over replications of groups.csv's rows.
    let groups = std::fs::read(out.join("groups.csv")).unwrap();
    let table = Table::from_csv(&groups).unwrap();
    let col = |n: &str| table.header.iter().position(|h| h == n).unwrap();
    let spec = ChartSpec {
        x: "stations.0.count".into(),
        y: "share".into(),
        series: vec!["group".into()],
        ..Default::default()
    };
    let c = chart::build(&table, &spec, &Context::default()).unwrap();
    assert_eq!(c.labels(), ["beb", "blam"]);
    for s in &c.series {
        for p in &s.points {
            let rows: Vec<f64> = table
                .rows
                .iter()
                .filter(|r| {
                    r[col("group")] == s.label && r[col("stations.0.count")] == p.x.to_string()
                })
                .map(|r| r[col("share")].parse().unwrap())
                .collect();
            assert_eq!(rows.len(), 3);
            let (mean, half) = csmacd::stats::mean_ci95(&rows);
            assert!((p.y.unwrap() - mean).abs() < 1e-12);
            let (lo, hi) = p.ci.unwrap();
            assert!((lo - (mean - half).max(0.0)).abs() < 1e-12);
            assert!((hi - (mean + half).min(1.0)).abs() < 1e-12);
        }
    }
    // A per-group chart reads groups.csv's columns, and says so when wrong.
    let bad = TWO_GROUPS.replace("y = \"share\"", "y = \"capture_mean_run\"");
    let g = write_file(&dir, "bad.toml", &bad);
    let r = csmacd(&["sweep", g.to_str().unwrap(), "--dry-run"]);
    assert_eq!(r.status.code(), Some(2));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains("not a column of groups.csv") && err.contains("share"),
        "{err}"
    );
}

#[test]
fn many_series_become_small_multiples() {
    let mut csv = String::from("k,m,x,y\n");
    for k in 0..5 {
        for m in 0..3 {
            for x in 0..3 {
                csv.push_str(&format!("{k},{m},{x},{}\n", k * m + x));
            }
        }
    }
    let t = Table::from_csv(csv.as_bytes()).unwrap();
    let spec = |series: &[&str]| ChartSpec {
        x: "x".into(),
        y: "y".into(),
        series: series.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    };
    // 15 lines: one panel per value of m (the fewest panels), five lines
    // (k) in each, named by one legend.
    let c = chart::build(&t, &spec(&["k", "m"]), &Context::default()).unwrap();
    assert_eq!(c.panels, ["m=0", "m=1", "m=2"]);
    assert_eq!(c.labels(), ["k=0", "k=1", "k=2", "k=3", "k=4"]);
    assert!(matches!(c.legend, chart::Legend::Entries { .. }));
    // 14 lines of one column: a panel each, titled, without a legend.
    let mut one = String::from("j,x,y\n");
    for j in 0..14 {
        one.push_str(&format!("{j},0,1\n{j},1,2\n"));
    }
    let t1 = Table::from_csv(one.as_bytes()).unwrap();
    let c = chart::build(&t1, &spec(&["j"]), &Context::default()).unwrap();
    assert_eq!(c.panels.len(), 14);
    assert_eq!(c.panels[13], "j=13");
    assert_eq!(c.legend, chart::Legend::Hidden);
    // Up to 12 lines share one plot.
    let mut twelve = String::from("m,x,y\n");
    for m in 0..12 {
        twelve.push_str(&format!("{m},0,1\n"));
    }
    let few = Table::from_csv(twelve.as_bytes()).unwrap();
    let c = chart::build(&few, &spec(&["m"]), &Context::default()).unwrap();
    assert!(c.panels.is_empty());
}

#[test]
fn sweep_names_charts_only_when_it_drew_some() {
    let dir = temp_dir("chart-wrote");
    let f = write_file(&dir, "small.toml", SMALL);
    let out = dir.join("out");
    let r = csmacd(&["sweep", f.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(r.status.success());
    assert!(String::from_utf8_lossy(&r.stderr).contains("charts/ (7 charts)"));
    // One point: nothing varies, no chart.
    let one = SMALL
        .replace("[2, 8, 32]", "[2]")
        .replace("[0.3, 0.9]", "[0.3]");
    let g = write_file(&dir, "one.toml", &one);
    let out = dir.join("one");
    let r = csmacd(&["sweep", g.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(r.status.success());
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains("scenario.toml") && !err.contains("charts"),
        "{err}"
    );
    assert!(!out.join("charts").exists());
}

/// A small surge scenario whose charts draw from timeseries.csv.
const OVER_TIME: &str = r#"
name = "over time"
seed = 3
duration = "40s"
replications = 2

[server]
kind = "queue"
rate = "100/s"

[[clients]]
calls = { kind = "fresh", rate = "50/s", surge = { rate = "150/s", from = "20s", to = "30s" } }
backoff = { kind = "none" }
max_retries = 1
timeout = "1s"

[sweep]
"clients.0.max_retries" = [0, 1]

[[chart]]
name = "queue"
table = "timeseries"
x = "t_s"
y = "queue"
shade = "surge"
"#;

/// `table = "timeseries"` draws one line per sweep point over time (the
/// mean of the replications, without markers or whiskers), and `shade =
/// "surge"` shades the scenario's surge, from 20 s to 30 s on the x axis,
/// named "surge". Bad tables and shades are refused before the sweep runs.
#[test]
fn charts_over_time_shade_the_surge() {
    let dir = temp_dir("over-time");
    let f = write_file(&dir, "t.toml", OVER_TIME);
    let out = dir.join("out");
    let r = csmacd(&["sweep", f.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let png = std::fs::read(out.join("charts/queue.png")).unwrap();
    assert_eq!(png_size(&png), chart::DEFAULT_SIZE);
    let svg = std::fs::read_to_string(out.join("charts/queue.svg")).unwrap();
    assert!(svg.contains(">\nsurge\n</text>"), "the shade is named");
    assert!(svg.contains("lines: mean over 2 replications"));
    assert!(!svg.contains("<circle"), "no markers on a chart over time");
    let shade = svg
        .lines()
        .find(|l| l.starts_with("<rect") && l.contains("fill=\"#F6ECD6\""))
        .expect("a shaded rectangle");
    let num = |name: &str| -> f64 {
        let start = shade.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        let end = start + shade[start..].find('"').unwrap();
        shade[start..end].parse().unwrap()
    };
    let (x20, _) = text_at(&svg, "20");
    let (x30, _) = text_at(&svg, "30");
    assert!((num("x") - x20 as f64).abs() <= 1.0, "{shade}");
    assert!(
        (num("x") + num("width") - x30 as f64).abs() <= 1.0,
        "{shade}"
    );
    for (from, to, what) in [
        (
            "table = \"timeseries\"",
            "table = \"bins\"",
            "`chart.0.table`",
        ),
        ("shade = \"surge\"", "shade = [30, 20]", "`chart.0.shade`"),
        ("y = \"queue\"", "y = \"throughput\"", "`chart.0.y`"),
    ] {
        let g = write_file(&dir, "bad.toml", &OVER_TIME.replace(from, to));
        let r = csmacd(&["sweep", g.to_str().unwrap(), "--dry-run"]);
        assert_eq!(r.status.code(), Some(2), "{to}");
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(err.contains(what), "{to}: {err}");
    }
    let no_surge = OVER_TIME.replace(
        r#", surge = { rate = "150/s", from = "20s", to = "30s" }"#,
        "",
    );
    let g = write_file(&dir, "nosurge.toml", &no_surge);
    let r = csmacd(&["sweep", g.to_str().unwrap(), "--dry-run"]);
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("has none"));
}
