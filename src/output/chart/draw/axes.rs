//! The axes of a panel: the data's extent, the x and y ranges with their
//! ticks and labels for a panel's size, and a panel's frame, grid and ticks.

use super::pen::{Drawn, Pen};
use super::text::fit;
use crate::output::chart::ticks::{self, Range, DATA_TICKS};
use crate::output::chart::{Chart, Options, Scale};
use crate::output::style::{self, size as font_size};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

/// A plot panel's frame in pixels.
#[derive(Clone, Copy, Debug)]
pub(super) struct Frame {
    pub(super) left: f64,
    pub(super) top: f64,
    pub(super) right: f64,
    pub(super) bottom: f64,
}

impl Frame {
    pub(super) fn x(&self, r: &Range, v: f64) -> f64 {
        self.left + r.frac(v) * (self.right - self.left)
    }
    pub(super) fn y(&self, r: &Range, v: f64) -> f64 {
        self.bottom - r.frac(v) * (self.bottom - self.top)
    }
}

/// The x axis as laid out for a panel width.
pub(super) struct XAxis {
    pub(super) range: Range,
    pub(super) ticks: Vec<f64>,
    pub(super) labels: Vec<String>,
    /// Each label's row below the axis (categories stagger when crowded);
    /// None: not shown.
    pub(super) rows_of: Vec<Option<usize>>,
    pub(super) rows: usize,
    /// The ticks are the data's own values (or categories).
    pub(super) on_values: bool,
}

/// The y axis as laid out for a panel height.
pub(super) struct YAxis {
    pub(super) range: Range,
    pub(super) ticks: Vec<f64>,
    pub(super) labels: Vec<String>,
}

/// The extent of the data: x values, and y with whisker ends.
pub(super) struct Extent {
    xs: Vec<f64>,
    y_lo: f64,
    y_hi: f64,
    /// The smallest positive y or whisker end, for a log axis.
    y_pos_lo: f64,
    /// A y range fixed by the figure's options.
    y_fixed: Option<(f64, f64)>,
}

pub(super) fn extent(chart: &Chart, options: &Options) -> Extent {
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
        y_fixed: options.y_range,
    }
}

/// The longest label of an x value the ticks may sit on.
const MAX_VALUE_LABEL: usize = 9;

pub(super) fn x_axis(chart: &Chart, ext: &Extent, width: f64, s: f64) -> XAxis {
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
    // Ticks on the values when there are few and they read short (values
    // chosen by an axis); a measured column on x (attempts per call,
    // 1.82507...) gets round ticks.
    let on_values = ext.xs.len() <= DATA_TICKS
        && ext
            .xs
            .iter()
            .all(|&v| ticks::label(v).len() <= MAX_VALUE_LABEL);
    let (values, labels): (Vec<f64>, Vec<String>) = if on_values {
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
        on_values,
    }
}

pub(super) fn y_axis(chart: &Chart, ext: &Extent, height: f64, s: f64) -> YAxis {
    let max = (height / (font_size::TICK * s * 2.6)).clamp(2.0, 10.0) as usize;
    let (lo, hi) = if ext.y_lo.is_finite() {
        (ext.y_lo, ext.y_hi)
    } else {
        (0.0, 1.0)
    };
    // Values all equal (all zero: a fraction that never happened) get a
    // range from 0 to above them, never one reaching below 0.
    let (lo, hi) = if hi > lo {
        (lo, hi)
    } else if lo == 0.0 {
        (0.0, 1.0)
    } else {
        (lo.min(0.0), lo.abs().max(hi) * 1.2)
    };
    if let Some((a, b)) = ext.y_fixed {
        let range = Range {
            scale: chart.y_scale,
            lo: a,
            hi: b,
        };
        let (t, labels) = match chart.y_scale {
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
        };
        return YAxis {
            range,
            ticks: t,
            labels,
        };
    }
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

#[allow(clippy::too_many_arguments)]
pub(super) fn draw_panel<DB: DrawingBackend>(
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
