//! Lays a [`Chart`] out and draws it: the title, one plot or a grid of
//! panels on shared axes, series with their marker, dash and whiskers, the
//! legend beside the plot and the caption below it.

use super::ticks::{self, Range, DATA_TICKS};
use super::{Chart, ChartError, Legend, Look, Scale, Series};
use crate::output::png::Png;
use crate::output::style::{self, size as font_size, Dash, Marker, SeriesStyle, Styles};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::FontTransform;
use std::path::Path;

/// Draws the chart as SVG text.
pub fn render_svg(chart: &Chart, styles: &Styles) -> Result<String, ChartError> {
    style::register();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, chart.size).into_drawing_area();
        paint(&root, chart, styles).map_err(ChartError::Draw)?;
        root.present()
            .map_err(|e| ChartError::Draw(e.to_string()))?;
    }
    Ok(svg)
}

/// Draws the chart as a PNG file at `path` (which must end in .png): the
/// encoder writes the file itself, so callers pass a temporary path
/// ([`crate::output::write_atomic_with`]) to keep the write atomic.
pub fn render_png(chart: &Chart, styles: &Styles, path: &Path) -> Result<(), ChartError> {
    let root = Png::new(path, chart.size).into_drawing_area();
    paint(&root, chart, styles).map_err(ChartError::Draw)?;
    root.present()
        .map_err(|e| ChartError::Write(crate::output::png::error_text(&e)))
}

/// Columns and rows of a grid of `n` panels.
pub(super) fn grid(n: usize) -> (usize, usize) {
    let cols = match n {
        0..=3 => n.max(1),
        4 => 2,
        _ => (n as f64).sqrt().ceil() as usize,
    };
    (cols, n.div_ceil(cols))
}

type Drawn = Result<(), String>;

/// The length of a legend's line sample, in pixels at scale 1.
const SWATCH: f64 = 36.0;

/// Draws in pixels (fractions allowed, rounded once) on a drawing area.
struct Pen<'a, DB: DrawingBackend> {
    area: &'a DrawingArea<DB, Shift>,
}

fn px(p: (f64, f64)) -> (i32, i32) {
    (p.0.round() as i32, p.1.round() as i32)
}

impl<DB: DrawingBackend> Pen<'_, DB> {
    #[allow(clippy::too_many_arguments)]
    fn text(
        &self,
        t: &str,
        at: (f64, f64),
        size: f64,
        colour: RGBColor,
        h: HPos,
        v: VPos,
        up: bool,
    ) -> Drawn {
        if t.is_empty() {
            return Ok(());
        }
        let mut font = (style::FONT, size)
            .into_font()
            .color(&colour)
            .pos(Pos::new(h, v));
        if up {
            font = font.transform(FontTransform::Rotate270);
        }
        self.area
            .draw(&Text::new(t.to_string(), px(at), font))
            .map_err(|e| e.to_string())
    }

    fn line(&self, pts: &[(f64, f64)], colour: RGBColor, width: f64) -> Drawn {
        if pts.len() < 2 {
            return Ok(());
        }
        let style = ShapeStyle {
            color: colour.to_rgba(),
            filled: false,
            stroke_width: width.round().max(1.0) as u32,
        };
        self.area
            .draw(&PathElement::new(
                pts.iter().map(|&p| px(p)).collect::<Vec<_>>(),
                style,
            ))
            .map_err(|e| e.to_string())
    }

    fn dashed(
        &self,
        pts: &[(f64, f64)],
        dash: Dash,
        colour: RGBColor,
        width: f64,
        s: f64,
    ) -> Drawn {
        let pattern: Vec<f64> = dash.0.iter().map(|d| d * s).collect();
        for piece in dash_pieces(pts, &pattern) {
            self.line(&piece, colour, width)?;
        }
        Ok(())
    }

    fn rect(&self, a: (f64, f64), b: (f64, f64), colour: RGBColor, filled: bool) -> Drawn {
        let style = if filled {
            colour.filled()
        } else {
            colour.stroke_width(1)
        };
        self.area
            .draw(&Rectangle::new([px(a), px(b)], style))
            .map_err(|e| e.to_string())
    }

    fn polygon(&self, pts: &[(f64, f64)], colour: RGBColor) -> Drawn {
        self.area
            .draw(&Polygon::new(
                pts.iter().map(|&p| px(p)).collect::<Vec<_>>(),
                colour.filled(),
            ))
            .map_err(|e| e.to_string())
    }

    /// A marker of radius `r` at `c`, on a white halo that parts it from the
    /// lines beneath.
    fn marker(&self, m: Marker, c: (f64, f64), r: f64, colour: RGBColor) -> Drawn {
        self.shape(m, c, r + 1.5, WHITE)?;
        self.shape(m, c, r, colour)
    }

    fn shape(&self, m: Marker, (x, y): (f64, f64), r: f64, colour: RGBColor) -> Drawn {
        match m {
            Marker::Circle => self
                .area
                .draw(&Circle::new(px((x, y)), r.round() as i32, colour.filled()))
                .map_err(|e| e.to_string()),
            Marker::Square => {
                let a = r * 0.88;
                self.rect((x - a, y - a), (x + a, y + a), colour, true)
            }
            Marker::TriangleUp => self.polygon(
                &[
                    (x, y - 1.25 * r),
                    (x + 1.1 * r, y + 0.8 * r),
                    (x - 1.1 * r, y + 0.8 * r),
                ],
                colour,
            ),
            Marker::TriangleDown => self.polygon(
                &[
                    (x, y + 1.25 * r),
                    (x + 1.1 * r, y - 0.8 * r),
                    (x - 1.1 * r, y - 0.8 * r),
                ],
                colour,
            ),
            Marker::Diamond => self.polygon(
                &[
                    (x, y - 1.3 * r),
                    (x + 1.05 * r, y),
                    (x, y + 1.3 * r),
                    (x - 1.05 * r, y),
                ],
                colour,
            ),
            Marker::Cross => {
                let a = r * 0.95;
                let w = (r * 0.55).max(2.0);
                self.line(&[(x - a, y - a), (x + a, y + a)], colour, w)?;
                self.line(&[(x - a, y + a), (x + a, y - a)], colour, w)
            }
        }
    }
}

/// Cuts a polyline into the pieces a dash pattern (on, off, on, ...
/// lengths) leaves drawn; the pattern runs on across vertices.
pub(super) fn dash_pieces(pts: &[(f64, f64)], pattern: &[f64]) -> Vec<Vec<(f64, f64)>> {
    if pts.len() < 2 || pattern.is_empty() || pattern.iter().any(|d| *d <= 0.0) {
        return vec![pts.to_vec()];
    }
    let mut out = Vec::new();
    let mut cur = vec![pts[0]];
    let (mut k, mut left, mut on) = (0, pattern[0], true);
    for w in pts.windows(2) {
        let (a, b) = (w[0], w[1]);
        let len = ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
        let mut t = 0.0;
        while len - t > left {
            t += left;
            let p = (a.0 + (b.0 - a.0) * t / len, a.1 + (b.1 - a.1) * t / len);
            if on {
                cur.push(p);
                out.push(std::mem::take(&mut cur));
            } else {
                cur = vec![p];
            }
            on = !on;
            k = (k + 1) % pattern.len();
            left = pattern[k];
        }
        left -= len - t;
        if on {
            cur.push(b);
        }
    }
    if on && cur.len() >= 2 {
        out.push(cur);
    }
    out
}

/// Breaks `text` into lines no wider than `width` at `size`.
fn wrap(text: &str, size: f64, width: f64) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for word in text.split(' ') {
        let candidate = if cur.is_empty() {
            word.to_string()
        } else {
            format!("{cur} {word}")
        };
        if !cur.is_empty() && style::text_width(&candidate, size) > width {
            lines.push(std::mem::replace(&mut cur, word.to_string()));
        } else {
            cur = candidate;
        }
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}

/// Shortens `text` with an ellipsis to fit `width` at `size`.
fn fit(text: &str, size: f64, width: f64) -> String {
    if style::text_width(text, size) <= width {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    for n in (1..chars.len()).rev() {
        let t: String = chars[..n].iter().collect::<String>() + "…";
        if style::text_width(&t, size) <= width {
            return t;
        }
    }
    "…".into()
}

/// A plot panel's frame in pixels.
#[derive(Clone, Copy, Debug)]
struct Frame {
    left: f64,
    top: f64,
    right: f64,
    bottom: f64,
}

impl Frame {
    fn x(&self, r: &Range, v: f64) -> f64 {
        self.left + r.frac(v) * (self.right - self.left)
    }
    fn y(&self, r: &Range, v: f64) -> f64 {
        self.bottom - r.frac(v) * (self.bottom - self.top)
    }
}

/// The x axis as laid out for a panel width.
struct XAxis {
    range: Range,
    ticks: Vec<f64>,
    labels: Vec<String>,
    /// Each label's row below the axis (categories stagger when crowded);
    /// None: not shown.
    rows_of: Vec<Option<usize>>,
    rows: usize,
    /// The ticks are the data's own values (or categories).
    on_values: bool,
}

/// The y axis as laid out for a panel height.
struct YAxis {
    range: Range,
    ticks: Vec<f64>,
    labels: Vec<String>,
}

/// The extent of the data: x values, and y with whisker ends.
struct Extent {
    xs: Vec<f64>,
    y_lo: f64,
    y_hi: f64,
    /// The smallest positive y or whisker end, for a log axis.
    y_pos_lo: f64,
}

fn extent(chart: &Chart) -> Extent {
    let mut xs: Vec<f64> = Vec::new();
    let (mut lo, mut hi, mut pos_lo) = (f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY);
    for p in chart.series.iter().flat_map(|s| s.points.iter()) {
        xs.push(p.x);
        let Some(y) = p.y else { continue };
        let (a, b) = p.ci.unwrap_or((y, y));
        for v in [a, b, y] {
            lo = lo.min(v);
            hi = hi.max(v);
            if v > 0.0 {
                pos_lo = pos_lo.min(v);
            }
        }
    }
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    Extent {
        xs,
        y_lo: lo,
        y_hi: hi,
        y_pos_lo: pos_lo,
    }
}

fn x_axis(chart: &Chart, ext: &Extent, width: f64, s: f64) -> XAxis {
    let size = font_size::TICK * s;
    let gap = 10.0 * s;
    if let Some(cats) = &chart.categories {
        let n = cats.len().max(1);
        let range = Range {
            scale: Scale::Linear,
            lo: -0.5,
            hi: n as f64 - 0.5,
        };
        let slot = width / n as f64;
        // Stagger crowded names over up to 3 rows, then shorten them.
        let widths: Vec<f64> = cats.iter().map(|c| style::text_width(c, size)).collect();
        let fits = |rows: usize| widths.iter().all(|w| *w + gap <= slot * rows as f64);
        let rows = (1..=3).find(|&r| fits(r)).unwrap_or(3);
        let labels = cats
            .iter()
            .map(|c| fit(c, size, slot * rows as f64 - gap))
            .collect();
        return XAxis {
            range,
            ticks: (0..cats.len()).map(|i| i as f64).collect(),
            labels,
            rows_of: (0..cats.len()).map(|i| Some(i % rows)).collect(),
            rows,
            on_values: true,
        };
    }
    let (lo, hi) = (
        ext.xs.first().copied().unwrap_or(0.0),
        ext.xs.last().copied().unwrap_or(1.0),
    );
    let range = ticks::padded(chart.x_scale, lo, hi, 0.04);
    let (values, labels): (Vec<f64>, Vec<String>) = if ext.xs.len() <= DATA_TICKS {
        let labels = ext.xs.iter().map(|&v| ticks::label(v)).collect();
        (ext.xs.clone(), labels)
    } else {
        let max = (width / (70.0 * s)).max(2.0) as usize;
        match chart.x_scale {
            Scale::Linear => {
                let (t, step) = ticks::round_ticks(range, max);
                let l = t.iter().map(|&v| ticks::label_step(v, step)).collect();
                (t, l)
            }
            Scale::Log => {
                let t = ticks::log_ticks(range, max);
                let l = t.iter().map(|&v| ticks::label(v)).collect();
                (t, l)
            }
        }
    };
    let centres: Vec<f64> = values.iter().map(|&v| range.frac(v) * width).collect();
    let widths: Vec<f64> = labels
        .iter()
        .map(|l: &String| style::text_width(l, size))
        .collect();
    let shown = ticks::thin(&centres, &widths, gap);
    XAxis {
        range,
        ticks: values,
        labels,
        rows_of: shown.iter().map(|&s| s.then_some(0)).collect(),
        rows: 1,
        on_values: ext.xs.len() <= DATA_TICKS,
    }
}

fn y_axis(chart: &Chart, ext: &Extent, height: f64, s: f64) -> YAxis {
    let max = (height / (font_size::TICK * s * 2.6)).clamp(2.0, 10.0) as usize;
    let (lo, hi) = if ext.y_lo.is_finite() {
        (ext.y_lo, ext.y_hi)
    } else {
        (0.0, 1.0)
    };
    match chart.y_scale {
        Scale::Linear => {
            // Zero stays in sight for numbers that cannot be negative.
            let (range, t, step) = ticks::linear_axis(lo.min(0.0), hi, max);
            let labels = t.iter().map(|&v| ticks::label_step(v, step)).collect();
            YAxis {
                range,
                ticks: t,
                labels,
            }
        }
        Scale::Log => {
            let lo = if ext.y_pos_lo.is_finite() {
                ext.y_pos_lo
            } else {
                1.0
            };
            let hi = if hi > 0.0 { hi } else { lo * 10.0 };
            let range = ticks::padded(Scale::Log, lo, hi, 0.05);
            let t = ticks::log_ticks(range, max);
            let labels = t.iter().map(|&v| ticks::label(v)).collect();
            YAxis {
                range,
                ticks: t,
                labels,
            }
        }
    }
}

/// A legend entry: its style and label.
struct Entry {
    style: SeriesStyle,
    look: Look,
    label: String,
    /// The series has no value to draw.
    empty: bool,
    /// Where a series drawn later hides it: see [`hidden_under`].
    under: Option<String>,
}

impl Entry {
    fn text(&self) -> String {
        if self.empty {
            format!("{}: no values", self.label)
        } else if let Some(under) = &self.under {
            format!("{} ({under})", self.label)
        } else {
            self.label.clone()
        }
    }
}

/// Where the series named `label` lies under one drawn after it: the
/// later series whose values equal its own at the same x over the longest
/// run of consecutive points, said as "under OTHER from X" (to its end),
/// "from X to Y" or "throughout". Only a run of at least a quarter of the
/// series' points (and three) is named: a reader would otherwise look in
/// vain for a line that is drawn but hidden, as when two policies both
/// stay at zero. Only lines are hidden so: markers stand side by side.
fn hidden_under(chart: &Chart, label: &str) -> Option<String> {
    if !chart.lines_only {
        return None;
    }
    let mut best: Option<(usize, &Series, &Series, usize)> = None;
    for (ia, a) in chart.series.iter().enumerate() {
        if a.label != label {
            continue;
        }
        for b in &chart.series[ia + 1..] {
            if b.panel != a.panel || b.label == a.label {
                continue;
            }
            let mut run = 0;
            for (k, (p, q)) in a.points.iter().zip(&b.points).enumerate() {
                let same = p.x == q.x && p.y.is_some() && p.y == q.y;
                run = if same { run + 1 } else { 0 };
                if run > 0 && best.is_none_or(|(n, ..)| run > n) {
                    best = Some((run, a, b, k));
                }
            }
        }
    }
    let (run, a, b, last) = best?;
    if run < 3 || 4 * run < a.points.len() {
        return None;
    }
    let first = last + 1 - run;
    // In the x axis's unit, when its label ends with one ("time (s)"), not
    // with words ("offered load (fraction of bit rate)").
    let unit = chart
        .x_label
        .strip_suffix(')')
        .and_then(|l| l.rsplit_once('('))
        .filter(|(_, u)| u.chars().count() <= 5 && !u.contains(' '))
        .map_or(String::new(), |(_, u)| format!(" {u}"));
    let at = |k: usize| format!("{}{unit}", ticks::label(a.points[k].x));
    let (from, to) = (at(first), at(last));
    let tail = last + 1 == a.points.len();
    Some(match (first == 0, tail) {
        (true, true) => format!("under {} throughout", b.label),
        (_, true) => format!("under {} from {from}", b.label),
        _ => format!("under {} from {from} to {to}", b.label),
    })
}

/// The legend's box: where, in how many columns.
struct LegendBox {
    lines: Vec<String>,
    entries: Vec<Entry>,
    title: Option<String>,
    width: f64,
    height: f64,
    cols: usize,
    entry_w: f64,
}

fn legend_box(
    chart: &Chart,
    styles: &Styles,
    s: f64,
    max_w: f64,
    page_w: f64,
) -> Option<LegendBox> {
    let size = font_size::LEGEND * s;
    let row = size * 1.6;
    let pad = 8.0 * s;
    match &chart.legend {
        Legend::Hidden => None,
        Legend::Note(text) => {
            let lines = wrap(text, size, max_w - 2.0 * pad);
            let width = lines
                .iter()
                .map(|l| style::text_width(l, size))
                .fold(0.0, f64::max)
                + 2.0 * pad;
            Some(LegendBox {
                height: lines.len() as f64 * row + 2.0 * pad,
                lines,
                entries: Vec::new(),
                title: None,
                width,
                cols: 1,
                entry_w: width,
            })
        }
        Legend::Entries { title } => {
            // A series without a single value is named as such, not left
            // for the reader to look for.
            let entries: Vec<Entry> = chart
                .labels()
                .into_iter()
                .map(|l| {
                    let empty = chart
                        .series
                        .iter()
                        .filter(|t| t.label == l)
                        .all(|t| t.points.iter().all(|p| p.y.is_none()));
                    let look = chart
                        .series
                        .iter()
                        .find(|t| t.label == l)
                        .map_or(Look::Joined, |t| t.look);
                    Entry {
                        style: styles.get(&l),
                        look,
                        empty,
                        under: hidden_under(chart, &l),
                        label: l,
                    }
                })
                .collect();
            let swatch = SWATCH * s + 8.0 * s;
            let label_w = entries
                .iter()
                .map(|e| style::text_width(&e.text(), size))
                .fold(0.0, f64::max);
            let title_w = title.as_ref().map_or(0.0, |t| style::text_width(t, size));
            let entry_w = swatch + label_w + 2.0 * pad;
            let single_w = entry_w.max(title_w + 2.0 * pad);
            // Beside the plot when narrow enough; else below it, in columns.
            let cols = if single_w <= max_w {
                1
            } else {
                ((page_w - 2.0 * pad) / entry_w).floor().max(1.0) as usize
            };
            let rows = entries.len().div_ceil(cols);
            let title_h = if title.is_some() { row } else { 0.0 };
            Some(LegendBox {
                lines: Vec::new(),
                width: if cols == 1 {
                    single_w
                } else {
                    cols as f64 * entry_w + 2.0 * pad
                },
                height: title_h + rows as f64 * row + 2.0 * pad,
                entries,
                title: title.clone(),
                cols,
                entry_w,
            })
        }
    }
}

fn paint<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart,
    styles: &Styles,
) -> Drawn {
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let pen = Pen { area: root };
    let (w, h) = (chart.size.0 as f64, chart.size.1 as f64);
    let s = (w / 900.0).min(h / 560.0).clamp(0.85, 2.0);
    let m = 14.0 * s;
    let title_size = font_size::TITLE * s;
    let caption_size = font_size::CAPTION * s;
    let axis_size = font_size::AXIS_TITLE * s;
    let tick_size = font_size::TICK * s;
    let panel_size = font_size::PANEL_TITLE * s;

    let title_lines = wrap(&chart.title, title_size, w - 2.0 * m);
    let caption_lines = wrap(&chart.caption, caption_size, w - 2.0 * m);
    let top = m + title_lines.len() as f64 * title_size * 1.25 + 8.0 * s;
    let caption_h = caption_lines.len() as f64 * caption_size * 1.4;
    let legend = legend_box(chart, styles, s, 0.3 * w, w - 2.0 * m);
    // Time runs across the page: a chart over time keeps the full width and
    // has its legend below.
    let beside = legend.as_ref().is_some_and(|l| l.cols == 1) && !chart.lines_only;
    let below_h = match &legend {
        Some(l) if !beside => l.height + 8.0 * s,
        _ => 0.0,
    };
    let right = w
        - m
        - if beside {
            legend.as_ref().map_or(0.0, |l| l.width) + 16.0 * s
        } else {
            0.0
        };
    let x_title_h = axis_size * 1.7;
    let tick_row = tick_size * 1.35;
    let tick_len = 5.0 * s;

    let panels = chart.panels.len().max(1);
    let (cols, rows) = grid(panels);
    let panel_title_h = if chart.panels.is_empty() {
        0.0
    } else {
        panel_size * 1.6
    };
    let gap_v = if chart.panels.is_empty() {
        0.0
    } else {
        10.0 * s
    };
    let gap_h = 18.0 * s;
    let ext = extent(chart);

    // Heights first (they fix the y ticks, whose labels fix the left edge,
    // which fixes the x ticks, whose rows of labels may change the heights).
    let mut x_rows = 1;
    let mut layout = None;
    for _ in 0..2 {
        let bottom = h - m - caption_h - below_h - x_title_h - tick_len - x_rows as f64 * tick_row;
        let panel_h = ((bottom - top - (rows - 1) as f64 * gap_v) / rows as f64 - panel_title_h)
            .max(40.0 * s);
        let y = y_axis(chart, &ext, panel_h, s);
        let y_label_w = y
            .labels
            .iter()
            .map(|l| style::text_width(l, tick_size))
            .fold(0.0, f64::max);
        let left = m + axis_size * 1.7 + y_label_w + tick_len + 4.0 * s;
        let panel_w = ((right - left - (cols - 1) as f64 * gap_h) / cols as f64).max(40.0 * s);
        let x = x_axis(chart, &ext, panel_w, s);
        let again = x.rows != x_rows;
        x_rows = x.rows;
        layout = Some((bottom, panel_h, left, panel_w, y, x));
        if !again {
            break;
        }
    }
    let (bottom, panel_h, left, panel_w, y, x) = layout.expect("laid out at least once");

    // Title.
    for (i, line) in title_lines.iter().enumerate() {
        pen.text(
            line,
            (w / 2.0, m + i as f64 * title_size * 1.25),
            title_size,
            style::INK,
            HPos::Center,
            VPos::Top,
            false,
        )?;
    }

    let frames: Vec<Frame> = (0..panels)
        .map(|p| {
            let (c, r) = (p % cols, p / cols);
            let t = top + r as f64 * (panel_h + panel_title_h + gap_v) + panel_title_h;
            let l = left + c as f64 * (panel_w + gap_h);
            Frame {
                left: l,
                top: t,
                right: l + panel_w,
                bottom: t + panel_h,
            }
        })
        .collect();

    for (p, f) in frames.iter().enumerate() {
        // x labels under the lowest panel of each column; y labels left of
        // the first column.
        let lowest = p + cols >= panels;
        draw_panel(&pen, chart, f, &x, &y, p % cols == 0, lowest, s)?;
        if let Some(t) = chart.panels.get(p) {
            pen.text(
                &fit(t, panel_size, panel_w),
                ((f.left + f.right) / 2.0, f.top - panel_title_h * 0.5),
                panel_size,
                style::INK,
                HPos::Center,
                VPos::Center,
                false,
            )?;
        }
        draw_series(&pen, chart, styles, p, f, &x, &y, s)?;
    }

    // Axis titles: x centred under the plot, y centred beside it.
    let plot_right = left + cols as f64 * panel_w + (cols - 1) as f64 * gap_h;
    pen.text(
        &chart.x_label,
        (
            (left + plot_right) / 2.0,
            bottom + tick_len + x_rows as f64 * tick_row + 4.0 * s,
        ),
        axis_size,
        style::INK,
        HPos::Center,
        VPos::Top,
        false,
    )?;
    pen.text(
        &fit(&chart.y_label, axis_size, bottom - top),
        (m + axis_size * 0.6, (top + bottom) / 2.0),
        axis_size,
        style::INK,
        HPos::Center,
        VPos::Center,
        true,
    )?;

    // Legend: beside the plot, top-aligned; or below the axis title.
    if let Some(l) = &legend {
        let (lx, ly) = if beside {
            (right + 16.0 * s, top)
        } else {
            (
                m,
                bottom + tick_len + x_rows as f64 * tick_row + x_title_h + 4.0 * s,
            )
        };
        draw_legend(&pen, chart, l, (lx, ly), s)?;
    }

    // Caption.
    for (i, line) in caption_lines.iter().enumerate() {
        pen.text(
            line,
            (m, h - m - caption_h + i as f64 * caption_size * 1.4),
            caption_size,
            style::MUTED,
            HPos::Left,
            VPos::Top,
            false,
        )?;
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn draw_panel<DB: DrawingBackend>(
    pen: &Pen<DB>,
    chart: &Chart,
    f: &Frame,
    x: &XAxis,
    y: &YAxis,
    y_labels: bool,
    x_labels: bool,
    s: f64,
) -> Drawn {
    let tick_size = font_size::TICK * s;
    let tick_len = 5.0 * s;
    if let Some(sh) = &chart.shade {
        let a = f.x(&x.range, sh.from).clamp(f.left, f.right);
        let b = f.x(&x.range, sh.to).clamp(f.left, f.right);
        if b - a >= 1.0 {
            pen.rect((a, f.top), (b, f.bottom), style::SHADE, true)?;
        }
    }
    // Grid: horizontal at the y ticks; vertical at the x ticks but for
    // categories, whose points stand alone.
    for &v in &y.ticks {
        let py = f.y(&y.range, v);
        if py < f.top - 0.5 || py > f.bottom + 0.5 {
            continue;
        }
        pen.line(&[(f.left, py), (f.right, py)], style::GRID, 1.0)?;
        pen.line(&[(f.left - tick_len, py), (f.left, py)], style::INK, 1.0)?;
    }
    for (i, &v) in x.ticks.iter().enumerate() {
        let pxx = f.x(&x.range, v);
        if chart.categories.is_none() {
            pen.line(&[(pxx, f.top), (pxx, f.bottom)], style::GRID, 1.0)?;
        }
        pen.line(
            &[(pxx, f.bottom), (pxx, f.bottom + tick_len)],
            style::INK,
            1.0,
        )?;
        if let (true, Some(row)) = (x_labels, x.rows_of[i]) {
            pen.text(
                &x.labels[i],
                (
                    pxx,
                    f.bottom + tick_len + 2.0 * s + row as f64 * tick_size * 1.35,
                ),
                tick_size,
                style::INK,
                HPos::Center,
                VPos::Top,
                false,
            )?;
        }
    }
    pen.line(
        &[(f.left, f.top), (f.left, f.bottom), (f.right, f.bottom)],
        style::INK,
        1.0,
    )?;
    // The shaded interval's name, above the grid, just under the top.
    if let Some(sh) = chart.shade.as_ref().filter(|sh| !sh.label.is_empty()) {
        let a = f.x(&x.range, sh.from).clamp(f.left, f.right);
        let b = f.x(&x.range, sh.to).clamp(f.left, f.right);
        if b - a >= 1.0 {
            let size = tick_size * 0.9;
            let w = style::text_width(&sh.label, size) + 6.0 * s;
            let (cx, ty) = ((a + b) / 2.0, f.top + 4.0 * s);
            pen.rect(
                (cx - w / 2.0, ty - 1.0 * s),
                (cx + w / 2.0, ty + size * 1.2),
                style::SHADE,
                true,
            )?;
            pen.text(
                &sh.label,
                (cx, ty),
                size,
                style::INK,
                HPos::Center,
                VPos::Top,
                false,
            )?;
        }
    }
    if y_labels {
        for (i, &v) in y.ticks.iter().enumerate() {
            let py = f.y(&y.range, v);
            if py < f.top - 0.5 || py > f.bottom + 0.5 {
                continue;
            }
            pen.text(
                &y.labels[i],
                (f.left - tick_len - 3.0 * s, py),
                tick_size,
                style::INK,
                HPos::Right,
                VPos::Center,
                false,
            )?;
        }
    }
    Ok(())
}

/// The pixel position of each point of `series`, None where it has no y,
/// moved `dodge` pixels sideways.
fn positions(
    series: &Series,
    dodge: f64,
    f: &Frame,
    x: &XAxis,
    y: &YAxis,
) -> Vec<Option<(f64, f64)>> {
    series
        .points
        .iter()
        .map(|p| p.y.map(|v| (f.x(&x.range, p.x) + dodge, f.y(&y.range, v))))
        .collect()
}

/// How far apart, in pixels, the series of a panel stand at one x: side by
/// side in a category; on numbers with ticks on the values, a few pixels
/// (less than a marker) so that whiskers at one x do not hide each other;
/// else not at all.
fn dodge_step(chart: &Chart, f: &Frame, x: &XAxis, n: usize, s: f64) -> f64 {
    let n = n.max(1) as f64;
    let width = f.right - f.left;
    if let Some(cats) = &chart.categories {
        let slot = width / cats.len().max(1) as f64;
        return (slot * 0.7 / n).min(18.0 * s);
    }
    if n < 2.0 || !x.on_values {
        return 0.0;
    }
    let pxs: Vec<f64> = x.ticks.iter().map(|&v| x.range.frac(v) * width).collect();
    let gap = pxs
        .windows(2)
        .map(|w| w[1] - w[0])
        .fold(f64::INFINITY, f64::min);
    if gap.is_finite() {
        (gap * 0.6 / n).min(3.5 * s)
    } else {
        3.0 * s
    }
}

#[allow(clippy::too_many_arguments)]
fn draw_series<DB: DrawingBackend>(
    pen: &Pen<DB>,
    chart: &Chart,
    styles: &Styles,
    panel: usize,
    f: &Frame,
    x: &XAxis,
    y: &YAxis,
    s: f64,
) -> Drawn {
    let mine: Vec<&Series> = chart.series.iter().filter(|t| t.panel == panel).collect();
    let width = 2.0 * s;
    let r = 4.0 * s;
    let categorical = chart.categories.is_some();
    // Small multiples of one series each show the others faintly, for scale.
    if mine.len() == 1 && chart.panels.len() > 1 && !categorical {
        for other in chart.series.iter().filter(|t| t.panel != panel) {
            let pts = positions(other, 0.0, f, x, y);
            for run in runs(&pts) {
                pen.line(&run, RGBColor(200, 200, 200), 1.0)?;
            }
        }
    }
    // A closed form's line stays where it is; the measured series make
    // way for each other.
    let marked = mine.iter().filter(|t| t.look != Look::Theory).count();
    let step = dodge_step(chart, f, x, marked, s);
    let mut k = 0;
    for series in &mine {
        let st = styles.get(&series.label);
        let dodge = if series.look == Look::Theory {
            0.0
        } else {
            k += 1;
            (k as f64 - 1.0 - (marked as f64 - 1.0) / 2.0) * step
        };
        let pts = positions(series, dodge, f, x, y);
        // Whiskers, cut to the panel (the data's bounds are cut before).
        for (p, at) in series.points.iter().zip(&pts) {
            if chart.lines_only {
                break;
            }
            let (Some((cx, _)), Some((lo, hi))) = (at, p.ci) else {
                continue;
            };
            let lo_px = if chart.y_scale == Scale::Log && lo <= 0.0 {
                f.bottom
            } else {
                f.y(&y.range, lo).min(f.bottom)
            };
            let hi_px = f.y(&y.range, hi).max(f.top);
            if lo_px - hi_px < 1.0 {
                continue;
            }
            let cap = 4.0 * s;
            pen.line(&[(*cx, lo_px), (*cx, hi_px)], st.colour, 1.5 * s)?;
            for e in [lo_px, hi_px] {
                if e > f.top && e < f.bottom {
                    pen.line(&[(cx - cap, e), (cx + cap, e)], st.colour, 1.5 * s)?;
                }
            }
        }
        if !categorical && series.look != Look::Measured {
            for run in runs(&pts) {
                pen.dashed(&run, st.dash, st.colour, width, s)?;
            }
        }
        if series.look != Look::Theory && !chart.lines_only {
            for at in pts.iter().flatten() {
                pen.marker(st.marker, *at, r, st.colour)?;
            }
        }
    }
    Ok(())
}

/// The stretches of consecutive defined points: a line breaks where a
/// value is undefined.
fn runs(pts: &[Option<(f64, f64)>]) -> Vec<Vec<(f64, f64)>> {
    let mut out = Vec::new();
    let mut cur = Vec::new();
    for p in pts {
        match p {
            Some(p) => cur.push(*p),
            None if !cur.is_empty() => out.push(std::mem::take(&mut cur)),
            None => {}
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn draw_legend<DB: DrawingBackend>(
    pen: &Pen<DB>,
    chart: &Chart,
    l: &LegendBox,
    (x0, y0): (f64, f64),
    s: f64,
) -> Drawn {
    let size = font_size::LEGEND * s;
    let row = size * 1.6;
    let pad = 8.0 * s;
    pen.rect((x0, y0), (x0 + l.width, y0 + l.height), WHITE, true)?;
    pen.rect(
        (x0, y0),
        (x0 + l.width, y0 + l.height),
        RGBColor(190, 190, 190),
        false,
    )?;
    let mut y = y0 + pad + row / 2.0;
    // The legend's note lines, then its title, in the same muted text.
    for line in l.lines.iter().chain(&l.title) {
        pen.text(
            line,
            (x0 + pad, y),
            size,
            style::MUTED,
            HPos::Left,
            VPos::Center,
            false,
        )?;
        y += row;
    }
    let swatch = SWATCH * s;
    for (i, e) in l.entries.iter().enumerate() {
        let (c, r) = (i % l.cols, i / l.cols);
        let ex = x0 + pad + c as f64 * l.entry_w;
        let ey = y + r as f64 * row;
        if chart.categories.is_none() && e.look != Look::Measured {
            pen.dashed(
                &[(ex, ey), (ex + swatch, ey)],
                e.style.dash,
                e.style.colour,
                2.0 * s,
                s,
            )?;
        }
        if e.look != Look::Theory && !chart.lines_only {
            pen.marker(
                e.style.marker,
                (ex + swatch / 2.0, ey),
                4.0 * s,
                e.style.colour,
            )?;
        }
        pen.text(
            &e.text(),
            (ex + swatch + 8.0 * s, ey),
            size,
            if e.empty { style::MUTED } else { style::INK },
            HPos::Left,
            VPos::Center,
            false,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dashes_run_on_across_vertices() {
        let pieces = dash_pieces(&[(0.0, 0.0), (5.0, 0.0), (5.0, 10.0)], &[4.0, 2.0]);
        // On 0-4, off 4-6 (one past the corner), on 6-10, off, on to the end.
        assert_eq!(
            pieces,
            vec![
                vec![(0.0, 0.0), (4.0, 0.0)],
                vec![(5.0, 1.0), (5.0, 5.0)],
                vec![(5.0, 7.0), (5.0, 10.0)],
            ]
        );
        assert_eq!(dash_pieces(&[(0.0, 0.0), (3.0, 0.0)], &[]).len(), 1);
    }

    #[test]
    fn grids() {
        assert_eq!(grid(1), (1, 1));
        assert_eq!(grid(2), (2, 1));
        assert_eq!(grid(4), (2, 2));
        assert_eq!(grid(5), (3, 2));
        assert_eq!(grid(16), (4, 4));
    }

    fn series(label: &str, ys: &[f64]) -> Series {
        Series {
            label: label.into(),
            panel: 0,
            points: ys
                .iter()
                .enumerate()
                .map(|(k, &y)| super::super::Point {
                    x: k as f64,
                    y: Some(y),
                    ci: None,
                })
                .collect(),
            look: Look::Joined,
        }
    }

    fn chart(series: Vec<Series>) -> Chart {
        Chart {
            title: String::new(),
            x_label: "time (s)".into(),
            y_label: String::new(),
            x_scale: Scale::Linear,
            y_scale: Scale::Linear,
            categories: None,
            series,
            panels: Vec::new(),
            legend: Legend::Entries { title: None },
            caption: String::new(),
            size: (800, 600),
            shade: None,
            lines_only: true,
        }
    }

    /// A series hidden under one drawn later is named in the legend with
    /// where it is hidden; the later one, a short coincidence and a series
    /// drawn over an earlier one are not.
    #[test]
    fn hidden_series_are_named() {
        let c = chart(vec![
            series("a", &[5.0, 4.0, 0.0, 0.0, 0.0, 0.0]),
            series("b", &[6.0, 3.0, 0.0, 0.0, 0.0, 0.0]),
            series("c", &[5.0, 4.0, 9.0, 1.0, 1.0, 1.0]),
        ]);
        assert_eq!(hidden_under(&c, "a").as_deref(), Some("under b from 2 s"));
        assert_eq!(hidden_under(&c, "b"), None);
        assert_eq!(hidden_under(&c, "c"), None);
        let c = chart(vec![
            series("a", &[1.0, 1.0, 1.0, 1.0]),
            series("b", &[1.0, 1.0, 1.0, 1.0]),
        ]);
        assert_eq!(hidden_under(&c, "a").as_deref(), Some("under b throughout"));
        let c = chart(vec![
            series("a", &[0.0, 1.0, 1.0, 1.0, 2.0, 3.0, 4.0, 5.0]),
            series("b", &[9.0, 1.0, 1.0, 1.0, 9.0, 9.0, 9.0, 9.0]),
        ]);
        assert_eq!(
            hidden_under(&c, "a").as_deref(),
            Some("under b from 1 s to 3 s")
        );
        let c = chart(vec![
            series(
                "a",
                &[
                    0.0, 1.0, 1.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0,
                ],
            ),
            series(
                "b",
                &[
                    9.0, 1.0, 1.0, 1.0, 9.0, 9.0, 9.0, 9.0, 9.0, 9.0, 9.0, 9.0, 9.0,
                ],
            ),
        ]);
        assert_eq!(hidden_under(&c, "a"), None, "3 of 13 points");
    }

    #[test]
    fn wrapping() {
        let lines = wrap("one two three four five six", 14.0, 80.0);
        assert!(lines.len() > 1);
        assert!(lines.iter().all(|l| style::text_width(l, 14.0) <= 80.0));
    }
}
