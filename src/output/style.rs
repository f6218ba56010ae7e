//! One look for everything csmacd draws, charts and teaching pictures alike:
//! the embedded font and its text sizes, the colour-blind-safe palette, and
//! the series styles (colour, marker, dash) that tell lines apart without colour.

use ab_glyph::{Font, FontRef, PxScale, ScaleFont};
use plotters::style::{FontStyle, RGBColor};
use std::collections::BTreeMap;
use std::sync::{Once, OnceLock};

/// The embedded font: DejaVu Sans (Bitstream Vera licence in
/// assets/DejaVuSans-LICENSE.txt), so that drawing needs no system library.
static FONT_BYTES: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");

/// The font family every picture names (SVG viewers use their own sans-serif).
pub const FONT: &str = "sans-serif";

/// Text sizes in pixels (the height of a line of text).
pub mod size {
    pub const TITLE: f64 = 20.0;
    pub const PANEL_TITLE: f64 = 15.0;
    pub const AXIS_TITLE: f64 = 15.0;
    pub const TICK: f64 = 14.0;
    pub const LEGEND: f64 = 14.0;
    pub const CAPTION: f64 = 13.0;
}

/// Registers the embedded font with plotters as [`FONT`], once per process.
pub fn register() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The embedded file is a valid TrueType font; a failure here would
        // only mean text is not drawn, never a wrong number.
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, FONT_BYTES);
    });
}

/// The embedded font, parsed once.
pub fn font() -> &'static FontRef<'static> {
    static PARSED: OnceLock<FontRef<'static>> = OnceLock::new();
    PARSED.get_or_init(|| FontRef::try_from_slice(FONT_BYTES).expect("the embedded font parses"))
}

/// The width in pixels of `text` at `size`: glyph advances and kerning.
pub fn text_width(text: &str, size: f64) -> f64 {
    let f = font().as_scaled(PxScale::from(size as f32));
    let mut w = 0.0f32;
    let mut prev = None;
    for c in text.chars() {
        let id = f.glyph_id(c);
        if let Some(p) = prev {
            w += f.kern(p, id);
        }
        w += f.h_advance(id);
        prev = Some(id);
    }
    w as f64
}

// The Okabe-Ito palette (Okabe and Ito, "Color Universal Design", 2008):
// told apart by readers with any common colour-vision deficiency.
pub const BLACK: RGBColor = RGBColor(0, 0, 0);
pub const ORANGE: RGBColor = RGBColor(230, 159, 0);
pub const SKY_BLUE: RGBColor = RGBColor(86, 180, 233);
pub const BLUISH_GREEN: RGBColor = RGBColor(0, 158, 115);
pub const BLUE: RGBColor = RGBColor(0, 114, 178);
pub const VERMILLION: RGBColor = RGBColor(213, 94, 0);
pub const REDDISH_PURPLE: RGBColor = RGBColor(204, 121, 167);

/// Text and axes.
pub const INK: RGBColor = RGBColor(30, 30, 30);
/// Captions and notes.
pub const MUTED: RGBColor = RGBColor(90, 90, 90);
/// Grid lines.
pub const GRID: RGBColor = RGBColor(222, 222, 222);
/// A shaded interval behind a chart's data (a surge).
pub const SHADE: RGBColor = RGBColor(246, 236, 214);

/// Series colours in the order they are handed out. Okabe-Ito's yellow is
/// left out: a thin yellow line on white is hard to see.
pub const SERIES_COLOURS: [RGBColor; 7] = [
    BLUE,
    VERMILLION,
    BLUISH_GREEN,
    REDDISH_PURPLE,
    ORANGE,
    SKY_BLUE,
    BLACK,
];

/// In the teaching pictures, jams and collisions: a clear red (the page's),
/// apart from the backoff's orange; stations never wear it.
pub const JAM: RGBColor = RGBColor(200, 16, 46);
/// In the teaching pictures, backoff bars, and their labels (darker, to be
/// read on white).
pub const BACKOFF: RGBColor = ORANGE;
pub const BACKOFF_TEXT: RGBColor = RGBColor(160, 105, 0);
/// In the teaching pictures, carrier extension (non-data symbols after a
/// short frame at 1 Gb/s) and a burst's filled gap (the carrier held
/// between two frames of a burst): neither carries frame bits.
pub const EXTENSION: RGBColor = RGBColor(150, 150, 150);
pub const BURST_GAP: RGBColor = RGBColor(240, 228, 66);
/// In the teaching pictures, a frame received.
pub const DELIVERED: RGBColor = BLUISH_GREEN;
/// In the station timeline: transmitting, deferring, idle.
pub const TRANSMIT: RGBColor = BLUISH_GREEN;
pub const DEFER: RGBColor = RGBColor(171, 217, 244);
pub const IDLE: RGBColor = RGBColor(235, 235, 235);

/// Station colours in the teaching pictures, ten before they repeat: the
/// palette without its vermillion and orange (too near the jam's red and
/// the backoff's orange), then purple, brown, cyan, grey and olive.
pub const STATION_COLOURS: [RGBColor; 10] = [
    BLUE,
    BLUISH_GREEN,
    REDDISH_PURPLE,
    SKY_BLUE,
    BLACK,
    RGBColor(106, 61, 154),
    RGBColor(140, 86, 75),
    RGBColor(23, 190, 207),
    RGBColor(127, 127, 127),
    RGBColor(107, 142, 35),
];

/// Station `i`'s colour in the teaching pictures.
pub fn station_colour(i: u32) -> RGBColor {
    STATION_COLOURS[i as usize % STATION_COLOURS.len()]
}

/// A point marker's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    Circle,
    Square,
    TriangleUp,
    Diamond,
    TriangleDown,
    Cross,
}

pub const MARKERS: [Marker; 6] = [
    Marker::Circle,
    Marker::Square,
    Marker::TriangleUp,
    Marker::Diamond,
    Marker::TriangleDown,
    Marker::Cross,
];

/// A line's dash pattern: lengths in pixels, on and off in turn (empty: solid).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dash(pub &'static [f64]);

pub const DASHES: [Dash; 4] = [
    Dash(&[]),
    Dash(&[9.0, 5.0]),
    Dash(&[2.5, 4.0]),
    Dash(&[10.0, 4.0, 2.5, 4.0]),
];

/// How one series is drawn: colour, marker and dash together, so that lines
/// are told apart in greyscale too.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SeriesStyle {
    pub colour: RGBColor,
    pub marker: Marker,
    pub dash: Dash,
}

/// The `i`-th series style. Colours, markers and dashes cycle with different
/// periods (7, 6, 4): the first 84 styles differ, and so do the first 12 in
/// marker and dash alone.
pub fn series_style(i: usize) -> SeriesStyle {
    StyleIndex::all(i).style()
}

/// A style as the indices of its colour, marker and dash (each cycling
/// through its list): one series axis's value may fix the colour while
/// another's fixes the marker and dash.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StyleIndex {
    pub colour: usize,
    pub marker: usize,
    pub dash: usize,
}

impl StyleIndex {
    /// The `i`-th style of [`series_style`]: colour, marker and dash together.
    pub fn all(i: usize) -> StyleIndex {
        StyleIndex {
            colour: i,
            marker: i,
            dash: i,
        }
    }

    pub fn style(self) -> SeriesStyle {
        SeriesStyle {
            colour: SERIES_COLOURS[self.colour % SERIES_COLOURS.len()],
            marker: MARKERS[self.marker % MARKERS.len()],
            dash: DASHES[self.dash % DASHES.len()],
        }
    }
}

/// One style per series label: within a chart, or fixed across a set of
/// charts (every chart of a sweep), so that the same label is drawn the
/// same way on every chart.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Styles {
    index: BTreeMap<String, StyleIndex>,
}

impl Styles {
    /// Assigns styles to the labels of `charts` (each chart's series labels).
    /// Labels are taken in natural order ("N=2" before "N=16"); each gets the
    /// first style not already held by a label it shares a chart with, so
    /// the lines of one chart always differ. The result depends on the set
    /// of charts only, not on their order or on the data.
    pub fn assign<S: AsRef<str>>(charts: &[Vec<S>]) -> Styles {
        let mut labels: Vec<&str> = charts.iter().flatten().map(AsRef::as_ref).collect();
        let index = |index: &BTreeMap<String, usize>, l: &str| index.get(l).copied();
        labels.sort_by(|a, b| natural_cmp(a, b));
        labels.dedup();
        let mut found: BTreeMap<String, usize> = BTreeMap::new();
        for label in labels {
            let mut taken: Vec<usize> = charts
                .iter()
                .filter(|c| c.iter().any(|l| l.as_ref() == label))
                .flatten()
                .filter_map(|l| index(&found, l.as_ref()))
                .collect();
            taken.sort_unstable();
            taken.dedup();
            let free = (0..).find(|i| taken.binary_search(i).is_err()).unwrap_or(0);
            found.insert(label.to_string(), free);
        }
        Styles::of_indices(found)
    }

    /// Styles given by index: labels that share an index are drawn alike
    /// (a closed form and the measurements drawn over it).
    pub fn of_indices<S: Into<String>>(pairs: impl IntoIterator<Item = (S, usize)>) -> Styles {
        Styles {
            index: pairs
                .into_iter()
                .map(|(l, i)| (l.into(), StyleIndex::all(i)))
                .collect(),
        }
    }

    /// Styles given part by part (colour, marker, dash), per label.
    pub fn of_parts<S: Into<String>>(pairs: impl IntoIterator<Item = (S, StyleIndex)>) -> Styles {
        Styles {
            index: pairs.into_iter().map(|(l, i)| (l.into(), i)).collect(),
        }
    }

    /// The colour index of `label`'s style (0 for a label that was not
    /// assigned).
    pub fn index(&self, label: &str) -> usize {
        self.parts(label).colour
    }

    /// The indices of `label`'s colour, marker and dash.
    pub fn parts(&self, label: &str) -> StyleIndex {
        self.index.get(label).copied().unwrap_or_default()
    }

    /// The style of `label`.
    pub fn get(&self, label: &str) -> SeriesStyle {
        self.parts(label).style()
    }
}

/// Compares two labels with their numbers by value: "N=2" < "N=16",
/// "load=0.25" < "load=0.3", "64B" < "1518B"; text compares as text.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    let (ca, cb) = (chunks(a), chunks(b));
    for (x, y) in ca.iter().zip(&cb) {
        let o = match (x, y) {
            (Chunk::Num(p), Chunk::Num(q)) => p.total_cmp(q),
            (Chunk::Num(_), Chunk::Text(_)) => std::cmp::Ordering::Less,
            (Chunk::Text(_), Chunk::Num(_)) => std::cmp::Ordering::Greater,
            (Chunk::Text(p), Chunk::Text(q)) => p.cmp(q),
        };
        if o.is_ne() {
            return o;
        }
    }
    ca.len().cmp(&cb.len()).then_with(|| a.cmp(b))
}

enum Chunk<'a> {
    Num(f64),
    Text(&'a str),
}

/// Splits a label into runs of text and numbers ("12", "0.25").
fn chunks(s: &str) -> Vec<Chunk<'_>> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let start = i;
        if b[i].is_ascii_digit() {
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if i + 1 < b.len() && b[i] == b'.' && b[i + 1].is_ascii_digit() {
                i += 1;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
            }
            out.push(Chunk::Num(s[start..i].parse().unwrap_or(0.0)));
        } else {
            while i < b.len() && !b[i].is_ascii_digit() {
                i += 1;
            }
            out.push(Chunk::Text(&s[start..i]));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natural_order() {
        let mut v = vec!["N=16", "N=2", "N=128", "beb", "N=8"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, ["N=2", "N=8", "N=16", "N=128", "beb"]);
        assert!(natural_cmp("load=0.25", "load=0.3").is_lt());
        assert!(natural_cmp("64B", "1518B").is_lt());
    }

    #[test]
    fn styles_differ_within_a_chart_and_hold_across_charts() {
        let a = vec!["N=2", "N=8", "N=32"];
        let b = vec!["N=32", "load=0.3"];
        let s = Styles::assign(&[a.clone(), b.clone()]);
        assert_eq!(s.index("N=2"), 0);
        assert_eq!(s.index("N=32"), 2);
        assert_ne!(s.index("load=0.3"), s.index("N=32"));
        // The order of the charts does not matter.
        assert_eq!(Styles::assign(&[b, a]), s);
    }

    #[test]
    fn styles_are_told_apart_without_colour() {
        for i in 0..12 {
            for j in 0..i {
                let (p, q) = (series_style(i), series_style(j));
                assert!(p.marker != q.marker || p.dash != q.dash, "{i} {j}");
            }
        }
        assert!(!STATION_COLOURS.contains(&JAM));
    }

    #[test]
    fn text_widths_grow_with_text() {
        assert!(text_width("1000", 14.0) > text_width("100", 14.0));
        let one = text_width("1", 14.0);
        assert!(
            (text_width("11", 14.0) - 2.0 * one).abs() < 0.01,
            "digits are evenly spaced"
        );
    }
}
