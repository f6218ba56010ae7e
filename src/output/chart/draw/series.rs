//! The series in a panel: their points in pixels, dodged apart where they
//! share an x, with whiskers, dashed lines and markers in their style.

use super::axes::{Frame, XAxis, YAxis};
use super::pen::{Drawn, Pen};
use crate::output::chart::{Chart, Look, Options, Scale, Series};
use crate::output::style::Styles;
use plotters::prelude::*;

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
fn dodge_step(chart: &Chart, options: &Options, f: &Frame, x: &XAxis, n: usize, s: f64) -> f64 {
    let n = n.max(1) as f64;
    let width = f.right - f.left;
    if let Some(cats) = &chart.categories {
        let slot = width / cats.len().max(1) as f64;
        return (slot * 0.7 / n).min(18.0 * s);
    }
    if n < 2.0 || !x.on_values || !options.dodge {
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
pub(super) fn draw_series<DB: DrawingBackend>(
    pen: &Pen<DB>,
    chart: &Chart,
    styles: &Styles,
    options: &Options,
    panel: usize,
    f: &Frame,
    x: &XAxis,
    y: &YAxis,
    s: f64,
) -> Drawn {
    let mine: Vec<(usize, &Series)> = chart
        .series
        .iter()
        .enumerate()
        .filter(|(_, t)| t.panel == panel)
        .collect();
    let width = 2.0 * s;
    let r = 4.0 * s;
    let categorical = chart.categories.is_some();
    // Small multiples of one series each show the others faintly, for scale.
    // (Not where points stand unjoined: no line is drawn there at all.)
    if mine.len() == 1 && chart.panels.len() > 1 && !categorical && mine[0].1.look == Look::Joined {
        for other in chart.series.iter().filter(|t| t.panel != panel) {
            let pts = positions(other, 0.0, f, x, y);
            for run in runs(&pts) {
                pen.line(&run, RGBColor(200, 200, 200), 1.0)?;
            }
        }
    }
    // A closed form's line stays where it is; the measured series make
    // way for each other.
    let marked = mine.iter().filter(|(_, t)| !t.look.is_theory()).count();
    let step = dodge_step(chart, options, f, x, marked, s);
    let mut k = 0;
    for &(index, series) in &mine {
        let st = styles.get(&series.label);
        let dodge = if series.look.is_theory() {
            0.0
        } else {
            k += 1;
            (k as f64 - 1.0 - (marked as f64 - 1.0) / 2.0) * step
        };
        let pts = positions(series, dodge, f, x, y);
        if series.look == Look::TheoryBars {
            bars(pen, &pts, st.colour, f, y, chart.y_scale)?;
        }
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
        if !categorical && !matches!(series.look, Look::Measured | Look::TheoryBars) {
            for run in runs(&pts) {
                pen.dashed(&run, st.dash, st.colour, width, s)?;
            }
        }
        if !series.look.is_theory() && !chart.lines_only {
            for (p, at) in pts.iter().enumerate() {
                let Some(at) = at else { continue };
                if options.hollow.contains(&(index, p)) {
                    pen.hollow_marker(st.marker, *at, r, st.colour)?;
                } else {
                    pen.marker(st.marker, *at, r, st.colour)?;
                }
            }
        }
    }
    Ok(())
}

/// Bars from the axis (the plot's bottom on a log scale) up to each point,
/// all of one width: at most 0.6 of the narrowest spacing between the
/// points, and narrow enough that the outer ones stay inside the plot;
/// filled with a tint of `colour` and outlined in it.
fn bars<DB: DrawingBackend>(
    pen: &Pen<DB>,
    pts: &[Option<(f64, f64)>],
    colour: RGBColor,
    f: &Frame,
    y: &YAxis,
    scale: Scale,
) -> Drawn {
    let xs: Vec<f64> = pts.iter().flatten().map(|p| p.0).collect();
    let gap = xs
        .windows(2)
        .map(|w| (w[1] - w[0]).abs())
        .fold(f64::INFINITY, f64::min);
    let room = xs
        .iter()
        .map(|&cx| (cx - f.left).min(f.right - cx))
        .fold(f64::INFINITY, f64::min);
    let half = if gap.is_finite() {
        gap * 0.3
    } else {
        (f.right - f.left) / 20.0
    }
    .min(room - 1.0)
    .max(1.0);
    let base = match scale {
        Scale::Log => f.bottom,
        _ => f.y(&y.range, 0.0).clamp(f.top, f.bottom),
    };
    let tint = |c: u8| (c as f64 + (255.0 - c as f64) * 0.6).round() as u8;
    let light = RGBColor(tint(colour.0), tint(colour.1), tint(colour.2));
    for &(cx, top) in pts.iter().flatten() {
        let top = top.clamp(f.top, f.bottom);
        pen.rect((cx - half, top), (cx + half, base), light, true)?;
        pen.rect((cx - half, top), (cx + half, base), colour, false)?;
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
