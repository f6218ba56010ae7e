//! The points a chart draws, as CSV beside its pictures: every series'
//! points (theory lines included) with the style each is drawn in, so that
//! a reader can re-plot or check any figure, and a test can see which
//! style each value got.

use super::{Chart, Look, Options};
use crate::output::style::{Marker, Styles, DASHES};

/// The columns of a chart's CSV.
pub const HEADER: [&str; 10] = [
    "series", "panel", "x", "y", "ci_low", "ci_high", "kind", "color", "marker", "dash",
];

fn marker_name(m: Marker) -> &'static str {
    match m {
        Marker::Circle => "circle",
        Marker::Square => "square",
        Marker::TriangleUp => "triangle-up",
        Marker::Diamond => "diamond",
        Marker::TriangleDown => "triangle-down",
        Marker::Cross => "cross",
    }
}

fn dash_name(i: usize) -> &'static str {
    ["solid", "dashed", "dotted", "dash-dot"][i % DASHES.len()]
}

fn number(v: f64) -> String {
    format!("{v}")
}

/// One row per point drawn: the series label, its panel's title (empty for
/// one plot), x (the category for words on x), y and its interval (empty
/// where undefined), `simulation` or `theory`, and the series' colour (hex),
/// marker (none for a line without markers; `-hollow` after its name for a
/// point past saturation, drawn hollow) and dash.
pub fn points_csv(chart: &Chart, styles: &Styles) -> Vec<u8> {
    points_csv_with(chart, styles, &Options::default())
}

/// [`points_csv`] for a chart drawn with `options`.
pub fn points_csv_with(chart: &Chart, styles: &Styles, options: &Options) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    // Writing to a vector cannot fail.
    let _ = w.write_record(HEADER);
    for (si, s) in chart.series.iter().enumerate() {
        let parts = styles.parts(&s.label);
        let style = parts.style();
        let c = style.colour;
        let colour = format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2);
        let (kind, marker) = match s.look {
            Look::Theory | Look::TheoryBars => ("theory", "none"),
            Look::Joined | Look::Measured if chart.lines_only => ("simulation", "none"),
            Look::Joined | Look::Measured => ("simulation", marker_name(style.marker)),
        };
        let panel = chart.panels.get(s.panel).cloned().unwrap_or_default();
        for (pi, p) in s.points.iter().enumerate() {
            let x = match &chart.categories {
                Some(cats) => cats
                    .get(p.x as usize)
                    .cloned()
                    .unwrap_or_else(|| number(p.x)),
                None => number(p.x),
            };
            let (lo, hi) = p.ci.map_or((String::new(), String::new()), |(l, h)| {
                (number(l), number(h))
            });
            let _ = w.write_record([
                s.label.as_str(),
                &panel,
                &x,
                &p.y.map(number).unwrap_or_default(),
                &lo,
                &hi,
                kind,
                &colour,
                &if options.hollow.contains(&(si, pi)) && marker != "none" {
                    format!("{marker}-hollow")
                } else {
                    marker.to_string()
                },
                dash_name(parts.dash),
            ]);
        }
    }
    w.into_inner().unwrap_or_default()
}
