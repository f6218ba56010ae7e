//! The legend: an entry per series label (its style, and where a later
//! series hides it) or a note, measured into a box of one or more columns,
//! and drawn.

use super::pen::{Drawn, Pen};
use super::text::{fit, wrap};
use crate::output::chart::ticks;
use crate::output::chart::{Chart, Legend, Look, Series};
use crate::output::style::{self, size as font_size, SeriesStyle, Styles};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

/// The length of a legend's line sample, in pixels at scale 1.
const SWATCH: f64 = 36.0;

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
pub(super) struct LegendBox {
    lines: Vec<String>,
    entries: Vec<Entry>,
    title: Option<String>,
    pub(super) width: f64,
    pub(super) height: f64,
    pub(super) cols: usize,
    /// Beside the plot (else below it).
    pub(super) beside: bool,
    entry_w: f64,
}

/// The most columns a legend below the plot takes.
const MAX_COLS: usize = 6;

/// The legend's box: beside the plot when it fits in `max_w`; else below
/// it, in as few columns as keep it within `max_h` (long labels shortened
/// with an ellipsis to their column), so that it never crowds the plot.
pub(super) fn legend_box(
    chart: &Chart,
    styles: &Styles,
    s: f64,
    max_w: f64,
    page_w: f64,
    max_h: f64,
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
                beside: !chart.lines_only && width <= max_w,
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
            let title_h = if title.is_some() { row } else { 0.0 };
            let height =
                |cols: usize| title_h + entries.len().div_ceil(cols) as f64 * row + 2.0 * pad;
            let inner = page_w - 2.0 * pad;
            // Beside the plot when narrow enough; else below it, in as many
            // columns as its entries fit whole, more (shortened) if it
            // would still take too much height.
            // Time runs across the page: a chart over time keeps the full
            // width and has its legend below.
            let beside = single_w <= max_w && !chart.lines_only;
            let (cols, entry_w) = if beside {
                (1, entry_w)
            } else {
                let whole = (inner / entry_w).floor().clamp(1.0, MAX_COLS as f64) as usize;
                let cols = (whole..=MAX_COLS.max(whole))
                    .find(|&c| height(c) <= max_h)
                    .unwrap_or(MAX_COLS.max(whole))
                    .min(entries.len().max(1));
                (cols, entry_w.min(inner / cols as f64))
            };
            let width = if beside {
                single_w
            } else {
                cols as f64 * entry_w + 2.0 * pad
            };
            Some(LegendBox {
                lines: Vec::new(),
                width,
                height: height(cols),
                entries,
                title: title.as_ref().map(|t| fit(t, size, width - 2.0 * pad)),
                cols,
                beside,
                entry_w,
            })
        }
    }
}

pub(super) fn draw_legend<DB: DrawingBackend>(
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
        if e.look == Look::TheoryBars {
            let h = 5.0 * s;
            pen.rect(
                (ex + swatch / 3.0, ey - h),
                (ex + 2.0 * swatch / 3.0, ey + h),
                e.style.colour,
                true,
            )?;
        } else if chart.categories.is_none() && e.look != Look::Measured {
            pen.dashed(
                &[(ex, ey), (ex + swatch, ey)],
                e.style.dash,
                e.style.colour,
                2.0 * s,
                s,
            )?;
        }
        if !e.look.is_theory() && !chart.lines_only {
            pen.marker(
                e.style.marker,
                (ex + swatch / 2.0, ey),
                4.0 * s,
                e.style.colour,
            )?;
        }
        pen.text(
            &fit(&e.text(), size, l.entry_w - swatch - 8.0 * s - pad),
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
    use crate::output::chart::Scale;

    fn series(label: &str, ys: &[f64]) -> Series {
        Series {
            label: label.into(),
            panel: 0,
            points: ys
                .iter()
                .enumerate()
                .map(|(k, &y)| crate::output::chart::Point {
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
}
