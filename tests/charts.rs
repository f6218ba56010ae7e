//! Charts: every chart a sweep draws is a valid PNG or SVG whose legend names
//! its series; `csmacd plot` draws from any CSV and refuses unknown columns.

use crate::common::temp_dir;
use crate::sweep::{csmacd, write_file, SMALL};
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
        assert_eq!(png_size(&png), (800, 500), "{name}");
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
    assert_eq!(n, 2 * expected.len(), "no other files in charts/");
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
    assert_eq!(names, ["mine.png", "mine.svg"]);
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
            assert_eq!(png_size(&std::fs::read(&out).unwrap()), (800, 500));
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
